"""Layout helpers: rows that wrap instead of squeezing, widths, sliders whose range follows
other controls.
"""

from __future__ import annotations

import re

import streamlit as st

from dashboard import controls


def natural_width(config: dict, n_columns: int) -> int | str:
    """The table's width when every column has one (its columns then never hide behind a
    scroll bar while the page has room), else the page's width."""
    widths = [c.get("width") for c in config.values()]
    if len(widths) < n_columns or not all(isinstance(w, int) for w in widths):
        return "stretch"
    return sum(widths) + 2  # the grid's two border pixels


# A page link's label is one line, clipped where the column ends: on a 1024 px screen most of
# the home page's lesson summaries lost their last words.
WRAP_LINKS = """<style>
[data-testid="stPageLink-NavLink"] > span:last-child,
[data-testid="stPageLink-NavLink"] [data-testid="stMarkdownContainer"] { white-space: normal; }
</style>"""


# On a touch screen (no hover) a table's or chart's toolbar (show, download, search, full
# screen) is always drawn, 44 px above the element, over the end of the text above it: the
# element gets that room. On a narrow screen a note says that wide tables scroll sideways.
PAGE_STYLE = """<style>
@media (hover: none) {
  [data-testid="stFullScreenFrame"]:has(> div > [data-testid="stElementToolbar"]) {
    padding-top: 44px;
  }
}
@media (min-width: 641px) { .st-key-narrow_screen_note { display: none; } }
</style>"""
NARROW_NOTE = (
    "On a narrow screen, a table wider than the page scrolls sideways (swipe it), and the "
    "last button above it opens it full screen."
)


# For slides (issue 42, item 16): Streamlit's chart toolbar saves a PNG at twice the chart's size,
# named after the time, and no SVG (Streamlit 1.67 turns vega-embed's own menu off). Hovering a
# chart shows two more buttons above its top-left corner, *SVG* and *PNG*: Vega's own export
# of the chart as drawn (`view.toSVG()`, `view.toImageURL("png", 3)`: three times its size),
# named after the lesson and the chart's title, or the heading above it where it has none
# (`step_by_step_4_values_v_head_0.svg`). The chart's
# Vega view is found through React's fiber, where Streamlit keeps it (a hook's state): no button
# appears if a Streamlit release keeps it elsewhere, and tests/browser/test_browser_notebooks.py
# then fails. A bar of our own on the page's body, outside Streamlit's tree; not in presenter
# mode. Installed once per browser tab.
SAVE_CHARTS = """<script>
if (!window.attentionSaveCharts) {
  window.attentionSaveCharts = true;
  const bar = document.createElement("div");
  bar.className = "attention-save-chart";
  bar.setAttribute("role", "toolbar");
  bar.setAttribute("aria-label", "Save this chart for slides");
  bar.style.cssText = "position: fixed; z-index: 1000; display: none; gap: 4px; padding: 2px;"
    + " background: #ffffff; border: 1px solid #bdbdbd; border-radius: 6px;";
  for (const kind of ["SVG", "PNG"]) {
    const button = document.createElement("button");
    button.textContent = kind;
    button.setAttribute("aria-label", `Save as ${kind} for slides`);
    button.title = kind === "SVG" ? "Save as SVG: sharp at any size, editable"
      : "Save as PNG, three times the size on screen";
    button.style.cssText = "font: 600 12px sans-serif; color: #262730; background: #f0f2f6;"
      + " border: 0; border-radius: 4px; padding: 3px 8px; cursor: pointer;";
    button.addEventListener("click", () => save(kind));
    bar.appendChild(button);
  }
  document.body.appendChild(bar);
  let chart = null;
  document.addEventListener("mouseover", (event) => {
    const over = event.target.closest && event.target.closest('[data-testid="stVegaLiteChart"]');
    // not in presenter mode, where it would sit on the section's title: save from the lesson
    if (over && !over.closest(".st-key-present_body") && viewOf(over)) {
      chart = over;
      const box = chart.getBoundingClientRect();
      bar.style.left = `${box.left}px`;
      bar.style.top = `${Math.max(0, box.top - 30)}px`;
      bar.style.display = "flex";
    } else if (!bar.contains(event.target)) {
      bar.style.display = "none";
    }
  }, true);
  window.addEventListener("scroll", () => { bar.style.display = "none"; }, true);
  function viewOf(element) {
    const embed = element.querySelector(".vega-embed") || element;
    const key = Object.keys(embed).find((k) => k.startsWith("__reactFiber"));
    let fiber = key && embed[key];
    for (let up = 0; fiber && up < 40; up++, fiber = fiber.return) {
      for (let hook = fiber.memoizedState, n = 0; hook && n < 50; n++, hook = hook.next) {
        const held = hook.memoizedState;
        for (const v of [held, held && held.current]) {
          if (v && typeof v.toSVG === "function" && typeof v.toImageURL === "function") return v;
        }
      }
    }
    return null;
  }
  function titleOf(view) {
    const stack = [view.scenegraph().root];
    while (stack.length) {
      const node = stack.pop();
      if (node && node.role === "title-text" && node.items && node.items.length) {
        return [].concat(node.items[0].text).join(" ");
      }
      for (const child of (node && node.items) || []) stack.push(child);
    }
    return "";
  }
  function headingBefore(element) {  // the stage's heading above a chart with no title
    const found = document.evaluate("preceding::*[self::h1 or self::h2 or self::h3][1]",
      element, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
    return found ? found.textContent : "";
  }
  function slug(text) {
    return text.normalize("NFKD").replace(/[^A-Za-z0-9]+/g, "_").replace(/^_+|_+$/g, "")
      .toLowerCase().slice(0, 60);
  }
  async function save(kind) {
    const view = chart && viewOf(chart);
    if (!view) return;
    const lesson = location.pathname.split("/").filter(Boolean).pop() || "home";
    const title = titleOf(view) || headingBefore(chart);
    const name = `${lesson}_${slug(title) || "chart"}.${kind.toLowerCase()}`;
    const url = kind === "SVG"
      ? URL.createObjectURL(new Blob([await view.toSVG()], {type: "image/svg+xml"}))
      : await view.toImageURL("png", 3);
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    document.body.appendChild(link);
    link.click();
    link.remove();
  }
}
</script>"""


