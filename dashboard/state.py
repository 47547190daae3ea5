"""One memory budget for every cache that holds tensors: bytes, not entries, decide.

st.cache_resource bounds a cache by its number of entries, but an entry's size depends on the
settings: a trace at the defaults is a few kilobytes, at T = 64, d_model = 256, 16 heads it is
2.6 MB, and a bug run or a generation holds more. Sixty-four entries of one cache at the maxima
were 170 MB; a student cycling seeds in the bug hunt at the maxima took the server from 415 to
950 MiB. Every cache decorated with `cached` here shares one pool of BUDGET bytes: when it is
full, the entries used longest ago go, whichever cache they belong to.

Like st.cache_resource: one computation per key at a time (a class arriving together on one
lesson computes it once), arguments whose name starts with "_" are not part of the key, entries
expire after TTL_S idle seconds, and the value is shared, never copied (callers do not mutate).
An entry counts its value's bytes and its key's (a key can be as long as its value: the
glossary's is the text it links). `cached(keep=True)` is for what is loaded or measured once per
server and shared by everyone (the shipped models, lesson 11's timings, the training room): kept
for the server's life, outside the budget, so only for arguments from a fixed, small set (a
task's name, a page's path), never for what a student types or picks from thousands. `once` is
for what is done once per server for its effect (a setting of the C library, a thread started).
This is the dashboard's one cache: nothing else keeps results between reruns.

The pool is the server's (POOL, one per process, as Streamlit's own caches are); tests give a
function their own with `monkeypatch.setattr(state, "POOL", Pool(...))`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

# Bytes of cached results, all caches together; ATTENTION_CACHE_MIB overrides it (a server with
# memory to spare can keep more, e.g. each worker of deploy/serve). 32 MiB since 2026-11-27: at
# 48 a ten-minute class over every lesson on one core peaked 1-3 % over 600 MiB; at 32, lesson
# 1's class kept its latency (seed 2: p95 552 ms against 546) and its peak fell 17 MiB
# (docs/performance.md, "Community Cloud's share, the cache").
BUDGET = int(float(os.environ.get("ATTENTION_CACHE_MIB", "32")) * 2**20)
TTL_S = 600  # an entry nobody asked for in ten minutes goes


def nbytes(value: Any, seen: set[int] | None = None, storages: dict[int, int] | None = None) -> int:
    """The bytes a cached value holds: its tensors, arrays and tables (shared parts counted
    once), walking dataclasses, containers and objects' attributes; a few bytes for the rest.
    With `storages`, the tensors' storages are listed there (address: bytes) instead of counted:
    the pool counts each once, however many entries hold it (a layer run by several lessons)."""
    if value is None or isinstance(value, (bool, int, float)):
        return 16  # the leaves of a spec or a column config: thousands of them, counted fast
    if isinstance(value, str):
        return 49 + len(value)
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    # torch only if something imported it: no value can be a tensor before, and the home page
    # (dashboard.frame uses this cache) draws without waiting for torch to load
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        storage = value.untyped_storage()
        if storage.data_ptr() in seen:
            return 0
        seen.add(storage.data_ptr())
        if storages is not None:
            storages[storage.data_ptr()] = storage.nbytes()
            return 0
        return storage.nbytes()
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, (pa.Table, pa.Array, pa.ChunkedArray)):
        return value.get_total_buffer_size()
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(deep=True).sum())
    if isinstance(value, bytes):
        return sys.getsizeof(value)
    if hasattr(value, "ByteSize") and hasattr(value, "SerializeToString"):  # a protobuf message
        return value.ByteSize()
    if isinstance(value, dict):
        try:  # settings and specs, JSON through and through: sized by the C encoder, ~4 bytes
            return 4 * len(json.dumps(value))  # held per byte of JSON (a 257-column table's
        except (TypeError, ValueError):  # settings were a tenth of a new setting's rerun, walked)
            return 64 * len(value) + sum(nbytes(v, seen, storages) for v in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sum(nbytes(item, seen, storages) for item in value)
    if torch is not None and isinstance(value, torch.nn.Module):
        return sum(nbytes(t, seen, storages) for t in value.state_dict(keep_vars=True).values())
    if dataclasses.is_dataclass(value):
        # a field marked shared is kept, and counted, elsewhere
        fields = [f for f in dataclasses.fields(value) if not f.metadata.get("shared")]
        return sum(nbytes(getattr(value, f.name), seen, storages) for f in fields)
    if hasattr(value, "__dict__"):
        return nbytes(vars(value), seen, storages)
    return 16


@dataclasses.dataclass
class Entry:
    value: Any
    size: int  # its value's and its key's bytes, tensors' storages left out (Pool.storages)
    used: float  # time.monotonic() of the last hit
    storages: tuple[int, ...] = ()  # the addresses of the tensor storages it holds


class Pool:
    """Least-recently-used entries of every cache, within `budget` bytes. A tensor's storage
    held by several entries is counted once, while any of them holds it: a layer shared by the
    lessons that differ only in T or the mask, and by shared_layer's entry, is counted once, and
    still counted when shared_layer's entry goes first."""

    def __init__(self, budget: int = BUDGET, ttl_s: float = TTL_S) -> None:
        self.budget, self.ttl_s = budget, ttl_s
        self.entries: OrderedDict[tuple, Entry] = OrderedDict()
        self.kept: dict[tuple, Any] = {}  # cached(keep=True): for the server's life
        self.total = 0
        self.storages: dict[int, list[int]] = {}  # address: [bytes, entries holding it]
        self.lock = threading.Lock()
        self.computing: dict[tuple, threading.Lock] = {}

    def get(self, key: tuple) -> Entry | None:
        with self.lock:
            if key in self.kept:
                return Entry(self.kept[key], 0, time.monotonic())
            entry = self.entries.get(key)
            if entry is None:
                return None
            now = time.monotonic()
            if now - entry.used > self.ttl_s:
                self._drop(key)
                return None
            entry.used = now
            self.entries.move_to_end(key)
            return entry

    def put(self, key: tuple, value: Any, keep: bool = False) -> None:
        if keep:
            with self.lock:
                self.kept[key] = value
            return
        storages: dict[int, int] = {}
        size = nbytes(value, storages=storages) + nbytes(key)
        with self.lock:
            if key in self.entries:
                self._drop(key)
            if size + sum(storages.values()) > self.budget:
                return  # larger than the whole budget: computed, shown, not kept
            self.entries[key] = Entry(value, size, time.monotonic(), tuple(storages))
            self.total += size
            for address, bytes_ in storages.items():
                held = self.storages.setdefault(address, [bytes_, 0])
                if held[1] == 0:
                    self.total += bytes_
                held[1] += 1
            while self.total > self.budget:
                self._drop(next(iter(self.entries)))

    def _drop(self, key: tuple) -> None:
        entry = self.entries.pop(key)
        self.total -= entry.size
        for address in entry.storages:
            held = self.storages[address]
            held[1] -= 1
            if held[1] == 0:  # no entry holds it now: its memory goes with the last one
                self.total -= held[0]
                del self.storages[address]

    def key_lock(self, key: tuple) -> threading.Lock:
        with self.lock:
            return self.computing.setdefault(key, threading.Lock())

    def release_key(self, key: tuple, lock: threading.Lock) -> None:
        """Forget a key's lock once nobody holds it (a waiter that still takes it is fine)."""
        with self.lock:
            if self.computing.get(key) is lock and not lock.locked():
                del self.computing[key]

    def forget(self, name: str) -> None:
        """Drop every entry of one cached function (its keys start with its name)."""
        with self.lock:
            for key in [k for k in self.entries if k[0] == name]:
                self._drop(key)
            for key in [k for k in self.kept if k[0] == name]:
                del self.kept[key]

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.kept.clear()
            self.storages.clear()
            self.total = 0


