"""The layer as one function: the notebook's only copy of the attention forward."""

# %% active="py"
import math

import torch

# isort: split

# %% [markdown]
# ## Every stage
#
# Each head owns d_head consecutive columns of Q, K and V. A query with no allowed key gets zero
# weights, as PyTorch's `scaled_dot_product_attention` gives.


# %%
def attention_stages(X, allowed, W_q, W_k, W_v, W_o, H, mask_value=-math.inf):
    """Self-attention of X (T, C) with H heads where `allowed` (T, T) is True, every stage by
    name. W_q, W_k, W_v, W_o are nn.Linear(C, C) (W_o None: no output projection)."""
    T, C = X.shape
    d_head = C // H
    with torch.no_grad():
        Q, K, V = X @ W_q.weight.T, X @ W_k.weight.T, X @ W_v.weight.T  # (T, C) each
        q = Q.view(T, H, d_head).transpose(0, 1)  # (H, T, d_head)
        k = K.view(T, H, d_head).transpose(0, 1)  # (H, T, d_head)
        v = V.view(T, H, d_head).transpose(0, 1)  # (H, T, d_head)
        scores = q @ k.transpose(-2, -1)  # (H, T, T)
        scaled = scores / math.sqrt(d_head)  # (H, T, T)
        masked = scaled.masked_fill(~allowed, mask_value)  # (H, T, T)
        weights = torch.softmax(scaled.masked_fill(~allowed, -math.inf), dim=-1)
        weights = torch.where(allowed, weights, torch.zeros(()))  # (H, T, T)
        heads = weights @ v  # (H, T, d_head)
        concat = heads.transpose(0, 1).reshape(T, C)  # (T, C)
        output = concat @ W_o.weight.T if W_o is not None else concat  # (T, C)
    return dict(
        x=X,
        q=q,
        k=k,
        v=v,
        scores=scores,
        scaled=scaled,
        masked=masked,
        weights=weights,
        heads=heads,
        concat=concat,
        output=output,
    )
