"""Every page through AppTest from the entry file: defaults, control corners, URL state."""

import json
import math

import pytest
import torch
from conftest import LESSON_PAGES, as_read, by_hand, naked_negatives, no_exception, open_page, table

from attention import random_embeddings, seeded_layer, sentence_embeddings, worked_example
from dashboard.frame import LESSONS
from dashboard.render.blocks import PICTURE_NOTE
from dashboard.render.tables import format_number

CORNERS = [
    {},
    {"T": 1, "d_model": 2, "heads": 1, "causal": "false"},
    {"T": 64, "d_model": 256, "heads": 16},
    {"T": 64, "d_model": 2, "heads": 2, "causal": "false"},
    {"src": "sentence", "text": "The cat sat on the mat. The end!", "T": 8},
    {"src": "worked"},
]


@pytest.mark.parametrize("page", LESSON_PAGES)
@pytest.mark.parametrize(
    "params", CORNERS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items())
)
def test_app_every_lesson_runs_at_the_corners(page, params):
    at = open_page(page, **params)
    no_exception(at)
    chart_elements = at.get("vega_lite_chart") + at.get("arrow_vega_lite_chart")
    assert chart_elements, "no chart drawn"
    # every chart's accessible name (Vega's description becomes its aria-label) says what it is
    names = [json.loads(c.proto.spec).get("description", "") for c in chart_elements]
    assert all(len(n) > 12 and n != "Vega visualization" for n in names), names
    assert len(at.dataframe) + len(at.table) >= 2
    assert not at.error, [e.value for e in at.error]
    assert not at.warning, [w.value for w in at.warning]


def test_app_home_page_lists_every_lesson():
    at = open_page()
    no_exception(at)
    assert at.title[0].value == "Self-attention, step by step"
    links = [el.proto.label for el in at.get("page_link") if not el.proto.query_string]
    # the lesson list ends with class mode (a lesson in no lecture is linked again below them)
    links = links[: next(i for i, label in enumerate(links) if "Teach a class" in label) + 1]
    assert len(links) == len(LESSONS) + 1 and links[0].startswith("**1 · Step by step**")
    assert links[-1].startswith("**Teach a class**")
    assert links[-1].count("Teach a class") == 1, links[-1]  # the name is not said twice


def test_app_sidebar_is_drawn_on_a_deep_link():
    at = open_page("pages/masking.py")
    no_exception(at)
    assert [s.label for s in at.sidebar.slider] == ["Sequence length T", "d_model (C)"]
    assert at.sidebar.radio(key="src").value == "random"
    assert at.title[0].value == "3 · Masking"


def expected_trace(T=6, d_model=8, heads=2, seed=0, causal=True):
    x = random_embeddings(T, d_model, seed).x
    with torch.no_grad():
        return seeded_layer(seed, d_model, heads)(x, "causal" if causal else None)


def test_app_step_by_step_tables_equal_the_trace():
    at = open_page("pages/step_by_step.py")
    no_exception(at)
    assert len(at.get("vega_lite_chart")) == 11
    trace = expected_trace()
    weights = table(at.dataframe[7])  # stages in order: x q k v scores scaled masked weights ...
    assert list(weights.index) == [f"t{i}" for i in range(6)]
    assert list(weights.columns) == [f"t{i}" for i in range(6)]
    for i in range(6):
        for j in range(6):
            cell = weights.iloc[i, j]
            assert cell == float(trace.weights[0, i, j])  # full precision; masked: exactly 0
            assert (cell == 0.0) == (j > i)
    masked = table(at.dataframe[6])
    assert masked.iloc[0, 1] == -math.inf  # the true value, greyed on screen
    output = table(at.dataframe[10])
    assert output.iloc[5, 7] == float(trace.output[5, 7])


def test_app_step_by_step_heatmap_marks_masked_cells():
    at = open_page("pages/step_by_step.py")
    spec = at.get("vega_lite_chart")[7].proto.spec
    assert '"datum.masked"' in spec and "#a3a3a3" in spec


def test_app_head_selector_shows_the_other_head():
    at = open_page("pages/step_by_step.py", heads=4)
    at.segmented_control(key="head").set_value(3).run()
    no_exception(at)
    trace = expected_trace(heads=4)
    weights = table(at.dataframe[7])
    assert weights.iloc[5, 2] == float(trace.weights[3, 5, 2])
    assert table(at.dataframe[1]).columns[0] == "d6"  # head 3 of d_head 2 owns d6, d7


