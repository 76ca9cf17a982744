"""Which games changed, told to the pages that follow them.

**Announcing.** Whatever changes what a game's page shows (every game event, a chat message, a
takeback asked for) calls :func:`game_changed` inside the transaction that makes the change, and
the change is heard only once that transaction commits (a rolled-back change is never heard):

- on PostgreSQL, as ``NOTIFY titanpost_live, '<game id>'`` in the transaction: PostgreSQL delivers
  it at the commit to every process that listens, whichever process made the change (a web
  worker, the scheduler, ``titanpost admin``). Each serving process listens on one connection of
  its own, opened when the first page subscribes in it (:class:`PostgresListener`);
- on SQLite, one process serves the pages and runs the scheduler (the embedded default): the games
  are kept in the session's ``info`` and announced in the process after the commit.

**Hearing.** A page's live connection subscribes to its games (:meth:`GameFeed.subscribe`) and
waits; :meth:`Subscription.wait` returns True once any of them changed. Nothing tells what
changed, or how: the page fetches itself again, as its viewer, and sees only what that viewer may
see. Waiting costs no query and no thread of its own beyond the connection's (under gevent, a
greenlet): a quiet game costs nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import Any, Final

import psycopg
from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session as OrmSession
from sqlmodel import Session

from app.service import GameEvent, GameService

log = logging.getLogger(__name__)

CHANNEL: Final = "titanpost_live"
"""The PostgreSQL channel the changes are announced on (its payload: the game's id)."""
CHANGED_KEY: Final = "titanpost.live.changed"
"""The session ``info`` key of the games changed in its transaction."""


class Subscription:
    """One live connection's interest in some games: :meth:`wait` until one of them changes."""

    def __init__(self, feed: GameFeed, database: str, uids: frozenset[str]) -> None:
        self.feed = feed
        self.database = database
        self.uids = uids
        self._changed = threading.Event()

    def wait(self, timeout: float) -> bool:
        """Whether a game of the subscription changed since the last wait (waiting up to
        ``timeout`` seconds for one to). A change announced while the caller is busy is kept
        for its next wait, so nothing is missed between two waits."""
        changed = self._changed.wait(timeout)
        if changed:
            self._changed.clear()
        return changed

    def notify(self) -> None:
        self._changed.set()

    def close(self) -> None:
        self.feed.unsubscribe(self)


def database_key(engine: Engine) -> str:
    """The name a database's games are followed under (its address, without a password)."""
    return engine.url.render_as_string(hide_password=True)


class GameFeed:
    """The process's subscriptions by database and game, and a PostgreSQL listener for each
    database that some page of the process follows."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_game: dict[tuple[str, str], set[Subscription]] = {}
        self._listeners: dict[str, PostgresListener] = {}

    def subscribe(self, uids: Iterable[str], engine: Engine) -> Subscription:
        """Follow the games ``uids`` (of the database of ``engine``)."""
        database = database_key(engine)
        subscription = Subscription(self, database, frozenset(uids))
        with self._lock:
            for uid in subscription.uids:
                self._by_game.setdefault((database, uid), set()).add(subscription)
        if engine.dialect.name == "postgresql":
            self._listen(engine, database)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            for uid in subscription.uids:
                key = (subscription.database, uid)
                followers = self._by_game.get(key)
                if followers is not None:
                    followers.discard(subscription)
                    if not followers:
                        del self._by_game[key]

    def announce(self, database: str, uid: str) -> None:
        """Game ``uid`` of ``database`` changed: wake every subscription that follows it."""
        with self._lock:
            followers = list(self._by_game.get((database, uid), ()))
        for subscription in followers:
            subscription.notify()

    def announce_all(self, database: str | None = None) -> None:
        """Wake every subscription (of ``database``; None: of every database): a listener that
        was not listening may have missed changes, and each page checks itself once."""
        with self._lock:
            followers = {sub for (db, _), subs in self._by_game.items()
                         if database is None or db == database for sub in subs}
        for subscription in followers:
            subscription.notify()

    def followed(self, database: str | None = None) -> int:
        """How many games some page of this process follows (in ``database``)."""
        with self._lock:
            return sum(1 for db, _ in self._by_game if database is None or db == database)

    def _listen(self, engine: Engine, database: str) -> None:
        with self._lock:
            listener = self._listeners.get(database)
            if listener is None or not listener.is_alive():
                listener = PostgresListener(self, database, conninfo_of(engine))
                self._listeners[database] = listener
                listener.start()
        # (the first page of a process waits until it listens: a change made before would not
        # be heard; a later page's mark covers the moment before it subscribed)
        listener.listening.wait(5.0)


def conninfo_of(engine: Engine) -> str:
    """The libpq address of a SQLAlchemy engine's PostgreSQL database."""
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


class PostgresListener(threading.Thread):
    """LISTEN on the feed's channel and announce every game named there; reconnect (with a
    doubling pause, at most 30 s) when the connection breaks, and wake the database's pages then,
    since changes made while it was away were not heard. It stops once no page of the process
    follows a game of its database (the next page starts another)."""

    WAIT: Final = 5.0

    def __init__(self, feed: GameFeed, database: str, conninfo: str) -> None:
        super().__init__(name="titanpost-live-listener", daemon=True)
        self.feed = feed
        self.database = database
        self.conninfo = conninfo
        self.listening = threading.Event()

    def wanted(self) -> bool:
        return self.feed.followed(self.database) > 0

    def run(self) -> None:
        pause = 1.0
        while True:
            try:
                self._listen()
                return
            except psycopg.Error as exc:
                self.listening.clear()
                if not self.wanted():
                    return
                log.warning("live feed: listening failed (%s); again in %.0f s", exc, pause)
                self.missed = True
                time.sleep(pause)
                pause = min(pause * 2, 30.0)

    missed = False
    """Whether the listener was not listening for a while after it first listened."""

    def _listen(self) -> None:
        with psycopg.connect(self.conninfo, autocommit=True) as connection:
            connection.execute(f"LISTEN {CHANNEL}")
            self.listening.set()
            if self.missed:
                self.feed.announce_all(self.database)
            while True:
                for note in connection.notifies(timeout=self.WAIT):
                    self.feed.announce(self.database, note.payload)
                if not self.wanted():
                    self.listening.clear()
                    return


FEED: Final = GameFeed()
"""The process's feed: every app and service of a process share it."""


class LiveAnnouncer:
    """The game-service listener that announces every event's game (see :func:`install`)."""

    def __call__(self, s: Session, event: GameEvent) -> None:
        game_changed(s, event.game.uid)


def install(service: GameService) -> LiveAnnouncer:
    """Announce every game event of ``service`` to the pages that follow its game."""
    hook_sessions()
    return service.listener(LiveAnnouncer, LiveAnnouncer)


def game_changed(s: Any, uid: str) -> None:
    """Game ``uid`` changes in session ``s``'s transaction: announce it once that commits."""
    changed: set[str] = s.info.setdefault(CHANGED_KEY, set())
    if uid in changed:
        return
    changed.add(uid)
    if s.get_bind().dialect.name == "postgresql":
        s.execute(text("SELECT pg_notify(:channel, :uid)"), {"channel": CHANNEL, "uid": uid})


def games_changed(service: Any, *uids: str) -> None:
    """Announce games that a committed change touched without a game event of its own (a
    rematch's yes or no): in a short transaction of its own."""
    with service.session(write=True) as s:
        for uid in uids:
            game_changed(s, uid)
        s.commit()


def _after_commit(session: OrmSession) -> None:
    changed = session.info.pop(CHANGED_KEY, None)
    if not changed:
        return
    bind = session.get_bind()
    if bind.dialect.name == "postgresql":
        return  # (PostgreSQL delivers the NOTIFY to every listening process, this one too)
    database = database_key(bind.engine)
    for uid in changed:
        FEED.announce(database, uid)


def _after_rollback(session: OrmSession) -> None:
    session.info.pop(CHANGED_KEY, None)


_hooked = False


def hook_sessions() -> None:
    """Announce on commit and forget on rollback, for every session of the process (once)."""
    global _hooked
    if _hooked:
        return
    event.listen(OrmSession, "after_commit", _after_commit)
    event.listen(OrmSession, "after_soft_rollback", lambda s, _t: _after_rollback(s))
    _hooked = True
