"""Class mode in the frame, on every page: a joined student's "your teacher is on …" with the
option to follow automatically, and the teacher's "send this view to the class".

In presenter mode the sidebar is hidden: a teacher presenting gets a row above the section
instead, "Send this section to the class"; once sent, each section the teacher turns to is sent
too, so a student who follows sees, in presenter mode on their laptop, the section the projector
shows (issue 42, item 5).

A student's screen reads the view the teacher sent and the class's questions in its follow
panel (a fragment): when the teacher sends a new view, a student who follows is switched to it
(`st.switch_page` with the view's query parameters); when a question is asked, closed or
revealed, the class page reruns to show it. The server's watch reruns the panel the moment the
class's news change (wake.py); where no watch runs, the browser polls (`wake.poll_s`).
"""

from __future__ import annotations

import time
from urllib.parse import parse_qsl, urlencode, urlsplit

import streamlit as st

from dashboard.classroom import seat as seats
from dashboard.classroom import wake
from dashboard.classroom.seat import Seat
from dashboard.controls import DEFAULTS
from dashboard.frame import CLASS, GLOSSARY, HOME, LESSONS, LessonPage
from dashboard.links import typed
from dashboard.render import presenter
from dashboard.text import plain

FOLLOW_KEY = "class_follow"  # the student's "follow my teacher" switch
FOLLOWING = "class_following"  # its value, kept apart from the widget's state (follow_switch)
# Link parameters that are the class's own, never part of a view sent to the class
NOT_A_VIEW = frozenset({seats.JOIN_PARAM, seats.TEACHER_PARAM})
# Presenter mode and its section: part of a view only when sent from presenter mode
PRESENTING = (presenter.PRESENT_KEY, presenter.SECTION_KEY)
SECTIONS_TO = "class_sections_to"  # the lesson whose sections the teacher sends as they turn
SECTION_SENT = "class_section_sent"  # the last section view sent from presenter mode
UNSENT = "class_unsent"  # the open question this student has not answered yet, on the class page
ASKED_KEY = "class_asked"  # the open question's id, as the student's last look found it
ASKED = "Your teacher asked a question: answer it"
# The follow panel's read that switched this screen (`go_to`), kept for the panel of the page it
# opens, once, if that page's run comes within SWITCH_READ_S of the switch: one read of the store
# a follower less each time the teacher moves the class (the page's panel read again within
# milliseconds). A change made in between is shown at the next wake, as any change is: the
# screen shows the view it switched to until then
SWITCH_READ = "class_switch_read"
SWITCH_READ_S = 1.0


def url_path(lesson: LessonPage) -> str:
    """The page's address in the app ("" for home, the default page)."""
    return "" if lesson is HOME else lesson.url_path


PAGES = {url_path(lesson): lesson for lesson in (HOME, *LESSONS, CLASS, GLOSSARY)}


