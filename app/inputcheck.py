"""Every request's text is checked once, before anything else reads it (see app/textrules.py).

A JSON body (every string and key at any depth), a query string and a form (every field name
and value) may hold no character that cannot be stored or sent: a control character other than
tab and the line breaks, or an unpaired surrogate (``"\\udc00"`` is valid JSON, yet no database
stores it and no mail carries it). A JSON body may not nest arrays and objects deeper than
:data:`~app.textrules.MAX_JSON_DEPTH` (a body nested a thousand deep would make the parser
recurse until it fails). Such a request is refused with 400 before its credentials, its CSRF
token or the rate limits are looked at, so nothing is changed: the API answers JSON in English,
a page answers its error page in the page's language.

The request path is left to the views, which check the ids in it (a game id is 32 hex
digits); a field's own rules (a name on one line, a chat message's length) are the service's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any, Final

from flask import request

from .i18n import N_
from .service import BadRequest
from .textrules import MAX_JSON_DEPTH, json_depth, unusable_character

_SHOWN_KEY: Final = re.compile(r"[A-Za-z0-9_.-]{1,40}")
REFUSAL_WORDS: Final = N_("This request holds a character that cannot be used ({character}: a "
                          "control character or an unpaired surrogate). Nothing was changed: "
                          "remove it and try again.")
"""The refusal as a page shows it (in the page's language)."""


class UnusableInput(BadRequest):
    """A request refused by this check (its own class: a page without error pages of its
    own, such as a signed link's, answers it with the error page, not JSON)."""


class _NotJson(ValueError):
    """NaN or Infinity, which Python's parser takes and JSON does not have."""


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
        body = json.loads(text, parse_constant=_no_constant)
    except _NotJson:
        raise UnusableInput("the request body holds NaN or Infinity, which JSON has not: "
                            "nothing was changed") from None
    except ValueError:
        return  # (not JSON: the view's parser says so)
    found = next(_unusable(_strings(body, "")), None)
    if found is not None:
        where, character = found
        raise UnusableInput(_refusal(where or "the request body", character),
                            words=(REFUSAL_WORDS, {"character": character}))


def plainly_usable(text: str) -> bool:
    """Whether a JSON body is surely one this check takes, as it stands (nearly every body,
    a move's among them): with no escape, its strings are its text's own characters, so no
    unusable character in the text means none in them; a constant needs its name in the text;
    and it cannot nest deeper than it has brackets."""
    return ("\\" not in text and "NaN" not in text and "Infinity" not in text
            and text.count("[") + text.count("{") <= MAX_JSON_DEPTH
            and unusable_character(text) is None)


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


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string of a parsed JSON value (keys too), with where it is (``seats[0].name``)."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            inner = f"{where}.{_shown(key)}" if where else _shown(key)
            yield inner, key
            yield from _strings(item, inner)
