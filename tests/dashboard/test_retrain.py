"""Lesson 6's *Train again*: what a click pays for beyond the training itself (issue 17 item 18).

Measured with `python benchmarks/bench_training.py --only-click`: a fresh server's first click
also imported torch._dynamo (constructing the first Adam, 1-2 s of one core), so the training
room warms that up in the background when the lesson is first drawn."""

import subprocess
import sys
from pathlib import Path

from dashboard import trained

ROOT = Path(__file__).resolve().parents[2]


def test_retrain_warm_up_imports_what_the_first_training_would():
    code = (
        "import sys, torch\n"
        "from attention.tiny.training import warm_up\n"
        "assert 'torch._dynamo' not in sys.modules, 'already imported: nothing to warm up'\n"
        "warm_up()\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_retrain_training_room_warms_up_in_the_background():
    room = trained.TrainingRoom()
    assert room.warming.daemon and room.warming.name == "training-warm-up"
    room.warming.join(timeout=60)
    assert not room.warming.is_alive()
    assert "torch._dynamo" in sys.modules
