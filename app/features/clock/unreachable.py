"""A seat whose mail bounces does not time out silently.

When the timeout of a seat played by a person comes due while the seat's address is
undeliverable (app/features/delivery/standing.py), the timekeeper asks :func:`hold` first:

- the deadline is **extended once, by its own length** (the decision's allowance; at least
  :data:`LEAST_EXTENSION`), not fired: the player may still see the game page, a push, or hear
  from the others. A marker row (kind :data:`HELD_KIND`, done at once) remembers it, so the
  next time the deadline comes due it proceeds as usual (the computer or the game's timeout
  rule plays), whether the address still bounces or not;
- the seat's devices get the decision's push once more where it has Web Push subscriptions
  (:func:`app.features.push.notifications.push_again`);
- the game's owner is told, **once per bouncing spell** of that seat (the Message-ID holds the
  seat and the date the address became undeliverable), by an ``unreachable`` mail: "Bob cannot
  be reached: their mail bounces since <date>", with the setup page where the owner (the
  creator) hands the seat over or invites the player again at another address (the existing
  ``replace`` of a seat: the seat's links are re-keyed, so its hidden information never goes
  to an address its player did not give). When the owner is the bouncing player, has no seat
  at the table, or bounces too, every other person at the table with a working address is told
  instead (as the handover notice does), since someone there may reach the player or the
  creator.

Not held: a quick timeout (a reaction window, which passes by itself in minutes), a seat whose
player is away with the computer playing (as they asked), a bot's seat.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

from sqlmodel import Session, col, select

from app.core.models import ACTIVE, Deadline, Game, Seat
from app.features.clock.keeperbase import KeeperBase, human_with_address, iso_or_none
from app.features.clock.rows import TIMEOUT_KIND
from app.features.delivery.table import bouncing_since
from app.features.push.notifications import push_again
from app.mail.notify import UNREACHABLE, insert_rows, message_id, wants_mail
from app.service import Loaded

HELD_KIND: Final = "unreachable"
"""The kind of the marker row of a deadline extended because its seat's mail bounces."""
LEAST_EXTENSION: Final = timedelta(hours=1)
PUSH_TAG: Final = "unreachable"


def hold(keeper: KeeperBase, row_id: int, uid: str, position: int, seq: int,
         now: datetime) -> bool:
    """Whether the due timeout ``row_id`` was held for an unreachable seat (see the module
    documentation); False lets it fire as usual. One write transaction."""
    service = keeper.service
    with service.session(write=True) as s:
        row = s.get(Deadline, row_id)
        if row is None or row.done_at is not None or row.kind != TIMEOUT_KIND:
            return False
        loaded = service.load(s, uid)
        game = loaded.game
        if (game.status != ACTIVE or loaded.decision_seq != seq
                or position not in loaded.to_act()):
            return False  # (answered meanwhile: the timeout finds it so)
        seat = loaded.seat(position)
        since = bouncing_since(s, [seat]).get(position) if human_with_address(seat) else None
        if since is None or _held_before(s, row):
            return False
        length = max(timedelta(seconds=row.allowance_seconds), LEAST_EXTENSION)
        row.extra_seconds += int(length.total_seconds())
        row.claimed_by, row.claimed_at = None, None
        row.due_at = now + length  # (at least; reschedule counts quiet hours and absences)
        s.add(row)
        s.flush()
        keeper.reschedule(s, game, seat)
        s.add(Deadline(game_id=row.game_id, seq=row.seq, seat=row.seat, kind=HELD_KIND,
                       due_at=row.due_at, opened_at=now, done_at=now, result="extended"))
        push_again(s, keeper.settings, game, seat, seq, PUSH_TAG)
        _tell(s, keeper, loaded, seat, since, row.due_at)
        s.commit()
        return True


def _held_before(s: Session, row: Deadline) -> bool:
    return s.exec(select(Deadline.id).where(
        Deadline.game_id == row.game_id, Deadline.seq == row.seq, Deadline.seat == row.seat,
        col(Deadline.kind) == HELD_KIND)).first() is not None


def told(loaded: Loaded, seat: Seat, bouncing: dict[int, datetime]) -> list[Seat]:
    """Who hears that ``seat`` cannot be reached: the owner's seat, else every other person
    at the table with a working address."""
    game: Game = loaded.game
    others = [p for p in loaded.seats if p.position != seat.position and human_with_address(p)
              and p.position not in bouncing]
    owners = [p for p in others if game.owner_email and p.email == game.owner_email]
    return owners or others


def _tell(s: Session, keeper: KeeperBase, loaded: Loaded, seat: Seat, since: datetime,
          due: datetime) -> None:
    """The ``unreachable`` mail, once per seat and bouncing spell to each reader."""
    bouncing = bouncing_since(s, loaded.seats)
    game = loaded.game
    payload = {"position": seat.position, "player": seat.player_name,
               "since": iso_or_none(since), "due_at": iso_or_none(due)}
    spell = f"{seat.position}.{since:%Y%m%d%H%M%S}"
    insert_rows(s, [{
        "game_id": game.id, "seq": loaded.seq, "kind": UNREACHABLE, "recipient": reader.email,
        "seat_id": reader.id, "payload": dict(payload),
        "message_id": message_id(game.uid, 0, reader.position, UNREACHABLE,
                                 keeper.settings.mail_domain, spell),
    } for reader in told(loaded, seat, bouncing) if wants_mail(reader, UNREACHABLE)])
