"""A rematch: one click after a game's end makes the next game at the same table.

The new game has the same game, variant, setup and settings, its name numbered (``Friday race
(2)``), and the same seats in the same order, each kept for the player who had it: a seat with
an address is that address's, a computer seat stays the computer's (see
:meth:`app.service.seats.SeatCommands.invite`: its creator can invite a seat again only to
its own address, by mail). A seat asks for the pieces it asked for at the start (nothing: drawn
again). The new game is dealt from a fresh secret, whatever the old one was dealt from.

Any seat of the finished game that a person played (it has an address) may ask; a spectator
may not. The one who asks takes their own seat of the new game at once (no invitation) and
holds its creator token (it starts the game once the players are in) and is its owner; its
share of the deal is given afterwards by its client, once it has seen the commitment
(:meth:`~app.service.seats.SeatCommands.contribute`; the server draws one at the start for a
seat that gave none). Every other player is invited to their own seat by mail, in the language
and with the mail settings they had, and may instead take it straight from the old game
(:func:`join`): its page, the CLI or the API, proving who they are with the old seat's
credential (its API token, the browser's seat, the address signed in by mail). Nobody is
given another seat's invitation: not the maker, not anyone asking later.

A finished game has one rematch at most: ``games.rematch_of`` is unique, so that two seats
asking at the same moment make one game between them; whoever comes second (or asks again
later) is given the game that was made.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.core.i18n import N_
from app.core.models import FINISHED, OPEN, Game, Seat
from app.games import ruleset
from app.games.base import pieces_of_older
from app.service import (
    AnswerRecorder,
    Forbidden,
    GameService,
    NotFound,
    NotPlaying,
    find_game,
)
from app.service.records import record_answer

NOT_OVER: Final = N_("a rematch follows a finished game: this one is not over")
NOT_A_PLAYER: Final = N_("only the game's players may ask for a rematch")
NO_REMATCH: Final = N_("this game has no rematch yet: ask for one")
NOT_IN_IT: Final = N_("the rematch has no seat of yours (it may have started without you)")


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


def waiting_seat(service: GameService, uid: str, position: int) -> dict[str, Any] | None:
    """The seat of the rematch of game ``uid`` that waits for the player of its seat
    ``position`` (kept for their address, not yet taken, the rematch not yet started):
    ``{"game", "position", "commitment"}``; None when there is none."""
    with service.session() as s:
        game = find_game(s, uid)
        made = rematch_of(s, game)
        if made is None or made.status != OPEN:
            return None
        old, new = (s.exec(select(Seat).where(Seat.game_id == game_id,
                                             Seat.position == position)).first()
                    for game_id in (game.id, made.id))
        if old is None or new is None or not old.email or new.is_bot or new.email != old.email \
                or new.accepted_at is not None:
            return None
        return {"game": made.uid, "position": position, "commitment": made.dealing_commitment}


def rematch(service: GameService, uid: str, position: int, *,
            idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """The rematch of finished game ``uid``, asked for by its seat ``position``: made now
    (``made`` true; the asker's seat of it taken: its ``position``, ``api_token`` and the
    game's ``commitment``, with the ``creator_token``; ``invited``: the positions invited by
    mail), or the one made before (``made`` false)."""
    with service.session() as s:
        game = find_game(s, uid)
        seats = list(s.exec(select(Seat).where(Seat.game_id == game.id)
                            .order_by(col(Seat.position))).all())
        asking = _player_seat(uid, seats, position)
        if game.status != FINISHED:
            raise NotPlaying(f"game {uid} is {game.status}: a rematch follows a finished game",
                             words=(NOT_OVER, {}))
        made = rematch_of(s, game)
        if made is None:
            spec = _spec(game, seats)
    if made is not None:
        return _existing(service, uid, made.uid, idempotency)
    return make(service, uid, spec, owner=asking.email, seated=position,
                idempotency=idempotency)


def join(service: GameService, uid: str, position: int, *, contribution: str | None = None,
         idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """The player of seat ``position`` of finished game ``uid`` takes their own seat of its
    rematch, kept for their address (the caller proved that they play that seat: its API
    token, the browser's seat or the address signed in). Answers as an accepted invitation
    does (``game``, ``position``, ``api_token``, ``commitment``) with ``rematch_of``;
    ``contribution`` is the seat's share of the deal, drawn by its client."""
    with service.session() as s:
        game = find_game(s, uid)
        seats = list(s.exec(select(Seat).where(Seat.game_id == game.id)).all())
        email = _player_seat(uid, seats, position).email
        made = rematch_of(s, game)
    if made is None:
        raise NotFound(f"game {uid} has no rematch yet: ask for one", words=(NO_REMATCH, {}))
    try:
        taken = service.take_reserved_seat(made.uid, position, email, contribution=contribution,
                                           idempotency=_Answer(uid, idempotency))
    except Forbidden:
        raise Forbidden(f"the rematch of {uid} has no seat of {email}",
                        words=(NOT_IN_IT, {})) from None
    return _as_joined(taken, uid)


def join_as(service: GameService, uid: str, email: str, *, contribution: str | None = None,
            idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """:func:`join` for the address ``email`` signed in by mail: the first seat of game
    ``uid`` it played whose seat of the rematch waits for it."""
    with service.session() as s:
        game = find_game(s, uid)
        positions = list(s.exec(select(Seat.position).where(
            Seat.game_id == game.id, Seat.email == email).order_by(col(Seat.position))).all())
    if not positions:
        raise Forbidden(f"{email} played no seat of game {uid}", words=(NOT_A_PLAYER, {}))
    waiting = [p for p in positions if waiting_seat(service, uid, p) is not None]
    return join(service, uid, (waiting or positions)[0], contribution=contribution,
                idempotency=idempotency)


def _player_seat(uid: str, seats: list[Seat], position: int) -> Seat:
    """Seat ``position`` of game ``uid``, when a person played it (else Forbidden)."""
    asking = next((seat for seat in seats if seat.position == position), None)
    if asking is None or not asking.email:
        raise Forbidden(f"seat {position + 1} of game {uid} is not a player's: only the "
                        "game's players may ask for a rematch", words=(NOT_A_PLAYER, {}))
    return asking


def make(service: GameService, uid: str, spec: dict[str, Any], *, owner: str,
         seated: int | None = None,
         idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """Create the rematch ``spec`` describes (see :func:`_spec`), seat ``seated`` taken by its
    maker; when another request made one first (the unique ``rematch_of`` refuses this one),
    the answer names that one."""
    try:
        created = service.create_game(**spec, owner_email=owner, seated=seated,
                                      idempotency=_Answer(uid, idempotency, shape=_as_made))
    except IntegrityError:
        with service.session() as s:
            made = rematch_of(s, find_game(s, uid))
        if made is None:
            raise
        return _existing(service, uid, made.uid, idempotency)
    return _as_made(created, uid)


def _as_made(created: dict[str, Any], uid: str) -> dict[str, Any]:
    """The maker's answer: ``create_game``'s without the other seats' invitations (they go
    to each player's own address by mail, and to nobody else)."""
    answer = {key: value for key, value in created.items() if key != "invitations"}
    invited = [int(invitation["position"]) for invitation in created.get("invitations", [])]
    return {**answer, "invited": invited, "rematch_of": uid, "made": True}


def _as_joined(taken: dict[str, Any], uid: str) -> dict[str, Any]:
    return {**taken, "rematch_of": uid}


class _Answer:
    """Records a rematch request's answer as that request answers it (``shape`` of the
    service's answer and the old game ``uid``), in the service's own transaction."""

    def __init__(self, uid: str, recorder: AnswerRecorder | None,
                 shape: Callable[[dict[str, Any], str], dict[str, Any]] = _as_joined) -> None:
        self.uid = uid
        self.recorder = recorder
        self.shape = shape

    def record(self, s: Session, result: dict[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder.record(s, self.shape(result, self.uid))


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
        pieces = pieces_of_older(rules, entry)
        if seat.email:
            new_seats.append({"email": seat.email, "name": seat.player_name,
                              "language": seat.language, "notify": dict(seat.notify),
                              "pieces": pieces})
        else:
            new_seats.append({"bot": True, "level": seat.bot_level, "name": seat.player_name,
                              "pieces": pieces})
    return {"seats": new_seats, "variant": game.variant, "setup": dict(game.setup),
            "name": next_name(game.name), "settings": dict(game.settings),
            "rules_name": game.ruleset, "rematch_of": game.id}


NUMBERED = re.compile(r"^(?P<name>.*) \((?P<number>[1-9][0-9]{0,5})\)$")
NAME_LENGTH = 200
"""The longest game name (``games.name``)."""


def next_name(name: str) -> str:
    """A rematch's name: ``Friday race (2)`` after ``Friday race``, ``(3)`` after ``(2)``, so
    that each evening's game has a name of its own; an unnamed game's rematch stays unnamed."""
    if not name.strip():
        return name
    found = NUMBERED.match(name)
    base, number = (found["name"], int(found["number"]) + 1) if found else (name, 2)
    suffix = f" ({number})"
    return base[:NAME_LENGTH - len(suffix)] + suffix
