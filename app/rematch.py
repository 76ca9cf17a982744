"""A rematch: one click after a game's end makes the next game at the same table.

The new game has the same game (Titan Race or The Great Race), variant, setup, settings and
name, and the same seats in the same order: each seat with an address is invited afresh to
that address (an invitation mail through the outbox, as any new game's), in the language and
with the mail settings it had; each computer seat stays the computer's. A seat asks for the
pieces it asked for at the start (nothing: drawn again). The new game is dealt from a fresh
secret, whatever the old one was dealt from.

Any seat of the finished game that a person played (it has an address) may ask; a spectator
may not. The one who makes it holds the new game's creator token (it starts the game once the
players are in) and is its owner. A finished game has one rematch at most: ``games.rematch_of``
is unique, so that two seats asking at the same moment make one game between them; whoever
comes second (or asks again later) is given the game that was made.
"""

from __future__ import annotations

from typing import Any, Final

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from .games import ruleset
from .i18n import N_
from .models import FINISHED, Game, Seat
from .service import AnswerRecorder, Forbidden, GameService, NotPlaying, find_game
from .service.records import record_answer

NOT_OVER: Final = N_("a rematch follows a finished game: this one is not over")
NOT_A_PLAYER: Final = N_("only the game's players may ask for a rematch")


def rematch_of(s: Session, game: Game) -> Game | None:
    """The rematch made of ``game``, if any."""
    return s.exec(select(Game).where(Game.rematch_of == game.id)).first()


def links_of(service: GameService, uid: str) -> dict[str, str | None]:
    """The game ``uid`` follows (``follows``: its id) and its rematch (``rematch``), if any."""
    with service.session() as s:
        game = find_game(s, uid)
        made = rematch_of(s, game)
        earlier = s.get(Game, game.rematch_of) if game.rematch_of is not None else None
        return {"follows": earlier.uid if earlier else None,
                "rematch": made.uid if made else None}


def is_player(service: GameService, uid: str, position: int) -> bool:
    """Whether seat ``position`` of game ``uid`` is a person's (it has an address): the seats
    that may ask for a rematch."""
    with service.session() as s:
        game = find_game(s, uid)
        email = s.exec(select(Seat.email).where(Seat.game_id == game.id,
                                                Seat.position == position)).first()
        return bool(email)


def rematch(service: GameService, uid: str, position: int, *,
            idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """The rematch of finished game ``uid``, asked for by its seat ``position``: made now
    (``made`` true, with the new game's ``creator_token`` and ``invitations``), or the one
    made before (``made`` false)."""
    with service.session() as s:
        game = find_game(s, uid)
        seats = list(s.exec(select(Seat).where(Seat.game_id == game.id)
                            .order_by(col(Seat.position))).all())
        asking = next((seat for seat in seats if seat.position == position), None)
        if asking is None or not asking.email:
            raise Forbidden(f"seat {position + 1} of game {uid} is not a player's: only the "
                            "game's players may ask for a rematch", words=(NOT_A_PLAYER, {}))
        if game.status != FINISHED:
            raise NotPlaying(f"game {uid} is {game.status}: a rematch follows a finished game",
                             words=(NOT_OVER, {}))
        made = rematch_of(s, game)
        if made is None:
            spec = _spec(game, seats)
    if made is not None:
        return _existing(service, uid, made.uid, idempotency)
    return make(service, uid, spec, owner=asking.email, idempotency=idempotency)


def make(service: GameService, uid: str, spec: dict[str, Any], *, owner: str,
         idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """Create the rematch ``spec`` describes (see :func:`_spec`); when another request made
    one first (the unique ``rematch_of`` refuses this one), the answer names that one."""
    made_here = _Made(uid, idempotency) if idempotency is not None else None
    try:
        created = service.create_game(**spec, owner_email=owner, idempotency=made_here)
    except IntegrityError:
        with service.session() as s:
            made = rematch_of(s, find_game(s, uid))
        if made is None:
            raise
        return _existing(service, uid, made.uid, idempotency)
    return _as_made(created, uid)


def _as_made(created: dict[str, Any], uid: str) -> dict[str, Any]:
    return {**created, "rematch_of": uid, "made": True}


class _Made:
    """Records the answer of the request that made the rematch as that request answers it
    (``create_game``'s answer, and that it is the rematch of ``uid``), in the new game's
    transaction."""

    def __init__(self, uid: str, recorder: AnswerRecorder) -> None:
        self.uid = uid
        self.recorder = recorder

    def record(self, s: Session, result: dict[str, Any]) -> None:
        self.recorder.record(s, _as_made(result, self.uid))


def _existing(service: GameService, uid: str, made: str,
              idempotency: AnswerRecorder | None) -> dict[str, Any]:
    answer = {"game": made, "rematch_of": uid, "made": False}
    if idempotency is not None:
        with service.session(write=True) as s:
            record_answer(s, idempotency, answer)
            s.commit()
    return answer


def _spec(game: Game, seats: list[Seat]) -> dict[str, Any]:
    """The ``create_game`` arguments of ``game``'s rematch."""
    rules = ruleset(game.ruleset)
    asked = {entry.get("position"): entry for entry in game.seat_setups or []
             if isinstance(entry, dict)}
    new_seats: list[dict[str, Any]] = []
    for seat in seats:
        entry = asked.get(seat.position, {})
        pieces = rules.pieces_from_fields(list(entry.get("titans") or []), entry.get("team"))
        if seat.email:
            new_seats.append({"email": seat.email, "name": seat.player_name,
                              "language": seat.language, "notify": dict(seat.notify),
                              "pieces": pieces})
        else:
            new_seats.append({"bot": True, "level": seat.bot_level, "name": seat.player_name,
                              "pieces": pieces})
    return {"seats": new_seats, "variant": game.variant, "setup": dict(game.setup),
            "name": game.name, "settings": dict(game.settings), "rules_name": game.ruleset,
            "rematch_of": game.id}
