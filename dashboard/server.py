"""The server's own tuning, apart from what a page shows: one page script at a time, the first
imports one thread at a time, glibc's malloc held to a class's size, messages sent without
waiting for an ACK, and the computation imported before the first student (`warm_start`, the
served app's start) or in the background. The entry file calls each once per run (most are
cached once per server; `warm_start` makes the first calls); docs/performance.md has the figures
behind each.
"""

from __future__ import annotations

import ast
import asyncio
import asyncio.base_events as base_events
import contextlib
import ctypes
import gc
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Mapping
from importlib import import_module

import streamlit as st
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from dashboard import state
from dashboard.frame import FRAMED, ROOT

log = logging.getLogger(__name__)
IMPORTING = threading.Lock()  # first imports of the computation: one thread at a time


def load_computation() -> None:
    """Import the computation (torch with it) and set the server's torch threads."""
    with IMPORTING:
        import_module("dashboard.lessons")
    state.one_torch_thread()


@state.cached(keep=True)  # read once per server: one entry per page of the app
def page_imports(path: str) -> tuple[str, ...]:
    """The modules of ours a page's file imports at its top (read, not run)."""
    found = []
    for node in ast.parse((ROOT / path).read_text()).body:
        ours = isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
        if ours and node.module.split(".")[0] in ("attention", "dashboard"):
            found.append(node.module)
            for alias in node.names:  # `from dashboard.views import masking`: a module
                sub = ROOT.joinpath(*node.module.split("."), alias.name)
                if sub.with_suffix(".py").exists() or (sub / "__init__.py").exists():
                    found.append(f"{node.module}.{alias.name}")
    return tuple(found)


ONE_PAGE_AT_A_TIME = threading.Semaphore(1)  # its waiters wake in the order they came


def run_page(page: st.Page) -> None:
    """Run the page's script, one student's at a time, in the order they asked. Python runs one
    thread at a time anyway (the GIL): sixty script threads sharing it each took as long as all
    of them together and paid for the switching, so a whole class waited seconds; in turn, each
    waits for those ahead and then runs at one student's speed. Measured (docs/performance.md,
    "One page at a time"): lesson 1, sixty students, p95 0.65-0.98 s in turn against 1.6-4.0 s
    sharing. A fragment's rerun (the tally, a retraining, a picked cell) runs beside it, since
    Streamlit runs it without this file."""
    with ONE_PAGE_AT_A_TIME:
        FRAMED.page = True  # the page's require_frame: it runs inside the frame
        try:
            page.run()
        finally:
            FRAMED.page = False


def import_page(path: str) -> None:
    """Import what the page imports before it runs, holding IMPORTING: a class arriving at once
    ran several pages' first imports in parallel script threads, and two of them deadlocked on
    Python's per-module import locks (one thread inside `attention.bugs`'s __init__ importing
    its catalogue, the other inside the catalogue importing the package). Once imported, this
    is a dictionary lookup per module."""
    names = page_imports(path)
    if all(name in sys.modules for name in names):
        return
    with IMPORTING:
        for name in names:
            import_module(name)


# glibc's mallopt parameters (malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8
MMAP_THRESHOLD = 128 * 1024  # glibc's starting value, kept fixed
TRIM_THRESHOLD = 1024 * 1024


@state.once  # at the server's start (warm_start), else on the first script run
def tune_malloc(arenas: int = 2) -> bool:
    """What MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=1048576 do,
    set from inside (Community Cloud starts the server, not us), for the threads and allocations
    from now on. False where the C library is not glibc.

    - At most `arenas` malloc arenas: each session's script thread may otherwise get one of its
      own, whose free memory is not given back (a class of 66 over every lesson peaked at
      615 MiB with glibc's default of 8 per core, 569 MiB with 2; docs/performance.md).
    - Blocks of 128 KiB and more (a T x T matrix, a table's buffers) are mapped and unmapped
      with the block. glibc raises that threshold each time such a block is freed, up to 32 MiB,
      after which they are carved from the arenas, which fragment and keep the freed memory: the
      class spread over twelve lessons peaked at 650 MiB, 573 MiB with the threshold fixed.
    - The top of an arena beyond 1 MiB free goes back to the system (glibc's default: 128 KiB,
      but it too rises with the threshold above)."""
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
        return all(
            mallopt(param, value) == 1
            for param, value in (
                (M_ARENA_MAX, arenas),
                (M_MMAP_THRESHOLD, MMAP_THRESHOLD),
                (M_TRIM_THRESHOLD, TRIM_THRESHOLD),
            )
        )
    except (OSError, AttributeError):
        return False


