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

Every rule a lesson must meet is written here, once, with a message that says how to meet it:
`LessonSpec.missing()` the declaration's own (checked when the frame reads it, so a broken
declaration stops the app at import), `LessonSpec.unmet_on_page(...)` those that need the drawn
page (its words, questions, presenter sections, printed answers and controls), which the tests
that draw it call: a newcomer learns the rules from these messages, whichever test is red.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import MISSING, dataclass, fields
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from dashboard.settings import DEFAULTS

if TYPE_CHECKING:
    from attention.drills import Drill
    from dashboard.render.presenter import Section
    from dashboard.settings import Settings

SIDEBAR = ("src", "T", "d_model", "heads", "causal", "seed")  # the shared sidebar's controls

# The rules' numbers (each message below names them)
OBJECTIVES = (2, 4)  # objectives a lesson declares, at least and at most
QUESTIONS = (2, 5)  # Check yourself questions its page asks
SECTIONS = (3, 11)  # presenter sections: one per projector screen
WORDS = 200  # a page says more than this at its default settings
WORDS_PER_MINUTE = 150  # technical prose, read with the numbers beside it
MINUTES_PER_QUESTION = 2  # a Check yourself question worked on paper
MINUTES_SLACK = 1  # the minutes declared may be off the words' by this much
MEASURE = "python -m benchmarks.reading_times"  # measures every lesson's words and minutes


def reading_minutes(words: int, questions: int) -> int:
    """A lesson's time for a learner alone: its core words at WORDS_PER_MINUTE, plus
    MINUTES_PER_QUESTION for each Check yourself question; at least 1."""
    return max(1, round(words / WORDS_PER_MINUTE + MINUTES_PER_QUESTION * questions))


def leaks(answer: str, text: str) -> bool:
    """Whether `text` prints a question's answer: a number answer's 4-decimal text (but 0.0000
    and 1.0000, which every weights table holds), or a whole number of three digits or more on
    its own (smaller whole numbers, like a head count, are everywhere on a page and tell
    nothing), also written with thousands' commas."""
    if re.fullmatch(r"-?\d+\.\d{4}", answer):
        return answer not in ("0.0000", "1.0000") and answer in text
    if re.fullmatch(r"\d{3,}", answer):
        return re.search(rf"(?<![\d.,]){answer}(?![\d.,])|{int(answer):,}", text) is not None
    return False


