"""Synthetic tasks small enough to train on a laptop's CPU in seconds, each with a head to find.

Every task makes its data from an explicit `torch.Generator`: the same generator state gives the
same batch. `generate(n, generator)` returns
    ids      (n, T) LongTensor   the input tokens
    targets  (n, T) LongTensor   what the model should predict at each position
    scored   (n, T) bool         the positions that count (loss and accuracy use only these)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor

Batch = tuple[Tensor, Tensor, Tensor]  # ids (n, T), targets (n, T), scored (n, T)


@dataclass(frozen=True)
class ModelSize:
    """The architecture a task trains: width, depth, heads, and the training schedule."""

    d_model: int
    heads: tuple[int, ...]  # heads in each layer
    steps: int  # training steps by default
    batch: int = 64
    lr: float = 1e-2


@dataclass(frozen=True, eq=False)
class Task:
    """A synthetic task: its vocabulary, the shape of its sequences, and a data generator."""

    name: str
    title: str
    description: str  # one sentence for students: what the model must do
    vocab: tuple[str, ...]  # readable token strings; index = token id
    specials: tuple[str, ...]  # tokens of vocab that are not ordinary content (BOS, ...)
    prefix: tuple[str, ...]  # tokens every sequence starts with
    seq_len: int
    causal: bool
    size: ModelSize
    expected_head: str  # the head diagnostic this task should produce (see diagnostics.py)
    make: Callable[[Task, int, torch.Generator], Batch] = field(repr=False)

    def generate(self, n: int, generator: torch.Generator) -> Batch:
        """n sequences: (ids, targets, scored), each (n, seq_len)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a whole number of at least 1, got {n!r}")
        return self.make(self, n, generator)

    def encode(self, tokens: list[str] | tuple[str, ...]) -> Tensor:
        """Token strings -> ids (T,); ValueError naming the first token not in the vocabulary."""
        if len(tokens) == 0:
            raise ValueError("the sequence is empty: give at least one token")
        if len(tokens) > self.seq_len:
            raise ValueError(
                f"the sequence has {len(tokens)} tokens; this task's model takes at most "
                f"{self.seq_len}"
            )
        index = {token: i for i, token in enumerate(self.vocab)}
        for position, token in enumerate(tokens):
            if token not in index:
                raise ValueError(
                    f"token {position + 1} ({token[:20]!r}) is not in this task's vocabulary: "
                    f"{' '.join(self.vocab)}"
                )
        return torch.tensor([index[token] for token in tokens])  # (T,)

    def decode(self, ids: Tensor) -> list[str]:
        """ids (T,) -> token strings."""
        return [self.vocab[i] for i in ids.tolist()]

    @property
    def content(self) -> tuple[int, ...]:
        """The ids of ordinary content tokens (every token but the specials)."""
        return tuple(i for i, token in enumerate(self.vocab) if token not in self.specials)


def random_tokens(n: int, t: int, ids: tuple[int, ...], generator: torch.Generator) -> Tensor:
    """(n, t) tokens drawn uniformly from `ids`."""
    choices = torch.tensor(ids)
    return choices[torch.randint(len(ids), (n, t), generator=generator)]


def make_previous_token(task: Task, n: int, generator: torch.Generator) -> Batch:
    """Random letters; at every position after the first, predict the token before."""
    ids = random_tokens(n, task.seq_len, task.content, generator)  # (n, T)
    targets = torch.roll(ids, 1, dims=1)  # targets[:, t] = ids[:, t - 1]
    scored = torch.ones_like(ids, dtype=torch.bool)
    scored[:, 0] = False  # the first token has no token before it
    return ids, targets, scored


def make_reverse(task: Task, n: int, generator: torch.Generator) -> Batch:
    """Random letters; at position t predict the token at the mirrored position T - 1 - t."""
    ids = random_tokens(n, task.seq_len, task.content, generator)  # (n, T)
    targets = torch.flip(ids, dims=[1])
    scored = torch.ones_like(ids, dtype=torch.bool)
    return ids, targets, scored


def make_running_max(task: Task, n: int, generator: torch.Generator) -> Batch:
    """Random digits; at each position predict the largest digit so far."""
    ids = random_tokens(n, task.seq_len, task.content, generator)  # (n, T)
    targets = torch.cummax(ids, dim=1).values  # digit ids are in digit order
    scored = torch.ones_like(ids, dtype=torch.bool)
    return ids, targets, scored


