"""The size of a class's file (issue 51): a course of N students through the whole course, saved
as *Save the class to a file* saves it, then continued on an empty store, every answer counted
back. Figures, not a test.

    python -m benchmarks.class_file                 # 60 students
    python -m benchmarks.class_file --students 200

The course: the check before (ten items), every lesson's class questions at the sidebar's
starting settings (the course plan asks a few; this asks all of them), the check after; every
student answers every question, choosing at random (seeded). Printed: questions, answers, the
file's bytes (and gzipped, as a mail attachment would be), the time to save and to continue, and
the answers found again after continuing (must equal the answers given: none lost).
"""

from __future__ import annotations

import argparse
import gzip
import random
import tempfile
import time
from pathlib import Path

from attention.drills import parse_number
from dashboard.classroom import archive, asking, concept_check
from dashboard.classroom.store import COURSE_SECONDS, ClassStore
from dashboard.controls import Settings
from dashboard.frame import LESSONS


def course(store: ClassStore, students: int, seed: int) -> tuple[str, str, int]:
    """The whole course in a store: (code, teacher token, answers given)."""
    made = store.create_class(COURSE_SECONDS)
    code, teacher = made.code, made.teacher_token
    seats = [store.join(code, f"student {n}") for n in range(students)]
    qids = concept_check.ask(store, code, teacher, "before")
    for lesson in LESSONS:
        for question in asking.lesson_questions(lesson.path, Settings()):
            qids.append(store.ask(code, teacher, question.prompt, question.choices,
                                  question.answer, question.working, question.mistakes,
                                  question.kind, question.given))  # fmt: skip
    qids += concept_check.ask(store, code, teacher, "after")
    chooser = random.Random(seed)
    given = 0
    for question in store.questions(code, teacher):
        for token in seats:
            if question.choices is not None:
                value = chooser.choice(question.choices)
            else:
                value = str(parse_number(question.answer) * chooser.choice((1, 1, 2, -1)))
            store.answer(code, token, question.qid, value)
            given += 1
        store.close(code, teacher, question.qid)
    return code, teacher, given


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        first = ClassStore(f"sqlite:///{Path(folder) / 'first.db'}", joins_per_minute=10**6)
        code, teacher, given = course(first, args.students, args.seed)
        started = time.perf_counter()
        saved = archive.save(first, code, teacher, time.time())
        saving = time.perf_counter() - started
        fresh = ClassStore(f"sqlite:///{Path(folder) / 'fresh.db'}")
        started = time.perf_counter()
        archive.restore(fresh, archive.read(saved), teacher)
        continuing = time.perf_counter() - started
        found = len(fresh.answers_by_seat(code, teacher))
        asked = len(fresh.questions(code, teacher))
    print(f"students {args.students}, questions {asked}, answers given {given}")
    print(f"file {len(saved):,} bytes ({len(gzip.compress(saved)):,} gzipped)")
    print(f"save {saving * 1000:.0f} ms, continue {continuing * 1000:.0f} ms")
    print(f"answers after continuing {found}, lost {given - found}")


if __name__ == "__main__":
    main()