def test_app_sentence_labels_are_the_tokens():
    at = open_page("pages/step_by_step.py", src="sentence", text="the cat saw the dog", T=8)
    no_exception(at)
    weights = table(at.dataframe[7])
    assert list(weights.index) == ["the#1", "cat", "saw", "the#2", "dog"]
    emb = sentence_embeddings("the cat saw the dog", 8, seed=0, max_len=8)
    with torch.no_grad():
        trace = seeded_layer(0, 8, 2)(emb.x, "causal")
    assert weights.iloc[4, 1] == float(trace.weights[0, 4, 1])


def test_app_worked_example_prints_the_tutorial_output():
    at = open_page("pages/worked_example.py")
    no_exception(at)
    tables = [table(df) for df in at.dataframe if list(df.value.columns)[1:] == ["d0", "d1"]]
    output = tables[-1]  # x, q, k, v, then the output: the last stage
    assert [[format_number(v) for v in row] for row in output.values.tolist()] == [
        ["0.6038", "0.7434"],
        ["-0.0062", "0.6072"],
        ["3.4989", "2.2427"],
    ]


def test_app_worked_example_check_yourself_right_and_wrong():
    at = open_page("pages/worked_example.py")
    ex = worked_example()
    with torch.no_grad():
        trace = ex.layer(ex.embedded.x, "causal", mask_value=-1e9)
    weight = format_number(float(trace.weights[0, 1, 0]))
    by_hand(at, 2).input(weight).run()
    assert any(s.value.startswith("Right") for s in at.success)
    by_hand(at, 1).input("0.5").run()
    assert any(e.value.startswith("Not quite") for e in at.error)
    by_hand(at, 3).input("banana").run()
    assert any("not a number" in w.value for w in at.warning)


def test_app_url_parameters_restore_the_controls():
    at = open_page("pages/step_by_step.py", T=9, d_model=12, heads=3, causal="false", seed=7)
    no_exception(at)
    assert at.sidebar.slider(key="T").value == 9
    assert at.sidebar.slider(key="d_model").value == 12
    assert at.sidebar.select_slider(key="heads").value == 3
    assert at.sidebar.toggle(key="causal").value is False
    assert at.sidebar.number_input(key="seed").value == 7
    assert len(table(at.dataframe[0])) == 9


@pytest.mark.parametrize(
    "params, words",
    [
        ({"T": "banana"}, "T=banana is not a whole number from 1 to 64: using 6."),
        ({"T": "0"}, "T=0 is not a whole number"),
        ({"d_model": "9999"}, "d_model=9999"),
        ({"heads": "five"}, "heads=five is not a whole number from 1 to 16: using 2."),
        ({"causal": "maybe"}, "causal=maybe must be true or false"),
        ({"src": "<script>"}, "src=<script> must be one of"),
        ({"seed": "1.5"}, "seed=1.5 is not a whole number from 0 to 99999: using 1."),
        ({"zoom": "3"}, "Unknown link parameter zoom ignored"),
    ],
)
def test_app_nonsense_link_gives_a_message_and_defaults(params, words):
    at = open_page("pages/step_by_step.py", **params)
    no_exception(at)
    messages = [as_read(w.value) for w in at.sidebar.warning]
    assert any(words in m for m in messages), messages
    assert at.sidebar.slider(key="T").value in (6, 1)  # T falls back to its default
    assert len(at.get("vega_lite_chart")) == 11


def test_app_heads_move_to_the_nearest_divisor():
    at = open_page("pages/step_by_step.py", d_model=12, heads=6)
    at.sidebar.slider(key="d_model").set_value(8).run()
    no_exception(at)
    assert at.sidebar.select_slider(key="heads").value == 6  # as asked, and as the URL says
    assert any(
        "H = 6 does not divide d_model = 8: the page uses H = 4" in i.value for i in at.sidebar.info
    )


def test_app_controls_keep_their_values_across_lessons():
    at = open_page("pages/step_by_step.py")
    at.sidebar.slider(key="T").set_value(11).run()
    at.switch_page("pages/multi_head.py").run()
    no_exception(at)
    assert at.sidebar.slider(key="T").value == 11
    assert at.title[0].value == "2 · Multi-head attention"


def test_app_empty_sentence_shows_a_message_not_a_traceback():
    at = open_page("pages/step_by_step.py", src="sentence", text="   ")
    no_exception(at)
    assert any("no tokens" in e.value for e in at.error)


