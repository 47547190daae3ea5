"""Class mode through AppTest, from the entry file: a teacher and students, each an AppTest
session, on one real SQLite store (ATTENTION_CLASS_DB in tmp_path)."""

from __future__ import annotations

import logging
import re

import pyarrow as pa
import pytest
from conftest import APP, as_read, no_exception
from streamlit.testing.v1 import AppTest

from dashboard.classroom.database import dispose_engine
from dashboard.controls import Settings
from dashboard.text import plain


@pytest.fixture(autouse=True)
def class_db(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'classroom.db'}"
    monkeypatch.setenv("ATTENTION_CLASS_DB", url)
    yield url
    dispose_engine(url)


def open_class(**params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page("pages/class.py")
    at.run()
    no_exception(at)
    return at


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from walk(child)


def everything_shown(at: AppTest) -> str:
    """Every element the session drew, as its protobuf text (labels, values, links, HTML)."""
    return "\n".join(str(n.proto) for n in walk(at._tree) if getattr(n, "proto", None))


def start_class() -> tuple[AppTest, str]:
    teacher = open_class()
    button(teacher, "Start a class").click().run()
    no_exception(teacher)
    return teacher, teacher.metric[0].value


def join(code: str, nickname: str = "", link: bool = True) -> AppTest:
    student = open_class(join=code) if link else open_class()
    if not link:
        student.text_input(key="class_code_typed").input(code)
    if nickname:
        student.text_input(key="class_nickname").input(nickname)
    button(student, "Join").click().run()
    no_exception(student)
    return student


def teacher_token(teacher: AppTest) -> str:
    private = next(c.value for c in teacher.code if "teacher=" in c.value)
    return private.split("teacher=")[1].split(".", 1)[1]


def ask(teacher: AppTest, lesson: str, number: int) -> None:
    teacher.selectbox(key="class_ask_lesson").set_value(lesson).run()
    teacher.selectbox(key=f"class_ask_pick_{lesson}").set_value(number).run()
    teacher.button(key="class_ask").click().run()
    no_exception(teacher)


def answer(student: AppTest, value: str) -> None:
    student.run()
    if student.radio and any(r.label == "Your answer" for r in student.radio):
        next(r for r in student.radio if r.label == "Your answer").set_value(value)
    else:
        next(t for t in student.text_input if t.label.startswith("Your answer")).input(value)
    button(student, "Send my answer").click().run()
    no_exception(student)


def tally(teacher: AppTest) -> dict[str, int]:
    """The projector's chart, read back: answer -> students."""
    teacher.run()
    (chart,) = teacher.get("arrow_vega_lite_chart") + teacher.get("vega_lite_chart")
    (dataset,) = chart.proto.datasets
    frame = pa.ipc.open_stream(dataset.data.data).read_pandas()
    return dict(zip(frame["answer"], frame["students"], strict=True))


def answered(teacher: AppTest) -> str:
    return next(m.value for m in teacher.metric if m.label == "Answered")


SHAPE = "pages/multi_head.py"  # question 3 is a shape: four choices, one right


def shape_choices(student: AppTest) -> tuple[list[str], str]:
    student.run()
    choices = list(next(r for r in student.radio if r.label == "Your answer").options)
    return choices, choices[0]


def cookie_ages(at: AppTest) -> dict[str, int]:
    """The seat cookies this run wrote (name: max-age seconds), read from their script."""
    found = {}
    for html in at.get("html"):
        written = re.search(r"(attention_\w+)=[^;]*; path=/; max-age=(\d+)", str(html.proto))
        if written:
            found[written[1]] = int(written[2])
    return found


@pytest.mark.parametrize(("choice", "seconds"), [(None, 12 * 3600), ("course", 30 * 86400)])
def test_class_a_course_keeps_its_seats_for_weeks_and_a_lecture_for_a_day(choice, seconds):
    """Issue 45: the check before the course and the one after pair by seat, so a class taught
    over several lectures is started as a course; its seat cookies last 30 days (a lecture's
    12 hours), and the teacher's screen says which it is."""
    teacher = open_class()
    lifetimes = teacher.radio(key="class_lifetime")
    assert lifetimes.value == 12 * 3600  # a lecture unless the teacher chooses
    if choice:
        lifetimes.set_value(30 * 86400).run()
    button(teacher, "Start a class").click().run()
    no_exception(teacher)
    assert cookie_ages(teacher) == {"attention_teacher": seconds}
    said = " ".join(c.value for c in teacher.caption)
    assert ("This class is a course" in said) == bool(choice)
    student = join(teacher.metric[0].value)
    assert cookie_ages(student) == {"attention_student": seconds}


def test_class_the_teacher_adds_their_laptop_by_its_code_not_by_the_private_link():
    """Issue 42, item 7: the private link lived only on the projector's page. The laptop now
    shows a code; the teacher types it on the projector; the laptop runs the class, and the
    projector never showed a link for it."""
    projector, code = start_class()
    laptop = open_class()
    laptop.button(key="class_device_ask").click().run()
    no_exception(laptop)
    (shown,) = [m.value for m in laptop.metric if m.label == "Code for this screen"]
    box = next(t for t in projector.text_input if t.label == "The code that screen shows")
    box.input("WRONG-CODE")
    button(projector, "Add that screen").click().run()
    assert any("No screen is waiting" in e.value for e in projector.error)
    box = next(t for t in projector.text_input if t.label == "The code that screen shows")
    box.input(shown.lower())
    button(projector, "Add that screen").click().run()
    no_exception(projector)
    assert any("Added" in m.value for m in projector.success)
    laptop.run()  # its next tick
    no_exception(laptop)
    assert laptop.metric[0].label == "Class code" and laptop.metric[0].value == code
    assert cookie_ages(laptop) == {"attention_teacher": 12 * 3600}
    ask(laptop, "pages/multi_head.py", 0)  # the laptop runs the class: it asks
    projector.run()
    assert any("question 1" in h.value.lower() for h in projector.subheader), "the tally"


def test_class_start_shows_the_code_the_link_and_the_qr_code():
    teacher, code = start_class()
    assert len(code) == 6
    assert f"/class?join={code}" in " ".join(c.value for c in teacher.code)
    assert teacher.get("image"), "the QR code"
    assert "attention_teacher" in cookie_ages(teacher), "the cookie that keeps the seat"
    # the private link is inside a closed expander with a warning, nowhere else
    (expander,) = [e for e in teacher.expander if "private teacher link" in e.label]
    token = teacher_token(teacher)
    assert token in str(expander.proto) or any(token in c.value for c in expander.code)
    outside = [c.value for c in teacher.code if token in c.value]
    assert len(outside) == 1


def test_class_student_view_never_shows_the_teacher_token():
    teacher, code = start_class()
    token = teacher_token(teacher)
    student = join(code, "Ada")
    ask(teacher, SHAPE, 2)
    student.run()
    assert token not in everything_shown(student)
    assert student.get("image") == [], "no QR code, no teacher link on a laptop"


def test_class_join_by_typing_the_code_in_any_case():
    _, code = start_class()
    student = join(f" {code.lower()[:3]}-{code.lower()[3:]} ", link=False)
    assert any(f"Class {code}" in s.value for s in student.subheader)


def test_class_join_with_an_unknown_code_says_so():
    start_class()
    student = join("ZZZZZZ")
    assert any("No class has that code" in e.value for e in student.error)


def test_class_join_with_an_empty_code_asks_for_one():
    student = open_class()
    button(student, "Join").click().run()
    no_exception(student)
    assert any("Type the class code" in e.value for e in student.error)


def test_class_nickname_markup_is_shown_as_text():
    _, code = start_class()
    student = join(code, "<b>Zoë</b> **bold** [x](http://e.vil)")
    (said,) = [m.value for m in student.markdown if "You joined as" in m.value]
    assert plain("<b>Zoë</b> **bold** [x](http://e.vil)") in said
    assert "<b>" not in said


def test_class_joining_twice_from_one_browser_is_one_student():
    teacher, code = start_class()
    student = join(code)
    student.query_params["join"] = code  # the join link again, in the same session
    student.switch_page("pages/class.py").run()
    no_exception(student)
    teacher.run()
    assert any(m.label == "Students joined" and m.value == "1" for m in teacher.metric)


def test_class_ask_answer_and_tally_counts():
    teacher, code = start_class()
    students = [join(code) for _ in range(3)]
    ask(teacher, SHAPE, 2)
    choices, _ = shape_choices(students[0])
    for student, value in zip(students, [choices[0], choices[0], choices[1]], strict=True):
        answer(student, value)
    counts = tally(teacher)
    assert counts[choices[0]] == 2 and counts[choices[1]] == 1 and sum(counts.values()) == 3
    assert answered(teacher) == "3 of 3 joined"


def test_class_changed_answer_counts_once():
    teacher, code = start_class()
    student = join(code)
    ask(teacher, SHAPE, 2)
    choices, _ = shape_choices(student)
    answer(student, choices[0])
    answer(student, choices[1])
    counts = tally(teacher)
    assert counts[choices[0]] == 0 and counts[choices[1]] == 1
    assert answered(teacher) == "1 of 1 joined"


def test_class_numeric_answers_are_tallied_as_numbers():
    teacher, code = start_class()
    first, second = join(code), join(code)
    ask(teacher, "pages/kv_cache.py", 0)
    answer(first, "3904")
    answer(second, "3 904,0")  # what the drills read: a space, a decimal comma
    assert tally(teacher) == {"3904": 2}


def test_class_closed_question_refuses_answers():
    teacher, code = start_class()
    student = join(code)
    ask(teacher, SHAPE, 2)
    student.run()
    choices, _ = shape_choices(student)
    teacher.button(key="class_close").click().run()
    # the student's screen still shows the form (its next poll would hide it): send anyway
    next(r for r in student.radio if r.label == "Your answer").set_value(choices[0])
    button(student, "Send my answer").click().run()
    no_exception(student)
    assert not any(b.label == "Send my answer" for b in student.button)
    assert any("closed the question" in i.value for i in student.info)
    assert answered(teacher) == "0 of 1 joined"


def test_class_reveal_shows_each_student_right_or_wrong():
    teacher, code = start_class()
    first, second, silent = join(code), join(code), join(code)
    ask(teacher, SHAPE, 2)
    choices, _ = shape_choices(first)
    answer(first, choices[0])
    answer(second, choices[1])
    teacher.button(key="class_reveal").click().run()
    no_exception(teacher)
    shown = next(s.value for s in teacher.success if "The answer" in s.value)
    truth = next(c for c in choices if plain(c) in shown)
    assert tally(teacher)[truth] == (truth in choices[:2])
    verdicts = []
    for student, given in ((first, choices[0]), (second, choices[1])):
        student.run()
        no_exception(student)
        if given == truth:
            verdicts.append(any("is right" in s.value for s in student.success))
        else:
            verdicts.append(any("is not right" in e.value for e in student.error))
        assert any(plain(truth) in m.value for m in student.markdown)
        assert student.text, "the working"
    assert verdicts == [True, True]
    silent.run()
    assert any("did not answer" in i.value for i in silent.info)


def test_class_follow_the_teacher_shows_where_and_follows_with_the_settings():
    teacher, code = start_class()
    student = join(code)
    teacher.slider(key="T").set_value(9).run()
    teacher.selectbox(key="class_send_page").set_value(2).run()  # 2 · Multi-head
    teacher.button(key="class_send").click().run()
    no_exception(teacher)
    student.run()
    said = [as_read(m.value) for m in student.markdown if "Your teacher is on" in m.value]
    assert said and "Multi-head" in said[0]
    assert student.slider(key="T").value == 6
    student.toggle(key="class_follow").set_value(True).run()
    no_exception(student)
    assert any("Multi-head" in t.value for t in student.title)
    assert student.slider(key="T").value == 9  # the teacher's setting, not the student's


def test_class_follow_survives_the_switch_losing_its_widget_state():
    """The student's choice outlives the switch's widget state, which Streamlit 1.67 may drop
    during a fragment's timed reruns (streamlit#10805): the switch is drawn on again and the
    next view sent is followed."""
    teacher, code = start_class()
    student = join(code)
    student.toggle(key="class_follow").set_value(True).run()
    student.session_state["class_follow"] = False  # the state dropped: the switch's default
    student.run()
    assert student.toggle(key="class_follow").value is True
    teacher.button(key="class_send").click().run()  # 1 · Step by step
    student.session_state["class_follow"] = False
    student.run()
    no_exception(student)
    assert any("Step by step" in t.value for t in student.title)


def test_class_follow_switched_off_by_the_student_stays_off():
    teacher, code = start_class()
    student = join(code)
    student.toggle(key="class_follow").set_value(True).run()
    student.toggle(key="class_follow").set_value(False).run()  # the student's own click
    teacher.button(key="class_send").click().run()
    student.run()
    no_exception(student)
    assert student.toggle(key="class_follow").value is False
    assert not any("Step by step" in t.value for t in student.title)  # still on the class page


def test_class_follow_logs_no_widget_state_warning(monkeypatch):
    """Following sets the sidebar's widgets from code (issue 29, item 13): the server's log
    stays free of Streamlit's default-value-and-session-state warning."""
    from streamlit.elements.lib import policies

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger(policies.__name__)
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    logger.addHandler(handler)
    try:
        teacher, code = start_class()
        student = join(code)
        teacher.slider(key="T").set_value(9).run()
        teacher.button(key="class_send").click().run()
        student.toggle(key="class_follow").set_value(True).run()
        assert student.slider(key="T").value == 9
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage() for r in records if "default value" in r.getMessage()] == []


