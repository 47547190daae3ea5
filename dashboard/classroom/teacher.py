"""The teacher's screen, made for the projector: the class code, the join link and its QR code;
sending the class to a view; asking a lesson's question; the live tally; close, reveal, end.

The teacher's token appears in one place only, the private link inside a closed expander with a
warning; the live tally is a fragment that reruns on the teacher's screen alone.
"""

from __future__ import annotations

import io
import time
from urllib.parse import urlencode, urlsplit

import pandas as pd
import streamlit as st

from dashboard import controls, state
from dashboard.classroom import archive, asking, bar, concept_check, report
from dashboard.classroom import seat as seats
from dashboard.classroom.seat import Seat
from dashboard.classroom.store import COURSE_SECONDS, EXPIRY_SECONDS, Question
from dashboard.frame import CLASS, HOME, LESSONS
from dashboard.render import learned
from dashboard.render.tally import show_given, tally_chart, tally_frame
from dashboard.text import plain

TALLY_S = 1.5  # how often the projector's tally asks the store
LECTURE, COURSE = EXPIRY_SECONDS, COURSE_SECONDS
LIFETIMES = {  # what the teacher chooses at the start: seconds idle before the class goes
    LECTURE: f"One lecture (deleted {LECTURE // 3600} hours after its last activity)",
    COURSE: f"A course of several lectures (kept {COURSE // 86400} days after its last "
    "activity: the concept check before and after)",
}


def show_start() -> None:
    """No class yet: start one."""
    st.subheader("Teach a class")
    st.markdown(  # short: *Start a class* on a 1024 x 768 projector's first screen (issue 52)
        "Put this page on the projector: students join with a code or the QR code, follow the "
        "lesson you send and answer your questions."
    )
    st.radio(
        "How long the class lives",
        list(LIFETIMES),
        format_func=LIFETIMES.get,
        key="class_lifetime",
        help="A course keeps its seats from one lecture to the next (each student on the same "
        "browser), so the concept check before the course and the one after it pair up. "
        "Everything in a class is deleted when it ends: download its report first.",
    )
    st.button("Start a class", type="primary", icon=":material/co_present:", on_click=start)
    message = st.session_state.pop("class_start_problem", None)
    if message:
        st.error(plain(message), icon=":material/error:")
    if not seats.store_lasts():
        st.warning(seats.WHERE_DATA_LIVES, icon=":material/cloud_off:")
    show_continue()
    show_device_request()


def show_continue() -> None:
    """Continue a class from the file it was saved to (archive.py): on a fresh server, under its
    own code, its students' seats found again by their cookies."""
    said = st.session_state.pop("class_continued", None)
    opened = said is not None or seats.LINK_TOKEN in st.session_state
    with st.expander(
        "Continue a class from a file", icon=":material/upload_file:", expanded=opened
    ):
        st.caption(
            "The file *Save the class to a file* gave you. Open it on the screen that saved it "
            "(the same browser), or open that screen's private teacher link first."
        )
        st.file_uploader(
            "The class file (.json)", type=["json"], key="class_file",
            max_upload_size=archive.MAX_BYTES // (1024 * 1024), on_change=continue_class,
        )  # fmt: skip
        if said is not None:
            st.error(plain(said), icon=":material/error:")


def continue_class() -> None:
    """File uploader callback: the class in the file, continued for this screen's token."""
    uploaded = st.session_state.get("class_file")
    if uploaded is None:
        return
    try:
        found = archive.read(uploaded.getvalue())
        token = archive.signer(found, seats.tokens_for(archive.code_of(found)))
        made = archive.restore(seats.store(), found, token)
    except Exception as error:  # refused, a live class of that code, the store unreachable
        st.session_state["class_continued"] = seats.problem(error)
        return
    st.session_state.pop(seats.LINK_TOKEN, None)
    seats.remember(seats.Seat(made.code, made.teacher_token, "teacher"))
    st.session_state["class_teacher_note"] = (
        f"Class {made.code} continues from its file: every student's seat, question and answer "
        "as saved. Students who come back on the same browser find their seats."
    )


DEVICE_KEY = "class_device"  # (pairing code, this screen's token) while it waits to be added


