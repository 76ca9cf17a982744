"""The move log's hash chain, computed without I/O: what the service writes with every entry, what
``titanpost admin verify`` checks in the database, and what ``titanpost verify-fair`` recomputes
on a player's machine from a published record (cli/fair.py, with app/features/fairness/records.py).

The chain starts at the *genesis hash*, SHA-256 of the game's initial state (which holds its
dealt deck, bag and the key of its random source, so nobody can compute it before the game is
over); each entry's hash is SHA-256 of the previous hash and the entry's fields in canonical
JSON. Nothing here imports the database or the web layers.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any, Final

PLAIN_KIND: Final = "move"
"""The kind of an engine move (``app.core.models.MOVE``): not hashed, so that entries written before
log entries had kinds keep their hash."""
PLAIN_ACTOR: Final = "player"
"""The seat's own player (``app.core.models.PLAYER``): not hashed, for the same reason."""
HEAD_LABEL: Final = b"titanpost log head v1\n"


def canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def timestamp(moment: datetime) -> str:
    """A stable text form of a stored time (SQLite gives naive UTC values back)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def genesis_hash(initial_state: dict[str, Any]) -> str:
    """Where the chain starts: SHA-256 of the game's initial state."""
    return hashlib.sha256(canonical(initial_state).encode()).hexdigest()


def move_hash(
    prev_hash: str,
    seq: int,
    seat: int | None,
    text: str,
    outcomes: Any,
    created_at: datetime,
    kind: str = PLAIN_KIND,
    actor: str = PLAIN_ACTOR,
) -> str:
    """The entry's link in the log's hash chain. The kind and the actor are hashed only when
    they are not the plain defaults, so entries written before they existed keep their hash."""
    fields: dict[str, Any] = {
        "seq": seq, "seat": seat, "input": text, "outcomes": outcomes, "at": timestamp(created_at)
    }
    if kind != PLAIN_KIND:
        fields["kind"] = kind
    if actor != PLAIN_ACTOR:
        fields["actor"] = actor
    return hashlib.sha256(f"{prev_hash}\n{canonical(fields)}".encode()).hexdigest()


def head_digest(head_hash: str) -> str:
    """What a running game shows of its log's newest hash: SHA-256 of it under a label of its
    own. A player's client keeps it, and once the game is over finds it again in the published
    chain (the log it was shown was not cut or rewritten since). The hash itself is not shown
    while the game runs: with two consecutive hashes and an entry's public fields, a hidden
    card or a sealed plan of that entry could be found by trying every possibility."""
    return hashlib.sha256(HEAD_LABEL + head_hash.encode()).hexdigest()
