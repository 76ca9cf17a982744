"""Every request's text is checked once, before anything else reads it (see app/core/textrules.py).

A JSON body (every string and key at any depth), a query string and a form (every field name
and value) may hold no character that cannot be stored or sent: a control character other than
tab and the line breaks, or an unpaired surrogate (``"\\udc00"`` is valid JSON, yet no database
stores it and no mail carries it). A JSON body may not nest arrays and objects deeper than
:data:`~app.core.textrules.MAX_JSON_DEPTH` (a body nested a thousand deep would make the parser
recurse until it fails), nor a number no field could take: a whole number wider than 64 bits
(:data:`~app.core.integers.JSON_MAX`; one of 5,000 digits would make Python's parser itself fail) or
one too large even for a float (``1e400``, which Python reads as infinity). Such a request is
refused with 400 before its credentials, its CSRF token or the rate limits are looked at, so
nothing is changed: the API answers JSON in English, a page answers its error page in the page's
language. (Each field's own range, a column's, is its schema's: app/core/integers.py.)

The request path is left to the views, which check the ids in it (a game id is 32 hex
digits); a field's own rules (a name on one line, a chat message's length) are the service's.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any, Final

from flask import request

from app.core.i18n import N_
from app.core.integers import COLUMN_MAX, JSON_MAX, JSON_MIN, read_whole
from app.core.textrules import MAX_JSON_DEPTH, json_depth, unusable_character
from app.service import BadRequest

_SHOWN_KEY: Final = re.compile(r"[A-Za-z0-9_.-]{1,40}")
REFUSAL_WORDS: Final = N_("This request holds a character that cannot be used ({character}: a "
                          "control character or an unpaired surrogate). Nothing was changed: "
                          "remove it and try again.")
"""The refusal as a page shows it (in the page's language)."""
OUT_OF_RANGE: Final = N_("{name} must be a whole number from {low} to {high}")
"""The refusal of a number a view reads (:func:`whole_number`), in the reader's language."""
TOO_LARGE_WORDS: Final = N_("This request holds a number too large ({length} characters) in "
                            "{field}: whole numbers go from {low} to {high}. Nothing was "
                            "changed.")
_JSON_DIGITS: Final = len(str(JSON_MAX))
"""The digits of the largest number a JSON body may hold (20): a longer one is not read."""
_LONG_NUMBER: Final = re.compile(f"[0-9]{{{len(str(-JSON_MIN))}}}|[eE][+-]?[0-9]{{3}}")
"""What a body's text holds wherever it holds a number too large: a run of as many digits as
the smallest number too large has, or an exponent of three digits (matched in strings too,
which only sends their body to the whole check)."""


class UnusableInput(BadRequest):
    """A request refused by this check (its own class: a page without error pages of its
    own, such as a signed link's, answers it with the error page, not JSON)."""


class _NotJson(ValueError):
    """NaN or Infinity, which Python's parser takes and JSON does not have."""


class _TooLarge:
    """A number of a JSON body, in place of its value, that no field takes: a whole number
    beyond :data:`JSON_MIN`..:data:`JSON_MAX`, or one beyond a float's range."""

    def __init__(self, text: str) -> None:
        self.length = len(text)


def _json_int(text: str) -> int | _TooLarge:
    """A whole number of a JSON body (its digits are counted before Python reads them, which
    it refuses to do beyond 4,300)."""
    if len(text.lstrip("-")) > _JSON_DIGITS:
        return _TooLarge(text)
    number = int(text)
    return number if JSON_MIN <= number <= JSON_MAX else _TooLarge(text)


def _json_float(text: str) -> float | _TooLarge:
    number = float(text)
    return number if math.isfinite(number) else _TooLarge(text)


def whole_number(value: object, name: str, *, low: int = 0, high: int = COLUMN_MAX) -> int:
    """``value``, a number of a JSON body or the text of a query or form field, when it is a
    whole number from ``low`` to ``high`` (at most what a column holds: app/core/integers.py); else
    :class:`BadRequest` naming field ``name``, in English for the API and in the reader's
    language for a page."""
    high = min(high, COLUMN_MAX)
    number = read_whole(value)
    if number is None or not low <= number <= high:
        raise BadRequest(f"{name} must be a whole number from {low} to {high}",
                         words=(OUT_OF_RANGE, {"name": name, "low": low, "high": high}))
    return number


def refuse_unusable_input() -> None:
    """A ``before_request`` hook: raise BadRequest for a request whose text is unusable."""
    if request.is_json and request.content_length != 0:
        _check_json_body()
    texts = _fields(request.args.items(multi=True), "query parameter")
    if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        texts = chain(texts, _fields(request.form.items(multi=True), "form field"))
    found = next(_unusable(texts), None)
    if found is not None:
        where, character = found
        raise UnusableInput(_refusal(where, character),
                            words=(REFUSAL_WORDS, {"character": character}))


def _check_json_body() -> None:
    try:
        text = request.get_data(cache=True).decode("utf-8")
    except UnicodeDecodeError:
        return  # (not JSON: the view's parser says so)
    if not plainly_usable(text):
        refuse_unusable_json(text)


def refuse_unusable_json(text: str) -> None:
    """Raise UnusableInput for a JSON body nested too deep, holding NaN or Infinity or, in a
    string, an unusable character (a body that is not JSON is left to the view's parser)."""
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise UnusableInput(f"the request body nests arrays and objects {depth} deep; at "
                            f"most {MAX_JSON_DEPTH} are taken: nothing was changed")
    try:
        body = json.loads(text, parse_constant=_no_constant, parse_int=_json_int,
                          parse_float=_json_float)
    except _NotJson:
        raise UnusableInput("the request body holds NaN or Infinity, which JSON has not: "
                            "nothing was changed") from None
    except ValueError:
        return  # (not JSON: the view's parser says so)
    _refuse_too_large(body)
    found = next(_unusable(_texts(body)), None)
    if found is not None:
        where, character = found
        raise UnusableInput(_refusal(where or "the request body", character),
                            words=(REFUSAL_WORDS, {"character": character}))


def _refuse_too_large(body: Any) -> None:
    """Raise UnusableInput, naming where it is, for the first number of ``body`` no field
    takes."""
    where, number = next(((where, value) for where, value in _places(body, "")
                          if isinstance(value, _TooLarge)), ("", None))
    if number is None:
        return
    field = where or "the request body"
    raise UnusableInput(
        f"{field} holds a number too large ({number.length} characters): whole numbers in a "
        f"request go from {JSON_MIN} to {JSON_MAX}: nothing was changed",
        words=(TOO_LARGE_WORDS, {"length": number.length, "field": field, "low": JSON_MIN,
                                 "high": JSON_MAX}))


def plainly_usable(text: str) -> bool:
    """Whether a JSON body is surely one this check takes, as it stands (nearly every body,
    a move's among them): with no escape, its strings are its text's own characters, so no
    unusable character in the text means none in them; a constant needs its name in the text;
    it cannot nest deeper than it has brackets; and a number too large needs a long run of
    digits or a long exponent."""
    return ("\\" not in text and "NaN" not in text and "Infinity" not in text
            and text.count("[") + text.count("{") <= MAX_JSON_DEPTH
            and unusable_character(text) is None and _LONG_NUMBER.search(text) is None)


def _no_constant(name: str) -> Any:
    raise _NotJson(name)


def _refusal(where: str, found: str) -> str:
    return (f"{where} holds {found}, a character no text may hold (a control character other "
            "than tab and line breaks, or an unpaired surrogate): nothing was changed")


def _unusable(texts: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """``(where, U+XXXX)`` of each text holding an unusable character."""
    for where, text in texts:
        found = unusable_character(text)
        if found is not None:
            yield where, found


def _shown(key: str) -> str:
    """A key as a refusal names it (one that is itself odd is not repeated)."""
    return key if _SHOWN_KEY.fullmatch(key) else "?"


def _fields(items: Iterable[tuple[str, str]], kind: str) -> Iterator[tuple[str, str]]:
    for key, value in items:
        where = f"{kind} '{_shown(key)}'"
        yield where, key
        yield where, value


def _texts(body: Any) -> Iterator[tuple[str, str]]:
    """Every string of a parsed JSON value (keys too), with where it is (``seats[0].name``)."""
    return ((where, value) for where, value in _places(body, "") if isinstance(value, str))


def _places(value: Any, where: str) -> Iterator[tuple[str, Any]]:
    """Every key and every value that is no array or object, at any depth of a parsed JSON
    value, with where it is (``seats[0].name``)."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from _places(item, f"{where}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            inner = f"{where}.{_shown(key)}" if where else _shown(key)
            yield inner, key
            yield from _places(item, inner)
    else:
        yield where, value
