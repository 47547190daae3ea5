"""A student's laptop: join with a code, follow the teacher, answer the question, see whether the
answer was right once the teacher reveals it. Everything typed (nicknames, answers) and every
prompt is shown as text, never as markup."""

from __future__ import annotations

import streamlit as st

from dashboard.classroom import asking, bar, concept_check, wake
from dashboard.classroom import seat as seats
from dashboard.classroom.seat import Seat
from dashboard.classroom.store import NICKNAME_CHARS, WEIGHT, WHOLE, Question
from dashboard.render.tally import show_given
from dashboard.text import plain


def show_join(code: str = "", check: bool = False) -> None:
    """The join form: the class code (filled in from a join link) and an optional nickname.
    With `check`, a join link's code is looked up at once: a wrong one says so before Join."""
    st.subheader("Join a class")
    refused = seats.check_code(code) if check else None
    if refused:
        st.error(plain(refused), icon=":material/error:")
    with st.form("class_join_form", border=False):
        typed = st.text_input(
            "Class code", value=code, max_chars=12, key="class_code_typed", placeholder="K7QM4X"
        )
        nickname = st.text_input(
            "Nickname (optional)",
            max_chars=NICKNAME_CHARS,
            key="class_nickname",
            help="Your screen greets you by it; the projector shows counts, never names.",
        )
        joined = st.form_submit_button("Join", type="primary", icon=":material/login:")
    if joined:
        join(typed, nickname)


def join(code: str, nickname: str) -> None:
    """Join the class once per browser: a second join of the same class keeps the seat."""
    known = seats.student()
    if known is not None and known.code == seats.normalise_code(code):
        st.rerun()
    if not seats.normalise_code(code):
        st.error("Type the class code your teacher shows.", icon=":material/error:")
        return
    try:
        token = seats.store().join(code, nickname.strip() or None)
    except Exception as error:  # unknown or expired code, rate limit, database down
        st.error(plain(seats.problem(error)), icon=":material/error:")
        return
    name = nickname.strip()[:NICKNAME_CHARS] or None
    seats.remember(Seat(seats.normalise_code(code), token, "student", name))
    st.session_state.pop("class_signature", None)
    st.rerun()


def show(student: Seat) -> None:
    """A joined student's class page: where the teacher is, and the latest question."""
    store = seats.store()
    try:
        questions = store.questions(student.code, student.token)
        mine = store.answers_of(student.code, student.token)
    except (LookupError, PermissionError) as error:  # ended, expired
        seats.lost(student, error)
        st.info(plain(st.session_state.pop(seats.ENDED_KEY)), icon=":material/event_busy:")
        show_join()
        return
    except Exception as error:
        st.subheader(f"Class {student.code}")
        st.error(plain(seats.problem(error)), icon=":material/error:")
        return
    st.subheader(f"Class {student.code}")
    if student.nickname:
        st.markdown(f"You joined as **{plain(student.nickname)}**.")
    else:
        st.markdown("You joined this class.")
    latest = questions[-1] if questions else None
    st.session_state["class_signature"] = (
        None if latest is None else (latest.qid, latest.closed, latest.revealed)
    )
    unanswered = latest is not None and not latest.closed and latest.qid not in mine
    st.session_state[bar.UNSENT] = latest.qid if unanswered else None
    bar.follow_switch()
    bar.follow_panel(student, bar.url_path(bar.CLASS))  # reruns the page when this changes
    if latest is None:
        st.info("Waiting for your teacher's first question.", icon=":material/hourglass_top:")
        return
    taking = concept_check.open_items(questions)
    if taking is not None:
        show_check(student, *taking, mine)
        return
    if latest.closed and (found := concept_check.check_of(latest.prompt)):
        st.info(f"{concept_check.NAMES[found[0]]} is closed: thank you.",
                icon=":material/lock:")  # fmt: skip
        return
    show_question(student, latest, mine.get(latest.qid))


