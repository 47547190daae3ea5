"""Class mode in real browsers through `deploy/serve --workers 2`: a teacher and three students,
each in a browser context of their own (their own cookies), on one SQLite store.

The students join (two by the link, one by typing the code), one follows the teacher
automatically and one clicks "Go there", all three answer, the projector's tally says 3 of 3, a
student whose browser is sent to the other worker (its SERVERID cookie changed) is still the
same student with the same answer, and the reveal tells each student right or wrong.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from chromium import deploy_serve

from attention.drills import f4
from dashboard.classroom import asking
from dashboard.controls import Settings

pytestmark = pytest.mark.browser

WAIT = 60_000  # ms: the suite's other worker loads the machine (two reveals took over 30 s)


@pytest.fixture(scope="module")
def class_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    env = {"ATTENTION_CLASS_DB": f"sqlite:///{folder / 'classroom.db'}"}
    with deploy_serve(folder / "serve.log", workers=2, env=env) as (url, _):
        yield url


def new_page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    return context, context.new_page()


def worker(page) -> str:
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    return cookies.get("SERVERID", "")


def join(browser, url: str, code: str, nickname: str, by_link: bool = True):
    context, page = new_page(browser)
    page.goto(f"{url}/class?join={code}" if by_link else f"{url}/class")
    if not by_link:
        page.get_by_role("textbox", name="Class code").fill(code.lower())
    page.get_by_role("textbox", name="Nickname (optional)").fill(nickname)
    page.get_by_role("button", name="Join").click()
    page.get_by_text("You joined as").wait_for(timeout=WAIT)
    return context, page


def answer(page, value: str) -> None:
    box = page.get_by_role("textbox", name="Your answer (a number)")
    box.fill(value)
    page.get_by_role("button", name="Send my answer").click()
    page.get_by_text(f"Your answer: {value}.").wait_for(timeout=WAIT)


def no_errors(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def test_browser_class_join_follow_answer_reconnect_reveal(browser, class_server):
    url = class_server
    contexts = []
    try:
        teacher_context, teacher = new_page(browser)
        contexts.append(teacher_context)
        teacher.goto(f"{url}/class")
        teacher.get_by_role("button", name="Start a class").click()
        teacher.get_by_text("Class code").wait_for(timeout=WAIT)
        code = teacher.locator('[data-testid="stMetricValue"]').first.inner_text().strip()
        assert len(code) == 6

        students = []
        for i, by_link in enumerate((True, True, False)):
            context, page = join(browser, url, code, f"student {i}", by_link)
            contexts.append(context)
            students.append(page)
        first, second, third = students
        teacher.get_by_text("Students joined").wait_for(timeout=WAIT)
        # the count, not the class code (a code may hold a 3 too)
        teacher.locator(
            '[data-testid="stMetricValue"]', has_text=re.compile(r"^\s*3\s*$")
        ).wait_for(timeout=WAIT)

        # Follow: the first student follows automatically, the second clicks "Go there"
        first.get_by_text("Follow my teacher automatically").click()
        teacher.get_by_role("button", name="Send", exact=True).click()
        first.wait_for_url("**/step_by_step**", timeout=WAIT)
        second.get_by_role("button", name="Go there").click()
        second.wait_for_url("**/step_by_step**", timeout=WAIT)
        for page in (first, second):
            page.get_by_role("heading", name="1 · Step by step").wait_for(timeout=WAIT)

        # Ask lesson 1's first question at the default settings; the right answer from the
        # same builder the teacher's page uses
        # (typed: the teacher switches the diagnostic's choices off)
        typed = asking.lesson_questions("pages/step_by_step.py", Settings(), choices=False)
        (question, *_) = typed
        right = f4(float(question.answer))
        teacher.get_by_text("Choices:").wait_for(timeout=WAIT)  # asked as choices by default
        teacher.get_by_text("Diagnostic questions as multiple choice").click()
        teacher.get_by_text("Choices:").wait_for(state="detached", timeout=WAIT)
        teacher.get_by_role("button", name="Ask the class").click()
        # away from the class page: the follower is brought to the question (issue 52, item
        # 15), the other gets a link to it
        second.get_by_role("link", name="Your teacher asked a question: answer it").click()
        for page in (first, second):
            page.wait_for_url("**/class**", timeout=WAIT)
        for page in students:
            page.get_by_role("heading", name="1 · Step by step, question 1").wait_for(timeout=WAIT)
        answer(first, right)
        answer(second, "0")
        answer(third, right)
        teacher.get_by_text("3 of 3 joined").wait_for(timeout=WAIT)

        # The second student's browser is sent to the other worker: same student, same answer
        before = worker(second)
        other = {"w1": "w2", "w2": "w1"}[before]
        second.context.add_cookies([{"name": "SERVERID", "value": other, "url": url}])
        second.goto(f"{url}/class")
        second.get_by_text("Your answer: 0.").wait_for(timeout=WAIT)
        assert worker(second) == other
        answer(second, "1")  # changes the answer: still one student
        teacher.get_by_text("3 of 3 joined").wait_for(timeout=WAIT)

        # Reveal: right or wrong on each laptop, the answer and its working everywhere
        teacher.get_by_role("button", name="Reveal").click()
        teacher.get_by_text(f"The answer: {right}").wait_for(timeout=WAIT)
        first.get_by_text(f"Your answer {right} is right.").wait_for(timeout=WAIT)
        third.get_by_text(f"Your answer {right} is right.").wait_for(timeout=WAIT)
        second.get_by_text("Your answer 1 is not right.").wait_for(timeout=WAIT)
        for page in (teacher, *students):
            # the working is drawn after the verdict, in the same run: waited for, not counted
            # the moment the verdict shows (the suite here, 2026-11-30: one page had not yet)
            page.get_by_text(question.working[0]).first.wait_for(timeout=WAIT)
            no_errors(page)

        # The teacher's token is on no student's page, and in no student's address bar
        private = teacher.locator("code", has_text="teacher=").text_content()  # closed expander
        token = private.split("teacher=")[1].split(".", 1)[1].strip()
        assert len(token) >= 43
        for page in students:
            assert token not in page.content() and token not in page.url

        # A diagnostic as multiple choice (issue 27): one student right, two choosing the
        # numbers of two different classic mistakes; the reveal names both, with a link each
        options = asking.lesson_questions("pages/step_by_step.py", Settings())
        diagnostic = max(options, key=lambda q: len(q.mistakes))
        assert len(diagnostic.mistakes) >= 2
        teacher.get_by_text("Diagnostic questions as multiple choice").click()
        teacher.get_by_text("Choices:").wait_for(timeout=WAIT)  # question 1 as choices again
        number = diagnostic.label.split(":")[0]
        for attempt in range(3):  # the live tally's rerun may close a list just opened
            teacher.locator('[data-testid="stSelectbox"]', has_text="Question").click()
            try:
                teacher.get_by_role("option", name=re.compile(f"^{number}:")).click(timeout=8000)
                break
            except Exception:
                if attempt == 2:
                    raise
        teacher.get_by_text(diagnostic.prompt[:70]).wait_for(timeout=WAIT)  # what the class reads
        teacher.get_by_text("Choices:").wait_for(timeout=WAIT)
        teacher.get_by_role("button", name="Ask the class").click()
        picks = (diagnostic.answer, diagnostic.mistakes[0][0], diagnostic.mistakes[1][0])
        for page, pick in zip(students, picks, strict=True):
            page.get_by_role("radio", name=pick, exact=True).wait_for(timeout=WAIT)
            page.get_by_role("radio", name=pick, exact=True).check(force=True)
            page.get_by_role("button", name="Send my answer").click()
            page.get_by_text(f"Your answer: {pick}.").wait_for(timeout=WAIT)
        teacher.get_by_text("3 of 3 joined").wait_for(timeout=WAIT)
        teacher.get_by_role("button", name="Reveal").click()
        teacher.get_by_text("The mistakes behind the wrong answers").wait_for(timeout=WAIT)
        for choice, named in diagnostic.mistakes[:2]:
            titles = " or ".join(title for _, title in named)
            teacher.get_by_text(f"{titles}: 1 student ({choice})").wait_for(timeout=WAIT)
            for _, title in named:  # the link is its own element: drawn after the words
                link = teacher.get_by_role("link", name=f"Show it: {title}")
                link.first.wait_for(timeout=WAIT)
                assert link.count() == 1
        teacher.get_by_text(diagnostic.prompt.split(": ", 1)[0]).first.scroll_into_view_if_needed()
        teacher.screenshot(path="artifacts/screenshots/class_diagnostic_tally.png", full_page=True)
        second.get_by_text(f"Your answer {picks[1]} is not right. It is what").wait_for(
            timeout=WAIT
        )

        # The report at 1280 px (issue 42, item 7): the grid cut off the mistakes named and the
        # other wrong answers; a table that wraps has every column on screen
        teacher.get_by_text("Every question: the share right").click()
        teacher.get_by_text("Make the report").click()
        table = teacher.locator('[data-testid="stTable"]', has_text="mistakes named")
        table.wait_for(timeout=WAIT)
        cells = [table.locator("th", has_text=name) for name in ("mistakes named", "other wrong")]
        last = diagnostic.mistakes[1][1][-1][1]  # the last title of the mistakes named
        cells.append(table.locator("td", has_text=f"{last}: 1").first)
        for cell in cells:
            box = cell.bounding_box()
            assert box is not None and box["x"] + box["width"] <= 1280, box
        assert teacher.evaluate("document.documentElement.scrollWidth") <= 1280
        table.scroll_into_view_if_needed()
        teacher.screenshot(path="artifacts/screenshots/class_report_1280.png")

        # End: the class is gone for everyone
        teacher.get_by_role("button", name="End class").click()
        teacher.get_by_role("button", name="End the class now").click()
        teacher.get_by_text("has ended").wait_for(timeout=WAIT)
        first.get_by_text("has ended (your teacher ended it").first.wait_for(timeout=WAIT)
    finally:
        for context in contexts:
            context.close()


def test_browser_class_a_question_asked_from_the_laptop_leads_the_projector(browser, class_server):
    """Issue 42, item 1: the teacher asks from their laptop (the private link); the projector,
    which showed the join card, puts the tally on its first screen (1280 x 720) within a few
    ticks, the join card folded, with no reload."""
    url = class_server
    contexts = []
    try:
        projector_context = browser.new_context(viewport={"width": 1280, "height": 720})
        contexts.append(projector_context)
        projector = projector_context.new_page()
        projector.goto(f"{url}/class")
        projector.get_by_role("button", name="Start a class").click()
        projector.get_by_text("Class code").wait_for(timeout=WAIT)
        private = projector.locator("code", has_text="teacher=").text_content().strip()
        laptop_context, laptop = new_page(browser)
        contexts.append(laptop_context)
        laptop.goto(private)
        laptop.get_by_role("button", name="Ask the class").wait_for(timeout=WAIT)
        laptop.get_by_role("button", name="Ask the class").click()
        laptop.get_by_text("(open)").first.wait_for(timeout=WAIT)
        heading = projector.get_by_text(re.compile(r"question 1 \(open\)")).first
        heading.wait_for(timeout=WAIT)
        projector.wait_for_timeout(1500)  # the page drawn again settles
        box = heading.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 720, box  # on the first screen
        assert projector.get_by_text(re.compile("^Join: class code")).count() == 1  # folded
        assert not projector.get_by_text("Scan to join").is_visible()
        no_errors(projector)
        projector.screenshot(path="artifacts/screenshots/class_projector_asked_from_laptop.png")
    finally:
        for context in contexts:
            context.close()


def take_check(page, form: str, right_up_to: int) -> None:
    """A student answers the check's ten items on their screen and sends them together."""
    from attention import concepts

    page.get_by_role("button", name="Send my answers").wait_for(timeout=WAIT)
    for item in concepts.FORMS[form]:
        chosen = item.right if item.number <= right_up_to else item.wrong[0][0]
        group = page.locator('[data-testid="stForm"] [data-testid="stRadio"]').nth(item.number - 1)
        group.get_by_text(chosen, exact=True).click()
    page.get_by_role("button", name="Send my answers").click()
    page.get_by_text("Sent: 10 of 10 answered").wait_for(timeout=WAIT)


