"""Class mode across a restart of the app, as it happens in the world (issue 51, item 5): a real
`streamlit run` server killed with SIGKILL mid-course and started again on the same port (the
browsers' cookies belong to host:port).

On a SQLite file whose disk is not kept (ATTENTION_DISK_KEPT=0, as on Streamlit Community
Cloud) the database goes with the server: the teacher saves the class to a file after the check
before, continues it from that file on the fresh server in the same browser (the file is signed
with the token in its `attention_teacher` cookie), the students find their seats again by their
cookies, and the check after pairs with the check before seat by seat: the report's figures are
the hand computation's (before 20, 50, 80 %, after 60, 50, 90 %: <g> = 0.333), no answer lost.

On PostgreSQL nothing is needed: the class outlives the server, and no warning says otherwise.
"""

from __future__ import annotations

import json
import re
import signal
import warnings
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest
from chromium import SHOTS, StreamlitServer, download
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from attention import concepts

pytestmark = pytest.mark.browser

# ms: as in test_browser_class.py, the suite's other worker loads the machine (a student's
# page after the restart once took over 30 s there, 2026-11-29; alone, a few seconds)
WAIT = 60_000
NOT_KEPT = "does not keep"  # seats.WHERE_DATA_LIVES: "…on a disk its host does not keep…"
GIVEN_BEFORE = re.compile(r"Concept check, before: given .+ \(closed\)\.")


@contextmanager
def server(tmp_path: Path, env: dict[str, str]):
    running = StreamlitServer(env=env, log=tmp_path / "streamlit.log")
    running.start()
    try:
        yield running
    finally:
        running.kill(signal.SIGTERM)


def new_page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    return context, context.new_page()


def start_course(teacher, url: str) -> str:
    """Start a class that lives as a course; its code."""
    teacher.goto(f"{url}/class")
    teacher.get_by_text("A course of several lectures").click()
    teacher.get_by_role("button", name="Start a class").click()
    teacher.get_by_text("Class code").wait_for(timeout=WAIT)
    code = teacher.locator('[data-testid="stMetricValue"]').first.inner_text().strip()
    assert len(code) == 6, code
    return code


def join(browser, url: str, code: str, nickname: str):
    context, page = new_page(browser)
    page.goto(f"{url}/class?join={code}")
    page.get_by_role("textbox", name="Nickname (optional)").fill(nickname)
    page.get_by_role("button", name="Join").click()
    page.get_by_text(f"You joined as {nickname}").wait_for(timeout=WAIT)
    return context, page


def take_check(page, when: str, right_up_to: int) -> None:
    """A student answers the check's ten items (right up to item `right_up_to`, then each
    item's first wrong choice) and sends them together."""
    page.get_by_role("button", name="Send my answers").wait_for(timeout=WAIT)
    for item in concepts.FORMS[concepts.WHEN_FORM[when]]:
        chosen = item.right if item.number <= right_up_to else item.wrong[0][0]
        group = page.locator('[data-testid="stForm"] [data-testid="stRadio"]').nth(item.number - 1)
        group.get_by_text(chosen, exact=True).click()
    page.get_by_role("button", name="Send my answers").click()
    page.get_by_text("Sent: 10 of 10 answered").wait_for(timeout=WAIT)


def give_check(teacher, students, when: str, rights: tuple[int, ...]) -> None:
    """The teacher gives the check, every student takes it, the teacher closes it."""
    form = concepts.WHEN_FORM[when]
    teacher.get_by_role("button", name=f"Give the check {when} the course (form {form})").click()
    teacher.get_by_text(f"Concept check, {when} (open)").wait_for(timeout=WAIT)
    for page, up_to in zip(students, rights, strict=True):
        take_check(page, when, up_to)
    joined = len(students)
    teacher.get_by_text(f"{joined} of {joined} joined").wait_for(timeout=WAIT)
    teacher.get_by_role("button", name="Close the check").click()
    teacher.get_by_text(f"Concept check, {when} is closed").wait_for(timeout=WAIT)


def download_csv(teacher, name: str, tmp_path: Path) -> pd.DataFrame:
    got = download(teacher, teacher.get_by_role("button", name=name), timeout_ms=WAIT)
    path = tmp_path / got.suggested_filename
    got.save_as(path)
    return pd.read_csv(path, dtype=str)


