"""A student on a phone (390 x 844, the sidebar closed) reading a lesson is told, on the page
itself, that the teacher asked a question and that the class ended (issue 29, item 3)."""

from __future__ import annotations

import pytest
from chromium import streamlit_server, wait_until_drawn

pytestmark = pytest.mark.browser

WAIT = 30_000
PHONE = {"width": 390, "height": 844}


def on_screen_outside_the_sidebar(page, locator) -> None:
    locator.wait_for(state="visible", timeout=WAIT)
    assert locator.evaluate("e => e.closest('[data-testid=\"stSidebar\"]') === null")
    box = locator.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], box
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box


def test_browser_phone_student_sees_the_question_and_the_end_on_the_lesson(
    browser, tmp_path, monkeypatch
):
    monkeypatch.setenv("ATTENTION_CLASS_DB", f"sqlite:///{tmp_path / 'classroom.db'}")
    with streamlit_server() as url:
        teacher = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
        teacher.goto(f"{url}/class")
        teacher.get_by_role("button", name="Start a class").click()
        teacher.get_by_text("Class code").wait_for(timeout=WAIT)
        code = teacher.locator('[data-testid="stMetricValue"]').first.inner_text().strip()

        phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
        phone.goto(f"{url}/class?join={code}")
        phone.get_by_role("textbox", name="Nickname (optional)").fill("phone")
        phone.get_by_role("button", name="Join").click()
        phone.get_by_text("You joined as").wait_for(timeout=WAIT)
        phone.wait_for_function("() => document.cookie.includes('attention_student=')")
        phone.goto(f"{url}/class")  # a reload: the seat from the cookie, the name from the store
        phone.get_by_text("You joined as phone").wait_for(timeout=WAIT)  # issue 29, item 11
        phone.goto(f"{url}/masking")
        wait_until_drawn(phone, min_charts=2)
        phone.wait_for_timeout(1_000)
        sidebar = phone.locator('[data-testid="stSidebar"]')
        assert sidebar.get_attribute("aria-expanded") != "true"  # a phone: closed

        teacher.get_by_role("button", name="Ask the class").click()
        asked = phone.get_by_role("link", name="Your teacher asked a question: answer it")
        on_screen_outside_the_sidebar(phone, asked)

        teacher.get_by_role("button", name="End class").click()
        teacher.get_by_role("button", name="End the class now").click()
        teacher.get_by_text("has ended").wait_for(timeout=WAIT)
        ended = phone.get_by_text("has ended").first
        on_screen_outside_the_sidebar(phone, ended)
        assert asked.count() == 0  # no question to answer in a class that is gone
        assert phone.locator('[data-testid="stException"]').count() == 0


# Every text block's and every toolbar's box on the page, in page coordinates
BOXES = """() => {
  const box = e => { const r = e.getBoundingClientRect();
    return [r.left, r.top + window.scrollY, r.right, r.bottom + window.scrollY]; };
  const texts = [...document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,'
    + '[data-testid="stMain"] [data-testid="stText"]')].filter(e => e.offsetParent).map(box);
  const bars = [...document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stElementToolbar"]')]
    .filter(e => getComputedStyle(e).opacity !== "0" && e.offsetParent).map(box);
  return {texts, bars};
}"""


def overlaps(a, b) -> bool:
    return a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1


def test_browser_phone_toolbars_cover_no_text_and_wide_tables_are_explained(browser):
    """Issue 29, item 12: on a phone, a table's toolbar (always drawn on a touch screen, 44 px
    above the table) covered the end of the text above it ("Shape (H, T, d_k) = (2, 6, 4",
    a question's last words); tables wider than the screen were cut with nothing to say so."""
    with streamlit_server() as url:
        for lesson in ("step_by_step", "drills"):  # a question and a table: lessons 1, 8
            phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
            phone.goto(f"{url}/{lesson}")
            wait_until_drawn(phone)
            found = phone.evaluate(BOXES)
            for _ in range(30):  # the toolbars come after the page: later on a loaded machine
                if found["bars"]:
                    break
                phone.wait_for_timeout(1_000)
                found = phone.evaluate(BOXES)
            assert found["bars"], "a touch screen draws the toolbars"
            covered = [(bar, text) for bar in found["bars"] for text in found["texts"]
                       if overlaps(bar, text)]  # fmt: skip
            assert not covered, covered
            note = phone.get_by_text("a table wider than the page scrolls sideways")
            assert note.is_visible()
            laptop = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
            laptop.goto(f"{url}/{lesson}")
            wait_until_drawn(laptop)
            hidden = laptop.get_by_text("a table wider than the page scrolls sideways")
            assert hidden.count() == 1
            hidden.wait_for(state="hidden", timeout=WAIT)  # drawn, not shown, on a wide screen
            assert phone.locator('[data-testid="stException"]').count() == 0