def test_class_go_there_opens_the_teachers_view():
    teacher, code = start_class()
    student = join(code)
    teacher.button(key="class_send").click().run()  # 1 · Step by step
    student.run()
    student.button(key="class_go").click().run()
    no_exception(student)
    assert any("Step by step" in t.value for t in student.title)


def test_class_end_deletes_the_class_for_everyone():
    teacher, code = start_class()
    student = join(code)
    teacher.button(key="class_end_now").click().run()
    no_exception(teacher)
    assert any("has ended" in s.value for s in teacher.success)
    assert any(b.label == "Start a class" for b in teacher.button)
    student.run()
    no_exception(student)
    assert any(f"Class {code} has ended" in i.value for i in student.info)
    assert any(b.label == "Join" for b in student.button)


def test_class_private_link_opens_the_class_and_leaves_the_address_bar():
    teacher, code = start_class()
    token = teacher_token(teacher)
    other = open_class(teacher=f"{code}.{token}")
    assert other.metric[0].value == code
    assert "teacher" not in other.query_params


def test_class_wrong_teacher_link_is_refused_with_a_message():
    _, code = start_class()
    other = open_class(teacher=f"{code}.{'x' * 43}")
    assert other.error and not any(m.label == "Class code" for m in other.metric)
    # issue 28 item 12: it says the teacher link is wrong and what to do, not "not a student"
    said = " ".join(e.value for e in other.error)
    assert "teacher link is not valid" in said and "start a new one" in said, said
    assert "student" not in said, said


