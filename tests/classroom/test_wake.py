"""The class watch's bookkeeping (dashboard/classroom/wake.py): which classes have news, who is
owed a wake. The wakes themselves, on a real server: tests/deploy/test_follow_wake.py."""

from __future__ import annotations

from dashboard.classroom.wake import Watch


def test_watch_news_is_a_change_or_a_class_read_the_first_time() -> None:
    """A class read for the first time is news (the teacher may have acted between a follower's
    own read and the watch's first), then only a change is."""
    watch = Watch()
    assert watch.changed({"ABC123": (None, None, False, False)}) == ["ABC123"]
    assert watch.changed({"ABC123": (None, None, False, False)}) == []
    assert watch.changed({"ABC123": (5.0, None, False, False)}) == ["ABC123"]  # a view sent
    assert watch.changed({"ABC123": (5.0, 1, False, False), "XYZ789": None}) == [
        "ABC123", "XYZ789"]  # fmt: skip
    assert watch.changed({"ABC123": None, "XYZ789": None}) == ["ABC123"]  # ended: news too
    assert watch.changed({"XYZ789": None}) == []
    assert watch.changed({"ABC123": None}) == ["ABC123"]  # followed again: read anew


def test_watch_without_a_server_listens_to_nobody() -> None:
    """Outside a served app (no watch running, no script run), listening records nothing, so
    the follow panel keeps the browser's poll (`poll_s`)."""
    watch = Watch()
    watch.listen("ABC123")
    assert watch.codes() == []
    watch.running = True
    watch.listen("ABC123")  # no script run here: still nothing to wake
    assert watch.codes() == []
    watch.wake("ABC123")
    watch.again("ABC123")
    assert watch.owed == {}
