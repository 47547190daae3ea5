"""The frame every page sits in: the lesson list, and the guard that keeps deep links working.

Streamlit 1.67 runs a deep link's first request (and every AppTest `switch_page`) as a legacy
`pages/` page *without* the entry file when a `pages/` folder exists. `require_frame()`, the first
line of every page, notices that and runs the entry file instead, which draws the sidebar and
navigation and then runs the page properly; so a deep link, a sidebar click and an AppTest run
execute the same code. Whether a page runs inside the frame is this run's own fact (`FRAMED`,
set by `server.run_page` in the script's thread), not Streamlit's process-wide flag: a class
arriving at once had a student's deep link start as a legacy page while another student's run
turned that flag off, and the page then ran without its sidebar.
"""

from __future__ import annotations

import copy
import pkgutil
import runpy
import threading
from importlib.util import find_spec
from pathlib import Path

import streamlit as st

from dashboard.settings import DEFAULTS
from dashboard.spec import SIDEBAR, LessonPage, LessonSpec, read_declaration

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ROOT / "streamlit_app.py"
FRAMED = threading.local()  # .page is True while the entry file runs a page (server.run_page)
ICON = Path(__file__).resolve().parent / "assets" / "icon.png"  # a causal attention pattern


HOME = LessonPage("pages/home.py", "Home", ":material/home:", "What the dashboard teaches.")


def declared_lessons(package: str = "dashboard.views", root: Path = ROOT) -> tuple[LessonSpec, ...]:
    """Every LESSON the modules of `package` declare, in course order, read from their source
    (neither the package nor a lesson is imported: the frame sits below the lessons);
    ValueError naming a lesson whose declaration is incomplete, out of order or not beside a
    page of its name."""
    found = []
    (folder,) = find_spec(package).submodule_search_locations
    for module in pkgutil.iter_modules([folder]):
        source = Path(folder) / f"{module.name}.py"
        lesson = read_declaration(source, f"{package}.{module.name}")
        if lesson is None:
            continue
        if lesson.path != f"pages/{module.name}.py" or not (root / lesson.path).exists():
            raise ValueError(f"views/{module.name}.py declares {lesson.path}: its page must be "
                             f"pages/{module.name}.py")  # fmt: skip
        if unmet := lesson.missing():
            raise ValueError(
                f"views/{module.name}.py: its LESSON breaks the rules of a declaration "
                "(dashboard/spec.py):\n" + "\n".join(f"- {message}" for message in unmet)
            )
        found.append(lesson)
    found.sort(key=lambda lesson: lesson.number)
    numbers = [lesson.number for lesson in found]
    if numbers != list(range(1, len(found) + 1)):
        raise ValueError(
            f"lesson numbers must run 1 .. {len(found)}, each once: {numbers}; a new lesson "
            "takes the number after the last"
        )
    for key in {key for lesson in found for key in lesson.params}:
        if len(owners := [lesson.path for lesson in found if key in lesson.params]) > 1:
            raise ValueError(
                f"{' and '.join(owners)} both declare the link parameter {key} (a URL has one "
                "of each): give one of them another key"
            )
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
    a teacher to, and the last lessons). Each run gets its own copies of pages made once:
    st.navigation marks the page it returns as the one to run, so no two runs share one."""
    return st.navigation([copy.copy(page) for page in pages()], expanded=True)


_PAGES: list[st.Page] = []  # made by the first run (st.Page resolves each file), then kept


def pages() -> list[st.Page]:
    """The navigation's pages, made once for the server (17 files resolved and checked were
    a millisecond of every run)."""
    if not _PAGES:
        made = [st.Page(str(ROOT / HOME.path), title=HOME.title, icon=HOME.icon, default=True)]
        made += [
            st.Page(str(ROOT / p.path), title=p.title, icon=p.icon)
            for p in (*LESSONS, CLASS, GLOSSARY)
        ]
        _PAGES[:] = made  # one assignment: a run at the same moment sees all or none
    return _PAGES


def sidebar_uses(page: st.Page) -> tuple[str, ...]:
    """The sidebar controls the page being shown reads (all of them for an unknown page)."""
    by_title = {lesson.title: lesson.uses for lesson in (HOME, *LESSONS, CLASS, GLOSSARY)}
    return by_title.get(page.title, SIDEBAR)


def require_frame() -> None:
    """First line of every page: run through the entry file if Streamlit skipped it."""
    if not getattr(FRAMED, "page", False):  # this thread is not inside the entry's run_page
        runpy.run_path(str(ENTRY), run_name="__main__")
        st.stop()  # the entry file ran this page already, inside the frame


def page_file(page: st.Page) -> str:
    """The file of the page being shown ("" is home, the default page)."""
    return next(
        (p.path for p in (HOME, *LESSONS, CLASS, GLOSSARY) if p.url_path == page.url_path),
        HOME.path,
    )
