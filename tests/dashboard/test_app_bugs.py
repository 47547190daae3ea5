"""Lessons 7 (Bug hunt) and 8 (Drills) through AppTest: every bug, the mystery mode, and drills
answered right, wrong and with nonsense."""

import random

import pytest
from conftest import as_read, default_drills, no_exception, open_page

from attention.bugs import BUGS, CHECKS, SILENT_BUGS, source, source_diff

BUG_PAGE = "pages/bug_hunt.py"
DRILL_PAGE = "pages/drills.py"


def codes(at) -> list[str]:
    return [c.value for c in at.code]


def students_lines(name: str) -> list[str]:
    """The lines the student wrote wrong: what gives a mystery away."""
    return [line[1:].strip() for line in source_diff(BUGS[name]).splitlines() if line[0] == "+"]


def checks_column(at) -> dict[str, str]:
    """The live checks table (a static table: its cells are escaped markdown, read as shown):
    check -> the 'with the bug' cell."""
    frame = next(t.value for t in at.table if "with the bug" in t.value.columns)
    frame = frame.data if hasattr(frame, "data") else frame  # a Styler holds its frame in .data
    cells = zip(frame["check"], frame["with the bug"], strict=True)
    return {as_read(check): as_read(text) for check, text in cells}


@pytest.mark.parametrize("name", list(BUGS))
def test_app_bug_hunt_shows_every_bug(name):
    at = open_page(BUG_PAGE, bug=name)
    no_exception(at)
    bug = BUGS[name]
    assert at.selectbox(key="bug").value == name
    assert source_diff(bug) in codes(at), "the diff is missing"
    assert source(bug.test) in codes(at)
    assert any(f"`{bug.replaces}`" in m.value and f"`{name}`" in m.value for m in at.markdown)
    cells = checks_column(at)
    broken = {key for key, text in CHECKS.items() if cells[text].startswith("✘")}
    assert broken == set(bug.checks)
    if bug.loud:
        assert any(c.startswith("RuntimeError: ") for c in codes(at))
    else:
        assert len(at.get("vega_lite_chart")) >= 3 + 2  # output x 3 heatmaps, 2 curves
    assert not at.error and not at.warning


def test_app_bug_hunt_shows_the_first_affected_stage_and_the_output():
    at = open_page(BUG_PAGE, bug="softmax_over_queries")
    no_exception(at)
    assert at.segmented_control(key="bug_stage").value == "weights"
    assert len(at.get("vega_lite_chart")) == 2 * 3 + 2
    assert sum(m.value == "**Difference**" for m in at.markdown) == 2
    at.segmented_control(key="bug_stage").set_value("concat").run()
    no_exception(at)
    assert any(m.value.startswith("#### Concatenated heads") for m in at.markdown)


def test_app_bug_hunt_one_head_says_the_bug_changes_nothing():
    at = open_page(BUG_PAGE, bug="scale_by_d_model", heads=1)
    no_exception(at)
    assert any("changes nothing" in i.value for i in at.info)


def test_app_bug_hunt_training_curves_for_another_task():
    at = open_page(BUG_PAGE, bug="no_scaling")
    at.segmented_control(key="bug_task").set_value("previous_token").run()
    no_exception(at)
    assert any("Held-out accuracy" in m.value for m in at.markdown)


def expected_mystery(seed: int) -> str:
    """The mystery at the defaults: every silent bug changes the output there."""
    return random.Random(seed).choice(SILENT_BUGS)


def test_app_mystery_right_diagnosis_scores():
    at = open_page(BUG_PAGE, mode="mystery", mystery=5)
    no_exception(at)
    truth = expected_mystery(5)
    shown = "\n".join(codes(at) + [m.value for m in at.markdown])
    assert all(line not in shown for line in students_lines(truth)), "the answer is on screen"
    at.radio(key="guess_5").set_value(truth).run()
    at.button(key="check_5").click().run()
    no_exception(at)
    assert any(s.value.startswith("Right") for s in at.success)
    assert source_diff(BUGS[truth]) in codes(at)
    assert at.metric[0].value == "1 / 1"


def test_app_mystery_wrong_diagnosis_explains_and_scores():
    at = open_page(BUG_PAGE, mode="mystery", mystery=11)
    truth = expected_mystery(11)
    wrong = next(name for name in SILENT_BUGS if name != truth)
    at.radio(key="guess_11").set_value(wrong).run()
    at.button(key="check_11").click().run()
    no_exception(at)
    assert any(BUGS[truth].title in e.value for e in at.error)
    assert at.metric[0].value == "0 / 1"
    at.button(key="check_11").click().run()  # a second try on the same mystery does not count
    assert at.metric[0].value == "0 / 1"


