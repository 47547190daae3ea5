"""Issue 45 through AppTest: a teacher gives the concept check before and after, three students
take both on their laptops (ten items on one screen, sent together), and the class report shows
the figures the hand computation gives (before 20, 50, 80 %, after 60, 50, 90 %: <g> = 0.333,
c = 0.333, d = 0.80)."""

from __future__ import annotations

from conftest import as_read, no_exception
from test_app_class import button, class_db, join, start_class  # noqa: F401 (a fixture)

from attention import concepts

RIGHT_BEFORE, RIGHT_AFTER = (2, 5, 8), (6, 5, 9)


def take(student, form: str, right_up_to: int) -> None:
    """Answer every item on the student's screen: right up to an item, then a wrong choice."""
    student.run()
    radios = [r for r in student.radio if str(r.key).startswith("class_check_")]
    assert len(radios) == 10, [r.label for r in student.radio]
    for radio, item in zip(radios, concepts.FORMS[form], strict=True):
        assert as_read(radio.label).startswith(f"{item.number}. {item.prompt[:20]}")
        radio.set_value(item.right if item.number <= right_up_to else item.wrong[0][0])
    button(student, "Send my answers").click().run()
    no_exception(student)
    assert any("Sent: 10 of 10 answered" in s.value for s in student.success)


def figures_shown(teacher) -> dict[str, str]:
    summary = next(t.value for t in teacher.table if "figure" in t.value.columns)
    return dict(zip(summary["figure"], summary["value"], strict=True))


def test_a_class_takes_the_check_before_and_after_and_the_report_gives_the_gain():
    teacher, code = start_class()
    students = [join(code, name) for name in ("Ada", "Bo", "Cy")]
    teacher.button(key="class_check_before").click().run()
    no_exception(teacher)
    assert any(h.value.startswith("Concept check, before") for h in teacher.subheader)
    # while it is open, neither check can be given again (its items would be asked twice)
    assert teacher.button(key="class_check_before").disabled
    assert teacher.button(key="class_check_after").disabled
    for student, up_to in zip(students, RIGHT_BEFORE, strict=True):
        take(student, "A", up_to)
    teacher.run()
    answered = next(m.value for m in teacher.metric if m.label == "Answered every item")
    assert answered == "3 of 3 joined"
    teacher.button(key="class_close_check").click().run()
    no_exception(teacher)
    students[0].run()
    assert any("is closed: thank you" in i.value for i in students[0].info)
    assert not teacher.button(key="class_check_after").disabled
    teacher.button(key="class_check_after").click().run()
    for student, up_to in zip(students, RIGHT_AFTER, strict=True):
        take(student, "B", up_to)
    teacher.run()
    teacher.button(key="class_close_check").click().run()  # the figures once closed
    no_exception(teacher)
    figures = figures_shown(teacher)
    assert figures["students who took both"] == "3"
    assert figures["class gain <g> (Hake)"] == "0.333"
    assert figures["mean normalized change c (Marx & Cummings)"] == "0.333"
    assert figures["Cohen's d_z, paired (mean change / its spread)"] == "0.8"
    shown = " ".join(str(d.value.to_csv()) for d in teacher.table)
    assert "Ada" not in shown and "Bo" not in shown  # seats, never names


def test_a_learner_alone_takes_both_checks_on_the_home_page_and_sees_their_own_change(
    monkeypatch, tmp_path
):
    """Issue 45, item 4: form A, then form B, on the home page; the answers kept in the store
    under the learner's token (as progress is); per concept right before and after, and the
    learner's c: before 50 % (items 1-5), after 80 % (items 1-8): c = 30 / 50 = 0.60."""
    from conftest import open_page

    from dashboard.classroom.learners import ProgressStore

    url = f"sqlite:///{tmp_path / 'progress.db'}"
    monkeypatch.setenv("ATTENTION_CLASS_DB", url)
    at = open_page("pages/home.py")
    no_exception(at)
    for when, form, up_to in (("before", "A", 5), ("after", "B", 8)):
        at.button_group(key="self_check_when").set_value(when).run()
        for item in concepts.FORMS[form]:
            chosen = item.right if item.number <= up_to else item.wrong[0][0]
            at.radio(key=f"self_check_{when}_{item.number}").set_value(chosen)
        button(at, "Keep my answers").click().run()
        no_exception(at)
        assert any(
            f"10 of 10 answered; {up_to} of the 10 right ({10 * up_to} %)" in s.value
            for s in at.success
        )
    kept = ProgressStore(url).progress_of(at.session_state["learner_token"])
    assert kept["concept:before:5"] == concepts.FORMS["A"][4].right
    assert kept["concept:after:9"] == concepts.FORMS["B"][8].wrong[0][0]
    said = " ".join(m.value for m in at.markdown)
    assert "**Your before and after**: 50 % then 80 %; your normalized change c = 0.60." in said
    table = next(d.value for d in at.dataframe if "concept" in d.value.columns)
    row = table.set_index("concept").loc["how heads split the columns"]  # item 6
    assert (row["before"], row["after"]) == ("not yet", "right")
    at.run()  # the progress list, drawn above the check, now has it (it listed nothing)
    assert "**The concept check**: taken before and after" in " ".join(m.value for m in at.markdown)


