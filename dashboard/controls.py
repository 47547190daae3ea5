"""The shared sidebar: widgets bound to the URL, and link checking (the computation behind a page
is in lessons.py).

Widget keys are short and stable: they are the URL's query parameters, so a teacher can share
the exact view as a link (`?src=sentence&T=8&heads=4`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import streamlit as st

from dashboard.text import plain, visible

SOURCES = {
    "random": "seeded N(0, 1) vectors",
    "sentence": "your own words",
    "worked": "the classic 3-token example",
    "trained": "a tiny transformer trained on a task",
}
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
# Link parameters of the lessons' own widgets (bind="query-params"): each lesson checks its own
# values (lesson_link_message). Query parameters are global to the URL, so these keys are unique
# across lessons; Streamlit drops a bound key of another page on a page switch.
LESSON_PARAMS = frozenset({
    "head", "cell_i", "cell_j",  # 1 · Step by step
    "pad", "mask_head",  # 3 · Masking
    "dk", "tau",  # 4 · Why √d_k
    "learn", "learn_step", "learn_seed", "learn_off",  # 6 · What heads learn
    "bug", "mode", "mystery", "bug_stage", "bug_head", "bug_task",  # 7 · Bug hunt
    "drill_set",  # 8 · Drills
    "decode_step", "kv_heads", "window",  # 10 · Generation and the KV cache
    "block_q", "block_k", "tile_step",  # 11 · Attention at scale
})  # fmt: skip


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


def check_link(
    params: Mapping[str, str],
    used: Mapping[str, object] | None = None,
    repeated: Mapping[str, int] | None = None,
) -> tuple[list[str], list[str]]:
    """Problems with a link's query parameters: (messages to show, unknown keys to drop).

    `used` holds what the page ended up using for each key (the widgets' values after the
    link was read), so a message says exactly that: Streamlit reads `T=3.5` as 3 and drops
    `T=70`, and the message says "using 3" or "using 6" accordingly. `repeated` counts keys the
    link gives more than once (Streamlit keeps the last). Messages are plain text: the caller
    shows them with `plain`, so a value can never turn into markdown."""
    used = {} if used is None else used
    messages, unknown = [], []
    ranges = {"T": T_RANGE, "d_model": D_MODEL_RANGE, "seed": SEED_RANGE}
    for key, count in (repeated or {}).items():
        if count > 1:
            last = f"{shorten(key)}={shorten(params.get(key, ''))}"
            using = used.get(key, f"the last, {last}")
            messages.append(f"The link gives {shorten(key)} {count} times: using {using}.")
    for key, raw in params.items():
        if (repeated or {}).get(key, 1) > 1:
            continue  # said above
        shown = f"{shorten(key)}={shorten(raw)}"
        if key in ranges:
            low, high = ranges[key]
            if parse_int(raw, low, high) is None:
                messages.append(
                    f"The link's {shown} is not a whole number from {low} to {high}: "
                    f"using {used.get(key, DEFAULTS[key])}."
                )
        elif key == "heads":
            if parse_int(raw, 1, MAX_HEADS) is None:  # a count that does not divide d_model
                # is not a link problem: the sidebar says which count the page uses, always
                messages.append(
                    f"The link's {shown} is not a whole number from 1 to {MAX_HEADS}: using "
                    f"{used.get('heads', DEFAULTS['heads'])}."
                )
        elif key in ("causal", "pos"):
            if raw.lower() not in ("true", "false"):  # Streamlit reads True/FALSE alike
                messages.append(
                    f"The link's {shown} must be true or false: using "
                    f"{str(used.get(key, DEFAULTS[key])).lower()}."
                )
        elif key == "src":
            if raw not in SOURCES:
                messages.append(
                    f"The link's {shown} must be one of {', '.join(SOURCES)}: using "
                    f"{used.get('src', DEFAULTS['src'])}."
                )
        elif key == "task":
            if raw not in TRAINED_TASKS:
                messages.append(
                    f"The link's {shown} must be one of {', '.join(TRAINED_TASKS)}: using "
                    f"{used.get('task', DEFAULTS['task'])}."
                )
        elif key == "layer":
            task = used.get("task") or params.get("task", DEFAULTS["task"])
            layers = TRAINED_TASKS.get(task, TRAINED_TASKS[DEFAULTS["task"]])
            if parse_int(raw, 0, layers - 1) is None:
                messages.append(
                    f"The link's {shown} must be a layer of the task's model (0 to "
                    f"{layers - 1}): using {used.get('layer', 0)}."
                )
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
            messages.append(f"Unknown link parameter {shorten(key)} ignored.")
    return messages, unknown


def same_value(raw: str | list[str], used: object) -> bool:
    """Whether a link's value is the one the widget ended up with (numbers by value, so
    `pad=2.0` is 2; a multi-select by its list of labels)."""
    if isinstance(used, (list, tuple)):
        return (raw if isinstance(raw, list) else [raw]) == [str(u) for u in used]
    if isinstance(raw, list):
        return False
    if isinstance(used, bool):
        return raw.lower() == str(used).lower()
    if isinstance(used, (int, float)):
        try:
            return float(raw) == float(used)
        except ValueError:
            return False
    return raw == str(used)


def lesson_link_message(
    key: str, raw: str | list[str] | None, used: object, valid: str
) -> str | None:
    """What was wrong with a lesson's link value `raw` for the control `key`, and what the page
    uses instead (Streamlit drops a value its widget cannot take); None when it was used.
    Plain text, shown with `plain` as the sidebar's messages are."""
    if raw is None or same_value(raw, used):
        return None
    shown = ", ".join(raw) if isinstance(raw, list) else raw
    using = used
    if isinstance(used, (list, tuple)):
        using = ", ".join(map(str, used)) or "none"
    return f"The link's {shorten(key)}={shorten(shown)} is not {valid}: using {shorten(using)}."


