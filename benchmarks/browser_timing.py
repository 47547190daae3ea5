"""What a student waits for, in a real browser (headless Chromium).

    python benchmarks/browser_timing.py [--moves 10] [--pages step_by_step ...] [--no-cold]
    python benchmarks/browser_timing.py --presenter-only [--moves 10] [--pages ...]

1. Cold start: from `streamlit run` to the home page fully drawn, and then to the first lesson
   fully drawn (the first lesson pays for importing torch); and a teacher's deep link at the
   maxima opened as the first request to a fresh server, to every chart drawn.
2. Slider move to repaint: on each lesson whose sidebar has the sequence-length slider, move it
   with the keyboard and time from the key press until the script has finished and the last
   chart has changed (each move changes every chart's size, so each chart changes), median of
   --moves moves, at the default settings and at the maxima (T = 64, d_model = 256, 16 heads);
   the same for the d_model and heads sliders on the first lesson; and each lesson's own
   sliders (d_k and τ in lesson 4, the training step in lesson 6, the decoding and tile steps
   in lessons 10 and 11 at the maxima).

3. Presenter mode (?present=1, one section per screen, no page header, the sidebar collapsed), at
   the defaults, on a 1280 x 720 projector: on every lesson that reads the sidebar's T, the T
   slider moved with the keyboard on a section with a chart (PRESENTER_T_SECTION). The slider
   stays in the DOM of the collapsed sidebar and takes focus there, so the sidebar is not
   opened. Each move is split by the script-state attribute into key -> script started
   (the widget's debounce and the round trip), started -> finished (the rerun on the server,
   its deltas streamed meanwhile) and finished -> last chart change (what the browser still
   draws). And on every lesson, Page Down from section 1 to 2 and Page Up back, alternating
   (the Next / Previous buttons' shortcuts, pressed with nothing focused, as a clicker does).
   A section without charts counts as repainted when the script finished (tables draw on a
   canvas that no DOM change reports). --presenter-only runs only this part.

   With --presenter-walk, only: Page Down through every section of every lesson, --rounds walks
   in a row on one fresh server (the first cold), the median turn and the slowest, with the
   section it reached.

4. With --floor: the same T moves on benchmarks/floor_app.py, a bare page with step by step's
   11 heatmaps (and, second, with 11 tables too) and nothing else, taken in turns with step by
   step itself, --rounds times: what Streamlit and Vega alone cost to repaint that many
   elements on this machine, the floor under the lesson's figure.

Targets (issue 11): median <= 300 ms at the defaults, <= 1 s at the maxima, on every lesson;
(issue 18) presenter mode at the defaults: median <= 200 ms.
Needs Debian's chromium (or CHROMIUM=/path).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from chromium import (  # noqa: E402  (the tests' own server and browser helpers)
    CHROMIUM_FLAGS,
    FINISHED,
    chromium_path,
    streamlit_server,
    wait_until_drawn,
)

# Repainted = the script finished and the last change inside any chart is done (the tables'
# hidden accessibility rows keep updating for a while after; they are not a repaint). WATCH marks
# the time of each such change; SETTLED is true once the page has been quiet for quietMs since t0.
# Each file is one arrow function, as Playwright's evaluate() takes it (no comments before it).
JS = Path(__file__).resolve().parent / "js"
WATCH = (JS / "watch_repaint.js").read_text()
SETTLED = (JS / "repainted.js").read_text()
# SECTION_DRAWN: presenter mode's section `number` drawn and still for half a second (as the
# presenter test waits); STATES records each change of the script state with its time.
SECTION_DRAWN = (JS / "section_drawn.js").read_text()
STATES = (JS / "watch_script_state.js").read_text()


sys.path.insert(0, str(ROOT))
from dashboard.frame import LESSONS as ALL_LESSONS  # noqa: E402

MAXIMA = "?T=64&d_model=256&heads=16"
MAXIMA_LINKS = [f"step_by_step{MAXIMA}", f"multi_head{MAXIMA}"]
LESSONS = [lesson.url_path for lesson in ALL_LESSONS if "T" in lesson.uses]
EVERY_LESSON = [lesson.url_path for lesson in ALL_LESSONS]
# Presenter mode: the section whose chart a T move redraws, per lesson that reads T (the first
# such section; step by step's scores; kv_cache's last decode step, as its first has one row
# whatever T; at_scale's tiles, as its first section's measured costs do not read T).
PRESENTER_T_SECTION = {"step_by_step": 5, "multi_head": 1, "masking": 2, "bug_hunt": 1,
                       "drills": 1, "position": 1, "kv_cache": 2, "at_scale": 2}  # fmt: skip
PROJECTOR = {"width": 1280, "height": 720}
USES = {lesson.url_path: lesson.uses for lesson in ALL_LESSONS}
PARTS = ("start", "script", "paint")


SLIDERS = ("Sequence length T", "d_model (C)", "Heads H")  # the sidebar's sliders
# Lessons whose own sliders (not the sidebar's) change what is drawn: lesson, query, slider.
OWN_SLIDERS = (
    ("why_sqrt_dk", "", "d_k (head size)"),
    ("why_sqrt_dk", "", "Temperature τ (scale = 1/(τ√d_k))"),
    ("what_heads_learn", "?learn=induction", "Training step"),
    ("kv_cache", MAXIMA, "Decoding step t"),
    ("at_scale", MAXIMA, "Tile step"),
)


def time_moves(
    page, url: str, moves: int, charts: int = 1, slider_name: str = SLIDERS[0]
) -> list[float]:
    """Milliseconds from each key press on a sidebar slider to the page's last change."""
    page.goto(url)
    wait_until_drawn(page, min_charts=charts)
    page.evaluate(WATCH)
    slider = page.get_by_role("slider", name=slider_name)
    # back and forth between two values; a slider at its minimum goes right first
    at_min = slider.evaluate("input => Number(input.value) <= Number(input.min)")  # type=range
    keys = ("ArrowRight", "ArrowLeft") if at_min else ("ArrowLeft", "ArrowRight")
    times = []
    for move in range(moves):
        slider.focus()
        t0 = page.evaluate("performance.now()")
        page.keyboard.press(keys[move % 2])
        page.wait_for_function(SETTLED, arg=[t0, 400], timeout=60_000, polling=20)
        times.append(page.evaluate("window.__last") - t0)
    return times