def show_check(student: Seat, when: str, items: list[Question], mine: dict[int, str]) -> None:
    """The concept check's items on one screen, one choice each, sent together; answers can be
    changed until the teacher closes the check."""
    st.subheader(concept_check.NAMES[when])
    st.markdown(
        "Ten questions on what the course is about. Pick one answer for each, then send them "
        "all. It measures the course, not you: your teacher sees the class's figures and "
        "each seat's score (seats are numbered in the order students joined), never a name."
    )
    with st.form(f"class_check_{when}", border=False):
        chosen = {}
        for question in items:
            _, asks = asking.named(question.prompt)
            number = concept_check.check_of(question.prompt)[1]
            previous = mine.get(question.qid)
            chosen[question.qid] = st.radio(
                plain(f"{number}. {asks}"), question.choices,
                index=question.choices.index(previous) if previous in question.choices else None,
                key=f"class_check_{question.qid}",
            )  # fmt: skip
        sent = st.form_submit_button("Send my answers", type="primary", icon=":material/send:")
    if sent:
        try:
            for qid, value in chosen.items():
                if value is not None:
                    seats.store().answer(student.code, student.token, qid, value)
            mine = seats.store().answers_of(student.code, student.token)
            st.session_state[bar.UNSENT] = None
        except Exception as error:  # closed meanwhile, class gone
            st.error(plain(seats.problem(error)), icon=":material/error:")
            return
    done = sum(question.qid in mine for question in items)
    missing = [concept_check.check_of(q.prompt)[1] for q in items if q.qid not in mine]
    if done:
        left = (
            ""
            if not missing
            # on a phone, ten items to scroll: say which (issue 52)
            else (
                f" Not answered yet: item{'s' if len(missing) > 1 else ''} "
                + ", ".join(str(number) for number in missing)
                + "."
            )
        )
        st.success(f"Sent: {done} of {len(items)} answered.{left} You can change them until "
                   "your teacher closes the check.", icon=":material/check:")  # fmt: skip


def show_question(student: Seat, question: Question, mine: str | None) -> None:
    """The question under its lesson's name and number: an answer form while it is open, then
    the verdict once revealed."""
    name, asks = asking.named(question.prompt)
    st.subheader(name)
    st.markdown(plain(asks))
    if question.given is not None:
        show_given(question.given)
    if not question.closed:
        answer_form(student, question, mine)
    elif not question.revealed:
        said = f"Your answer: {mine}." if mine is not None else "You did not answer."
        st.info(plain(f"Your teacher closed the question. {said}"), icon=":material/lock:")
    else:
        show_verdict(question, mine)


def answer_form(student: Seat, question: Question, mine: str | None) -> None:
    """Pick a choice or type a number, then send; a later answer replaces the earlier one."""
    with st.form(f"class_answer_{question.qid}", border=False):
        if question.choices is not None:
            index = question.choices.index(mine) if mine in question.choices else None
            value = st.radio(
                "Your answer", question.choices, index=index, key=f"class_choice_{question.qid}"
            )
        else:
            value = st.text_input(
                "Your answer (a whole number)"
                if question.kind == WHOLE
                else "Your answer (a number, or a percentage)"
                if question.kind == WEIGHT
                else "Your answer (a number)",
                value=mine or "",
                max_chars=60,
                key=f"class_number_{question.qid}",
            )
        sent = st.form_submit_button("Send my answer", type="primary", icon=":material/send:")
    if sent:
        if value is None or not str(value).strip():
            st.warning("Pick or type an answer first.", icon=":material/warning:")
            return
        try:
            seats.store().answer(student.code, student.token, question.qid, value)
            mine = seats.store().answers_of(student.code, student.token).get(question.qid)
            st.session_state[bar.UNSENT] = None  # sent: Follow may take them on
            if st.session_state.get(bar.FOLLOWING):  # a view sent meanwhile waited for this
                wake.again(student.code)
        except Exception as error:  # closed meanwhile, not a number, class gone
            st.error(plain(seats.problem(error)), icon=":material/error:")
            return
    if mine is not None:
        st.success(
            plain(f"Your answer: {mine}. You can change it until your teacher closes it."),
            icon=":material/check:",
        )


def show_verdict(question: Question, mine: str | None) -> None:
    """The right answer with its working, and whether this student's answer was right."""
    if mine is None:
        st.info("You did not answer this one.", icon=":material/info:")
    elif asking.is_right(question, mine):
        st.success(plain(f"Your answer {mine} is right."), icon=":material/check_circle:")
    else:
        cause = asking.cause_of(question, mine)
        said = f" It is what {cause} gives." if cause else ""
        st.error(plain(f"Your answer {mine} is not right.{said}"), icon=":material/cancel:")
    st.markdown(f"**The answer: {plain(asking.answer_text(question))}**")
    for line in question.working:
        st.text(line)
