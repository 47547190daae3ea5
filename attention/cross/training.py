"""Train the encoder-decoder to reverse words, save and load its weights (shipped, xz'd).

python -m attention.cross.training     # train with seed 0, write reverse.pt.xz
python -m attention.cross.held_out     # then: the figures on words training never drew

The shipped weights are this command's: seed 0, STEPS steps of BATCH words. Its words come from
one stream (`word_batches`): a random.Random(seed) drawing each word's length from 2 to 8, then
that many different letters. Replaying the stream gives every word training saw, without
training (held_out.py does, to draw the evaluation's words outside it).
"""

from __future__ import annotations

import io
import lzma
import random
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import torch
import torch.nn.functional as F

from attention.cross.model import PAD, EncoderDecoder, batch_of, random_words

CHECKPOINT = Path(__file__).with_name("reverse.pt.xz")
STEPS, BATCH, LR, SEED = 3000, 128, 3e-3, 0
COMMAND = "python -m attention.cross.training"


def word_batches(seed: int = SEED, steps: int = STEPS, batch: int = BATCH) -> Iterator[list[str]]:
    """The words training reads, step by step: `steps` batches of `batch` random words of 2 to 8
    different letters, from random.Random(seed) (the stream `train` reads, and nothing else
    draws from it)."""
    rng = random.Random(seed)
    for _ in range(steps):
        yield random_words(batch, rng)


def train(seed: int = SEED, steps: int = STEPS, log_every: int = 500) -> EncoderDecoder:
    torch.manual_seed(seed)
    model = EncoderDecoder()
    optimiser = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, LR, total_steps=steps)
    model.train()
    for step, words in enumerate(word_batches(seed, steps)):
        batch = batch_of(words)
        out = model(batch.source, batch.source_pad, batch.target_in)
        loss = F.cross_entropy(
            out.logits.flatten(0, 1), batch.target_out.flatten(), ignore_index=PAD
        )
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        if log_every and (step + 1) % log_every == 0:
            print(f"step {step + 1}: loss {loss.item():.4f}", flush=True)
    return model.eval()


def save(model: EncoderDecoder, path: Path = CHECKPOINT) -> Path:
    buffer = io.BytesIO()
    torch.save({k: v.to(torch.float32) for k, v in model.state_dict().items()}, buffer)
    path.write_bytes(lzma.compress(buffer.getvalue(), preset=9))
    return path


# One model per checkpoint path, for the process's life, outside the dashboard's byte budget
# (dashboard/state.py): lesson 13 loads only CHECKPOINT, so one entry, 0.24 MB of weights.
@cache
def load(path: Path = CHECKPOINT) -> EncoderDecoder:
    """The shipped model (once per process; read-only: eval mode, no gradients)."""
    model = EncoderDecoder()
    state = torch.load(io.BytesIO(lzma.decompress(path.read_bytes())), weights_only=True)
    model.load_state_dict(state)
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model.eval()


def main() -> None:
    torch.set_num_threads(1)
    start = time.perf_counter()
    model = train()
    seconds = time.perf_counter() - start
    path = save(model)
    size = path.stat().st_size / 1024
    print(f"trained in {seconds:.0f} s on one thread; {path.name} {size:.0f} KiB")
    print("its figures on words it never trained on: python -m attention.cross.held_out")


if __name__ == "__main__":
    main()