def test_class_rate_limit_is_a_clear_message(class_db, monkeypatch):
    from dashboard.classroom import seat

    _, code = start_class()
    student = open_class(join=code)
    monkeypatch.setattr(seat.store_for(class_db), "misses_per_minute", 0)  # always over
    button(student, "Join").click().run()
    no_exception(student)
    assert any("try again in a minute" in e.value for e in student.error)


ENDED = (
    "Class {} has ended (your teacher ended it, or it expired: 12 hours without activity for a "
    "lecture, 30 days for a course). Join another with a new code."
)


def page_notices(at: AppTest) -> list[str]:
    """The notes in the page itself, above the lesson (a phone's sidebar is closed)."""
    return [as_read(i.value) for i in at.main.info]


def test_class_end_tells_a_student_on_a_lesson_page_once():
    teacher, code = start_class()
    follower, browser = join(code), join(code)
    teacher.button(key="class_send").click().run()  # 1 · Step by step
    follower.run()
    follower.toggle(key="class_follow").set_value(True).run()
    assert any("Step by step" in t.value for t in follower.title)
    browser.switch_page(SHAPE).run()
    no_exception(browser)
    teacher.button(key="class_end_now").click().run()
    for student, page in ((follower, "pages/step_by_step.py"), (browser, SHAPE)):
        student.switch_page(page).run()  # the student's next rerun, on the lesson page
        no_exception(student)
        assert any(ENDED.format(code) in said for said in page_notices(student))
        assert not any("Follow my teacher" in t.label for t in student.toggle)
        student.switch_page(page).run()  # said once, not on every rerun
        assert not any("has ended" in said for said in page_notices(student))


