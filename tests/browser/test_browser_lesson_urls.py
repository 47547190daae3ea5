"""A lesson's own control in the URL, in a real browser (issue 18): moved, the address bar holds
it beside the sidebar's parameters; the address reopened shows the same value; Reset this
lesson takes it back to its default and out of the address, the sidebar's kept."""

import pytest
from chromium import page_report, streamlit_server, wait_until_drawn

pytestmark = pytest.mark.browser


def param(page, key: str):
    return page.evaluate(f"() => new URLSearchParams(location.search).get({key!r})")


def padding(page) -> str:
    """The padding slider's value as drawn."""
    slider = page.locator('[data-testid="stSlider"]').filter(has_text="Padding tokens")
    return slider.locator('[data-testid="stSliderThumbValue"]').inner_text().strip()


def test_browser_lesson_control_in_the_url_reopens_and_resets(browser):
    with streamlit_server() as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{url}/masking?T=8")
        wait_until_drawn(page, min_charts=2)
        slider = page.get_by_role("slider", name="Padding tokens at the end")
        slider.focus()
        for _ in range(2):
            page.keyboard.press("ArrowRight")
        page.wait_for_function("() => new URLSearchParams(location.search).get('pad') === '2'")
        wait_until_drawn(page, min_charts=2)
        assert param(page, "T") == "8"  # the sidebar's parameter is kept beside it
        address = page.url

        again = browser.new_page(viewport={"width": 1280, "height": 900})
        again.goto(address)
        wait_until_drawn(again, min_charts=2)
        assert padding(again) == "2"
        assert param(again, "pad") == "2" and param(again, "T") == "8"

        again.get_by_role("button", name="Reset this lesson").click()
        again.wait_for_function("() => !new URLSearchParams(location.search).has('pad')")
        wait_until_drawn(again, min_charts=2)
        again.wait_for_function(
            """() => Array.from(document.querySelectorAll('[data-testid="stSliderThumbValue"]'))
                .some(e => e.innerText.trim() === '0')"""
        )
        assert padding(again) == "0"
        assert param(again, "T") == "8"
        assert page_report(again)["exceptions"] == 0
        again.close()
        page.close()