def show_device_request() -> None:
    """A screen that should run a class started elsewhere (the teacher's laptop, the class
    started on the projector): a code for the teacher to type there, no link to carry across,
    and this screen becomes a teacher's as soon as it is added (issue 42, item 7)."""
    st.markdown("**Already teaching on another screen?** Do not start a second class here:")
    waiting = st.session_state.get(DEVICE_KEY)
    if waiting is None:
        st.caption(
            "run that class from this screen too (your laptop, beside the projector): no link "
            "to copy, nothing shown to the room."
        )
        st.button("Show a code for this screen", key="class_device_ask",
                  icon=":material/devices:", on_click=ask_for_device)  # fmt: skip
        return
    wait_for_device()


def ask_for_device() -> None:
    try:
        st.session_state[DEVICE_KEY] = seats.store().request_device()
    except Exception as error:
        st.session_state["class_start_problem"] = seats.problem(error)


def pair_text(pair: str) -> str:
    return f"{pair[:4]}-{pair[4:]}"


@st.fragment(run_every=2.0)
def wait_for_device() -> None:
    """The code to type on the screen that runs the class, until it is typed there."""
    pair, token = st.session_state[DEVICE_KEY]
    try:
        code = seats.store().device_class(token)
    except LookupError as error:
        st.session_state.pop(DEVICE_KEY, None)
        st.session_state["class_start_problem"] = str(error)
        st.rerun(scope="app")
    except Exception as error:  # the database is unreachable: ask again at the next tick
        st.caption(plain(seats.problem(error)))
        return
    if code is not None:  # added: this screen is a teacher of that class
        st.session_state.pop(DEVICE_KEY, None)
        seats.remember(Seat(code, token, "teacher"))
        st.rerun(scope="app")
    st.metric("Code for this screen", pair_text(pair))
    st.caption(
        "On the Class page of the screen that runs your class, open *Run this class from "
        "another screen* and type this code: this page then becomes your class. The code works "
        "once, for 10 minutes."
    )
    st.button("Cancel", key="class_device_cancel", icon=":material/close:",
              on_click=lambda: st.session_state.pop(DEVICE_KEY, None))  # fmt: skip


def start() -> None:
    """Button callback: a new class, this browser its teacher."""
    try:
        made = seats.store().create_class(st.session_state.get("class_lifetime", LECTURE))
    except Exception as error:
        st.session_state["class_start_problem"] = seats.problem(error)
        return
    seats.remember(Seat(made.code, made.teacher_token, "teacher"))
    for key in ("class_asked", "class_teacher_message"):
        st.session_state.pop(key, None)


def app_base() -> str:
    """The app's address as the browser sees it (behind deploy/serve: the balancer's)."""
    parts = urlsplit(st.context.url or "http://localhost:8501/")
    path = parts.path.rstrip("/")
    here = bar.url_path(CLASS)
    if path.endswith("/" + here):
        path = path[: -len(here) - 1]
    return f"{parts.scheme}://{parts.netloc}{path}"


def join_link(code: str) -> str:
    return f"{app_base()}/{bar.url_path(CLASS)}?{urlencode({seats.JOIN_PARAM: code})}"


def private_link(teacher: Seat) -> str:
    query = urlencode({seats.TEACHER_PARAM: teacher.cookie_value})
    return f"{app_base()}/{bar.url_path(CLASS)}?{query}"


def qr_png(link: str) -> bytes:
    """The join link as a QR code, drawn here (segno), no network; made once a link, in the
    dashboard's cache (7 ms of every run of the teacher's page, each click, on 2026-11-30)."""
    return state.compute(("join_qr", link), lambda: make_qr(link))


def make_qr(link: str) -> bytes:
    import segno

    buffer = io.BytesIO()
    segno.make(link, error="m").save(buffer, kind="png", scale=10, border=2)
    return buffer.getvalue()