def linked(key: str) -> str | list[str] | None:
    """The link's value for a lesson's control, before the widget reads it; None once the
    widget exists in this session (the URL then only mirrors it) or when the link has none."""
    if key in st.session_state or key not in st.query_params:
        return None
    values = st.query_params.get_all(key)
    return values[0] if len(values) == 1 else values


def lesson_value(key: str, options: Sequence, default: object) -> object:
    """A lesson control's value where the page does not draw its widget (presenter mode shows
    one section, without the lesson's controls): the session's, else the link's, else
    `default`; a value that is not one of `options` gives `default`, as the widget would."""
    if key in st.session_state:
        value = st.session_state[key]
        return value if value in options else default
    raw = linked(key)
    if raw is None:
        return default
    return next((option for option in options if same_value(raw, option)), default)


def link_note(key: str, raw: str | list[str] | None, used: object, valid: str, where=st) -> None:
    """The message for a lesson's link value the page could not use, under its control."""
    message = lesson_link_message(key, raw, used, valid)
    if message:
        where.warning(plain(message), icon=":material/link_off:")


def shorten(value: object, limit: int = 40) -> str:
    """A link's key or value as it may appear in a message: invisible characters written out,
    at most `limit` characters."""
    text = visible(str(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def sidebar(uses: tuple[str, ...] = ("src", "T", "d_model", "heads", "causal", "seed")) -> Settings:
    """Render the shared controls in the sidebar and return their values. The link is checked
    once, on a session's first run (later the URL only mirrors the widgets), and its messages
    are written after the widgets have read it, so they say what the page uses."""
    first_run = "_link_messages" not in st.session_state
    if first_run:  # the link as opened: the widgets below rewrite the URL to what they use
        params = st.query_params
        opened = (params.to_dict(), {key: len(params.get_all(key)) for key in params})
    with st.sidebar:
        notices = st.container()
        if set(uses) != {"src", "T", "d_model", "heads", "causal", "seed"}:
            st.caption(
                "This lesson uses "
                + (" and ".join(LABELS[key] for key in uses) if uses else "none of these controls")
                + "; the others are greyed out and keep their values for the other lessons."
            )
        source = st.radio(
            "Input X",
            list(SOURCES),
            key="src",
            bind="query-params",
            captions=list(SOURCES.values()),
            horizontal=False,
            disabled="src" not in uses,
        )
        worked = source == "worked"
        fixed = worked or source == "trained"  # the source fixes the sizes and the seed
        off = {key: key not in uses for key in ("src", "T", "d_model", "heads", "causal", "seed")}
        if source == "sentence":
            st.text_input(
                "Sentence",
                DEFAULTS["text"],
                key="text",
                bind="query-params",
                max_chars=MAX_TEXT,
                help="Split into words and punctuation marks.",
                disabled=off["src"],
            )
            st.toggle(
                "Add sinusoidal positions", DEFAULTS["pos"], key="pos", bind="query-params",
                disabled=off["src"],
            )  # fmt: skip
        if worked:
            st.caption("The worked example fixes T = 3, d_model = 2 and one head.")
        if source == "trained":
            trained_source(disabled=off["src"])
        st.slider(
            "Sequence length T",
            *T_RANGE,
            DEFAULTS["T"],
            key="T",
            bind="query-params",
            disabled=fixed or off["T"],
            help="Number of tokens (a sentence is cut to this length).",
        )
        d_model = st.slider(
            "d_model (C)",
            *D_MODEL_RANGE,
            DEFAULTS["d_model"],
            key="d_model",
            bind="query-params",
            disabled=fixed or off["d_model"],
        )
        heads_slider(d_model, disabled=fixed or off["heads"])
        st.toggle(
            "Causal mask",
            DEFAULTS["causal"],
            key="causal",
            bind="query-params",
            disabled=source == "trained" or off["causal"],
            help="Each token may attend only to itself and earlier tokens.",
        )
        st.number_input(
            "Seed",
            *SEED_RANGE,
            DEFAULTS["seed"],
            key="seed",
            bind="query-params",
            disabled=fixed or off["seed"],
            help="Fixes the embeddings and the weights.",
        )
    settings = current_settings()
    if first_run:
        st.session_state["_link_messages"] = (settings, link_messages(settings, *opened))
    opened_with, messages = st.session_state["_link_messages"]
    if settings == opened_with:  # until the student changes something
        for message in messages:
            notices.warning(plain(message), icon=":material/link_off:")
    return settings


def link_messages(settings: Settings, params: dict, repeated: dict) -> list[str]:
    """What was wrong with the link the session opened, and what the page uses instead; unknown
    keys are dropped from the URL."""
    used = {
        "T": settings.seq_len, "d_model": settings.d_model, "heads": settings.n_heads,
        "seed": settings.seed, "causal": settings.causal, "pos": settings.positions,
        "src": settings.source, "task": settings.task, "layer": settings.layer,
    }  # fmt: skip
    messages, unknown = check_link(params, used, repeated)
    for key in unknown:
        st.query_params.pop(key, None)
    return messages


def trained_source(disabled: bool = False) -> None:
    """Which trained model, and which of its layers, the lessons show."""
    # Bound widgets keep their option itself in the URL, so no format_func on either.
    task = st.selectbox(
        "Task",
        list(TRAINED_TASKS),
        index=list(TRAINED_TASKS).index(DEFAULTS["task"]),
        key="task",
        bind="query-params",
        help="The tiny transformer trained on this task (lesson 6 shows how).",
        disabled=disabled,
    )
    layers = TRAINED_TASKS[task]
    if layers > 1:
        if st.session_state.get("layer") not in range(layers):
            st.session_state["layer"] = min(DEFAULTS["layer"], layers - 1)
        st.segmented_control(
            "Layer", list(range(layers)), key="layer", bind="query-params", disabled=disabled,
        )  # fmt: skip
    st.caption(
        "The trained model fixes T, d_model, the heads and the mask; X is the input to the "
        "chosen layer on the task's example."
    )


def heads_slider(d_model: int, disabled: bool) -> None:
    """Heads: the count asked for, in the URL as it is; the page uses the nearest divisor of
    d_model and says so. Nothing here writes the widget's value: a value set from code is sent
    to the browser with the server's stale copy of the URL (Streamlit 1.67), so a corrected
    count left the link naming other heads than the page showed (issue 17 item 14)."""
    asked = st.select_slider(
        "Heads H",
        options=list(range(1, MAX_HEADS + 1)),
        value=DEFAULTS["heads"],
        key="heads",
        bind="query-params",
        disabled=disabled,
        help="H must divide d_model: each head gets d_model / H columns.",
    )
    used = nearest_heads(d_model, asked)
    if used != asked:
        st.info(
            f"H = {asked} does not divide d_model = {d_model}: the page uses H = {used}, "
            "the nearest count that does.",
            icon=":material/info:",
        )


def current_settings() -> Settings:
    """The controls' values from the session (defaults before the sidebar first ran)."""
    state = st.session_state
    d_model = int(state.get("d_model", DEFAULTS["d_model"]))
    return Settings(
        source=state.get("src", DEFAULTS["src"]),
        text=str(state.get("text", DEFAULTS["text"]))[:MAX_TEXT],
        positions=bool(state.get("pos", DEFAULTS["pos"])),
        seq_len=int(state.get("T", DEFAULTS["T"])),
        d_model=d_model,
        n_heads=nearest_heads(d_model, int(state.get("heads", DEFAULTS["heads"]))),
        causal=bool(state.get("causal", DEFAULTS["causal"])),
        seed=int(state.get("seed", DEFAULTS["seed"])),
        task=str(state.get("task", DEFAULTS["task"])),
        layer=int(state.get("layer") or 0),
    )
