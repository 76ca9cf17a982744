"""What text the server takes from people, and what it refuses.

Three rules, from the widest to the narrowest:

- **No text** holds a character that cannot be stored or sent: an unpaired surrogate (half of
  a UTF-16 pair, no character at all: neither database stores it, no mail carries it) or a
  control character other than tab and the line breaks (NUL, which PostgreSQL refuses; escape
  sequences; C1 controls). :func:`unusable_character` finds one; every request's JSON body,
  query and form are checked for them before anything else (app/web/inputcheck.py).
- **A name** (a player's, a game's) and a **one-line text** (a pause reason) is one line that
  shows what it says: no control character at all (no tab, no line break, which would start a
  fake line in another player's plain-text mail, the command line or a webhook post), no
  Unicode line or paragraph separator, no bidirectional override or isolate (which shows
  text in another order than it is read), and nothing that is not seen (:func:`hidden_character`:
  a zero-width or other format character, a tag character, a blank letter, a private-use or
  unassigned code point), with which two names that look alike would be two names, or a name
  would carry words nobody sees. :func:`line_problem` says what is wrong with one. An
  **e-mail address** a seat is given holds nothing unseen either (:func:`hidden_character`
  with ``emoji=False``).
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
UNSEEN_RANGES: Final = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x2800, 0x2800),
    (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
"""Characters that show nothing: Unicode's Default_Ignorable_Code_Point (zero-width spaces and
joiners, soft hyphen, word joiner and invisible operators, the byte order mark, variation
selectors, the tag block, Hangul fillers...) and the blank Braille pattern, a blank letter."""
UNSEEN_CATEGORIES: Final = frozenset(("Cf", "Co", "Cn"))
"""Format characters, private-use and unassigned code points (in the Unicode of this Python):
nothing anyone can be sure to see, or to type again."""
EMOJI_STYLES: Final = ((0xFE0E, 0xFE0F),)
"""The variation selectors that choose an emoji's look (as text, U+FE0E, or in colour,
U+FE0F), kept right after the symbol they style; every other variation selector is unseen
(after a letter it would make a name that looks like another)."""
ZERO_WIDTH_JOINER: Final = "\u200d"
"""Joins two pictographs into one (a family: man, ZWJ, woman, ZWJ, girl)."""
EMOJI_MODIFIERS: Final = (0x1F3FB, 0x1F3FF)
"""Skin tones: they follow the pictograph they colour, before a joiner."""
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
    return hidden_character(text)


def _within(character: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    number = ord(character)
    return any(low <= number <= high for low, high in ranges)


def _unseen(character: str) -> bool:
    return (_within(character, UNSEEN_RANGES)
            or unicodedata.category(character) in UNSEEN_CATEGORIES)


def hidden_character(text: str, *, emoji: bool = True) -> str | None:
    """The first character of ``text`` that shows nothing (``U+XXXX``), or None.

    With ``emoji`` (a name), what an emoji needs is kept: one emoji variation selector right
    after the symbol it styles, and a zero-width joiner between two symbols (a skin tone and
    a variation selector may stand between the first and the joiner). Anywhere else they are
    as unseen as the rest. Without it (an address) nothing unseen is taken.
    """
    for at, character in enumerate(text):
        if not _unseen(character):
            continue
        if emoji and _styles_its_neighbour(text, at):
            continue
        return code_point(character)
    return None


def _styles_its_neighbour(text: str, at: int) -> bool:
    """Whether ``text[at]`` is an emoji variation selector right after a symbol, or a joiner
    between two symbols."""
    character = text[at]
    if _within(character, EMOJI_STYLES):
        return at > 0 and unicodedata.category(text[at - 1]) == "So"
    if character != ZERO_WIDTH_JOINER or at + 1 >= len(text):
        return False
    before = at - 1
    while before >= 0 and (_within(text[before], EMOJI_STYLES)
                           or _within(text[before], (EMOJI_MODIFIERS,))):
        before -= 1
    return (before >= 0 and unicodedata.category(text[before]) == "So"
            and unicodedata.category(text[at + 1]) == "So")


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
