"""The frame every page sits in: the lesson list, and the guard that keeps deep links working.

Streamlit 1.67 runs a deep link's first request (and every AppTest `switch_page`) as a legacy
`pages/` page *without* the entry file when a `pages/` folder exists. `require_frame()`, the first
line of every page, notices that and runs the entry file instead, which draws the sidebar and
navigation and then runs the page properly; so a deep link, a sidebar click and an AppTest run
execute the same code.
"""

from __future__ import annotations

import ast
import asyncio.base_events as base_events
import contextlib
import ctypes
import gc
import pkgutil
import runpy
import socket
import sys
import threading
from importlib import import_module
from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from dashboard import state, views
from dashboard.settings import DEFAULTS
from dashboard.spec import SIDEBAR, LessonPage, LessonSpec, read_declaration

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ROOT / "streamlit_app.py"
ICON = Path(__file__).resolve().parent / "assets" / "icon.png"  # a causal attention pattern


HOME = LessonPage("pages/home.py", "Home", ":material/home:", "What the dashboard teaches.")


def declared_lessons(package=views, root: Path = ROOT) -> tuple[LessonSpec, ...]:
    """Every LESSON its views modules declare, in course order; ValueError naming a lesson
    whose declaration is incomplete, out of order or not beside a page of its name."""
    found = []
    for module in pkgutil.iter_modules(package.__path__):
        source = Path(package.__path__[0]) / f"{module.name}.py"
        lesson = read_declaration(source, f"{package.__name__}.{module.name}")
        if lesson is None:
            continue
        if lesson.path != f"pages/{module.name}.py" or not (root / lesson.path).exists():
            raise ValueError(f"views/{module.name}.py declares {lesson.path}: its page must be "
                             f"pages/{module.name}.py")  # fmt: skip
        if lesson.missing():
            raise ValueError(f"{lesson.path} does not declare its {', '.join(lesson.missing())}")
        found.append(lesson)
    found.sort(key=lambda lesson: lesson.number)
    if [lesson.number for lesson in found] != list(range(1, len(found) + 1)):
        raise ValueError(
            f"lesson numbers must run 1 .. {len(found)}: {[lesson.number for lesson in found]}"
        )
    params = [key for lesson in found for key in lesson.params]
    if len(params) != len(set(params)):
        raise ValueError("two lessons declare the same link parameter (a URL has one of each)")
    return tuple(found)


LESSONS = declared_lessons()
LESSON_PARAMS = frozenset(key for lesson in LESSONS for key in lesson.params)
LINK_KEYS = LESSON_PARAMS | frozenset(DEFAULTS)  # the link parameters bound to widgets

CLASS = LessonPage(  # class mode: the teacher's projector and the students' laptops
    "pages/class.py",
    "Class",
    ":material/groups:",
    "Teach a class: students join with a code, follow your screen and answer your questions.",
)


GLOSSARY = LessonPage(  # the terms a lesson uses before the lesson that teaches them
    "pages/glossary.py",
    "Glossary",
    ":material/menu_book:",
    "Every term a lesson uses before the lesson that teaches it.",
    uses=(),
)


def navigation() -> st.navigation:
    """The app's pages, in lesson order, then the class; every entry listed (Streamlit folds a
    menu of more than twelve behind "View 3 more", which hid Class, the entry the docs point
    a teacher to, and the last lessons)."""
    pages = [st.Page(str(ROOT / HOME.path), title=HOME.title, icon=HOME.icon, default=True)]
    pages += [
        st.Page(str(ROOT / p.path), title=p.title, icon=p.icon) for p in (*LESSONS, CLASS, GLOSSARY)
    ]
    return st.navigation(pages, expanded=True)


def sidebar_uses(page: st.Page) -> tuple[str, ...]:
    """The sidebar controls the page being shown reads (all of them for an unknown page)."""
    by_title = {lesson.title: lesson.uses for lesson in (HOME, *LESSONS, CLASS, GLOSSARY)}
    return by_title.get(page.title, SIDEBAR)


def require_frame() -> None:
    """First line of every page: run through the entry file if Streamlit skipped it."""
    if PagesManager.uses_pages_directory:  # True only until st.navigation has been called
        runpy.run_path(str(ENTRY), run_name="__main__")
        st.stop()  # the entry file ran this page already, inside the frame


IMPORTING = threading.Lock()  # first imports of the computation: one thread at a time


def load_computation() -> None:
    """Import the computation (torch with it) and set the server's torch threads."""
    with IMPORTING:
        import_module("dashboard.lessons")
    state.one_torch_thread()


@state.cached(keep=True)  # read once per server
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


def page_path(page: st.Page) -> str:
    """The file of the page being shown ("" is home, the default page)."""
    return next(
        (p.path for p in (HOME, *LESSONS, CLASS, GLOSSARY) if Path(p.path).stem == page.url_path),
        HOME.path,
    )


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
        page.run()


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


@state.cached(keep=True)  # once per server, on the first script run (the entry file's first line)
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


@state.cached(keep=True)  # once per server, on the first script run, beside tune_malloc
def send_at_once() -> int:
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
    Returns how many sockets were set."""
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


@state.cached(keep=True)
def warm_up() -> threading.Thread:
    """Once per server: import the computation (and torch, ~1 s) in the background, so the
    home page draws without waiting for it and the first lesson finds it loaded."""
    thread = threading.Thread(target=load_computation, name="warm-up", daemon=True)
    thread.start()
    return thread
