"""The shared sidebar: widgets bound to the URL, link checking, and the cached trace.

Widget keys are short and stable: they are the URL's query parameters, so a teacher can share
the exact view as a link (`?src=sentence&T=8&heads=4`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import astuple, dataclass, replace

import streamlit as st
import torch

from attention import (
    AttentionTrace,
    Embedded,
    MultiHeadSelfAttention,
    build_mask,
    parse_matrix,
    random_embeddings,
    seeded_layer,
    sentence_embeddings,
    worked_example,
)
from attention.display.tables import unique_labels

SOURCES = {
    "random": "seeded N(0, 1) vectors",
    "sentence": "your own words",
    "worked": "the classic 3-token example",
}
DEFAULTS = {
    "src": "random",
    "text": "The cat sat on the mat",
    "pos": True,
    "T": 6,
    "d_model": 8,
    "heads": 2,
    "causal": True,
    "seed": 0,
}
T_RANGE = (1, 64)
D_MODEL_RANGE = (2, 256)
SEED_RANGE = (0, 99_999)
MAX_HEADS = 16
MAX_TEXT = 1_000  # characters of sentence used; the tokenizer then keeps at most T tokens
NEG_INF = float("-inf")
# The matrices here are tiny (at most 64 x 256): torch's intra-op threads only add overhead, and
# on a shared 2-core server they compete with the other students' script threads. One thread.
torch.set_num_threads(1)

# Caches are bounded by entries and expire after ten idle minutes, so a server that taught a
# class in the morning is not holding the class's matrices in the afternoon. Sizes: README.
CACHE_TTL_S = 600


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
        shown = str(raw)[:40]
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
                messages.append(
                    f"`heads={shown}` must divide d_model = {d_model} and be at most "
                    f"{MAX_HEADS}: using the default."
                )
        elif key in ("causal", "pos"):
            if raw not in ("true", "false"):
                messages.append(f"`{key}={shown}` must be true or false: using {DEFAULTS[key]}.")
        elif key == "src":
            if raw not in SOURCES:
                messages.append(f"`src={shown}` must be one of {', '.join(SOURCES)}: using random.")
        elif key == "text":
            if len(raw) > MAX_TEXT:
                messages.append(
                    f"The link's sentence is {len(raw)} characters long; only the "
                    f"first {MAX_TEXT} are used."
                )
        else:
            unknown.append(key)
            messages.append(f"Unknown link parameter `{str(key)[:40]}` ignored.")
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
        st.slider(
            "Sequence length T",
            *T_RANGE,
            DEFAULTS["T"],
            key="T",
            bind="query-params",
            disabled=worked,
            help="Number of tokens (a sentence is cut to this length).",
        )
        d_model = st.slider(
            "d_model (C)",
            *D_MODEL_RANGE,
            DEFAULTS["d_model"],
            key="d_model",
            bind="query-params",
            disabled=worked,
        )
        heads_slider(d_model, disabled=worked)
        st.toggle(
            "Causal mask",
            DEFAULTS["causal"],
            key="causal",
            bind="query-params",
            help="Each token may attend only to itself and earlier tokens.",
        )
        st.number_input(
            "Seed",
            *SEED_RANGE,
            DEFAULTS["seed"],
            key="seed",
            bind="query-params",
            disabled=worked,
            help="Fixes the embeddings and the weights.",
        )
    return current_settings()


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
    )


@dataclass(frozen=True, eq=False)
class Lesson:
    """What a page shows: token labels, X and the trace (or the reason there is none)."""

    settings: Settings
    labels: list[str]
    embedded: Embedded | None
    trace: AttentionTrace | None
    layer: MultiHeadSelfAttention | None = None
    error: str | None = None
    notice: str | None = None
    key: tuple = ()  # the cache key: plain values that determine everything above


@dataclass(frozen=True)
class Variant:
    """Lesson-specific changes to the shared computation (plain values, so they key the cache)."""

    n_padding: int = 0  # trailing tokens treated as padding
    empty_last_row: bool = False  # block every key of the last query
    mask_value: float | None = None  # None: the source's own (-1e9 for the worked example)
    encodings: tuple[tuple[float, ...], ...] | None = None  # the worked example's X, edited


def canonical(settings: Settings) -> Settings:
    """Settings with the values that do not matter for this source reset, so they share a cache
    entry: the worked example ignores the sizes and the seed; only a sentence has text."""
    if settings.source == "worked":
        return Settings(
            source="worked",
            causal=settings.causal,
            text="",
            seq_len=3,
            d_model=2,
            n_heads=1,
            seed=0,
            positions=False,
        )
    if settings.source == "random":
        return Settings(**{**settings.__dict__, "text": "", "positions": False})
    return settings


def lesson(settings: Settings, variant: Variant = Variant()) -> Lesson:
    """The trace for these settings, computed once per distinct settings (bounded cache)."""
    return cached_lesson(astuple(canonical(settings)), astuple(variant))


@st.cache_resource(max_entries=64, ttl=CACHE_TTL_S, show_spinner=False)
def cached_lesson(settings_key: tuple, variant_key: tuple) -> Lesson:
    """Keyed on plain tuples; the tensors are made in inference mode, so nobody can change the
    shared copy in place."""
    settings, variant = Settings(*settings_key), Variant(*variant_key)
    key = (settings_key, variant_key)
    try:
        with torch.inference_mode():
            return replace(compute_lesson(settings, variant), key=key)
    except ValueError as error:
        return Lesson(settings, [], None, None, error=str(error), key=key)


def compute_lesson(settings: Settings, variant: Variant) -> Lesson:
    """Build X and run the layer (no caching here: see `lesson`)."""
    s = settings
    mask_value = variant.mask_value
    if s.source == "worked":
        x = (
            None
            if variant.encodings is None
            else parse_matrix([list(row) for row in variant.encodings], max_rows=3, max_cols=2)
        )
        example = worked_example(x)
        embedded, layer = example.embedded, example.layer
        if mask_value is None:
            mask_value = example.mask_value  # the tutorial fills with -1e9
    elif s.source == "sentence":
        embedded = sentence_embeddings(
            s.text, s.d_model, seed=s.seed, max_len=s.seq_len, positional=s.positions
        )
        layer = seeded_layer(s.seed, s.d_model, s.n_heads)
    else:
        embedded = random_embeddings(s.seq_len, s.d_model, s.seed)
        layer = seeded_layer(s.seed, s.d_model, s.n_heads)
    mask_value = NEG_INF if mask_value is None else mask_value
    T = embedded.x.shape[0]
    mask = build_mask(
        T,
        causal=s.causal,
        n_padding=min(variant.n_padding, T),
        empty_last_row=variant.empty_last_row,
    )
    trace = layer.eval()(embedded.x, mask, mask_value=mask_value)
    labels = unique_labels(embedded.tokens)
    return Lesson(s, labels, embedded, trace, layer=layer, notice=embedded.notice)
