"""Lesson 10's section: the layer above decodes one token at a time with a KV cache."""

# %% active="py"
import math

import torch

from attention.kv_cache import generate_with_cache
from dashboard.exports.cells.example import LESSON
from dashboard.exports.cells.page import C, H, T, W_k, W_o, W_q, W_v, X, d_head
from dashboard.exports.cells.stages import attend

# isort: split

# %% [markdown]
# ## Generation with a KV cache
#
# A model writes one token at a time. Under the causal mask token t's output needs only tokens
# 0 … t, and their keys and values never change: keep them in a cache, and each step computes
# one query row. The rows must equal the full causal pass (the one above, when its mask is
# causal).

# %% tags=["parameters"]
decoded_by_dashboard = generate_with_cache(LESSON.layer, LESSON.embedded.x).outputs  # (T, C)
k_cache = torch.empty(H, 0, d_head)  # (H, cached, d_head)
v_cache = torch.empty(H, 0, d_head)  # (H, cached, d_head)
rows = []


def split(row):
    return row.view(1, H, d_head).transpose(0, 1)  # (1, C) -> (H, 1, d_head)


with torch.no_grad():
    for t in range(T):
        x_t = X[t : t + 1]  # (1, C): only the new token goes through the layer
        q_t = split(x_t @ W_q.weight.T)  # (H, 1, d_head)
        k_t = split(x_t @ W_k.weight.T)  # (H, 1, d_head)
        v_t = split(x_t @ W_v.weight.T)  # (H, 1, d_head)
        k_cache = torch.cat([k_cache, k_t], dim=1)  # (H, t + 1, d_head)
        v_cache = torch.cat([v_cache, v_t], dim=1)  # (H, t + 1, d_head)
        scores_t = q_t @ k_cache.transpose(-2, -1) / math.sqrt(d_head)  # (H, 1, t + 1)
        weights_t = torch.softmax(scores_t, dim=-1)  # (H, 1, t + 1)
        concat_t = (weights_t @ v_cache).transpose(0, 1).reshape(1, C)  # (1, C)
        rows.append(concat_t @ W_o.weight.T if W_o is not None else concat_t)
        print(
            f"step {t}: one query row; the cache holds {k_cache.shape[1]} keys and values per head"
        )
decoded = torch.cat(rows)  # (T, C)

# the full causal pass, all T tokens at once (a trained task may be open)
torch.testing.assert_close(decoded, attend(X, True), rtol=1e-5, atol=1e-5)
torch.testing.assert_close(decoded, decoded_by_dashboard, rtol=1e-5, atol=1e-5)
print("Decoding with the cache equals the full causal pass, row for row.")
