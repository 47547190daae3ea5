"""A real browser: `streamlit run` on a loopback port, every lesson in headless Chromium."""

import pytest
from chromium import (
    SHOTS,
    free_port,
    full_screenshot,
    page_report,
    streamlit_server,
    wait_until_drawn,
)

from dashboard.frame import LESSONS

pytestmark = pytest.mark.browser

# the home page and every lesson, from the registry (a hand-kept list here once missed 12 and 13)
PAGES = ["", *(lesson.url_path for lesson in LESSONS)]
TITLES = {
    "": "Self-attention, step by step",
    **{lesson.url_path: lesson.heading or lesson.title for lesson in LESSONS},
}


@pytest.fixture(scope="module")
def server():
    with streamlit_server() as url:
        yield url


def open_and_check(page, url: str, name: str) -> dict:
    page.goto(url)
    wait_until_drawn(page, min_charts=2 if name else 0)
    report = page_report(page)
    full_screenshot(page, SHOTS / f"{name or 'home'}.png")
    assert report["exceptions"] == 0, report
    assert report["errors"] == [], report
    assert report["drawn"] == report["embeds"], report
    assert report["unnamed"] == [], report  # every chart says what it shows to a screen reader
    assert page.locator("h1").first.inner_text().strip() == TITLES[name]
    return report


def test_browser_deep_link_on_a_fresh_server_then_every_lesson(browser):
    with streamlit_server() as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        outside = []  # nothing may leave the server's host (no CDN, no font, no favicon)
        page.on(
            "request",
            lambda r: None if r.url.startswith((url, "data:", "blob:")) else outside.append(r.url),
        )
        # First request to this server: a deep link, before anyone visited the home page.
        report = open_and_check(page, f"{url}/masking?T=7", "masking")
        assert report["embeds"] >= 2
        assert page.get_by_text("Sequence length T").count() == 1  # the shared sidebar is there
        for name in PAGES:
            report = open_and_check(page, f"{url}/{name}", name)
            if name:
                assert report["embeds"] >= 2, (name, report)
            assert report["scrollWidth"] <= report["clientWidth"], (name, report)
        assert outside == [], outside
        page.close()


