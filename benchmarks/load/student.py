"""One simulated student: a browser tab on one websocket, its page, its widgets, its cache.

Each simulated student is a websocket client that speaks what the browser speaks: it connects to
/_stcore/stream with the "streamlit" subprotocol, loads the lesson page (--page, default
step_by_step) with a `rerun_script` BackMsg, and reads ForwardMsgs until `script_finished`. From
the `new_element` deltas it learns the page's widgets (slider, select_slider, number_input,
checkbox/toggle, selectbox, radio) with their ids, ranges, options and current values. Then, every
--interval seconds (each student on its own random phase with +/-25 % jitter, or all at the same
instant with --sync), it moves one random control to a random other valid value and sends
`rerun_script` with the full WidgetStates, as the frontend does, and waits for that rerun to finish
before it may move again (a slot that comes round while it is still waiting is skipped and shown
as "skipped (busy)"). The moving window opens for everyone once every student has loaded the page.

Towards a balancer (--url) it behaves like a browser: it keeps the cookies of its websocket
handshake (HAProxy's SERVERID stickiness cookie) and sends them again when it reconnects, and it
notes which worker answered. With --reconnect a student whose socket closes (its worker died)
reconnects through the same URL and reloads its page with its widget states, as Streamlit's
frontend does.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Subprotocol

from benchmarks.load.protocol import OK_STATUSES, Status, Widget, widget_from_element
from benchmarks.load.report import LoadResult


def worker_of(headers: Any) -> str:
    """The worker that answered: HAProxy's X-Worker header, else the SERVERID cookie value."""
    worker = headers.get("X-Worker")
    if worker:
        return str(worker)
    for cookie in headers.get_all("Set-Cookie") if hasattr(headers, "get_all") else []:
        name, _, rest = cookie.partition("=")
        if name.strip() == "SERVERID":
            return rest.split(";")[0]
    return ""


@dataclass
class RunOutcome:
    status: int | None  # None: timed out or disconnected
    latency_ms: float
    payload: int
    widgets: dict[str, Widget]
    reconnected: bool = False
    messages: int = 0  # ForwardMsgs read, the script_finished included


