"""The worker's computer players: the normal and strong seats' decisions, never a web request's.

A move that hands the turn to a normal or strong computer seat writes a ``bot_turns`` row in its
own transaction and returns (:meth:`LogWriting._play_bots`). A scheduler process runs
:func:`run_due`: it claims due rows atomically (``FOR UPDATE SKIP LOCKED`` on PostgreSQL; on
SQLite a conditional UPDATE under the database's write lock), so two schedulers never play the
same turn; reads the game; searches for the move with no transaction open (a strong decision
takes up to a second); and appends it through the service, checked against the game's current
decision (no sooner than its level's time budget after the search began, however quickly the
search ended: a search with one option to look at ends at once, and how long a computer seat
takes must tell nothing of its options): a turn whose decision was answered, taken back or
rolled back meanwhile is dropped.
The turns of a paused game, or of one where a player has asked to take back a move (the others
not having answered yet), wait: the computer's move would lapse the request.
A row claimed by a process that died is claimed again once its lease has passed; one whose
search keeps failing is given up after :data:`MAX_ATTEMPTS` claims (the game then waits, as for
a player who does not answer, until an admin hands the seat on).

``titanpost serve`` runs it every second in its background scheduler, ``titanpost worker`` in
its own process, and every clock tick (``titanpost admin tick``) runs it too.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from sqlalchemy import and_, exists, or_, select, update

from app.core.models import BotTurn, Game, Takeback, table_of, utcnow
from app.service import PENDING_TAKEBACK, BotTask, GameMovedOn, GameService

log = logging.getLogger("titanpost.botturns")

LEASE: Final = timedelta(minutes=1)
"""How long a claimed turn is its worker's before another may take it (a search takes a second
at most: the lease covers a batch of them)."""
MAX_ATTEMPTS: Final = 3
BATCH: Final = 10
INTERVAL_SECONDS: Final = 1.0
"""How often the background scheduler looks for due turns."""

_BOT_TURNS = table_of(BotTurn)
_GAMES = table_of(Game)
_TAKEBACKS = table_of(Takeback)


@dataclass
class BotReport:
    """What one run did: turns claimed, played, dropped as stale, failed."""

    claimed: int = 0
    played: int = 0
    dropped: int = 0
    failed: int = 0
    seconds: list[float] = field(default_factory=list)
    """How long each search took (for the log and bench figures)."""


def claim(service: GameService, worker: str, now: datetime, count: int = BATCH) -> list[int]:
    """Lease up to ``count`` due turns (of games not paused) to ``worker``: their ids."""
    c = _BOT_TURNS.c
    stale = now - LEASE
    due = (
        select(c.id)
        .join(_GAMES, _GAMES.c.id == c.game_id)
        .where(c.done_at.is_(None), c.attempts < MAX_ATTEMPTS,
               or_(c.claimed_at.is_(None), c.claimed_at < stale),
               _GAMES.c.paused_at.is_(None),
               ~exists().where(_TAKEBACKS.c.game_id == c.game_id,
                               _TAKEBACKS.c.status == PENDING_TAKEBACK))
        .order_by(c.created_at, c.id)
        .limit(count)
    )
    with service.session() as s:  # a read first: an idle poll takes no write lock
        if s.execute(due).first() is None:
            return []
    with service.session(write=True) as s:
        if s.get_bind().dialect.name == "postgresql":
            due = due.with_for_update(skip_locked=True, of=_BOT_TURNS)
        chosen = due.cte("due")  # run once (see Timekeeper._claim)
        ids = [int(row[0]) for row in s.execute(
            update(_BOT_TURNS)
            .where(and_(c.id == chosen.c.id, c.done_at.is_(None)))
            .values(claimed_by=worker, claimed_at=now, attempts=c.attempts + 1)
            .returning(c.id)).all()]
        s.commit()
    return sorted(ids)


def play(service: GameService, turn_id: int, worker: str, report: BotReport) -> None:
    """Read the claimed turn, search outside any transaction, append the move."""
    task = service.bot_task(turn_id, worker)
    if not isinstance(task, BotTask):
        report.dropped += 1
        return
    started = time.monotonic()
    choice = task.choose()
    took = time.monotonic() - started
    report.seconds.append(took)
    rest = task.rules.think_seconds(task.level) - took
    if rest > 0:  # (a decision always takes its level's time: how long tells nothing)
        time.sleep(rest)
    try:
        result = service.play_bot_turn(task, choice, worker)
    except GameMovedOn:  # another entry took the place first: look at the turn again
        service.give_back_turn(turn_id, worker)
        result = "raced"
    if result == "played":
        report.played += 1
    else:
        report.dropped += 1


def run_due(service: GameService, worker: str, *, now: datetime | None = None,
            limit: int = 200) -> BotReport:
    """Play the due bot turns, batch after batch (a move may owe a new one), up to ``limit``
    claims. Safe in several processes at once."""
    report = BotReport()
    while report.claimed < limit:
        ids = claim(service, worker, now or utcnow(), min(BATCH, limit - report.claimed))
        if not ids:
            break
        report.claimed += len(ids)
        for turn_id in ids:
            try:
                play(service, turn_id, worker, report)
            except Exception:  # one bad turn must not stop the others; its lease retries it
                report.failed += 1
                log.exception("bot turn %s failed", turn_id)
    if report.claimed:
        log.info("bot turns: %d claimed, %d played, %d dropped, %d failed",
                 report.claimed, report.played, report.dropped, report.failed)
    return report
