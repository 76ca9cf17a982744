"""Whole numbers a request gives, held to what the database's columns hold.

Every whole-number column of the tables is an INTEGER: 32 bits on PostgreSQL (from -2**31 to
2**31 - 1), 64 on SQLite (the seed alone is a BIGINT). A number beyond a column's range in a
query is refused by the database itself (PostgreSQL: "integer out of range"; SQLite's driver:
"Python int too large"), an error the app would answer with 500, and the same request would be
answered one way on SQLite and another on PostgreSQL. So a number a request gives is held to
:data:`COLUMN_MIN`..:data:`COLUMN_MAX` where it is read, by one guard for each kind of input:

* in the path, the app's ``int`` URL converter (:class:`app.web.routing.ColumnIntConverter`):
  beyond the range the address names nothing, a 404 as for an id that names no row;
* a query parameter or a JSON field that a request schema reads,
  :class:`app.web.api.schemas.ColumnInteger`: 400, the field named;
* a query, JSON or form field that a view reads by hand, :func:`app.web.inputcheck.whole_number`:
  400 naming the field (in the reader's language too);
* the seat and decision a link's token names before its signature is checked
  (:func:`app.web.linktokens.peek`): a damaged link;
* anywhere in a JSON body, a number wider than 64 bits (beyond :data:`JSON_MIN`..
  :data:`JSON_MAX`, such as one of 5,000 digits, which Python's parser would not even read):
  refused by app/web/inputcheck.py before anything reads the body.

This module imports nothing, so that the link tokens (read by commands that load no server) can
use it.
"""

from __future__ import annotations

import re
from typing import Final

COLUMN_MIN: Final = -(2**31)
COLUMN_MAX: Final = 2**31 - 1
"""The range of an INTEGER column on PostgreSQL (SQLite's hold more: the app takes what both
hold)."""

COLUMN_DIGITS: Final = len(str(COLUMN_MAX))
"""The digits of the largest number a column holds (10): a number of more is out of range."""

JSON_MIN: Final = -(2**63)
JSON_MAX: Final = 2**64 - 1
"""The widest whole numbers a JSON body may hold anywhere: 64 bits, signed or not (a BIGINT
column's, as the seed's, and an exported game's random state, an unsigned 64-bit number).
Wider ones are refused before the body is read (app/web/inputcheck.py)."""

_WHOLE: Final = re.compile(r"[+-]?[0-9]+")


def in_column(value: object) -> bool:
    """Whether ``value`` is a whole number (an int, not a bool) a column holds."""
    return type(value) is int and COLUMN_MIN <= value <= COLUMN_MAX


def read_whole(value: object) -> int | None:
    """The whole number ``value`` is, an int (not a bool) or the text of one (ASCII digits,
    a sign and blanks around allowed), when a column holds it; else None."""
    if isinstance(value, str):
        text = value.strip()
        if not _WHOLE.fullmatch(text) or len(text.lstrip("+-0")) > COLUMN_DIGITS:
            return None
        value = int(text)
    return value if type(value) is int and COLUMN_MIN <= value <= COLUMN_MAX else None
