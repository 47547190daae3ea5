"""A self-learner's progress as the browser keeps it (issue 51, item 1): the items of
dashboard/progress.py in one cookie value, and back. The browser's copy is the one that
survives: Community Cloud wipes the server's disk (and its progress store) when the app sleeps.

A copy is `VERSION + "." + base64url(zlib(JSON))`: the items as compact JSON with sorted keys,
compressed, in base64url without padding, so only cookie-safe characters (A-Z a-z 0-9 - _ .).
Each version has its reader in READERS: a later format still reads the copies a browser kept
in an earlier one.

Anyone can write a cookie, so a copy is read as untrusted text: `decode` raises ValueError,
with the reason, for anything but a dict of the items the pages write (ITEMS: the values they
parse with int() are digits), within the progress store's limits (learners.py: ITEM_CHARS,
VALUE_CHARS, MAX_ITEMS), with MAX_JSON_BYTES against a small cookie that inflates to a huge one.

Bounded: the whole course (tests/classroom/test_progress_copy.py) is every question set (each
lesson's, and lesson 5's by hand) with 12 questions answered right, both concept-check forms
answered with their longest choices, and drill-set scores (100,000 sets: the sidebar's seed
range) up to MAX_ITEMS items in all: 2,654 characters, 11,568 bytes of JSON, under
MAX_COOKIE_CHARS = 3,500 (a browser keeps 4,096 bytes a cookie, its name included). `encode`
refuses (ValueError) a copy it could not write whole. Plain Python: no Streamlit here.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Callable

from dashboard.classroom.database import plain
from dashboard.classroom.learners import ITEM_CHARS, MAX_ITEMS, VALUE_CHARS

VERSION = "1"
MAX_COOKIE_CHARS = 3500  # the value; a browser keeps 4,096 bytes a cookie, name and value
MAX_JSON_BYTES = 64 * 1024  # a whole course is about 12 KB of JSON
NAME = r"[A-Za-z0-9_]+"  # a question set's name: its page's stem
ITEMS = {  # what the pages write: (item, value) patterns
    "count": (re.compile(rf"count:{NAME}"), re.compile(r"[0-9]{1,3}")),
    "right": (re.compile(rf"right:{NAME}:[0-9]{{1,3}}"), re.compile(r"1")),
    "drills": (re.compile(r"drills:[0-9]{1,6}"), re.compile(r"[0-9]{1,3}/[0-9]{1,3}")),
    "concept": (re.compile(r"concept:(before|after):[0-9]{1,3}"), re.compile(r".+", re.DOTALL)),
}
BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


def encode(items: dict[str, str]) -> str:
    """The cookie value of a learner's items; ValueError for items `decode` would refuse or a
    copy longer than MAX_COOKIE_CHARS."""
    check(items)
    text = json.dumps(items, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    packed = base64.urlsafe_b64encode(zlib.compress(text.encode(), 9)).decode().rstrip("=")
    value = f"{VERSION}.{packed}"
    if len(value) > MAX_COOKIE_CHARS:
        raise ValueError(f"The copy is {len(value)} characters, over {MAX_COOKIE_CHARS}.")
    return value


def decode(value: str) -> dict[str, str]:
    """A learner's items from a cookie value, by the reader of its version; ValueError, with
    the reason, for anything that is not a copy `encode` could have written."""
    if not isinstance(value, str):
        raise ValueError("The copy is not text.")
    if len(value) > 4096:
        raise ValueError("The copy is longer than a browser keeps.")
    version, dot, packed = value.partition(".")
    if not dot or version not in READERS:
        raise ValueError(f"The copy's version {version[:8]!r} is not one this app reads.")
    return READERS[version](packed)


def read_v1(packed: str) -> dict[str, str]:
    """Version 1: base64url (no padding) of zlib of compact JSON."""
    if not BASE64URL.fullmatch(packed) or len(packed) % 4 == 1:
        raise ValueError("The copy is not base64url.")
    try:
        squeezed = base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4))
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"The copy is not base64url: {error}") from None
    inflate = zlib.decompressobj()
    try:
        raw = inflate.decompress(squeezed, MAX_JSON_BYTES + 1)
    except zlib.error as error:
        raise ValueError(f"The copy is not zlib data: {error}") from None
    if len(raw) > MAX_JSON_BYTES:
        raise ValueError(f"The copy inflates past {MAX_JSON_BYTES} bytes.")
    if not inflate.eof or inflate.unused_data:
        raise ValueError("The copy's zlib data is cut short or followed by more.")
    try:
        items = json.loads(raw.decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ValueError(f"The copy is not JSON: {error}") from None
    check(items)
    return items


READERS: dict[str, Callable[[str], dict[str, str]]] = {"1": read_v1}


def check(items: object) -> None:
    """ValueError unless `items` is a dict of the pages' items within the store's limits."""
    if not isinstance(items, dict):
        raise ValueError("The copy is not a dict of items.")
    if len(items) > MAX_ITEMS:
        raise ValueError(f"The copy has {len(items)} items, over {MAX_ITEMS}.")
    for item, value in items.items():
        if said := problem(item, value):
            raise ValueError(said)


def problem(item: object, value: object) -> str | None:
    """What is wrong with one item of a copy, None when nothing is."""
    if not isinstance(item, str) or not isinstance(value, str):
        return f"The copy's item {str(item)[:40]!r} is not text to text."
    if len(item) > ITEM_CHARS or len(value) > VALUE_CHARS:
        return f"The copy's item {item[:40]!r} is longer than the store keeps."
    if plain(value, VALUE_CHARS) != value:
        return f"The copy's item {item[:40]!r} has characters the store drops."
    kind = ITEMS.get(item.partition(":")[0])
    if kind is None or not (kind[0].fullmatch(item) and kind[1].fullmatch(value)):
        return f"The copy's item {item[:40]!r} is not one the pages write."
    return None


def score_rank(score: str) -> tuple[int, int]:
    """How a drill set's "right/answered" ranks: most right, then fewest tried (a score that
    does not read ranks last)."""
    if not ITEMS["drills"][1].fullmatch(score):
        return -1, 0
    right, answered = (int(n) for n in score.split("/"))
    return right, -answered


def merge(browser: dict[str, str], stored: dict[str, str]) -> dict[str, str]:
    """The union of the browser's copy and the store's: a drill set's better score, otherwise
    the browser's value."""
    merged = {**stored, **browser}
    for item in browser.keys() & stored.keys():
        if item.startswith("drills:"):
            merged[item] = max(browser[item], stored[item], key=score_rank)
    return merged