def test_app_in_lesson_choices_survive_a_visit_to_another_lesson():
    """Head shown, query i / key j, d_k, τ, typed answers and edited encodings are still there
    when the student comes back from another lesson."""
    at = open_page("pages/step_by_step.py")
    at.segmented_control(key="head").set_value(1)
    at.selectbox(key="cell_i").set_value(4)
    at.selectbox(key="cell_j").set_value(2)
    at.run()
    at.switch_page("pages/why_sqrt_dk.py").run()
    at.select_slider(key="dk").set_value(256)
    at.select_slider(key="tau").set_value(0.5)
    at.run()
    at.switch_page("pages/worked_example.py").run()
    at.session_state["encodings_0"] = {
        "edited_rows": {0: {"dim 0": "2.5"}}, "added_rows": [], "deleted_rows": []
    }  # fmt: skip
    at.run()
    by_hand(at, 1).set_value("0,5")  # typed at the edited numbers: its box is theirs
    at.run()
    at.switch_page("pages/masking.py").run()
    at.switch_page("pages/step_by_step.py").run()
    no_exception(at)
    assert at.segmented_control(key="head").value == 1
    assert (at.selectbox(key="cell_i").value, at.selectbox(key="cell_j").value) == (4, 2)
    at.switch_page("pages/why_sqrt_dk.py").run()
    assert (at.select_slider(key="dk").value, at.select_slider(key="tau").value) == (256, 0.5)
    at.switch_page("pages/worked_example.py").run()
    no_exception(at)
    assert by_hand(at, 1).value == "0,5"
    x = next(t for t in (table(d) for d in at.dataframe) if list(t.index) == ["x1", "x2", "x3"])
    assert x.iloc[0, 0] == 2.5


def test_app_masking_choices_survive_a_visit_to_another_lesson():
    """The masking lesson's padding (kept by bounded_slider, not persist_state) and its head
    picker are still set, and still applied, when the student comes back from another lesson."""
    at = open_page("pages/masking.py")
    at.select_slider(key="pad").set_value(2)
    at.segmented_control(key="mask_head").set_value(1)
    at.run()
    at.switch_page("pages/step_by_step.py").run()
    at.switch_page("pages/masking.py").run()
    no_exception(at)
    assert at.select_slider(key="pad").value == 2
    assert at.segmented_control(key="mask_head").value == 1
    may_attend = at.dataframe[0].value  # "True = may attend": the two padding keys are F
    assert (may_attend.iloc[:, -2:] == "F").all().all()
    assert (may_attend.iloc[:, :-2] == "T").any().all()


def test_app_cell_by_hand_parenthesises_a_negative_row_max():
    """Lesson 1's one cell by hand at a cell whose row max is negative (query 0 under the causal
    mask sees key 0 only, so the max is s'_{0,0} itself): e^{s' − (max)}, never "− −"."""
    from attention.explain import explain_cell
    from dashboard.controls import Settings
    from dashboard.lessons import computed

    cell = explain_cell(computed(Settings()).trace, 0, 0, 0)
    assert cell.allowed and cell.scaled < 0 and cell.row_max < 0  # the case this test is about
    at = open_page("pages/step_by_step.py")
    at.selectbox(key="cell_i").set_value(0)
    at.selectbox(key="cell_j").set_value(0)
    at.run()
    no_exception(at)
    working = " ".join(element.value for element in at.get("latex"))
    scaled, row_max = format_number(cell.scaled), format_number(cell.row_max)
    assert f"e^{{{scaled} - ({row_max})}}" in working
    assert naked_negatives(working) == []


@pytest.mark.parametrize(
    ("page", "active"),
    [
        ("pages/worked_example.py", {"causal"}),
        ("pages/why_sqrt_dk.py", {"seed"}),
        ("pages/what_heads_learn.py", set()),
        ("pages/step_by_step.py", {"src", "T", "d_model", "heads", "causal", "seed"}),
    ],
)
def test_app_sidebar_greys_out_what_a_lesson_ignores(page, active):
    at = open_page(page)
    no_exception(at)
    widgets = {
        "src": at.sidebar.radio(key="src"), "T": at.sidebar.slider(key="T"),
        "d_model": at.sidebar.slider(key="d_model"), "heads": at.sidebar.select_slider(key="heads"),
        "causal": at.sidebar.toggle(key="causal"), "seed": at.sidebar.number_input(key="seed"),
    }  # fmt: skip
    assert {key for key, widget in widgets.items() if not widget.disabled} == active
    if len(active) < len(widgets):
        said = "the others are greyed out" if active else "they are greyed out"
        assert any(said in c.value for c in at.sidebar.caption)


