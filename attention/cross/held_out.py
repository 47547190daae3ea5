"""The words lesson 13 measures its model on: words its training never drew (issue 55).

    python -m attention.cross.held_out    # replay training's words, draw outside them, write
                                          # held_out.json, print the figures on those words

Training draws BATCH words a step for STEPS steps from random.Random(SEED)
(training.word_batches); replaying that stream lists every word it trained on, without training:
384,000 draws, 217,213 different words, among them every word of 2 or 3 letters. The held-out
words are drawn the same way (a length from 2 to 8, then that many different letters) from
another seed, each kept only when training never drew it and it is not kept already, so none
has 2 or 3 letters (the shipped 500 have 5 to 8). The list ships (held_out.json, a few KiB)
because the replay takes seconds; tests/attention/test_cross.py replays the stream and checks
the file against it.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from attention.cross.model import (
    LETTERS,
    MAX_SOURCE,
    TRAIN_LENGTHS,
    accuracy,
    alignment_scores,
    random_words,
    share_written,
)
from attention.cross.training import BATCH, SEED, STEPS, load, word_batches

PATH = Path(__file__).with_name("held_out.json")
COMMAND = "python -m attention.cross.held_out"
WORDS, WORDS_SEED = 500, 99  # held-out words of 2 to 8 letters (5 to 8 in fact), and their seed
LONGER, LONGER_SEED = 100, 5  # words of 9 to 12 letters: longer than any training drew


@dataclass(frozen=True)
class HeldOut:
    """The held-out words and what the replay of training's stream counted."""

    words: tuple[str, ...]  # never drawn by training, all different
    draws: int  # the words training drew (STEPS × BATCH)
    trained: int  # the different words among them
    by_length: dict[int, tuple[int, int]]  # length -> (different words trained on, possible)
    seed: int  # the held-out words' seed
    recipe: tuple[int, int, int]  # training's (seed, steps, batch) replayed

    def all_trained(self) -> list[int]:
        """The lengths of which training drew every possible word (none can be held out)."""
        return [n for n, (seen, possible) in self.by_length.items() if seen == possible]


def trained_words(seed: int = SEED, steps: int = STEPS, batch: int = BATCH) -> set[str]:
    """Every word training drew: its stream replayed (a second or more: not for a page load)."""
    seen: set[str] = set()
    for words in word_batches(seed, steps, batch):
        seen.update(words)
    return seen


def draw(n: int, seed: int, trained: set[str]) -> list[str]:
    """`n` different words drawn as training draws them, from random.Random(seed), keeping only
    those not in `trained`."""
    rng, kept = random.Random(seed), {}
    while len(kept) < n:
        (word,) = random_words(1, rng)
        if word not in trained:
            kept[word] = None
    return list(kept)


def make(n: int = WORDS, seed: int = WORDS_SEED) -> HeldOut:
    """Replay training's stream, draw the held-out words outside it."""
    trained = trained_words()
    by_length = {
        length: (sum(len(w) == length for w in trained), math.perm(len(LETTERS), length))
        for length in TRAIN_LENGTHS
    }
    return HeldOut(tuple(draw(n, seed, trained)), STEPS * BATCH, len(trained), by_length, seed,
                   (SEED, STEPS, BATCH))  # fmt: skip


def save(held: HeldOut, path: Path = PATH) -> Path:
    data = {
        "command": COMMAND,
        "recipe": dict(zip(("seed", "steps", "batch"), held.recipe, strict=True)),
        "draws": held.draws,
        "trained": held.trained,
        "by_length": {str(n): list(counts) for n, counts in held.by_length.items()},
        "seed": held.seed,
        "words": list(held.words),
    }
    path.write_text(json.dumps(data, indent=0) + "\n")
    return path


@cache
def held_out(path: Path = PATH) -> HeldOut:
    """The shipped held-out words (held_out.json), read once per process."""
    data = json.loads(path.read_text())
    recipe = data["recipe"]
    return HeldOut(
        tuple(data["words"]), data["draws"], data["trained"],
        {int(n): (seen, possible) for n, (seen, possible) in data["by_length"].items()},
        data["seed"], (recipe["seed"], recipe["steps"], recipe["batch"]),
    )  # fmt: skip


def longer_words(n: int = LONGER, seed: int = LONGER_SEED) -> list[str]:
    """Words of 9 to 12 letters: training drew only 2 to 8, so none of them."""
    return random_words(n, random.Random(seed), range(TRAIN_LENGTHS.stop, MAX_SOURCE + 1))


def first_reversed(words: list[str]) -> list[str]:
    """Each word's first 8 letters (as many as training's longest word had), reversed: what the
    page compares the model's writing of a longer word with."""
    return [word[: TRAIN_LENGTHS.stop - 1][::-1] for word in words]


def main() -> None:
    held = make()
    save(held)
    words = list(held.words)
    model = load()
    print(f"replayed {held.draws:,} training draws: {held.trained:,} different words")
    for length, (seen, possible) in held.by_length.items():
        print(f"  {length} letters: {seen:,} of {possible:,} trained on ({seen / possible:.1%})")
    lengths = sorted({len(w) for w in words})
    print(f"wrote {PATH.name}: {len(words)} held-out words of {lengths[0]} to {lengths[-1]} "
          f"letters; reversed {accuracy(model, words):.1%}")  # fmt: skip
    steps = alignment_scores(model, words)
    per_word = alignment_scores(model, words, per_word=True)
    for layer in range(steps.shape[0]):
        for head in range(steps.shape[1]):
            knocked = accuracy(model, words, [(layer, head)])
            print(f"  decoder layer {layer} head {head}: alignment {steps[layer, head]:.3f} "
                  f"over (word, step) pairs, {per_word[layer, head]:.3f} per word; knocked "
                  f"out, reversed {knocked:.1%}")  # fmt: skip
    longer = longer_words()
    print(
        f"{len(longer)} words of 9 to 12 letters: reversed {accuracy(model, longer):.1%}; "
        f"first 8 letters reversed, then </s>: "
        f"{share_written(model, longer, first_reversed(longer)):.1%}"
    )


if __name__ == "__main__":
    main()
