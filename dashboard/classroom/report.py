"""After the class: the teacher's report (issue 27). Per question: how many answered, the share
right, each classic mistake with how many gave it, the other wrong answers, and the objectives
of the lesson it came from; as a table on the teacher's screen and a CSV to download. Never a
student's nickname: those are only in the second download, answers with nicknames, which only
the teacher's screen offers."""

from __future__ import annotations

import pandas as pd

from attention.drills import in_sentence
from dashboard.classroom import asking, concept_check
from dashboard.classroom.store import ClassStore
from dashboard.frame import LESSONS


def objectives_of(name: str) -> str:
    """The objectives of the lesson a question's name comes from ("2 · Multi-head, question
    3"); empty for the teacher's own questions."""
    lesson = next((lesson for lesson in LESSONS if name.startswith(f"{lesson.title},")), None)
    return "" if lesson is None else "; ".join(lesson.objectives)


def report(store: ClassStore, code: str, teacher_token: str) -> pd.DataFrame:
    """One row per question asked, in the order asked, from the answers the store holds
    (PermissionError for a token that is not the class's teacher's)."""
    store.joined(code, teacher_token)  # the teacher's alone, before anything is read
    rows = []
    for question in store.questions(code, teacher_token):
        tally = store.tally(code, teacher_token, question.qid)
        name, asks = asking.named(question.prompt)
        counts = asking.grouped(question, tally.counts)
        right = sum(n for value, n in counts.items() if asking.is_right(question, value))
        named = [
            (in_sentence(title for _, title in bugs), n)
            for n, _, bugs in asking.mistakes_made(question, tally.counts)
        ]
        wrong = tally.answered - right
        rows.append({
            "question": name,
            "asks": asks,
            "answer": asking.answer_text(question),
            "answered": tally.answered,
            "joined": tally.joined,
            "right": right,
            "share right": round(right / tally.answered, 3) if tally.answered else None,
            "mistakes named": "; ".join(f"{words}: {n}" for words, n in named),
            "other wrong answers": wrong - sum(n for _, n in named),
            "lesson's objectives": objectives_of(name),
        })  # fmt: skip
    return pd.DataFrame(rows)


def answers_with_nicknames(store: ClassStore, code: str, teacher_token: str) -> pd.DataFrame:
    """Every answer with the nickname its student gave (blank without one) and whether it is
    right, graded as the tally grades it (0.2607 and 0.2608 are both right for 0.26075...): the
    teacher's download, never shown on the projector. The concept check's answers are left
    out: the check tells students the teacher sees the class's figures, not their names."""
    questions = {q.qid: q for q in store.questions(code, teacher_token)}
    rows = []
    for qid, nickname, value in store.all_answers(code, teacher_token):
        question = questions.get(qid)
        if question is not None and concept_check.check_of(question.prompt):
            continue  # the check promises the students no name beside their answers
        rows.append({
            "question": asking.named(question.prompt)[0] if question else str(qid),
            "nickname": nickname or "",
            "answer": value,
            "right": "" if question is None or question.answer is None  # a poll: no answer
            else "yes" if asking.is_right(question, value) else "no",
        })  # fmt: skip
    return pd.DataFrame(rows, columns=["question", "nickname", "answer", "right"])
