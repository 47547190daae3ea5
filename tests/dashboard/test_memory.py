"""The shared cache budget: bytes counted honestly, least recently used out first, one
computation per key."""

import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from dashboard import state
from dashboard.controls import Settings
from dashboard.lessons import computed


def test_nbytes_counts_tensors_arrays_and_shared_storage_once():
    t = torch.zeros(100, 10)  # 4,000 bytes
    assert state.nbytes(t) == 4000
    assert state.nbytes((t, t[0], t.T)) == 4000  # views share the storage
    assert state.nbytes({"a": np.zeros(50), "b": [t]}) >= 400 + 4000

    @dataclass
    class Holder:
        x: torch.Tensor
        y: np.ndarray

    assert state.nbytes(Holder(torch.zeros(10), np.zeros(10))) == 40 + 80


def test_nbytes_of_a_lesson_at_the_maxima_is_megabytes():
    big = computed(Settings(source="random", seq_len=64, d_model=256, n_heads=16, seed=5))
    small = computed(Settings(source="random", seq_len=6, d_model=8, n_heads=2, seed=5))
    assert state.nbytes(big) > 2_000_000  # four (16, 64, 64) float32 stages alone are 1 MB
    assert state.nbytes(small) < 20_000


def test_pool_evicts_the_least_recently_used_by_bytes_across_caches():
    pool = state.Pool(budget=10_000)
    for name in "abc":
        pool.put((name,), np.zeros(400))  # 3,200 bytes each
    assert pool.get(("a",)) is not None  # "a" is now the most recently used
    pool.put(("d",), np.zeros(400))  # over budget: "b", the least recently used, goes
    assert pool.get(("b",)) is None
    assert all(pool.get((k,)) is not None for k in "acd")
    assert pool.total <= pool.budget
    pool.put(("huge",), np.zeros(2_000))  # larger than the whole budget: not kept
    assert pool.get(("huge",)) is None and pool.get(("a",)) is not None


def test_pool_counts_a_storage_held_by_several_entries_once_while_any_holds_it():
    """A layer shared by the lessons that differ only in T or the mask, and by shared_layer's
    entry: its weights are counted once, and still when the entry that made it goes first."""
    pool = state.Pool(budget=1_000_000)
    weights = torch.zeros(100, 100)  # 40,000 bytes
    pool.put(("layer",), weights)
    pool.put(("lesson", 1), (weights, np.zeros(10)))  # and 80 bytes of its own
    pool.put(("lesson", 2), [weights.T])  # a view of the same storage
    keys = sum(state.nbytes(key) for key in pool.entries)
    assert pool.total == 40_000 + 80 + keys
    pool.forget("layer")  # shared_layer's entry dropped: the lessons still hold the weights
    assert pool.total == 40_000 + 80 + keys - state.nbytes(("layer",))
    pool.forget("lesson")
    assert pool.total == 0 and not pool.storages


def test_pool_evicting_the_last_holder_frees_the_storage():
    pool = state.Pool(budget=100_000)
    first, second = torch.zeros(100, 100), torch.zeros(100, 100)  # 40,000 bytes each
    pool.put(("a",), first)
    pool.put(("b",), [first, first[0]])
    pool.put(("c",), second)
    key = state.nbytes(("c",))  # each key here is one letter: the same bytes
    assert pool.total == 80_000 + 3 * key
    pool.put(("d",), torch.zeros(100, 100))  # over budget: "a" goes, then "b" with the storage
    assert pool.get(("a",)) is None and pool.get(("b",)) is None
    assert pool.total == 80_000 + 2 * key and len(pool.storages) == 2


def test_pool_counts_an_entrys_key_beside_its_value():
    """Issue 54, item 5: a key can be as large as its value (the glossary's is the text it
    links); an entry counts both, so a cache of many texts is held to the budget it says."""
    pool = state.Pool(budget=100_000)
    text = "x" * 1_000
    pool.put(("linked", (text, 1), ()), text.upper())
    assert pool.total == state.nbytes(("linked", (text, 1), ())) + state.nbytes(text) > 2_000


def test_pool_entries_expire_when_idle():
    pool = state.Pool(budget=10_000, ttl_s=0.05)
    pool.put(("a",), 1)
    time.sleep(0.1)
    assert pool.get(("a",)) is None and pool.total == 0


@pytest.fixture
def fresh_pool(monkeypatch):
    pool = state.Pool(budget=10_000)
    monkeypatch.setattr(state, "POOL", pool)
    return pool


def test_cached_computes_each_key_once_for_a_class_arriving_together(fresh_pool):
    calls = []

    @state.cached
    def slow(key: int, *, _unhashed: list) -> np.ndarray:
        calls.append(key)
        time.sleep(0.05)
        return np.full(10, key)

    results = []
    threads = [
        threading.Thread(target=lambda: results.append(slow(7, _unhashed=[1]))) for _ in range(12)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [7] and len(results) == 12
    assert all(r is results[0] for r in results)  # shared, not copied
    slow(8, _unhashed=[2])
    assert calls == [7, 8]


def test_cached_results_stay_within_the_budget(fresh_pool):
    @state.cached
    def block(i: int) -> np.ndarray:
        return np.zeros(500)  # 4,000 bytes

    for i in range(20):
        block(i)
    assert fresh_pool.total <= 10_000 and len(fresh_pool.entries) == 2


def test_cached_lets_the_next_caller_retry_after_an_error(fresh_pool):
    attempts = []

    @state.cached
    def flaky(key: int) -> int:
        attempts.append(key)
        if len(attempts) == 1:
            raise RuntimeError("first call fails")
        return key * 2

    with pytest.raises(RuntimeError):
        flaky(3)
    assert flaky(3) == 6 and flaky(3) == 6 and attempts == [3, 3]
    assert fresh_pool.computing == {}  # no lock left behind


def test_cached_keep_holds_a_server_wide_value_outside_the_budget(fresh_pool):
    loads = []

    @state.cached(keep=True)
    def model(name: str) -> np.ndarray:
        loads.append(name)
        return np.zeros(5_000)  # 40,000 bytes: four times the whole budget

    @state.cached
    def block(i: int) -> np.ndarray:
        return np.zeros(500)

    first = model("induction")
    for i in range(20):
        block(i)  # churns the budgeted entries
    assert model("induction") is first and loads == ["induction"]
    assert fresh_pool.total <= 10_000


def test_once_runs_a_function_once_per_server_outside_the_budget(fresh_pool):
    """server.py's switches (glibc's malloc, TCP_NODELAY, the warm-up thread) are done once per
    server: `state.once`, named for that, apart from caching a result."""
    runs = []

    @state.once
    def switch_on() -> int:
        runs.append(1)
        return len(runs)

    assert switch_on() == 1 and switch_on() == 1 and runs == [1]
    assert list(fresh_pool.kept) == [(f"{__name__}.{switch_on.__qualname__}", (), ())]
    assert not fresh_pool.entries and fresh_pool.total == 0


def test_cached_clear_forgets_one_function_only(fresh_pool):
    calls = []

    @state.cached(keep=True)
    def kept(i: int) -> int:
        calls.append(("kept", i))
        return i

    @state.cached
    def other(i: int) -> int:
        calls.append(("other", i))
        return i

    kept(1), other(1)
    kept.clear()
    kept(1), other(1)
    assert calls == [("kept", 1), ("other", 1), ("kept", 1)]
