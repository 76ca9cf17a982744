"""A game's seats filled and given: an invitation (re)issued and accepted, a rematch's seat taken
by its own player, a seat's share of the deal given once it was taken, and a running game's seat
given to someone new or to the computer."""

from __future__ import annotations

import secrets
from typing import Any, Final

from sqlalchemy import update
from sqlmodel import Session, col, select

from app.core.i18n import N_
from app.core.models import (
    ACTIVE,
    ADMIN,
    HANDOVER,
    OPEN,
    OWNER,
    PLAYER,
    ApiToken,
    Game,
    Seat,
    table_of,
    utcnow,
)
from app.features.fairness import dealing

from .errors import (
    PLAYER_NAME,
    BadRequest,
    Forbidden,
    NotFound,
    NotPlaying,
    checked_line,
    is_address,
    refuse_unseen_in_address,
)
from .records import AnswerRecorder, GameEvent, new_token, record_answer, token_hash
from .setup import checked_bot_level, new_api_token, server_contribution_for
from .writing import LogWriting

RESERVED_ADDRESS: Final = N_("seat {number} of a rematch is its own player's: it is invited "
                             "again only to {email}, by mail")
RESERVED_COMPUTER: Final = N_("seat {number} of a rematch is the computer's, as it was in the "
                              "game before")
SHARE_GIVEN: Final = N_("seat {number} has given its share of the deal already")
DEAL_MADE: Final = N_("the game has started: its deal is made")
SEAT_TAKEN: Final = N_("seat {number} is taken already")
NOT_RESERVED: Final = N_("seat {number} of this game is not kept for {email}")
"""Refusals of a rematch's seats and of a seat's share of the deal
(app/features/rematch/rematches.py)."""
NOT_ADDRESS: Final = N_("'{email}' is not an e-mail address")
"""An address refused for an invitation (an open seat's, or a running game's seat given to
someone new)."""


