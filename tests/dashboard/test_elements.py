"""Elements marshalled once and replayed (dashboard/render/elements.py): what a replay sends is
what Streamlit's own st.dataframe / st.vega_lite_chart send, and the greyed table built without
a pandas Styler equals the Styler's."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from attention import as_additive
from attention.explain import allowed_matrix
from dashboard.controls import Settings
from dashboard.lessons import Variant, computed
from dashboard.render import blocks
from dashboard.render.elements import record
from dashboard.render.matrices import make_stage_view, styled_table
from dashboard.render.tables import format_array, texts_px, widest_printed

REPLAY_APP = Path(__file__).parent / "apps" / "replay_app.py"


def greyed_view(**settings):
    """The masked scores of a small causal lesson with a padded key, so -inf, greyed cells and
    ungreyed cells all appear."""
    return make_stage_view(
        computed(Settings(**settings), Variant(n_padding=1)), "masked", 0, None, False
    )


def decoded(arrow_bytes: bytes) -> pa.Table:
    return pa.ipc.open_stream(arrow_bytes).read_all()


@pytest.mark.parametrize(
    "settings",
    [dict(seq_len=4, d_model=4, n_heads=1), dict(seq_len=12, d_model=8, n_heads=2, seed=7)],
)
def test_table_element_equals_what_streamlit_sends_for_the_styler(settings):
    view = greyed_view(**settings)
    assert view.greyed is not None and view.greyed.any() and not view.greyed.all()
    ours = blocks.table_element.__wrapped__(view.token, _view=view).proto
    styler = styled_table(view)
    theirs = record(lambda dg: dg.dataframe(styler, **blocks.table_options(view))).proto
    assert ours.arrow_data.styler.uuid == theirs.arrow_data.styler.uuid
    assert ours.arrow_data.styler.styles == theirs.arrow_data.styler.styles
    assert (
        decoded(ours.arrow_data.styler.display_values).to_pylist()
        == decoded(theirs.arrow_data.styler.display_values).to_pylist()
    )
    # the same cells (ours Arrow as built, the Styler's through pandas with a RangeIndex)
    assert decoded(ours.arrow_data.data).to_pylist() == decoded(theirs.arrow_data.data).to_pylist()
    numbers = decoded(ours.arrow_data.data).schema.types[1:]  # the labels: string either way
    assert numbers == decoded(theirs.arrow_data.data).schema.types[1:]
    mine, streamlits = type(ours)(), type(theirs)()
    mine.CopyFrom(ours)
    streamlits.CopyFrom(theirs)
    for proto in (mine, streamlits):
        proto.arrow_data.ClearField("styler")
        proto.arrow_data.ClearField("data")
    assert mine == streamlits  # columns, widths, placeholder: the rest of the element


def test_table_element_styles_name_the_masked_cells_only():
    view = greyed_view(seq_len=5, d_model=4, n_heads=1)
    styles = blocks.table_element.__wrapped__(view.token, _view=view).proto.arrow_data.styler
    named = styles.styles.count("_row")
    assert named == int(view.greyed.sum())  # one selector per greyed cell, none for the rest


def test_views_of_other_numbers_have_other_tokens():
    one = greyed_view(seq_len=4, d_model=4, n_heads=1)
    again = greyed_view(seq_len=4, d_model=4, n_heads=1)
    other = greyed_view(seq_len=4, d_model=4, n_heads=1, seed=1)
    assert one.token == again.token  # the same numbers: one element for every session
    assert other.token != one.token
    assert replace(one, name="other name").token == one.token  # the chart's name keys it apart


def test_replayed_elements_equal_the_ones_streamlit_draws():
    at = AppTest.from_file(str(REPLAY_APP), default_timeout=30).run()
    assert not at.exception
    table, chart, box = (at.main.children[i] for i in range(3))
    assert table.proto == box.children[0].proto  # the dataframe, inside the container
    assert chart.proto == box.children[1].proto  # the Vega-Lite chart
    assert table.proto.arrow_data.data and chart.proto.spec  # both hold their data


def test_additive_mask_table_equals_what_streamlit_sends_for_its_styler():
    from dashboard.views import masking

    shown = computed(Settings(seq_len=5, d_model=4, n_heads=1), Variant(n_padding=1))
    allowed = allowed_matrix(shown.trace, 0)
    conventions = masking.mask_conventions.__wrapped__(tuple(shown.labels), b"", _allowed=allowed)
    *_, (_, _, _, ours) = conventions
    frame = pd.DataFrame(
        as_additive(allowed_matrix(shown.trace, 0)).tolist(), index=shown.labels,
        columns=shown.labels,
    ).rename_axis(index="query", columns="key")  # fmt: skip
    styler = frame.style.format(lambda v: "-inf" if v == float("-inf") else f"{v:g}")
    styler = styler.set_uuid(masking.ADDITIVE_UUID)
    config = json.loads(ours.proto.columns)
    theirs = record(lambda dg: dg.dataframe(styler, column_config=config)).proto
    printed = decoded(ours.proto.arrow_data.styler.display_values).to_pydict()
    assert "-inf" in printed["t4"] and "0" in printed["t0"]  # t4 is padding: blocked
    assert ours.proto == theirs


def test_widest_printed_equals_measuring_every_printed_number():
    """The column widths print only each column's extremes and special values: the same widths
    as printing and measuring every number, on numbers of every size and sign, -inf, NaN,
    tiny negatives (printed 0.0000) and values that round up a digit (9.99996)."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        rows, cols = rng.integers(1, 9, 2)
        values = rng.standard_normal((rows, cols)) * 10 ** rng.uniform(-6, 7, (rows, cols))
        for special, share in ((-np.inf, 0.1), (np.nan, 0.05), (-3e-5, 0.05), (9.99996, 0.05)):
            values[rng.random((rows, cols)) < share] = special
        every = texts_px(format_array(values)).max(axis=0)
        np.testing.assert_allclose(widest_printed(values), every)


@pytest.mark.parametrize(
    "page, expected",
    [("pages/kv_cache.py", 3), ("pages/why_sqrt_dk.py", 6), ("pages/position.py", 1)],
)
def test_charts_sent_unvalidated_are_valid_vega_lite(page, expected):
    """elements.show_chart skips Altair's validation on the server: every spec those lessons
    send is checked against the Vega-Lite schema here instead."""
    from altair.utils.schemapi import validate_jsonschema
    from altair.vegalite.v6.schema import core
    from conftest import no_exception, open_page

    at = open_page(page)
    no_exception(at)
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    bars_or_lines = [s for s in specs if "rect" not in json.dumps(s.get("mark", s.get("layer")))]
    assert len(bars_or_lines) >= expected
    schema = core.load_schema()
    for spec in specs:  # data sent apart (the proto's data) stands for the spec's own
        validate_jsonschema({"data": {"name": "data"}} | spec, schema)
    # Streamlit's browser side puts a chart's unnamed data into its named dataset when it has
    # exactly one (lesson 4's curves went into the rules' dataset and were not drawn)
    for chart in at.get("vega_lite_chart"):
        named = [dataset.name for dataset in chart.proto.datasets if dataset.has_name]
        assert not (chart.proto.data.data and len(named) == 1), (named, chart.proto.spec[:200])