def report_csvs(teacher, tmp_path: Path, both: bool) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The class report's CSV (one row per question) and, with `both` checks given, the concept
    check's, as the teacher downloads them."""
    check = download_csv(teacher, "Download the concept check (CSV)", tmp_path) if both else None
    every = re.compile("every question", re.IGNORECASE)  # the per-question report's expander
    teacher.locator('[data-testid="stExpander"] summary', has_text=every).click()
    teacher.get_by_text("Make the report").click()
    return download_csv(teacher, "Download the report (CSV)", tmp_path), check


def come_back(page, link: str, said: str, i: int) -> None:
    """A student's browser opens the class again after the restart and finds `said`. Under the
    whole suite's load a student's page once stayed blank for 60 s (no text at all: the app
    never drew; 2026-11-29, never alone): a page with nothing on it is reloaded once, as a
    student would, with a warning; a page that shows something else fails, saying what."""
    page.goto(link)
    for attempt in (1, 2):
        try:
            page.get_by_text(said).wait_for(timeout=WAIT)
            return
        except PlaywrightTimeout as timeout:  # what the student saw instead, for the log
            shown = page.locator("body").inner_text(timeout=5_000)[:1500]
            if shown.strip() or attempt == 2:
                app = page.locator('[data-testid="stApp"]').count()
                raise AssertionError(f"student {i} saw (app drawn: {app}):\n{shown}") from timeout
        warnings.warn(f"student {i}'s page was blank {WAIT} ms after it opened: reloaded",
                      stacklevel=2)  # fmt: skip
        page.reload()


def no_errors(*pages) -> None:
    for page in pages:
        if page.locator('[data-testid="stException"]').count():
            SHOTS.mkdir(parents=True, exist_ok=True)
            shot = SHOTS / "class_restart_exception.png"
            page.screenshot(path=str(shot), full_page=True)
            raise AssertionError(f"a traceback on {page.url} (screenshot: {shot})")


