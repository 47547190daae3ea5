"""One home per lesson (issue 25): every registry is read from the lessons' declarations
(dashboard/spec.py), and a lesson that lacks a part of its declaration stops the app at import
with the part named. A throwaway lesson declared in a temporary views package shows what adding
a lesson takes: a views module with its LESSON, and a page."""

import sys
import textwrap
from importlib import import_module
from pathlib import Path

import pytest

from dashboard import frame, spec
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
        assert lesson.missing() == [], "\n".join(lesson.missing())  # its title "N · ", …


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


# Each rule of a declaration broken in turn, and what the frame then says at import: the rule
# and how to meet it, the spec's own message (LessonSpec.missing)
BROKEN = [
    ('recap="it works.",', "", 'recap: declare recap="..."'),
    ("minutes=3,", "", "minutes: declare minutes=N, a learner's time alone (python -m "
     "benchmarks.reading_times measures it"),
    ("sections=sections,", "", "sections: declare sections=sections"),
    ("class_questions=class_questions,", "", "class_questions: declare "
     "class_questions=class_questions"),
    ('objectives=("say one thing", "say another"),', 'objectives=("say one thing",),',
     "objectives: 1 declared, a lesson needs 2 to 4"),
    ('objectives=("say one thing", "say another"),', "", "objectives: 0 declared"),
    ('title="1 · Throwaway",', 'title="Throwaway",', "title: 'Throwaway' must start with its "
     'number and a middle dot: title="1 · Throwaway"'),
    ("number=1,", "number=0,", "number: declare number=N"),
    ('summary="A lesson made in a test.",', 'summary="",', 'summary: declare summary="..."'),
    ('icon=":material/science:",', 'icon="science",', "icon: 'science' is not a Material "
     'Symbol: declare icon=":material/<name>:"'),
    ('params=("throwaway_step",),', 'params=("throwaway_step", "throwaway_step"),',
     "params: throwaway_step declared twice"),
    ('params=("throwaway_step",),', 'params=("seed",),', "params: seed is a sidebar control's "
     "link key: give the lesson's control a key of its own"),
    ('params=("throwaway_step",),', 'params=("throwaway_step",), uses=("sed",),',
     "uses: sed is not a sidebar control"),
]  # fmt: skip


@pytest.mark.parametrize("change, into, says", BROKEN)
def test_a_lesson_breaking_a_rule_is_refused_with_how_to_meet_it(on_path, change, into, says):
    assert change in DECLARATION
    write_package(on_path, "throwaway_broken", DECLARATION.replace(change, into))
    with pytest.raises(ValueError) as refused:
        declared_lessons("throwaway_broken", on_path)
    assert "views/throwaway.py: its LESSON breaks" in str(refused.value)
    assert says in str(refused.value)


def test_a_lesson_without_a_field_every_page_has_is_refused_by_name(on_path):
    declaration = DECLARATION.replace('summary="A lesson made in a test.",', "")
    write_package(on_path, "throwaway_bare", declaration.replace('icon=":material/science:",', ""))
    with pytest.raises(ValueError, match=r"throwaway\.py: LESSON must declare icon, summary"):
        declared_lessons("throwaway_bare", on_path)


THROWAWAY = LessonSpec(
    path="pages/throwaway.py",
    title="1 · Throwaway",
    icon=":material/science:",
    summary="A lesson made in a test.",
    number=1,
    minutes=8,
    objectives=("say one thing", "say another"),
    recap="it works.",
    params=("throwaway_step",),
    sections=tuple,  # declared: the page's rules never call them
    class_questions=tuple,
)
MET = {  # a page that meets every rule the spec checks on a drawn page
    "words": 600,  # 4 minutes, and 2 questions 4 more: 8
    "questions": 2,
    "section_keys": ("one", "two", "three"),
    "answers": ("0.4123", "1234"),
    "above_check": ("q · k = 0.41 here", "12345 and 2,345 are other numbers"),
    "controls": {"throwaway_step", "check_throwaway_1_7"},
    "bound": {"throwaway_step", "seed"},  # seed: the sidebar's, drawn on the page
    "defaults": {"throwaway_step"},
}
# Each rule of a drawn page broken in turn, and the spec's message (LessonSpec.unmet_on_page)
UNMET = [
    ({"words": 150}, "words: the page shows 150 words at its default settings (closed "
     "expanders left out), a lesson needs over 200"),
    ({"words": 1200}, "minutes: 8 declared, its words read in 12 (1200 words, 2 questions): "
     "set minutes=12 (python -m benchmarks.reading_times)"),
    ({"questions": 1}, "questions: the page asks 1 Check yourself questions, a lesson asks 2 "
     "to 5"),
    ({"questions": 6}, "questions: the page asks 6"),
    ({"section_keys": ("one", "two")}, "sections: 2 presenter sections, a lesson has 3 to 11"),
    ({"section_keys": tuple("abcdefghijkl")}, "sections: 12 presenter sections"),
    ({"section_keys": ("one", "two", "one")}, "sections: the keys ['one', 'two', 'one'] must "
     "be named and differ: give each Section a key="),
    ({"section_keys": ("one", "", "three")}, "sections: the keys"),
    ({"above_check": ("the score is 0.4123",)}, "answers: question 1's answer, 0.4123, is "
     "printed above Check yourself ('the score is 0.4123'): ask about a number the page does "
     "not print"),
    ({"above_check": ("it has 1,234 parameters",)}, "answers: question 2's answer, 1234"),
    ({"bound": {"throwaway_step", "throwaway_size"}}, "params: the page binds throwaway_size "
     'to the URL (bind="query-params") but does not declare it: add it to params=(...)'),
    ({"controls": {"check_throwaway_1_7"}}, "params: the page draws none of throwaway_step"),
    ({"bound": set()}, 'params: throwaway_step is not in the URL: give its widget '
     'bind="query-params"'),
    ({"defaults": set()}, "params: throwaway_step declares no default for Reset: give its "
     "widget the value layout.remember_default(key, value)"),
]  # fmt: skip


def test_a_page_meeting_every_rule_is_told_nothing():
    assert THROWAWAY.missing() == []
    assert THROWAWAY.unmet_on_page(**MET) == []
    assert THROWAWAY.unmet_on_page() == []  # nothing read, nothing checked


@pytest.mark.parametrize("broken, says", UNMET)
def test_a_page_breaking_a_rule_is_told_how_to_meet_it(broken, says):
    unmet = THROWAWAY.unmet_on_page(**(MET | broken))
    assert says in unmet[0], unmet  # first (fewer words, or questions, change the minutes too)


def test_the_reading_time_is_the_one_the_benchmark_prints():
    from benchmarks import reading_times

    assert reading_times.reading_minutes is spec.reading_minutes
    assert spec.reading_minutes(600, 2) == 8
    assert spec.reading_minutes(0, 0) == 1


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
