"""What a student waits for, in a real browser (headless Chromium).

    python benchmarks/browser_timing.py [--moves 10] [--pages step_by_step ...] [--no-cold]

1. Cold start: from `streamlit run` to the home page fully drawn, and then to the first lesson
   fully drawn (the first lesson pays for importing torch); and a teacher's deep link at the
   maxima opened as the first request to a fresh server, to every chart drawn.
2. Slider move to repaint: on each lesson whose sidebar has the sequence-length slider, move it
   with the keyboard and time from the key press until the script has finished and the last
   chart has changed (each move changes every chart's size, so each chart changes), median of
   --moves moves, at the default settings and at the maxima (T = 64, d_model = 256, 16 heads);
   the same for the d_model and heads sliders on the first lesson; and each lesson's own
   sliders (d_k and τ in lesson 4, the training step in lesson 6, the decoding and tile steps
   in lessons 10 and 11 at the maxima); and the T slider in presenter mode (?present=1, one
   stage at a time, the sidebar closed: the slider is still there for the keyboard).

3. With --floor: the same T moves on benchmarks/floor_app.py, a bare page with step by step's
   11 heatmaps (and, second, with 11 tables too) and nothing else, taken in turns with step by
   step itself, --rounds times: what Streamlit and Vega alone cost to repaint that many
   elements on this machine, the floor under the lesson's figure.

Targets (issue 11): median <= 300 ms at the defaults, <= 1 s at the maxima, on every lesson.
Needs Debian's chromium (or CHROMIUM=/path).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from chromium import (  # noqa: E402  (the tests' own server and browser helpers)
    CHROMIUM_FLAGS,
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


sys.path.insert(0, str(ROOT))
from dashboard.frame import LESSONS as ALL_LESSONS  # noqa: E402

MAXIMA = "?T=64&d_model=256&heads=16"
MAXIMA_LINKS = [f"step_by_step{MAXIMA}", f"multi_head{MAXIMA}"]
LESSONS = [Path(lesson.path).stem for lesson in ALL_LESSONS if "T" in lesson.uses]


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
    parser.add_argument("--rounds", type=int, default=3, help="turns for --floor (3)")
    args = parser.parse_args()
    if args.floor:
        floor(args.moves, args.rounds)
        return
    pages = LESSONS if args.pages is None else args.pages
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
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
            # presenter mode (?present=1): one stage at a time, the teacher's fast path
            times = time_moves(page, f"{url}/step_by_step?present=1", args.moves)
            print(f"step_by_step?present=1 (presenter mode), slider move -> repainted, "
                  f"defaults: {spread(times)}")  # fmt: skip
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
        browser.close()


if __name__ == "__main__":
    main()
