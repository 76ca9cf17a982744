"""A rematch: the next game at the same table, in one step.

The new game has the same game, variant, setup and settings, its name numbered (``Friday race
(2)``), and the same seats in the same order, each kept for the player who had it: a seat with
an address is that address's, a computer seat stays the computer's at its level. A seat asks
for the pieces it asked for at the start (nothing: drawn again). The new game is dealt from a
fresh secret, whatever the old one was dealt from.

**Asking.** Any seat of the finished game that a person played (it has an address) may ask; a
spectator may not. The one who asks has said yes: they take their own seat of the new game at
once. No invitation is made for anyone: every other person's seat is kept for their address,
and each of them is mailed one question, "play again?" (outbox kind ``rematch``, about their
seat of the old game: its link is the old game's signed link, ``/g/<token>/rematch``, a page
that asks first, since a GET changes nothing). Nobody is given another seat's credential.

**Saying yes** (:func:`join`): on the old game's page, on the rematch's page, from the mail's
page, with ``titanpost rematch GAME`` or the API, proved by the old seat's credential (its API
token, the browser's seat, the mail's signed link, the address signed in by mail). Each yes
carries the seat's share of the deal, drawn by the player's client after it was shown the new
game's commitment (docs/fairness.md); the asker's share comes just after the game is made (the
page sends it by itself, the CLI at once). The game starts by itself
(:meth:`~app.service.setup.SetupCommands.start_when_ready`) at the last person's yes, or, when
the other seats are all the computer's, at the asker's share of the deal.

**Saying no** (:func:`decline`) marks the seat declined (``seats.declined_at``); the rematch
then shows who declined and waits. Once nobody's answer is missing, any player who said yes
settles it (:func:`settle`): either the rematch starts with the computer (at the easy level)
in each declined seat, or it is cancelled (abandoned; those who had said yes are told by mail).
A player who declined may still say yes while the rematch waits. Nobody may hand a seat to the
computer while its player has not answered: a rematch waits for every answer.

A finished game has one rematch at most: ``games.rematch_of`` is unique, so that two seats
asking at the same moment make one game between them; whoever comes second (or asks again
later) is given the game that was made, and their ask counts as their yes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from sqlalchemy import func
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.core.i18n import N_
from app.core.models import FINISHED, OPEN, Game, Move, Seat
from app.features.live.feed import games_changed
from app.games import ruleset
from app.games.base import pieces_of_older
from app.mail.notify import REMATCH, enqueue_notice
from app.service import (
    COMPUTER_NAME,
    AnswerRecorder,
    Forbidden,
    GameEvent,
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
STILL_WAITING: Final = N_("the rematch still waits for an answer: {players}")
NOBODY_DECLINED: Final = N_("nobody has declined the rematch: it starts once everyone says yes")
SAY_YES_FIRST: Final = N_("only a player who said yes to the rematch may decide this")

YES, WAITING, DECLINED, COMPUTER = "yes", "waiting", "declined", "computer"
"""A seat's answer to the rematch (:func:`status`)."""


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


def status(service: GameService, uid: str) -> dict[str, Any] | None:
    """Where the rematch of finished game ``uid`` stands (None: it has none): ``game``, its
    ``name``, ``status`` and ``commitment``, ``seats`` (each ``position``, ``name``,
    ``answer``: yes, waiting, declined or computer, and ``shared``: whether its share of the
    deal is in), the names ``waiting`` for and ``declined``, and ``settle``: whether the
    players who said yes may now choose between the computer in the declined seats and
    cancelling."""
    with service.session() as s:
        made = rematch_of(s, find_game(s, uid))
        if made is None:
            return None
        seats = list(s.exec(select(Seat).where(Seat.game_id == made.id)
                            .order_by(col(Seat.position))).all())
    rows = [{"position": seat.position, "name": seat.player_name, "answer": _answer(seat),
             "shared": seat.contribution is not None} for seat in seats]
    waiting = [row["name"] for row in rows if row["answer"] == WAITING]
    declined = [row["name"] for row in rows if row["answer"] == DECLINED]
    return {"game": made.uid, "name": made.name, "status": made.status, "seats": rows,
            "commitment": made.dealing_commitment,
            "waiting": waiting, "declined": declined,
            "settle": made.status == OPEN and not waiting and bool(declined)}