def test_the_check_given_again_needs_a_confirmation_and_the_report_says_which_it_read():
    """Issue 51, item 4 (two classroom trials): giving a form a second time silently replaced
    the students' before-answers. Now the forms given are listed with when; the after-check
    waits for a closed check before; giving a form again first says what it replaces; the
    report reads the latest giving and says so."""
    teacher, code = start_class()
    students = [join(code, name) for name in ("Ada", "Bo", "Cy")]
    after = teacher.button(key="class_check_after")
    assert after.disabled and "close it, first" in after.help  # nothing given before yet
    teacher.button(key="class_check_before").click().run()
    said = " ".join(as_read(c.value) for c in teacher.caption)
    assert "Concept check, before: given " in said and "(open)" in said
    assert teacher.button(key="class_check_after").disabled  # still open
    for student in students:
        take(student, "A", 10)  # everyone right: the giving the teacher then regrets
    teacher.run()
    teacher.button(key="class_close_check").click().run()
    assert not teacher.button(key="class_check_after").disabled
    teacher.button(key="class_check_before").click().run()  # again: a confirmation, no ask
    no_exception(teacher)
    asked = [h.value for h in teacher.subheader if h.value.startswith("Concept check")]
    assert not any("(open)" in h for h in asked)
    shown = " ".join(as_read(m.value) for m in teacher.markdown)
    assert "was given already" in shown and "no longer count" in shown
    button(teacher, "Cancel").click().run()
    assert "was given already" not in " ".join(as_read(m.value) for m in teacher.markdown)
    teacher.button(key="class_check_before").click().run()
    button(teacher, "Give it again").click().run()
    no_exception(teacher)
    for student, up_to in zip(students, RIGHT_BEFORE, strict=True):
        take(student, "A", up_to)
    teacher.run()
    teacher.button(key="class_close_check").click().run()
    said = " ".join(as_read(c.value) for c in teacher.caption)
    assert said.count("Concept check, before: given ") == 1 and ", then " in said
    teacher.button(key="class_check_after").click().run()
    for student, up_to in zip(students, RIGHT_AFTER, strict=True):
        take(student, "B", up_to)
    teacher.run()
    teacher.button(key="class_close_check").click().run()  # the figures once closed
    no_exception(teacher)
    figures = figures_shown(teacher)
    assert figures["mean before, %"] == "50.0"  # the second giving's 20, 50, 80 %, not 100 %
    assert figures["class gain <g> (Hake)"] == "0.333"
    said = " ".join(as_read(c.value) for c in teacher.caption)
    assert "given 2 times: the latest" in said


def test_the_check_in_a_one_lecture_class_warns_that_its_answers_go_with_the_lecture():
    """Issue 51, item 4: a check before given in a class that lives 12 hours is gone before an
    after-check a week later; the teacher is told before giving it (a course is not warned)."""
    lecture, _ = start_class()
    warned = " ".join(w.value for w in lecture.warning)
    assert "one lecture's" in warned and "12 hours" in warned
    from test_app_class import open_class

    course = open_class()
    course.radio(key="class_lifetime").set_value(30 * 86400).run()
    button(course, "Start a class").click().run()
    assert "one lecture's" not in " ".join(w.value for w in course.warning)