POOL = Pool()


def cached(func: Callable | None = None, *, keep: bool = False) -> Callable:
    """Cache `func`'s results in the shared pool, keyed on its name and its arguments (those
    whose name starts with "_" left out, as st.cache_resource does; the rest must be hashable).
    With keep=True the result stays for the server's life, outside the byte budget."""
    if func is None:
        return functools.partial(cached, keep=keep)
    name = f"{func.__module__}.{func.__qualname__}"

    def key(args: tuple, kwargs: dict) -> tuple:
        return (name, args, tuple(sorted((k, v) for k, v in kwargs.items() if k[:1] != "_")))

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        entry = POOL.get(key(args, kwargs))
        if entry is not None:
            return entry.value
        return compute(key(args, kwargs), lambda: func(*args, **kwargs), keep)

    wrapper.clear = lambda: POOL.forget(name)  # as st.cache_resource's .clear()
    # whether a call with these arguments would answer from the cache, without computing
    wrapper.is_cached = lambda *args, **kwargs: POOL.get(key(args, kwargs)) is not None
    return wrapper


def once(func: Callable) -> Callable:
    """Run `func` once per server, for what it does (a setting made, a thread started); later
    calls return what the first returned, without running it. Kept for the server's life, one
    entry for each list of arguments it is called with (the server calls each with none)."""
    return cached(func, keep=True)


def per_lesson(func: Callable) -> Callable:
    """Cache `func(lesson, *args)` in the shared pool, keyed on its name, the lesson's own key
    (`lesson.key`: the plain values that determine it, so the lesson itself is never hashed)
    and the other arguments."""
    name = f"{func.__module__}.{func.__qualname__}"

    @functools.wraps(func)
    def wrapper(lesson, *args, **kwargs):
        key = (name, lesson.key, args, tuple(sorted(kwargs.items())))
        entry = POOL.get(key)
        if entry is not None:
            return entry.value
        return compute(key, lambda: func(lesson, *args, **kwargs))

    wrapper.clear = lambda: POOL.forget(name)
    return wrapper


def lookup(key: tuple, default: Any = None) -> Any:
    """The value cached under `key`, or `default`."""
    entry = POOL.get(key)
    return default if entry is None else entry.value


def compute(key: tuple, make: Callable[[], Any], keep: bool = False) -> Any:
    """The value under `key`, made by `make()` if missing: one computation per key at a time
    (the others wait for it and read it); a `make` that raises leaves nothing behind."""
    lock = POOL.key_lock(key)
    try:
        with lock:
            entry = POOL.get(key)
            if entry is not None:
                return entry.value
            value = make()
            POOL.put(key, value, keep)
            return value
    finally:  # also when make raised: the next caller tries again
        POOL.release_key(key, lock)


def one_torch_thread() -> None:
    """Serve with one torch thread: the matrices here are tiny (at most 64 x 256), torch's
    intra-op threads only add overhead, and on a shared 2-core server they compete with the other
    students' script threads. Called by the server (server.warm_up, lessons.computed, a training
    in trained.py) once torch is wanted, never on import: this module loads before torch."""
    import torch

    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)
