"""A self-learner's progress in its store (issue 30, item 6), against real databases
(SQLite and PostgreSQL, see conftest.py): kept under a token's digest, never the token;
bounded; forgotten on request; gone after LEARNER_SECONDS without a change."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from dashboard.classroom.learners import LEARNER_SECONDS, MAX_ITEMS, ProgressStore, progress


@pytest.fixture
def store(url, clock) -> ProgressStore:
    return ProgressStore(url, clock=clock)


def test_progress_is_kept_per_learner_and_replaced(store):
    me, other = store.new_learner(), store.new_learner()
    assert me != other and store.progress_of(me) == {}
    store.record(me, "right:masking:1", "1")
    store.record(me, "drills:0", "3/6")
    store.record(me, "drills:0", "5/6")  # a later value replaces the earlier
    store.record(other, "right:masking:2", "1")
    assert store.progress_of(me) == {"right:masking:1": "1", "drills:0": "5/6"}
    assert store.progress_of(other) == {"right:masking:2": "1"}


def test_progress_stores_the_tokens_digest_never_the_token(store):
    me = store.new_learner()
    store.record(me, "right:step_by_step:1", "1")
    with store.engine.connect() as conn:
        stored = [row.learner_hash for row in conn.execute(select(progress))]
    assert stored and me not in stored and all(len(h) == 64 for h in stored)


def test_progress_forget_deletes_everything_of_that_learner_only(store):
    me, other = store.new_learner(), store.new_learner()
    for item in ("right:a:1", "right:a:2", "drills:1"):
        store.record(me, item, "1")
    store.record(other, "right:a:1", "1")
    assert store.forget_learner(me) == 3
    assert store.progress_of(me) == {} and store.progress_of(other) == {"right:a:1": "1"}


def test_progress_refuses_bad_tokens_items_and_too_many_items(store):
    me = store.new_learner()
    for token in ("", "short", "a" * 20 + "<script>", None, 12345):
        with pytest.raises(ValueError, match="learner token"):
            store.record(token, "right:a:1", "1")
    with pytest.raises(ValueError, match="needs a name"):
        store.record(me, "   ", "1")
    store.record(me, "x" * 500, "y" * 500)  # kept as plain text, cut to the columns' sizes
    (item,) = store.progress_of(me)
    assert len(item) == 120
    for n in range(MAX_ITEMS - 1):
        store.record(me, f"item:{n}", "1")
    with pytest.raises(ValueError, match=f"at most {MAX_ITEMS}"):
        store.record(me, "one too many", "1")
    store.record(me, "item:0", "2")  # an item it has may still change


def test_progress_expires_after_learner_seconds_without_a_change(store, clock):
    old, fresh = store.new_learner(), store.new_learner()
    store.record(old, "right:a:1", "1")
    clock.now += LEARNER_SECONDS - 10
    store.record(fresh, "right:a:1", "1")
    clock.now += 20
    store.purge_expired()
    assert store.progress_of(old) == {} and store.progress_of(fresh) == {"right:a:1": "1"}


def test_a_new_learner_purges_the_expired_progress(store, clock):
    """Nothing else purges a learner's progress (a new class purges classes): a new learner's
    token does. Before the purge, an expired item is already gone for its learner."""

    def stored() -> int:
        with store.engine.connect() as conn:
            return len(conn.execute(select(progress.c.item)).all())

    old = store.new_learner()
    store.record(old, "right:a:1", "1")
    clock.now += LEARNER_SECONDS + 1
    assert store.progress_of(old) == {} and stored() == 1
    store.new_learner()
    assert stored() == 0