class SeatCommands(LogWriting):
    """Inviting, accepting, taking a kept seat, giving a share of the deal, and replacing a
    seat."""

    def accept(self, invite_token: str, *, name: str | None = None,
               contribution: str | None = None,
               idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """A player takes their seat by the invitation; returns their API token (shown once).

        ``contribution`` is the randomness the player's browser or CLI drew for the deal; when
        none is given the server derives the seat's own from the game's secret, fixed by the
        commitment (see app/features/fairness/dealing.py)."""
        contribution = _contribution(contribution)
        name = checked_line(name, PLAYER_NAME) if name else None
        with self.session(write=True) as s:
            seat = s.exec(
                select(Seat).where(Seat.invite_token_hash == token_hash(invite_token))
            ).first()
            if seat is None:
                raise NotFound("this invitation is unknown or was already used")
            game = s.get(Game, seat.game_id)
            assert game is not None
            if game.status == ACTIVE and seat.is_bot:
                return self._take_over(s, game, seat, name, idempotency)
            if game.status != OPEN:
                raise NotPlaying(f"game {game.uid} has already {game.status}")
            seat.accepted_at = utcnow()
            seat.invite_token_hash = None
            seat.contribution = contribution or server_contribution_for(game, seat.position)
            if name:
                seat.player_name = name
            token = new_api_token(s, seat, "invitation")
            s.add(seat)
            accepted = {"game": game.uid, "position": seat.position, "api_token": token,
                        "commitment": game.dealing_commitment}
            record_answer(s, idempotency, accepted)
            s.commit()
            return accepted

    def take_reserved_seat(self, uid: str, position: int, email: str, *,
                           contribution: str | None = None,
                           idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """The player of ``email`` takes seat ``position`` of open game ``uid``, kept for that
        address, without its invitation (the caller proved who they are:
        app/features/rematch/rematches.py); its mailed invitation is used up. Returns the seat's API
        token (shown once), as :meth:`accept` does; ``contribution`` as there."""
        given = _contribution(contribution)
        with self.session(write=True) as s:
            game, seat = self._reserved(s, uid, position, email)
            seats = table_of(Seat)
            taken = s.execute(update(seats).where(seats.c.id == seat.id,
                                                  seats.c.accepted_at.is_(None))
                              .values(accepted_at=utcnow(), invite_token_hash=None,
                                      declined_at=None,
                                      contribution=given or server_contribution_for(game,
                                                                                 position)))
            if int(getattr(taken, "rowcount", 0) or 0) != 1:
                s.rollback()
                raise NotPlaying(f"seat {position + 1} of game {uid} is taken already",
                                 words=(SEAT_TAKEN, {"number": position + 1}))
            taker = {"game": uid, "position": position,
                     "api_token": new_api_token(s, seat, "rematch"),
                     "commitment": game.dealing_commitment}
            record_answer(s, idempotency, taker)
            s.commit()
            return taker

    def _reserved(self, s: Session, uid: str, position: int, email: str) -> tuple[Game, Seat]:
        """Open game ``uid`` and its seat ``position``, kept for ``email``, or the refusal."""
        game = self._game(s, uid)
        seat = self._seat(s, game, position)
        if game.status != OPEN:
            raise NotPlaying(f"game {uid} has already {game.status}", words=(DEAL_MADE, {}))
        if seat.is_bot or seat.email != email:
            raise Forbidden(f"seat {position + 1} of game {uid} is not kept for {email}",
                            words=(NOT_RESERVED, {"number": position + 1, "email": email}))
        return game, seat

    def decline_reserved_seat(self, uid: str, position: int, email: str) -> dict[str, Any]:
        """The player of ``email`` says no to seat ``position`` of open game ``uid``, kept for
        that address and not taken (a rematch's: app/features/rematch/rematches.py). The seat
        then waits for the others' choice: the computer plays it, or the game is abandoned."""
        with self.session(write=True) as s:
            _, seat = self._reserved(s, uid, position, email)
            seats = table_of(Seat)
            said = s.execute(update(seats).where(seats.c.id == seat.id,
                                                 seats.c.accepted_at.is_(None))
                             .values(declined_at=utcnow(), invite_token_hash=None))
            if int(getattr(said, "rowcount", 0) or 0) != 1:
                s.rollback()
                raise NotPlaying(f"seat {position + 1} of game {uid} is taken already",
                                 words=(SEAT_TAKEN, {"number": position + 1}))
            s.commit()
            return {"game": uid, "position": position, "declined": True}

    def issue_api_token(self, uid: str, position: int, *, label: str = "asked") -> dict[str, Any]:
        """A new API token of seat ``position`` of game ``uid``, asked for by its player (the
        seat settings page); shown once. The seat's earlier tokens keep working (a player's
        command line and scripts each hold their own); a seat given to someone else loses them
        all (:meth:`replace_seat`)."""
        with self.session(write=True) as s:
            seat = self._seat(s, self._game(s, uid), position)
            if seat.is_bot or not seat.email or seat.accepted_at is None:
                raise Forbidden(f"seat {position + 1} of game {uid} is not a player's")
            token = new_api_token(s, seat, label)
            s.commit()
            return {"game": uid, "position": position, "api_token": token}

    def contribute(self, uid: str, position: int, contribution: str, *,
                   idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """Seat ``position`` of open game ``uid``, taken without giving its share of the deal
        (a rematch's maker, whose seat was taken before the game's commitment existed), gives
        it now, once: see docs/fairness.md."""
        share = _contribution(contribution)
        if share is None:
            raise BadRequest("give the contribution: 32 to 128 hexadecimal digits your client "
                             "drew")
        with self.session(write=True) as s:
            game = self._game(s, uid)
            seat = self._seat(s, game, position)
            if game.status != OPEN:
                raise NotPlaying(f"game {uid} has already {game.status}: its deal is made",
                                 words=(DEAL_MADE, {}))
            seats = table_of(Seat)
            given = s.execute(update(seats).where(seats.c.id == seat.id,
                                                  seats.c.accepted_at.is_not(None),
                                                  seats.c.is_bot.is_(False),
                                                  seats.c.contribution.is_(None))
                              .values(contribution=share))
            if int(getattr(given, "rowcount", 0) or 0) != 1:
                s.rollback()
                raise NotPlaying(f"seat {position + 1} has given its share of the deal already",
                                 words=(SHARE_GIVEN, {"number": position + 1}))
            answer = {"game": uid, "position": position, "commitment": game.dealing_commitment}
            record_answer(s, idempotency, answer)
            s.commit()
            return answer

    @staticmethod
    def _seat(s: Session, game: Game, position: int) -> Seat:
        seat = s.exec(select(Seat).where(Seat.game_id == game.id,
                                         Seat.position == position)).first()
        if seat is None:
            raise NotFound(f"game {game.uid} has no seat {position + 1}")
        return seat

    def _take_over(self, s: Session, game: Game, seat: Seat, name: str | None,
                   idempotency: AnswerRecorder | None) -> dict[str, Any]:
        """A new player accepts the invitation to a running game's seat (see replace_seat)."""
        loaded = self._load(s, game.uid, fresh_seats=True)
        mine = loaded.seat(seat.position)
        mine.is_bot = False
        mine.invite_token_hash = None
        mine.accepted_at = utcnow()
        mine.resigned_at = None
        mine.missed_deadlines = 0
        if name:
            mine.player_name = name
        s.add(mine)
        before = loaded.seq
        with self._race_lost(s, game.uid, mine.position):
            self._append(s, loaded, mine.position, f"{HANDOVER} player", [], kind=HANDOVER,
                         actor=PLAYER)
            token = new_token()
            assert mine.id is not None
            s.add(ApiToken(token_hash=token_hash(token), seat_id=mine.id, label="invitation"))
            self._emit(s, GameEvent("joined", game, loaded.seats, before, loaded.seq, loaded,
                                    position=mine.position))
            accepted = {"game": game.uid, "position": mine.position, "api_token": token}
            record_answer(s, idempotency, accepted)
            s.commit()
        self._seat_rows.pop(loaded.game_id, None)
        return accepted

    def invite(self, uid: str, creator_token: str, position: int, email: str, *,
               idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """(Re)issue the invitation of an open seat, to a new address if given.

        A rematch's seat is kept for its player: it is invited again only to its own address,
        and its invitation goes by mail alone (the creator is never given it: they could take
        the seat with it). A rematch's computer seat stays the computer's."""
        email = email.strip().lower()
        refuse_unseen_in_address(email)
        if not is_address(email):
            raise BadRequest(f"'{email}' is not an e-mail address",
                             words=(NOT_ADDRESS, {"email": email}))
        with self.session(write=True) as s:
            game = self._creator_game(s, uid, creator_token)
            if game.status != OPEN:
                raise NotPlaying(f"game {uid} has already {game.status}: no more invitations")
            seat = s.exec(
                select(Seat).where(Seat.game_id == game.id, Seat.position == position)
            ).first()
            if seat is None:
                raise NotFound(f"game {uid} has no seat {position + 1}")
            if seat.accepted_at is not None and not seat.is_bot:
                raise BadRequest(f"seat {position + 1} is already taken")
            if game.rematch_of is not None:
                _kept_for_its_player(seat, email)
            invite = new_token()
            seat.email = email
            seat.is_bot = False
            seat.accepted_at = None
            seat.invite_token_hash = token_hash(invite)
            seat.invited_at = utcnow()
            s.add(seat)
            self._emit(s, GameEvent("invited", game, [seat], invitations=[
                {"position": position, "email": email, "invite_token": invite}]))
            invited = {"position": position, "email": email}
            if game.rematch_of is None:  # (a rematch's seats are invited by mail alone)
                invited["invite_token"] = invite
            record_answer(s, idempotency, invited)
            s.commit()
            return invited

    def replace_seat(self, uid: str, creator_token: str | None, position: int,
                     email: str | None, *, level: str | None = None,
                     idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """Give a seat of a running game to someone new (an invitation to ``email``; the
        computer plays the seat until it is accepted) or to the computer (``email`` None), at
        ``level`` (None: the seat's own). ``creator_token`` None is an admin acting. The
        creator of a rematch is not given the invitation: it goes to ``email`` by mail alone
        (see :meth:`invite`)."""
        if level is not None:
            level = checked_bot_level(position, level, True)
        if email is not None:
            email = email.strip().lower()
            refuse_unseen_in_address(email)
            if not is_address(email):
                raise BadRequest(f"'{email}' is not an e-mail address",
                                 words=(NOT_ADDRESS, {"email": email}))
        actor = ADMIN if creator_token is None else OWNER
        with self.session(write=True) as s:
            loaded = self._owned_active(s, uid, creator_token)
            seat = loaded.seat(position)
            before = loaded.seq
            invite = None
            with self._race_lost(s, uid, position):
                if email is None:
                    if seat.is_bot and seat.invite_token_hash is None:
                        raise BadRequest(f"the computer already plays seat {position + 1}")
                    seat.invite_token_hash = None
                    self._hand_over_in(s, loaded, position, "computer", actor=actor,
                                       level=level)
                else:
                    invite = new_token()
                    seat.email = email
                    seat.invite_token_hash = token_hash(invite)
                    seat.invited_at = utcnow()
                    self._hand_over_in(s, loaded, position, "invite", actor=actor,
                                       level=level)
                self._revoke_tokens(s, seat)
                seat.secret = secrets.token_hex(32)  # the old player's links stop working
                seat.missed_deadlines = 0
                if loaded.game.paused_at is None:  # else the computer plays on resume
                    self._play_bots(s, loaded)
                self._settle(s, loaded)
                invitations = [] if invite is None else [
                    {"position": position, "email": email, "invite_token": invite}]
                self._emit(s, GameEvent("replaced", loaded.game, loaded.seats, before,
                                        loaded.seq, loaded, invitations=invitations,
                                        actor=actor, position=position))
                result: dict[str, Any] = {"game": uid, "position": position, "seq": loaded.seq}
                if invite is not None:
                    result["email"] = email
                    if creator_token is None or loaded.game.rematch_of is None:
                        result["invite_token"] = invite
                record_answer(s, idempotency, result)
                s.commit()
            self._seat_rows.pop(loaded.game_id, None)
            return result

    @staticmethod
    def _revoke_tokens(s: Session, seat: Seat) -> None:
        for row in s.exec(select(ApiToken).where(ApiToken.seat_id == seat.id,
                                                 col(ApiToken.revoked_at).is_(None))).all():
            row.revoked_at = utcnow()
            s.add(row)


def _kept_for_its_player(seat: Seat, email: str) -> None:
    """Refuse to invite anyone but a rematch seat's own player (its computer: nobody)."""
    number = seat.position + 1
    if seat.is_bot:
        raise Forbidden(f"seat {number} of a rematch is the computer's, as it was in the game "
                        "before", words=(RESERVED_COMPUTER, {"number": number}))
    if email != seat.email:
        raise Forbidden(f"seat {number} of a rematch is its own player's: it is invited again "
                        f"only to {seat.email}, by mail",
                        words=(RESERVED_ADDRESS, {"number": number, "email": seat.email}))


def _contribution(given: str | None) -> str | None:
    """A seat's share of the deal as its client gives it, checked (see
    app/features/fairness/dealing.py); None when none is given: the server then gives the seat the
    one it derives from the game's secret (:func:`.setup.server_contribution_for`)."""
    if given is None or given == "":
        return None
    try:
        return dealing.check_contribution(given)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
