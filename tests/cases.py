"""Many refusals tried on one site: each case is checked in turn and every failing case named.

A refusal changes nothing (the tests assert it), so the cases of a table cannot disturb each
other, and one app and database can serve them all instead of one set-up per case.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def each_case(cases: Iterable[tuple[str, tuple[Any, ...]]],
              check: Callable[..., None]) -> None:
    """``check(*args)`` for each ``(label, args)`` of ``cases``; fails listing every label whose
    check failed, with its message."""
    failed = []
    for label, args in cases:
        try:
            check(*args)
        except AssertionError as exc:
            failed.append(f"{label}: {exc}")
    assert not failed, "\n".join(failed)


def labelled(rows: Iterable[tuple[Any, ...]]) -> list[tuple[str, tuple[Any, ...]]]:
    """Table rows as cases labelled by their first value's text."""
    return [(str(row[0])[:80], row) for row in rows]
