"""What the table sees of its players' addresses (app/features/delivery/standing.py keeps them).

- A player sees the state of their own address on their settings page, in the API
  (``GET /api/games/<uid>/me/mail``) and in ``titanpost settings``: when a relay last took a
  mail for it, its last bounce and why, and whether it is undeliverable; and asks for a test
  mail (:func:`ask_test_mail`), which clears the undeliverable mark and writes an
  ``address-test`` mail that the sender lets through to the address anyway.
- The other players (and spectators: an address that bounces is no hidden information of the
  game, and they see whose deadline is near anyway) see "Bob's mail is bouncing since <date>"
  on the game page and ``mail_bouncing_since`` per seat in the API state
  (:func:`bouncing_since`): the date alone, never the address nor the remote server's words.
- The clock (app/features/clock/unreachable.py) does not let such a seat time out silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.core.i18n import N_
from app.core.models import MailAddress, OutboxMail, Seat, utcnow
from app.features.clock.arithmetic import aware
from app.features.delivery import standing
from app.mail.notify import ADDRESS_TEST, insert_rows, message_id
from app.service import Forbidden, GameService, NotFound, ServiceError

TEST_MAIL_EVERY: Final = timedelta(minutes=10)
"""One test mail per address in this long (a button pressed twice, or a script in a loop,
does not flood the address nor the relay)."""
TEST_MAIL_TOO_SOON: Final = N_("a test mail went to {address} less than {minutes} minutes ago: "
                               "wait for it (and look in the spam folder) before asking again")
NO_ADDRESS: Final = N_("this seat has no player's address: there is nothing to test")


class TooSoon(ServiceError):
    """A test mail asked for again too soon."""

    status = 429


def _iso(moment: datetime | None) -> str | None:
    return aware(moment).isoformat() if moment is not None else None


def state_json(address: str, row: MailAddress | None) -> dict[str, Any]:
    """An address's state as the API, the settings page and the CLI give it."""
    return {
        "address": address,
        "last_delivered_at": _iso(row.last_delivered_at) if row else None,
        "last_bounce_at": _iso(row.last_bounce_at) if row else None,
        "bounce_reason": row.bounce_reason if row else None,
        "undeliverable_since": _iso(row.undeliverable_since) if row else None,
    }


def _seat(s: Session, service: GameService, uid: str, position: int) -> tuple[Any, Seat]:
    loaded = service.load(s, uid)
    seat = next((p for p in loaded.seats if p.position == position), None)
    if seat is None:
        raise NotFound(f"game {uid} has no seat {position + 1}")
    if not seat.email:
        raise Forbidden(str(NO_ADDRESS), words=(NO_ADDRESS, {}))
    return loaded, seat


def address_state(service: GameService, uid: str, position: int) -> dict[str, Any]:
    """The state of the address of seat ``position`` of game ``uid``, with ``test_mail_at``:
    when its last test mail was asked for (None: never, or longer ago than a day)."""
    with service.session() as s:
        _, seat = _seat(s, service, uid, position)
        state = state_json(seat.email, standing.state_of(s, seat.email))
        last = _last_test(s, seat.email, utcnow() - timedelta(days=1))
        return state | {"test_mail_at": _iso(last)}


def _last_test(s: Session, address: str, since: datetime) -> datetime | None:
    """When the address's latest test mail was asked for, if after ``since``."""
    found = s.execute(select(func.max(OutboxMail.created_at)).where(
        col(OutboxMail.kind) == ADDRESS_TEST, col(OutboxMail.recipient) == address,
        col(OutboxMail.created_at) > since)).scalar_one()
    return aware(found) if found is not None else None


def ask_test_mail(service: GameService, uid: str, position: int,
                  at: datetime | None = None) -> dict[str, Any]:
    """The player of seat ``position`` asks for a test mail: the address is no longer
    undeliverable (:func:`standing.clear`) and an ``address-test`` mail is written, unless one
    was asked for less than :data:`TEST_MAIL_EVERY` ago (:class:`TooSoon`). Answers the
    address's state now, with ``cleared`` (whether it was undeliverable)."""
    at = aware(at or utcnow())
    with service.session(write=True) as s:
        loaded, seat = _seat(s, service, uid, position)
        address = standing.normal(seat.email)
        last = _last_test(s, address, at - TEST_MAIL_EVERY)
        if last is not None:
            minutes = int(TEST_MAIL_EVERY.total_seconds() // 60)
            wait = max(1, int((last + TEST_MAIL_EVERY - at).total_seconds()))
            raise TooSoon(TEST_MAIL_TOO_SOON.format(address=address, minutes=minutes),
                          words=(TEST_MAIL_TOO_SOON, {"address": address, "minutes": minutes}),
                          retry_after=wait)
        cleared = standing.clear(s, address)
        insert_rows(s, [{
            "game_id": loaded.game.id, "seq": loaded.seq, "kind": ADDRESS_TEST,
            "recipient": address, "seat_id": seat.id, "created_at": at,
            "message_id": message_id(uid, loaded.seq, position, ADDRESS_TEST,
                                     service.settings.mail_domain, f"{at:%Y%m%d%H%M%S}"),
            "payload": {"asked_at": at.isoformat()}}])
        state = state_json(address, standing.state_of(s, address))
        s.commit()
    return state | {"test_mail_at": at.isoformat(), "cleared": cleared}


def bouncing_since(s: Session, seats: Iterable[Seat]) -> dict[int, datetime]:
    """The seats played by a person whose address is undeliverable: position -> since when."""
    people = [seat for seat in seats if seat.email and not seat.is_bot]
    found = standing.undeliverable_among(s, [seat.email for seat in people])
    since: dict[int, datetime] = {}
    for seat in people:
        row = found.get(standing.normal(seat.email))
        if row is not None and row.undeliverable_since is not None:
            since[seat.position] = aware(row.undeliverable_since)
    return since


def game_bouncing(service: GameService, uid: str) -> dict[int, datetime]:
    """:func:`bouncing_since` of game ``uid``'s seats."""
    with service.session() as s:
        return bouncing_since(s, service.load(s, uid).seats)
