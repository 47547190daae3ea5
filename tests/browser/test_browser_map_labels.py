"""Issue 42, item 9: lesson 12's maps kept labels from the text before. After a new text (typed,
Ctrl+Enter) every map's first row read "16:␣" and "0:M" sat three rows down: the browser swapped
the chart's data in place and Vega kept the old order of the labels both texts share. The order
is now part of each chart's spec (charts.ordered). Read back from each drawn chart's own Vega
view: every map's rows and columns are the text's characters, in order, after a new text and
after Reset this lesson."""

from __future__ import annotations

import pytest
from chromium import page_report, streamlit_server, wait_until_drawn

from attention.lm.corpus import GLYPHS
from dashboard.shakespeare import TEXT_DEFAULT, position_labels

pytestmark = pytest.mark.browser

# as long as the default text: the same chart spec, so the browser swaps the data in place
TEXT = "My cat sleeps on the warm laptop every single morning. Yo"  # as long as the default

# Each drawn chart's Vega view, found through React's fiber (Streamlit keeps it in a hook), and
# its x and y domains in the order the axes draw them.
DOMAINS = """() => Array.from(document.querySelectorAll('.vega-embed')).map(el => {
    const key = Object.keys(el).find(k => k.startsWith('__reactFiber'));
    let fiber = el[key];
    for (let up = 0; fiber && up < 40; up++, fiber = fiber.return) {
        for (let hook = fiber.memoizedState, n = 0; hook && n < 50; n++, hook = hook.next) {
            const held = hook.memoizedState;
            for (const v of [held, held && held.current]) {
                if (v && typeof v.scale === 'function' && typeof v.data === 'function') {
                    const x = v.scale('x'), y = v.scale('y');
                    const order = (scale) => (scale ? scale.domain().map(String) : null);
                    return {x: order(x), y: order(y)};
                }
            }
        }
    }
    return null;
})"""


def labels_of(text: str) -> list[str]:
    """The axis labels lesson 12 gives a text's characters: "0:M", "1:y", "2:␣", …"""
    return position_labels([GLYPHS.get(c, c) for c in text])


def maps_of(page, text: str) -> list[list[str]]:
    """Every axis drawn over the text's characters (a map's rows and its columns), in the
    order it draws them."""
    axes = [a for d in page.evaluate(DOMAINS) if d for a in (d["x"], d["y"]) if a]
    return [a for a in axes if sorted(a) == sorted(labels_of(text))]


def test_browser_lesson_12_maps_keep_their_labels_in_order_after_a_new_text(browser):
    with streamlit_server() as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{url}/real_model")
        wait_until_drawn(page, min_charts=3)
        before = maps_of(page, TEXT_DEFAULT)
        assert len(before) >= 2 and all(a == labels_of(TEXT_DEFAULT) for a in before)
        box = page.locator('[data-testid="stTextArea"] textarea').first
        box.fill(TEXT)
        box.press("Control+Enter")
        page.wait_for_timeout(500)
        wait_until_drawn(page, min_charts=3)
        after = maps_of(page, TEXT)
        assert len(after) >= 2, page_report(page)
        for axis in after:
            assert axis == labels_of(TEXT), axis[:5]  # was ['16:␣', '19:␣', …]
        page.get_by_role("button", name="Reset this lesson").click()
        page.wait_for_timeout(500)
        wait_until_drawn(page, min_charts=3)
        reset = maps_of(page, TEXT_DEFAULT)
        assert len(reset) >= 2 and all(a == labels_of(TEXT_DEFAULT) for a in reset)
