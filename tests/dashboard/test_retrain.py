"""Lesson 6's *Train again*: what a click pays for beyond the training itself (issue 17 item 18).

Measured with `python benchmarks/bench_training.py --only-click`: a fresh server's first click
also imported torch._dynamo (making the first torch.optim.Adam: 1-2 s of one core), which a training
room then warmed up in the background when the lesson was first drawn, at 72 MiB the server
kept. The tiny models now train with attention.tiny.adam's Adam (the same update, bit for bit:
tests/attention/test_tiny.py), which imports nothing."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_retrain_a_training_on_the_server_imports_no_compiler():
    """The training room's training, as *Train again* runs it, leaves torch._dynamo unimported
    (and would fail here if torch.optim.Adam came back: making one imports it)."""
    code = (
        "import sys, torch\n"
        "from dashboard import trained\n"
        "assert 'torch._dynamo' not in sys.modules, 'imported before training'\n"
        "steps = []\n"
        "run = trained.training_room().train('reverse', 4, lambda step, n: steps.append(step))\n"
        "assert steps and run.seed == 4\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