@pytest.mark.parametrize(
    "path",
    [
        "masking?T=12",
        "multi_head?T=12&d_model=12&heads=3",
        "step_by_step?src=sentence&text=extraordinarily+incomprehensible+words&T=8",
        "multi_head?T=64&d_model=256&heads=16",
    ],
)
def test_browser_no_horizontal_overflow_off_the_defaults(browser, server, path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/{path}")
    wait_until_drawn(page, min_charts=2)
    report = page_report(page)
    page.close()
    assert report["exceptions"] == 0 and report["drawn"] == report["embeds"], report
    assert report["scrollWidth"] <= report["clientWidth"], (path, report)


def test_browser_moving_a_slider_redraws_the_charts(browser):
    with streamlit_server() as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{url}/step_by_step")
        wait_until_drawn(page, min_charts=11)
        slider = page.get_by_role("slider", name="Sequence length T")
        slider.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        page.wait_for_function("() => new URLSearchParams(location.search).get('T') === '9'")
        page.wait_for_function(  # the "T (tokens)" metric shows the new length
            "() => document.querySelector('[data-testid=\"stMetricValue\"]')"
            "?.innerText.trim() === '9'"
        )
        wait_until_drawn(page, min_charts=11)
        report = page_report(page)
        assert report["exceptions"] == 0 and report["drawn"] == report["embeds"] == 11
        first_table = page.locator('[data-testid="stDataFrame"]').first
        assert first_table.is_visible()
        page.close()


def test_browser_phone_opens_with_the_sidebar_closed(browser, server):
    """On a phone the sidebar would cover the lesson: it starts closed there, open on a laptop."""
    widths = {}
    for width, height in ((390, 844), (1280, 800)):
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{server}/step_by_step")
        wait_until_drawn(page, min_charts=2)
        widths[width] = page.evaluate(
            "() => document.querySelector('[data-testid=\"stSidebar\"]')"
            ".getBoundingClientRect().right"
        )
        page.close()
    assert widths[390] <= 0 < widths[1280], widths


@pytest.mark.parametrize(
    "path",
    [
        "bug_hunt?bug=x%0A%0A![i](http://a.io/i.png)%20**B**%20www.a.io",
        "step_by_step?src=x%0A%0A%23%20BIG%20[a](http://a.io)%20c@d.io",
    ],
)
def test_browser_link_text_stays_text(browser, server, path):
    """A crafted link's value is shown as typed: no heading, image, bold or link is drawn from
    it, and nothing is fetched from the address in it."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    outside = []
    page.on("request", lambda r: None if r.url.startswith(server) else outside.append(r.url))
    page.goto(f"{server}/{path}")
    wait_until_drawn(page)
    alert = page.locator('[data-testid="stAlert"]').first
    drawn = alert.evaluate("a => [...a.querySelectorAll('a, img, strong, h1, h2, h3')].length")
    text = alert.inner_text().replace("\u2060", "")
    page.close()
    assert drawn == 0 and outside == [], (drawn, outside)
    assert "http://a.io" in text and ("**B**" in text or "# BIG" in text), text


def shapes_on(page) -> str:
    return page.locator('[data-testid="stApp"]').inner_text()


def test_browser_link_keeps_the_heads_the_page_uses(browser, server):
    """Moving d_model so that the asked heads no longer divide it: the URL still names what the
    page uses, after slow and fast moves, and reopening it shows the same page (issue 17 item
    14: the link used to lose heads=4, or keep d_model=7 while the page showed C = 6)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/step_by_step?heads=4")
    wait_until_drawn(page, min_charts=11)
    slider = page.get_by_role("slider", name="d_model (C)")
    slider.focus()
    for key in ["ArrowLeft", "ArrowLeft", "ArrowLeft", "ArrowRight", "ArrowLeft", "ArrowRight"]:
        page.keyboard.press(key)  # 8 -> 5 -> 6, faster than a rerun
    page.wait_for_function("() => new URLSearchParams(location.search).get('d_model') === '6'")
    wait_until_drawn(page, min_charts=11)
    query = page.evaluate("() => Object.fromEntries(new URLSearchParams(location.search))")
    assert query == {"d_model": "6", "heads": "4"}, query
    # the last of the fast moves' reruns may still be drawing (CI, 2026-11-27): wait, as a reader
    page.get_by_text("the page uses H = 3").first.wait_for(timeout=30_000)
    wait_until_drawn(page, min_charts=11)
    shown = shapes_on(page)
    assert "H = 4 does not divide d_model = 6: the page uses H = 3" in shown
    assert "(H, T, T) = (3, 6, 6)" in shown
    reopened = browser.new_page(viewport={"width": 1280, "height": 900})
    reopened.goto(page.url)
    wait_until_drawn(reopened, min_charts=11)
    assert "(H, T, T) = (3, 6, 6)" in shapes_on(reopened)
    page.close()
    reopened.close()


def edit_cell(page, grid, row: int, column: int, text: str) -> None:
    """Type into a cell of a two-column data editor (rows and columns count from 0, the index
    column and the header row not counted): double-click it, type, Enter. Streamlit draws the
    grid on a canvas with 35 px rows and, here, a 51 px index column."""
    box = grid.bounding_box()
    x = box["x"] + 51 + (box["width"] - 51) * (column + 0.5) / 2
    y = box["y"] + 35 * (row + 1.5)
    page.mouse.dblclick(x, y)
    entry = page.locator("textarea.gdg-input")  # the grid's cell editor
    entry.wait_for()
    # disabled until the page has reconnected (after a restart Streamlit's reconnect backs off)
    entry.fill(text, timeout=120_000)
    page.keyboard.press("Enter")


def test_browser_lesson5_editor_survives_a_server_restart(browser):
    """Issue 17 item 15: the browser reconnects to a fresh server with its widget values and
    nothing else; editing lesson 5's encodings then raised KeyError: 'encodings_base'."""
    port = free_port()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    with streamlit_server(port=port) as url:
        page.goto(f"{url}/worked_example")
        wait_until_drawn(page)
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.scroll_into_view_if_needed()
        edit_cell(page, grid, row=1, column=0, text="1")
        page.get_by_text("x2 = (1.0000, 1.3600)").wait_for(timeout=60_000)
    with streamlit_server(port=port):  # the same address, a fresh process
        # the page pings the server with a growing back-off: wait until it has reconnected (the
        # editor is disabled while it pings)
        page.wait_for_selector(
            '[data-testid="stApp"][data-test-connection-state="CONNECTED"]', timeout=120_000
        )
        page.get_by_text("x2 = (1.0000, 1.3600)").wait_for(timeout=60_000)
        wait_until_drawn(page)
        grid = page.locator('[data-testid="stDataFrame"]').first
        edit_cell(page, grid, row=1, column=1, text="0.5")
        page.get_by_text("x2 = (1.0000, 0.5000)").wait_for(timeout=60_000)
        wait_until_drawn(page)
        assert page_report(page)["exceptions"] == 0
    page.close()
