"""The purge (see the package's docstring): what it finds, and what it does with it.

:func:`find` lists what is due without changing anything (``titanpost admin purge --dry-run``);
:func:`purge` finds and acts in one transaction. A game's own rows are found through the
schema's foreign keys (every table that points at the game, at one of its seats, or at a row of
those), so a table added later goes with its game without this module knowing of it; the outbox
alone is kept, its rows emptied and unlinked, for the audit of what was sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, SQLModel, col, select

from app.core.config import Settings
from app.core.models import ABANDONED, OPEN, Game, Move, OutboxMail, Seat, table_of

UNSENT_PURGED = "gave up: its body was purged (retention) before it could be sent"
"""The ``last_error`` of a mail never sent when its body is purged: the sender skips it."""
KEPT_TABLES = frozenset({"outbox"})
"""Tables whose rows of a purged game stay (emptied and unlinked), not deleted."""


@dataclass
class PurgeReport:
    """What is due (or was purged): the games, the invitations, the mail bodies."""

    games: list[dict[str, Any]] = field(default_factory=list)
    invitations: list[dict[str, Any]] = field(default_factory=list)
    mail_bodies: int = 0
    oldest_mail: datetime | None = None
    done: bool = False
    seat_ids: list[int] = field(default_factory=list, repr=False)
    """The seats of :attr:`invitations` (not shown)."""

    def as_json(self) -> dict[str, Any]:
        return {"games": self.games, "invitations": self.invitations,
                "mail_bodies": self.mail_bodies,
                "oldest_mail": self.oldest_mail.isoformat() if self.oldest_mail else None,
                "done": self.done}

    @property
    def empty(self) -> bool:
        return not (self.games or self.invitations or self.mail_bodies)


def find(s: Session, settings: Settings, now: datetime) -> PurgeReport:
    """What the purge would do at ``now`` under ``settings`` (nothing is changed)."""
    report = PurgeReport()
    if settings.retention_days:
        cutoff = now - timedelta(days=settings.retention_days)
        report.games = [_game_entry(game, since) for game, since in _stale_games(s, cutoff)]
        purged = {entry["game"] for entry in report.games}
        for seat_id, entry in _stale_invitations(s, cutoff):
            if entry["game"] not in purged:
                report.seat_ids.append(seat_id)
                report.invitations.append(entry)
    if settings.mail_body_days:
        count, oldest = s.exec(select(sa.func.count(), sa.func.min(OutboxMail.created_at))
                               .where(*_stale_mail(now - timedelta(days=settings.mail_body_days))
                                      )).one()
        report.mail_bodies, report.oldest_mail = int(count), oldest
    return report


def purge(s: Session, settings: Settings, now: datetime) -> PurgeReport:
    """Find what is due at ``now`` and purge it, in the session's transaction (committed
    here)."""
    report = find(s, settings, now)
    if report.games:
        ids = list(s.exec(select(Game.id).where(
            col(Game.uid).in_([entry["game"] for entry in report.games]))).all())
        _empty_their_mail(s, ids, now)
        _delete_game_rows(s, [i for i in ids if i is not None])
    if report.seat_ids:
        seats = table_of(Seat)
        s.execute(sa.update(seats).where(seats.c.id.in_(report.seat_ids))
                  .values(invite_token_hash=None, invited_at=None))
    if settings.mail_body_days:
        outbox = table_of(OutboxMail)
        s.execute(sa.update(outbox)
                  .where(*_stale_mail(now - timedelta(days=settings.mail_body_days)))
                  .values(payload={}, body_purged_at=now, last_error=sa.case(
                      (outbox.c.sent_at.is_(None), UNSENT_PURGED), else_=outbox.c.last_error)))
    report.done = True
    s.commit()
    return report


# ---------------------------------------------------------------------- what is due


def _stale_games(s: Session, cutoff: datetime) -> Iterable[tuple[Game, datetime]]:
    """The games never started whose last event (made, invited, taken, abandoned) is before
    ``cutoff``, with that time; a game with any log entry is never one of them."""
    candidates = s.exec(select(Game).where(
        col(Game.started_at).is_(None), col(Game.status).in_([OPEN, ABANDONED]),
        col(Game.created_at) < cutoff,
        ~sa.exists().where(col(Move.game_id) == col(Game.id))).order_by(col(Game.id))).all()
    for game in candidates:
        seats = s.exec(select(Seat).where(Seat.game_id == game.id)).all()
        times = [game.created_at, game.finished_at,
                 *(seat.invited_at for seat in seats), *(seat.accepted_at for seat in seats)]
        last = max(_aware(t) for t in times if t is not None)
        if last < cutoff:
            yield game, last


def _stale_invitations(s: Session, cutoff: datetime) -> list[tuple[int, dict[str, Any]]]:
    """The pending invitations made before ``cutoff`` (one made before the time was kept counts
    from its game's making)."""
    made = sa.func.coalesce(Seat.invited_at, Game.created_at)
    rows = s.exec(select(Seat.id, Seat.position, Game.uid, made)
                  .join(Game, col(Game.id) == Seat.game_id)
                  .where(col(Seat.invite_token_hash).is_not(None), made < cutoff)
                  .order_by(col(Game.id), col(Seat.position))).all()
    return [(int(seat_id or 0), {"game": uid, "seat": position + 1,
                                 "since": _aware(since).isoformat()})
            for seat_id, position, uid, since in rows]


def _stale_mail(cutoff: datetime) -> list[Any]:
    """The outbox rows whose body is due: written before ``cutoff``, not emptied yet. (One never
    sent by then, with no relay set or the address undeliverable, is given up with it.)"""
    return [col(OutboxMail.created_at) < cutoff, col(OutboxMail.body_purged_at).is_(None)]


def _game_entry(game: Game, since: datetime) -> dict[str, Any]:
    return {"game": game.uid, "name": game.name, "status": game.status,
            "since": since.isoformat()}


def _aware(moment: datetime) -> datetime:
    """``moment`` in UTC (SQLite gives times back without their zone)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# ---------------------------------------------------------------------- acting on it


def _empty_their_mail(s: Session, game_ids: list[int | None], now: datetime) -> None:
    """The purged games' mails stay as rows (the audit of what went out), emptied and no longer
    linked to the game."""
    outbox = table_of(OutboxMail)
    s.execute(sa.update(outbox).where(outbox.c.game_id.in_(game_ids))
              .values(game_id=None, seat_id=None, payload={},
                      body_purged_at=sa.func.coalesce(outbox.c.body_purged_at, now),
                      last_error=sa.case((outbox.c.sent_at.is_(None), UNSENT_PURGED),
                                         else_=outbox.c.last_error)))


def _delete_game_rows(s: Session, game_ids: list[int]) -> None:
    """Delete games ``game_ids`` and every row that is theirs: each table pointing at a game,
    at one of its seats, or at such a row (a webhook's deliveries), found through the foreign
    keys; dependents first."""
    games = table_of(Game)
    owned: dict[str, Any] = {"games": games.c.id.in_(game_ids)}
    ordered = SQLModel.metadata.sorted_tables
    for table in ordered:  # (referenced tables come first in this order)
        ways = [fk.parent.in_(sa.select(fk.column).where(owned[fk.column.table.name]))
                for fk in table.foreign_keys
                if fk.column.table.name in owned and fk.column.table is not table]
        if ways and table.name not in owned:
            owned[table.name] = sa.or_(*ways)
    for table in reversed(ordered):
        if table.name in owned and table.name not in KEPT_TABLES:
            s.execute(sa.delete(table).where(owned[table.name]))