def test_class_end_tells_a_student_on_the_class_page_it_ended():
    teacher, code = start_class()
    student = join(code)
    teacher.button(key="class_end_now").click().run()
    student.run()
    no_exception(student)
    assert [as_read(i.value) for i in student.info if "ended" in i.value] == [ENDED.format(code)]
    assert not any("No class has that code" in i.value for i in student.info)
    student.text_input(key="class_code_typed").input("ZZZZZZ")  # a code typed by hand
    button(student, "Join").click().run()
    no_exception(student)
    assert any("No class has that code" in e.value for e in student.error)
    assert not any("has ended" in i.value for i in student.info)


def test_class_join_link_with_an_unknown_code_says_so_at_once():
    _, code = start_class()
    student = open_class(join="ZZZZZZ")
    assert any("No class has that code" in e.value for e in student.error)
    assert any(b.label == "Join" for b in student.button), "the form stays, to fix the code"
    live = open_class(join=code)
    assert not live.error


def test_class_join_link_while_rate_limited_is_a_clear_message(class_db, monkeypatch):
    from dashboard.classroom import seat

    _, code = start_class()
    monkeypatch.setattr(seat.store_for(class_db), "misses_per_minute", 0)  # always over
    for typed in ("ZZZZZZ", code):  # a live code is refused alike: no oracle
        student = open_class(join=typed)
        (said,) = [e.value for e in student.error]
        assert "try again in a minute" in said and "No class has that code" not in said


def shown_section(at: AppTest) -> str | None:
    """The "2 / 5" of presenter mode's navigation row; None outside presenter mode."""
    return next(
        (m.value.strip("*") for m in at.markdown if re.fullmatch(r"\*\*\d+ / \d+\*\*", m.value)),
        None,
    )


def test_class_presenting_teacher_sends_each_section_and_followers_see_it():
    """Issue 42, item 5: presenter mode hides the sidebar, so the teacher presenting could not
    send a view, and followers stayed on the whole lesson. Now a row above the section sends
    it; each section turned to is sent too; a follower sees it in presenter mode; a view sent
    later from the laptop takes them out of presenter mode again."""
    teacher, code = start_class()
    student = join(code)
    student.toggle(key="class_follow").set_value(True).run()
    teacher.query_params["present"] = "1"
    teacher.switch_page("pages/multi_head.py").run()
    no_exception(teacher)
    assert shown_section(teacher).startswith("1 / ")
    teacher.button(key="class_sections_send").click().run()
    no_exception(teacher)
    student.run()
    no_exception(student)
    assert shown_section(student) == shown_section(teacher)
    assert not student.title  # the section alone, as on the projector
    for turn in (2, 3):
        teacher.button(key="present_next").click().run()
        no_exception(teacher)
        student.run()
        no_exception(student)
        assert shown_section(student).startswith(f"{turn} / ") and shown_section(teacher) == (
            shown_section(student)
        )
    teacher.button(key="class_sections_stop").click().run()
    teacher.button(key="present_prev").click().run()  # not sent any more
    student.switch_page("pages/multi_head.py").run()  # (AppTest reruns the page it opened)
    assert shown_section(student).startswith("3 / ")
    teacher.button(key="present_leave").click().run()
    teacher.button(key="class_send_here").click().run()  # from the sidebar, not presenting
    student.switch_page("pages/class.py").run()
    no_exception(student)
    assert shown_section(student) is None
    assert any("Multi-head" in t.value for t in student.title)


