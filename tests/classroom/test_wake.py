"""The class watch's bookkeeping (dashboard/classroom/wake.py): which classes have news, who is
owed a wake. The wakes themselves, on a real server: tests/deploy/test_follow_wake.py."""

from __future__ import annotations

import asyncio

from dashboard.classroom.wake import Listener, Watch


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


def test_watch_is_told_at_once_of_a_followed_class_only() -> None:
    """A write of this process (`soon`, from any thread) cuts the watch's rest short for a
    class followed here; for another class, or with no watch running, it does nothing. The
    rest is an hour: only being told ends it within the test."""
    watch = Watch()
    watch.soon("ABC123")  # no watch running: nothing, and no error

    async def resting() -> list[bool]:
        watch.loop, watch.told = asyncio.get_running_loop(), asyncio.Event()
        watch.running = True
        watch.listeners["ABC123"] = {"s1": Listener("s1", "f1", None)}
        rests = []
        for code in ("XYZ789", "ABC123"):  # the first is followed by nobody here
            rest = asyncio.ensure_future(watch.rest(3600))
            await asyncio.sleep(0)
            await asyncio.to_thread(watch.soon, code)  # a script's thread, as a teacher's click
            done, _ = await asyncio.wait({rest}, timeout=1.0 if code == "XYZ789" else 60.0)
            rests.append(rest in done and rest.result())
            rest.cancel()
        return rests

    assert asyncio.run(resting()) == [False, True]