@state.once  # at the server's start (warm_start), else on the first script run
def disable_nagle() -> int:
    """TCP_NODELAY on the server's connections: each message leaves when it is written.

    Streamlit 1.67's server (uvicorn) binds its socket with protocol 0, and asyncio turns Nagle's
    algorithm off only on sockets whose protocol is IPPROTO_TCP: every connection kept it. A
    rerun's last messages (script_finished among them) then waited in the server for the
    client's delayed ACK, 40 ms on Linux: one student on lesson 1 saw 38 ms of every rerun
    pass with the script done, the server idle and the messages unsent (docs/performance.md).

    From now on asyncio sets it on every TCP connection it wraps (its helper, without the
    protocol test); then it is set on every TCP socket the process already holds: the
    connections open before this first run (a class that arrived together) and the listening
    one (Linux passes it on to connections whose handshake ends before they are accepted).
    Returns how many sockets were set. Where uvloop is installed (requirements.txt) Streamlit
    serves through it instead, which sets TCP_NODELAY on each connection itself; this then
    finds only the listening socket, and keeps asyncio's loop right where uvloop is missing."""
    base_events._set_nodelay = set_nodelay  # read at each new connection (selector_events.py)
    count = 0
    for item in gc.get_objects():
        if issubclass(type(item), socket.socket):  # not isinstance: no proxy answers __class__
            with contextlib.suppress(OSError):  # closed meanwhile, or not TCP after all
                count += set_nodelay(item)
    return count


def set_nodelay(sock: socket.socket) -> bool:
    """TCP_NODELAY on an open TCP socket, whatever protocol number it was made with; False for
    any other socket."""
    if (
        sock.family not in (socket.AF_INET, socket.AF_INET6)
        or sock.type != socket.SOCK_STREAM
        or sock.fileno() == -1
    ):
        return False
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return True


KEEP_MADE_S = 60.0  # seconds a file made for a download on click stays fetchable


@state.once  # on the first script run: the server's file manager exists by then
def keep_made_downloads() -> bool:
    """A download made on click (`st.download_button` given a function: every lesson's *Take it
    home*, *Save the class to a file*) stays fetchable for KEEP_MADE_S seconds.

    Streamlit 1.67 makes the file when the button is clicked and sends the browser its address,
    but no session holds it, and the file manager deletes unheld files at the end of the second
    script run that ends after it was made, in any session. In a class that is within tens of
    milliseconds (sixty followers' polls alone end thirty runs a second), so the browser's
    request for the file found none: the teacher's saved class came back as a 404 page named
    after the file's hash (a browser test did, under the suite's load). This keeps each made
    file out of the sweep for a minute, then lets it go. (A download given its data, the class
    report's CSVs, is held by its session while shown; a rerun that changes the data lets the
    old file go, a click in that moment still misses: not covered.) False where no Streamlit
    runtime exists (a bare script); under AppTest it keeps the files of AppTest's own manager."""
    from streamlit import runtime

    if not runtime.exists():
        return False
    keep_made_files(runtime.get_instance().media_file_mgr, KEEP_MADE_S)
    return True


def keep_made_files(manager, seconds: float, clock=time.monotonic) -> None:
    """`manager` (Streamlit's MediaFileManager) leaves each file its `execute_deferred` makes
    out of `_get_inactive_file_ids`, the set its sweep deletes from, for `seconds` after it was
    made (`clock`'s seconds). The file is noted as its storage stores it, under the manager's
    lock, so no sweep comes between the two. All three are looked up on the instances at each
    call."""
    made: dict[str, float] = {}  # file id: when it was made
    making = threading.local()  # this thread is inside execute_deferred
    execute, inactive = manager.execute_deferred, manager._get_inactive_file_ids
    store = manager._storage.load_and_get_id

    def execute_deferred(file_id: str) -> str:
        making.now = True
        try:
            return execute(file_id)
        finally:
            making.now = False

    def load_and_get_id(*args, **kwargs) -> str:  # called with manager._lock held
        file_id = store(*args, **kwargs)
        if getattr(making, "now", False):
            made[file_id] = clock()
        return file_id

    def get_inactive_file_ids() -> set[str]:  # called with manager._lock held
        now = clock()
        for file_id in [f for f, at in made.items() if now - at > seconds]:
            del made[file_id]
        return inactive() - made.keys()

    manager.execute_deferred = execute_deferred
    manager._storage.load_and_get_id = load_and_get_id
    manager._get_inactive_file_ids = get_inactive_file_ids


@state.once
def warm_up() -> threading.Thread:
    """Once per server: import the computation (and torch, ~1 s) in the background, so the
    home page draws without waiting for it and the first lesson finds it loaded."""
    thread = threading.Thread(target=load_computation, name="warm-up", daemon=True)
    thread.start()
    return thread