def test_what_the_class_learned_leads_the_report_as_tables_a_person_reads_and_two_charts():
    """Issue 52, items 1-4: the figures under their own heading, first in the report, without
    a toggle; each table titled, shown whole (a table, not a grid that hides its last row),
    percentages one way ("67 %"), "undefined" never "None", misconceptions most held before
    first; each student's before and after on screen; two charts; a CSV of integers."""
    teacher, code = start_class()
    students = [join(code, name) for name in ("Ada", "Bo", "Cy")]
    teacher.button(key="class_check_before").click().run()
    for student, up_to in zip(students, (10, 10, 10), strict=True):
        take(student, "A", up_to)  # 100 % before: no room to gain, <g> undefined
    teacher.run()
    assert any("appears here once the concept check" in c.value for c in teacher.caption)
    teacher.button(key="class_close_check").click().run()
    teacher.button(key="class_check_after").click().run()
    for student, up_to in zip(students, RIGHT_AFTER, strict=True):
        take(student, "B", up_to)
    teacher.run()
    teacher.button(key="class_close_check").click().run()  # the figures once closed
    no_exception(teacher)
    headings = [m.value for m in teacher.markdown if m.value.startswith(("####", "**"))]
    first = headings.index("#### What the class learned")
    assert headings[first + 1 :][:5] == [
        "**The class's figures**", "**Each student, by seat**", "**Right per concept**",
        "**Misconceptions held (a wrong choice that shows it, at least once)**",
        "**Per item: difficulty and discrimination**",
    ]  # fmt: skip
    tables = [t.value for t in teacher.table]
    text = " ".join(t.to_csv() for t in tables)
    assert "None" not in text and "nan" not in text.lower() and "%" in text
    seats = next(t for t in tables if "seat" in t.columns)
    assert list(seats["seat"]) == ["1", "2", "3"]
    assert list(seats["before"]) == ["100 %"] * 3 and list(seats["after"]) == [
        "60 %",
        "50 %",
        "90 %",
    ]
    assert list(seats["normalized change c"]) == ["-0.4", "-0.5", "-0.1"]  # (post - pre) / pre
    assert figures_shown(teacher)["class gain <g> (Hake)"] == "undefined"  # 100 % before
    held = next(t for t in tables if "misconception" in t.columns)
    before = [int(v.removesuffix(" %")) for v in held["held before"]]
    assert before == sorted(before, reverse=True)
    assert all(name[0].isupper() for name in held["misconception"])
    import json

    titles = [json.loads(c.proto.spec).get("title") for c in teacher.get("vega_lite_chart")]
    assert "Right per concept, before and after the course" in titles
    assert "Each student, before → after (by seat)" in titles
    assert [b.label for b in teacher.get("download_button")].count(
        "Download the concept check (CSV)"
    ) == 1


def test_a_student_who_left_an_item_is_told_which():
    """Issue 52, item 12: "Sent: 9 of 10 answered" did not say which item is missing."""
    teacher, code = start_class()
    (student,) = [join(code, "Ada")]
    teacher.button(key="class_check_before").click().run()
    student.run()
    radios = [r for r in student.radio if str(r.key).startswith("class_check_")]
    for radio, item in zip(radios, concepts.FORMS["A"], strict=True):
        if item.number not in (4, 10):
            radio.set_value(item.right)
    button(student, "Send my answers").click().run()
    no_exception(student)
    said = " ".join(s.value for s in student.success)
    assert "Sent: 8 of 10 answered. Not answered yet: items 4, 10." in said


def test_answered_every_item_counts_students_not_the_least_answered_item():
    """The review: "Answered every item" read the smallest count of any item. Two students who
    each answered half the items are 0 who answered every item (the old figure said 1)."""
    teacher, code = start_class()
    students = [join(code, name) for name in ("Ada", "Bo")]
    teacher.button(key="class_check_before").click().run()
    for student, half in zip(students, ((1, 5), (6, 10)), strict=True):
        student.run()
        radios = [r for r in student.radio if str(r.key).startswith("class_check_")]
        for radio, item in zip(radios, concepts.FORMS["A"], strict=True):
            if half[0] <= item.number <= half[1]:
                radio.set_value(item.right)
        button(student, "Send my answers").click().run()
    teacher.run()
    answered = next(m.value for m in teacher.metric if m.label == "Answered every item")
    assert answered == "0 of 2 joined"