def show(teacher: Seat) -> None:
    """The class on the projector, and the teacher's controls."""
    if st.session_state.pop("class_end", False):
        end(teacher)
        return
    note = st.session_state.pop("class_teacher_note", None)  # continued from its file
    if note:
        st.success(plain(note), icon=":material/restore:")
        scroll_to_top(None)  # the upload left the page scrolled half-way down
    if asked_any(teacher):  # the tally first, on the projector's first screen at 1280 x 720
        live(teacher, tally_first=True)  # the projector's part: the latest question, live
        with st.expander(f"Join: class code {teacher.code}, the link and the QR code"):
            show_join_card(teacher)  # for a latecomer
    else:
        show_join_card(teacher)
        live(teacher, tally_first=False)
    st.divider()
    show_ask(teacher)
    show_follow(teacher)
    show_report(teacher)
    show_add_device(teacher)
    show_private_link(teacher)
    if not seats.store_lasts():  # the class goes with the app's disk: keep it in a file
        st.warning(seats.WHERE_DATA_LIVES, icon=":material/cloud_off:")
        save_button(teacher, "class_save")
    show_end(teacher)


def save_button(teacher: Seat, key: str) -> None:
    """Download the whole class as a file (archive.py), made when pressed, not on every rerun."""
    store, now = seats.store(), time.time()
    st.download_button(
        "Save the class to a file", lambda: archive.save(store, teacher.code, teacher.token, now),
        archive.name(teacher.code, now), mime="application/json", key=key, on_click="ignore",
        icon=":material/save:",
        help="Every question, every answer by seat and both concept checks, with the seats' "
        "digests (no names, no secret): *Continue a class from a file* brings it back on a "
        "fresh server, under its code, each student in their seat.",
    )  # fmt: skip


def moment(at: float | None) -> str:
    """A stored time as the teacher's browser reads its clock (its time zone; UTC if unknown)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if at is None:
        return "at a time not recorded"
    try:
        zone = ZoneInfo(st.context.timezone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        zone = ZoneInfo("UTC")
    return datetime.fromtimestamp(at, zone).strftime("%a %d %b %Y, %H:%M ") + str(zone)


def asked_any(teacher: Seat) -> bool:
    """Whether this class has a question yet (False while the store cannot be read: the join
    card then stays first, and the tally says what is wrong)."""
    try:
        return bool(seats.store().questions(teacher.code, teacher.token))
    except Exception:
        return False


def show_join_card(teacher: Seat) -> None:
    """The code, the link and the QR code, large enough to read from the back of the room."""
    link = join_link(teacher.code)
    left, right = st.columns([3, 2], vertical_alignment="center")
    with left:
        st.metric("Class code", teacher.code)
        st.markdown("Join at")
        st.code(link, language=None, wrap_lines=True)
        st.caption("or scan the QR code, or open Class in the app's menu and type the code.")
    right.image(qr_png(link), caption="Scan to join", width=260)


def show_add_device(teacher: Seat) -> None:
    """Add the teacher's other screen by the code it shows (show_device_request)."""
    with st.expander("Run this class from another screen", icon=":material/devices:"):
        st.caption(
            "On your laptop (or any screen of yours) open Class, press *Show a code for this "
            "screen*, and type its code here: that screen then runs this class too, without "
            "the private link being shown."
        )
        with st.form("class_add_device", border=False, clear_on_submit=True):  # used once
            typed = st.text_input("The code that screen shows", max_chars=12,
                                  placeholder="ABCD-EFGH")  # fmt: skip
            added = st.form_submit_button("Add that screen", icon=":material/add_to_queue:")
        if added:
            try:
                seats.store().add_device(teacher.code, teacher.token, typed)
                st.success("Added: that screen runs this class too.", icon=":material/check:")
            except Exception as error:
                st.error(plain(seats.problem(error)), icon=":material/error:")


def show_private_link(teacher: Seat) -> None:
    with st.expander("Your private teacher link: not for the projector", icon=":material/key:"):
        st.warning(
            "Anyone with this link runs your class. Open this only on your own screen, never on "
            "the projector; use it to reopen the class on another device.",
            icon=":material/warning:",
        )
        st.code(private_link(teacher), language=None, wrap_lines=True)
        if teacher.lifetime == COURSE:
            kept = "" if seats.store_lasts() else (
                " while the app's disk lasts (here it does not: save the class to a file)"
            )  # fmt: skip
            st.caption(
                f"This class is a course: it is kept until {COURSE // 86400} days after its "
                f"last activity{kept}. At the next lecture, open this link (or the Class page "
                "in this browser); students who come back on the same browser keep their seats."
            )
        else:
            st.caption(f"This class is deleted {LECTURE // 3600} hours after its last activity.")


