"""The frame every page sits in: the lesson list, and the guard that keeps deep links working.

Streamlit 1.67 runs a deep link's first request (and every AppTest `switch_page`) as a legacy
`pages/` page *without* the entry file when a `pages/` folder exists. `require_frame()`, the first
line of every page, notices that and runs the entry file instead, which draws the sidebar and
navigation and then runs the page properly; so a deep link, a sidebar click and an AppTest run
execute the same code.
"""

from __future__ import annotations

import runpy
import threading
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "streamlit_app.py"
ICON = Path(__file__).resolve().parent / "assets" / "icon.png"  # a causal attention pattern


SIDEBAR = ("src", "T", "d_model", "heads", "causal", "seed")  # the shared sidebar's controls


@dataclass(frozen=True)
class Lesson:
    path: str  # relative to the project root; the file name is the URL path
    title: str
    icon: str
    summary: str
    uses: tuple[str, ...] = SIDEBAR  # the sidebar controls this lesson reads; others are greyed


HOME = Lesson("pages/home.py", "Home", ":material/home:", "What the dashboard teaches.")
LESSONS = (
    Lesson(
        "pages/step_by_step.py",
        "1 · Step by step",
        ":material/footprint:",
        "X → Q, K, V → scores → scaled → masked → softmax → output, with one cell by hand.",
    ),
    Lesson(
        "pages/multi_head.py",
        "2 · Multi-head",
        ":material/view_column:",
        "How C columns split into H heads, the concat, W_o, and the fused projection.",
    ),
    Lesson(
        "pages/masking.py",
        "3 · Masking",
        ":material/block:",
        "Causal and padding masks, -inf vs -1e9, and the three mask conventions.",
    ),
    Lesson(
        "pages/why_sqrt_dk.py",
        "4 · Why √d_k",
        ":material/functions:",
        "Dot-product variance grows with d_k; scaling keeps the softmax from saturating.",
        uses=("seed",),
    ),
    Lesson(
        "pages/worked_example.py",
        "5 · Worked example",
        ":material/calculate:",
        "The classic 3-token example, every number on screen; check yourself.",
        uses=("causal",),
    ),
    Lesson(
        "pages/what_heads_learn.py",
        "6 · What heads learn",
        ":material/school:",
        "Tiny transformers trained on synthetic tasks: heads forming, probed and knocked out.",
        uses=(),
    ),
    Lesson(
        "pages/bug_hunt.py",
        "7 · Bug hunt",
        ":material/bug_report:",
        "The classic from-scratch mistakes, shown breaking and training; diagnose a mystery bug.",
    ),
    Lesson(
        "pages/drills.py",
        "8 · Drills",
        ":material/edit_note:",
        "Exercises made from the live numbers: scores, weights, outputs, shapes, masks.",
    ),
    Lesson(
        "pages/position.py",
        "9 · Position",
        ":material/swap_horiz:",
        "Attention is blind to order: shuffle the tokens; sinusoidal positions and RoPE.",
    ),
    Lesson(
        "pages/kv_cache.py",
        "10 · KV cache",
        ":material/fast_forward:",
        "Generation one token at a time; grouped-query, multi-query and sliding-window caches.",
        uses=("src", "T", "d_model", "heads", "seed"),
    ),
    Lesson(
        "pages/at_scale.py",
        "11 · Attention at scale",
        ":material/speed:",
        "The cost of T², measured; FlashAttention's tiles with the online softmax.",
    ),
)


def navigation() -> st.navigation:
    """The app's pages, in lesson order."""
    pages = [st.Page(str(ROOT / HOME.path), title=HOME.title, icon=HOME.icon, default=True)]
    pages += [st.Page(str(ROOT / p.path), title=p.title, icon=p.icon) for p in LESSONS]
    return st.navigation(pages)


def sidebar_uses(page: st.Page) -> tuple[str, ...]:
    """The sidebar controls the page being shown reads (all of them for an unknown page)."""
    by_title = {lesson.title: lesson.uses for lesson in (HOME, *LESSONS)}
    return by_title.get(page.title, SIDEBAR)


def require_frame() -> None:
    """First line of every page: run through the entry file if Streamlit skipped it."""
    if PagesManager.uses_pages_directory:  # True only until st.navigation has been called
        runpy.run_path(str(ENTRY), run_name="__main__")
        st.stop()  # the entry file ran this page already, inside the frame


@st.cache_resource(show_spinner=False)
def warm_up() -> threading.Thread:
    """Once per server: import the computation (and torch, ~1 s) in the background, so the
    home page draws without waiting for it and the first lesson finds it loaded."""
    thread = threading.Thread(
        target=import_module, args=("attention.display.lessons",), name="warm-up", daemon=True
    )
    thread.start()
    return thread


PRESENT_KEY = "present"  # ?present=1: presenter mode, for a projector
PRESENT_STATE = "presenter_mode"  # where the session keeps it


def presenter_mode() -> bool:
    """Read ?present=1 (or true/on/yes; 0/false/off turn it off) into the session, and take it
    out of the query string for this run: the sidebar's link check lists every key it does not
    own as unknown. keep_presenter_link puts it back."""
    raw = st.query_params.get(PRESENT_KEY)
    if raw is not None:
        value = raw.strip().lower()
        st.session_state[PRESENT_STATE] = value in PRESENT_ON
        st.session_state[PRESENT_REFUSED] = value not in PRESENT_ON + PRESENT_OFF
        del st.query_params[PRESENT_KEY]
    return bool(st.session_state.get(PRESENT_STATE, False))


PRESENT_ON, PRESENT_OFF = ("1", "true", "on", "yes"), ("0", "false", "off", "no")
PRESENT_REFUSED = "presenter_refused"  # the link's value was neither: say so once


def keep_presenter_link(present: bool) -> None:
    """Keep ?present=1 in the address bar, so the teacher's link reopens presenter mode; say
    so when the link's value meant nothing (the value itself is not echoed)."""
    if present:
        st.query_params[PRESENT_KEY] = "1"
    if st.session_state.pop(PRESENT_REFUSED, False):
        st.sidebar.warning(
            "The link's present= value must be 1 (presenter mode on) or 0 (off): it is off.",
            icon=":material/link_off:",
        )
