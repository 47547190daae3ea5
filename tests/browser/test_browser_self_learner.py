"""Issue 30 in Chromium at 1280 × 800, as the self-learner met it: lesson 9 reached by Next."""

import pytest
from chromium import CHROMIUM_FLAGS, chromium_path, streamlit_server, wait_until_drawn

pytestmark = pytest.mark.browser

# The tallest run of pixels of the bars' colour (#4c78a8) in the chart drawn on a canvas, and
# the chart's height: the bars' plot, measured as the learner sees it.
BARS = """(index) => {
    const chart = document.querySelectorAll('[data-testid="stVegaLiteChart"]')[index];
    const canvas = chart.querySelector('canvas');
    const context = canvas.getContext('2d');
    const { width, height } = canvas;
    const pixels = context.getImageData(0, 0, width, height).data;
    let tallest = 0;
    for (let x = 0; x < width; x += 2) {
        let run = 0;
        for (let y = 0; y < height; y++) {
            const i = 4 * (y * width + x);
            const bar = Math.abs(pixels[i] - 76) < 8 && Math.abs(pixels[i + 1] - 120) < 8
                && Math.abs(pixels[i + 2] - 168) < 8;
            run = bar ? run + 1 : 0;
            tallest = Math.max(tallest, run);
        }
    }
    return [tallest / (window.devicePixelRatio || 1), chart.getBoundingClientRect().height];
}"""


def test_browser_item_4_lesson_9_per_row_bars_are_drawn_tall_when_reached_by_next():
    """The per-row chart of lesson 9 ("Each output row, under the causal mask"): reached by
    Next its bars had no height; reloaded, its plot was squashed to about 40 px and its axis
    title cut ("nax |Attn(P X)…"), its rotated title longer than the plot was tall."""
    from playwright.sync_api import sync_playwright

    with streamlit_server() as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{url}/drills")
        wait_until_drawn(page)
        page.get_by_role("link", name="Next: 9 · Position").click()
        page.wait_for_url("**/position**")
        wait_until_drawn(page)
        heading = page.get_by_role("heading", name="Under the sidebar's mask")
        heading.scroll_into_view_if_needed()
        page.wait_for_timeout(1000)
        index = page.evaluate(
            """() => {
                const mark = [...document.querySelectorAll('h3')]
                    .find(h => h.textContent.includes("Under the sidebar's mask"));
                const charts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')];
                return charts.findIndex(c => mark.compareDocumentPosition(c) & 4);
            }"""
        )
        tallest, height = page.evaluate(BARS, index)
        browser.close()
    assert height >= 200, height
    assert tallest >= 60, (tallest, height)  # the tallest bar; 40 px was the whole plot before