def test_app_mystery_next_moves_to_the_next_number():
    at = open_page(BUG_PAGE, mode="mystery", mystery=7)
    next(b for b in at.button if b.label == "Next mystery").click().run()
    no_exception(at)
    assert at.number_input(key="mystery").value == 8


def test_app_mystery_shows_only_outputs_and_checks():
    at = open_page(BUG_PAGE, mode="mystery", mystery=3)
    no_exception(at)
    assert len(at.get("vega_lite_chart")) == 2
    assert any("✘" in m.value for m in at.markdown)


@pytest.mark.parametrize(
    "params, words",
    [
        ({"bug": "typo"}, "bug=typo is not a bug"),
        ({"mode": "party"}, "mode=party must be explore or mystery"),
        ({"mode": "mystery", "mystery": "abc"}, "mystery=abc is not a whole number"),
    ],
)
def test_app_bug_hunt_nonsense_link_gives_a_message(params, words):
    """The message names the link's text, shown as text (escaped markdown, read as shown)."""
    at = open_page(BUG_PAGE, **params)
    no_exception(at)
    assert any(words in as_read(w.value) for w in at.warning), [w.value for w in at.warning]


def answer_box(at, number):
    return next(t for t in at.text_input if t.label == f"Your answer ({number})")


def test_app_drills_right_answers_score():
    at = open_page(DRILL_PAGE)
    no_exception(at)
    drills = default_drills()
    assert next(t.value for t in at.text if "Head" in t.value) == drills["argmax"].prompt
    answers = {
        1: str(min(drills["argmax"].answer)),
        2: f"{drills['score'].answer:.3f}".replace(".", ","),
        3: f" {drills['weight'].answer:.4f} ",
        4: f"{drills['output'].answer:.2f}",
        5: str(drills["shape"].answer),
        6: drills["mask"].answer_text,
    }
    for number, typed in answers.items():
        answer_box(at, number).input(typed).run()
    no_exception(at)
    assert len(at.success) == 6, [e.value for e in at.error] + [w.value for w in at.warning]
    assert at.metric[0].value == "6 / 6"


def test_app_drills_wrong_answer_shows_the_working():
    at = open_page(DRILL_PAGE)
    drills = default_drills()
    answer_box(at, 3).input(str(drills["weight"].answer + 0.5)).run()
    no_exception(at)
    assert any(e.value.startswith("Not quite") for e in at.error)
    assert any(drills["weight"].working[-1] in c for c in codes(at))
    assert at.metric[0].value == "0 / 1"


@pytest.mark.parametrize(
    "typed, words",
    [("banana", "not a number"), ("nan", "NaN"), ("1e300", "too large"), ("1,2,3", "separator")],
)
def test_app_drills_bad_answers_get_a_message(typed, words):
    at = open_page(DRILL_PAGE)
    answer_box(at, 2).input(typed).run()
    no_exception(at)
    assert any(words in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.metric[0].value == "0 / 0"


def test_app_drills_new_exercises_ask_new_questions():
    at = open_page(DRILL_PAGE)
    before = [t.value for t in at.text]
    next(b for b in at.button if b.label == "New exercises").click().run()
    no_exception(at)
    assert at.number_input(key="drill_set").value == 1
    assert [t.value for t in at.text] != before
    assert next(t.value for t in at.text if "Head" in t.value) == default_drills(1)["argmax"].prompt


def test_app_drills_follow_the_sidebar_seed():
    at = open_page(DRILL_PAGE)
    before = [t.value for t in at.text]
    at.sidebar.number_input(key="seed").set_value(3).run()
    no_exception(at)
    assert [t.value for t in at.text] != before


def legend_titles(spec) -> list[str]:
    """Every colour legend's title in a Vega-Lite spec."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            colour = node.get("color")
            if isinstance(colour, dict) and "title" in colour:
                found.append(colour["title"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    return found


def test_bug_difference_heatmap_says_what_it_subtracts():
    """Issue 17 item 17: the difference heatmap's legend read "value"; it is bug − correct."""
    from dashboard import lessons
    from dashboard.controls import Settings
    from dashboard.views.bug_hunt import bug_run, difference_view

    lesson = lessons.computed(Settings())
    run = bug_run(lesson, "softmax_over_queries")
    view = difference_view(lesson, run, "weights", 0)
    assert set(legend_titles(view.spec)) == {"bug − correct"}
