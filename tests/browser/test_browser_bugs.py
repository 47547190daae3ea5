"""Lessons 7 (Bug hunt) and 8 (Drills) in a real browser: drawn, no error, answers graded.

Screenshots go to artifacts/screenshots/; with UPDATE_DOCS_SCREENSHOTS=1 also to
docs/screenshots/ (the README's):
UPDATE_DOCS_SCREENSHOTS=1 pytest tests/browser/test_browser_bugs.py
"""

import os
from pathlib import Path

import pytest
from chromium import ROOT, SHOTS, page_report, streamlit_server, wait_until_drawn

pytestmark = pytest.mark.browser

DOCS = ROOT / "docs" / "screenshots"


@pytest.fixture(scope="module")
def server():
    with streamlit_server() as url:
        yield url


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    yield page
    page.close()


def screenshot(page, name: str, height: int) -> None:
    """The top of the lesson at 1280 px wide (README size), to artifacts and maybe docs."""
    page.set_viewport_size({"width": 1280, "height": height})
    page.wait_for_timeout(600)  # let Vega re-lay out to the new size
    targets = [SHOTS / f"{name}.png"]
    if os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1":
        targets.append(DOCS / f"{name}.png")
    for path in targets:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path))


def assert_clean(report: dict) -> None:
    assert report["exceptions"] == 0, report
    assert report["drawn"] == report["embeds"], report
    assert report["scrollWidth"] <= report["clientWidth"], report


def test_browser_bug_hunt_draws_a_bug_and_its_checks(page, server):
    page.goto(f"{server}/bug_hunt")
    wait_until_drawn(page, min_charts=8)
    report = page_report(page)
    assert_clean(report)
    assert report["errors"] == [], report
    assert page.locator("h1").first.inner_text().strip() == "7 · Bug hunt"
    assert page.get_by_text("Live checks").count() == 1
    screenshot(page, "bug_hunt", 1900)


def test_browser_bug_hunt_loud_bug_shows_what_pytorch_raises(page, server):
    page.goto(f"{server}/bug_hunt?bug=fill_1e9_fp16")
    wait_until_drawn(page, min_charts=2)
    assert_clean(page_report(page))
    assert page.get_by_text("without overflow").count() >= 1


def test_browser_bug_hunt_mystery_link_then_a_diagnosis(page, server):
    page.goto(f"{server}/bug_hunt?mode=mystery&mystery=5&heads=4")
    wait_until_drawn(page, min_charts=2)
    report = page_report(page)
    assert_clean(report)
    assert report["errors"] == []
    page.get_by_text("Softmax over the wrong axis", exact=True).click()
    button = page.get_by_role("button", name="Check my diagnosis")
    page.wait_for_function(  # enabled once the script has rerun with the choice
        "() => Array.from(document.querySelectorAll('button'))"
        ".some(b => b.innerText.includes('Check my diagnosis') && !b.disabled)"
    )
    button.click()
    page.wait_for_function(
        "() => document.body.innerText.includes('Right:')"
        " || document.body.innerText.includes('Not this one')"
    )
    wait_until_drawn(page, min_charts=2)
    assert page_report(page)["exceptions"] == 0
    assert page.get_by_text("Score this session").count() == 1


def test_browser_drills_grade_an_answer(page, server):
    page.goto(f"{server}/drills")
    wait_until_drawn(page, min_charts=4)
    report = page_report(page)
    assert_clean(report)
    assert report["errors"] == []
    assert page.locator("h1").first.inner_text().strip() == "8 · Drills"
    screenshot(page, "drills", 1700)
    page.set_viewport_size({"width": 1280, "height": 900})
    box = page.get_by_label("Your answer (5)")
    box.fill("banana")
    box.press("Enter")
    page.wait_for_function("() => document.body.innerText.includes('is not a list of whole')")
    box = page.get_by_label("Your answer (6)")
    box.fill("none")
    box.press("Enter")
    page.wait_for_function(
        "() => document.body.innerText.includes('Right:')"
        " || document.body.innerText.includes('Not quite')"
    )
    wait_until_drawn(page, min_charts=4)
    assert page_report(page)["exceptions"] == 0