def sidebar_params(uses: tuple[str, ...]) -> dict[str, str]:
    """The sidebar's settings a page reads, as link parameters, from this session's controls
    (the sentence's text and positions only for a sentence, the task's only when trained)."""
    source = st.session_state.get("src", DEFAULTS["src"])
    keys = list(uses)
    keys += {
        "sentence": ["text", "pos"],
        "trained": ["task", "layer"],
        "shakespeare": ["text", "layer"],
    }.get(source, [])
    params = {}
    for key in keys:
        value = st.session_state.get(key, DEFAULTS[key])
        params[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return params


def view_of(lesson: LessonPage, params: dict[str, str]) -> str:
    """The view a teacher sends: a page's path and its link parameters: the lesson's own (as
    the address bar has them) and the sidebar's settings it reads, spelt out so that a student
    whose sidebar differs gets the teacher's; presenter mode and its section when the view is
    a section presented (present=1); never the class's own."""
    kept = {
        k: v
        for k, v in params.items()
        if k not in NOT_A_VIEW and k not in DEFAULTS and k not in PRESENTING
    }
    kept |= sidebar_params(lesson.uses)
    if params.get(presenter.PRESENT_KEY) == "1":
        kept |= {presenter.PRESENT_KEY: "1",
                 presenter.SECTION_KEY: params.get(presenter.SECTION_KEY, "1")}  # fmt: skip
    return f"/{url_path(lesson)}" + (f"?{urlencode(kept)}" if kept else "")


def target_of(url: str) -> tuple[LessonPage, dict[str, str]] | None:
    """The page and parameters of a sent view; None for a path that is no page of the app."""
    parts = urlsplit(url)
    lesson = PAGES.get(parts.path.strip("/"))
    return None if lesson is None else (lesson, dict(parse_qsl(parts.query)))


# The sidebar's settings as its controls name them (a student reads these, not link keys)
WORDS = {
    "src": lambda v: f"input X: {v}",
    "text": lambda v: f"sentence “{v}”",
    "pos": lambda v: f"sinusoidal positions {'on' if v == 'true' else 'off'}",
    "T": lambda v: f"T = {v}",
    "d_model": lambda v: f"d_model = {v}",
    "heads": lambda v: f"H = {v} head{'s' if v != '1' else ''}",
    "causal": lambda v: f"causal mask {'on' if v == 'true' else 'off'}",
    "seed": lambda v: f"seed {v}",
    "task": lambda v: f"task: {v}",
    "layer": lambda v: f"layer {v}",
    presenter.PRESENT_KEY: lambda v: "in presenter mode",
    presenter.SECTION_KEY: lambda v: f"section {v}",
}


def describe(lesson: LessonPage, params: dict[str, str]) -> str:
    """A view in words: the page's title and its settings as the sidebar names them (a
    lesson's own control by its link key), as plain text."""
    settings = ", ".join(WORDS[k](v) if k in WORDS else f"{k} = {v}" for k, v in params.items())
    return lesson.title + (f" ({settings})" if settings else "")


def class_bar(page: st.Page) -> None:
    """Before the sidebar: take the class's link parameters out of the URL, write pending
    cookies, and in the sidebar, the class bar of a teacher or a joined student."""
    seats.take_link()
    seats.write_cookies()
    here = page.url_path
    if here == url_path(CLASS):
        return  # the class page draws its own
    teacher, student = seats.teacher(), seats.student()
    # presenter mode without the teacher's notes for a student (issue 52, item 13)
    st.session_state[presenter.STUDENT_KEY] = student is not None and teacher is None
    ended = st.session_state.pop(seats.ENDED_KEY, None)
    if ended:  # the student's class went: said once, at the top of the page they are on
        st.info(plain(ended), icon=":material/event_busy:")  # where a phone shows it
    if student is not None and st.session_state.get(ASKED_KEY) is not None:
        with st.container(border=True):  # above the lesson: a phone's sidebar is closed
            st.page_link(CLASS.path, label=ASKED, icon=":material/quiz:")
    if teacher is not None and presenting() and here in PAGES and PAGES[here] in LESSONS:
        presenting_bar(teacher, here)  # above the section: the sidebar is hidden
    with st.sidebar:
        if teacher is not None:
            teacher_bar(teacher, here)
        if student is not None:
            follow_panel(student, here)
            follow_switch()


def teacher_bar(teacher: Seat, here: str) -> None:
    """The teacher on a lesson: send this view (the page and its settings) to the class."""
    st.caption(f"You are teaching class {teacher.code}.")
    st.button(
        "Send this view to the class",
        key="class_send_here",
        icon=":material/cast:",
        on_click=send_here,
        args=(teacher, here),
        help="Students who follow you are switched to this page with these settings.",
    )
    st.page_link(CLASS.path, label="Back to the class", icon=CLASS.icon)
    message = st.session_state.pop("class_bar_message", None)
    if message:
        st.caption(plain(message))


def presenting() -> bool:
    return bool(st.session_state.get(presenter.PRESENT_STATE, False))


def section_view(here: str) -> str:
    """The view of the section this run presents (its number, or the title a link named)."""
    section = st.session_state.get(presenter.SECTION_STATE) or 1
    params = st.query_params.to_dict() | {
        presenter.PRESENT_KEY: "1",
        presenter.SECTION_KEY: str(section),
    }
    return view_of(PAGES[here], params)


def presenting_bar(teacher: Seat, here: str) -> None:
    """The teacher presenting: send the section shown to the class; from then on each section
    turned to is sent as the page turns, until stopped or another lesson is presented."""
    view = section_view(here)
    sending = st.session_state.get(SECTIONS_TO) == here
    if sending and st.session_state.get(SECTION_SENT) != view:
        send_view(teacher, view)  # the page turned: the class turns with it
        st.session_state[SECTION_SENT] = view
    with st.container(key="class_present_bar", horizontal=True, vertical_alignment="center"):
        if sending:
            st.caption(f"Students following you in class {teacher.code} see each section you "
                       "turn to.", width="content")  # fmt: skip
            st.button("Stop sending sections", key="class_sections_stop", type="tertiary",
                      icon=":material/cancel_presentation:", on_click=stop_sections)  # fmt: skip
        else:
            st.button("Send this section to the class", key="class_sections_send",
                      type="tertiary", icon=":material/cast:", on_click=send_sections,
                      args=(teacher, here),
                      help="Students who follow you see this section, and each one you turn "
                      "to, in presenter mode on their screens.")  # fmt: skip
    message = st.session_state.get("class_bar_message")
    if message and not message.startswith("Sent: "):
        st.caption(plain(message))  # a refusal: the class went, the store is down


def send_sections(teacher: Seat, here: str) -> None:
    """Button callback: send this section, and the next ones as the teacher turns to them. The
    view is read when the button is pressed, as `send_here` reads it: drawn above the section,
    on a presenter link's first run, the button was drawn before the sidebar's settings had
    taken the link's (`/masking?T=8&present=1` sent T=6, then T=8 as the click's run drew the
    bar, and the class's followers had both)."""
    view = section_view(here)
    send_view(teacher, view)
    st.session_state[SECTIONS_TO] = here
    st.session_state[SECTION_SENT] = view


def stop_sections() -> None:
    st.session_state.pop(SECTIONS_TO, None)


def send_here(teacher: Seat, here: str) -> None:
    """Button callback: send the view on this screen, read when the button is pressed (the
    widgets hold their values by then; on a page's first run, drawn before the sidebar, a
    link's settings were not yet in them: `/masking?T=8` sent T=6)."""
    send_view(teacher, view_of(PAGES.get(here, HOME), st.query_params.to_dict()))


def send_view(teacher: Seat, view: str) -> None:
    """Button callback: the class's view is now `view`."""
    try:
        seats.store().send_view(teacher.code, teacher.token, view)
        target = target_of(view)
        said = describe(*target) if target else view
        st.session_state["class_bar_message"] = f"Sent: {said}."
    except Exception as error:
        st.session_state["class_bar_message"] = seats.problem(error)


def follow_switch() -> None:
    """The student's choice to follow the teacher's screen (kept across pages). The choice is
    kept under a key of its own (FOLLOWING), which the switch only writes: Streamlit may drop a
    widget's state outside a fragment during the fragment's timed reruns (streamlit#10805, fixed
    by streamlit#14064, not in 1.67), and a student's switch was found off, not followed, after
    being turned on. The switch is drawn from the kept choice whenever its state is gone or
    reset without the student (their own click runs `switched` first)."""
    if st.session_state.get(FOLLOWING) and not st.session_state.get(FOLLOW_KEY):
        st.session_state[FOLLOW_KEY] = True  # gone or reset, not by the student (see switched)
    st.toggle(
        "Follow my teacher automatically",
        key=FOLLOW_KEY,
        persist_state="session",
        on_change=switched,
        help="When your teacher sends a new view, this page switches to it.",
    )


def switched() -> None:
    """The switch's callback: keep the choice; a view already sent is followed once more."""
    st.session_state[FOLLOWING] = bool(st.session_state.get(FOLLOW_KEY))
    st.session_state.pop("class_followed", None)


def follow_panel(student: Seat, here: str) -> None:
    """The follow panel: a fragment the server's watch reruns when the class's news change
    (where no watch runs, the browser every `wake.poll_s()` seconds)."""
    st.fragment(run_every=wake.poll_s())(follow_news)(student, here)


def follow_news(student: Seat, here: str) -> None:
    """Where the teacher is, with a link there; following automatically when switched on; and,
    away from the class page, a note when a question is open."""
    wake.listen(student.code)
    try:
        news = read_news(student)  # one light read a poll
    except (LookupError, PermissionError) as error:  # ended, expired: said on the next run
        seats.lost(student, error)
        st.rerun(scope="app")
    except Exception as error:  # the database is unreachable: try again in a moment
        st.caption(plain(seats.problem(error)))
        wake.again(student.code, after_s=wake.BACK_OFF_S)  # read again then
        return
    view, last = news.view, news.last_question
    signature = None if last is None else (last, news.closed, news.revealed)
    on_class_page = here == url_path(CLASS)
    if on_class_page and signature != st.session_state.get("class_signature"):
        st.rerun(scope="app")  # a question was asked, closed or revealed: show it
    asked = last if last is not None and not news.closed else None
    if not on_class_page and asked != st.session_state.get(ASKED_KEY):
        st.session_state[ASKED_KEY] = asked
        if asked is not None and st.session_state.get(FOLLOWING) and not answered(student, asked):
            # a follower (presenting or not) is brought to a question they have not answered,
            # not left a banner to find (issue 52, item 15); the next view sent takes them on
            go_to(f"/{url_path(CLASS)}", student, news)
        st.rerun(scope="app")  # the note above the lesson (class_bar) appears or goes
    target = None if view is None else target_of(view.url)
    if target is None:
        st.caption(f"Class {student.code}: your teacher has not sent a view yet.")
        return
    lesson, params = target
    there = is_there(here, target)
    following = (
        st.session_state.get(FOLLOWING) and st.session_state.get("class_followed") != view.sent_at
    )
    # never moved off an open question they may be typing in (issue 42, item 4): the form
    # keeps what they typed; Follow goes once the answer is sent
    waits = (
        following
        and on_class_page
        and not there
        and asked is not None
        and st.session_state.get(UNSENT) == asked
    )
    if following and not waits:
        st.session_state["class_followed"] = view.sent_at
        if not there:
            go_to(view.url, student, news)  # before the panel draws anything: left at once
    if lesson is not CLASS:
        st.markdown(f"Your teacher is on **{plain(describe(lesson, params))}**.")
        if there:
            st.caption("You are there.")
        elif st.button("Go there", key="class_go", icon=":material/cast_for_education:"):
            go_to(view.url, student, news)
    if waits:
        st.caption("Follow waits until you send your answer to the open question below.")


def answered(student: Seat, qid: int) -> bool:
    """Whether the student has answered question `qid` (False while the store cannot say)."""
    try:
        return qid in seats.store().answers_of(student.code, student.token)
    except Exception:
        return False


def is_there(here: str, target: tuple[LessonPage, dict[str, str]]) -> bool:
    """Whether this screen shows the sent view: the same page, and the view this screen would
    send, built as the teacher's was (the page's own link parameters and the sidebar's settings
    it reads), has the same parameters."""
    lesson = PAGES.get(here)
    return lesson is not None and target_of(view_of(lesson, st.query_params.to_dict())) == target


def read_news(student: Seat):
    """The class's news for this screen's follow panel (store.follow): the read that switched
    this screen here, for this class, within SWITCH_READ_S of the switch (once), else a read."""
    kept = st.session_state.pop(SWITCH_READ, None)
    if kept is not None:
        code, at, news = kept
        if code == student.code and 0 <= time.monotonic() - at < SWITCH_READ_S:
            return news
    return seats.store().follow(student.code, student.token)


def go_to(url: str, student: Seat, news) -> None:
    """Open a sent view: in a full rerun, before anything is drawn (`follow`, at the top of
    the entry file). `news`, the read that decided it, serves the panel of the page opened."""
    st.session_state["class_follow_to"] = url
    st.session_state[SWITCH_READ] = (student.code, time.monotonic(), news)
    st.rerun(scope="app")


def follow() -> None:
    """Open the view `go_to` asked for, first thing in the run: the page being left is not
    drawn again (its frame's page list and style blocks were, for every follower, before the
    switch: 4 of a view's 82 messages, about 0.9 ms of script). Streamlit refuses to switch
    pages with a parameter bound to a widget (the sidebar's, and a lesson's own once drawn), so
    those go into the widgets' session state first (they are not drawn yet in this run), and
    the rest into the link."""
    url = st.session_state.pop("class_follow_to", None)
    target = None if url is None else target_of(url)
    if target is None:
        return
    lesson, params = target
    # presenter mode as the view has it: on, at its section, or off (a view sent from the
    # laptop after a presented one takes the follower out of presenter mode)
    st.session_state[presenter.PRESENT_STATE] = params.get(presenter.PRESENT_KEY) == "1"
    st.session_state[presenter.SECTION_STATE] = params.get(presenter.SECTION_KEY)
    params = {k: v for k, v in params.items() if k not in PRESENTING}
    for key, value in params.items():
        if key in DEFAULTS or key in st.session_state:
            st.session_state[key] = typed(value, DEFAULTS.get(key, st.session_state.get(key)))
    rest = {k: v for k, v in params.items() if k not in DEFAULTS and k not in st.session_state}
    st.switch_page(lesson.path, query_params=rest)
