"""Accessibility in Chromium (issue 28, item 10): axe-core's WCAG 2.0-2.2 A and AA rules find
nothing on the home page, every lesson and the class page, and every chart has a text alternative
(Vega's description, the aria-label a screen reader reads). Presenter mode's sections are
audited by tests/browser/test_browser_presenter.py with the same rules.

axe-core 4.14.1 (MPL-2.0, npm `axe-core`) is vendored in tests/browser/vendor/axe.min.js:
`npm pack axe-core@4.14.1` and its package/axe.min.js.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from chromium import streamlit_server, wait_until_drawn

from dashboard.frame import LESSONS

pytestmark = pytest.mark.browser

AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text()
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]

# Each violation: its rule, and where (the first three nodes) with axe's own summary
AUDIT = """async (tags) => {
    const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}});
    return result.violations.map(v => `${v.id} (${v.impact}) on ${v.nodes.length} nodes: `
        + v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': '
                                   + (n.failureSummary || '').slice(0, 200)).join(' | '));
}"""

# Charts without a text alternative on their role="graphics-document" root
UNNAMED_CHARTS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
    .filter(c => !(c.getAttribute('aria-label') || '').trim()).length"""


def audit(page) -> list[str]:
    """axe-core's WCAG A/AA violations on the page as drawn now."""
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(content=AXE)
    return page.evaluate(AUDIT, WCAG)


def test_browser_every_page_passes_axe_and_names_its_charts(browser):
    pages = ["", *(Path(lesson.path).stem for lesson in LESSONS), "class"]
    found = {}
    with streamlit_server() as url:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        for name in pages:
            page.goto(f"{url}/{name}")
            wait_until_drawn(page)
            wrong = audit(page)
            unnamed = page.evaluate(UNNAMED_CHARTS)
            if unnamed:
                wrong.append(f"{unnamed} charts without a text alternative")
            if wrong:
                found[name or "home"] = wrong
        page.close()
    assert found == {}, found
