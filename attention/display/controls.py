"""The shared sidebar: widgets bound to the URL, and link checking (the computation behind a page
is in lessons.py).

Widget keys are short and stable: they are the URL's query parameters, so a teacher can share
the exact view as a link (`?src=sentence&T=8&heads=4`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import streamlit as st

SOURCES = {
    "random": "seeded N(0, 1) vectors",
    "sentence": "your own words",
    "worked": "the classic 3-token example",
    "trained": "a tiny transformer trained on a task",
}
# The trained tasks and their models' layer counts (attention.tiny.TASKS, repeated here so the
# sidebar draws before torch loads; tests/test_learn.py checks they agree).
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
T_RANGE = (1, 64)
D_MODEL_RANGE = (2, 256)
SEED_RANGE = (0, 99_999)
MAX_HEADS = 16
MAX_TEXT = 1_000  # characters of sentence used; the tokenizer then keeps at most T tokens
# Link parameters of one lesson's own widgets (6 · What heads learn, 7 · Bug hunt); that lesson
# checks their values.
LESSON_PARAMS = frozenset({"learn", "bug", "mode", "mystery"})


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


def parse_int(text: str, low: int, high: int) -> int | None:
    """A whole number in [low, high] from link text, or None."""
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or value != int(value) or not low <= value <= high:
        return None
    return int(value)


def check_link(params: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """Problems with a link's query parameters: (messages to show, unknown keys to drop).

    Streamlit itself drops a bound parameter it cannot use and falls back to the default; this
    says so, in words a student understands."""
    messages, unknown = [], []
    ranges = {"T": T_RANGE, "d_model": D_MODEL_RANGE, "seed": SEED_RANGE}
    for key, raw in params.items():
        shown = str(raw)[:40].replace("`", "'")  # shown inside a code span: keep it there
        if key in ranges:
            low, high = ranges[key]
            if parse_int(raw, low, high) is None:
                messages.append(
                    f"`{key}={shown}` is not a whole number from {low} to {high}: "
                    f"using {DEFAULTS[key]}."
                )
        elif key == "heads":
            d_model = parse_int(params.get("d_model", ""), *D_MODEL_RANGE) or DEFAULTS["d_model"]
            heads = parse_int(raw, 1, MAX_HEADS)
            if heads is None or heads not in head_options(d_model):
                fallback = nearest_heads(d_model, DEFAULTS["heads"])
                messages.append(
                    f"`heads={shown}` must divide d_model = {d_model} and be at most "
                    f"{MAX_HEADS}: using {fallback}."
                )
        elif key in ("causal", "pos"):
            if raw.lower() not in ("true", "false"):  # Streamlit reads True/FALSE alike
                messages.append(f"`{key}={shown}` must be true or false: using {DEFAULTS[key]}.")
        elif key == "src":
            if raw not in SOURCES:
                messages.append(f"`src={shown}` must be one of {', '.join(SOURCES)}: using random.")
        elif key == "task":
            if raw not in TRAINED_TASKS:
                messages.append(
                    f"`task={shown}` must be one of {', '.join(TRAINED_TASKS)}: using "
                    f"{DEFAULTS['task']}."
                )
        elif key == "layer":
            task = params.get("task", DEFAULTS["task"])
            layers = TRAINED_TASKS.get(task, TRAINED_TASKS[DEFAULTS["task"]])
            if parse_int(raw, 0, layers - 1) is None:
                messages.append(f"`layer={shown}` must be a layer of the task's model: using 0.")
        elif key == "text":
            if len(raw) > MAX_TEXT:
                messages.append(
                    f"The link's sentence is {len(raw)} characters long; only the "
                    f"first {MAX_TEXT} are used."
                )
        elif key in LESSON_PARAMS:
            continue
        else:
            unknown.append(key)
            messages.append(
                f"Unknown link parameter `{str(key)[:40].replace('`', chr(39))}` ignored."
            )
    return messages, unknown


def sidebar() -> Settings:
    """Render the shared controls in the sidebar and return their values."""
    messages, unknown = check_link(st.query_params.to_dict())
    for key in unknown:
        st.query_params.pop(key, None)
    with st.sidebar:
        for message in messages:
            st.warning(message, icon=":material/link_off:")
        source = st.radio(
            "Input X",
            list(SOURCES),
            key="src",
            bind="query-params",
            captions=list(SOURCES.values()),
            horizontal=False,
        )
        worked = source == "worked"
        fixed = worked or source == "trained"  # the source fixes the sizes and the seed
        if source == "sentence":
            st.text_input(
                "Sentence",
                DEFAULTS["text"],
                key="text",
                bind="query-params",
                max_chars=MAX_TEXT,
                help="Split into words and punctuation marks.",
            )
            st.toggle("Add sinusoidal positions", DEFAULTS["pos"], key="pos", bind="query-params")
        if worked:
            st.caption("The worked example fixes T = 3, d_model = 2 and one head.")
        if source == "trained":
            trained_source()
        st.slider(
            "Sequence length T",
            *T_RANGE,
            DEFAULTS["T"],
            key="T",
            bind="query-params",
            disabled=fixed,
            help="Number of tokens (a sentence is cut to this length).",
        )
        d_model = st.slider(
            "d_model (C)",
            *D_MODEL_RANGE,
            DEFAULTS["d_model"],
            key="d_model",
            bind="query-params",
            disabled=fixed,
        )
        heads_slider(d_model, disabled=fixed)
        st.toggle(
            "Causal mask",
            DEFAULTS["causal"],
            key="causal",
            bind="query-params",
            disabled=source == "trained",
            help="Each token may attend only to itself and earlier tokens.",
        )
        st.number_input(
            "Seed",
            *SEED_RANGE,
            DEFAULTS["seed"],
            key="seed",
            bind="query-params",
            disabled=fixed,
            help="Fixes the embeddings and the weights.",
        )
    return current_settings()


def trained_source() -> None:
    """Which trained model, and which of its layers, the lessons show."""
    # Bound widgets keep their option itself in the URL, so no format_func on either.
    task = st.selectbox(
        "Task",
        list(TRAINED_TASKS),
        index=list(TRAINED_TASKS).index(DEFAULTS["task"]),
        key="task",
        bind="query-params",
        help="The tiny transformer trained on this task (lesson 6 shows how).",
    )
    layers = TRAINED_TASKS[task]
    if layers > 1:
        if st.session_state.get("layer") not in range(layers):
            st.session_state["layer"] = min(DEFAULTS["layer"], layers - 1)
        st.segmented_control(
            "Layer", list(range(layers)), key="layer", bind="query-params",
        )  # fmt: skip
    st.caption(
        "The trained model fixes T, d_model, the heads and the mask; X is the input to the "
        "chosen layer on the task's example."
    )


def heads_slider(d_model: int, disabled: bool) -> None:
    """Heads: only divisors of d_model are offered; an invalid count moves to the nearest."""
    options = head_options(d_model)
    current = st.session_state.get("heads", DEFAULTS["heads"])
    if current not in options:
        fitted = nearest_heads(d_model, current)
        st.session_state["heads"] = fitted
        st.info(
            f"Heads changed from {current} to {fitted}: {current} does not divide "
            f"d_model = {d_model}.",
            icon=":material/info:",
        )
    if len(options) == 1:
        st.caption(f"Heads: 1 (d_model = {d_model} has no other divisor up to {MAX_HEADS}).")
        st.session_state["heads"] = 1
        return
    # Give a default only on the first run: afterwards the session (or the URL) holds the value.
    first = {} if "heads" in st.session_state else {"value": nearest_heads(d_model, current)}
    st.select_slider(
        "Heads H",
        options=options,
        key="heads",
        bind="query-params",
        disabled=disabled,
        help="Only divisors of d_model are offered.",
        **first,
    )


def current_settings() -> Settings:
    """The controls' values from the session (defaults before the sidebar first ran)."""
    state = st.session_state
    return Settings(
        source=state.get("src", DEFAULTS["src"]),
        text=str(state.get("text", DEFAULTS["text"]))[:MAX_TEXT],
        positions=bool(state.get("pos", DEFAULTS["pos"])),
        seq_len=int(state.get("T", DEFAULTS["T"])),
        d_model=int(state.get("d_model", DEFAULTS["d_model"])),
        n_heads=int(state.get("heads", DEFAULTS["heads"])),
        causal=bool(state.get("causal", DEFAULTS["causal"])),
        seed=int(state.get("seed", DEFAULTS["seed"])),
        task=str(state.get("task", DEFAULTS["task"])),
        layer=int(state.get("layer") or 0),
    )
