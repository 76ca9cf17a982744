"""The clock's pause reason: a key stored with a paused game and compared by the service, and
the words a person reads for it (no import beyond the standard library: the player's commands
use it too)."""

from __future__ import annotations

import re
from collections.abc import Mapping


def pause_reason_timeout(position: int) -> str:
    """The reason a game paused on seat ``position``'s missed deadline (its answer resumes).

    A key stored with the game and compared, worded as it always was (by the 0-based
    position): :func:`pause_said` is what a person reads."""
    return f"waiting for seat {position}, whose time ran out"


def pause_said(reason: str | None, names: Mapping[int, str]) -> str:
    """A game's pause reason as a person reads it: the clock's own names the late player
    (``names``: by position) and their seat numbered from 1; any other is the owner's."""
    if not reason:
        return "by its owner"
    timeout = _TIMEOUT_PAUSE.fullmatch(reason)
    if timeout is None:
        return reason
    position = int(timeout[1])
    name = names.get(position)
    who = f"{name} (seat {position + 1})" if name else f"seat {position + 1}"
    return f"waiting for {who}, whose time ran out"


_TIMEOUT_PAUSE = re.compile(re.escape(pause_reason_timeout(0)).replace("0", "([0-9]+)", 1))
