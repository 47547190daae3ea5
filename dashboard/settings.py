"""The sidebar's settings as plain values: the sources, ranges and defaults of its controls,
and `Settings`, which keys every cache. No Streamlit here: the link checks (links.py) and the
widgets (controls.py) both read these."""

from __future__ import annotations

from dataclasses import dataclass

SOURCES = {
    "random": "seeded N(0, 1) vectors",
    "sentence": "your own words",
    "worked": "the classic 3-token example",
    "trained": "a tiny transformer trained on a task",
    "shakespeare": "a small GPT trained on Shakespeare, reading your text",
}
LM_LAYERS = 2  # the Shakespeare model's layers (attention.lm.training.SIZE; test_lm.py checks)
# The trained tasks and their models' layer counts (attention.tiny.TASKS, repeated here so the
# sidebar draws before torch loads; tests/dashboard/test_learn.py checks they agree).
TRAINED_TASKS = {"previous_token": 1, "reverse": 1, "running_max": 1, "induction": 2}
DEFAULTS = {
    "src": "random",
    "text": "The cat sat on the mat",
    "pos": True,
    "T": 6,
    "d_model": 8,
    "heads": 2,
    "causal": True,
    "seed": 0,
    "task": "induction",
    "layer": 1,
}
LABELS = {  # the sidebar controls' names, for the caption of a lesson that ignores some
    "src": "the input X", "T": "the sequence length", "d_model": "d_model", "heads": "the heads",
    "causal": "the causal mask", "seed": "the seed",
}  # fmt: skip
T_RANGE = (1, 64)
D_MODEL_RANGE = (2, 256)
SEED_RANGE = (0, 99_999)
MAX_HEADS = 16
MAX_TEXT = 1_000  # characters of sentence used; the tokenizer then keeps at most T tokens


@dataclass(frozen=True)
class Settings:
    """The sidebar's values: plain numbers and strings, so they can key a cache."""

    source: str = DEFAULTS["src"]
    text: str = DEFAULTS["text"]
    positions: bool = DEFAULTS["pos"]
    seq_len: int = DEFAULTS["T"]
    d_model: int = DEFAULTS["d_model"]
    n_heads: int = DEFAULTS["heads"]
    causal: bool = DEFAULTS["causal"]
    seed: int = DEFAULTS["seed"]
    task: str = DEFAULTS["task"]  # the trained source's task
    layer: int = DEFAULTS["layer"]  # and which of its layers is shown


def head_options(d_model: int) -> list[int]:
    """Head counts that divide d_model, up to MAX_HEADS."""
    return [h for h in range(1, MAX_HEADS + 1) if d_model % h == 0]


def nearest_heads(d_model: int, heads: int) -> int:
    """The valid head count closest to `heads` (the smaller on a tie)."""
    return min(head_options(d_model), key=lambda h: (abs(h - heads), h))