def show_follow(teacher: Seat) -> None:
    """Send the class to a lesson, with the sidebar's settings."""
    st.subheader("Send the class to a lesson")
    pages = [HOME, *LESSONS]
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    picked = left.selectbox(
        "Lesson",
        range(len(pages)),
        format_func=lambda i: pages[i].title,
        key="class_send_page",
        index=1,
    )
    view = bar.view_of(pages[picked], st.query_params.to_dict())
    right.button(
        "Send",
        key="class_send",
        on_click=bar.send_view,
        args=(teacher, view),
        icon=":material/cast:",
    )
    st.caption(
        "With the sidebar's settings. On a lesson, the sidebar's *Send this view to the class* "
        "sends that page as you have it."
    )
    message = st.session_state.pop("class_bar_message", None)
    if message:
        st.caption(plain(message))


def show_ask(teacher: Seat) -> None:
    """Pick a lesson's check-yourself question at the sidebar's settings, and ask it."""
    st.subheader("Ask a question")
    show_concept_check(teacher)
    lessons = [lesson.path for lesson in asking.ASKABLE]
    path = st.selectbox(
        "From the lesson",
        lessons,
        format_func=lambda p: next(lesson.title for lesson in LESSONS if lesson.path == p),
        key="class_ask_lesson",
    )
    settings = controls.current_settings()
    choices = st.toggle(
        "Diagnostic questions as multiple choice",
        value=True,
        key="class_ask_choices",
        help="A question marked diagnostic offers the right number and the numbers the bug "
        "hunt's classic mistakes give. Off: the class types a number, and after the reveal an "
        "answer a mistake gives is named after it all the same.",
    )
    options = list(asking.lesson_questions(path, settings, choices))
    declared = next(lesson for lesson in LESSONS if lesson.path == path)
    if declared.class_extras is not None:  # the bug hunt's mystery
        asked = len(st.session_state.get("class_asked", ()))
        try:
            options += declared.class_extras(settings, asked, bar.sidebar_params(declared.uses))
        except ValueError as error:
            st.caption(plain(f"Nothing more to ask: {error}"))
    if not options:
        st.info("These settings give this lesson no question to ask.", icon=":material/info:")
        return
    picked = st.selectbox(
        "Question",
        range(len(options)),
        format_func=lambda i: options[i].label,
        key=f"class_ask_pick_{path}",
    )
    question = options[picked]
    st.caption("The class will read:")
    st.text(question.prompt)
    if question.given is not None:
        show_given(question.given)
    if question.choices is not None:
        st.caption("Choices: " + plain(" · ".join(question.choices)))
    st.button(
        "Ask the class",
        type="primary",
        icon=":material/quiz:",
        on_click=ask,
        args=(teacher, question),
        key="class_ask",
    )
    message = st.session_state.pop("class_teacher_message", None)
    if message:
        st.error(plain(message), icon=":material/error:")


def show_concept_check(teacher: Seat) -> None:
    """Give the concept check (docs/concept_check.md): form A before the course, form B after;
    each student answers its ten items on one screen, and the class report gives the gain. The
    forms given so far, and when; the after-check only once a check before has closed; a form
    given again only after a confirmation that says what it replaces."""
    st.markdown(
        "**Concept check**: ten questions, one screen, about 8 minutes. Give it *before* the "
        "course and *after* it (another form: the same ideas, other numbers); the class report "
        "then gives what the class learned."
    )
    try:
        questions = seats.store().questions(teacher.code, teacher.token)
    except Exception:
        questions = ()
    taking = concept_check.open_items(questions)  # an open check: close it before another
    given = concept_check.givings(questions)
    if teacher.lifetime == LECTURE and not given["after"]:
        st.warning(
            f"This class is one lecture's: it is deleted {LECTURE // 3600} hours after its last "
            "activity, so the answers to a check before are gone before a check after a later "
            "lecture. For a course, start a new class as a course; or give both checks in "
            "this lecture.",
            icon=":material/timer:",
        )
    for when, runs in given.items():
        if runs:
            st.caption(plain(givings_text(when, runs)))
    before_closed = any(giving.closed for giving in given["before"])
    row = st.container(horizontal=True, gap="small")
    for when in concept_check.NAMES:
        form = concept_check.concepts.WHEN_FORM[when]
        waits = when == "after" and not before_closed
        why = (
            "Close the open check first." if taking is not None
            else "Give the check before the course, and close it, first." if waits else None
        )  # fmt: skip
        row.button(
            f"Give the check {when} the course (form {form})", key=f"class_check_{when}",
            icon=":material/fact_check:", on_click=ask_check, args=(teacher, when, given[when]),
            disabled=why is not None, help=why,
        )  # fmt: skip
    confirm_check(teacher)