def save_charts() -> None:
    """SAVE_CHARTS, from the entry file: in the sidebar, where it takes no room."""
    st.sidebar.html(SAVE_CHARTS, unsafe_allow_javascript=True, width="content")


# WCAG AA (4.5:1 for text; axe-core's color-contrast rule): in the light theme Streamlit's
# captions (a grey at 60 % opacity) are 3.8:1 on the sidebar and 3.9:1 on white, a control's
# label greyed out because the lesson ignores it 2.3:1, a selected segment's red on its pink 4.5:1
# less a hair, and a button's keyboard shortcut (presenter mode's PageDown) 3.9:1. Darker shades
# of the same colours, 5.1:1 or more (axe-core in tests/browser/a11y.py, run by the layout
# and presenter tests). The dark theme keeps Streamlit's, which pass.
LIGHT_CONTRAST = """<style>
[data-testid="stCaptionContainer"] { opacity: 1; }
[data-testid="stCaptionContainer"] p, [data-testid="stCaptionContainer"] code { color: #5f5e5d; }
.stElementContainer:has(input:disabled, [aria-disabled="true"]) [data-testid="stWidgetLabel"] p {
  color: #6b6a69;
}
[data-selected="true"] [data-testid="stMarkdownContainer"] p { color: #a82c3a; }
button:enabled kbd { color: #5f5e5d; opacity: 1; }
</style>"""


def page_style() -> None:
    """The app's few style rules, once per run from the entry file (see PAGE_STYLE and
    LIGHT_CONTRAST)."""
    dark = getattr(st.context.theme, "type", None) == "dark"
    st.html(PAGE_STYLE if dark else PAGE_STYLE + LIGHT_CONTRAST)


def narrow_screen_note() -> None:
    """NARROW_NOTE, drawn on every screen but seen only on one 640 px wide or less."""
    with st.container(key="narrow_screen_note"):
        st.caption(NARROW_NOTE)


def wrap_page_links() -> None:
    """Let this page's `st.page_link` labels wrap onto a second line instead of being cut."""
    st.html(WRAP_LINKS)


def wrapping_row(gap: str = "medium"):
    """A row whose items stand side by side while they fit and wrap, one under another, on a
    narrow screen: never squeezed (st.columns squeezes a heatmap of fixed size until it spills
    over its neighbour)."""
    return st.container(horizontal=True, gap=gap, vertical_alignment="top")


