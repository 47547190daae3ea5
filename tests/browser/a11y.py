"""axe-core's WCAG audit for the browser tests (issue 28, item 10): every page
(test_browser_layout's text check at 1280 x 720) and every presenter section
(test_browser_presenter) pass WCAG 2.0-2.2 A and AA, and every chart has a text alternative
(Vega's description, the aria-label a screen reader reads).

axe-core 4.14.1 (MPL-2.0, npm `axe-core`) is vendored in tests/browser/vendor/axe.min.js:
`npm pack axe-core@4.14.1` and its package/axe.min.js.
"""

from __future__ import annotations

from pathlib import Path

AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text()
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]

# Each violation: its rule, and where (the first three nodes) with axe's own summary
AUDIT = """async ([tags, where]) => {
    const context = where ? document.querySelector(where) : document;
    const result = await axe.run(context, {runOnly: {type: 'tag', values: tags}});
    return result.violations.map(v => `${v.id} (${v.impact}) on ${v.nodes.length} nodes: `
        + v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': '
                                   + (n.failureSummary || '').slice(0, 200)).join(' | '));
}"""

# Charts without a text alternative on their role="graphics-document" root
UNNAMED_CHARTS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
    .filter(c => !(c.getAttribute('aria-label') || '').trim()).length"""


def audit(page, where: str | None = None) -> list[str]:
    """axe-core's WCAG A/AA violations on the page as drawn now (or inside the element the
    CSS selector `where` names)."""
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(content=AXE)
    return page.evaluate(AUDIT, [WCAG, where])


def unnamed_charts(page) -> list[str]:
    count = page.evaluate(UNNAMED_CHARTS)
    return [f"{count} charts without a text alternative"] if count else []
