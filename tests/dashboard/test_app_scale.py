"""Lessons 9-11 through AppTest: defaults, the corners of their own controls, and the
equalities they show."""

import json
import re

import pytest
from conftest import as_read, no_exception, open_page


def shown(at) -> str:
    """The page's prose as read, bold marks dropped."""
    return " ".join(as_read(m.value) for m in at.markdown).replace("**", "")


def test_position_shuffle_is_exact_without_a_mask_and_broken_with_it():
    at = open_page("pages/position.py")
    no_exception(at)
    text = shown(at)
    assert "without a mask: 0.0000" in text
    causal = float(text.split("With the causal mask: ")[1].split(":")[0])
    assert causal > 0.01
    assert len(at.get("vega_lite_chart")) >= 4


@pytest.mark.parametrize("params", [{"T": "1"}, {"T": "64", "d_model": "256", "heads": "16"}])
def test_position_corners(params):
    at = open_page("pages/position.py", **params)
    no_exception(at)


def test_kv_cache_generation_equals_the_full_pass_at_every_step():
    at = open_page("pages/kv_cache.py", T="7", heads="4", d_model="8")
    no_exception(at)
    for t in (0, 6):
        at.select_slider(key="decode_step").set_value(t).run()
        no_exception(at)
        assert "largest difference 0.0000" in shown(at)
    at.select_slider(key="kv_heads").set_value(1).run()
    no_exception(at)
    table = next(d.value for d in at.dataframe if "uses K/V head" in d.value.columns)
    assert list(table["uses K/V head"]) == [0, 0, 0, 0]
    for window in (1, 7):
        at.select_slider(key="window").set_value(window).run()
        no_exception(at)
        assert shown(at).count("largest difference 0.0000") == 2


@pytest.mark.parametrize("params", [{"T": "1"}, {"T": "64", "d_model": "256", "heads": "16"}])
def test_kv_cache_corners(params):
    no_exception(open_page("pages/kv_cache.py", **params))


@pytest.mark.parametrize(("block_q", "block_k"), [(1, 1), (3, 2), (6, 6)])
@pytest.mark.parametrize("causal", ["true", "false"])
def test_at_scale_tiles_equal_sdpa_for_any_blocks(block_q, block_k, causal):
    at = open_page("pages/at_scale.py", causal=causal)
    at.select_slider(key="block_q").set_value(block_q)
    at.select_slider(key="block_k").set_value(block_k)
    at.run()
    no_exception(at)
    for steps in [s for s in at.slider if s.key == "tile_step"]:  # none when one tile
        steps.set_value(steps.max).run()
        no_exception(at)
    assert "largest difference 0.0000" in shown(at)
    assert "time ∝ T^" in shown(at)


def test_at_scale_corners():
    no_exception(open_page("pages/at_scale.py", T="1"))
    no_exception(open_page("pages/at_scale.py", T="64", d_model="256", heads="16"))


@pytest.mark.parametrize("T", [6, 64])
def test_at_scale_memory_sentence_counts_scores_and_weights_both_ways(T):
    """The tile's bytes and the full matrices' bytes count the same two matrices, S and P."""
    at = open_page("pages/at_scale.py", T=str(T))
    no_exception(at)
    sentence = next(as_read(m.value) for m in at.markdown if "one tile's scores" in m.value)
    full = int(re.search(r"scores and weights ([\d,]+)\.", sentence)[1].replace(",", ""))
    assert full == 2 * T * T * 4  # float32 S and P


FLASH_CPU = "aten::_scaled_dot_product_flash_attention_for_cpu"


def cost_table(at):
    frames = [d.value for d in at.dataframe]
    numbers = next(f for f in frames if "fused peak MiB" in f.columns)
    ranges = next(f for f in frames if "fused ms (range)" in f.columns)
    return numbers.merge(ranges, on="T")


def test_at_scale_names_the_fused_kernel_the_profiler_reports_and_measures_its_memory():
    """Issue 17 item 1: the 'fused' path ran SDPA's unfused math path on 3-D tensors."""
    from dashboard.views.at_scale import costs

    at = open_page("pages/at_scale.py")
    no_exception(at)
    measured = costs()  # the page's own measurements (the server's cache)
    assert {cost.fused.kernel for cost in measured} == {FLASH_CPU}
    kernels = next(as_read(m.value) for m in at.markdown if "Which kernels ran" in m.value)
    assert f"fused — `{FLASH_CPU}` at every T" in kernels
    assert "_scaled_dot_product_attention_math" not in shown(at)
    frame = cost_table(at).set_index("T")
    for cost in measured:  # the table shows the profiler's peaks, not T x T counted
        assert frame.loc[cost.T, "fused peak MiB"] == round(cost.fused.peak_bytes / 2**20, 3)
        assert frame.loc[cost.T, "naive peak MiB"] == round(cost.naive.peak_bytes / 2**20, 3)
    big = frame.loc[2048]
    assert big["fused peak MiB"] < big["S + P MiB (counted)"] / 8