def test_class_sending_a_presented_section_from_its_link_sends_the_links_settings_once(
    monkeypatch,
):
    """The teacher opens a presenter link with its own settings (T = 9) and at once presses
    *Send this section to the class*: the class is sent that section at T = 9, once. The button
    was drawn before the sidebar had the link's settings, and sent T = 6 (the default) first,
    then T = 9 as the click's run drew the bar: the followers had both."""
    from dashboard.classroom import ClassStore

    sent: list[str] = []
    send_view = ClassStore.send_view
    monkeypatch.setattr(ClassStore, "send_view", lambda store, code, token, url: (
        sent.append(url), send_view(store, code, token, url))[1])  # fmt: skip
    started, _ = start_class()
    teacher = AppTest.from_file(APP, default_timeout=60)  # a new tab: the link's first run
    teacher.session_state["class_teacher_seat"] = started.session_state["class_teacher_seat"]
    teacher.query_params.update({"T": "9", "present": "1"})
    teacher.switch_page("pages/masking.py").run()
    no_exception(teacher)
    teacher.button(key="class_sections_send").click().run()
    no_exception(teacher)
    assert [re.search(r"T=(\d+)", url)[1] for url in sent] == ["9"], sent
    assert "present=1" in sent[0] and "section=1" in sent[0]
    teacher.button(key="present_next").click().run()  # the next section, sent as turned
    assert len(sent) == 2 and "T=9" in sent[1] and "section=2" in sent[1], sent


def test_class_follower_on_the_sent_view_is_told_they_are_there():
    teacher, code = start_class()
    student = join(code)
    teacher.slider(key="T").set_value(9).run()
    teacher.button(key="class_send").click().run()  # 1 · Step by step, T=9
    student.run()
    assert student.button(key="class_go")  # on the class page: not there yet
    student.toggle(key="class_follow").set_value(True).run()
    student.switch_page("pages/step_by_step.py").run()  # the next rerun, on the lesson
    no_exception(student)
    assert any("Step by step" in t.value for t in student.title)
    assert not any(b.key == "class_go" for b in student.button)
    assert any("You are there" in c.value for c in student.sidebar.caption)
    student.switch_page(SHAPE).run()  # browsing away: the button is back
    no_exception(student)
    assert any(b.key == "class_go" for b in student.button)


def test_class_diagnostic_tally_names_the_mistake_behind_each_wrong_answer():
    """Lesson 1's diagnostic at the defaults: its choices are the right weight and the numbers
    the catalogue's mistakes give; after the reveal each wrong bar, the teacher's list and the
    student's verdict name the mistake."""
    from dashboard.classroom import asking
    from dashboard.controls import Settings

    question = next(
        q for q in asking.lesson_questions("pages/step_by_step.py", Settings()) if q.mistakes
    )
    number = asking.lesson_questions("pages/step_by_step.py", Settings()).index(question)
    teacher, code = start_class()
    students = [join(code) for _ in range(3)]
    ask(teacher, "pages/step_by_step.py", number)
    choices, _ = shape_choices(students[0])
    assert set(choices) == {question.answer, *(c for c, _ in question.mistakes)}
    wrong, (_, title) = question.mistakes[0][0], question.mistakes[0][1][0]
    for student, value in zip(students, [wrong, wrong, question.answer], strict=True):
        answer(student, value)
    teacher.button(key="class_reveal").click().run()
    no_exception(teacher)
    named = title[0].lower() + title[1:]
    assert tally(teacher)[f"{wrong} · {named}"] == 2
    said = " ".join(as_read(m.value) for m in teacher.markdown)
    assert f"{title}: 2 students ({wrong})" in said
    links = [(link.label, link.page) for link in teacher.get("page_link")]
    assert (f"Show it: {title}", "bug_hunt") in [(label, page) for label, page in links]
    students[0].run()
    assert any(named in as_read(e.value) for e in students[0].error)


