"""A game's log replayed entry by entry from its initial state, rollbacks included: what
verification, the admin replay and the fairness check share. It knows the log's entry kinds and a
ruleset, and nothing of the service."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from app.core.models import MOVE, ROLLBACK
from app.games.base import Ruleset


def rollback_target(text: str, seq: int) -> int:
    """The entry a ``rollback N`` entry at ``seq`` goes back to (ValueError if malformed)."""
    parts = text.split()
    if len(parts) != 2 or parts[0] != ROLLBACK or not parts[1].isdigit():
        raise ValueError(f"'{text}' is not 'rollback N'")
    target = int(parts[1])
    if not 0 <= target < seq:
        raise ValueError(f"rollback at entry {seq} to entry {target}: only earlier entries")
    return target


class LogReplay:
    """A log replayed entry by entry from its initial state: moves are applied, notes are
    skipped, and a ``rollback N`` entry goes back to the state after entry N (kept for it: the
    entries that rollbacks name are known in advance, from ``entries``)."""

    def __init__(self, rules: Ruleset, initial: dict[str, Any],
                 entries: list[tuple[str, str]]) -> None:
        self.rules = rules
        self.state = rules.load(initial)
        self._wanted: set[int] = set()
        for index, (kind, text) in enumerate(entries, start=1):
            if kind == ROLLBACK:
                with suppress(ValueError):  # a bad one is reported when it is reached
                    self._wanted.add(rollback_target(text, index))
        self._kept: dict[int, dict[str, Any]] = {}
        if 0 in self._wanted:
            self._kept[0] = rules.dump(self.state)

    def step(self, seq: int, kind: str, text: str) -> list[list[str]] | None:
        """Apply entry ``seq``; the random outcomes of a move, None for other entries.
        Raises MoveRejected for a move that does not apply, ValueError for a bad rollback."""
        produced = None
        if kind == MOVE:
            produced = self.rules.apply(self.state, text)
        elif kind == ROLLBACK:
            target = rollback_target(text, seq)
            self.state = self.rules.load(self._kept[target])
        if seq in self._wanted:
            self._kept[seq] = self.rules.dump(self.state)
        return produced

