"""Leaving: "forget me" removes an address from the server, and leaves the games it played
whole for the other players.

:func:`forget` is refused (:class:`StillPlaying`, 409) while the address holds a seat in an
unfinished game (open or active) that it has not resigned and that the computer does not play:
its way out is to resign, or to ask the game's owner to hand the seat over. Otherwise, in one
transaction:

- every seat of the address loses its address, its settings and its invitation; its name
  becomes :data:`app.service.FORMER_PLAYER` ("a former player", shown in the reader's
  language); its secret is drawn anew (every old link of the seat dies); ``forgotten_at`` is
  set;
- deleted: the seats' API tokens and push subscriptions (with their deliveries), the address's
  notes, away dates, mail standing, group memberships and the groups it owns, its sign-ins
  (every browser and terminal signed in with it is signed out), and the mails it sent in
  reply;
- the games it owns have no owner's address any more; the mails sent to it stay as rows for
  the audit of what went out, with no recipient and no body (one not sent yet is given up, as
  the retention purge gives it up) and without the delivery texts that may quote the address.

The log, the seats' contributions to the deal and the chat stay: the other players' record of
the game stays verifiable (``titanpost admin verify``, ``titanpost verify-fair``) and
replayable, the forgotten seat named "a former player".
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy import func
from sqlmodel import Session

from app.core.i18n import N_
from app.core.models import (
    ACTIVE,
    OPEN,
    Absence,
    ApiToken,
    Game,
    InboundMail,
    MailAddress,
    OutboxMail,
    PlayerGroup,
    PlayerGroupMember,
    PushDelivery,
    PushSubscription,
    Seat,
    SignIn,
    table_of,
)
from app.features.notes.records import delete_notes_of
from app.features.privacy.mydata import address_seats
from app.features.retention.purge import UNSENT_PURGED
from app.features.signin.signins import address_digest
from app.service import FORMER_PLAYER, BadRequest, GameService, ServiceError

STILL_PLAYING: Final = N_(
    "{address} still holds a seat in a game that is not over: {games}. Resign from it first "
    "(`titanpost resign GAME`, or Resign on the game's page), or ask the game's owner to hand "
    "the seat over to someone else; then ask again.")
NOT_CONFIRMED: Final = N_(
    "type your address ({address}) to confirm: forgetting it cannot be undone")


class StillPlaying(ServiceError):
    """Forgetting refused: the address still plays the unfinished games ``games``."""

    status = 409


@dataclass
class Forgotten:
    """What :func:`forget` did: how many rows of each kind it removed, and the games kept
    (whose logs name the address's seats "a former player")."""

    removed: dict[str, int] = field(default_factory=dict)
    games: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"forgotten": True, "removed": dict(self.removed), "games_kept": self.games}


def game_label(game: Game) -> str:
    """``Tuesday race (3f2a9c1d)``: a game as a refusal names it."""
    return f"{game.name} ({game.uid[:8]})" if game.name else game.uid[:8]


def blocking(s: Session, email: str) -> list[Game]:
    """The unfinished games in which ``email`` holds a seat of its own that the computer does
    not play (it did not resign): what stops it being forgotten."""
    found = [game for game, seat in address_seats(s, email)
             if game.status in (OPEN, ACTIVE) and seat.resigned_at is None and not seat.is_bot]
    return list({game.uid: game for game in found}.values())


def check_confirmation(email: str, typed: str) -> None:
    """BadRequest unless ``typed`` is the address itself (case and spaces aside)."""
    if (typed or "").strip().lower() != email:
        raise BadRequest(NOT_CONFIRMED.format(address=email),
                         words=(NOT_CONFIRMED, {"address": email}))


def refusal(email: str, games: list[Game]) -> StillPlaying:
    names = ", ".join(game_label(game) for game in games)
    return StillPlaying(STILL_PLAYING.format(address=email, games=names),
                        words=(STILL_PLAYING, {"address": email, "games": names}),
                        reason="still_playing",
                        games=[{"game": g.uid, "name": g.name, "status": g.status}
                               for g in games])


