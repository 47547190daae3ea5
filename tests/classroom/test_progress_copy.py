"""The browser's copy of a learner's progress (issue 51, item 1): a cookie value that reads
back as written, in every version ever written, that refuses anything else with the reason,
and that holds the whole course under MAX_COOKIE_CHARS."""

from __future__ import annotations

import base64
import json
import random
import re
import zlib

import pytest

from attention import concepts
from dashboard.classroom import progress_copy
from dashboard.classroom.learners import MAX_ITEMS, VALUE_CHARS
from dashboard.classroom.progress_copy import MAX_COOKIE_CHARS, decode, encode, merge
from dashboard.frame import LESSONS
from dashboard.progress import COPY_COOKIE

SOME = {
    "count:step_by_step": "4",
    "right:step_by_step:1": "1",
    "right:step_by_step:3": "1",
    "drills:7": "5/6",
    "concept:before:1": "the query row",
    "concept:after:10": "√d_k",
}
# SOME as version 1 wrote it (made once, pasted here): every later version must still read it
V1 = (
    "1.eNqrVkrOz0tOLSixSkwrSS2yMjRQslJ61DErJT5bSQcul5Sall-UamUIlCvJSFUoLE0tqlQoyi8HKynNK7EqLkktiE-q"
    "jAfRQEUmQImUosycnGIrcyDXVN8MKFCUmZ6BqhJsoCF2KWOwVC0AWxc1wg"
)
QUESTION_SETS = [lesson.url_path for lesson in LESSONS] + ["worked_example_hand"]  # + lesson 5's
QUESTIONS_A_SET = 12  # generous: no lesson asks more than 5


def packed(raw: bytes, version: str = "1") -> str:
    """A copy around any bytes, as version 1 packs JSON."""
    return f"{version}." + base64.urlsafe_b64encode(zlib.compress(raw)).decode().rstrip("=")


def test_a_copy_reads_back_as_written_in_cookie_safe_characters():
    for items in ({}, SOME):
        value = encode(items)
        assert re.fullmatch(r"1\.[A-Za-z0-9_-]*", value), value
        assert decode(value) == items
    assert encode(SOME) == encode(dict(reversed(SOME.items())))  # sorted: one copy, one value


def test_a_version_1_copy_made_once_still_reads():
    assert decode(V1) == SOME
    assert progress_copy.READERS["1"] is progress_copy.read_v1


def whole_course() -> dict[str, str]:
    """Every question set's 12 questions right, both concept-check forms answered with their
    longest choices, and drill-set scores (sets drawn from the sidebar's 100,000, scores
    random) up to MAX_ITEMS items in all."""
    items = {}
    for name in QUESTION_SETS:
        items[f"count:{name}"] = str(QUESTIONS_A_SET)
        items.update({f"right:{name}:{n}": "1" for n in range(1, QUESTIONS_A_SET + 1)})
    for when, form in concepts.WHEN_FORM.items():
        for item in concepts.FORMS[form]:
            items[f"concept:{when}:{item.number}"] = max(item.choices, key=len)
    draw = random.Random(0)
    for number in draw.sample(range(100_000), MAX_ITEMS - len(items)):
        items[f"drills:{number}"] = f"{draw.randint(1, 6)}/6"
    return items