def bounded_slider(
    container,
    label: str,
    high: int,
    key: str,
    help: str = "",
    *,
    low: int = 0,
    default: int = 0,
    single: str = "nothing else to choose",
) -> int:
    """A low..high integer slider whose range follows other controls, in the URL under `key`
    (bind="query-params"; it survives a visit to another lesson). When another control lowers
    the maximum below the value, Streamlit itself returns the slider to its default and drops
    the parameter from the URL, so screen and link agree; nothing here writes the value (a
    value written from code sends Streamlit's stale copy of the URL to the browser, see
    controls.heads_slider), and the page clamps only as a guard, saying so. A range of one
    value is shown as text."""
    if high <= low:
        container.caption(f"{label}: {low} ({single}).")
        return low
    raw = controls.linked(key)
    # a select_slider, not a slider: when the range shrinks under a kept value (T from 38 to
    # 6 with window = 29), a slider raises StreamlitValueAboveMaxError; a select_slider whose
    # options no longer hold the value returns to its default (tests/deploy/test_load_smoke)
    asked = container.select_slider(
        label, list(range(low, high + 1)), remember_default(key, min(max(default, low), high)),
        key=key,
        bind="query-params", persist_state="session", help=help,
    )  # fmt: skip
    used = min(max(int(asked), low), high)
    controls.link_note(key, raw, used, f"a whole number from {low} to {high}", container)
    if used != asked:
        container.caption(f"{label} = {asked} is past the last, {high}: the page uses {used}.")
    return used


DEFAULTS = "lesson_defaults"  # session: each lesson control's key -> the value Reset writes


def remember_default(key: str, value, reset_to=None):
    """A lesson control's default, written once, where its widget is drawn: recorded for Reset
    this lesson, and returned for the widget's own argument. `reset_to`: what Reset writes
    where the default is computed from other controls that Reset changes too (the last
    position of the text, once the text is back to its default)."""
    st.session_state.setdefault(DEFAULTS, {})[key] = value if reset_to is None else reset_to
    return value


def going_further(title: str):
    """A lesson's material past its core path (another codebase's conventions, kernel names, a
    derivation), closed: the course plan's reading times count the core path (issue 30, item
    11). What is in it is made only once it is opened (a class opening a lesson at once does
    not pay for it): `with layout.going_further("...") as further:` then `if further.open:`.
    Its title is a plain string (tests/conftest.py opens every one by the key it makes)."""
    return closed_section(f"Going further: {title}", further_key(title), ":material/explore:")


def closed_section(title: str, key: str, icon: str | None = None):
    """A closed section that reruns the page when opened or closed; a context manager whose
    `.open` says whether to draw what is in it: `with closed_section(...) as shown:` then
    `if shown.open:`. The session holds `key` True while it is open."""
    return st.expander(title, key=key, on_change="rerun", icon=icon)


def section_key(kind: str, title: str) -> str:
    """The session key of a closed section of that kind and title: True while it is open."""
    return f"{kind}_" + "_".join(re.findall(r"[a-z0-9]+", title.lower()))


def further_key(title: str) -> str:
    """The session key of a Going further section: True while it is open."""
    return section_key("further", title)


def reset_button(params: tuple[str, ...], container=None) -> None:
    """**Reset this lesson**: the lesson's own controls (`params`, as its LessonSpec declares
    them) back to the defaults their widgets were last drawn with (`remember_default`), in
    the page and in the URL. The defaults are written in the button's callback, before the
    rerun: Streamlit then drops each parameter from the URL (a value equal to the widget's
    default is not kept there). Deleting the keys instead would let the widgets read their old
    values back from the URL."""
    (container or st).button(
        "Reset this lesson",
        key="reset_lesson",
        icon=":material/restart_alt:",
        type="tertiary",
        on_click=_reset,
        args=(tuple(params),),
        help="Every control of this lesson back to its default (the sidebar keeps its values).",
    )


def _reset(params: tuple[str, ...]) -> None:
    defaults = st.session_state.get(DEFAULTS, {})
    for key in params:
        if key in defaults and key in st.session_state:
            st.session_state[key] = defaults[key]
