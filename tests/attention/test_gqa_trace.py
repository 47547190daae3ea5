"""Grouped-query traces: k and v hold H_kv heads, and every head-indexed helper reads query head
h's keys and values from K/V head h // (H / H_kv), as the layer does (issue 17 item 7)."""

import re
from pathlib import Path

import pytest
import torch

from attention import STAGES, random_embeddings, seeded_layer
from attention import trace as trace_module
from attention.drill_set import make_drills
from attention.explain import check_trace, explain_cell, explain_output_row, from_printed

SETTINGS = [(4, 2), (4, 1), (6, 3), (2, 2)]  # (H, H_kv): grouped, multi-query, grouped, plain


def gqa_trace(H=4, H_kv=2, T=6, d_model=24, seed=0, batched=False, mask="causal"):
    x = random_embeddings(T, d_model, seed).x
    with torch.no_grad():
        layer = seeded_layer(seed, d_model, H, n_kv_heads=H_kv)
        return layer(x[None] if batched else x, mask)


@pytest.mark.parametrize(("H", "H_kv"), SETTINGS)
def test_kv_head_is_the_group_the_layer_uses(H, H_kv):
    trace = gqa_trace(H, H_kv)
    assert trace.n_heads == H and trace.n_kv_heads == H_kv
    group = H // H_kv
    assert [trace.kv_head(h) for h in range(H)] == [h // group for h in range(H)]
    for h in range(H):  # the trace's own scores are q of head h against k of head kv_head(h)
        k = trace.k[trace.kv_head(h)]  # (T, d_head)
        torch.testing.assert_close(trace.scores[h], trace.q[h] @ k.T)
    torch.testing.assert_close(trace.shared("k")[3 % H], trace.k[trace.kv_head(3 % H)])
    torch.testing.assert_close(trace.shared("v"), trace.v.repeat_interleave(group, dim=0))


@pytest.mark.parametrize("bad", [-1, 4, 1.0, True, "0"])
def test_kv_head_rejects_what_is_not_a_query_head(bad):
    with pytest.raises(ValueError, match="query head"):
        gqa_trace(4, 2).kv_head(bad)


@pytest.mark.parametrize("batched", [False, True])
def test_stage_dims_name_what_a_gqa_trace_holds(batched):
    trace = gqa_trace(4, 2, T=5, d_model=24, batched=batched)
    sizes = {"B": 1, "T": 5, "C": 24, "H": 4, "H_kv": 2, "d_k": 6}
    for stage in STAGES:
        dims = (("B",) if batched else ()) + stage.dims
        assert tuple(trace.stage(stage.name).shape) == tuple(sizes[d] for d in dims), stage.name


def test_trace_module_documents_k_and_v_with_h_kv_heads():
    source = Path(trace_module.__file__).read_text(encoding="utf-8")  # the field comments
    for name in ("k", "v"):
        line = next(s for s in source.splitlines() if re.match(rf"\s+{name}: Tensor", s))
        assert "(B, H_kv, T, d_head)" in line, line


@pytest.mark.parametrize(("H", "H_kv"), SETTINGS)
def test_explain_cell_matches_the_trace_for_every_query_head(H, H_kv):
    trace = gqa_trace(H, H_kv)
    for h in range(H):
        for i, j in ((3, 2), (5, 0), (4, 4)):
            cell = explain_cell(trace, h, i, j)
            assert float(cell.products.sum()) == pytest.approx(cell.score, abs=1e-6)
            assert cell.score == pytest.approx(float(trace.scores[h, i, j]), abs=1e-6)
            assert cell.weight == pytest.approx(float(trace.weights[h, i, j]), abs=1e-7)
            torch.testing.assert_close(cell.k_j, trace.k[trace.kv_head(h), j])


@pytest.mark.parametrize(("H", "H_kv"), SETTINGS)
def test_explain_output_row_matches_the_trace_for_every_query_head(H, H_kv):
    trace = gqa_trace(H, H_kv)
    for h in range(H):
        row = explain_output_row(trace, h, 4)
        torch.testing.assert_close(row.terms.sum(dim=0), row.output)
        torch.testing.assert_close(row.output, trace.heads[h, 4])


@pytest.mark.parametrize(("H", "H_kv"), SETTINGS)
@pytest.mark.parametrize("batched", [False, True])
def test_check_trace_passes_on_a_gqa_trace(H, H_kv, batched):
    checks = check_trace(gqa_trace(H, H_kv, batched=batched))
    assert checks.output_matches
    assert checks.max_row_error < 1e-6 and checks.blocked_nonzero == 0


def test_from_printed_reads_head_0s_own_keys_on_a_gqa_trace():
    trace = gqa_trace(4, 2)
    for stage in ("scaled", "weights", "output"):
        exact = {"scaled": trace.scaled, "weights": trace.weights, "output": trace.heads}[stage]
        assert from_printed(trace, stage, 4, 1) == pytest.approx(float(exact[0, 4, 1]), abs=1e-3)


@pytest.mark.parametrize(("H", "H_kv"), SETTINGS)
@pytest.mark.parametrize("seed", range(12))
def test_every_drill_on_a_gqa_trace_grades_its_own_answer_right(H, H_kv, seed):
    from attention.drills import grade

    trace = gqa_trace(H, H_kv)
    labels = [f"t{i}" for i in range(6)]
    drills = {d.kind: d for d in make_drills(trace, labels, causal=True, seed=seed)}
    for drill in drills.values():
        typed = str(min(drill.answer)) if drill.kind == "argmax" else drill.answer_text
        assert grade(drill, typed).status == "right", (drill.kind, drill.prompt)
    # the numbers a drill shows give its answer: q_i . k_j x scale, and sum_j a_ij v_j[c]
    score = drills["score"]
    q_i, k_j = (torch.tensor(row, dtype=torch.float64) for _, row in score.given.rows)
    assert float(q_i @ k_j) * trace.scale == pytest.approx(score.answer, abs=1e-5)
    output = drills["output"]
    a, v = (torch.tensor(row, dtype=torch.float64) for _, row in output.given.rows)
    assert float(a @ v) == pytest.approx(output.answer, abs=1e-5)
