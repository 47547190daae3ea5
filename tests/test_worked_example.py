"""The classic 3-token worked example, checked against plain matrix arithmetic on its weights and
against the digits the tutorial prints."""

import math

import torch
from torch.testing import assert_close

from attention import worked_example


def by_hand(x, W_q, W_k, W_v):
    """The tutorial's arithmetic, written out: nothing from the package but the weights."""
    q = x @ W_q.T
    k = x @ W_k.T
    v = x @ W_v.T
    sims = q @ k.T
    scaled = sims / math.sqrt(k.shape[1])
    blocked = torch.tril(torch.ones(3, 3)) == 0
    masked = scaled.masked_fill(blocked, -1e9)
    weights = torch.exp(masked - masked.max(dim=1, keepdim=True).values)
    weights = weights / weights.sum(dim=1, keepdim=True)
    return dict(q=q, k=k, v=v, scores=sims, scaled=scaled, masked=masked, weights=weights,
                output=weights @ v)  # fmt: skip


def test_worked_example_every_stage_equals_hand_arithmetic():
    ex = worked_example()
    with torch.no_grad():
        trace = ex.layer(ex.embedded.x, ex.mask, mask_value=ex.mask_value)
        expected = by_hand(ex.embedded.x, ex.layer.W_q.weight, ex.layer.W_k.weight,
                           ex.layer.W_v.weight)  # fmt: skip
    for name, value in expected.items():
        got = trace.stage(name)
        if got.ndim == 3:  # (H, T, .) with H = 1
            got = got[0]
        assert_close(got, value, msg=name)


def test_worked_example_reproduces_the_printed_output():
    ex = worked_example()
    with torch.no_grad():
        output = ex.layer(ex.embedded.x, ex.mask, mask_value=ex.mask_value).output
        unmasked = ex.layer(ex.embedded.x).output
    assert printed(output) == [["0.6038", "0.7434"], ["-0.0062", "0.6072"], ["3.4989", "2.2427"]]
    assert printed(unmasked) == [["1.0100", "1.0641"], ["0.2040", "0.7057"], ["3.4989", "2.2427"]]


def printed(t):
    """The digits torch prints for this tensor (4 decimals)."""
    return [[f"{value:.4f}" for value in row] for row in t.tolist()]


def test_worked_example_preset_settings():
    ex = worked_example()
    assert ex.layer.d_model == 2 and ex.layer.n_heads == 1 and ex.layer.W_o is None
    assert ex.mask == "causal" and ex.mask_value == -1e9
    assert ex.embedded.x.tolist() == torch.tensor(
        [[1.16, 0.23], [0.57, 1.36], [4.41, -2.16]]).tolist()  # fmt: skip


def test_worked_example_with_edited_encodings_keeps_weights():
    base, edited = worked_example(), worked_example(torch.ones(3, 2))
    assert torch.equal(base.layer.W_q.weight, edited.layer.W_q.weight)
    assert torch.equal(edited.embedded.x, torch.ones(3, 2))
