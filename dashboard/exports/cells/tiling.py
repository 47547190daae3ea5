"""Lesson 11's section: FlashAttention's tiled walk over head 0 (Dao et al. 2022, algorithm 1)."""

# %% active="py"
import math

import torch

from attention.flash import tiled_attention
from dashboard.exports.cells.page import T, causal, d_head
from dashboard.exports.cells.stages import stages

# isort: split

# %% [markdown]
# ## FlashAttention: the same numbers, tile by tile
#
# Head 0, walked in tiles of B_r queries × B_c keys (Dao et al. 2022, algorithm 1). No T × T
# matrix is ever held: per query row, a running max m, a normaliser ℓ and an accumulator O,
# rescaled by e^(m − m') whenever the max grows.

# %% tags=["parameters"]
B_r, B_c = 3, 2  # query and key block sizes, as on the page
q0, k0, v0 = stages["q"][0], stages["k"][0], stages["v"][0]  # (T, d_head): head 0
# the page's own tiled output, (T, d_head)
tiled_by_dashboard = tiled_attention(q0, k0, v0, block_q=B_r, block_k=B_c, causal=causal).output
m = torch.full((T,), -math.inf)  # running max of each query row
l = torch.zeros(T)  # running normaliser
O = torch.zeros(T, d_head)  # running, unnormalised output
tiles = 0
for r0 in range(0, T, B_r):
    rows = torch.arange(r0, min(r0 + B_r, T))
    for c0 in range(0, T, B_c):
        cols = torch.arange(c0, min(c0 + B_c, T))
        if causal and c0 > rows[-1]:
            continue  # the whole tile is in the future: no work
        S = q0[rows] @ k0[cols].T / math.sqrt(d_head)  # (B_r, B_c) scores
        if causal:
            S = S.masked_fill(cols[None, :] > rows[:, None], -math.inf)
        m_new = torch.maximum(m[rows], S.max(dim=-1).values)  # (B_r,)
        P = torch.exp(S - m_new[:, None])  # (B_r, B_c) unnormalised weights
        rescale = torch.exp(m[rows] - m_new)  # (B_r,): 0 on a row's first tile
        l[rows] = rescale * l[rows] + P.sum(dim=-1)
        O[rows] = rescale[:, None] * O[rows] + P @ v0[cols]
        m[rows] = m_new
        tiles += 1
tiled = O / l[:, None]  # (T, d_head)
print(
    f"{tiles} tiles of at most {B_r} x {B_c}; the largest score matrix held: "
    f"{min(B_r, T)} x {min(B_c, T)}, never {T} x {T}"
)
print(tiled)
torch.testing.assert_close(tiled, stages["heads"][0], rtol=1e-5, atol=1e-5)  # the full pass
torch.testing.assert_close(tiled, tiled_by_dashboard, rtol=1e-5, atol=1e-5)
print("The tiled walk equals head 0 of the full pass.")
