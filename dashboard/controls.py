"""The shared sidebar: widgets bound to the URL (link checking is in links.py; the computation
behind a page is in lessons.py).

Widget keys are short and stable: they are the URL's query parameters, so a teacher can share
the exact view as a link (`?src=sentence&T=8&heads=4`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from dashboard.links import check_link, lesson_link_message, same_value, typed
from dashboard.settings import (  # noqa: F401 (re-exported: controls.Settings, controls.DEFAULTS, ...)
    D_MODEL_RANGE,
    DEFAULTS,
    LABELS,
    LM_LAYERS,
    MAX_HEADS,
    MAX_TEXT,
    SEED_RANGE,
    SOURCES,
    T_RANGE,
    TRAINED_TASKS,
    Settings,
    head_options,
    nearest_heads,
)
from dashboard.spec import SIDEBAR
from dashboard.text import plain


def linked(key: str) -> str | list[str] | None:
    """The link's value for a lesson's control, before the widget reads it; None once the
    widget exists in this session (the URL then only mirrors it) or when the link has none."""
    if key in st.session_state or key not in st.query_params:
        return None
    values = st.query_params.get_all(key)
    return values[0] if len(values) == 1 else values


def open_link(here: str, keys: frozenset[str]) -> None:
    """A link followed inside the app opens what it says. Streamlit seeds a bound widget from
    the URL only on a session's first run; a page_link with settings (the course plan's steps)
    arrives in a session whose widgets already hold values, which win, and the browser appends
    the link's parameters to the ones the sidebar keeps in the address (`T=7&T=4`): the address
    said T=4, the page showed the session's T. So on a page change, each control the link
    names takes the link's value (its last), as a fresh load of that address would.
    `keys`: the link parameters bound to widgets (the sidebar's and the lessons')."""
    came_from = st.session_state.get("_page")
    st.session_state["_page"] = here
    if came_from is None or came_from == here:
        return
    for key in keys & set(st.query_params):
        held = st.session_state.get(key)
        if held is None or isinstance(held, (list, tuple)):
            continue  # not drawn in this session yet (the URL seeds it), or a multi-select
        value = typed(st.query_params.get_all(key)[-1], held)
        if value != held:
            st.session_state[key] = value


def lesson_value(key: str, options: Sequence | None, default: object) -> object:
    """A lesson control's value where the page does not draw its widget (presenter mode shows
    one section, without the lesson's controls): the session's, else the link's, else
    `default`; a value that is not one of `options` gives `default`, as the widget would.
    `options` None is a free text box: any text is its value."""
    if key in st.session_state:
        value = st.session_state[key]
        if options is None:
            return value if isinstance(value, str) else default
        return value if value in options else default
    raw = linked(key)
    if raw is None:
        return default
    if options is None:
        return raw if isinstance(raw, str) else raw[-1]
    return next((option for option in options if same_value(raw, option)), default)


def link_note(key: str, raw: str | list[str] | None, used: object, valid: str, where=st) -> None:
    """The message for a lesson's link value the page could not use, under its control."""
    message = lesson_link_message(key, raw, used, valid)
    if message:
        where.warning(plain(message), icon=":material/link_off:")


def sidebar(
    uses: tuple[str, ...] = SIDEBAR, lesson_params: frozenset[str] = frozenset()
) -> Settings:
    """Render the shared controls (SIDEBAR) in the sidebar and return their values; those the
    lesson does not use are greyed. The link is checked once, on a session's first run (later
    the URL only mirrors the widgets), and its messages are written after the widgets have read
    it, so they say what the page uses."""
    first_run = "_link_messages" not in st.session_state
    if first_run:  # the link as opened: the widgets below rewrite the URL to what they use
        params = st.query_params
        opened = (params.to_dict(), {key: len(params.get_all(key)) for key in params})
    with st.sidebar:
        notices = st.container()
        unused_note(uses)
        off = {key: key not in uses for key in SIDEBAR}
        source = source_controls(disabled=off["src"])
        size_controls(source, off)
    settings = current_settings()
    if first_run:
        st.session_state["_link_messages"] = (
            settings,
            link_messages(settings, *opened, lesson_params),
        )
    opened_with, messages = st.session_state["_link_messages"]
    if settings == opened_with:  # until the student changes something
        for message in messages:
            notices.warning(plain(message), icon=":material/link_off:")
    return settings


