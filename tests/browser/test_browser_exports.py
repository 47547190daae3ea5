"""The grid's own CSV export and the chart's "Show data", in a real browser."""

import io
import math

import numpy as np
import pandas as pd
import pytest
from chromium import CHROMIUM_FLAGS, chromium_path, streamlit_server, wait_until_drawn

pytestmark = pytest.mark.browser

# Streamlit's CSV export asks the browser for a file (showSaveFilePicker), which headless
# Chromium never answers: this stand-in keeps the bytes written, BOM and all.
SAVE_STUB = """
window.__csv = [];
window.showSaveFilePicker = async () => ({
  createWritable: async () => ({
    write: async (chunk) => {
      window.__csv.push(new TextDecoder('utf-8', {ignoreBOM: true}).decode(chunk));
    },
    close: async () => { window.__csvDone = true; },
  }),
});
"""


@pytest.fixture(scope="module")
def page():
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with streamlit_server() as url, sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        context.add_init_script(SAVE_STUB)
        page = context.new_page()
        page.goto(f"{url}/step_by_step")
        wait_until_drawn(page, min_charts=11)
        yield page
        chromium.close()


def toolbar_button(page, element, label: str):
    element.scroll_into_view_if_needed()
    element.hover()
    page.wait_for_timeout(400)  # the toolbar fades in
    return element.locator("xpath=..").locator(f'button[aria-label="{label}"]').first


def download_csv(page, index: int) -> pd.DataFrame:
    """The nth table's own "Download as CSV", read by pandas as a notebook would."""
    page.evaluate("() => { window.__csv = []; window.__csvDone = false; }")
    table = page.locator('[data-testid="stDataFrame"]').nth(index)
    toolbar_button(page, table, "Download as CSV").click()
    page.wait_for_function("() => window.__csvDone === true", timeout=10_000)
    text = "".join(page.evaluate("window.__csv"))
    # Streamlit writes a byte-order mark (Excel needs it to read UTF-8 labels); pandas reads
    # the file as it is, so a notebook needs no extra step
    return pd.read_csv(io.StringIO(text), index_col=0)


def test_browser_table_csv_export_is_numbers_a_notebook_reads(page):
    frame = download_csv(page, 7)  # x q k v scores scaled masked weights
    assert frame.index.name == "query \\ key" and list(frame.columns) == [f"t{i}" for i in range(6)]
    assert frame.dtypes.map(pd.api.types.is_float_dtype).all()  # numbers, not text
    assert frame.loc["t0", "t1"] == 0.0  # masked: the softmax's true 0, not an empty cell
    assert abs(frame.loc["t1"].sum() - 1) < 1e-6  # full precision: rows still sum to 1
    assert len(str(frame.loc["t1", "t0"])) > 8  # more than 4 decimals


def test_browser_table_csv_exports_multiply_to_the_page_output(page):
    """weights @ V from the tables' own CSVs is the page's per-head output: no NaN (lesson 3's
    failure); a masked score is -Infinity in the CSV, which pandas reads as -inf."""
    weights, v, heads = download_csv(page, 7), download_csv(page, 3), download_csv(page, 8)
    product = weights.to_numpy() @ v.to_numpy()
    assert not np.isnan(product).any()
    np.testing.assert_allclose(product, heads.to_numpy(), rtol=1e-5, atol=1e-6)
    masked = download_csv(page, 6)
    assert masked.loc["t0", "t1"] == -math.inf


def test_browser_json_trace_reads_with_the_documented_reviver(page):
    """The trace's "-Infinity" strings become -Infinity in a browser with the reviver its
    schema documents; a plain JSON.parse reads the file too (strict JSON)."""
    from dashboard.controls import Settings
    from dashboard.exports import trace_json
    from dashboard.lessons import computed

    text = trace_json(computed(Settings(causal=True)))
    read = page.evaluate(
        """(text) => {
            const plain = JSON.parse(text);
            const data = JSON.parse(text, (k, v) => v === "-Infinity" ? -Infinity : v);
            const row = data.stages.masked[0][0];
            return {plain: plain.stages.masked[0][0][1], infinite: row[1] === -Infinity,
                    weight: data.stages.weights[0][0][1], mask: data.mask_value === -Infinity,
                    documented: plain.schema.infinity.includes('v === "-Infinity"')};
        }""",
        text,
    )
    assert read == {"plain": "-Infinity", "infinite": True, "weight": 0.0, "mask": True,
                    "documented": True}  # fmt: skip


def test_browser_show_data_lists_only_the_cells(page):
    chart = page.locator('[data-testid="stVegaLiteChart"]').nth(6)  # masked scores
    toolbar_button(page, chart, "Show data").click()
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stDataFrame"] [role="columnheader"]')]
            .some(h => h.innerText === 'printed')"""
    )
    headers = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')]
            .map(d => [...d.querySelectorAll('[role="columnheader"]')].map(h => h.innerText))
            .find(h => h.includes('printed'))"""
    )
    # with the row and column numbers the axes sort by (issue 42, item 9)
    assert headers == [
        "query", "key", "value", "printed", "masked", "row number", "column number",
        "colour scale ±",
    ]  # fmt: skip
    # (no anchor rows: tests/dashboard/test_display.py checks the data has one row per cell)
