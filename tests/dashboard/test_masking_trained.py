"""Lesson 3 on a trained source applies its own controls (issue 28, item 1): the padding, the
fully masked row and the fill value mask the trained layer as they mask the others, and the
page says the trained model's own causal setting."""

import pytest
import torch
from conftest import as_read, no_exception, open_page

from dashboard import lessons
from dashboard.controls import Settings


@pytest.mark.parametrize(("source", "task"), [("trained", "induction"), ("trained", "reverse"),
                                              ("shakespeare", "induction")])  # fmt: skip
def test_masking_variant_masks_a_trained_layer(source, task):
    s = Settings(source=source, task=task, layer=0)
    padded = lessons.computed(s, lessons.Variant(n_padding=3))
    T = len(padded.labels)
    weights = padded.trace.weights  # (H, T, T)
    assert torch.all(weights[:, :, T - 3 :] == 0)  # no query attends to a padding key
    assert torch.allclose(weights.sum(-1), torch.ones_like(weights.sum(-1)))
    empty = lessons.computed(s, lessons.Variant(n_padding=3, empty_last_row=True))
    assert torch.all(empty.trace.weights[:, -1] == 0)  # the blocked row receives nothing
    big = lessons.computed(s, lessons.Variant(n_padding=3, empty_last_row=True, mask_value=-1e9))
    row = torch.softmax(big.trace.masked[0, -1], dim=-1)  # the naive softmax of -1e9 fills
    assert torch.allclose(row, torch.full_like(row, 1 / T))
    plain = lessons.computed(s)
    assert plain.settings.causal == (task != "reverse" or source == "shakespeare")


def test_masking_page_on_the_reverse_task_says_its_mask_is_off():
    at = open_page("pages/masking.py", src="trained", task="reverse", pad="3")
    no_exception(at)
    said = " ".join(as_read(m.value) for m in at.markdown)
    assert "Causal mask: off" in said and "fixed by the trained model" in said
