"""The game log as the pages show it."""

from __future__ import annotations

from typing import Any

from app.core.i18n import N_
from app.core.readertime import reader_time
from app.web.pages.common import pause_words
from app.web.pages.gamewords import describe_input, ui
from app.web.pages.language import (
    lang,
    tr,
)

# ---------------------------------------------------------------------------- log


def outcome_items(outcomes: list[Any]) -> list[dict[str, Any]]:
    """A move's random outcomes for display, worded by the game (dice shown as colours)."""
    items: list[dict[str, Any]] = []
    for part in outcomes or []:
        for outcome in part if isinstance(part, list) else [part]:
            if not str(outcome).split():
                continue
            label, dice = ui().outcome_words(str(outcome), lang())
            items.append({"label": label, "dice": dice})
    return items


ACTOR_WORDS = {
    "timeout": N_("time ran out: the computer chose"),
    "away": N_("the computer played while the player was away"),
    "owner": N_("by the owner"),
    "admin": N_("by an admin"),
    "clock": N_("by the clock"),
}
"""How a log entry not made by its seat's player (nor by a computer seat) is marked."""
HANDOVER_WORDS = {
    "computer": N_("The computer plays this seat from now on"),
    "invite": N_("The computer plays this seat until a new player joins"),
    "player": N_("A new player takes over this seat"),
}
"""A handover note in the log in words (English message ids; shown translated)."""
HANDED_OVER = N_("The seat was handed over")


def note_label(kind: str, text: str, seats: list[dict[str, Any]]) -> str:
    """A note in the log (a pause, a resignation, a handover) in plain words."""
    rest = text.split(" ", 1)[1] if " " in text else ""
    if kind == "pause":
        return tr("The game was paused: {reason}", reason=pause_words(rest, seats))
    if kind == "resume":
        return tr("The game was resumed")
    if kind == "resign":
        return tr("Resigned: the computer plays on")
    if kind == "abandon":
        return tr("The game was abandoned")
    if kind == "handover":
        return tr(HANDOVER_WORDS.get(rest, HANDED_OVER))
    if kind == "rollback" and rest.isdigit():  # an admin's rollback, or an agreed takeback
        return tr("Taken back to the position after move {to}", to=rest)
    return text


def log_rows(moves: list[dict[str, Any]], seats: list[dict[str, Any]],
             zone: str | None = None) -> list[dict[str, Any]]:
    """The log's rows for a page, their times in the reader's time zone ``zone`` (None: UTC)."""
    names = {s["position"]: s["name"] for s in seats}
    only_piece = {s["position"]: s["pieces"][0] for s in seats if len(s["pieces"]) == 1}
    rows = []
    for move in moves:
        seat = move.get("seat")
        kind = str(move.get("kind") or "move")
        actor = str(move.get("actor") or "player")
        rows.append(
            {
                "seq": move["seq"],
                "who": names.get(seat, "—") if seat is not None else "—",
                "piece": only_piece.get(seat),
                "seat": seat,
                "input": move["input"],
                "kind": kind,
                "actor": actor,
                "by": tr(ACTOR_WORDS[actor]) if actor in ACTOR_WORDS else None,
                "label": describe_input(
                    move["input"], ui().pending_for(only_piece.get(seat))) if kind == "move"
                else note_label(kind, move["input"], seats),
                "outcomes": outcome_items(move.get("outcomes") or []),
                "at": reader_time(move.get("created_at"), zone),
            }
        )
    return rows