def givings_text(when: str, runs: list[concept_check.Giving]) -> str:
    """When a form was given, and whether it is closed: what the teacher reads before giving
    it again."""
    times = ", then ".join(moment(giving.asked_at) for giving in runs)
    state = "closed" if runs[-1].closed else "open"
    return f"{concept_check.NAMES[when]}: given {times} ({state})."


CONFIRM_KEY = "class_check_confirm"  # session key: the form waiting for "Give it again"


def ask_check(teacher: Seat, when: str, runs: list[concept_check.Giving]) -> None:
    """Button callback: give the form now, or, when it was given already, ask to confirm."""
    if runs:
        st.session_state[CONFIRM_KEY] = when
        return
    give_check(teacher, when)


def confirm_check(teacher: Seat) -> None:
    """Giving a form again: what it replaces in the report, then Give it again or Cancel."""
    when = st.session_state.get(CONFIRM_KEY)
    if when is None:
        return
    with st.container(border=True):
        st.markdown(
            plain(
                f"{concept_check.NAMES[when]} was given already. Giving it again asks its ten "
                "items anew, and the class report then reads only the new answers: each "
                "student's earlier answers to this form no longer count (they stay in the "
                "class's file, if you saved it before). Give it again only if the first giving "
                "went wrong."
            )
        )
        row = st.container(horizontal=True, gap="small")
        row.button("Give it again", key="class_check_again", type="primary",
                   on_click=give_check, args=(teacher, when))  # fmt: skip
        row.button("Cancel", key="class_check_cancel",
                   on_click=lambda: st.session_state.pop(CONFIRM_KEY, None))  # fmt: skip


def give_check(teacher: Seat, when: str) -> None:
    """Button callback: ask every item of the check."""
    st.session_state.pop(CONFIRM_KEY, None)
    try:
        qids = concept_check.ask(seats.store(), teacher.code, teacher.token, when)
    except Exception as error:
        st.session_state["class_teacher_message"] = seats.problem(error)
        return
    st.session_state["class_asked"] = (*st.session_state.get("class_asked", ()), *qids)


def close_check(teacher: Seat, qids: tuple[int, ...]) -> None:
    """Button callback: close every item of the check still open."""
    try:
        for qid in qids:
            seats.store().close(teacher.code, teacher.token, qid)
    except Exception as error:
        st.session_state["class_teacher_message"] = seats.problem(error)


def show_check_progress(teacher: Seat, questions: tuple[Question, ...]) -> bool:
    """On the projector while a check is open: how many answered each item (never the
    answers: the check is a measurement, not a discussion), and Close. False when no check
    is open."""
    taking = concept_check.open_items(questions)
    if taking is None:
        return False
    when, items = taking
    store = seats.store()
    answered = [store.tally(teacher.code, teacher.token, q.qid).answered for q in items]
    joined = store.joined(teacher.code, teacher.token)
    open_qids = {q.qid for q in items}
    per_seat: dict[int, int] = {}
    for qid, seat, _ in store.answers_by_seat(teacher.code, teacher.token):
        if qid in open_qids:
            per_seat[seat] = per_seat.get(seat, 0) + 1
    every = sum(1 for n in per_seat.values() if n == len(items))  # not the least-answered item
    st.subheader(f"{concept_check.NAMES[when]} (open)")
    st.metric("Answered every item", f"{every} of {joined} joined")
    st.markdown(
        "Answers per item: "
        + ", ".join(
            f"{concept_check.check_of(q.prompt)[1]}: {n}"
            for q, n in zip(items, answered, strict=True)
        )
    )  # fmt: skip (read from the back of the room: not a grey caption)
    if st.button(
        "Close the check", key="class_close_check", icon=":material/lock:", type="primary",
        help="No more answers. The figures are in the class report once both checks are given.",
    ):  # fmt: skip
        close_check(teacher, tuple(q.qid for q in items))
        # the whole page, not only this live part: the buttons that give a check are enabled
        # again (drawn outside it, they kept the state they had when the check was open)
        st.rerun(scope="app")
    return True