def test_at_scale_cost_sentences_follow_the_measured_numbers():
    from attention.cost import log_slope

    at = open_page("pages/at_scale.py")
    no_exception(at)
    frame = cost_table(at)
    text = shown(at)
    last = frame.tail(3)
    for name, column in (("naive (T × T held)", "naive"), ("fused SDPA", "fused")):
        slope = log_slope(list(last["T"]), list(last[f"{column} ms (best)"]))
        printed = float(re.search(rf"{re.escape(name)}: time ∝ T\^([\d.]+)", text)[1])
        assert abs(printed - slope) <= 0.1  # from the table's rounded figures
    big, before = frame.iloc[-1], frame.iloc[-2]
    for column in ("naive", "fused"):  # issue 28, item 5: memory over the last doubling, read
        a, b = before[f"{column} peak MiB"], big[f"{column} peak MiB"]  # from the table
        assert f"from {a:.2f} to {b:.2f} MiB (×{b / a:.1f}" in text, (column, a, b)
    d_k = 64
    for row in (before, big):  # beyond the output O: a fixed working buffer, as it says
        spare = row["fused peak MiB"] - row["T"] * d_k * 4 / 2**20
        assert f"{spare:.2f}" in text
    assert abs((big["fused peak MiB"] - big["T"] * d_k * 4 / 2**20)
               - (before["fused peak MiB"] - before["T"] * d_k * 4 / 2**20)) < 0.1  # fmt: skip
    assert "peak memory ∝" not in text  # no slope fitted across the kernel's buffer change
    ratio = big["naive ms (best)"] / big["fused ms (best)"]
    if ratio >= 1.15:
        assert "the fused kernel is" in text and "faster than naive attention" in text
    elif ratio <= 1 / 1.15:
        assert "naive attention is" in text and "faster than the fused kernel" in text
    elif 1 / 1.05 <= ratio <= 1.05:
        assert "the two take about the same time" in text
    held = big["naive peak MiB"] / big["fused peak MiB"]
    assert f"{held:.0f}× less" in text
    assert "what the fused kernel saves for sure" not in text  # asserted, never measured


def tile_chart(at):
    return next(
        json.loads(c.proto.spec)
        for c in at.get("vega_lite_chart")
        if json.loads(c.proto.spec).get("description", "").startswith("FlashAttention's tiles")
    )


def colour_titles(spec) -> list:
    found, nodes = [], [spec]
    while nodes:
        node = nodes.pop()
        if isinstance(node, list):
            nodes.extend(node)
        elif isinstance(node, dict):
            if isinstance(node.get("color"), dict) and "title" in node["color"]:
                found.append(node["color"])
            nodes.extend(node.values())
    return found


@pytest.mark.parametrize("T", [6, 64])  # marks per cell, and one picture
def test_at_scale_tile_map_legend_names_the_tile_states(T):
    at = open_page("pages/at_scale.py", T=str(T))
    no_exception(at)
    colours = colour_titles(tile_chart(at))
    assert colours and all(c["title"] == "tile" for c in colours)
    for colour in colours:
        assert colour["legend"]["values"] == [0.0, 0.45, 1.0]
        for name in ("to come", "done", "current"):
            assert f"'{name}'" in colour["legend"]["labelExpr"]


def accumulator(at):
    return next(d.value for d in at.dataframe if "query \\ feature" in d.value.columns)


def test_at_scale_shows_the_accumulator_o_filling_row_block_by_row_block():
    at = open_page("pages/at_scale.py")  # T = 6, blocks of 2: 3 x 3 tiles
    no_exception(at)
    # tiles counted from 0, as the walker's "Tile 0 of tiles 0–8" (issue 30, item 3)
    assert any(m.value.startswith("**The accumulator O after tile 0:") for m in at.markdown)
    first = accumulator(at).set_index("query \\ feature")
    assert (first.iloc[:2] != 0).any(axis=1).all() and (first.iloc[2:] == 0).all(axis=None)
    at.select_slider(key="tile_step").set_value(3).run()  # tile 3: queries 2-3 against keys 0-1
    no_exception(at)
    fourth = accumulator(at).set_index("query \\ feature")
    assert (fourth.iloc[:4] != 0).any(axis=1).all() and (fourth.iloc[4:] == 0).all(axis=None)
    assert "FlashAttention's accumulator O" in " ".join(
        json.loads(c.proto.spec).get("description", "") for c in at.get("vega_lite_chart")
    )


def test_at_scale_play_walks_the_tiles_and_stops_at_the_last():
    at = open_page("pages/at_scale.py", T="64")  # blocks of 2: 1,024 tiles, 32 a frame
    no_exception(at)
    assert "Play walks the 1024 tiles in 32 frames" in " ".join(c.value for c in at.caption)
    at.button(key="tile_play").click().run()
    no_exception(at)
    assert at.select_slider(key="tile_step").value == 32
    assert at.button(key="tile_play").label == "Pause"
    at.button(key="tile_play").click().run()  # pause: the walk stays where it is
    assert at.select_slider(key="tile_step").value == 32
    assert at.button(key="tile_play").label == "Play"
    at.select_slider(key="tile_step").set_value(1000).run()
    at.button(key="tile_play").click().run()  # the last frame: it stops there
    no_exception(at)
    assert at.select_slider(key="tile_step").value == 1023
    assert at.button(key="tile_play").label == "Play"
    at.button(key="tile_play").click().run()  # Play at the end starts again from the first tile
    assert at.select_slider(key="tile_step").value == 32
