"""Lesson 9's section: shuffling the tokens, and the sinusoidal table."""

# %% active="py"
import torch

from attention.positions import random_permutation, shuffle_tokens, sinusoidal_positions
from dashboard.exports.cells.example import LESSON
from dashboard.exports.cells.page import C, T, X, seed
from dashboard.exports.cells.stages import attend

# isort: split

# %% [markdown]
# ## Position
#
# Without a mask, attention is blind to order: shuffle the rows of X and the output rows shuffle
# the same way. With the causal mask they do not.

# %% tags=["parameters"]
perm = random_permutation(T, seed)  # new position i takes token perm[i]
shuffled_by_dashboard = shuffle_tokens(LESSON.layer, X, perm).permuted_outputs  # (T, C) Attn(P X)

open_gap = (attend(X[perm], False) - attend(X, False)[perm]).abs().max()
causal_gap = (attend(X[perm], True) - attend(X, True)[perm]).abs().max()
print(
    f"max |Attn(P X) - P Attn(X)|: {open_gap:.2e} without a mask, "
    f"{causal_gap:.4f} with the causal mask"
)
torch.testing.assert_close(attend(X[perm], False), attend(X, False)[perm], rtol=1e-5, atol=1e-5)
torch.testing.assert_close(attend(X[perm], False), shuffled_by_dashboard, rtol=1e-5, atol=1e-5)

# %% [markdown]
# ### Sinusoidal positions
#
# PE[pos, 2i] = sin(pos / 10000^(2i/C)), PE[pos, 2i+1] = cos(pos / 10000^(2i/C)).

# %% tags=["parameters"]
pe_by_dashboard = sinusoidal_positions(T, C)  # (T, C)
pos = torch.arange(T, dtype=torch.float32)[:, None]  # (T, 1)
two_i = torch.arange(0, C, 2, dtype=torch.float32)  # (ceil(C/2),)
angle = pos / torch.pow(10000.0, two_i / C)  # (T, ceil(C/2))
PE = torch.zeros(T, C)
PE[:, 0::2] = torch.sin(angle)
PE[:, 1::2] = torch.cos(angle[:, : C // 2])
print(PE)
torch.testing.assert_close(PE, pe_by_dashboard, rtol=1e-5, atol=1e-5)
