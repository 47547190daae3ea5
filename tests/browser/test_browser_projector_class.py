"""Issue 52, item 6: the projector at 1024 x 768 never needs scrolling. For every lesson of the
registry, its tallest question (the most choices, then the longest prompt) is asked to a class
whose students gave every choice, on a real server in Chromium: the count, *Close* and *Reveal*
are on the first screen while it is open; once revealed, the answer and each mistake the class
made are too. The questions are asked and answered through the store itself (what the teacher's
and the students' clicks do is tested in test_browser_class.py); the projector is the page."""

from __future__ import annotations

import pytest
from chromium import CHROMIUM_FLAGS, chromium_path, streamlit_server

from dashboard.classroom import ClassStore, asking, concept_check
from dashboard.classroom.database import dispose_engine
from dashboard.controls import Settings
from dashboard.frame import LESSONS

pytestmark = pytest.mark.browser

WAIT = 30_000
SCREEN = {"width": 1024, "height": 768}


def tallest(path: str) -> asking.ClassQuestion:
    made = asking.lesson_questions(path, Settings())
    return max(made, key=lambda q: (len(q.choices or ()), len(q.prompt)))


def numbers(right: float) -> tuple[str, ...]:
    """Three typed answers to a number question: the right one and two others (whole if it is)."""
    return tuple(f"{n:g}" for n in (right, 2 * right + 1, right + 1))


def below_the_edge(page, locators) -> list[str]:
    """What of `locators` ends below the first screen (page scrolled to the top)."""
    page.evaluate("window.scrollTo(0, 0)")
    late = []
    for name, locator in locators:
        box = locator.bounding_box()
        if box is None or box["y"] + box["height"] > SCREEN["height"]:
            late.append(f"{name} at {box}")
    return late


def test_browser_projector_every_lessons_question_fits_its_first_screen(tmp_path, monkeypatch):
    url_db = f"sqlite:///{tmp_path / 'classroom.db'}"
    monkeypatch.setenv("ATTENTION_CLASS_DB", url_db)  # the server's, and this test's store
    monkeypatch.setenv("ATTENTION_DISK_KEPT", "0")  # as on Community Cloud: its warnings too
    from playwright.sync_api import sync_playwright

    with streamlit_server() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        context = browser.new_context(viewport=SCREEN)
        teacher = context.new_page()
        teacher.goto(f"{url}/class")
        start = teacher.get_by_role("button", name="Start a class")
        start.wait_for(timeout=WAIT)
        late = {"Start a class (item 8)": below_the_edge(teacher, [("the button", start)])}
        start.click()
        teacher.get_by_text("Class code").wait_for(timeout=WAIT)
        teacher.wait_for_function("document.cookie.includes('attention_teacher=')")
        cookie = next(c["value"] for c in context.cookies() if c["name"] == "attention_teacher")
        code, token = cookie.split(".", 1)
        store = ClassStore(url_db, joins_per_minute=10_000)
        try:
            for lesson in LESSONS:
                question = tallest(lesson.path)
                qid = store.ask(
                    code, token, question.prompt, question.choices, question.answer,
                    question.working, question.mistakes, question.kind, question.given,
                )  # fmt: skip
                given = question.choices or numbers(float(question.answer))
                for value in given:
                    store.answer(code, store.join(code), qid, value)
                name = asking.named(question.prompt)[0]
                teacher.reload()
                teacher.get_by_text(f"{name} (open)").wait_for(timeout=WAIT)
                late[f"{lesson.title}, open"] = below_the_edge(teacher, [
                    ("the count", teacher.get_by_text(f"{len(given)} of ")),
                    ("Close", teacher.get_by_role("button", name="Close")),
                    ("Reveal", teacher.get_by_role("button", name="Reveal")),
                ])  # fmt: skip
                store.reveal(code, token, qid)
                teacher.reload()
                teacher.get_by_text(f"{name} (revealed)").wait_for(timeout=WAIT)
                shown = [("the answer", teacher.get_by_text("The answer: ").first)]
                for _, _, named in asking.mistakes_made(
                    store.questions(code, token)[-1], store.tally(code, token, qid).counts
                ):
                    title = " or ".join(t for _, t in named)
                    shown.append((title, teacher.get_by_text(title, exact=False).first))
                late[f"{lesson.title}, revealed"] = below_the_edge(teacher, shown)
                if late[f"{lesson.title}, revealed"] or late[f"{lesson.title}, open"]:
                    teacher.screenshot(path=str(tmp_path / f"{lesson.url_path}.png"))
            # item 8: a check given from the laptop (the store, as the laptop's button does)
            # while the projector is scrolled down: the projector comes back to its top
            teacher.evaluate(
                "document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 99999);"
                "window.scrollTo(0, 99999)"
            )
            concept_check.ask(store, code, token, "before")
            progress = teacher.get_by_text("Concept check, before (open)")
            progress.wait_for(timeout=WAIT)
            teacher.wait_for_timeout(1500)  # the script that scrolls runs after the redraw
            box = progress.bounding_box()
            late["a check given from the laptop"] = (
                [] if box and 0 <= box["y"] < SCREEN["height"] else [f"its progress at {box}"]
            )
        finally:
            dispose_engine(url_db)
            browser.close()
    assert {where: what for where, what in late.items() if what} == {}