def _answer(seat: Seat) -> str:
    if seat.is_bot:
        return COMPUTER
    if seat.accepted_at is not None:
        return YES
    return DECLINED if seat.declined_at is not None else WAITING


def waiting_seat(service: GameService, uid: str, position: int) -> dict[str, Any] | None:
    """The seat of the rematch of game ``uid`` that waits for the answer of the player of its
    seat ``position`` (kept for their address, not yet taken, the rematch not yet started;
    they may have said no, and may still say yes): ``{"game", "position", "commitment",
    "declined"}``; None when there is none."""
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
        return {"game": made.uid, "position": position, "commitment": made.dealing_commitment,
                "declined": new.declined_at is not None}


def rematch(service: GameService, uid: str, position: int, *,
            idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """The rematch of finished game ``uid``, asked for by its seat ``position``: made now
    (``made`` true; the asker's seat of it taken: its ``position``, ``api_token`` and the
    game's ``commitment``, with the ``creator_token``; ``asked``: the positions whose players
    are asked by mail), or the one made before (``made`` false)."""
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


def _made_uid(service: GameService, uid: str) -> str:
    """The id of the rematch of game ``uid`` (NotFound: none yet)."""
    with service.session() as s:
        made = rematch_of(s, find_game(s, uid))
    if made is None:
        raise NotFound(f"game {uid} has no rematch yet: ask for one", words=(NO_REMATCH, {}))
    return made.uid


def _email_of(service: GameService, uid: str, position: int) -> str:
    with service.session() as s:
        game = find_game(s, uid)
        seats = list(s.exec(select(Seat).where(Seat.game_id == game.id)).all())
    return _player_seat(uid, seats, position).email


def join(service: GameService, uid: str, position: int, *, contribution: str | None = None,
         idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """The player of seat ``position`` of finished game ``uid`` says yes: they take their own
    seat of its rematch, kept for their address (the caller proved that they play that seat:
    its API token, the browser's seat, the mail's link or the address signed in). Answers as an
    accepted invitation does (``game``, ``position``, ``api_token``, ``commitment``) with
    ``rematch_of`` and ``started``: whether this yes, the last one, started the rematch;
    ``contribution`` is the seat's share of the deal, drawn by its client."""
    email = _email_of(service, uid, position)
    made = _made_uid(service, uid)
    try:
        taken = service.take_reserved_seat(made, position, email, contribution=contribution,
                                           idempotency=_Answer(uid, idempotency))
    except Forbidden:
        raise Forbidden(f"the rematch of {uid} has no seat of {email}",
                        words=(NOT_IN_IT, {})) from None
    started = service.start_when_ready(made)
    games_changed(service, uid, made)  # (the pages of both show who said yes)
    return {**_as_joined(taken, uid), "started": started}


def decline(service: GameService, uid: str, position: int) -> dict[str, Any]:
    """The player of seat ``position`` of finished game ``uid`` says no to its rematch (their
    seat of it waits; see the module's documentation)."""
    email = _email_of(service, uid, position)
    made = _made_uid(service, uid)
    try:
        said = service.decline_reserved_seat(made, position, email)
    except Forbidden:
        raise Forbidden(f"the rematch of {uid} has no seat of {email}",
                        words=(NOT_IN_IT, {})) from None
    games_changed(service, uid, made)  # (the pages of both show who said no)
    return {**said, "rematch_of": uid}


def settle(service: GameService, uid: str, position: int, *, play: bool) -> dict[str, Any]:
    """A player who said yes to the rematch of game ``uid`` (their seat ``position``) decides,
    once every person has answered and someone said no: ``play`` starts it with the computer
    in the declined seats, else it is cancelled (abandoned)."""
    email = _email_of(service, uid, position)
    found = status(service, uid)
    if found is None:
        raise NotFound(f"game {uid} has no rematch yet: ask for one", words=(NO_REMATCH, {}))
    mine = next((row for row in found["seats"] if row["position"] == position), None)
    if found["status"] != OPEN:
        raise NotPlaying(f"the rematch of {uid} is {found['status']}",
                         words=(NOT_IN_IT, {}))
    if mine is None or mine["answer"] != YES:
        raise Forbidden(f"{email} has not said yes to the rematch of {uid}",
                        words=(SAY_YES_FIRST, {}))
    if found["waiting"]:
        players = ", ".join(found["waiting"])
        raise NotPlaying(f"the rematch still waits for an answer: {players}",
                         words=(STILL_WAITING, {"players": players}))
    if not found["declined"]:
        raise NotPlaying("nobody has declined the rematch", words=(NOBODY_DECLINED, {}))
    game = str(found["game"])
    if play:
        service.start(game, None, fill_with_bots=True)
    else:
        service.abandon(game, None)
    return {"game": game, "rematch_of": uid, "started": play, "cancelled": not play}


def _by_address(service: GameService, uid: str, email: str) -> int:
    """The seat of game ``uid`` the address ``email`` played whose seat of the rematch waits
    for it (else its first seat there; Forbidden: none)."""
    with service.session() as s:
        game = find_game(s, uid)
        positions = list(s.exec(select(Seat.position).where(
            Seat.game_id == game.id, Seat.email == email).order_by(col(Seat.position))).all())
    if not positions:
        raise Forbidden(f"{email} played no seat of game {uid}", words=(NOT_A_PLAYER, {}))
    waiting = [p for p in positions if waiting_seat(service, uid, p) is not None]
    return (waiting or positions)[0]


def join_as(service: GameService, uid: str, email: str, *, contribution: str | None = None,
            idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """:func:`join` for the address ``email`` signed in by mail: the first seat of game
    ``uid`` it played whose seat of the rematch waits for it."""
    return join(service, uid, _by_address(service, uid, email), contribution=contribution,
                idempotency=idempotency)


def decline_as(service: GameService, uid: str, email: str) -> dict[str, Any]:
    """:func:`decline` for the address ``email`` signed in by mail."""
    return decline(service, uid, _by_address(service, uid, email))


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
        created = service.create_game(**spec, owner_email=owner, seated=seated, kept=True,
                                      idempotency=_Answer(uid, idempotency, shape=_as_made))
    except IntegrityError:
        with service.session() as s:
            made = rematch_of(s, find_game(s, uid))
        if made is None:
            raise
        return _existing(service, uid, made.uid, idempotency)
    return _as_made(created, uid)


def _as_made(created: dict[str, Any], uid: str) -> dict[str, Any]:
    """The maker's answer: ``create_game``'s, with the positions of the players asked."""
    answer = {key: value for key, value in created.items() if key != "invitations"}
    return {**answer, "asked": list(created.get("asked", [])), "rematch_of": uid, "made": True}


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
            # (a forgotten player's seat is the computer's, under its own name)
            name = COMPUTER_NAME if seat.forgotten_at is not None else seat.player_name
            new_seats.append({"bot": True, "level": seat.bot_level, "name": name,
                              "pieces": pieces})
    return {"seats": new_seats, "variant": game.variant, "setup": dict(game.setup),
            "name": next_name(game.name), "settings": dict(game.settings),
            "rules_name": game.ruleset, "rematch_of": game.id}


# ---------------------------------------------------------------------- the question by mail


class AskByMail:
    """The game-service listener that mails the question: when a rematch is made, each person
    whose seat of it waits for them gets one ``rematch`` mail about their seat of the old game
    (its link opens the old game's rematch page, which asks first), in the same transaction."""

    def __init__(self, service: GameService) -> None:
        self.settings = service.settings

    def __call__(self, s: Session, event: GameEvent) -> None:
        if event.kind != "created" or event.game.rematch_of is None:
            return
        old = s.get(Game, event.game.rematch_of)
        if old is None:
            return
        asker = next((seat for seat in event.seats
                      if not seat.is_bot and seat.accepted_at is not None), None)
        olds = {seat.position: seat for seat in s.exec(
            select(Seat).where(Seat.game_id == old.id)).all()}
        head = int(s.exec(select(func.coalesce(func.max(Move.seq), 0))
                          .where(Move.game_id == old.id)).one())
        for seat in event.seats:
            before = olds.get(seat.position)
            if seat.is_bot or seat.accepted_at is not None or before is None \
                    or before.email != seat.email:
                continue
            enqueue_notice(s, self.settings, game=old, seat=before, kind=REMATCH, seq=head,
                           payload={"player": asker.player_name if asker else "",
                                    "rematch": event.game.uid, "name": event.game.name})


def install(service: GameService) -> AskByMail:
    """Add the rematch's mail to ``service``'s listeners (once) and return it."""
    return service.listener(AskByMail, lambda: AskByMail(service))


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
