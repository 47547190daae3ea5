"""Lesson 9's section, when d_head is even: RoPE's scores depend on the offset only."""

# %% active="py"
import torch

from attention.positions import rope_scores
from dashboard.exports.cells.page import T, d_head
from dashboard.exports.cells.stages import stages

# isort: split

# %% [markdown]
# ### RoPE
#
# Rotate each pair of features of q and k by position × 10000^(−2i/d_head). The first token's
# query against its own key, at every pair of positions: each diagonal is one number, the score
# depends on m − n only.

# %% tags=["parameters"]
q_0, k_0 = stages["q"][0, 0], stages["k"][0, 0]  # (d_head,): the first token's query and key
rope_by_dashboard = rope_scores(q_0, k_0, T)  # (T, T)


def rotate(vectors):
    """RoPE on (T, d_head): the vector at position p turned by p * theta_i."""
    two_i = torch.arange(0, d_head, 2, dtype=torch.float64)  # (d_head / 2,)
    inv_freq = 10000.0 ** (-two_i / d_head)  # theta_i per position
    theta = torch.arange(T).double()[:, None] * inv_freq  # (T, d_head / 2)
    cos, sin = torch.cos(theta).float(), torch.sin(theta).float()
    even, odd = vectors[:, 0::2], vectors[:, 1::2]
    out = torch.empty_like(vectors)
    out[:, 0::2], out[:, 1::2] = even * cos - odd * sin, even * sin + odd * cos
    return out


rotated_scores = rotate(q_0.expand(T, -1)) @ rotate(k_0.expand(T, -1)).T  # (T, T)
for offset in range(-T + 1, T):  # one value per diagonal
    diagonal = torch.diagonal(rotated_scores, offset)
    torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal), rtol=1e-4, atol=1e-4)
print(rotated_scores)
torch.testing.assert_close(rotated_scores, rope_by_dashboard, rtol=1e-5, atol=1e-5)
print("Shuffling, the sinusoidal table and RoPE all equal the page.")
