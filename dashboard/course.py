"""The course: a plan for three 50-minute lectures over the lessons (each lesson's objectives
and recap are in its own declaration, dashboard/spec.py). Plain data, read by the home page;
tests/dashboard/test_course.py checks every page, section and link named here: each section a
presenter-mode section of its lesson, opened by its key, at the step's settings and at others."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

# A learner alone: each lesson declares its minutes (LessonSpec.minutes), measured from its words
# and questions by `python -m benchmarks.reading_times` (tests/dashboard/test_reading_times.py)
READING_RULE = (
    "Times: each lesson's words outside its Going further at 150 a minute, plus 2 minutes a "
    "Check yourself question; moving the controls and reading the tables adds to them."
)


@dataclass(frozen=True)
class Step:
    """One step of a lecture: a lesson opened by a link, the sections to show, a question."""

    page: str
    params: tuple[tuple[str, str], ...]  # the link's query parameters, in order
    minutes: int
    # presenter-mode sections, shown in this order: each by its key (Section.key, which stays
    # when its title follows the settings) and the words this plan shows for it
    sections: tuple[tuple[str, str], ...]
    ask: str  # what to put to the class


@dataclass(frozen=True)
class Lecture:
    title: str
    have_open: str
    steps: tuple[Step, ...]


COURSE = (
    Lecture(
        "Lecture 1 · The mechanism",
        "the projector on lesson 1, a second tab on lesson 2, pencil and paper for the class",
        (
            Step(
                "pages/step_by_step.py",
                (("T", "4"), ("heads", "1"), ("seed", "3")),
                20,
                (
                    ("scores", "Raw scores"),
                    ("scaled", "Scaled scores"),
                    ("weights", "Attention weights"),
                ),
                "Before the weights appear: which key will query 3 attend to most, and why?",
            ),
            Step(
                "pages/multi_head.py",
                (("T", "4"), ("d_model", "8"), ("heads", "2")),
                15,
                (
                    ("split", "Splitting C columns into H heads"),
                    ("concat", "Concatenated heads"),
                    ("output", "Output"),
                ),
                "With C = 8 and H = 4, which columns does head 2 own?",
            ),
            Step(
                "pages/masking.py",
                (("src", "sentence"), ("text", "the cat sat on the mat"), ("T", "6")),
                15,
                (
                    ("conventions", "One mask, three conventions"),
                    ("masked", "Masked scores"),
                    ("weights", "Attention weights"),
                ),
                "Which keys may 'sat' attend to under the causal mask?",
            ),
        ),
    ),
    Lecture(
        "Lecture 2 · Why it is built this way, and how it breaks",
        "lesson 4 on the projector; lessons 5 and 7 in tabs; the class on their own laptops "
        "for the drills",
        (
            Step(
                "pages/why_sqrt_dk.py",
                (("seed", "0"),),
                10,
                (
                    ("variance_formula", "Var(q · k) = d_k"),
                    ("variance", "Dot products grow with d_k"),
                    ("saturation", "Large scores saturate the softmax"),
                ),
                "If d_k quadruples, what happens to the spread of the scores?",
            ),
            Step(
                "pages/worked_example.py",
                (("causal", "true"),),
                15,
                (("x", "Input X"), ("weights", "Attention weights")),
                "Switch the mask off: which weights change, and which stay?",
            ),
            Step(
                "pages/bug_hunt.py",
                (("mode", "explore"), ("bug", "no_scaling")),
                15,
                (
                    ("softmax_over_queries", "Softmax over the wrong axis"),
                    ("still_train", "Bugs that still train"),
                ),
                "This layer trains: how would you find out it is wrong?",
            ),
            Step(
                "pages/drills.py",
                (("T", "4"), ("seed", "5")),
                10,
                (("drill_2", "Drill 2"), ("drill_3", "Drill 3")),
                "Everyone: drills 2 and 3, then compare answers with a neighbour.",
            ),
        ),
    ),
    Lecture(
        "Lecture 3 · Beyond one layer",
        "lesson 6 on the projector (the induction task), lessons 9, 10, 11 and 12 in tabs",
        (
            Step(
                "pages/what_heads_learn.py",
                (("learn", "induction"),),
                10,
                (("gallery", "Head gallery"), ("knockout", "Knock out heads")),
                "Which head would you knock out to break copying? Predict, then try it.",
            ),
            Step(
                "pages/position.py",
                (("T", "6"), ("causal", "false")),
                10,
                (
                    ("shuffle", "Shuffle the tokens"),
                    ("sinusoidal", "Sinusoidal positions, added to X"),
                ),
                "Shuffle the tokens: which outputs change?",
            ),
            Step(
                "pages/kv_cache.py",
                (("T", "8"), ("d_model", "16"), ("heads", "4")),
                10,
                (
                    ("first_step", "The first decode step"),
                    ("last_step", "The last decode step"),
                    ("grouped", "Grouped-query attention"),
                ),
                "Before step 7 appears: what does the cache hold, and what does step 7 compute?",
            ),
            Step(
                "pages/at_scale.py",
                (("T", "8"),),
                10,
                (("cost", "The cost of T², measured"), ("tiles", "FlashAttention, tile by tile")),
                "Double T: how much more memory does plain attention need, and FlashAttention?",
            ),
            Step(
                "pages/real_model.py",
                (("rm_text", "To be, or not to be: that is the question."),),
                10,
                (("roles", "What each head does"), ("twice", "Type it twice")),
                "Before it appears: which head will find the first copy of a line written twice?",
            ),
        ),
    ),
)


def link(step: Step) -> str:
    """The step's address, as a student types it: /page?key=value&..."""
    name = step.page.removeprefix("pages/").removesuffix(".py")
    return f"/{name}?{urlencode(step.params)}" if step.params else f"/{name}"


def presenter_params(step: Step, section: str) -> dict[str, str]:
    """The query parameters that open the step's lesson in presenter mode at the section with
    key `section`."""
    return {**dict(step.params), "present": "1", "section": section}
