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


def test_watch_reads_again_after_a_failed_told_read(monkeypatch) -> None:
    """A read the teacher's write asked for that fails (the store unreachable) is read again
    after the back-off, not at the next period (an hour here): what the teacher did is not
    left for an hour."""
    from dashboard.classroom import wake

    class Session:  # a follower's session, settled, whose page has no follow panel now
        is_settled = True

        def track_settling(self) -> None:
            pass

        def has_fragment(self, fragment_id: str) -> bool:
            return False

    class Runtime:  # the watch's view of Streamlit's runtime: one follower's session
        @staticmethod
        def exists() -> bool:
            return True

        @staticmethod
        def instance():
            return Runtime

        @staticmethod
        def get_app_session(session_id):
            return Session()

    monkeypatch.setattr(wake, "Runtime", Runtime)
    monkeypatch.setattr(wake, "BACK_OFF_S", 0.01)
    monkeypatch.setenv(wake.EVERY_ENV, "3600")
    monkeypatch.setattr(wake, "WATCH", Watch())
    reads: list[list[str]] = []

    def read_news(codes):
        reads.append(list(codes))
        if len(reads) == 1:
            raise ConnectionError("the store is unreachable")
        return dict.fromkeys(codes, (1.0, None, False, False))

    async def a_class() -> None:
        watching = asyncio.create_task(wake.watch(read_news))
        while wake.WATCH.told is None:  # the watch has started
            await asyncio.sleep(0.01)
        wake.WATCH.listeners["ABC123"] = {"s1": Listener("s1", "f1", None)}
        await asyncio.to_thread(wake.soon, "ABC123")
        for _ in range(3000):  # 30 s at most: a second read, or none for an hour
            if len(reads) >= 2:
                break
            await asyncio.sleep(0.01)
        watching.cancel()

    asyncio.run(a_class())
    assert reads == [["ABC123"], ["ABC123"]]
