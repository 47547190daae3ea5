"""Lesson 6 in a real browser: the trained heads drawn, a knock-out clicked, the trained source."""

import pytest
from chromium import SHOTS, full_screenshot, page_report, streamlit_server, wait_until_drawn

pytestmark = pytest.mark.browser


def metric_values(page) -> list[str]:
    return page.locator('[data-testid="stMetricValue"]').all_inner_texts()


def test_browser_learn_induction_heads_drawn_and_knocked_out(browser):
    with streamlit_server() as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{url}/what_heads_learn?learn=induction")
        wait_until_drawn(page, min_charts=25)
        report = page_report(page)
        assert report["exceptions"] == 0 and report["errors"] == [], report
        # 17 of the task's model, and the 8 heads of lesson 12's Shakespeare model beside them
        assert report["drawn"] == report["embeds"] == 25, report
        assert page.get_by_text("induction head").first.is_visible()
        full_screenshot(page, SHOTS / "what_heads_learn.png")
        before = float(metric_values(page)[-1].rstrip("%"))
        page.get_by_role("button", name="layer 1 · head 0 (induction head)").click()
        page.wait_for_function(
            "(before) => { const v = Array.from(document.querySelectorAll("
            "'[data-testid=\"stMetricValue\"]')).map(e => e.innerText).pop();"
            " return v && parseFloat(v) < before - 30; }",
            arg=before,
            timeout=30_000,
        )
        assert page_report(page)["exceptions"] == 0

        page.goto(f"{url}/step_by_step?src=trained&task=induction&layer=1")
        wait_until_drawn(page, min_charts=11)
        report = page_report(page)
        assert report["exceptions"] == 0 and report["drawn"] == report["embeds"] == 11, report
        assert metric_values(page)[:3] == ["24", "32", "1"]
        page.close()


def test_browser_learn_train_again_shows_progress_beside_the_button(browser):
    """Issue 17 item 18: the click starts the training at once (a fragment) and its progress
    shows beside the button, fed from the training steps, until the new model is drawn."""
    with streamlit_server() as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{url}/what_heads_learn?learn=induction")
        wait_until_drawn(page, min_charts=17)
        seed = page.get_by_test_id("stMainBlockContainer").get_by_label("Seed", exact=True)
        seed.fill("2")
        seed.press("Enter")
        button = page.get_by_role("button", name="Train again with seed 2")
        button.click()
        bar = page.get_by_test_id("stProgress").filter(has_text="Training: step")
        bar.wait_for(timeout=30_000)
        bar_box, button_box = bar.bounding_box(), button.bounding_box()
        assert bar_box["x"] >= button_box["x"] + button_box["width"], (bar_box, button_box)
        assert bar_box["y"] < button_box["y"] + button_box["height"]  # on the button's row
        assert bar_box["y"] + bar_box["height"] > button_box["y"]
        page.get_by_text("Showing the model you trained with seed 2").wait_for(timeout=60_000)
        wait_until_drawn(page, min_charts=17)
        report = page_report(page)
        assert report["exceptions"] == 0 and report["errors"] == [], report
        assert page.get_by_test_id("stProgress").count() == 0  # gone once the model is drawn
        page.close()
