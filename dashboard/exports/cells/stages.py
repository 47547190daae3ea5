"""Every stage of the layer, rebuilt and checked against the page's numbers."""

# %% active="py"
import torch

from dashboard.exports.cells.forward import attention_stages
from dashboard.exports.cells.page import (
    H,
    W_k,
    W_o,
    W_q,
    W_v,
    X,
    allowed,
    dashboard,
    mask_value,
    shown,
)

# isort: split

# %%
stages = attention_stages(X, allowed, W_q, W_k, W_v, W_o, H, mask_value)


def check(name):
    """Print one stage and assert it equals the dashboard's numbers."""
    print(f"{name} {dashboard['schema']['stages'][name]}")
    print(stages[name])
    torch.testing.assert_close(stages[name], shown(name), rtol=1e-5, atol=1e-5)


def attend(X, causal):
    """The layer above on other rows X (T, C), causal or not: its output (T, C)."""
    everywhere = torch.ones(len(X), len(X), dtype=torch.bool)
    mask = torch.tril(everywhere) if causal else everywhere
    return attention_stages(X, mask, W_q, W_k, W_v, W_o, H)["output"]


# %%
check("x")

# %%
check("q")

# %%
check("k")

# %%
check("v")

# %%
check("scores")

# %%
check("scaled")

# %%
check("masked")

# %%
check("weights")

# %%
check("heads")

# %%
check("concat")

# %%
check("output")

# %%
print("Every stage equals the dashboard:", ", ".join(stages))