def test_the_whole_course_fits_one_cookie_and_the_docstring_says_how_much():
    items = whole_course()
    assert len(items) == MAX_ITEMS
    value = encode(items)
    raw = json.dumps(items, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    print(f"whole course: {len(value)} characters, {len(raw)} bytes of JSON")
    assert len(value) <= MAX_COOKIE_CHARS
    assert len(f"{COPY_COOKIE}={value}") <= 4096  # what a browser keeps, name included
    said = progress_copy.__doc__.replace("\n", " ")
    assert f"{len(value):,} characters, {len(raw):,} bytes of JSON" in said
    assert decode(value) == items


def test_every_concept_choice_and_question_set_name_is_a_copy_item():
    for when, form in concepts.WHEN_FORM.items():
        for item in concepts.FORMS[form]:
            for choice in item.choices:
                assert decode(encode({f"concept:{when}:{item.number}": choice}))
    for name in QUESTION_SETS:
        assert decode(encode({f"count:{name}": "5", f"right:{name}:5": "1"}))


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, "not text"),
        ("", "version"),
        ("eNqrVkrOz", "version"),  # no version
        ("2." + V1[2:], "version '2'"),  # a version this app does not read
        ("1.", "cut short"),
        ("1.abc$def", "not base64url"),
        ("1.abcde", "not base64url"),  # a length base64 never has
        ("1.AAAA", "not zlib"),
        ("1." + "A" * 5000, "longer than a browser keeps"),
        (V1[:-6], "not zlib|cut short"),  # cut short, as a browser that truncates would
        (packed(b"not json"), "not JSON"),
        (packed(b"\xff\xfe"), "not JSON"),
        (packed(b"[" * 60_000), "not JSON"),  # deeper than the parser goes
        (packed(b'["count:a", "1"]'), "not a dict"),
        (packed(b'{"count:a": 1}'), "not text to text"),
        (packed(b"x" * 200_000), "inflates past"),  # a zip bomb: 200 KB from a few hundred
        (packed(json.dumps({f"right:a:{n}": "1" for n in range(501)}).encode()), "501 items"),
        (packed(json.dumps({"concept:before:1": "x" * 201}).encode()), "longer than the store"),
        (packed(json.dumps({f"count:{'a' * 120}": "1"}).encode()), "longer than the store"),
        (packed(json.dumps({"concept:before:1": "a\x00b"}).encode()), "characters the store"),
        (packed(json.dumps({"concept:before:1": " a"}).encode()), "characters the store"),
        (packed(json.dumps({"favourite": "1"}).encode()), "not one the pages write"),
        (packed(json.dumps({"count:step_by_step": "twelve"}).encode()), "not one the pages"),
        (packed(json.dumps({"count:step_by_step": "²"}).encode()), "not one the pages"),
        (packed(json.dumps({"drills:x": "1/6"}).encode()), "not one the pages write"),
        (packed(json.dumps({"drills:1": "6"}).encode()), "not one the pages write"),
        (packed(json.dumps({"right:a:1": "0"}).encode()), "not one the pages write"),
        (packed(json.dumps({"concept:during:1": "x"}).encode()), "not one the pages write"),
        (packed(json.dumps({"count:<b>": "1"}).encode()), "not one the pages write"),
    ],
)
def test_a_copy_that_does_not_read_is_refused_with_the_reason(value, reason):
    with pytest.raises(ValueError, match=reason):
        decode(value)


def test_encode_refuses_what_decode_would_and_a_copy_over_the_cap():
    with pytest.raises(ValueError, match="not one the pages write"):
        encode({"favourite": "1"})
    with pytest.raises(ValueError, match="over 500"):
        encode({f"right:a:{n}": "1" for n in range(MAX_ITEMS + 1)})
    noise = random.Random(1)
    big = {
        f"concept:before:{n}": "".join(noise.choices("abcdefghijklmnopqrstuvwxyz", k=VALUE_CHARS))
        for n in range(40)
    }
    with pytest.raises(ValueError, match=f"over {MAX_COOKIE_CHARS}"):
        encode(big)


def test_merge_is_the_union_with_the_better_drill_score_and_otherwise_the_browsers_value():
    browser = {"right:a:1": "1", "drills:1": "3/6", "drills:2": "5/6", "concept:before:1": "x"}
    stored = {"right:a:2": "1", "drills:1": "4/6", "drills:2": "5/5", "concept:before:1": "y"}
    assert merge(browser, stored) == {
        "right:a:1": "1",
        "right:a:2": "1",
        "drills:1": "4/6",  # more right
        "drills:2": "5/5",  # as many right, fewer tried
        "concept:before:1": "x",  # the browser's
    }
    assert merge({}, stored) == stored and merge(browser, {}) == browser
    assert merge({"drills:1": "1/6"}, {"drills:1": "junk"}) == {"drills:1": "1/6"}