def test_class_diagnostic_asked_typed_names_a_typed_answer_a_mistake_gives():
    """The teacher's switch asks a diagnostic as a typed number: the class types; after the
    reveal the bar of the answers a mistake gives (grouped within the grader's tolerance) is
    named after it, and so is the student's verdict."""
    from attention.drills import f4
    from dashboard.classroom import asking
    from dashboard.controls import Settings

    typed = asking.lesson_questions("pages/step_by_step.py", Settings(), choices=False)
    question = next(q for q in typed if q.mistakes)
    number = typed.index(question)
    teacher, code = start_class()
    teacher.toggle(key="class_ask_choices").set_value(False).run()
    teacher.selectbox(key="class_ask_lesson").set_value("pages/step_by_step.py").run()
    teacher.selectbox(key="class_ask_pick_pages/step_by_step.py").set_value(number).run()
    assert not any(c.value.startswith("Choices:") for c in teacher.caption)
    teacher.button(key="class_ask").click().run()
    no_exception(teacher)
    students = [join(code) for _ in range(3)]
    wrong, named = question.mistakes[0]
    near = f4(float(wrong) + 0.002)
    for student, value in zip(students, [wrong, near, f4(float(question.answer))], strict=True):
        answer(student, value)
    teacher.button(key="class_reveal").click().run()
    no_exception(teacher)
    title = named[0][1]
    words = title[0].lower() + title[1:]
    counts = tally(teacher)
    assert [n for bar, n in counts.items() if bar.endswith(f" · {words}")] == [2], counts
    said = " ".join(as_read(m.value) for m in teacher.markdown)
    assert f"{title}: 2 students ({wrong})" in said
    students[1].run()
    assert any(words in as_read(e.value) for e in students[1].error)


def test_class_view_is_described_in_the_sidebars_words():
    """Issue 29, item 8: students read "T = 6, causal mask on", not "T=6, causal=true"."""
    from dashboard.classroom.bar import PAGES, describe

    said = describe(PAGES["masking"], {"src": "sentence", "T": "6", "causal": "true", "pad": "2"})
    assert said == "3 · Masking (input X: sentence, T = 6, causal mask on, pad = 2)"
    assert "=true" not in said and "src" not in said


def test_class_projector_puts_the_tally_first_once_a_question_is_asked():
    """Issue 29, item 6: the join card (code, link, QR) filled the first screen; once a
    question is asked the tally comes first and the card folds into an expander."""
    teacher, code = start_class()
    assert teacher.metric[0].label == "Class code"
    ask(teacher, SHAPE, 2)
    teacher.run()
    no_exception(teacher)
    assert teacher.main.subheader[0].value == "2 · Multi-head, question 3 (open)"
    (card,) = [e for e in teacher.expander if e.label.startswith("Join: class code")]
    assert code in card.label and card.get("image")


def test_class_question_has_one_numbering_the_lessons():
    """Issue 29, item 7: the projector's "Question 2 (revealed)" sat above "2 · Multi-head,
    question 3": the class's order and the lesson's. The heading is now the lesson's name and
    number on both screens, and the text below does not repeat it."""
    teacher, code = start_class()
    student = join(code)
    ask(teacher, SHAPE, 2)
    ask(teacher, SHAPE, 1)  # the class's second question, the lesson's second
    teacher.run()
    student.run()
    no_exception(teacher)
    no_exception(student)
    (heading,) = [h.value for h in teacher.main.subheader if h.value.startswith("2 ·")]
    assert heading == "2 · Multi-head, question 2 (open)"
    assert [h.value for h in student.main.subheader if h.value.startswith("2 ·")] == [
        "2 · Multi-head, question 2"
    ]
    shown = " ".join(m.value for m in student.main.markdown)
    assert "Question 2" not in shown and "2 · Multi-head, question 2" not in shown


def test_class_choice_questions_never_ask_to_type():
    """Issue 29, item 7: a choice question said "Type its sizes in order." above radio
    buttons. Every askable lesson's choice questions, at several seeds, say "give" or "pick"."""
    from dashboard.classroom import asking

    asked = 0
    for lesson in asking.ASKABLE:
        for seed in (0, 1, 2):
            for question in asking.lesson_questions(lesson.path, Settings(seed=seed)):
                if question.choices is not None:
                    asked += 1
                    assert "type" not in question.prompt.casefold(), question.prompt
    assert asked >= 10


def test_class_report_on_the_teachers_screen_names_no_student(class_db):
    """Issue 27: after the class, the teacher's report (a table and a CSV): per question the
    share right and the mistakes, and the lesson's objectives; nicknames only in the second
    download, never in the table on the projector."""
    teacher, code = start_class()
    ask(teacher, "pages/kv_cache.py", 0)
    right = join(code, "Ada")
    wrong = join(code, "Bo")
    from dashboard.classroom import ClassStore

    store = ClassStore(class_db)
    token = teacher_token(teacher)
    (asked,) = store.questions(code, token)
    answer(right, str(asked.answer))
    answer(wrong, "1")
    teacher.run()
    teacher.toggle(key="class_report").set_value(True).run()
    no_exception(teacher)
    table = next(d.value for d in teacher.table if "share right" in d.value.columns)
    row = table.iloc[0]
    assert (row["answered"], row["right"], row["share right"]) == (2, 1, "50 %")
    assert "lesson's objectives" not in table.columns  # in the CSV: on screen, a row each
    assert "Ada" not in table.to_csv() and "Bo" not in table.to_csv()
    labels = [b.label for b in teacher.get("download_button")]
    assert labels[:2] == ["Download the report (CSV)", "Download answers with nicknames (CSV)"]
    assert labels[2:] == ["Save the class to a file"]  # in End class: the class, by seat