def ask(teacher: Seat, question: asking.ClassQuestion) -> None:
    """Button callback: ask the question (and send its view, for the mystery)."""
    store = seats.store()
    try:
        qid = store.ask(
            teacher.code,
            teacher.token,
            question.prompt,
            question.choices,
            question.answer,
            question.working,
            question.mistakes,
            question.kind,
            question.given,
        )
        if question.view is not None:
            store.send_view(teacher.code, teacher.token, question.view)
    except Exception as error:
        st.session_state["class_teacher_message"] = seats.problem(error)
        return
    st.session_state["class_asked"] = (*st.session_state.get("class_asked", ()), qid)


def act(teacher: Seat, action: str, qid: int) -> None:
    """Button callback: close or reveal a question."""
    try:
        getattr(seats.store(), action)(teacher.code, teacher.token, qid)
    except Exception as error:
        st.session_state["class_teacher_message"] = seats.problem(error)


SEEN_KEY = "class_latest_seen"  # session key: the latest question the projector has drawn


def scroll_to_top(qid: int | None) -> None:
    """Bring the projector back to its top, where the new question's count and tally are: a
    check given from the laptop left it scrolled down, off the check's progress (issue 52, item
    8). The question's id makes each script new, so each runs once."""
    st.html(
        f"<script>/* question {qid} */ window.scrollTo(0, 0); "
        "document.querySelector('[data-testid=\"stMain\"]')?.scrollTo(0, 0);</script>",
        unsafe_allow_javascript=True,
        width="content",
    )


@st.fragment(run_every=TALLY_S)
def live(teacher: Seat, tally_first: bool = True) -> None:
    """The projector's live part: who joined, the latest question and its tally. Drawn under
    the join card (`tally_first` False) until a question is asked, from this screen or the
    teacher's laptop: then the whole page is drawn again, the tally on top and the join card
    folded (issue 42, item 1: asked from the laptop, the tally started at the projector's
    bottom edge until someone reloaded it)."""
    store = seats.store()
    try:
        questions = store.questions(teacher.code, teacher.token)
        if questions and not tally_first:
            st.rerun(scope="app")
        latest = questions[-1].qid if questions else None
        if st.session_state.get(SEEN_KEY, latest) != latest:  # asked here or from the laptop
            scroll_to_top(latest)
        st.session_state[SEEN_KEY] = latest
        if not questions:
            joined = store.joined(teacher.code, teacher.token)
            st.metric("Students joined", joined)
            st.info("Ask a question: the tally of answers shows here.", icon=":material/quiz:")
            return
        if show_check_progress(teacher, questions):
            return
        question = questions[-1]
        if found := concept_check.check_of(question.prompt):  # a check, closed
            given = concept_check.givings(questions)
            figures = (
                "The class report gives what the class learned."
                if all(given.values())
                else "Its figures are in the class report once the check after is given too."
            )
            st.info(f"{concept_check.NAMES[found[0]]} is closed. {figures}",
                    icon=":material/fact_check:")  # fmt: skip
            save_button(teacher, "class_save_check")
            return
        tally = store.tally(teacher.code, teacher.token, question.qid)
    except (LookupError, PermissionError) as error:  # expired, or ended on another device
        seats.forget("teacher")
        st.session_state["class_gone"] = seats.gone(teacher.code, error)
        st.rerun(scope="app")
    except Exception as error:  # the database is unreachable: the next tick tries again
        st.warning(plain(seats.problem(error)), icon=":material/sync_problem:")
        return
    show_tally(teacher, question, tally)


