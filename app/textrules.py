"""What text the server takes from people, and what it refuses.

Three rules, from the widest to the narrowest:

- **No text** holds a character that cannot be stored or sent: an unpaired surrogate (half of
  a UTF-16 pair, no character at all: neither database stores it, no mail carries it) or a
  control character other than tab and the line breaks (NUL, which PostgreSQL refuses; escape
  sequences; C1 controls). :func:`unusable_character` finds one; every request's JSON body,
  query and form are checked for them before anything else (app/inputcheck.py).
- **A name** (a player's, a game's) and a **one-line text** (a pause reason) is one line that
  shows what it says: no control character at all (no tab, no line break, which would start a
  fake line in another player's plain-text mail, the command line or a webhook post), no
  Unicode line or paragraph separator, and no bidirectional override or isolate (which shows
  text in another order than it is read). :func:`line_problem` says what is wrong with one.
- **A chat message** may have several lines: :func:`clean_message_text` keeps its line breaks
  and removes every other control and direction character (a message arrives by mail too,
  where such characters are common and nobody could be asked to type it again).

This module imports nothing of the app: the service, the views and the API all use it.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

UNUSABLE: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
"""Characters no text may hold: controls other than tab, LF and CR, and lone surrogates."""
DIRECTION_MARKS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Bidirectional marks, embeddings, overrides and isolates: they reorder what is shown."""
LINE_SEPARATORS: Final = frozenset("\u2028\u2029\x85")
MAX_JSON_DEPTH: Final = 32
"""How deep arrays and objects may nest in a request body (an exported game needs about 8)."""


def unusable_character(text: str) -> str | None:
    """The first character of ``text`` no text may hold, as ``U+XXXX``; None when it has
    none."""
    found = UNUSABLE.search(text)
    return None if found is None else code_point(found.group())


def code_point(character: str) -> str:
    return f"U+{ord(character):04X}"


def line_problem(text: str) -> str | None:
    """Why ``text`` cannot be a name or a one-line text (``U+XXXX``, the first character it
    may not hold), or None when it can."""
    for character in text:
        if (character in DIRECTION_MARKS or character in LINE_SEPARATORS
                or unicodedata.category(character) in ("Cc", "Cs", "Zl", "Zp")):
            return code_point(character)
    return None


_MESSAGE_REMOVED: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff"
    + "".join(sorted(DIRECTION_MARKS)) + "]")


def clean_message_text(text: str) -> str:
    """A chat message's text with its line breaks unified to ``\\n`` (CR LF, CR, NEL, the
    Unicode line and paragraph separators), tabs as spaces, and every other control or
    direction character removed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    for separator in LINE_SEPARATORS:
        text = text.replace(separator, "\n")
    return _MESSAGE_REMOVED.sub("", text)


_JSON_PUNCTUATION: Final = re.compile(r'[\\"\[\]{}]')


def json_depth(text: str) -> int:
    """How deep arrays and objects nest in JSON ``text``, measured in one pass without parsing
    it (so that a body nested thousands deep is refused before a parser recurses into it)."""
    depth = deepest = 0
    in_string = False
    escaped_at = -1
    for match in _JSON_PUNCTUATION.finditer(text):
        character, at = match.group(), match.start()
        if at == escaped_at:
            continue
        if in_string:
            if character == "\\":
                escaped_at = at + 1
            elif character == '"':
                in_string = False
        elif character == '"':
            in_string = True
        elif character in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif character in "]}":
            depth -= 1
    return deepest
