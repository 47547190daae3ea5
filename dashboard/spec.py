"""What a lesson declares about itself, once, in its views module (`LESSON = LessonSpec(...)`).

The navigation (frame.LESSONS), the course's objectives and recaps, the link parameters the
sidebar accepts, the questions a teacher can ask the class and presenter mode are all read
from these declarations; nothing lists the lessons by hand. Adding a lesson is a module in
`attention/`, a views module that declares its `LESSON`, and its page
(docs/architecture.md, "Adding a lesson"; tests/dashboard/test_spec.py checks every part).

A lesson's page calls `lesson_frame.title(__file__)`, `objectives`, `reset_button` and `finish`
with its own path, and each reads what they draw from here.

The frame reads a declaration from the module's source (`read_declaration`) instead of importing
the module, so the home page still draws before torch has loaded (tests/test_house.py): its
functions (`sections`, `class_questions`) are imported when first called.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attention.drills import Drill
    from dashboard.render.presenter import Section
    from dashboard.settings import Settings

SIDEBAR = ("src", "T", "d_model", "heads", "causal", "seed")  # the shared sidebar's controls


@dataclass(frozen=True)
class LessonPage:
    """One entry of the navigation: a page file, title and icon, the sidebar controls it reads."""

    path: str  # relative to the project root; the file name is the URL path
    title: str
    icon: str
    summary: str
    uses: tuple[str, ...] = SIDEBAR  # the sidebar controls this lesson reads; others are greyed

    @property
    def url_path(self) -> str:
        """The page's URL path and name, its file's stem ("masking")."""
        return Path(self.path).stem


@dataclass(frozen=True)
class LessonSpec(LessonPage):
    """A lesson: its place in the course, what it teaches, its own link parameters, its
    presenter sections and the questions a class can be asked at the sidebar's settings."""

    number: int = 0  # its place in the course, from 1
    heading: str = ""  # the page's title, where longer than the navigation's (title)
    minutes: int = 0  # a learner's time alone: `python -m benchmarks.reading_times` measures it
    objectives: tuple[str, ...] = ()  # two to four, each checked by a check-yourself question
    recap: str = ""  # one line, shown beside the link to the next lesson
    params: tuple[str, ...] = ()  # its own widgets' link keys (bind="query-params"), unique
    sections: Callable[[], Sequence[Section]] | None = None  # presenter mode, one per screen
    # its check-yourself questions at a class's settings (where they depend on more than the
    # sidebar, a page's own widgets or a trained model, at the page's starting values);
    # required (`missing`), None only so that the fields keep their order
    class_questions: Callable[[Settings], tuple[Drill, ...]] | None = None
    # questions only class mode asks (the bug hunt's mystery): (settings, questions asked so
    # far, the sidebar's link parameters) -> classroom.asking.ClassQuestions (a type from above
    # this module, so not named); ValueError: none at these settings
    class_extras: Callable[[Settings, int, dict[str, str]], tuple] | None = None

    def missing(self) -> list[str]:
        """The parts a lesson must declare that this one lacks."""
        needed = {
            "number": self.number >= 1,
            "objectives": 2 <= len(self.objectives) <= 4,
            "recap": bool(self.recap),
            "minutes": self.minutes >= 1,
            "sections": self.sections is not None,
            "class_questions": self.class_questions is not None,
            "summary": bool(self.summary),
            "icon": self.icon.startswith(":material/"),
        }
        return [name for name, present in needed.items() if not present]


@dataclass(frozen=True)
class Deferred:
    """A views module's function, imported when first called."""

    module: str  # dotted
    name: str

    def __call__(self, *args, **kwargs):
        return getattr(import_module(self.module), self.name)(*args, **kwargs)


FUNCTIONS = (
    "sections",
    "class_questions",
    "class_extras",
)  # the declaration's fields that name a function


def read_declaration(path: Path, module: str) -> LessonSpec | None:
    """The `LESSON = LessonSpec(...)` a views module's source declares (None if it declares
    none), without importing it: every field a literal, except FUNCTIONS, which name a
    function of the module. ValueError where a field is neither."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["LESSON"]
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "LessonSpec"
        ):
            continue
        fields = {}
        for keyword in node.value.keywords:
            if keyword.arg in FUNCTIONS and isinstance(keyword.value, ast.Name):
                fields[keyword.arg] = Deferred(module, keyword.value.id)
                continue
            try:
                fields[keyword.arg] = ast.literal_eval(keyword.value)
            except ValueError:
                raise ValueError(
                    f"{path.name}: LESSON's {keyword.arg} must be written as a literal"
                ) from None
        return LessonSpec(**fields)
    return None