def make_induction(task: Task, n: int, generator: torch.Generator) -> Batch:
    """BOS, random tokens, and a segment that occurs twice, at a random length and places.

    Inside the second copy, predict the next token: the model must find where the current token
    occurred before and copy the token that followed it (an induction head). The segment's
    tokens are distinct and occur nowhere else, so that earlier occurrence is unique; its length
    and both copies' places are drawn anew for every sequence, so no position gives the answer.
    """
    body = task.seq_len - len(task.prefix)  # tokens after the prefix
    content = torch.tensor(task.content)  # (V,)
    V = len(content)

    def uniform_below(high: Tensor, shape: tuple[int, ...]) -> Tensor:
        """Integers in [0, high) for each row's own high (n,)."""
        return (torch.rand(n, *shape, generator=generator) * high.view(n, 1)).long()

    length = MIN_SEGMENT + uniform_below(torch.full((n,), body // 2 - MIN_SEGMENT + 1), (1,))
    order = torch.rand(n, V, generator=generator).argsort(dim=1)  # (n, V): a shuffle per row
    gap = body - 2 * length  # (n, 1): filler tokens around and between the copies
    cuts = uniform_below(gap[:, 0] + 1, (2,)).sort(dim=1).values  # (n, 2)
    first = cuts[:, :1]  # (n, 1) where the first copy starts
    second = cuts[:, 1:] + length  # (n, 1) where the second copy starts
    p = torch.arange(body)  # (body,)
    in_first = (p >= first) & (p < first + length)  # (n, body)
    in_second = (p >= second) & (p < second + length)  # (n, body)
    offset = torch.where(in_second, p - second, p - first)  # position inside the segment
    filler = length + uniform_below((V - length)[:, 0], (body,))  # (n, body) past the segment
    slot = torch.where(in_first | in_second, offset, filler)  # index into the row's shuffle
    tokens = content[order.gather(1, slot)]  # (n, body)
    prefix = torch.tensor([task.vocab.index(t) for t in task.prefix], dtype=torch.long)
    ids = torch.cat([prefix.expand(n, -1), tokens], dim=1)  # (n, T)
    targets = torch.zeros_like(ids)
    targets[:, :-1] = ids[:, 1:]  # the next token
    scored = torch.zeros_like(ids, dtype=torch.bool)
    scored[:, len(prefix) :] = in_second & (p < second + length - 1)  # next token is known
    return ids, targets, scored


MIN_SEGMENT = 3
LETTERS = tuple("abcdefgh")

TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        Task(
            name="previous_token",
            title="Previous token",
            description="At every position, output the token just before it.",
            vocab=LETTERS,
            specials=(),
            prefix=(),
            seq_len=10,
            causal=True,
            size=ModelSize(d_model=16, heads=(2,), steps=300),
            expected_head="previous_token",
            make=make_previous_token,
        ),
        Task(
            name="reverse",
            title="Reverse",
            description="Output the input backwards: position t outputs the token at T − 1 − t.",
            vocab=LETTERS,
            specials=(),
            prefix=(),
            seq_len=8,
            causal=False,
            size=ModelSize(d_model=16, heads=(2,), steps=300),
            expected_head="mirror",
            make=make_reverse,
        ),
        Task(
            name="running_max",
            title="Largest so far",
            description="At every position, output the largest digit seen so far.",
            vocab=tuple("0123456789"),
            specials=(),
            prefix=(),
            seq_len=10,
            causal=True,
            size=ModelSize(d_model=16, heads=(2,), steps=400),
            expected_head="max_token",
            make=make_running_max,
        ),
        Task(
            name="induction",
            title="Induction (copy a repeated segment)",
            description=(
                "A segment of tokens appears twice; inside its second copy, predict the next "
                "token by finding the same token earlier and copying what followed it."
            ),
            vocab=("BOS", *"ABCDEFGHIJKLMNOPQRST"),
            specials=("BOS",),
            prefix=("BOS",),
            seq_len=24,
            causal=True,
            size=ModelSize(d_model=32, heads=(2, 1), steps=500),
            expected_head="induction",
            make=make_induction,
        ),
    )
}
