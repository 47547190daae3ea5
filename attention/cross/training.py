"""Train the encoder-decoder to reverse words, save and load its weights (shipped, xz'd).

python -m attention.cross.training     # train with seed 0, print the figures, write the file
"""

from __future__ import annotations

import io
import lzma
import random
import time
from functools import cache
from pathlib import Path

import torch
import torch.nn.functional as F

from attention.cross.model import (
    LETTERS,
    PAD,
    EncoderDecoder,
    accuracy,
    alignment_scores,
    batch_of,
    random_words,
)

CHECKPOINT = Path(__file__).with_name("reverse.pt.xz")
STEPS, BATCH, LR, SEED = 3000, 128, 3e-3, 0
HELD_OUT = 400  # words for the figures, drawn with another seed than training's


def train(seed: int = SEED, steps: int = STEPS, log_every: int = 500) -> EncoderDecoder:
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = EncoderDecoder()
    optimiser = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, LR, total_steps=steps)
    model.train()
    for step in range(steps):
        batch = batch_of(random_words(BATCH, rng))
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


def held_out(lengths=range(2, 9), n: int = HELD_OUT, seed: int = 12345) -> list[str]:
    return random_words(n, random.Random(seed), lengths)


def save(model: EncoderDecoder, path: Path = CHECKPOINT) -> Path:
    buffer = io.BytesIO()
    torch.save({k: v.to(torch.float32) for k, v in model.state_dict().items()}, buffer)
    path.write_bytes(lzma.compress(buffer.getvalue(), preset=9))
    return path


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
    words = held_out()
    size = path.stat().st_size / 1024
    print(f"trained in {seconds:.0f} s on one thread; {path.name} {size:.0f} KiB")
    print(f"held-out accuracy (2-8 letters, {len(words)} words): {accuracy(model, words):.3f}")
    longer = held_out(range(9, len(LETTERS) + 1), 100)
    print(f"longer than any seen (9-12 letters): {accuracy(model, longer):.3f}")
    scores = alignment_scores(model, words)
    for layer, row in enumerate(scores.tolist()):
        print(
            f"decoder layer {layer} cross-attention alignment: "
            + ", ".join(f"{s:.3f}" for s in row)
        )


if __name__ == "__main__":
    main()