@contextlib.asynccontextmanager
async def warm_start(_app):
    """The served app's lifespan (streamlit_app.py's `app`), run once before the server answers
    its health check: malloc held to a class's size, every connection without Nagle's delay,
    the computation (torch) and every page's modules imported, the layer at the default settings
    computed, then the home page and every lesson drawn once at their defaults (`draw_once`). A
    class that opens the link on a server already started (a deployment, a restart, a worker of
    deploy/serve) no longer queues behind the first student's imports (lesson 1, sixty at once,
    p95 6.4-6.6 s before and 1.3-2.1 s after) nor behind the work the first student of a lesson
    did for everyone (sixty opening a lesson at once on a server just started, every lesson,
    two rounds: p95 0.76-2.77 s without the drawing, 0.32-1.84 s with; docs/performance.md,
    2026-11-29 afternoon). It costs the start 4-5 s of one core here, and 46-52 MiB. A server woken
    by a visit (Community Cloud) pays them before it answers instead. A page whose modules fail
    to import is logged here and shows its error when opened, as before; the server starts.
    Then the class watch runs on the server's loop while it serves (classroom/wake.py)."""
    from dashboard.frame import CLASS, GLOSSARY, HOME, LESSONS

    tune_malloc()
    disable_nagle()
    load_computation()
    for page in (HOME, *LESSONS, CLASS, GLOSSARY):
        try:
            import_page(page.path)
        except Exception:  # that page's own error, shown when it is opened
            log.exception("warm start: %s did not import", page.path)
    from dashboard import controls, lessons

    lessons.computed(controls.settings_of({}))  # the layer at the defaults, torch's first ops
    if draws_at_start():  # what every student of a page shares, made before the class comes
        began, drawn, failed = time.perf_counter(), 0, []
        for page in (HOME, *LESSONS):
            outcome = await draw_once("" if page is HOME else page.url_path)  # home: the root
            if outcome == "drawn":
                drawn += 1
                continue
            failed.append(page.url_path)
            if outcome == "unfinished":  # it holds the page turn: the rest wait for students
                break
        print(
            f"  Drew {drawn} of {len(LESSONS) + 1} pages in {time.perf_counter() - began:.1f} s "
            f"before the first student ({DRAW_AT_START}=0 skips this)"
            + (f"; not drawn: {', '.join(failed)} (see above)." if failed else "."),
            flush=True,
        )
    freeze_the_start()
    from dashboard.classroom import seat, wake

    # followers woken when their class changes; the news read from the app's own class store
    watching = asyncio.create_task(wake.watch(lambda codes: seat.store().news(codes)))
    try:
        yield
    finally:
        watching.cancel()


def freeze_the_start() -> None:
    """What the start made lives as long as the server (the modules, torch, every page's shared
    elements and caches): it is moved out of the garbage collector's sight (`gc.freeze`), so
    that a full collection, which a class's burst of first pages sets off, walks what the
    sessions made rather than the whole heap (issue 53: 0.1-0.75 s each, several in a burst of
    two hundred). Freed by reference counting as before; only a cycle among them is kept."""
    gc.collect()
    gc.freeze()
    print(f"  Set the start's {gc.get_freeze_count()} objects aside from the garbage collector "
          "(gc.freeze).", flush=True)  # fmt: skip


DRAW_AT_START = "ATTENTION_DRAW_AT_START"  # "0": the server starts without drawing its pages


def draws_at_start(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the server draws every lesson once before it answers (`warm_start`): yes,
    unless DRAW_AT_START is "0" (the test suite's servers, which test a page's first visit on
    a server just started and start dozens of servers: 5 s of one core each, here)."""
    return environ.get(DRAW_AT_START, "1") != "0"


# a page's whole run is over (not a fragment's, nor one cut short by a rerun)
WHOLE_RUN = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR)


class Unseen:
    """A session's client with no browser behind it: what the page sends is dropped, except
    that `finished` is set when a whole run of the page is over, and `failed` when the page
    showed an error (an exception, or no page of that name)."""

    def __init__(self) -> None:
        self.finished = asyncio.Event()
        self.failed = False

    def write_forward_msg(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "script_finished" and msg.script_finished in WHOLE_RUN:
            self.finished.set()
        elif kind == "page_not_found":
            self.failed = True
        elif kind == "delta" and msg.delta.new_element.WhichOneof("type") == "exception":
            self.failed = self.failed or not msg.delta.new_element.exception.is_warning

    @property
    def client_context(self):
        return None


async def draw_once(url_path: str, timeout: float = 30.0) -> str:
    """Open the page at its defaults in a session of the server's own, as a student's first
    visit does, then close it: what the page keeps for every session (its charts marshalled,
    its lesson's numbers, a trained model read) is then made before the class arrives, not by
    the first of sixty students while the rest queue behind (`warm_start` has the figures).
    "drawn"; "failed" if the page showed an error or could not be opened (Streamlit logs the
    error); "unfinished" if it did not finish within `timeout` (the heaviest page takes about a
    second here), when its run still holds the page turn (`run_page`). Logged; never raises:
    the server starts whatever a page does."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.runtime import Runtime

    runtime = Runtime.instance()
    client = Unseen()
    session_id = None
    try:
        session_id = runtime.connect_session(client=client, user_info={})
        ask = BackMsg()
        ask.rerun_script.query_string = ""
        ask.rerun_script.page_name = url_path
        runtime.handle_backmsg(session_id, ask)
        await asyncio.wait_for(client.finished.wait(), timeout)
    except TimeoutError:
        log.warning("warm start: %r did not finish in %g s", url_path or "home", timeout)
        return "unfinished"
    except Exception:
        log.exception("warm start: %r could not be drawn", url_path or "home")
        return "failed"
    finally:
        if session_id is not None:
            runtime.close_session(session_id)
    if client.failed:
        log.warning("warm start: %r showed an error when drawn", url_path or "home")
        return "failed"
    return "drawn"