def show_tally(teacher: Seat, question: Question, tally) -> None:
    """The latest question on the projector, laid out for its first screen at 1024 x 768 (issue
    52, item 6): the count, *Close* and *Reveal* in one row under the title; once revealed, the
    answer and the mistakes the class made next, then the question, the bars and the working."""
    state = "revealed" if tally.revealed else "closed" if tally.closed else "open"
    name, asks = asking.named(question.prompt)
    st.subheader(f"{name} ({state})")
    row = st.container(horizontal=True, gap="medium", vertical_alignment="center")
    row.metric("Answered", f"{tally.answered} of {tally.joined} joined", width="content")
    row.button("Close", key="class_close", disabled=tally.closed, icon=":material/lock:",
               on_click=act, args=(teacher, "close", question.qid),
               help="No more answers; the class waits for the reveal.")  # fmt: skip
    row.button("Reveal", key="class_reveal", disabled=tally.revealed, type="primary",
               icon=":material/visibility:", on_click=act, args=(teacher, "reveal", question.qid),
               help="Show the answer and its working to everyone (and close).")  # fmt: skip
    message = st.session_state.pop("class_teacher_message", None)
    if message:
        st.error(plain(message), icon=":material/error:")
    if tally.revealed:
        st.success(plain(f"The answer: {asking.answer_text(question)}"), icon=":material/check:")
        show_mistakes(question, tally.counts)
    st.markdown(plain(asks))
    if question.given is not None:
        show_given(question.given)
    right = (lambda value: asking.is_right(question, value)) if tally.revealed else None
    # a typed number's answers as the grader's; before the reveal, named by what was typed
    bars = asking.grouped(question, tally.counts, tally.revealed)
    causes = {bar: asking.cause_of(question, bar) for bar in bars} if tally.revealed else {}
    causes = {bar: words for bar, words in causes.items() if words}
    frame = tally_frame(bars, tally.answered, right, causes)
    if frame.empty:
        st.caption("No answers yet.")
    else:
        st.altair_chart(tally_chart(frame, f"{name}: the class's answers"), width="stretch")
        st.caption(
            "Shares are whole percentages rounded so that they add up to 100 (three equal bars "
            "read 34, 33 and 33)."
        )
    if tally.revealed and question.working:
        st.markdown("**The working**")
        for line in question.working:
            st.text(line)


def show_mistakes(question: Question, counts: dict[str, int]) -> None:
    """After the reveal, the mistakes the class made, most common first, each with its count
    and a link to it in the bug hunt; the teacher's note says what to show next."""
    from attention.bugs import BUGS

    made = asking.mistakes_made(question, counts)
    if not made:
        return
    st.markdown("**The mistakes behind the wrong answers**")
    for count, choice, named in made:
        titles = " or ".join(title for _, title in named)
        st.markdown(plain(f"{titles}: {count} student{'s' if count != 1 else ''} ({choice})"))
        for bug, title in named:
            shown = asking.bug_hunt_params(bug)  # lesson 13's mistakes are not the bug hunt's
            if shown is not None:
                st.page_link("pages/bug_hunt.py", label=f"Show it: {title}",
                             icon=":material/bug_report:", query_params=shown)  # fmt: skip
    _, _, named = made[0]
    bug = BUGS.get(named[0][0])
    if bug is not None:
        st.info(
            plain(f"Next, show {bug.title.lower()} in the bug hunt: {bug.symptom}"),
            icon=":material/record_voice_over:",
        )


