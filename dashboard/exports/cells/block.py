"""Lesson 14's exercises: the learner adds up the residual stream at one position of the page's
text, stage by stage, and reads it with the logit lens (the final LayerNorm, the unembedding U,
a softmax over the characters); the cell after each checks it against the page's numbers, naming
the classic mistake a wrong answer equals. The solution notebook has them written."""

# %% active="py"
# As a plain script, the page is lesson 14 at its default text (see __init__.py).
from dashboard.exports.cells.example import BLOCK

# isort: split

# %% [markdown]
# # The block around attention: your turn
#
# This notebook was written by lesson 14 of the *Self-attention, step by step* dashboard, with
# the page's numbers in it: at one position of your text, what the Shakespeare GPT's embeddings,
# each attention and each MLP wrote into the residual stream, and its final LayerNorm and
# unembedding. Each cell marked *Your code* is yours: replace each `None`, run it, then run the
# check under it, which compares yours with the page. Only `torch` is needed.

# %%
import torch

torch.set_grad_enabled(False)  # numbers to compare, nothing to train

# %% tags=["parameters"]
tokens, position = BLOCK["tokens"], BLOCK["position"]  # the text; the position read
vocab = BLOCK["vocab"]  # the 65 characters, in token-id order
embed, pos_embed = BLOCK["embed"], BLOCK["pos_embed"]  # (C,) each: E[char], P[position]
attn_out, mlp_out = BLOCK["attn_out"], BLOCK["mlp_out"]  # (L, C): what each layer wrote
gamma_f, beta_f, eps = BLOCK["gamma_f"], BLOCK["beta_f"], BLOCK["eps"]  # the final LayerNorm
U = BLOCK["U"]  # (vocab, C): the unembedding
stream_by_dashboard = BLOCK["stream_by_dashboard"]  # (S, C): the stream after each stage
lens_by_dashboard = BLOCK["lens_by_dashboard"]  # (S, vocab): the logit lens at each stage

# %%
L, C = attn_out.shape  # layers, width
STAGES = ["embedding"] + [f"{part} {layer}" for layer in range(L) for part in ("attention", "MLP")]


def check(name, mine, page, mistakes=()):
    """Yours against the page's; a wrong one is named by the mistake it equals, else where it
    differs most."""
    assert mine is not None, f"{name}: write it in the cell above"
    assert tuple(mine.shape) == tuple(page.shape), (
        f"{name}: your shape is {tuple(mine.shape)}, the page's is {tuple(page.shape)}"
    )
    if torch.allclose(mine, page, rtol=1e-4, atol=1e-5):
        print(f"{name}: right, shape {tuple(mine.shape)}")
        return
    for said, made in mistakes:
        if torch.allclose(mine, made, rtol=1e-4, atol=1e-5):
            raise AssertionError(f"{name}: {said}")
    gap = (mine - page).abs()
    stage, column = (int(i) for i in torch.unravel_index(gap.argmax(), gap.shape))
    raise AssertionError(
        f"{name}: at stage {STAGES[stage]}, column {column} yours is "
        f"{mine[stage, column].item():.4f}, the page's {page[stage, column].item():.4f}"
    )


# %% [markdown]
# ## 1. The residual stream, stage by stage
#
# The stream starts as the character's embedding plus its position's; each attention adds its
# output to it, then each MLP adds its own: nothing is replaced. Write `stream`, shape (S, C):
# one row after the embedding, then one after each attention and each MLP, in that order.

# %% tags=["exercise"]
x = embed + pos_embed  # (C,): the stream after the embedding
rows = [x]
for layer in range(L):
    x = x + attn_out[layer]  # after this layer's attention
    rows.append(x)
    x = x + mlp_out[layer]  # after its MLP
    rows.append(x)
stream = torch.stack(rows)  # (S, C)


# %%
def stream_mistakes():
    """What the classic mistakes give, made from the page's numbers (never from yours)."""
    layers = torch.stack([attn_out, mlp_out], dim=1).reshape(-1, C)  # (2 L, C): attn, MLP, ...
    parts = torch.cat([(embed + pos_embed)[None], layers])  # (S, C): what each stage added
    return [
        ("each row is what that stage added, not the running sum: add it to the row before",
         parts),
        ("the position's embedding is missing: the stream starts as E[char] + P[position]",
         parts.cumsum(0) - pos_embed),
    ]  # fmt: skip


check("stream", stream, stream_by_dashboard, stream_mistakes())


# %% [markdown]
# ## 2. The logit lens
#
# Read each row of the stream as the model reads its last one: the final LayerNorm (mean 0 and
# spread 1 over the row's C numbers, then × γ_f + β_f), the unembedding (`@ U.T`, one logit per
# character), and a softmax over the characters. Write `lens`, shape (S, vocab).

# %% tags=["exercise"]
mean = stream.mean(dim=-1, keepdim=True)  # (S, 1)
variance = stream.var(dim=-1, unbiased=False, keepdim=True)  # (S, 1), divided by C
normed = (stream - mean) / torch.sqrt(variance + eps) * gamma_f + beta_f  # (S, C)
logits = normed @ U.T  # (S, vocab)
lens = torch.softmax(logits, dim=-1)  # (S, vocab): each row sums to 1


# %%
def lens_mistakes():
    """What the classic mistakes give, made from the page's stream (never from yours)."""
    page = stream_by_dashboard  # (S, C)
    normed = torch.nn.functional.layer_norm(page, (C,), gamma_f, beta_f, eps)  # (S, C)
    bare = torch.nn.functional.layer_norm(page, (C,), eps=eps)  # no γ_f, no β_f
    return [
        ("the final LayerNorm is missing: the lens reads LN_f(stream), not the stream",
         torch.softmax(page @ U.T, dim=-1)),
        ("the softmax runs over the stages (dim=0): it must run over the characters, dim=-1",
         torch.softmax(normed @ U.T, dim=0)),
        ("γ_f and β_f are missing: the LayerNorm ends with × gamma_f + beta_f",
         torch.softmax(bare @ U.T, dim=-1)),
    ]  # fmt: skip


check("lens", lens, lens_by_dashboard, lens_mistakes())
best = [vocab[i] for i in lens_by_dashboard.argmax(-1).tolist()]
print("The likeliest next character at each stage:", dict(zip(STAGES, best, strict=True)))
print("Every step right: this is the stream and the lens the page showed.")
