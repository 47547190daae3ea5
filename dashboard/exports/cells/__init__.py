"""The notebooks' code, as real Python files: linted, importable and run by the tests.

Each file is in jupytext's percent format. `# %%` starts a code cell and `# %% [markdown]` a
markdown cell whose lines are `# `-prefixed comments. Two kinds of cell are marked:

- `# %% tags=["parameters"]` (papermill's name): a code cell whose assignments to the page's
  data are given the page's values in a notebook. Only the right-hand side of `name = ...`
  changes; the names, their comments and every other line are the file's.
- `# %% active="py"` (jupytext's name): a cell for the plain script only, left out of every
  notebook. It imports what the notebook's earlier cells define, so the file runs on its own
  (`python -m dashboard.exports.cells.decode`): then the parameters keep their defaults, the
  numbers of a small example lesson (`example.py`) computed by the attention package, and the
  file's assertions check the notebook's plain PyTorch against that package.

A notebook is a few of these files in order (`dashboard.exports.notebooks`): `page` (the
settings, the page's numbers, the weights, X and the mask), `forward` (the layer as one
function, the only copy of the attention forward), `stages` (every stage checked), then a
lesson's own section: `decode`, `tiling`, `position` and `rope`. Lesson 4's notebook is
`scaling` alone. The exercises are `page` then `exercise` (lesson 4: `scaling_exercise`, lesson
13: `cross`, lesson 14: `block`), whose cells tagged "exercise" are left blank for the learner
(`cells_of(..., blank=True)`).
"""
