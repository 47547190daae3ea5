"""One home per lesson (issue 25): every registry is read from the lessons' declarations
(dashboard/spec.py), and a lesson that lacks a part of its declaration stops the app at import
with the part named. A throwaway lesson declared in a temporary views package shows what adding
a lesson takes: a views module with its LESSON, and a page."""

import sys
import textwrap
from importlib import import_module
from pathlib import Path

import pytest

from dashboard import frame
from dashboard.classroom import asking
from dashboard.frame import LESSON_PARAMS, LESSONS, declared_lessons
from dashboard.spec import LessonSpec

ROOT = Path(__file__).resolve().parents[2]


def test_every_lesson_page_is_declared_once_and_in_order():
    on_disk = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")}
    declared = [lesson.path for lesson in LESSONS]
    assert sorted(declared) == sorted(
        on_disk - {frame.HOME.path, frame.CLASS.path, frame.GLOSSARY.path}
    )
    assert [lesson.number for lesson in LESSONS] == list(range(1, len(LESSONS) + 1))
    for lesson in LESSONS:
        assert isinstance(lesson, LessonSpec)
        assert lesson.missing() == [], lesson.path
        assert lesson.title.startswith(f"{lesson.number} · "), lesson.title


def test_the_registries_are_derived_from_the_declarations():
    assert frozenset(key for lesson in LESSONS for key in lesson.params) == LESSON_PARAMS
    assert [lesson.path for lesson in asking.ASKABLE] == [lesson.path for lesson in LESSONS]
    assert not (ROOT / "dashboard" / "sections.py").exists()  # the presenter's twin copies


def write_package(tmp_path: Path, name: str, declaration: str) -> None:
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "throwaway.py").write_text(textwrap.dedent(declaration))
    (tmp_path / "pages").mkdir(exist_ok=True)
    (tmp_path / "pages" / "throwaway.py").write_text("import streamlit as st\nst.write('hi')\n")


DECLARATION = """
    from dashboard.render.presenter import Section
    from dashboard.spec import LessonSpec


    def sections():
        return [Section("One screen", lambda: None, "Ask something.", key="one")]


    def class_questions(settings):
        return ()


    LESSON = LessonSpec(
        number=1,
        path="pages/throwaway.py",
        title="1 · Throwaway",
        icon=":material/science:",
        summary="A lesson made in a test.",
        objectives=("say one thing", "say another"),
        recap="it works.",
        minutes=3,
        params=("throwaway_step",),
        sections=sections,
        class_questions=class_questions,
    )
"""


@pytest.fixture
def on_path(tmp_path):
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("throwaway_")]:
        del sys.modules[name]


def test_a_throwaway_lesson_is_picked_up_from_its_declaration(on_path):
    write_package(on_path, "throwaway_views", DECLARATION)
    (lesson,) = declared_lessons("throwaway_views", on_path)
    assert lesson.title == "1 · Throwaway"
    assert lesson.params == ("throwaway_step",)
    assert [s.title for s in lesson.sections()] == ["One screen"]


@pytest.mark.parametrize(
    "change, named",
    [
        ('recap="it works.",', "recap"),
        ("minutes=3,", "minutes"),
        ("sections=sections,", "sections"),
        ("class_questions=class_questions,", "class_questions"),
        ('objectives=("say one thing", "say another"),', "objectives"),
    ],
)
def test_a_lesson_missing_a_part_is_refused_by_name(on_path, change, named):
    write_package(on_path, "throwaway_broken", DECLARATION.replace(change, ""))
    with pytest.raises(ValueError, match=named):
        declared_lessons("throwaway_broken", on_path)


def test_a_lesson_without_its_page_is_refused(on_path):
    write_package(on_path, "throwaway_pageless", DECLARATION)
    (on_path / "pages" / "throwaway.py").unlink()
    with pytest.raises(ValueError, match=r"its page must be pages/throwaway\.py"):
        declared_lessons("throwaway_pageless", on_path)


def test_the_frame_reads_each_declaration_as_the_module_makes_it():
    """The frame reads LESSON from the source (no torch before the home page draws); importing
    the module gives the same declaration, its functions the ones the frame defers to."""
    for read in LESSONS:
        module = import_module(f"dashboard.views.{read.url_path}")
        made = module.LESSON
        for field in ("number", "path", "title", "icon", "summary", "uses", "objectives",
                      "recap", "params"):  # fmt: skip
            assert getattr(read, field) == getattr(made, field), (read.path, field)
        for field in ("sections", "class_questions"):
            deferred, function = getattr(read, field), getattr(made, field)
            assert (deferred is None) == (function is None)
            if function is not None:
                assert getattr(module, deferred.name) is function


def test_a_per_lesson_cache_keys_on_the_lessons_own_key():
    """state.per_lesson: one computation per lesson key and arguments; the lesson itself (its
    tensors) is never hashed, and another lesson with the same key reads the same entry."""
    from dataclasses import dataclass

    from dashboard import state

    calls = []

    @dataclass(frozen=True, eq=False)
    class Fake:
        key: tuple

    @state.per_lesson
    def double(lesson, n: int) -> int:
        calls.append((lesson.key, n))
        return 2 * n

    try:
        assert double(Fake(("a",)), 2) == double(Fake(("a",)), 2) == 4
        assert double(Fake(("b",)), 2) == 4
        assert double(Fake(("a",)), 3) == 6
        assert calls == [(("a",), 2), (("b",), 2), (("a",), 3)]
    finally:
        double.clear()