def test_browser_class_takes_the_concept_check_before_and_after(browser, class_server):
    """Issue 45: a teacher and three students in their own browsers; the check before (form A)
    and after (form B); the class report shows the figures the hand computation gives (before
    20, 50, 80 %, after 60, 50, 90 %: <g> = c = 0.333, d = 0.8)."""
    url = class_server
    contexts = []
    try:
        teacher_context, teacher = new_page(browser)
        contexts.append(teacher_context)
        teacher.goto(f"{url}/class")
        teacher.get_by_role("button", name="Start a class").click()
        teacher.get_by_text("Class code").wait_for(timeout=WAIT)
        code = teacher.locator('[data-testid="stMetricValue"]').first.inner_text().strip()
        students = []
        for i in range(3):
            context, page = join(browser, url, code, f"check {i}")
            contexts.append(context)
            students.append(page)
        for when, form, rights in (("before", "A", (2, 5, 8)), ("after", "B", (6, 5, 9))):
            teacher.get_by_role("button", name=f"Give the check {when} the course").click()
            teacher.get_by_text(f"Concept check, {when} (open)").wait_for(timeout=WAIT)
            for page, up_to in zip(students, rights, strict=True):
                take_check(page, form, up_to)
            teacher.get_by_text("3 of 3 joined").wait_for(timeout=WAIT)
            teacher.get_by_role("button", name="Close the check").click()
            teacher.get_by_text(f"Concept check, {when} is closed").wait_for(timeout=WAIT)
            no_errors(teacher)
        # the figures lead the report, drawn without asking (issue 52, item 1)
        teacher.get_by_text("What the class learned", exact=True).wait_for(timeout=WAIT)
        teacher.locator('[data-testid="stTable"]').first.wait_for(timeout=WAIT)
        teacher.get_by_text("Every question: the share right").click()
        teacher.get_by_text("Make the report").click()
        names = ("Download the concept check (CSV)", "Download the report (CSV)",
                 "Download answers with nicknames (CSV)")  # fmt: skip
        teacher.get_by_role("button", name=names[-1]).wait_for(timeout=WAIT)
        arrived = []
        for name in names:  # three in a row: each arrives (issue 52, item 4: the third did not)
            with teacher.expect_download() as download:
                teacher.get_by_role("button", name=name).click()
            arrived.append(download.value)
        assert [d.failure() for d in arrived] == [None, None, None]
        import pandas as pd

        text = Path(arrived[0].path()).read_text(encoding="utf-8")
        frame = pd.read_csv(arrived[0].path(), dtype=str)
        figures = frame[frame.table == "The class's figures"].set_index("figure")["value"]
        assert figures["students who took both"] == "3"
        assert figures["class gain <g> (Hake)"] == "0.333"
        assert figures["mean normalized change c (Marx & Cummings)"] == "0.333"
        assert figures["Cohen's d_z, paired (mean change / its spread)"] == "0.8"
        assert "check 0" not in text  # seats, never nicknames
        for page in (teacher, *students):
            no_errors(page)
    finally:
        for context in contexts:
            context.close()
