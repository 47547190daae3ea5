"""Take it home from the pages that add their own section, in a real browser: the notebook the
button gives carries what the page shows (its block sizes, its trained layer, its seed), and
runs to the end in a Jupyter kernel."""

import nbformat
import pytest
from chromium import (
    CHROMIUM_FLAGS,
    chromium_path,
    open_section,
    streamlit_server,
    wait_until_drawn,
)
from conftest import run_notebook
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from attention.positions import random_permutation

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page():
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with streamlit_server() as url, sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        page = chromium.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        page.base = url
        yield page
        chromium.close()


def take_home(page, path: str, tmp_path) -> nbformat.NotebookNode:
    """The notebook the page's Take it home button downloads (named after its lesson),
    executed."""
    open_section(page, "Take it home")
    with page.expect_download() as download:
        page.get_by_role("button", name="Take it home as a notebook").click()
    assert download.value.suggested_filename == f"{path}_rebuilt.ipynb"
    target = tmp_path / download.value.suggested_filename
    download.value.save_as(target)
    book = nbformat.read(target, as_version=4)
    run_notebook(book)
    return book


def printed(book) -> str:
    return "".join(
        o.get("text", "") for c in book.cells if c.cell_type == "code" for o in c.outputs
    )


def test_browser_notebook_at_scale_walks_the_tiles_the_page_shows(page, tmp_path):
    page.goto(f"{page.base}/at_scale?T=7")
    wait_until_drawn(page, min_charts=1)
    slider = page.get_by_role("slider", name="Query block B_r")
    slider.focus()
    page.keyboard.press("ArrowRight")  # B_r 2 -> 3
    page.wait_for_function(
        "() => document.body.innerText.includes('Tile 0 of tiles 0–11')", timeout=30_000
    )  # 3 query blocks x 4 key blocks of 7 tokens
    wait_until_drawn(page, min_charts=1)
    book = take_home(page, "at_scale", tmp_path)
    assert "B_r, B_c = 3, 2" in book.cells[-1].source
    text = printed(book)
    assert "The tiled walk equals head 0 of the full pass." in text
    assert "9 tiles of at most 3 x 2" in text  # causal: 3 of the 12 tiles are wholly future


def test_browser_notebook_kv_cache_decodes_the_trained_layer_shown(page, tmp_path):
    page.goto(f"{page.base}/kv_cache?src=trained&task=reverse&layer=0")
    wait_until_drawn(page, min_charts=1)
    book = take_home(page, "kv_cache", tmp_path)
    source = "".join(c.source for c in book.cells)
    assert 'source = "trained"' in source and 'trained("W_q")' in source
    assert "Decoding with the cache equals the full causal pass, row for row." in printed(book)


def test_browser_notebook_position_shuffles_with_the_pages_seed(page, tmp_path):
    page.goto(f"{page.base}/position?T=5&seed=5")
    wait_until_drawn(page, min_charts=1)
    book = take_home(page, "position", tmp_path)
    perm = random_permutation(5, 5).tolist()
    assert f"perm = torch.tensor({perm})" in "".join(c.source for c in book.cells)
    assert "Shuffling, the sinusoidal table and RoPE all equal the page." in printed(book)


@pytest.mark.parametrize("path", ["step_by_step", "drills", "real_model"])
def test_browser_exercise_notebooks_are_named_after_their_lesson(page, path):
    """Two lessons' exercises never overwrite each other in a Downloads folder (issue 42,
    item 13): each file carries its lesson's address."""
    page.goto(f"{page.base}/{path}")
    wait_until_drawn(page, min_charts=0)
    open_section(page, "Take it home")
    for label, name in (("Exercises: write each step", "exercises"),
                        ("The exercises, solved", "exercises_solved")):  # fmt: skip
        button = page.get_by_role("button", name=label)
        button.scroll_into_view_if_needed()
        with page.expect_download(timeout=60_000) as download:
            button.dispatch_event("click")  # the page's header may sit over it as it scrolls
        assert download.value.suggested_filename == f"{path}_{name}.ipynb"


