"""Lessons 9-11 through AppTest: defaults, the corners of their own controls, and the
equalities they show."""

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
        at.slider(key="decode_step").set_value(t).run()
        no_exception(at)
        assert "largest difference 0.0000" in shown(at)
    at.select_slider(key="kv_heads").set_value(1).run()
    no_exception(at)
    table = next(d.value for d in at.dataframe if "uses K/V head" in d.value.columns)
    assert list(table["uses K/V head"]) == [0, 0, 0, 0]
    for window in (1, 7):
        at.slider(key="window").set_value(window).run()
        no_exception(at)
        assert shown(at).count("largest difference 0.0000") == 2


@pytest.mark.parametrize("params", [{"T": "1"}, {"T": "64", "d_model": "256", "heads": "16"}])
def test_kv_cache_corners(params):
    no_exception(open_page("pages/kv_cache.py", **params))


@pytest.mark.parametrize(("block_q", "block_k"), [(1, 1), (3, 2), (6, 6)])
@pytest.mark.parametrize("causal", ["true", "false"])
def test_at_scale_tiles_equal_sdpa_for_any_blocks(block_q, block_k, causal):
    at = open_page("pages/at_scale.py", causal=causal)
    at.slider(key="block_q").set_value(block_q)
    at.slider(key="block_k").set_value(block_k)
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
