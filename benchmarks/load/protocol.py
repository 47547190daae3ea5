"""Streamlit's side of the wire: the widgets a page shows and the WidgetStates a browser sends.

Protocol details it copies from the 1.67 frontend: the first rerun names the page by `page_name`
(its url path), later ones by the `page_script_hash` the server reported (new_session /
navigation); widget values go in the proto fields the server registers (slider:
double_array_value; select_slider: string_array_value of the formatted options; number_input:
int_value or double_value by its data type; checkbox/toggle: bool_value; selectbox/radio:
string_value of the formatted option); a control bound to a query parameter rewrites the query
string sent with the next rerun, and `page_info_changed` replaces it; it keeps a ForwardMsg cache
and sends its hashes (`cached_message_hashes`), so large unchanged elements come back as small
`ref_hash` messages (--no-cache turns that off). The client is the `websockets` package, which
Streamlit 1.67 itself depends on (its server is Starlette/uvicorn; tornado is gone).

Here: the widgets learnt from `new_element` deltas, and the run statuses that count as a
success. A student (`benchmarks.load.student`) builds the BackMsgs and reads the ForwardMsgs.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState

Status = ForwardMsg.ScriptFinishedStatus
OK_STATUSES = {Status.FINISHED_SUCCESSFULLY, Status.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}


def _js_str(v: Any) -> str:
    """String(v) as JavaScript writes it: 8 not 8.0, true not True."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


@dataclass
class Widget:
    """One control of the page, its range and its current value in wire form.

    `value` is what goes into the WidgetState: list[float] (slider, double_array_value),
    list[str] (select_slider, string_array_value: the formatted options), int or float
    (number_input: int_value for INT inputs, double_value for FLOAT ones, as the frontend does),
    bool (checkbox/toggle, bool_value), str (selectbox/radio, string_value: the formatted option)
    or None (no value yet: no state is sent, the server uses the default).
    """

    id: str
    kind: str
    label: str
    value: Any
    movable: bool
    lo: float = 0.0
    hi: float = 0.0
    step: float = 1.0
    is_int: bool = False
    options: list[str] = field(default_factory=list)
    default: Any = None
    param_key: str = ""  # bound to this query parameter (`bind="query-params"`)
    fragment: str = ""  # drawn inside this `st.fragment`: moving it reruns the fragment only

    def state(self) -> WidgetState | None:
        if self.value is None:
            return None
        ws = WidgetState(id=self.id)
        if self.kind == "slider":
            ws.double_array_value.data.extend(self.value)
        elif self.kind == "select_slider":
            ws.string_array_value.data.extend(self.value)
        elif self.kind == "number_input":
            if self.is_int:
                ws.int_value = int(self.value)
            else:
                ws.double_value = float(self.value)
        elif self.kind == "checkbox":
            ws.bool_value = bool(self.value)
        else:  # selectbox, radio
            ws.string_value = str(self.value)
        return ws

    def url_value(self) -> list[str] | None:
        """What the frontend writes into the URL for this value; None: drop the parameter."""
        if self.value is None or self.value == self.default:
            return None
        values = self.value if isinstance(self.value, list) else [self.value]
        return [_js_str(v) for v in values]

    def describe(self) -> str:
        value = self.value
        if isinstance(value, list):
            value = ", ".join(_js_str(v) for v in value)
        elif value is not None:
            value = _js_str(value)
        return f"{self.label}={value}"

    def _grid_point(self, rng: random.Random, lo: float, hi: float) -> float:
        steps = max(0, math.floor((hi - lo) / self.step + 1e-9)) if self.step > 0 else 0
        v = lo + rng.randint(0, steps) * self.step
        return float(round(v)) if self.is_int else round(v, 10)

    def random_value(self, rng: random.Random) -> Any:
        """A random valid value, different from the current one when there is another."""
        for _ in range(20):
            new = self._draw(rng)
            if new != self.value:
                return new
        return new

    def _draw(self, rng: random.Random) -> Any:
        if self.kind == "slider":
            picks = sorted(self._grid_point(rng, self.lo, self.hi) for _ in self.value)
            return picks
        if self.kind == "select_slider":
            idx = sorted(rng.randrange(len(self.options)) for _ in self.value)
            return [self.options[i] for i in idx]
        if self.kind == "number_input":
            v = self._grid_point(rng, self.lo, self.hi)
            return int(v) if self.is_int else v
        if self.kind == "checkbox":
            return not self.value
        return rng.choice(self.options)


def _numeric_bounds(
    has_min: bool, lo: float, has_max: bool, hi: float, centre: float, step: float
) -> tuple[float, float]:
    """A number_input without min/max: move within ten steps either side of its value."""
    if not has_min:
        lo = centre - 10 * step
    if not has_max:
        hi = centre + 10 * step
    return lo, hi


def widget_from_element(element: Element, known: dict[str, Widget]) -> Widget | None:
    """The Widget for a new_element delta, or None when it is not a control we drive.

    The value is the server's when it set one (`set_value`), else the one this student already
    had for the same id, else the default: what the frontend would show.
    """
    kind = element.WhichOneof("type")
    if kind not in {"slider", "number_input", "checkbox", "selectbox", "radio"}:
        return None
    proto = getattr(element, kind)
    extra: dict[str, Any] = {}
    server_value: Any = None

    if kind == "slider" and proto.type == Slider.Type.SELECT_SLIDER:
        kind, options = "select_slider", list(proto.options)
        if not options:
            return None
        default: Any = [options[int(i)] for i in proto.default]
        if proto.set_value:
            server_value = list(proto.raw_value)
        extra = {"options": options}
    elif kind == "slider":
        default = [float(v) for v in proto.default]
        if proto.set_value:
            server_value = [float(v) for v in proto.value]
        extra = {
            "lo": proto.min, "hi": proto.max, "step": proto.step or 1.0,
            "is_int": proto.data_type != Slider.DataType.FLOAT,
        }  # fmt: skip
    elif kind == "number_input":
        is_int = proto.data_type == NumberInput.DataType.INT
        step = proto.step or (1.0 if is_int else 0.01)
        default = proto.default if proto.HasField("default") else None
        if proto.set_value and proto.HasField("value"):
            server_value = proto.value
        centre = next((v for v in (server_value, default) if v is not None), 0.0)
        lo, hi = _numeric_bounds(proto.has_min, proto.min, proto.has_max, proto.max, centre, step)
        extra = {"lo": lo, "hi": hi, "step": step, "is_int": is_int}
    elif kind == "checkbox":
        default = proto.default
        if proto.set_value:
            server_value = proto.value
    else:  # selectbox / radio: the state is the formatted option string
        options = list(proto.options)
        if not options:
            return None
        default = options[proto.default] if proto.HasField("default") else None
        if proto.set_value and proto.HasField("raw_value"):
            server_value = proto.raw_value
        extra = {"options": options}

    prev = known.get(proto.id)
    if server_value is not None:
        value = server_value
    elif prev is not None and prev.kind == kind:
        value = prev.value
    else:
        value = default
    if kind == "number_input" and extra["is_int"]:
        value = None if value is None else int(value)
        default = None if default is None else int(default)
    movable = not proto.disabled and not proto.form_id and not proto.ignore_rerun
    return Widget(
        proto.id, kind, proto.label, value, movable, default=default,
        param_key=proto.query_param_key, **extra,
    )  # fmt: skip
