"""A class kept in a file (issue 51, item 2): where a class's store does not outlive the app
(SQLite on Streamlit Community Cloud, whose disk goes when the app sleeps or is updated), the
teacher saves the whole class to a file and continues it from that file on a fresh server, under
its own code; each student's seat cookie then finds its seat again, so the concept check's
before and after still pair by seat.

The file is JSON: the class as `ClassStore.export_class` gives it (token digests, never a
token), signed with HMAC-SHA256 keyed by the token of the teacher's screen that saved it. Only
that screen (its cookie, or its private link) can continue the class, and a file changed after
it was saved, or one that is not a class file of this app, is refused with the reason. Plain
Python: nothing here imports Streamlit.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time

from dashboard.classroom.database import digest
from dashboard.classroom.store import ClassInfo, ClassStore

FORMAT = "attention-dashboard class"
VERSION = 1
MAX_BYTES = 20 * 1024 * 1024  # a course of 200 students and 200 questions is about 4 MB


class RefusedFile(ValueError):
    """A file that cannot continue a class: why, in words for the teacher."""


def save(store: ClassStore, code: str, teacher_token: str, now: float) -> bytes:
    """The whole class as a signed file, for one of its teacher's screens."""
    body = {
        "format": FORMAT,
        "version": VERSION,
        "saved_at": now,
        "saved_by": digest(teacher_token),
        "class": store.export_class(code, teacher_token),
    }
    return json.dumps({**body, "signature": _sign(body, teacher_token)}, indent=1).encode()


def name(code: str, now: float) -> str:
    """The file's name: the class code and the day it was saved (UTC)."""
    return f"class_{code}_{time.strftime('%Y-%m-%d_%H%M', time.gmtime(now))}.json"


def read(data: bytes) -> dict:
    """The file's contents, checked for form (not yet for who signed it): RefusedFile when it is
    not a class file of this app, or of a later version."""
    if len(data) > MAX_BYTES:
        raise RefusedFile(f"This file is larger than a class file can be ({MAX_BYTES} bytes).")
    try:
        found = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise RefusedFile("This is not a class file: it is not the JSON this app saves.") from None
    if not isinstance(found, dict) or found.get("format") != FORMAT:
        raise RefusedFile(
            "This is not a class file of this app (saved with *Save the class to a file*)."
        )
    if found.get("version") != VERSION:
        raise RefusedFile(
            f"This class file is version {found.get('version')!r}; this app reads version "
            f"{VERSION}. Continue it on the version of the app that saved it."
        )
    if not isinstance(found.get("class"), dict) or not isinstance(found.get("signature"), str):
        raise RefusedFile("This class file is incomplete: its class or its signature is missing.")
    return found


def code_of(found: dict) -> str:
    """The code of the class a file holds (as read by `read`)."""
    return str(found["class"].get("code", ""))


def signer(found: dict, tokens: list[str]) -> str:
    """Of the teacher tokens a browser holds for the file's class, the one that signed it (else
    the first, or "" for none: `restore` then says why it refuses)."""
    saved_by = str(found.get("saved_by", ""))
    return next((t for t in tokens if digest(t) == saved_by), tokens[0] if tokens else "")


def restore(store: ClassStore, found: dict, teacher_token: str) -> ClassInfo:
    """Continue the class a file holds (as read by `read`), for the screen whose token signed it:
    RefusedFile when another screen saved it, or it was changed since; the store's own refusals
    (a live class with that code: ClassExists) as they are."""
    if not hmac.compare_digest(str(found.get("saved_by", "")), digest(teacher_token)):
        raise RefusedFile(
            f"This browser did not save this file of class {code_of(found)}: open the Class "
            "page on the screen that saved it (the same browser), or open that screen's private "
            "teacher link here first, then continue the class from the file."
        )
    body = {key: value for key, value in found.items() if key != "signature"}
    if not hmac.compare_digest(found["signature"], _sign(body, teacher_token)):
        raise RefusedFile(
            "This class file was changed after it was saved: its signature does not match, so "
            "nothing was restored. Use the file as the app saved it."
        )
    try:
        return store.restore_class(found["class"], teacher_token)
    except PermissionError as error:
        raise RefusedFile(str(error)) from None


def _sign(body: dict, teacher_token: str) -> str:
    """HMAC-SHA256 of the body's canonical JSON, keyed by the saving screen's token."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(teacher_token.encode(), canonical, hashlib.sha256).hexdigest()