def forget(service: GameService, email: str) -> Forgotten:
    """Forget ``email`` (normalised by the caller); raises :class:`StillPlaying`."""
    now = datetime.now(UTC)
    with service.session(write=True) as s:
        games = blocking(s, email)
        if games:
            raise refusal(email, games)
        seats = address_seats(s, email)
        done = Forgotten(games=[{"game": g.uid, "name": g.name, "status": g.status}
                                for g in {g.uid: g for g, _ in seats}.values()])
        seat_ids = [seat.id for _, seat in seats if seat.id is not None]
        done.removed = _delete_rows(s, email, seat_ids,
                                    address_digest(service.settings.secret_key, email),
                                    [(g.uid, seat.position) for g, seat in seats])
        for _, seat in seats:
            _forget_seat(seat, now)
            s.add(seat)
        done.removed["seats"] = len(seats)
        done.removed["mails"] = _empty_mails(s, email, now)
        games_table = table_of(Game)
        s.execute(sa.update(games_table).where(games_table.c.owner_email == email)
                  .values(owner_email=None))
        s.commit()
    for entry in done.games:  # (this process's copy of the seats: the names changed)
        service.forget_seats(str(entry["game"]))
    return done


def _forget_seat(seat: Seat, now: datetime) -> None:
    seat.email = ""
    seat.player_name = FORMER_PLAYER
    seat.notify = {}
    seat.invite_token_hash = None
    seat.secret = secrets.token_hex(32)  # (every link of the seat stops working)
    seat.forgotten_at = now


def _delete(s: Session, table: Any, where: Any) -> int:
    done = s.execute(sa.delete(table).where(where))
    return int(getattr(done, "rowcount", 0) or 0)


def _delete_rows(s: Session, email: str, seat_ids: list[int], digest: str,
                 positions: list[tuple[str, int]]) -> dict[str, int]:
    """Delete every row of the address and of its seats; how many of each kind."""
    tokens, pushes, deliveries = (table_of(ApiToken), table_of(PushSubscription),
                                  table_of(PushDelivery))
    groups, members = table_of(PlayerGroup), table_of(PlayerGroupMember)
    owned = sa.select(groups.c.id).where(groups.c.owner_email == email)
    inbound = table_of(InboundMail)
    from_seats = [sa.and_(inbound.c.game_uid == uid, inbound.c.seat == position)
                  for uid, position in positions]
    removed = {
        "api_tokens": _delete(s, tokens, tokens.c.seat_id.in_(seat_ids)),
        "push_deliveries": _delete(s, deliveries, deliveries.c.subscription_id.in_(
            sa.select(pushes.c.id).where(pushes.c.seat_id.in_(seat_ids)))),
        "push_subscriptions": _delete(s, pushes, pushes.c.seat_id.in_(seat_ids)),
        "notes": delete_notes_of(s, email),
        "away": _delete(s, table_of(Absence), table_of(Absence).c.email == email),
        "mail_standing": _delete(s, table_of(MailAddress),
                                 table_of(MailAddress).c.address == email),
        "group_memberships": _delete(s, members, sa.or_(members.c.email == email,
                                                        members.c.group_id.in_(owned))),
        "groups": _delete(s, groups, groups.c.owner_email == email),
        "sign_ins": _delete(s, table_of(SignIn), table_of(SignIn).c.email_digest == digest),
        "replies": _delete(s, inbound, sa.or_(func.lower(inbound.c.sender) == email,
                                              *from_seats)),
    }
    return removed


def _empty_mails(s: Session, email: str, now: datetime) -> int:
    """The mails to ``email`` stay as rows, with no recipient, body or delivery text."""
    outbox = table_of(OutboxMail)
    done = s.execute(sa.update(outbox).where(outbox.c.recipient == email).values(
        recipient="", payload={}, bounce=None,
        body_purged_at=sa.func.coalesce(outbox.c.body_purged_at, now),
        last_error=sa.case((outbox.c.sent_at.is_(None), UNSENT_PURGED), else_=None)))
    return int(getattr(done, "rowcount", 0) or 0)


def still_playing(service: GameService, email: str) -> list[Game]:
    """:func:`blocking`, read on its own (the page shows it before anyone asks)."""
    with service.session() as s:
        return blocking(s, email)


__all__ = ["NOT_CONFIRMED", "STILL_PLAYING", "Forgotten", "StillPlaying", "blocking",
           "check_confirmation", "forget", "game_label", "refusal", "still_playing"]
