"""The places of many finished games at once, from their final states.

A table of hundreds of games would read each game as a command does (:meth:`GameService.load`:
a few statements a game). Here the final states of all of them are rebuilt from four
statements: the games' genesis, their latest snapshots, the log entries after those, and the
seats' pieces; each state then gives its places by the game's own rules, exactly as
:meth:`app.service.records.Loaded.result` does (the game page, the game-over mail and the API
show those). A game whose log holds a rollback after its latest snapshot is left to
:meth:`GameService.load`, which knows how to rebuild it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, func
from sqlmodel import Session, col, select

from app.core.models import MOVE, ROLLBACK, Game, Move, Seat, Snapshot
from app.games import ruleset
from app.service import GameService

Places = dict[int, int | None]
"""A game's place by seat position (None: the rules gave the seat none)."""


def from_result(result: dict[str, Any] | None) -> Places:
    """The places of a finished game's :meth:`~app.service.records.Loaded.result`."""
    return {int(entry["position"]): entry.get("place") for entry in (result or {}).get(
        "places", [])}


def final_places(service: GameService, s: Session, games: Sequence[tuple[int, str]]
                 ) -> dict[int, Places]:
    """The places of each finished game of ``games`` ((id, uid) pairs), by game id."""
    ids = [game_id for game_id, _ in games]
    if not ids:
        return {}
    genesis = {row[0]: (row[1], row[2]) for row in s.exec(
        select(Game.id, Game.ruleset, Game.initial_state).where(col(Game.id).in_(ids))).all()}
    newest = (select(Snapshot.game_id, func.max(Snapshot.seq).label("seq"))
              .where(col(Snapshot.game_id).in_(ids)).group_by(col(Snapshot.game_id))
              .subquery())
    snaps = {row[0]: (row[1], row[2]) for row in s.exec(
        select(Snapshot.game_id, Snapshot.seq, Snapshot.state).join(
            newest, and_(col(Snapshot.game_id) == newest.c.game_id,
                         col(Snapshot.seq) == newest.c.seq))).all()}
    entries: dict[int, list[tuple[int, str, str]]] = {game_id: [] for game_id in ids}
    for game_id, seq, kind, text in s.exec(
            select(Move.game_id, Move.seq, Move.kind, Move.input)
            .outerjoin(newest, col(Move.game_id) == newest.c.game_id)
            .where(col(Move.game_id).in_(ids),
                   col(Move.seq) > func.coalesce(newest.c.seq, 0))
            .order_by(col(Move.game_id), col(Move.seq))).all():
        entries[game_id].append((seq, kind, text))
    pieces: dict[int, dict[int, Any]] = {game_id: {} for game_id in ids}
    for game_id, position, held in s.exec(
            select(Seat.game_id, Seat.position, Seat.pieces)
            .where(col(Seat.game_id).in_(ids))).all():
        pieces[game_id][position] = held
    found = {}
    for game_id, uid in games:
        name, initial = genesis[game_id]
        if initial is None or any(kind == ROLLBACK for _, kind, _ in entries[game_id]):
            found[game_id] = from_result(service.load(s, uid).result())
            continue
        found[game_id] = _placed(name, snaps.get(game_id, (0, initial))[1], entries[game_id],
                                 pieces[game_id])
    return found


def _placed(name: str, start: Any, entries: list[tuple[int, str, str]],
            held: dict[int, Any]) -> Places:
    """The places of a game of ruleset ``name`` from state ``start`` and the entries after."""
    rules = ruleset(name)
    state = rules.load(start)
    for _, kind, text in entries:
        if kind == MOVE:
            rules.apply(state, text)
    names = {position: rules.piece_names(pieces) for position, pieces in held.items()}
    return {placing.position: placing.place for placing in rules.placings(state, names)
            if placing.position in names}