def quoted(text: str, answer: str, room: int = 30) -> str:
    """The words around `answer` in `text`, for a message."""
    at = max(text.find(answer), text.find(f"{int(answer):,}") if answer.isdigit() else -1, 0)
    start, end = max(at - room, 0), at + len(answer) + room
    return (
        ("…" if start else "")
        + " ".join(text[start:end].split())
        + ("…" if end < len(text) else "")
    )


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
        """The rules of a declaration this one breaks, each as a message that names the part
        and says how to meet the rule (empty: none). The frame checks every lesson's as it
        reads them, and stops the app at import with these messages."""
        return [*self.unmet_names(), *self.unmet_teaching(), *self.unmet_links()]

    def unmet_names(self) -> list[str]:
        """missing(): its number, title, summary and icon."""
        unmet = []
        if self.number < 1:
            unmet.append(
                "number: declare number=N, its place in the course (a new lesson after the "
                "last takes the next number)"
            )
        elif not self.title.startswith(f"{self.number} · "):
            name = self.title.split(" · ")[-1]
            unmet.append(
                f"title: {self.title!r} must start with its number and a middle dot: "
                f'title="{self.number} · {name}"'
            )
        if not self.summary:
            unmet.append('summary: declare summary="...", one sentence for the home page\'s list')
        if not self.icon.startswith(":material/"):
            unmet.append(
                f"icon: {self.icon!r} is not a Material Symbol: declare "
                'icon=":material/<name>:" (fonts.google.com/icons)'
            )
        return unmet

    def unmet_teaching(self) -> list[str]:
        """missing(): its objectives, recap, minutes, presenter sections and questions."""
        unmet = []
        low, high = OBJECTIVES
        if not low <= len(self.objectives) <= high:
            unmet.append(
                f"objectives: {len(self.objectives)} declared, a lesson needs {low} to {high}: "
                "what a learner will be able to do, each checked by one of its Check yourself "
                "questions"
            )
        if not self.recap:
            unmet.append(
                'recap: declare recap="...", one line the page shows as "What you learned", '
                "beside the link to the next lesson"
            )
        if self.minutes < 1:
            unmet.append(
                f"minutes: declare minutes=N, a learner's time alone ({MEASURE} measures it "
                "from the page's words and questions)"
            )
        if self.sections is None:
            unmet.append(
                "sections: declare sections=sections, the lesson module's function that "
                f"returns its presenter Sections ({SECTIONS[0]} to {SECTIONS[1]}, each with a "
                "key)"
            )
        if self.class_questions is None:
            unmet.append(
                "class_questions: declare class_questions=class_questions, the lesson module's "
                "function from the sidebar's Settings to its Check yourself questions"
            )
        return unmet

    def unmet_links(self) -> list[str]:
        """missing(): the sidebar controls it reads and its own link keys."""
        unmet = []
        if unknown := [name for name in self.uses if name not in SIDEBAR]:
            unmet.append(
                f"uses: {', '.join(unknown)} is not a sidebar control: name some of "
                f"{', '.join(SIDEBAR)}"
            )
        if twice := sorted({key for key in self.params if self.params.count(key) > 1}):
            unmet.append(f"params: {', '.join(twice)} declared twice: a link holds each key once")
        if taken := [key for key in self.params if key in DEFAULTS]:
            unmet.append(
                f"params: {', '.join(taken)} is a sidebar control's link key: give the "
                "lesson's control a key of its own (as lesson 12's rm_head)"
            )
        return unmet

    def unmet_on_page(
        self,
        *,
        words: int | None = None,
        questions: int | None = None,
        section_keys: Sequence[str] | None = None,
        answers: Sequence[str] = (),
        above_check: Sequence[str] = (),
        controls: Iterable[str] | None = None,
        bound: Iterable[str] = (),
        defaults: Iterable[str] = (),
    ) -> list[str]:
        """The rules this lesson's page breaks, from what a test read off the drawn page, each
        as a message that says how to meet it (empty: none); what is left out is not checked.
        `words`: the core path's words at the default settings (closed expanders left out) and
        `questions` its Check yourself questions, as benchmarks.reading_times counts them;
        `section_keys`: presenter mode's sections' keys, in order; `answers`: the questions'
        answers, `above_check`: every text printed above Check yourself; `controls`: the keys of
        the widgets the page drew, `bound`: the link keys of those bound to the URL,
        `defaults`: the keys whose widget declared its default (layout.remember_default)."""
        unmet = []
        if questions is not None:
            unmet += self.unmet_questions(questions)
        if words is not None:
            unmet += self.unmet_words(words, questions)
        if section_keys is not None:
            unmet += self.unmet_sections(section_keys)
        unmet += self.unmet_answers(answers, above_check)
        if controls is not None:
            unmet += self.unmet_controls(set(controls), set(bound), set(defaults))
        return unmet

    def unmet_questions(self, questions: int) -> list[str]:
        """Check yourself asks QUESTIONS[0] to QUESTIONS[1] questions."""
        low, high = QUESTIONS
        if low <= questions <= high:
            return []
        return [
            f"questions: the page asks {questions} Check yourself questions, a lesson asks "
            f"{low} to {high}: make them in its maths' question makers and pass them to "
            "lesson_frame.finish(__file__, lambda: view.lesson_questions(...))"
        ]

    def unmet_words(self, words: int, questions: int | None) -> list[str]:
        """Over WORDS words; the minutes declared are the words' (and questions')."""
        unmet = []
        if words <= WORDS:
            unmet.append(
                f"words: the page shows {words} words at its default settings (closed "
                f"expanders left out), a lesson needs over {WORDS}: say on the page what its "
                "charts and tables show"
            )
        measured = None if questions is None else reading_minutes(words, questions)
        if measured is not None and abs(self.minutes - measured) > MINUTES_SLACK:
            unmet.append(
                f"minutes: {self.minutes} declared, its words read in {measured} ({words} "
                f"words, {questions} questions): set minutes={measured} ({MEASURE})"
            )
        return unmet

    def unmet_sections(self, keys: Sequence[str]) -> list[str]:
        """SECTIONS[0] to SECTIONS[1] presenter sections, each keyed, no key twice."""
        unmet, (low, high) = [], SECTIONS
        if not low <= len(keys) <= high:
            unmet.append(
                f"sections: {len(keys)} presenter sections, a lesson has {low} to {high}, one "
                "a projector screen: return that many Sections from sections(), each a block "
                "of the page called with screen=(width, height)"
            )
        if not all(keys) or len(set(keys)) < len(keys):
            unmet.append(
                f"sections: the keys {list(keys)} must be named and differ: give each Section "
                "a key=, unique in its lesson, that stays when its title follows the settings "
                "(the course plan opens a section by it)"
            )
        return unmet

    def unmet_answers(self, answers: Sequence[str], above_check: Sequence[str]) -> list[str]:
        """No answer printed above Check yourself (`leaks`)."""
        unmet = []
        for number, answer in enumerate(answers, start=1):
            if where := next((text for text in above_check if leaks(answer, text)), None):
                unmet.append(
                    f"answers: question {number}'s answer, {answer}, is printed above Check "
                    f"yourself ({quoted(where, answer)!r}): ask about a number the page does not "
                    "print, or print that one with fewer decimals"
                )
        return unmet

    def unmet_controls(self, controls: set[str], bound: set[str], defaults: set[str]) -> list[str]:
        """The page's own controls: drawn, each declared, bound to the URL, with its default."""
        unmet, declared = [], set(self.params)
        if undeclared := sorted(bound - declared - set(DEFAULTS)):
            unmet.append(
                f"params: the page binds {', '.join(undeclared)} to the URL "
                '(bind="query-params") but does not declare it: add it to params=(...), so '
                "that a link to it is taken and Reset this lesson resets it"
            )
        if declared and not controls & declared:
            unmet.append(
                f"params: the page draws none of {', '.join(self.params)} at its default "
                'settings: draw each as a widget with that key and bind="query-params"'
            )
        if unbound := sorted(controls & declared - bound):
            unmet.append(
                f"params: {', '.join(unbound)} is not in the URL: give its widget "
                'bind="query-params", so that a link reopens it'
            )
        if no_default := sorted(controls & declared - defaults):
            unmet.append(
                f"params: {', '.join(no_default)} declares no default for Reset: give its "
                "widget the value layout.remember_default(key, value)"
            )
        return unmet


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


REQUIRED = tuple(
    field.name
    for field in fields(LessonSpec)
    if field.default is MISSING and field.default_factory is MISSING
)  # path, title, icon, summary: every page's


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
        declared = {}
        for keyword in node.value.keywords:
            if keyword.arg in FUNCTIONS and isinstance(keyword.value, ast.Name):
                declared[keyword.arg] = Deferred(module, keyword.value.id)
                continue
            try:
                declared[keyword.arg] = ast.literal_eval(keyword.value)
            except ValueError:
                raise ValueError(
                    f"{path.name}: LESSON's {keyword.arg} must be written as a literal"
                ) from None
        if absent := [name for name in REQUIRED if name not in declared]:
            raise ValueError(
                f"{path.name}: LESSON must declare {', '.join(absent)} (every page has them: "
                "see LessonPage in dashboard/spec.py)"
            )
        return LessonSpec(**declared)
    return None
