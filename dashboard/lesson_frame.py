"""What every lesson page has around its own blocks: its title, what you will learn and Reset
(top), check yourself, the recap and the next lesson (bottom), each read from the lesson's
declaration (its `LessonSpec`); the home page's progress and course plan (dashboard/course.py).
A page's questions are its own (its maths in attention/), graded by attention.drills.grade, as
lesson 8's drills are."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from attention.drills import Drill, grade, rule
from dashboard import lessons, progress
from dashboard.course import COURSE, link, presenter_params
from dashboard.frame import HOME, LESSONS
from dashboard.render import layout
from dashboard.render.exercise import show_given, show_verdict
from dashboard.spec import LessonSpec


def listed_path(page: str) -> str:
    """A page's path as LESSONS names it, from its file (`__file__`) or that path."""
    return f"pages/{Path(page).name}"


def declared(page: str) -> LessonSpec:
    """The lesson a page belongs to, as its views module declares it."""
    path = listed_path(page)
    return next(lesson for lesson in LESSONS if lesson.path == path)


def title(page: str) -> None:
    """The lesson's title, as it declares it (its heading, where longer than its title)."""
    lesson = declared(page)
    st.title(lesson.heading or lesson.title)


def objectives(page: str) -> None:
    """What you will learn: the lesson's objectives, right under its title."""
    lines = "\n".join(f"- {objective}" for objective in declared(page).objectives)
    st.markdown(f"**What you will learn**: you will be able to\n{lines}")
    layout.narrow_screen_note()


def reset_button(page: str, container=None) -> None:
    """Reset this lesson: the controls the lesson declares (its LessonSpec's params) back to
    the defaults their widgets declare (layout.remember_default)."""
    layout.reset_button(declared(page).params, container)


# A lesson's last two sections, Take it home and Check yourself, are closed until opened, and
# what is in them is made only then: drawn for every student, they were a sixth of lesson 1's
# first page and lesson 13's questions nearly a third of its own (docs/performance.md, 2026-11-29,
# morning). A section stays open while the learner stays on the page (Streamlit names an
# expander after its page too: another lesson's opens closed).
TAKE_HOME = "open_take_home"
CHECK = "open_check"
SECTIONS = (TAKE_HOME, CHECK)  # session: True while that section is open


def take_home():
    """*Take it home*: the lesson's downloads, drawn once the learner opens it (see SECTIONS).
    `with lesson_frame.take_home() as home:` then `if home.open:` and the buttons."""
    return layout.closed_section("Take it home", TAKE_HOME, ":material/download:")


def check_yourself(page: str, questions: Callable[[], tuple[Drill, ...]]) -> None:
    """The lesson's questions on its live numbers, each with an answer box, graded with the
    full working once answered; made (`questions()`) and drawn once the learner opens Check
    yourself (see SECTIONS): lesson 13's questions run its model, a third of its first page."""
    with layout.closed_section("Check yourself", CHECK, ":material/quiz:") as shown:
        if shown.open:
            check_questions(page, questions())


def check_questions(page: str, questions: tuple[Drill, ...]) -> None:
    """Check yourself's contents: the rule for answers, the questions, what this browser kept."""
    # the percentage rule only where a question takes one (one that asks for a weight)
    st.caption(rule(percent=any(question.takes_percent for question in questions)))
    kept = st.empty()  # above the questions, written once their answers are graded
    ask(Path(page).stem, questions)
    right, count = progress.lesson_state(Path(page).stem)  # this visit's right answers too
    if right:
        kept.caption(
            f"Kept in this browser: {right} of {count} answered right, today's answers "
            "included (the home page's course plan shows every lesson's)."
        )


def ask(name: str, questions: tuple[Drill, ...], label: str = "Your answer") -> None:
    """Questions, each with an answer box, graded by `attention.drills.grade` with the full
    working once answered (`name` keeps one set's boxes apart from another's; `label` names
    each box, so that two sets on one page are told apart by ear too).

    A question stays as it was when it first appeared: a question may ask the learner to move
    a control ("Switch the causal mask off: ...", "the last 4 tokens as padding"), and doing so
    must not rewrite the question nor the grade of an answer typed to it. Once the page's
    settings would make another question, it says so and offers that one."""
    for number, fresh in enumerate(questions, start=1):
        pin = f"check_pinned_{name}_{number}"
        question = st.session_state.setdefault(pin, fresh)
        st.markdown(f"**Question {number}**")
        st.text(question.prompt)
        show_given(question)
        # one box per lesson, question and numbers: new numbers start with an empty box
        tag = zlib.crc32(f"{question.prompt}|{question.answer_text}".encode())
        box = f"check_{name}_{number}_{tag}"
        typed = st.text_input(
            f"{label} ({number})",
            key=box,
            persist_state="session",
            max_chars=60,
        )
        if typed.strip():
            if question.diagnose is not None:  # a wrong number a classic mistake gives is named
                question = lessons.diagnosed(question.prompt, question.answer_text, question)
            verdict = grade(question, typed)
            show_verdict(verdict, question, box)
            if verdict.status == "right":
                progress.answered_right(name, number, len(questions))
        if (question.prompt, question.answer_text) != (fresh.prompt, fresh.answer_text):
            st.caption(
                "This question stays as it was when it appeared, so that following it does not "
                "change it; the settings on the page now make another one."
            )
            st.button(
                "A new question at these settings",
                key=f"check_renew_{name}_{number}",
                icon=":material/refresh:",
                on_click=st.session_state.pop,
                args=(pin, None),
            )


