"""Checking a link's query parameters: one validator per sidebar key, and the message that says
what the page uses instead of a value it could not take. The lessons' own keys are declared by
the lessons (`LessonSpec.params`) and checked by their widgets (`lesson_link_message`).

Messages are plain text: the caller shows them with `plain`, so a value never turns into
markdown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from dashboard.settings import (
    D_MODEL_RANGE,
    DEFAULTS,
    LM_LAYERS,
    MAX_HEADS,
    MAX_TEXT,
    SEED_RANGE,
    SOURCES,
    T_RANGE,
    TRAINED_TASKS,
)
from dashboard.text import visible


def shorten(value: object, limit: int = 40) -> str:
    """A link's key or value as it may appear in a message: invisible characters written out,
    at most `limit` characters."""
    shown = visible(str(value))
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def parse_int(text: str, low: int, high: int) -> int | None:
    """A whole number in [low, high] from link text, or None."""
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or value != int(value) or not low <= value <= high:
        return None
    return int(value)


# A validator: (the link's raw value, what the page used for each key, the link) -> a message,
# or None when the value is fine.
Validator = Callable[[str, Mapping[str, object], Mapping[str, str]], str | None]


def whole(key: str, low: int, high: int) -> Validator:
    def check(raw: str, used: Mapping[str, object], params: Mapping[str, str]) -> str | None:
        if parse_int(raw, low, high) is not None:
            return None
        shown = f"{shorten(key)}={shorten(raw)}"
        return (
            f"The link's {shown} is not a whole number from {low} to {high}: using "
            + str(used.get(key, DEFAULTS[key]))
            + "."
        )

    return check


def yes_no(key: str) -> Validator:
    def check(raw: str, used: Mapping[str, object], params: Mapping[str, str]) -> str | None:
        if raw.lower() in ("true", "false"):  # Streamlit reads True/FALSE alike
            return None
        shown = f"{shorten(key)}={shorten(raw)}"
        using = str(used.get(key, DEFAULTS[key])).lower()
        return f"The link's {shown} must be true or false: using {using}."

    return check


def one_of(key: str, options: Mapping[str, object]) -> Validator:
    def check(raw: str, used: Mapping[str, object], params: Mapping[str, str]) -> str | None:
        if raw in options:
            return None
        shown = f"{shorten(key)}={shorten(raw)}"
        return (
            f"The link's {shown} must be one of {', '.join(options)}: using "
            f"{used.get(key, DEFAULTS[key])}."
        )

    return check


def layer(raw: str, used: Mapping[str, object], params: Mapping[str, str]) -> str | None:
    """A layer of the trained task's model (the task the page used, else the link's)."""
    task = used.get("task") or params.get("task", DEFAULTS["task"])
    layers = TRAINED_TASKS.get(task, TRAINED_TASKS[DEFAULTS["task"]])
    if (used.get("src") or params.get("src")) == "shakespeare":
        layers = LM_LAYERS
    if parse_int(raw, 0, layers - 1) is not None:
        return None
    return (
        f"The link's layer={shorten(raw)} must be a layer of the model (0 to "
        f"{layers - 1}): using {used.get('layer', 0)}."
    )


def text(raw: str, used: Mapping[str, object], params: Mapping[str, str]) -> str | None:
    if len(raw) <= MAX_TEXT:
        return None
    return f"The link's sentence is {len(raw)} characters long; only the first {MAX_TEXT} are used."


SIDEBAR_KEYS: dict[str, Validator] = {
    "src": one_of("src", SOURCES),
    "text": text,
    "pos": yes_no("pos"),
    "task": one_of("task", TRAINED_TASKS),
    "layer": layer,
    "T": whole("T", *T_RANGE),
    "d_model": whole("d_model", *D_MODEL_RANGE),
    # a count that does not divide d_model is not a link problem: the sidebar says which count
    # the page uses, always
    "heads": whole("heads", 1, MAX_HEADS),
    "causal": yes_no("causal"),
    "seed": whole("seed", *SEED_RANGE),
}


def check_link(
    params: Mapping[str, str],
    used: Mapping[str, object] | None = None,
    repeated: Mapping[str, int] | None = None,
    lesson_params: frozenset[str] = frozenset(),
) -> tuple[list[str], list[str]]:
    """Problems with a link's query parameters: (messages to show, unknown keys to drop).

    `used` holds what the page ended up using for each key (the widgets' values after the
    link was read), so a message says exactly that: Streamlit reads `T=3.5` as 3 and drops
    `T=70`, and the message says "using 3" or "using 6" accordingly. `repeated` counts keys the
    link gives more than once (Streamlit keeps the last). `lesson_params` are the lessons' own
    keys (frame.LESSON_PARAMS): their widgets check them."""
    used = {} if used is None else used
    repeated = repeated or {}
    messages, unknown = [], []
    for key, count in repeated.items():
        if count > 1:
            last = f"{shorten(key)}={shorten(params.get(key, ''))}"
            using = used.get(key, f"the last, {last}")
            messages.append(f"The link gives {shorten(key)} {count} times: using {using}.")
    for key, raw in params.items():
        if repeated.get(key, 1) > 1 or key in lesson_params:
            continue  # said above, or the lesson's widget says it
        if key in SIDEBAR_KEYS:
            message = SIDEBAR_KEYS[key](raw, used, params)
            if message:
                messages.append(message)
        else:
            unknown.append(key)
            messages.append(f"Unknown link parameter {shorten(key)} ignored.")
    return messages, unknown


def typed(text: str, like: object) -> object:
    """A link's text as the type of the widget's value `like` (bool, int, float or str)."""
    try:
        if isinstance(like, bool):
            return text.lower() == "true"
        if isinstance(like, int):
            return int(float(text))
        if isinstance(like, float):
            return float(text)
    except ValueError:
        return like
    return text


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
    uses instead (Streamlit drops a value its widget cannot take); None when it was used."""
    if raw is None or same_value(raw, used):
        return None
    shown = ", ".join(raw) if isinstance(raw, list) else raw
    using = used
    if isinstance(used, (list, tuple)):
        using = ", ".join(map(str, used)) or "none"
    return f"The link's {shorten(key)}={shorten(shown)} is not {valid}: using {shorten(using)}."
