"""Text a user or a link supplied, made safe to show: never rendered as markdown or LaTeX, never
reordered or hidden by control characters.

Streamlit renders markdown in most elements (st.warning, st.error, st.markdown, labels), so text
that came from outside goes through `plain` (for those elements) or `visible` (for text elements,
tables and chart labels) before it is shown.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

MARKDOWN_PUNCTUATION = frozenset("\\`*_{}[]()#+-.!$<>|~=:&\"'^%@")


def visible(text: str) -> str:
    """The text with every invisible or reordering character written out as ⟨U+XXXX⟩: control
    characters (a newline becomes a space), bidirectional overrides such as U+202E, zero-width
    characters; a combining mark with nothing before it to sit on gets a dotted circle."""
    out = []
    for ch in str(text):
        category = unicodedata.category(ch)
        if ch in "\n\r\t":
            out.append(" ")
        elif category in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            out.append(f"⟨U+{ord(ch):04X}⟩")
        elif category.startswith("M") and (not out or out[-1].endswith("⟩")):
            out.append("◌" + ch)
        else:
            out.append(ch)
    return "".join(out)


# GitHub-flavoured markdown turns a bare address into a link after the escapes are read
# (`http\:\/\/a\.io` is still a link): a word joiner, which draws nothing, after `http`, `www`
# and `@` keeps the text as typed and takes it out of the autolink patterns.
AUTOLINK = re.compile(r"(?i)(https?|ftp|www|mailto|xmpp)(?=\\[:.])|@")
WORD_JOINER = "\u2060"


def plain(text: str) -> str:
    """Text for an element that renders markdown, shown exactly as typed: invisible characters
    written out (see `visible`), every ASCII punctuation mark backslash-escaped, so `$x$`,
    `**x**`, `# x` or `![i](http://…)` stay text, and no address becomes a link."""
    escaped = "".join("\\" + c if c in MARKDOWN_PUNCTUATION else c for c in visible(text))
    return AUTOLINK.sub(lambda m: m.group(0) + WORD_JOINER, escaped)


def unique_labels(tokens: tuple[str, ...] | list[str]) -> list[str]:
    """Token labels safe to use as table axes: a repeated token gets its occurrence, 'the#2';
    invisible or reordering characters are written out (a zero-width space is ⟨U+200B⟩), so no
    label is empty to the eye or turns the text around it."""
    tokens = [visible(token) for token in tokens]
    counts = Counter(tokens)
    seen: Counter[str] = Counter()
    labels = []
    for token in tokens:
        seen[token] += 1
        labels.append(token if counts[token] == 1 else f"{token}#{seen[token]}")
    return labels