def next_lesson(page: str) -> None:
    """A link to the next lesson (home and the course plan after the last) and a recap."""
    path = listed_path(page)
    paths = [lesson.path for lesson in LESSONS]
    index = paths.index(path)
    st.markdown(f"**What you learned**: {declared(page).recap}")
    if index + 1 < len(LESSONS):
        following = LESSONS[index + 1]
        st.page_link(following.path, label=f"Next: {following.title}", icon=following.icon)
    else:
        st.page_link(HOME.path, label="Next: the course plan, on the home page", icon=HOME.icon)


def finish(page: str, questions: Callable[[], tuple[Drill, ...]]) -> None:
    """The end of every lesson: check yourself, then the next lesson. `questions` makes the
    lesson's questions when Check yourself is open:
    `lesson_frame.finish(__file__, lambda: view.lesson_questions(...))`."""
    check_yourself(page, questions)
    next_lesson(page)


def show_progress() -> None:
    """The progress this browser keeps (dashboard/progress.py), when it keeps any: each lesson
    begun, its questions answered right, where to go on, and Forget me."""
    kept = progress.progress()
    if not kept:
        return
    st.subheader("Your progress, kept in this browser")
    lines, going_on = [], None
    for lesson in LESSONS:
        right, count = progress.lesson_state(lesson.url_path)
        done = count > 0 and right == count
        if count:
            lines.append(f"- **{lesson.title}**: {right} of {count} answered right"
                         + (" ✔" if done else ""))  # fmt: skip
        if not done and going_on is None:
            going_on = lesson
    drills = sorted(
        (int(item.split(":")[1]), value) for item, value in kept.items()
        if item.startswith("drills:")
    )  # fmt: skip
    if drills:
        lines.append("- **Drills**, best scores: " + ", ".join(
            f"set {number}: {value.replace('/', ' / ')}" for number, value in drills
        ))  # fmt: skip
    checks = [when for when in ("before", "after")
              if any(item.startswith(f"concept:{when}:") for item in kept)]  # fmt: skip
    if checks:  # with nothing else kept, the list was empty (the review)
        lines.append("- **The concept check**: taken " + " and ".join(checks)
                     + " (your answers and figures are below)")  # fmt: skip
    st.markdown("\n".join(lines))
    if going_on is not None:
        st.page_link(going_on.path, label=f"Go on: {going_on.title}", icon=going_on.icon)
    st.button(
        "Forget me",
        key="forget_me",
        icon=":material/delete:",
        on_click=progress.forget,
        help="Delete the progress this browser keeps, here and on the server.",
    )


def lecture_key(title: str) -> str:
    """The session key of a lecture of the course plan: True while it is open."""
    return layout.section_key("lecture", title)


def show_course() -> None:
    """The home page's plan for three 50-minute lectures: each step a link that opens the
    lesson as planned, a link to each presenter-mode section to show, and the question to put
    to the class. A lecture's links are made once it is opened: they were 80 of the home
    page's 141 messages, the page a class opens first (docs/performance.md, 2026-11-29,
    evening)."""
    st.subheader("A course in three 50-minute lectures")
    st.markdown(
        "Follow the lessons in order on your own; to teach them, each lecture below opens every "
        "step with a link (the settings are in it) and links each section to show, in presenter "
        "mode, then says what to ask. Close each step with its *Check yourself* questions, made "
        "from the numbers on screen: in class mode, **Ask a question** puts them to the class."
    )
    for lecture in COURSE:
        minutes = sum(s.minutes for s in lecture.steps)
        with layout.closed_section(f"**{lecture.title}** ({minutes} minutes)",
                                   lecture_key(lecture.title)) as shown:  # fmt: skip
            if not shown.open:
                continue
            st.markdown(f"Have open: {lecture.have_open}.")
            for step in lecture.steps:
                title = next(lesson.title for lesson in LESSONS if lesson.path == step.page)
                st.page_link(
                    step.page,
                    label=f"{title} ({step.minutes} min): {link(step)}",
                    query_params=dict(step.params),
                )
                with st.container(horizontal=True, gap="small"):
                    st.markdown("Show, in presenter mode:", width="content")
                    for key, words in step.sections:
                        st.page_link(
                            step.page,
                            label=words,
                            icon=":material/slideshow:",
                            query_params=presenter_params(step, key),
                        )
                st.markdown(f"Ask the class: {step.ask}")
    planned = {step.page for lecture in COURSE for step in lecture.steps}
    if beyond := [lesson for lesson in LESSONS if lesson.path not in planned]:
        st.markdown("Not in the three lectures, for a fourth or for a learner alone:")
        for lesson in beyond:
            st.page_link(lesson.path, label=f"**{lesson.title}**: {lesson.summary}",
                         icon=lesson.icon)  # fmt: skip