def unused_note(uses: tuple[str, ...]) -> None:
    """Which of the sidebar's controls the lesson reads, when not all of them."""
    if set(uses) == set(SIDEBAR):
        return
    st.caption(
        "This lesson uses "
        + " and ".join(LABELS[key] for key in uses)
        + "; the others are greyed out and keep their values for the other lessons."
        if uses
        else "This lesson uses none of these controls: they are greyed out and keep "
        "their values for the other lessons."
    )


def source_controls(disabled: bool) -> str:
    """Where X comes from, and that source's own controls (a sentence, a trained model, the
    Shakespeare model's text); the source chosen."""
    source = st.radio(
        "Input X",
        list(SOURCES),
        key="src",
        bind="query-params",
        captions=list(SOURCES.values()),
        horizontal=False,
        disabled=disabled,
    )
    if source == "shakespeare":
        lm_source(disabled=disabled)
    if source == "sentence":
        st.text_input(
            "Sentence",
            DEFAULTS["text"],
            key="text",
            bind="query-params",
            max_chars=MAX_TEXT,
            help="Split into words and punctuation marks.",
            disabled=disabled,
        )
        st.toggle(
            "Add sinusoidal positions", DEFAULTS["pos"], key="pos", bind="query-params",
            disabled=disabled,
        )  # fmt: skip
    if source == "worked":
        st.caption("The worked example fixes T = 3, d_model = 2 and one head.")
    if source == "trained":
        trained_source(disabled=disabled)
    return source


def size_controls(source: str, off: dict[str, bool]) -> None:
    """T, d_model, the heads, the causal mask and the seed: greyed where the lesson does not
    read them (`off`) or the source fixes them (the worked example and the trained models)."""
    fixed = source in ("worked", "trained", "shakespeare")  # it fixes the sizes and the seed
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
        disabled=source in ("trained", "shakespeare") or off["causal"],
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


def link_messages(
    settings: Settings, params: dict, repeated: dict, lesson_params: frozenset[str] = frozenset()
) -> list[str]:
    """What was wrong with the link the session opened, and what the page uses instead; unknown
    keys are dropped from the URL."""
    used = {
        "T": settings.seq_len, "d_model": settings.d_model, "heads": settings.n_heads,
        "seed": settings.seed, "causal": settings.causal, "pos": settings.positions,
        "src": settings.source, "task": settings.task, "layer": settings.layer,
    }  # fmt: skip
    messages, unknown = check_link(params, used, repeated, lesson_params)
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


def lm_source(disabled: bool = False) -> None:
    """The text the Shakespeare model reads, and which of its layers the lessons show."""
    st.text_area(
        "Text",
        DEFAULTS["text"],
        key="text",
        bind="query-params",
        max_chars=MAX_TEXT,
        height=80,
        help="One token per character; the model reads at most 64.",
        disabled=disabled,
    )
    if st.session_state.get("layer") not in range(LM_LAYERS):
        st.session_state["layer"] = min(DEFAULTS["layer"], LM_LAYERS - 1)
    st.segmented_control(
        "Layer", list(range(LM_LAYERS)), key="layer", bind="query-params", disabled=disabled
    )
    st.caption(
        "The model fixes T (your text's characters), d_model = 128, 4 heads and the causal "
        "mask; X is the chosen layer's input, layer-normed, as the model reads it."
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
    return settings_of(st.session_state)


def settings_of(state: Mapping[str, Any]) -> Settings:
    """The settings these control values make ({}: every default)."""
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
        layer=int(DEFAULTS["layer"] if state.get("layer") is None else state["layer"]),
    )