@pytest.mark.parametrize("path", ["step_by_step", "real_model"])
def test_browser_every_chart_saves_as_a_png_at_twice_its_size(page, tmp_path, path):
    """Issue 42, item 16, the part Streamlit does: every Altair chart's toolbar has *Download
    as PNG*, drawn at twice its size on the screen (Vega's scale factor, at least 2), so a chart
    pasted on a slide stays sharp; lesson 12's maps (drawn as pictures) too. Streamlit 1.67
    offers no SVG and names the file after the time, "<date>T<time>_chart.png" (it turns
    vega-embed's own menu off): docs/teaching.md says so."""
    import struct

    page.goto(f"{page.base}/{path}")
    wait_until_drawn(page, min_charts=1)
    charts = page.locator('[data-testid="stElementContainer"]').filter(
        has=page.locator('[data-testid="stVegaLiteChart"]')
    )
    container = charts.last  # the last: on lesson 12, a map drawn as a picture
    container.scroll_into_view_if_needed()
    container.hover()  # the toolbar shows on hover
    box = container.locator('[data-testid="stVegaLiteChart"]').bounding_box()
    button = container.get_by_role("button", name="Download as PNG")
    button.wait_for(timeout=30_000)
    with page.expect_download(timeout=30_000) as download:
        button.dispatch_event("click")  # its own button, whatever else moved under the mouse
    assert download.value.suggested_filename.endswith("_chart.png")
    target = tmp_path / "chart.png"
    download.value.save_as(target)
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 1.9 * box["width"] and height >= 1.5 * box["height"], (width, height, box)


@pytest.mark.parametrize(
    ("path", "nth", "name", "label"),
    [("step_by_step", 3, "step_by_step_4_values_v_head_0", "t5"),  # titled by its heading
     ("real_model", -1, "real_model_layer_1_head_1", "0:R")],  # by its own title
)  # fmt: skip
def test_browser_a_chart_saves_as_svg_and_png_named_after_its_lesson(
    page, tmp_path, path, nth, name, label
):
    """Issue 42, item 16, the rest: hovering a chart shows *SVG* and *PNG* (ours, beside
    Streamlit's toolbar): Vega's own SVG of the chart as drawn, its labels as text, and a PNG at
    three times its size, both named after the lesson and the chart."""
    import struct

    page.goto(f"{page.base}/{path}")
    wait_until_drawn(page, min_charts=1)
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    chart = charts.nth(nth) if nth >= 0 else charts.last
    files = {}
    for kind in ("SVG", "PNG"):
        button = page.get_by_role("button", name=f"Save as {kind} for slides")
        box = hover_until_shown(page, chart, button)
        with page.expect_download(timeout=30_000) as download:
            button.click()
        assert download.value.suggested_filename == f"{name}.{kind.lower()}"
        files[kind] = tmp_path / download.value.suggested_filename
        download.value.save_as(files[kind])
    svg = files["SVG"].read_text(encoding="utf-8")
    assert svg.startswith("<svg") and f">{label}</text>" in svg  # an axis label, as text
    data = files["PNG"].read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 2.8 * box["width"] and height >= 2.2 * box["height"], (width, height, box)
    page.mouse.move(1, 1)  # away from every chart: the buttons go
    assert not page.get_by_role("button", name="Save as SVG for slides").is_visible()


def hover_until_shown(page, chart, button, tries: int = 10) -> dict:
    """Hover the chart as a user would until its buttons show, and return the chart's box. The
    bar hides on any scroll, and shows only over a chart whose Vega view is mounted: on a slow
    machine a late layout scroll hid it, or the hover came before the view was mounted and showed
    nothing (CI, 2026-11-29); a user would move the mouse again."""
    for _ in range(tries):
        chart.scroll_into_view_if_needed()
        page.mouse.move(1, 1)
        chart.hover()
        try:
            button.wait_for(state="visible", timeout=3_000)
            return chart.bounding_box()
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"no {button} after {tries} hovers over the chart")