class Student:
    """One browser tab: a websocket, a page, its widgets and a ForwardMsg cache."""

    def __init__(
        self,
        index: int,
        base: str,
        page: str,
        query: str,
        rng: random.Random,
        result: LoadResult,
        use_cache: bool = True,
        only: tuple[str, ...] = (),
        reconnect: bool = False,
        opened: tuple[str, ...] = (),
    ) -> None:
        self.index, self.base, self.page, self.query = index, base.rstrip("/"), page, query
        self.reconnect_on_close = reconnect
        self.cookies: dict[str, str] = {}  # what a browser would keep: the stickiness cookie
        self.worker = ""
        self.latencies_ms: list[float] = []  # this student's moves (reconnected ones apart)
        self.reconnections = 0
        self.only = only  # labels of the controls this student may move (empty: any)
        self.opened = opened  # labels of the closed sections it opens (and keeps open)
        self.rng, self.result, self.use_cache = rng, result, use_cache
        self.ws: ClientConnection | None = None
        self.inbox: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()
        self.reader: asyncio.Task[None] | None = None
        self.widgets: dict[str, Widget] = {}
        self.moved_fragment = ""  # the next rerun is this fragment's only (its control moved)
        self.page_hash = ""  # after the first run the frontend names the page by its hash
        self.cache: dict[str, tuple[bytes, int]] = {}  # hash -> (message, run count when used)
        self.run_count = 0
        self.max_cache_age = 2
        self.closed = False
        self.closed_seen = False  # the reader saw the socket close
        self.last_move = "the page load"

    async def open(self, timeout: float, kind: str = "connect") -> bool:
        parts = urlsplit(self.base)
        scheme = "wss" if parts.scheme == "https" else "ws"
        url = f"{scheme}://{parts.netloc}{parts.path}/_stcore/stream"
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        try:
            self.ws = await connect(
                url,
                subprotocols=[Subprotocol("streamlit")],
                max_size=None,
                open_timeout=timeout,
                ping_interval=None,
                additional_headers=headers if self.cookies else None,
            )
        except (OSError, InvalidHandshake, TimeoutError) as exc:
            self.result.error(kind, f"student {self.index}: {exc!r}")
            self.closed = True
            return False
        response = self.ws.response
        if response is not None:
            for cookie in response.headers.get_all("Set-Cookie"):
                name, _, rest = cookie.partition("=")
                self.cookies[name.strip()] = rest.split(";")[0]
            self.worker = worker_of(response.headers)
            if self.worker:
                self.result.workers[self.worker] += 1
        self.closed = self.closed_seen = False
        self.inbox = asyncio.Queue()
        self.reader = asyncio.create_task(self._read())
        return True

    async def reopen(self, timeout: float) -> bool:
        """The socket closed (its worker died): connect again through the same URL, retrying
        for up to timeout seconds as the frontend does, and forget the old ForwardMsg cache."""
        self.moved_fragment = ""  # a reload runs the whole page
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.reader
        self.cache.clear()
        deadline = time.perf_counter() + timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                self.result.error("reconnect", f"student {self.index}: no live worker")
                self.closed = True
                return False
            scratch = LoadResult(app="", page="", students=0, duration_s=0, interval_s=0,
                                 sync=False)  # fmt: skip
            real, self.result = self.result, scratch  # failed attempts are not errors
            try:
                ok = await self.open(min(remaining, 5.0))
            finally:
                self.result = real
            if ok:
                if self.worker:
                    self.result.workers[self.worker] += 1
                return True
            await asyncio.sleep(0.5)

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for raw in self.ws:
                data = raw if isinstance(raw, bytes) else raw.encode()
                self.inbox.put_nowait((time.perf_counter(), data))
        except ConnectionClosed:
            pass
        finally:
            self.inbox.put_nowait(None)

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 5)
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.reader
        self.closed = True

    def _rerun_msg(self, widgets: dict[str, Widget]) -> bytes:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        if self.page_hash:
            cs.page_script_hash = self.page_hash
        else:
            cs.page_name = self.page
        for widget in widgets.values():
            state = widget.state()
            if state is not None:
                cs.widget_states.widgets.append(state)
        if self.moved_fragment:  # as the frontend: a control in a fragment reruns the fragment
            cs.fragment_id = self.moved_fragment
        if self.use_cache:
            cs.cached_message_hashes.extend(self.cache)
        info = cs.context_info
        info.timezone, info.timezone_offset, info.locale = "UTC", 0, "en-US"
        info.url = f"{self.base}/{self.page}"
        info.is_embedded, info.color_scheme = False, "light"
        return msg.SerializeToString()

    def _drain_idle(self) -> None:
        """Messages that came between runs (status changes): read, not counted in a rerun."""
        while not self.inbox.empty():
            item = self.inbox.get_nowait()
            if item is None:
                self.closed_seen = True
                self.inbox.put_nowait(None)  # keep the end marker for the next reader
                return
            self._parse(item[1], {}, None)

    def _parse(
        self, data: bytes, widgets: dict[str, Widget], errors: list[tuple[str, str]] | None
    ) -> ForwardMsg:
        msg = ForwardMsg()
        msg.ParseFromString(data)
        if msg.WhichOneof("type") == "ref_hash":
            cached = self.cache.get(msg.ref_hash)
            if cached is None:
                if errors is not None:
                    errors.append(("cache_miss", msg.ref_hash))
                return msg
            self.cache[msg.ref_hash] = (cached[0], self.run_count)
            msg = ForwardMsg()
            msg.ParseFromString(cached[0])
        elif self.use_cache and msg.metadata.cacheable and msg.hash and msg.hash not in self.cache:
            self.cache[msg.hash] = (data, self.run_count)

        kind = msg.WhichOneof("type")
        if kind == "new_session":
            if msg.new_session.page_script_hash:
                self.page_hash = msg.new_session.page_script_hash
            age = msg.new_session.config.max_cached_message_age
            self.max_cache_age = age if age > 0 else self.max_cache_age
        elif kind == "navigation" and msg.navigation.page_script_hash:
            self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string  # the app rewrote the URL
        elif kind == "page_not_found" and errors is not None:
            name = msg.page_not_found.page_name or self.page
            errors.append(("page_not_found", f"no page {name!r}, the app showed its default"))
        elif kind == "session_event" and errors is not None:
            exc = msg.session_event.script_compilation_exception
            if msg.session_event.HasField("script_compilation_exception"):
                errors.append(("compile_error", f"{exc.type}: {exc.message}"))
        elif kind == "delta" and msg.delta.WhichOneof("type") == "add_block":
            block = msg.delta.add_block
            if block.WhichOneof("type") == "expandable" and block.expandable.label in self.opened:
                opened = Widget(block.expandable.id, "checkbox", block.expandable.label, True,
                                movable=False, default=False)  # fmt: skip
                widgets[opened.id] = opened  # open from the next run on, as a click leaves it
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            if element.WhichOneof("type") == "exception" and errors is not None:
                exc = element.exception
                first_line = exc.message.strip().split("\n")[0]
                errors.append(
                    ("warning_box" if exc.is_warning else "exception", f"{exc.type}: {first_line}")
                )
            else:
                widget = widget_from_element(element, self.widgets)
                if widget is not None:
                    if msg.delta.fragment_id:
                        widget = replace(widget, fragment=msg.delta.fragment_id)
                    widgets[widget.id] = widget
        return msg

    def _age_cache(self) -> None:
        self.run_count += 1
        for key, (_, used) in list(self.cache.items()):
            if self.run_count - used > self.max_cache_age:
                del self.cache[key]

    async def rerun(self, widgets: dict[str, Widget], timeout: float, kind: str) -> RunOutcome:
        """Send one rerun_script and read until its script_finished (or timeout).

        With reconnect on, a socket that closes before or during the run is opened again and
        the run sent again, as the frontend does; the outcome's latency then counts from the
        first send and `reconnected` is set.
        """
        start = time.perf_counter()
        outcome = await self._rerun_once(widgets, timeout, kind)
        if not (self.closed and self.reconnect_on_close):
            return outcome
        if not await self.reopen(timeout):
            return outcome
        outcome = await self._rerun_once(widgets, timeout, kind)
        if outcome.status is not None:
            outcome = RunOutcome(outcome.status, (time.perf_counter() - start) * 1000,
                                 outcome.payload, outcome.widgets, reconnected=True,
                                 messages=outcome.messages)  # fmt: skip
            self.result.reconnect_ms.append(outcome.latency_ms)
            self.reconnections += 1
        return outcome

    async def _rerun_once(
        self, widgets: dict[str, Widget], timeout: float, kind: str
    ) -> RunOutcome:
        assert self.ws is not None
        self._drain_idle()
        if self.closed_seen and self.reconnect_on_close:
            self.closed = True  # the socket died while idle: reconnect before this move
            return RunOutcome(None, 0.0, 0, {})
        self.widgets = dict(widgets)  # what the tab now shows: the moved control included
        start = time.perf_counter()
        try:
            await self.ws.send(self._rerun_msg(widgets))
        except ConnectionClosed as exc:
            if not self.reconnect_on_close:
                self.result.error("disconnect", f"student {self.index} on send: {exc!r}")
            self.closed = True
            return RunOutcome(None, 0.0, 0, {})
        return await self._read_run(widgets, start, timeout, kind)

    async def take_run(self, first: tuple[float, bytes], timeout: float, kind: str) -> RunOutcome:
        """A run the server started (a fragment rerun it was told to make, not asked for by this
        tab), its first message already read: read on to its script_finished, as `rerun` does;
        the latency counts from that first message."""
        return await self._read_run(dict(self.widgets), first[0], timeout, kind, first)

    async def _read_run(
        self, widgets: dict[str, Widget], start: float, timeout: float, kind: str,
        first: tuple[float, bytes] | None = None,
    ) -> RunOutcome:  # fmt: skip
        """Read a run's messages (`first`, then the inbox) until its script_finished (or
        `timeout`)."""
        pending = [] if first is None else [first]
        payload = messages = 0
        seen: dict[str, Widget] = {}
        errors: list[tuple[str, str]] = []
        deadline = start + timeout
        status: int | None = None
        finished_at = start
        while True:
            remaining = deadline - time.perf_counter()
            try:
                item = pending.pop() if pending else await asyncio.wait_for(
                    self.inbox.get(), max(remaining, 0.001))  # fmt: skip
            except TimeoutError:
                self.result.error(
                    kind, f"no script_finished in {timeout:g} s\n{self.where(widgets)}"
                )
                status = None
                break
            if item is None:
                if not self.reconnect_on_close:
                    self.result.error(
                        "disconnect", f"student {self.index}: server closed the socket"
                    )
                self.closed = True
                break
            finished_at, data = item
            payload += len(data)
            messages += 1
            msg = self._parse(data, seen, errors)
            if msg.WhichOneof("type") != "script_finished":
                continue
            status = msg.script_finished
            self.result.statuses[Status.Name(status)] += 1
            if status == Status.FINISHED_EARLY_FOR_RERUN:
                continue  # a newer run of ours is on its way: keep waiting for it
            self._age_cache()
            break
        if status is not None and status not in OK_STATUSES:
            errors.append(("compile_error", Status.Name(status)))
        where = self.where(widgets)
        for err_kind, message in dict.fromkeys(errors):  # once per rerun is enough
            self.result.error(err_kind, f"{message}\n{where}")
        fragment, self.moved_fragment = self.moved_fragment, ""
        if status in OK_STATUSES and not self.closed:
            # the frontend drops widgets the run did not show (a fragment's run: in the fragment)
            kept = {k: w for k, w in widgets.items() if fragment and w.fragment != fragment}
            self.widgets = kept | seen
        elif seen:
            self.widgets.update(seen)
        return RunOutcome(status, (finished_at - start) * 1000, payload, seen, messages=messages)

    async def wait_stale_run(self, timeout: float) -> bool:
        """After a timeout: let the late run finish before moving again. False: give up."""
        deadline = time.perf_counter() + timeout
        while not self.closed:
            try:
                item = await asyncio.wait_for(
                    self.inbox.get(), max(deadline - time.perf_counter(), 0.001)
                )
            except TimeoutError:
                return False
            if item is None:
                self.closed = True
                return False
            msg = self._parse(item[1], {}, None)
            if (
                msg.WhichOneof("type") == "script_finished"
                and msg.script_finished != Status.FINISHED_EARLY_FOR_RERUN
            ):
                self._age_cache()
                return True
        return False

    def where(self, widgets: dict[str, Widget]) -> str:
        """Enough context to reproduce a failure by hand."""
        state = "; ".join(w.describe() for w in widgets.values())
        query = f"?{self.query}" if self.query else "(none)"
        return f"student {self.index}, after {self.last_move}; query {query}; widgets: {state}"

    def move(self) -> dict[str, Widget] | None:
        """The widget states after moving one random control, or None if nothing can move.

        A control bound to a query parameter also rewrites the query string, as the frontend
        does: the parameter is dropped at the default value and set otherwise.
        """
        movable = [w for w in self.widgets.values() if w.movable]
        if self.only:
            movable = [w for w in movable if w.label in self.only]
        if not movable:
            return None
        target = self.rng.choice(movable)
        moved = Widget(**{**target.__dict__, "value": target.random_value(self.rng)})
        self.last_move = f"moving {moved.describe()}"
        self.moved_fragment = moved.fragment
        if moved.param_key:
            pairs = list(parse_qsl(self.query, keep_blank_values=True))
            pairs = [(k, v) for k, v in pairs if k != moved.param_key]
            pairs += [(moved.param_key, v) for v in moved.url_value() or []]
            self.query = urlencode(sorted(pairs, key=lambda kv: kv[0]))
        widgets = dict(self.widgets)
        widgets[moved.id] = moved
        return widgets
