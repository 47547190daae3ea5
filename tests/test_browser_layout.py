"""Classroom screens: nothing cut at 1280 x 720 and 1024 x 768, at 100 % and 150 % zoom.

Browser zoom is emulated as Chromium does it: the page gets viewport / zoom CSS pixels and a
device scale factor of zoom. Every chart and table must lie inside the main column, no chart may
be clipped inside its own frame, and a small table (at most 16 columns) must show every column
without a horizontal scroll bar.
"""

import pytest
from browser import CHROMIUM_FLAGS, SHOTS, chromium_path, streamlit_server, wait_until_drawn

pytestmark = pytest.mark.browser

SCREENS = [(1280, 720, 1.0), (1280, 720, 1.5), (1024, 768, 1.0), (1024, 768, 1.5)]
PAGES = ["step_by_step", "multi_head", "masking", "why_sqrt_dk", "worked_example"]

# What is cut: each chart and table against the main column, each chart's canvas against its
# own frame, each small table's grid against its scroll box.
CUT = """() => {
    const main = document.querySelector('[data-testid="stMainBlockContainer"]')
        .getBoundingClientRect();
    const cut = [];
    const describe = (el, what) => {
        const heading = el.closest('[data-testid="stVerticalBlock"]')
            ?.querySelector('h3, h2, strong')?.innerText?.slice(0, 40) ?? '';
        return `${what} under "${heading}"`;
    };
    for (const el of document.querySelectorAll(
            '[data-testid="stMain"] [data-testid="stVegaLiteChart"], '
            + '[data-testid="stMain"] [data-testid="stDataFrame"]')) {
        const box = el.getBoundingClientRect();
        if (box.width === 0) continue;
        const chart = el.dataset.testid === 'stVegaLiteChart';
        if (box.left < main.left - 1 || box.right > main.right + 1) {
            cut.push(`${describe(el, chart ? 'chart' : 'table')}: ${Math.round(box.left)}..`
                     + `${Math.round(box.right)} outside ${Math.round(main.left)}..`
                     + `${Math.round(main.right)}`);
        }
        if (chart) {
            const canvas = el.querySelector('canvas');
            if (canvas && canvas.getBoundingClientRect().right > box.right + 1) {
                cut.push(`${describe(el, 'chart')}: drawing clipped at ${Math.round(box.right)}`);
            }
        } else {
            const scroller = el.querySelector('.dvn-scroller');
            const columns = el.querySelectorAll('[role="columnheader"]').length;
            if (scroller && columns <= 17 && scroller.scrollWidth > scroller.clientWidth + 1) {
                cut.push(`${describe(el, 'table')}: columns hidden (${scroller.scrollWidth} `
                         + `> ${scroller.clientWidth})`);
            }
        }
    }
    return cut;
}"""


@pytest.fixture(scope="module")
def browser():
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server():
    with streamlit_server() as url:
        yield url


def close_overlay_sidebar(page) -> None:
    """On a narrow screen Streamlit draws the sidebar over the page; a teacher closes it."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    main = page.locator('[data-testid="stMain"]').bounding_box()
    box = sidebar.bounding_box()
    if box and box["width"] > 0 and box["x"] + box["width"] > main["x"] + 1:
        sidebar.hover()  # the close button shows on hover
        page.locator('[data-testid="stSidebarCollapseButton"] button').click()
        page.wait_for_timeout(600)


@pytest.mark.parametrize("width, height, zoom", SCREENS, ids=lambda v: str(v))
def test_browser_layout_nothing_cut(browser, server, width, height, zoom):
    context = browser.new_context(
        viewport={"width": round(width / zoom), "height": round(height / zoom)},
        device_scale_factor=zoom,
    )
    page = context.new_page()
    problems = {}
    for name in PAGES if zoom > 1 else PAGES[::2]:  # 100 %: a wider page, fewer to check
        page.goto(f"{server}/{name}")
        wait_until_drawn(page, min_charts=2)
        close_overlay_sidebar(page)
        cut = page.evaluate(CUT)
        if cut:
            problems[name] = cut
    page.goto(f"{server}/step_by_step")
    wait_until_drawn(page, min_charts=2)
    shot = SHOTS / f"layout_{width}x{height}_{round(zoom * 100)}.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot))
    context.close()
    assert problems == {}, problems


DOCS = SHOTS.parents[1] / "docs" / "screenshots"


@pytest.mark.parametrize("width, height", [(1280, 720), (1024, 768)])
def test_browser_presenter_mode(browser, server, width, height):
    """?present=1: sidebar closed, the numbers in large cells, stage by stage, dark axis text;
    nothing cut. Writes docs/screenshots/presenter_<w>x<h>.png."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(f"{server}/step_by_step?present=1")
    wait_until_drawn(page, min_charts=1)
    sidebar = page.locator('[data-testid="stSidebar"]').bounding_box()
    assert sidebar is None or sidebar["x"] + sidebar["width"] <= 1  # collapsed
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 1  # one stage at a time
    page.get_by_role("button", name="Next stage").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('h3')].some(h => h.innerText.startsWith('2. '))"
    )
    wait_until_drawn(page, min_charts=1)
    assert "present=1" in page.url  # the link still opens presenter mode
    top = page.get_by_role("button", name="Next stage").bounding_box()["y"]
    page.evaluate(f"document.querySelector('[data-testid=\"stMain\"]').scrollBy(0, {top - 56})")
    page.wait_for_timeout(500)
    assert page.evaluate(CUT) == []
    DOCS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS / f"presenter_{width}x{height}.png"))
    context.close()
