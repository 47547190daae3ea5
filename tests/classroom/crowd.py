"""Students in another process, for tests/classroom/test_store.py (run as a script).

python tests/classroom/crowd.py crowd URL CODE QID START FIRST COUNT
    at time START, students FIRST..FIRST+COUNT-1 join; each answers "A", then its final
    choice CHOICES[i % 4] (the later answer replaces the first); prints "done"
python tests/classroom/crowd.py check URL CODE QID,QID,... START FIRST COUNT
    at time START, students FIRST..FIRST+COUNT-1 join; each answers every question of a
    concept check (its ten question ids), choice CHECK_CHOICE(student, item); prints "done"
python tests/classroom/crowd.py forever URL CODE QID
    student after student joins and answers; prints each one's number after its answer
    committed, until the test kills the process
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dashboard.classroom import ClassStore

CHOICES = ("A", "B", "C", "D")


def final_choice(student: int) -> str:
    return CHOICES[student % len(CHOICES)]


def crowd(store: ClassStore, code: str, qid: int, start: float, first: int, count: int) -> None:
    time.sleep(max(0.0, start - time.time()))
    for student in range(first, first + count):
        token = store.join(code, nickname=f"s{student}")
        store.answer(code, token, qid, "A")
        store.answer(code, token, qid, final_choice(student))
    print("done", flush=True)


def check_choice(student: int, item: int, choices: list[str]) -> str:
    return choices[(student + item) % len(choices)]


def check(store: ClassStore, code: str, qids: list[int], start: float, first: int, count: int):
    time.sleep(max(0.0, start - time.time()))
    choices = {q.qid: q.choices for q in store.questions(code, store.join(code, "reader"))}
    for student in range(first, first + count):
        token = store.join(code, nickname=f"s{student}")
        for item, qid in enumerate(qids):
            store.answer(code, token, qid, check_choice(student, item, choices[qid]))
    print("done", flush=True)


def forever(store: ClassStore, code: str, qid: int) -> None:
    for student in range(10**9):
        token = store.join(code)
        store.answer(code, token, qid, final_choice(student))
        print(student, flush=True)


if __name__ == "__main__":
    mode, url, code, qid, *rest = sys.argv[1:]
    store = ClassStore(url, joins_per_minute=10**6)
    if mode == "crowd":
        crowd(store, code, int(qid), float(rest[0]), int(rest[1]), int(rest[2]))
    elif mode == "check":
        qids = [int(q) for q in qid.split(",")]
        check(store, code, qids, float(rest[0]), int(rest[1]), int(rest[2]))
    else:
        forever(store, code, int(qid))