def test_issue_42_item_7_a_teacher_link_cut_before_its_token_says_it_is_incomplete():
    """A private link cut before its secret part said "No class has that code" while the class
    was live: it now says the link is incomplete; to a class that does not exist, still none."""
    _, code = start_class()
    for cut in (code, f"{code}."):
        other = open_class(teacher=cut)
        said = " ".join(as_read(e.value) for e in other.error)
        assert "teacher link is incomplete" in said and "No class has that code" not in said
        assert not any(m.label == "Class code" for m in other.metric)
    other = open_class(teacher="ZZZ999")
    assert "No class has that code" in " ".join(as_read(e.value) for e in other.error)


def test_issue_42_item_7_the_projector_of_a_class_ended_elsewhere_says_it_ended():
    """The projector of a class the teacher ended from their laptop said "No class has that
    code... Check the code": it says the class ended, and where its report is."""
    projector, code = start_class()
    laptop = open_class(teacher=f"{code}.{teacher_token(projector)}")
    button(laptop, "End the class now").click().run()
    no_exception(laptop)
    projector.run()
    no_exception(projector)
    said = " ".join(as_read(i.value) for i in projector.info)
    assert f"Class {code} has ended" in said and "report" in said, said
    assert "Check the code" not in said


def some_answer(student: AppTest) -> str:
    """An answer the open question takes: its first choice, or a number."""
    student.run()
    choices = [r for r in student.radio if r.label == "Your answer"]
    return choices[0].options[0] if choices else "0.5"


def test_issue_42_item_4_a_follower_stays_on_an_open_question_until_they_answer():
    """With Follow on, a student on the Class page with an open question they have not answered
    was moved away when the teacher sent a view (and lost what they typed): they now stay, are
    told that the teacher is elsewhere (with Go there) and that Follow waits for their answer;
    once they send it, Follow takes them there. A student who already answered follows at once."""
    teacher, code = start_class()
    student, answered = join(code), join(code)
    for who in (student, answered):
        who.toggle(key="class_follow").set_value(True).run()
    ask(teacher, "pages/step_by_step.py", 1)
    for who in (student, answered):
        who.run()
    answer(answered, some_answer(answered))
    assert any("Your answer: 0.5" in as_read(s.value) for s in answered.success)
    teacher.button(key="class_send").click().run()
    student.run()
    no_exception(student)
    assert any(t.value == "Class" for t in student.title)  # still on the class page
    said = " ".join(as_read(c.value) for c in student.caption)
    assert "Follow waits until you send your answer" in said, said
    assert any("Your teacher is on" in m.value for m in student.markdown)
    assert any(b.label == "Go there" for b in student.button)
    answered.run()
    no_exception(answered)
    assert any("Step by step" in t.value for t in answered.title)  # answered: followed
    answer(student, some_answer(student))
    student.run()  # the follow panel's next look
    no_exception(student)
    assert any("Step by step" in t.value for t in student.title)


@pytest.mark.parametrize("kept", ["0", "1"])
def test_class_page_says_where_its_classes_live_when_the_disk_is_not_kept(kept, monkeypatch):
    """Issue 51, item 3: on a host whose disk goes when the app sleeps (Community Cloud,
    detected; here said by ATTENTION_DISK_KEPT), the start of a class and the class itself say
    so in one sentence, pointing at the file and at ATTENTION_CLASS_DB, and the class offers
    its file; where the disk is kept, neither says a word of it."""
    monkeypatch.setenv("ATTENTION_DISK_KEPT", kept)
    start = open_class()
    said = [w.value for w in start.warning if "does not keep" in w.value]
    assert len(said) == (kept == "0")
    assert all("save the class to a file" in s and "ATTENTION_CLASS_DB" in s for s in said)
    teacher, _ = start_class()
    said = [w.value for w in teacher.warning if "does not keep" in w.value]
    assert len(said) == (kept == "0")
    saves = [b for b in teacher.get("download_button") if b.label == "Save the class to a file"]
    assert len(saves) == (2 if kept == "0" else 1)  # and in End class, always


def test_class_a_presenting_follower_has_no_notes_and_is_brought_to_a_question():
    """Issue 52, items 13 and 15: followers in presenter mode could switch on the teacher's
    notes ("Ask: why a third projection, V?"), and a question asked left them a small banner to
    find. A joined student's presenter mode has no Notes; a follower is taken to the question."""
    teacher, code = start_class()
    student = join(code)
    student.toggle(key="class_follow").set_value(True).run()
    teacher.query_params["present"] = "1"
    teacher.switch_page("pages/multi_head.py").run()
    teacher.button(key="class_sections_send").click().run()
    student.run()
    no_exception(student)
    assert shown_section(student) == shown_section(teacher)
    assert teacher.toggle(key="present_notes") is not None  # the teacher's own, on the projector
    assert not [t for t in student.toggle if t.key == "present_notes"]
    import os

    from dashboard.classroom import ClassStore

    seat = teacher.session_state["class_teacher_seat"]  # asked from the laptop, as it were
    ClassStore(os.environ["ATTENTION_CLASS_DB"]).ask(code, seat.token, "Which is right?",
                                                     ["a", "b"], "a")  # fmt: skip
    student.run()  # the follow panel's next tick finds the question
    student.run()  # and takes the follower to it
    no_exception(student)
    assert shown_section(student) is None
    assert any("Which is right?" in m.value for m in student.markdown)