def test_browser_class_saved_to_a_file_continues_after_the_server_and_its_disk_go(
    browser, tmp_path, record_property
):
    database = tmp_path / "classroom.db"
    env = {"ATTENTION_CLASS_DB": f"sqlite:///{database}", "ATTENTION_DISK_KEPT": "0"}
    contexts = []
    try:
        with server(tmp_path, env) as app:
            url = app.url
            teacher_context, teacher = new_page(browser)
            contexts.append(teacher_context)
            teacher.goto(f"{url}/class")
            teacher.get_by_text(NOT_KEPT).first.wait_for(timeout=WAIT)  # said before the start
            code = start_course(teacher, url)
            students = []
            for i in range(3):
                context, page = join(browser, url, code, f"restart {i}")
                contexts.append(context)
                students.append(page)

            # The check before; then the class saved to a file, as the page asks
            give_check(teacher, students, "before", (2, 5, 8))
            teacher.get_by_text(NOT_KEPT).first.wait_for(timeout=WAIT)
            teacher.locator(".st-key-class_save").get_by_role(
                "button", name="Save the class to a file"
            ).wait_for(timeout=WAIT)  # always offered near the bottom where the store will not last
            saved = teacher.locator(".st-key-class_save_check").get_by_role(
                "button", name="Save the class to a file"
            )  # offered with the closed check
            got = download(teacher, saved, timeout_ms=WAIT)
            assert re.fullmatch(rf"class_{code}_\d{{4}}-\d\d-\d\d_\d{{4}}\.json",
                                got.suggested_filename)  # fmt: skip
            class_file = tmp_path / got.suggested_filename
            got.save_as(class_file)
            size = class_file.stat().st_size
            record_property("class_file_bytes", size)
            print(f"\nclass file after the check before (3 students, 10 items): {size} bytes")
            text = class_file.read_text(encoding="utf-8")
            found = json.loads(text)
            assert found["class"]["code"] == code
            assert len(found["class"]["students"]) == 3
            assert len(found["class"]["questions"]) == 10
            assert len(found["class"]["answers"]) == 30
            cookie = next(c["value"] for c in teacher_context.cookies()
                          if c["name"] == "attention_teacher")  # fmt: skip
            token = cookie.split(".", 1)[1]
            assert token not in text  # a digest and a signature, never the token
            assert "restart 0" not in text  # no nickname
            no_errors(teacher, *students)

            # The host kills the app and its disk goes with it; it starts again, empty
            app.kill()
            for path in tmp_path.glob("classroom.db*"):  # the file, its -wal and -shm
                path.unlink()
            assert not database.exists()
            app.start()

            # The teacher's browser: the class is gone; it continues from the file
            teacher.goto(f"{url}/class")
            teacher.get_by_role("button", name="Start a class").wait_for(timeout=WAIT)
            teacher.get_by_text(NOT_KEPT).first.wait_for(timeout=WAIT)
            teacher.get_by_text("Continue a class from a file").click()
            uploader = teacher.locator('[data-testid="stFileUploader"]')
            uploader.locator('input[type="file"]').set_input_files(class_file)
            teacher.get_by_text(f"Class {code} continues from its file").wait_for(timeout=WAIT)
            teacher.get_by_text("Concept check, before is closed").wait_for(timeout=WAIT)
            teacher.get_by_text(GIVEN_BEFORE).wait_for(timeout=WAIT)
            assert database.exists()
            teacher.reload()  # the teacher's cookie, written again, finds the continued class
            teacher.get_by_text(GIVEN_BEFORE).wait_for(timeout=WAIT)

            # Each student's browser finds its seat again (nicknames are not in the file)
            for i, page in enumerate(students):
                come_back(page, f"{url}/class", "You joined this class", i)
                page.get_by_text("Concept check, before is closed: thank you").wait_for(
                    timeout=WAIT
                )
            give_check(teacher, students, "after", (6, 5, 9))
            no_errors(teacher, *students)

            # The report: every answer of both checks, every seat paired before and after
            questions, check = report_csvs(teacher, tmp_path, both=True)
            assert len(questions) == 20
            assert (questions["answered"] == "3").all(), questions[["question", "answered"]]
            assert (questions["joined"] == "3").all()
            assert check is not None
            figures = check.dropna(subset=["figure"]).set_index("figure")["value"]  # the summary
            assert figures["students who took both"] == "3"
            assert figures["mean before, %"] == "50.0"
            assert figures["mean after, %"] == "66.7"
            assert figures["class gain <g> (Hake)"] == "0.333"
            seats = check.dropna(subset=["seat"])  # a row per student who took both
            pairs = sorted(zip(seats["before %"].astype(float), seats["after %"].astype(float),
                               strict=True))  # fmt: skip
            assert pairs == [(20, 60), (50, 50), (80, 90)]  # each student's own two scores
            no_errors(teacher, *students)
    finally:
        for context in contexts:
            context.close()


def test_browser_class_on_postgresql_outlives_the_server(browser, tmp_path, postgres_url):
    env = {"ATTENTION_CLASS_DB": postgres_url, "ATTENTION_DISK_KEPT": "0"}  # the disk: no matter
    contexts = []
    try:
        with server(tmp_path, env) as app:
            url = app.url
            teacher_context, teacher = new_page(browser)
            contexts.append(teacher_context)
            code = start_course(teacher, url)
            students = []
            for i in range(2):
                context, page = join(browser, url, code, f"pg {i}")
                contexts.append(context)
                students.append(page)
            give_check(teacher, students, "before", (2, 5))
            assert teacher.get_by_text(NOT_KEPT).count() == 0
            assert (
                teacher.locator(".st-key-class_save").count() == 0
            )  # no file offered: PostgreSQL lasts

            app.kill()
            app.start()

            teacher.goto(f"{url}/class")
            teacher.get_by_text("Concept check, before is closed").wait_for(timeout=WAIT)
            teacher.get_by_text(GIVEN_BEFORE).wait_for(timeout=WAIT)
            assert teacher.get_by_text(NOT_KEPT).count() == 0
            for i, page in enumerate(students):
                come_back(page, f"{url}/class", f"You joined as pg {i}", i)  # as it was
                page.get_by_text("Concept check, before is closed: thank you").wait_for(
                    timeout=WAIT
                )
            questions, check = report_csvs(teacher, tmp_path, both=False)
            assert check is None  # the check after is not given yet
            assert len(questions) == 10
            assert (questions["answered"] == "2").all(), questions[["question", "answered"]]
            assert questions["right"].astype(int).tolist() == [2, 2] + [1] * 3 + [0] * 5
            no_errors(teacher, *students)
    finally:
        for context in contexts:
            context.close()