def test_app_large_matrices_are_pictures_and_say_so():
    """At the maxima the big heatmaps are one PNG each (no per-cell marks for the browser to
    lay out) and the page says hovering shows no values; at the defaults nothing changes."""
    at = open_page("pages/step_by_step.py", T=64, d_model=256, heads=16)
    no_exception(at)
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    pictures = [s for s in specs if s["layer"][0]["mark"].get("type") == "image"]
    assert len(pictures) == 7  # X, the four T x T stages, concat, output (Q, K, V, Z: 1,024)
    assert sum(PICTURE_NOTE in c.value for c in at.caption) == 7
    at = open_page("pages/step_by_step.py")
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert all(
        s["layer"][0]["mark"] in ("rect", {"type": "rect"})
        or s["layer"][0]["mark"].get("type") == "rect"
        for s in specs
    )
    assert not any(PICTURE_NOTE in c.value for c in at.caption)
    at = open_page("pages/multi_head.py", T=64, d_model=256, heads=16)
    # Q split into heads, the two galleries (one note each, not one per head), concat, output
    assert sum(PICTURE_NOTE in c.value for c in at.caption) == 5


def test_app_a_stages_row_is_its_table_its_heatmap_and_the_note_only_when_said():
    """Each stage's row holds its table and its heatmap, and the picture note only when the
    heatmap is a picture: nothing stands in for the note where it is not said. The row ends
    with the note, so the row keeps every later element's place whether the note comes or
    goes (blocks.picture_note), and every student is sent an element less a stage (issue 53:
    lesson 1's first page 121 messages, 11 of them placeholders)."""

    def rows(at):  # the containers holding a table and a heatmap: what each holds, in order
        def blocks(node):
            if getattr(node, "children", None):
                yield node
                for key in sorted(node.children):
                    yield from blocks(node.children[key])

        for block in blocks(at.main):
            kinds = [block.children[key].type for key in sorted(block.children)]
            if {"dataframe", "vega_lite_chart"} <= set(kinds):
                yield kinds

    assert list(rows(open_page("pages/step_by_step.py"))) == [["dataframe", "vega_lite_chart"]] * 11
    large = list(rows(open_page("pages/step_by_step.py", T=64, d_model=256, heads=16)))
    assert len(large) == 11
    assert large.count(["dataframe", "vega_lite_chart", "caption"]) == 7  # the pictures say so
    assert large.count(["dataframe", "vega_lite_chart"]) == 4  # Q, K, V, Z: cells, no note


@pytest.mark.parametrize("task", ["previous_token", "induction"])
def test_app_lesson_6s_maps_have_no_placeholder_for_a_note_they_never_need(task):
    """Lesson 6's head maps are never pictures (a task's sequence is short: at most 24 tokens,
    576 cells), so no placeholder keeps the picture note's place after each: 10 elements a
    first page that every student was sent for nothing (issue 53). The maps are all drawn."""
    at = open_page("pages/what_heads_learn.py", learn=task)
    no_exception(at)

    def beside_a_map(node):  # the kinds of element in each container that holds a map
        kinds = [child.type for child in getattr(node, "children", {}).values()]
        if "vega_lite_chart" in kinds:
            yield kinds
        for child in getattr(node, "children", {}).values():
            yield from beside_a_map(child)

    held = list(beside_a_map(at.main))
    assert sum(kinds.count("vega_lite_chart") for kinds in held) >= 8, held
    assert not [kinds for kinds in held if "empty" in kinds], held
    assert not [c for c in at.caption if c.value.startswith(PICTURE_NOTE)]


@pytest.mark.parametrize("page", ["pages/step_by_step.py", "pages/multi_head.py"])
def test_app_moving_t_keeps_every_heatmap_spec(page):
    """A slider move must change the charts' data, not their specs: a changed spec makes the
    browser rebuild the chart from scratch (an accessible name holding T made every T move
    cost a fifth more to repaint)."""

    def specs(**params):
        at = open_page(page, **params)
        no_exception(at)
        return [c.proto.spec for c in at.get("vega_lite_chart")]

    assert specs(T=6) == specs(T=5)


