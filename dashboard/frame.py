"""The frame every page sits in: the lesson list, and the guard that keeps deep links working.

Streamlit 1.67 runs a deep link's first request (and every AppTest `switch_page`) as a legacy
`pages/` page *without* the entry file when a `pages/` folder exists. `require_frame()`, the first
line of every page, notices that and runs the entry file instead, which draws the sidebar and
navigation and then runs the page properly; so a deep link, a sidebar click and an AppTest run
execute the same code.
"""

from __future__ import annotations

import ctypes
import runpy
import threading
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from dashboard import state

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ROOT / "streamlit_app.py"
ICON = Path(__file__).resolve().parent / "assets" / "icon.png"  # a causal attention pattern


SIDEBAR = ("src", "T", "d_model", "heads", "causal", "seed")  # the shared sidebar's controls


@dataclass(frozen=True)
class LessonPage:
    """One entry of the navigation: a page file, title and icon, the sidebar controls it reads."""

    path: str  # relative to the project root; the file name is the URL path
    title: str
    icon: str
    summary: str
    uses: tuple[str, ...] = SIDEBAR  # the sidebar controls this lesson reads; others are greyed


HOME = LessonPage("pages/home.py", "Home", ":material/home:", "What the dashboard teaches.")
LESSONS = (
    LessonPage(
        "pages/step_by_step.py",
        "1 · Step by step",
        ":material/footprint:",
        "X → Q, K, V → scores → scaled → masked → softmax → output, with one cell by hand.",
    ),
    LessonPage(
        "pages/multi_head.py",
        "2 · Multi-head",
        ":material/view_column:",
        "How C columns split into H heads, the concat, W_o, and the fused projection.",
    ),
    LessonPage(
        "pages/masking.py",
        "3 · Masking",
        ":material/block:",
        "Causal and padding masks, -inf vs -1e9, and the three mask conventions.",
    ),
    LessonPage(
        "pages/why_sqrt_dk.py",
        "4 · Why √d_k",
        ":material/functions:",
        "Dot-product variance grows with d_k; scaling keeps the softmax from saturating.",
        uses=("seed",),
    ),
    LessonPage(
        "pages/worked_example.py",
        "5 · Worked example",
        ":material/calculate:",
        "The classic 3-token example, every number on screen; check yourself.",
        uses=("causal",),
    ),
    LessonPage(
        "pages/what_heads_learn.py",
        "6 · What heads learn",
        ":material/school:",
        "Tiny transformers trained on synthetic tasks: heads forming, probed and knocked out.",
        uses=(),
    ),
    LessonPage(
        "pages/bug_hunt.py",
        "7 · Bug hunt",
        ":material/bug_report:",
        "The classic from-scratch mistakes, shown breaking and training; diagnose a mystery bug.",
    ),
    LessonPage(
        "pages/drills.py",
        "8 · Drills",
        ":material/edit_note:",
        "Exercises made from the live numbers: scores, weights, outputs, shapes, masks.",
    ),
    LessonPage(
        "pages/position.py",
        "9 · Position",
        ":material/swap_horiz:",
        "Attention is blind to order: shuffle the tokens; sinusoidal positions and RoPE.",
    ),
    LessonPage(
        "pages/kv_cache.py",
        "10 · KV cache",
        ":material/fast_forward:",
        "Generation one token at a time; grouped-query, multi-query and sliding-window caches.",
        uses=("src", "T", "d_model", "heads", "seed"),
    ),
    LessonPage(
        "pages/at_scale.py",
        "11 · Attention at scale",
        ":material/speed:",
        "The cost of T², measured; FlashAttention's tiles with the online softmax.",
    ),
)

CLASS = LessonPage(  # class mode: the teacher's projector and the students' laptops
    "pages/class.py",
    "Class",
    ":material/groups:",
    "Teach a class: students join with a code, follow your screen and answer your questions.",
)


def navigation() -> st.navigation:
    """The app's pages, in lesson order, then the class."""
    pages = [st.Page(str(ROOT / HOME.path), title=HOME.title, icon=HOME.icon, default=True)]
    pages += [st.Page(str(ROOT / p.path), title=p.title, icon=p.icon) for p in (*LESSONS, CLASS)]
    return st.navigation(pages)


def sidebar_uses(page: st.Page) -> tuple[str, ...]:
    """The sidebar controls the page being shown reads (all of them for an unknown page)."""
    by_title = {lesson.title: lesson.uses for lesson in (HOME, *LESSONS, CLASS)}
    return by_title.get(page.title, SIDEBAR)


def require_frame() -> None:
    """First line of every page: run through the entry file if Streamlit skipped it."""
    if PagesManager.uses_pages_directory:  # True only until st.navigation has been called
        runpy.run_path(str(ENTRY), run_name="__main__")
        st.stop()  # the entry file ran this page already, inside the frame


def load_computation() -> None:
    """Import the computation (torch with it) and set the server's torch threads."""
    import_module("dashboard.lessons")
    state.one_torch_thread()


M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)


@state.cached(keep=True)  # once per server, on the first script run (the entry file's first line)
def limit_malloc_arenas(arenas: int = 2) -> bool:
    """At most `arenas` glibc malloc arenas for the threads started from now on. Each session's
    script thread may otherwise get an arena of its own, and their free memory is not given
    back: a class of 66 spread over every lesson peaked at 615 MiB with glibc's default (8 per
    core) and 569 MiB with 2, at the same speed (docs/performance.md, 2026-11-25). What
    MALLOC_ARENA_MAX=2 does, set from inside: Community Cloud starts the server, not us. False
    where the C library is not glibc."""
    try:
        return ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, arenas) == 1
    except (OSError, AttributeError):
        return False


@state.cached(keep=True)
def warm_up() -> threading.Thread:
    """Once per server: import the computation (and torch, ~1 s) in the background, so the
    home page draws without waiting for it and the first lesson finds it loaded."""
    thread = threading.Thread(target=load_computation, name="warm-up", daemon=True)
    thread.start()
    return thread
