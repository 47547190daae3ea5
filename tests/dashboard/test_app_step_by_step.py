"""Lesson 1 through AppTest: what X is, what a label like `I#1` means, which colour scale the
score heatmaps use and that a long sequence's axes name every token, each said on the page and true
for the source shown."""

import torch
from conftest import as_read, no_exception, open_page

from attention.tiny import load
from dashboard import lessons, state
from dashboard.controls import Settings
from dashboard.render import matrices
from dashboard.render.matrices import stage_view
from dashboard.render.tables import format_number
from dashboard.views.step_by_step import label_font

PAGE = "pages/step_by_step.py"


def texts(at) -> list[str]:
    return [as_read(e.value) for e in (*at.markdown, *at.caption)]


def said(at, *words: str) -> bool:
    """Some markdown or caption holds every one of the words."""
    return any(all(word in text for word in words) for text in texts(at))


def induction_layer(layer: int):
    run = load("induction")
    with torch.no_grad():
        return run.model(run.history.example[None]).traces[layer]


def test_step_by_step_trained_layer_1_says_x_is_the_residual_stream_after_layer_0():
    at = open_page(PAGE, src="trained", task="induction", layer="1")
    no_exception(at)
    assert said(at, "X is layer 1's input", "residual stream", "layer 0's output")
    assert not said(at, "X is each token's learned embedding")


def test_step_by_step_trained_layer_0_says_x_is_token_plus_position_embedding():
    at = open_page(PAGE, src="trained", task="induction", layer="0")
    no_exception(at)
    assert said(at, "X is layer 0's input", "token's learned embedding", "position")
    assert not said(at, "residual stream")


def test_step_by_step_random_source_says_x_is_random_numbers():
    at = open_page(PAGE)
    no_exception(at)
    assert said(at, "X is 6 rows of seeded random N(0, 1) numbers", "no words and no positions")


def test_step_by_step_explains_repeated_token_labels():
    at = open_page(PAGE, src="trained", task="induction", layer="1")
    no_exception(at)
    assert said(at, "I#1", "first I", "I#2", "second")


def test_step_by_step_says_nothing_about_occurrence_labels_without_repeats():
    at = open_page(PAGE)
    assert not said(at, "#1")


def test_step_by_step_states_the_score_heatmaps_colour_scale_from_the_numbers():
    """Layer 1's raw scores reach ±292 while its scaled scores stay under ±52: the page says
    which scale the three score heatmaps use, with both numbers, so pale cells are explained."""
    at = open_page(PAGE, src="trained", task="induction", layer="1")
    no_exception(at)
    trace = induction_layer(1)
    raw = format_number(float(trace.scores[0, 0].abs().max()))
    scaled = format_number(float(trace.scaled[0, 0].abs().max()))
    assert said(at, "colour scale", f"±{raw}", scaled)
    # issue 17 item 10: each score stage on its own scale, so the scaled scores are not pale
    assert said(at, "Each score heatmap has its own colour scale")
    lesson = lessons.computed(Settings(source="trained", task="induction", layer=1))
    bound = stage_view(lesson, "scaled", 0).source.bound  # what the heatmap's scale reads
    assert bound == float(trace.scaled[0, 0].abs().max())


def test_step_by_step_labels_every_token_of_a_long_sequence():
    """Issue 17 item 10: at T = 24 the axes named every other token (12 px cells, 14 px labels,
    Vega drops overprinting labels); the labels now shrink to the cell, so every token is named
    and the page has no excuse to print."""
    at = open_page(PAGE, src="trained", task="induction", layer="1")
    no_exception(at)
    assert not said(at, "every other token")
    lesson = lessons.computed(Settings(source="trained", task="induction", layer=1))
    spec = stage_view(lesson, "scores", 0).spec
    assert len(lesson.labels) == 24
    assert label_font(spec) < spec["height"]["step"]


def test_step_by_step_a_typed_mistake_is_named_with_a_link_to_its_bug():
    """Issue 27: a learner alone who types the number a classic mistake gives is told which
    mistake gives it, with a link to that bug in the bug hunt."""
    from attention.diagnosis import diagnosed

    at = open_page("pages/step_by_step.py")
    question = diagnosed(at.session_state["check_pinned_step_by_step_4"])
    mistake = question.mistakes[0]
    box = next(b for b in at.text_input if str(b.key).startswith("check_step_by_step_4_"))
    box.input(f"{mistake.value:.4f}").run()
    no_exception(at)
    said = " ".join(as_read(e.value) for e in at.error)
    title = mistake.titles[0]
    assert f"classic mistake: {title[0].lower() + title[1:]}" in said
    links = [(link.label, link.page) for link in at.get("page_link")]
    assert (f"See it in the bug hunt: {title}", "bug_hunt") in links
    box.input(question.answer_text).run()
    assert all("bug hunt" not in link.label for link in at.get("page_link"))  # right: none


def test_step_by_step_says_the_weights_are_random_where_the_sentence_appears():
    """Issue 30, item 8: lesson 1 says its weights are random, not trained, with links to the
    lessons where heads are trained (6) and a real model reads the student's words (12)."""
    at = open_page("pages/step_by_step.py", src="sentence")
    no_exception(at)
    said = " ".join(as_read(c.value) for c in at.caption)
    assert "random too" in said and "not trained" in said
    pages = {link.page for link in at.get("page_link")}
    assert {"what_heads_learn", "real_model"} <= pages
    trained = open_page("pages/step_by_step.py", src="trained")
    assert not any("random too" in c.value for c in trained.caption)


def test_step_by_step_weight_tables_are_the_layers_projections_transposed():
    """The toggle's four tables are W.weight.T of the layer on the page, (in, out) = (C, C), at
    4 decimals, in the session that builds them and in the next, which reads them kept."""
    settings = Settings(source="random", seq_len=5, d_model=8, n_heads=2, seed=11)
    layer = lessons.computed(settings).layer
    expected = [
        [[format_number(v) for v in row] for row in linear.weight.detach().T.tolist()]
        for linear in (layer.W_q, layer.W_k, layer.W_v, layer.W_o)
    ]
    for _ in range(2):  # the first session builds the tables, the second replays them
        at = open_page(PAGE, src="random", T=5, d_model=8, heads=2, seed=11)
        at.toggle(key="show_weights").set_value(True).run()
        no_exception(at)
        shown = [
            [[format_number(v) for v in row] for row in frame.iloc[:, 1:].to_numpy().tolist()]
            for frame in (t.value for t in at.dataframe)
            if frame.columns[0] == "in"
        ]
        assert shown == expected
        kept = [k for k in state.POOL.entries if k[0].endswith("blocks.layer_weight_elements")]
        assert kept, "the weight tables were not kept for the next session"


def test_a_rerun_with_its_elements_kept_builds_no_table_or_heatmap_data(monkeypatch):
    """A stage view keeps its numbers, not its table or heatmap data (matrices.StageView): a
    rerun whose elements are all kept (nothing moved) must not make either again, or every
    student's rerun pays for it (the score scale's caption once rebuilt three heatmaps' data,
    a PNG each at T = 50, on every rerun)."""
    at = open_page(PAGE, T=50, d_model=16, heads=2)  # T x T maps of 2,500 cells: pictures
    no_exception(at)
    made = []
    monkeypatch.setattr(matrices, "heatmap_cells", lambda *a, **k: made.append("cells"))
    monkeypatch.setattr(matrices, "arrow_table", lambda *a, **k: made.append("table"))
    at.run()
    no_exception(at)
    assert made == []
    assert len(at.get("vega_lite_chart")) >= 8  # every stage's heatmap replayed
