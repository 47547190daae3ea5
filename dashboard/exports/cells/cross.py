"""Lesson 13's exercises: the learner writes cross-attention on the page's numbers for one word,
decoder layer and head: Q from the target, K and V from the source, the T × S scores, the softmax
over the source and the output; the cell after each checks it against the page's numbers. The
solution notebook has them written."""

# %% active="py"
# As a plain script, the page is lesson 13 at its default word, layer and head (see __init__.py).
from dashboard.exports.cells.example import CROSS

# isort: split

# %% [markdown]
# # Cross-attention: your turn
#
# Written by lesson 13 of the *Self-attention, step by step* dashboard for the word, decoder
# layer and head set in the cell below (`word`, `layer`, `head`). Y is what the decoder's
# cross-attention reads its queries from (LayerNormed, T × C), X the encoder's output (S × C).
# Replace each `None` in a cell marked *Your code*, run it, then run the check under it. Only
# `torch` is needed.

# %%
import math

import torch

# %% tags=["parameters"]
word, layer, head = CROSS["word"], CROSS["layer"], CROSS["head"]  # the page's picks
H = CROSS["H"]  # the layer's heads
Y, X = CROSS["Y"], CROSS["X"]  # (T, C), (S, C): the target (LayerNormed), the encoder's output
W_q, W_k, W_v = CROSS["W_q"], CROSS["W_k"], CROSS["W_v"]  # (C, C) each: the layer's weights
page_scaled = CROSS["page_scaled"]  # (T, S): this head's scaled scores on the page
page_weights = CROSS["page_weights"]  # (T, S): its weights
page_out = CROSS["page_out"]  # (T, d_k): its output

# %%
d_k = Y.shape[1] // H


def check(name, mine, page):
    assert mine is not None, f"{name}: write it in the cell above"
    assert mine.shape == page.shape, (
        f"{name}: shape {tuple(mine.shape)}, the page's {tuple(page.shape)}"
    )
    gap = (mine - page).abs().max().item()
    assert gap < 1e-4, f"{name}: off by {gap:.2e} from the page"
    print(f"{name}: right (largest difference {gap:.1e})")


# %% [markdown]
# ## Project: Q from the target (T × C), K and V from the source (S × C)

# %% tags=["exercise"]
Q = Y @ W_q.T  # (T, C)
K = X @ W_k.T  # (S, C)
V = X @ W_v.T  # (S, C)

# %% [markdown]
# ## This head's columns: d_k = C / H of them, from head × d_k

# %% tags=["exercise"]
cols = slice(head * d_k, (head + 1) * d_k)
q, k, v = Q[:, cols], K[:, cols], V[:, cols]  # (T, d_k), (S, d_k), (S, d_k)

# %% [markdown]
# ## Scores, scaled: T × S, one row per decoder step, no causal mask across

# %% tags=["exercise"]
scaled = q @ k.T / math.sqrt(d_k)  # (T, S)

# %%
check("scaled", scaled, page_scaled)

# %% [markdown]
# ## Weights: the softmax over the source (each row sums to 1)

# %% tags=["exercise"]
weights = torch.softmax(scaled, dim=-1)  # (T, S)

# %%
check("weights", weights, page_weights)

# %% [markdown]
# ## Output: each step's weighted sum of the source's values

# %% tags=["exercise"]
out = weights @ v  # (T, d_k)

# %%
check("out", out, page_out)