def test_class_a_questions_numbers_are_a_table_on_both_screens():
    """Issue 52, item 6: lesson 13's question wrote its 6 x 5 score map as one run-on sentence
    ("0 <s>: 0 b 0.2838, 1 l -0.0075, ...", nine lines on the projector). A question's numbers
    are a table under its prompt, on the projector and on the student's screen."""
    teacher, code = start_class()
    student = join(code)
    ask(teacher, "pages/cross_attention.py", 0)
    no_exception(teacher)
    student.run()
    no_exception(student)
    for screen in (teacher, student):
        tables = [t.value for t in screen.table if len(t.value.columns) >= 2]
        assert tables, "no table of the question's numbers"
        prompts = " ".join(m.value for m in screen.markdown)
        assert "The numbers:" not in prompts


def counted_follow_reads(monkeypatch) -> list[str]:
    """The class codes of every `ClassStore.follow` read from now on (the real store's reads,
    counted as they pass)."""
    from dashboard.classroom.store import ClassStore

    reads: list[str] = []
    real = ClassStore.follow

    def counted(self, code: str, token: str):
        reads.append(code)
        return real(self, code, token)

    monkeypatch.setattr(ClassStore, "follow", counted)
    return reads


def test_class_a_follower_switched_reads_the_class_once_for_the_switch_and_the_page(monkeypatch):
    """A sent view reached a follower in two reads of the store: the follow panel's, which
    switched the screen, and the same read again by the panel of the page it opened, a few
    milliseconds later. The switch's read serves that panel, once: the next run reads."""
    from dashboard.classroom import bar

    teacher, code = start_class()
    student = join(code)
    student.toggle(key="class_follow").set_value(True).run()
    reads = counted_follow_reads(monkeypatch)
    teacher.slider(key="T").set_value(9).run()
    teacher.selectbox(key="class_send_page").set_value(2).run()  # 2 · Multi-head
    teacher.button(key="class_send").click().run()
    student.run()  # the class page's panel reads, switches; the lesson's panel reads no more
    no_exception(student)
    assert any("Multi-head" in t.value for t in student.title)
    assert student.slider(key="T").value == 9
    assert len(reads) == 1  # two on the code before
    assert bar.SWITCH_READ not in student.session_state
    student.run()
    assert len(reads) == 2  # served once


def test_class_a_kept_read_too_old_or_of_another_class_is_not_used(monkeypatch):
    """The switch's read is kept for SWITCH_READ_S, for its own class: a kept read older than
    that, or of another class, is never shown (the panel reads the store instead)."""
    import time

    from dashboard.classroom import bar
    from dashboard.classroom.store import Follow, View

    teacher, code = start_class()
    student = join(code)
    teacher.slider(key="T").set_value(9).run()
    teacher.selectbox(key="class_send_page").set_value(2).run()  # 2 · Multi-head
    teacher.button(key="class_send").click().run()
    wrong = Follow(View(url="/masking?T=3", sent_at=1.0), None)  # not what the teacher sent
    for kept in (
        (code, time.monotonic() - 2 * bar.SWITCH_READ_S, wrong),
        ("OTHERCODE", time.monotonic(), wrong),
    ):
        student.session_state[bar.SWITCH_READ] = kept
        student.run()
        no_exception(student)
        said = [as_read(m.value) for m in student.markdown if "Your teacher is on" in m.value]
        assert said and "Multi-head" in said[0] and "Masking" not in said[0]


def test_class_a_follower_brought_to_a_question_reads_the_class_once_a_run(monkeypatch):
    """The question's way: a follower on a lesson is brought to the class page by its panel's
    read, and the class page's panel uses that read instead of reading again (two reads in the
    run that moved it, on the code before)."""
    import os

    from dashboard.classroom.store import ClassStore

    teacher, code = start_class()
    student = join(code)
    student.toggle(key="class_follow").set_value(True).run()
    student.switch_page("pages/step_by_step.py").run()  # on a lesson (AppTest reruns this page)
    assert any("Step by step" in t.value for t in student.title)
    reads = counted_follow_reads(monkeypatch)
    seat = teacher.session_state["class_teacher_seat"]
    ClassStore(os.environ["ATTENTION_CLASS_DB"]).ask(code, seat.token, "Which is right?",
                                                     ["a", "b"], "a")  # fmt: skip
    runs = 0
    while not any("Which is right?" in m.value for m in student.markdown) and runs < 3:
        student.run()
        no_exception(student)
        runs += 1
    assert any("Which is right?" in m.value for m in student.markdown)
    assert len(reads) == runs  # one a run; the run that moved the follower read twice before