@pytest.mark.parametrize("page", ["pages/step_by_step.py", "pages/multi_head.py"])
def test_app_moving_t_keeps_every_formula_element(page):
    """A stage's heading, formula and words are one element that a T move leaves unchanged, so
    the browser keeps it as drawn (an unchanged element is not redrawn); only the shape line
    beside it changes. With the shape inside it, every formula was typeset again on every
    move."""

    def formulas(**params):
        at = open_page(page, **params)
        no_exception(at)
        return [m.proto.SerializeToString() for m in at.markdown if "$$" in m.value]

    assert formulas(T=6) and formulas(T=6) == formulas(T=5)


def element_slots(at) -> list[str]:
    """The page's top-level elements by kind; an st.empty slot and what fills it are one slot."""
    kids = at.main.children
    kinds = [getattr(kids[k], "type", type(kids[k]).__name__) for k in sorted(kids)]
    return ["slot" if kind in ("empty", "caption") else kind for kind in kinds]


@pytest.mark.parametrize("page", ["pages/step_by_step.py", "pages/multi_head.py"])
@pytest.mark.parametrize(
    "before, after",
    [
        ({"heads": 2}, {"heads": 1}),  # the head picker used to vanish with one head
        ({"d_model": 8, "heads": 2}, {"d_model": 256, "heads": 2}),  # square -> wide tables
        ({"T": 40}, {"T": 64}),  # small heatmaps -> pictures, with their note
    ],
)
def test_app_a_slider_move_keeps_every_element_in_its_place(page, before, after):
    """An element that appears or vanishes shifts every element after it, and the browser
    then rebuilds the rest of the page instead of updating it (a heads move at the defaults
    took 375 ms to repaint instead of about 250)."""
    assert element_slots(open_page(page, **before)) == element_slots(open_page(page, **after))


@pytest.mark.parametrize(
    ("page", "function"),
    [
        ("pages/multi_head.py", "def project_qkv_fused"),
        ("pages/worked_example.py", "def tutorial_attention"),
    ],
)
def test_app_code_shown_is_the_code_that_runs(page, function):
    """A page's code block is the source of the function the numbers come from, not a copy."""
    at = open_page(page)
    no_exception(at)
    assert any(function in code.value for code in at.code)


def test_the_navigations_pages_are_made_once_and_each_run_gets_its_own_copies():
    """Issue 53: each run made and checked 17 st.Page objects; they are made once for the
    server now, and st.navigation, which marks the page it returns as the one to run, gets
    copies, so two students' runs never share a page object."""
    from dashboard import frame

    first = open_page("pages/step_by_step.py")
    no_exception(first)
    made = list(frame.pages())
    assert len(made) == 1 + len(frame.LESSONS) + 2  # home, the lessons, class, glossary
    second = open_page("pages/masking.py")
    no_exception(second)
    assert frame.pages() == made and all(a is b for a, b in zip(frame.pages(), made, strict=True))
    assert [page.title for page in made][:2] == ["Home", frame.LESSONS[0].title]
    assert not any(page._can_be_called for page in made)  # only the runs' copies were run


@pytest.mark.parametrize("params", [{}, {"T": "8", "pad": "2"}, {"T": "2", "causal": "false"}])
def test_app_masking_fully_masked_row_table_shows_this_settings_numbers(params):
    """Lesson 3's "−∞ or −1e9?" table, marshalled once for every session that shows the same
    numbers (blocks.show_rows): at each setting its rows are this setting's, the naive −∞ row
    NaN (0/0), the −1e9 row uniform over the T keys, the package's row the lesson's weights
    (zeros at every setting here: the rows depend on T alone)."""
    from dashboard import controls, lessons

    at = open_page("pages/masking.py", **params)
    no_exception(at)
    found = [t for t in (table(d) for d in at.dataframe) if "naive softmax, fill −1e9" in t.index]
    assert len(found) == 1
    shown = found[0]
    T = int(params.get("T", controls.DEFAULTS["T"]))
    assert shown.shape == (3, T)
    assert shown.loc["naive softmax, fill −∞"].isna().all()
    assert (shown.loc["naive softmax, fill −1e9"] - 1 / T).abs().max() < 1e-6
    empty = lessons.Variant(
        n_padding=int(params.get("pad", 0)), empty_last_row=True, mask_value=float("-inf")
    )
    package = lessons.computed(controls.settings_of(params), empty).trace.weights[0, -1]
    row = shown.loc["this package = PyTorch SDPA"].tolist()
    assert row == pytest.approx(package.tolist(), abs=1e-6)