def spread(times: list[float]) -> str:
    """How a benchmark line reports a slider's moves."""
    return (
        f"median {statistics.median(times):.0f} ms, max {max(times):.0f} ms over {len(times)} moves"
    )


def range_of(times: list[float]) -> str:
    """Median and min-max, as the presenter lines report them."""
    return f"median {statistics.median(times):.0f} ms ({min(times):.0f}-{max(times):.0f})"


def wait_for_section(page, number: int) -> None:
    page.wait_for_function(SECTION_DRAWN, arg=[FINISHED, number], timeout=60_000, polling=100)


def timed_press(page, key: str) -> dict[str, float]:
    """Press `key` (WATCH and STATES installed); ms from the press to repainted, and its parts:
    to the script started, the script's run, from its end to the last chart change."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    t0 = page.evaluate("performance.now()")
    page.keyboard.press(key)
    try:
        page.wait_for_function(SETTLED, arg=[t0, 400], timeout=30_000, polling=20)
    except PlaywrightTimeout:
        seen = page.evaluate(NOT_SETTLED, t0)
        raise NotRepainted(f"{key} at {page.url}: not repainted in 30 s, {seen}") from None
    last, states = page.evaluate("[window.__last, window.__states]")
    after = [(state, at) for state, at in states if at > t0]
    started = next((at for state, at in after if state == "running"), float("nan"))
    finished = max((at for state, at in after if state == "notRunning"), default=float("nan"))
    return {"total": last - t0, "start": started - t0, "script": finished - started,
            "paint": last - finished}  # fmt: skip


class NotRepainted(RuntimeError):
    """A key press after which the page did not settle (reported, then the move is retried)."""


# What a press that never settled left behind: script state, changes since, charts drawn, and
# whether the watched stApp element is still the page's (a replaced one takes the observers).
NOT_SETTLED = """(t0) => ({
    state: document.querySelector('[data-testid="stApp"]').dataset.testScriptState,
    statesSince: (window.__states || []).filter(([, at]) => at > t0).map(([s]) => s),
    changedSince: window.__last > t0,
    sameApp: window.__watched === document.querySelector('[data-testid="stApp"]'),
    chartsDrawn: [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
        .map(c => Boolean(c.querySelector('canvas, svg'))),
})"""


def retried(press, reopen, tries: int = 3) -> dict[str, float]:
    """press() again after reopen() when a press never settled; each such press is printed."""
    for attempt in range(1, tries + 1):
        try:
            return press()
        except NotRepainted as error:
            print(f"  (try {attempt} of {tries}) {error}", flush=True)
            if attempt == tries:
                raise
            reopen()
    raise AssertionError("unreachable")


def open_section(page, url: str, number: int) -> None:
    page.goto(url)
    wait_for_section(page, number)
    page.evaluate(WATCH)
    page.evaluate(STATES)


def presenter_t_moves(page, url: str, name: str, moves: int) -> list[dict[str, float]]:
    """T moved with the keyboard on the lesson's chart section, the sidebar left collapsed."""
    number = PRESENTER_T_SECTION.get(name, 1)
    link = f"{url}/{name}?present=1&section={number}"
    open_section(page, link, number)
    slider = page.get_by_role("slider", name=SLIDERS[0])
    at_min = slider.evaluate("input => Number(input.value) <= Number(input.min)")
    keys = ("ArrowRight", "ArrowLeft") if at_min else ("ArrowLeft", "ArrowRight")
    other = int(slider.evaluate("input => input.value")) + (1 if at_min else -1)
    times = []

    def press(key: str) -> dict[str, float]:
        slider.focus()  # in the collapsed sidebar: still focusable, its keys still move it
        return timed_press(page, key)

    def reopen(move: int) -> None:  # where the move starts: the default T, or the other value
        open_section(page, f"{link}&T={other}" if move % 2 else link, number)

    for move in range(moves):
        times.append(retried(lambda m=move: press(keys[m % 2]), lambda m=move: reopen(m)))
    return times


def presenter_turns(page, url: str, name: str, moves: int) -> list[dict[str, float]]:
    """Page Down from section 1 to 2, Page Up back, alternating (nothing focused)."""
    link = f"{url}/{name}?present=1"
    open_section(page, link, 1)
    times = []

    def press(move: int) -> dict[str, float]:
        page.evaluate("document.activeElement?.blur()")
        timed = timed_press(page, ("PageDown", "PageUp")[move % 2])
        wait_for_section(page, 2 - move % 2)  # the URL names the section: the key did turn
        return timed

    def reopen(move: int) -> None:  # at the section the move starts from
        open_section(page, f"{link}&section={1 + move % 2}", 1 + move % 2)

    for move in range(moves):
        times.append(retried(lambda m=move: press(m), lambda m=move: reopen(m)))
    return times


def presenter_walk(page, url: str, name: str) -> list[tuple[int, dict[str, float]]]:
    """Page Down through every section once, from the first to the last: (section reached, its
    times) for each turn. The count is the navigation row's "1 / n"."""
    link = f"{url}/{name}?present=1"
    open_section(page, link, 1)
    count = int(page.get_by_text(re.compile(r"^1 / \d+$")).inner_text().split(" / ")[1])
    turns = []
    for number in range(2, count + 1):

        def press(number: int = number) -> dict[str, float]:
            page.evaluate("document.activeElement?.blur()")
            timed = timed_press(page, "PageDown")
            wait_for_section(page, number)
            return timed

        def reopen(number: int = number) -> None:
            open_section(page, f"{link}&section={number - 1}", number - 1)

        turns.append((number, retried(press, reopen)))
    return turns


def presenter_walks(browser, pages: list[str], rounds: int) -> None:
    """Every section of every lesson in `pages` turned to with Page Down, `rounds` walks in a row
    on one fresh server (the first meets every section cold); per walk the median, the slowest
    turn and the section it reached, then a Markdown table."""
    rows = []
    with streamlit_server() as url:
        page = browser.new_page(viewport=PROJECTOR)
        for name in [name for name in pages for _ in range(rounds)]:
            turns = presenter_walk(page, url, name)
            if not turns:
                rows.append([name, "1", "-", "-", "-"])
                continue
            total = [t["total"] for _, t in turns]
            slowest, times = max(turns, key=lambda turn: turn[1]["total"])
            print(f"{name}?present=1, Page Down through {len(turns) + 1} sections: "
                  f"{range_of(total)}; slowest to section {slowest} ({times['total']:.0f} ms, "
                  f"script run {times['script']:.0f} ms)", flush=True)  # fmt: skip
            rows.append([name, str(len(turns) + 1), f"{statistics.median(total):.0f}",
                         f"{times['total']:.0f}", str(slowest)])  # fmt: skip
        page.close()
    print("\n| lesson | sections | Page Down, median ms | slowest ms | slowest to section |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def presenter(browser, pages: list[str], moves: int) -> None:
    """Presenter mode at the defaults on every lesson in `pages`: T moves, page turns; then a
    Markdown table of the medians."""
    rows = []
    with streamlit_server() as url:
        page = browser.new_page(viewport=PROJECTOR)
        for name in pages:
            row = [name]
            if "T" in USES[name]:
                times = presenter_t_moves(page, url, name, moves)
                total = [t["total"] for t in times]
                parts = {p: statistics.median(t[p] for t in times) for p in PARTS}
                split = " + ".join(f"{parts[p]:.0f}" for p in PARTS)
                number = PRESENTER_T_SECTION.get(name, 1)
                print(f"{name}?present=1&section={number}, T moved -> repainted: "
                      f"{range_of(total)} over {moves} moves; medians of key -> script "
                      f"started + script run + after it: {split} ms", flush=True)  # fmt: skip
                row += [str(number), range_of(total).removeprefix("median "), split]
            else:
                row += ["-", "does not read T", "-"]
            times = presenter_turns(page, url, name, moves)
            total = [t["total"] for t in times]
            down, up = (statistics.median(total[i::2]) for i in (0, 1))
            script = statistics.median(t["script"] for t in times)
            print(f"{name}?present=1, Page Down 1 -> 2 / Page Up 2 -> 1 -> repainted: "
                  f"{range_of(total)} over {moves} turns (down {down:.0f}, up {up:.0f}; "
                  f"script run {script:.0f} ms)", flush=True)  # fmt: skip
            row += [range_of(total).removeprefix("median "), f"{down:.0f} / {up:.0f}"]
            rows.append(row)
        page.close()
    print("\n| lesson | T section | T move, median (min-max) ms | key->run + run + after, ms "
          "| Page Down/Up, median (min-max) ms | down / up ms |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def cold_start(browser, lesson_path: str = "step_by_step") -> tuple[float, float, float]:
    """Seconds from launching the server to: healthy, home drawn, `lesson_path` drawn."""
    began = time.perf_counter()
    with streamlit_server() as url:
        healthy = time.perf_counter() - began
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url)
        wait_until_drawn(page)
        home = time.perf_counter() - began
        page.goto(f"{url}/{lesson_path}")
        wait_until_drawn(page, min_charts=11)
        lesson = time.perf_counter() - began
        page.close()
    return healthy, home, lesson


def deep_link(browser, lesson_path: str) -> float:
    """Seconds from opening `lesson_path` as the very first request to a fresh server (started
    and healthy before the clock starts) to the lesson drawn: a teacher's link, cold."""
    with streamlit_server() as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        began = time.perf_counter()
        page.goto(f"{url}/{lesson_path}")
        wait_until_drawn(page, min_charts=11)
        seconds = time.perf_counter() - began
        page.close()
    return seconds


def floor(moves: int, rounds: int) -> None:
    """Step by step's T move at the defaults, in turns with the bare page's (charts only, then
    charts and tables), so all three meet the machine in the same state."""
    from playwright.sync_api import sync_playwright

    pages = (
        ("step by step (the lesson)", None, "step_by_step"),
        ("bare page, 11 heatmaps", ROOT / "benchmarks" / "floor_app.py", ""),
        ("bare page, 11 heatmaps + 11 tables", ROOT / "benchmarks" / "floor_app.py", "?tables=1"),
    )
    medians: dict[str, list[float]] = {label: [] for label, _, _ in pages}
    with sync_playwright() as playwright, contextlib.ExitStack() as stack:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        lesson_url = stack.enter_context(streamlit_server())
        floor_url = stack.enter_context(streamlit_server(app=pages[1][1]))
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for turn in range(1, rounds + 1):
            for label, app, path in pages:
                url = f"{floor_url if app else lesson_url}/{path}"
                times = time_moves(page, url, moves, charts=11)
                medians[label].append(statistics.median(times))
                print(f"round {turn}, {label}: T moved -> repainted, {spread(times)}", flush=True)
        browser.close()
    for label, values in medians.items():
        print(f"{label}: medians {min(values):.0f}-{max(values):.0f} ms over {rounds} rounds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=10)
    parser.add_argument("--pages", nargs="*", default=None, help="lessons to time (all)")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold start")
    parser.add_argument(
        "--floor", action="store_true", help="only: step by step against a bare page's floor"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="turns for --floor, walks for --presenter-walk (3)"
    )
    parser.add_argument(
        "--presenter-only", action="store_true", help="only: presenter mode on every lesson"
    )
    parser.add_argument(
        "--presenter-walk", action="store_true", help="only: Page Down through every section"
    )
    args = parser.parse_args()
    if args.floor:
        floor(args.moves, args.rounds)
        return
    pages = LESSONS if args.pages is None else args.pages
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        shown = EVERY_LESSON if args.pages is None else [p for p in EVERY_LESSON if p in pages]
        if args.presenter_walk:
            presenter_walks(browser, shown, args.rounds)
            browser.close()
            return
        if args.presenter_only:
            presenter(browser, shown, args.moves)
            browser.close()
            return
        if not args.no_cold:
            healthy, home, lesson = cold_start(browser)
            print(f"cold start: server healthy {healthy:.1f} s, home drawn {home:.1f} s, "
                  f"first lesson drawn {lesson:.1f} s")  # fmt: skip
            for path in MAXIMA_LINKS:
                print(f"deep link on a fresh server, {path}: drawn in "
                      f"{deep_link(browser, path):.1f} s")  # fmt: skip
        with streamlit_server() as url:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            for slider in SLIDERS[1:]:  # the other sliders, on the first lesson
                for label, query in (("defaults", ""), ("maxima", MAXIMA)):
                    times = time_moves(page, f"{url}/step_by_step{query}", args.moves,
                                       slider_name=slider)  # fmt: skip
                    print(f"step_by_step, {slider} moved -> repainted, {label}: {spread(times)}")
            for name in [p for p in pages if p in LESSONS]:  # lessons that read T
                for label, query in (("defaults", ""), ("maxima", MAXIMA)):
                    times = time_moves(page, f"{url}/{name}{query}", args.moves)
                    print(f"{name}, slider move -> repainted, {label}: {spread(times)}")
            for name, query, slider in OWN_SLIDERS:
                if args.pages is not None and name not in args.pages:
                    continue
                times = time_moves(page, f"{url}/{name}{query}", args.moves, slider_name=slider)
                print(f"{name}{query}, its {slider} moved -> repainted: {spread(times)}")
            page.close()
        presenter(browser, shown, args.moves)  # on a server of its own
        browser.close()


if __name__ == "__main__":
    main()