def show_report(teacher: Seat) -> None:
    """The class report: what the class learned first, under its own heading, once the concept
    check was given before and after (dashboard/classroom/concept_check.py); then, when asked
    for, per question the share right and the mistakes (report.py), as a table and a CSV, and
    the answers with nicknames as a second CSV, for the teacher alone."""
    st.subheader("Class report")
    show_check_report(teacher)
    with st.expander("Every question: the share right and the mistakes"):
        if not st.toggle("Make the report", key="class_report"):
            st.caption("Read from the answers stored, when you ask for it.")
            return
        store = seats.store()
        try:
            frame = report.report(store, teacher.code, teacher.token)
            answers = report.answers_with_nicknames(store, teacher.code, teacher.token)
        except Exception as error:  # the database is unreachable, or the class went
            st.warning(plain(seats.problem(error)), icon=":material/sync_problem:")
            return
        if frame.empty:
            st.caption("No question asked yet.")
            return
        # A table that wraps its text, not a grid that scrolls: at 1280 px the grid cut off the
        # mistakes named and the other wrong answers (issue 42, item 7).
        shown = frame.drop(columns=["asks", "lesson's objectives"])  # in the CSV, once a row
        shown["share right"] = frame["share right"].map(
            lambda share: "undefined" if pd.isna(share) else f"{100 * share:.0f} %"
        )
        st.table(shown, hide_index=True)
        st.caption("The CSV adds each question's lesson objectives.")
        left, right = st.columns(2)
        # on_click="ignore": a download that reran the page renamed the other buttons' files,
        # and a second or third download clicked meanwhile was cancelled (issue 52, item 4)
        left.download_button(
            "Download the report (CSV)", frame.to_csv(index=False), f"class_{teacher.code}.csv",
            mime="text/csv", icon=":material/download:", key="class_report_csv",
            on_click="ignore",
        )  # fmt: skip
        right.download_button(
            "Download answers with nicknames (CSV)", answers.to_csv(index=False),
            f"class_{teacher.code}_answers.csv", mime="text/csv",
            icon=":material/download:", key="class_answers_csv", on_click="ignore",
            help="Every answer to a lesson's question with the nickname its student typed: for "
            "you, not the projector. The concept check's answers are not in it: the check "
            "promises the students no name beside them (its figures are by seat).",
        )  # fmt: skip


def show_check_report(teacher: Seat) -> None:
    """What the class learned, once both checks were given: the class's figures beside physics
    courses', a chart per concept and per student, then every table, and their CSV."""
    try:
        figures = concept_check.report(seats.store(), teacher.code, teacher.token)
    except Exception as error:  # the database is unreachable, or the class went
        st.warning(plain(seats.problem(error)), icon=":material/sync_problem:")
        return
    if figures is None or not all(runs[-1].closed for runs in figures.given.values()):
        st.caption(
            "What the class learned appears here once the concept check was given before and "
            "after the course, and both are closed."
        )
        return
    st.markdown("#### What the class learned")
    used = [
        f"{concept_check.NAMES[when]}: the answers to its giving of {moment(runs[-1].asked_at)}"
        + (f" (given {len(runs)} times: the latest)." if len(runs) > 1 else ".")
        for when, runs in figures.given.items()
    ]
    st.caption(plain(" ".join(used)))
    st.markdown("**The class's figures**")
    st.table(concept_check.summary(figures.gain), hide_index=True)
    if figures.gain.why:
        st.caption(plain(figures.gain.why + "."))
    tables = concept_check.rounded(figures)
    if len(figures.students):  # one a row: side by side, their titles were cut
        st.altair_chart(learned.per_concept_chart(figures.per_concept), width="stretch")
        st.altair_chart(learned.students_chart(figures.students), width="stretch")
    for title, frame in tables.items():
        st.markdown(f"**{title}**")
        st.table(concept_check.shown(frame), hide_index=True)
    st.download_button(
        "Download the concept check (CSV)", concept_check.csv(figures),
        f"class_{teacher.code}_concept_check.csv", mime="text/csv",
        icon=":material/download:", key="class_check_csv", on_click="ignore",
    )  # fmt: skip


def show_end(teacher: Seat) -> None:
    with st.popover("End class", icon=":material/stop_circle:"):
        st.markdown(
            "Ending deletes the class, its students and their answers, now: download the "
            "class report first, or save the class to a file (a course continues from it)."
        )
        save_button(teacher, "class_save_end")
        st.button(
            "End the class now",
            key="class_end_now",
            type="primary",
            on_click=lambda: st.session_state.update(class_end=True),
        )


def end(teacher: Seat) -> None:
    """Delete the class and forget it; the page offers a new one."""
    try:
        seats.store().delete_class(teacher.code, teacher.token)
    except (LookupError, PermissionError):
        pass  # gone already (expired, or ended from another device)
    except Exception as error:
        st.error(plain(seats.problem(error)), icon=":material/error:")
        return
    seats.forget("teacher")
    st.success(f"Class {teacher.code} has ended: all of it is deleted.", icon=":material/check:")
    show_start()
