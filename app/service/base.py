"""What every part of the game service shares: the database, the listeners, and a game read for
one command (its rows, and its engine state rebuilt from the log or taken from this process's
cache), with the summary and state view its answers carry."""

from __future__ import annotations

import re
import secrets
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

from sqlalchemy import Engine, and_, bindparam, func, inspect, or_
from sqlalchemy import select as core_select
from sqlmodel import Session, col, select

from app.core.config import Settings
from app.core.db import session as open_session
from app.core.logchain import genesis_hash
from app.core.models import (
    MOVE,
    OPEN,
    ROLLBACK,
    STATE_KINDS,
    ApiToken,
    Game,
    Move,
    SealedOrder,
    Seat,
    Snapshot,
    Webhook,
)
from app.core.statements import Prepared, Rows
from app.features.clock.rows import read_ahead
from app.games import ruleset
from app.games.apiwords import OLDER_SETUP
from app.games.base import Ruleset, SetupError
from app.service.logreplay import rollback_target

from .errors import BadRequest, Forbidden, NotFound, Unauthorized, WrongCreatorToken
from .records import (
    CachedState,
    GameEvent,
    GameListener,
    Listener,
    Loaded,
    fairness_summary,
    find_game,
    token_hash,
)

STATE_CACHE_SIZE = 2000

# Statements run by every request, built once (building one costs more than running it).
_GAME_ROWS = Rows(Game)
_GAMES = _GAME_ROWS.table
_GAME_AND_HEAD = core_select(
    *_GAME_ROWS.columns,
    select(func.coalesce(func.max(Move.seq), 0)).where(Move.game_id == _GAMES.c.id)
    .correlate(_GAMES).scalar_subquery(),
    select(func.count()).select_from(Seat).where(Seat.game_id == _GAMES.c.id, col(Seat.is_bot))
    .correlate(_GAMES).scalar_subquery(),
    select(func.count()).select_from(Webhook).where(Webhook.game_id == _GAMES.c.id)
    .correlate(_GAMES).scalar_subquery(),
).where(_GAMES.c.uid == bindparam("uid"))
_GAME_HEAD_AND_TOKEN = Prepared(_GAME_AND_HEAD.add_columns(
    select(Seat.position).join(ApiToken, col(ApiToken.seat_id) == col(Seat.id))
    .where(ApiToken.token_hash == bindparam("digest"), col(ApiToken.revoked_at).is_(None),
           Seat.game_id == _GAMES.c.id)
    .correlate(_GAMES).scalar_subquery(),
))
"""The game's row and head as :data:`_GAME_AND_HEAD`, and the position of the seat whose valid
API token has the hash ``digest`` in this game (NULL: no such seat)."""
_GAME_AND_HEAD_ROW = Prepared(_GAME_AND_HEAD)
"""The game's columns, how many entries its log holds, how many seats the computer plays and
how many webhooks it has, in one row (the game made the session's object by ``_GAME_ROWS``)."""
_AFTER_GAME = len(_GAME_ROWS.columns)
TOKEN_SEAT = (
    select(Game.uid, Seat.position, Seat.email, ApiToken.revoked_at)
    .join(Seat, col(Seat.id) == col(ApiToken.seat_id))
    .join(Game, col(Game.id) == col(Seat.game_id))
    .where(ApiToken.token_hash == bindparam("digest"))
)
_SEATS = select(Seat).where(Seat.game_id == bindparam("game_id")).order_by(col(Seat.position))
_LATEST_SNAPSHOT = (select(Snapshot)
                    .where(Snapshot.game_id == bindparam("game_id"),
                           Snapshot.seq <= bindparam("seq"))
                    .order_by(col(Snapshot.seq).desc()).limit(1))
_MOVES_BETWEEN = (select(Move)
                  .where(Move.game_id == bindparam("game_id"), Move.seq > bindparam("after"),
                         Move.seq <= bindparam("seq"))
                  .order_by(col(Move.seq)))
_HEADS = (select(Move.game_id, func.max(Move.seq))
          .where(col(Move.game_id).in_(bindparam("ids", expanding=True)))
          .group_by(col(Move.game_id)))
_NEWEST = (select(Snapshot.game_id, func.max(Snapshot.seq).label("seq"))
           .where(col(Snapshot.game_id).in_(bindparam("ids", expanding=True)))
           .group_by(col(Snapshot.game_id)).subquery())
_LATEST_SNAPSHOTS = select(Snapshot).join(
    _NEWEST, and_(col(Snapshot.game_id) == _NEWEST.c.game_id,
                  col(Snapshot.seq) == _NEWEST.c.seq))
"""The statements a state's rebuild runs (built once: building one costs about as much as
running it on SQLite), and those of a batch's (:meth:`ServiceBase.warm_states`)."""


class ServiceBase:
    """The database, the listeners and the reading of a game that every command shares."""

    def __init__(self, engine: Engine, settings: Settings) -> None:
        self.engine = engine
        self.settings = settings
        self._states: OrderedDict[int, CachedState] = OrderedDict()
        self._seat_rows: dict[int, tuple[tuple[str, int, int], list[Seat]]] = {}
        self.listeners: list[GameListener] = []

    def listener(self, kind: type[Listener], make: Callable[[], Listener]) -> Listener:
        """The service's listener of class ``kind``: the one installed, else one made by
        ``make`` and installed now (each kind listens once)."""
        for listener in self.listeners:
            if isinstance(listener, kind):
                return listener
        made = make()
        self.listeners.append(made)
        return made

    def _emit(self, s: Session, event: GameEvent) -> None:
        for listener in self.listeners:
            listener(s, event)

    @contextmanager
    def session(self, *, write: bool = False) -> Iterator[Session]:
        with open_session(self.engine, write=write) as s:
            yield s

    def _rules(self, name: str) -> Ruleset:
        try:
            return ruleset(name)
        except SetupError as exc:
            raise BadRequest(str(exc)) from None

    def _game(self, s: Session, uid: str) -> Game:
        return find_game(s, uid)

    def _creator_game(self, s: Session, uid: str, creator_token: str) -> Game:
        game = self._game(s, uid)
        if not secrets.compare_digest(game.creator_token_hash, token_hash(creator_token or "")):
            raise WrongCreatorToken("only the game's creator (with the creator token) may do "
                                    "this")
        return game

    def _seats(self, s: Session, game: Game) -> list[Seat]:
        return list(s.exec(_SEATS, params={"game_id": game.id}).all())

    def _load(
        self, s: Session, uid: str, upto: int | None = None, *, fresh_seats: bool = False,
        for_move: bool = False,
    ) -> Loaded:
        """Read a game and rebuild its state after its last move (or move ``upto``).

        The state comes from this process's cache when it holds the same move count, else from
        the latest snapshot and the moves after it. The move count is read from the database
        every time, so a cached state is never stale.

        ``for_move``: for a seat's move, which changes the clock's rows: the seats are read fresh,
        with the clock's rows and away dates in the same statement
        (:func:`~app.features.clock.rows.read_ahead`), when the pending decision is not a
        simultaneous one (whose answers are sealed after the game's row is locked, and read again
        then)."""
        game, head_seq, bots, hooks = self._game_and_head(s, uid)
        return self._loaded(s, game, head_seq, bots, hooks, upto, fresh_seats=fresh_seats,
                            for_move=for_move)

    def _loaded(self, s: Session, game: Game, head_seq: int, bots: int, hooks: int,
                upto: int | None = None, *, fresh_seats: bool = False,
                for_move: bool = False) -> Loaded:
        """The game read for a command from its row and head (see :meth:`_load`)."""
        if for_move and upto is None and game.initial_state is not None:
            loaded = self._loaded_with(s, game, head_seq, hooks, seats=[])
            if loaded.rules.simultaneous(loaded.state):
                loaded.seats = self._seats_of(s, game, (game.status, bots, head_seq),
                                              fresh=fresh_seats)
            else:
                loaded.seats = read_ahead(s, loaded.game_id, loaded.decision_seq)
            return loaded
        return self._loaded_with(s, game, head_seq, hooks, upto, seats=self._seats_of(
            s, game, (game.status, bots, head_seq), fresh=fresh_seats))

    def _loaded_with(self, s: Session, game: Game, head_seq: int, hooks: int,
                     upto: int | None = None, *, seats: list[Seat]) -> Loaded:
        """The game read for a command from its row, head and ``seats``."""
        rules = self._rules(game.ruleset)
        if game.initial_state is None:
            return Loaded(game, seats, rules, None, 0, "", webhooks=hooks)
        assert game.id is not None
        seq = head_seq if upto is None else max(0, min(head_seq, upto))
        cached = self._states.get(game.id)
        if cached is not None and cached.seq == seq:
            return self._with_sealed(s, Loaded(game, seats, rules, rules.copy(cached.state), seq,
                                                cached.head_hash, cached.decision_seq,
                                                webhooks=hooks))
        state, moves = self._rebuild(s, game, rules, seq)
        if seq == 0:
            head_hash = genesis_hash(game.initial_state)
        elif moves:
            head_hash = moves[-1].hash
        else:
            head_hash = s.exec(
                select(Move.hash).where(Move.game_id == game.id, Move.seq == seq)
            ).one()
        loaded = Loaded(game, seats, rules, state, seq, head_hash,
                        self._decision_seq(s, game.id, seq, moves), webhooks=hooks)
        if upto is None:
            self._remember(loaded)
        return self._with_sealed(s, loaded)

    @staticmethod
    def _with_sealed(s: Session, loaded: Loaded) -> Loaded:
        """Read the answers sealed so far when the pending decision is a simultaneous one (one
        indexed query; none for a game that never has such decisions)."""
        if loaded.state is None or not loaded.rules.simultaneous(loaded.state):
            return loaded
        rows = s.exec(select(SealedOrder).where(
            SealedOrder.game_id == loaded.game_id,
            SealedOrder.decision_seq == loaded.decision_seq)).all()
        loaded.sealed = {row.seat: row.input for row in rows}
        return loaded

    def _rebuild(self, s: Session, game: Game, rules: Ruleset,
                 seq: int) -> tuple[Any, list[Move]]:
        """The engine state after entry ``seq``, from the latest snapshot at or before it and
        the entries after that (returned too); a rollback entry rebuilds the state it names."""
        assert game.id is not None and game.initial_state is not None
        snap = s.exec(_LATEST_SNAPSHOT, params={"game_id": game.id, "seq": seq}).first()
        base_seq = snap.seq if snap is not None else 0
        state = rules.load(snap.state if snap is not None else game.initial_state)
        moves = list(s.exec(_MOVES_BETWEEN, params={"game_id": game.id, "after": base_seq,
                                                    "seq": seq}).all())
        for move in moves:
            if move.kind == MOVE:
                rules.apply(state, move.input)
            elif move.kind == ROLLBACK:
                state, _ = self._rebuild(s, game, rules, rollback_target(move.input, move.seq))
        return state, moves

    def warm_states(self, s: Session, games: Sequence[Game]) -> None:
        """Rebuild the head states of ``games`` that this process does not hold, reading their
        heads, latest snapshots and the moves after those for all of them in three statements
        instead of two or three a game (the mail sender's batch: a game's first mail would
        otherwise rebuild its state alone). A game whose rebuild needs more (a rollback after
        its snapshot, no state-changing entry after it) is left to :meth:`_load` as before;
        :meth:`_load` still reads each game's head, so a state kept here is never used stale."""
        started = {g.id: g for g in games if g.id is not None and g.initial_state is not None}
        if not started:
            return
        heads = dict(s.exec(_HEADS, params={"ids": sorted(started)}).all())
        wanted = {}
        for game_id in started:
            head = int(heads.get(game_id) or 0)
            cached = self._states.get(game_id)
            if head > 0 and (cached is None or cached.seq != head):
                wanted[game_id] = head
        if not wanted:
            return
        snaps = {snap.game_id: snap for snap in
                 s.exec(_LATEST_SNAPSHOTS, params={"ids": sorted(wanted)}).all()}
        # (from the snapshot's own entry on: its hash and kind when nothing follows it)
        after = or_(*(and_(col(Move.game_id) == game_id,
                           col(Move.seq) >= (snaps[game_id].seq if game_id in snaps else 1))
                      for game_id in wanted))
        moves: dict[int, list[Move]] = {}
        for move in s.exec(select(Move).where(after).order_by(col(Move.game_id),
                                                              col(Move.seq))).all():
            moves.setdefault(move.game_id, []).append(move)
        for game_id, head in wanted.items():
            self._warm_one(started[game_id], head, snaps.get(game_id), moves.get(game_id, []))

    def _warm_one(self, game: Game, head: int, snap: Snapshot | None, moves: list[Move]) -> None:
        """Keep ``game``'s state at ``head`` from its snapshot and the moves after it, when
        they alone tell it (see :meth:`warm_states`)."""
        assert game.id is not None and game.initial_state is not None
        base = snap.seq if snap is not None else 0
        changed = [move for move in moves if move.kind in STATE_KINDS]
        if (not moves or moves[-1].seq != head or not changed
                or any(move.kind == ROLLBACK and move.seq > base for move in moves)):
            return
        rules = self._rules(game.ruleset)
        state = rules.load(snap.state if snap is not None else game.initial_state)
        for move in moves:
            if move.kind == MOVE and move.seq > base:
                rules.apply(state, move.input)
        self._states[game.id] = CachedState(head, state, moves[-1].hash,
                                            int(changed[-1].seq))
        self._states.move_to_end(game.id)
        while len(self._states) > STATE_CACHE_SIZE:
            self._states.popitem(last=False)

    @staticmethod
    def _decision_seq(s: Session, game_id: int, seq: int, moves: Any) -> int:
        """The last entry at or before ``seq`` that changed the state (a move or a rollback; 0
        if none): where the pending decision opened."""
        for move in reversed(moves):
            if move.kind in STATE_KINDS:
                return int(move.seq)
        found = s.exec(
            select(func.max(Move.seq)).where(
                Move.game_id == game_id, Move.seq <= seq, col(Move.kind).in_(STATE_KINDS)
            )
        ).one()
        return int(found or 0)

    def forget_seats(self, uid: str) -> None:
        """Drop this process's copy of a game's seats (after a change made outside commands)."""
        with self.session() as s:
            game = self._game(s, uid)
        if game.id is not None:
            self._seat_rows.pop(game.id, None)

    def load(self, s: Session, uid: str, upto: int | None = None) -> Loaded:
        """A game's rows and its state after its last move (or move ``upto``), read in the
        caller's session: for modules that render from a game (mail) inside their own reads."""
        return self._load(s, uid, upto)

    def seats(self, s: Session, game: Game) -> list[Seat]:
        """A game's seats in seat order, read in the caller's session."""
        return self._seats(s, game)

    def _load_as(self, s: Session, uid: str, token: str) -> tuple[Loaded, int]:
        """:meth:`_load` for the seat whose API token is ``token``, and that seat's position:
        the token is checked in the statement that reads the game. Refused as the API refuses
        a token: 401 unknown or revoked, then 404 no such game, then 403 a seat of another
        game."""
        digest = token_hash(token)
        row = (_GAME_HEAD_AND_TOKEN.first(s.connection(), {"uid": uid, "digest": digest})
               if _is_uid(uid) else None)
        if row is None or row[_AFTER_GAME + 3] is None:
            self._refuse_token(s, uid, digest, game_found=row is not None)
        assert row is not None
        game, head, bots, hooks = self._game_of(s, row)
        loaded = self._loaded(s, game, head, bots, hooks, for_move=True)
        return loaded, int(row[_AFTER_GAME + 3])

    @staticmethod
    def _refuse_token(s: Session, uid: str, digest: str, *, game_found: bool) -> NoReturn:
        """Why the token whose hash is ``digest`` seats no one in game ``uid``."""
        seat = s.exec(TOKEN_SEAT, params={"digest": digest}).first()
        if seat is None or seat[3] is not None:
            raise Unauthorized("the API token is unknown or revoked")
        if not game_found:
            raise NotFound(f"no game '{uid}'")
        raise Forbidden("this API token belongs to a seat in another game")

    def _game_and_head(self, s: Session, uid: str) -> tuple[Game, int, int, int]:
        """The game row, how many moves its log holds, how many seats the computer plays and
        how many webhooks it has, in one query."""
        if not _is_uid(uid):
            raise NotFound(f"no game '{uid}'")
        row = _GAME_AND_HEAD_ROW.first(s.connection(), {"uid": uid})
        if row is None:
            raise NotFound(f"no game '{uid}'")
        return self._game_of(s, row)

    @staticmethod
    def _game_of(s: Session, row: tuple[Any, ...]) -> tuple[Game, int, int, int]:
        """The game's object of a row of :data:`_GAME_AND_HEAD`, and its head and counts."""
        game = _GAME_ROWS.of(s, row[:_AFTER_GAME])
        assert game is not None
        return (game, int(row[_AFTER_GAME]), int(row[_AFTER_GAME + 1]),
                int(row[_AFTER_GAME + 2]))

    def _seats_of(self, s: Session, game: Game, key: tuple[str, int, int], *,
                  fresh: bool) -> list[Seat]:
        """The game's seats; once the game has started, reads reuse this process's copy while
        its status, its computer seats and its log length are unchanged (``key``: a started
        game's seats change with log entries: a time bank, a missed deadline, a resignation,
        a hand-over, or with its computer seats). Before the start they are read every time:
        a join changes none of the key, and may be made by another process. Commands that
        change seats ask for ``fresh`` rows of their own session. A copy read by a
        transaction that then failed (the database went away during its flush) is read
        again: that rollback expired its rows, which cannot be refreshed outside their
        session."""
        assert game.id is not None
        cacheable = not fresh and game.status != OPEN
        cached = self._seat_rows.get(game.id)
        if (cacheable and cached is not None and cached[0] == key
                and not any(inspect(seat).expired_attributes for seat in cached[1])):
            return cached[1]
        seats = self._seats(s, game)
        if cacheable:
            self._seat_rows[game.id] = (key, seats)
            if len(self._seat_rows) > STATE_CACHE_SIZE:
                self._seat_rows.clear()
        return seats

    def _remember(self, loaded: Loaded, *, done: bool = False) -> None:
        """Keep the state after a committed (or freshly loaded) move for the next request: a
        copy, as the command may still change its own, unless the command is ``done`` with
        it (it only reads it from now on, for its answer)."""
        if loaded.state is None:
            return
        states = self._states
        state = loaded.state if done else loaded.rules.copy(loaded.state)
        states[loaded.game_id] = CachedState(loaded.seq, state, loaded.head_hash,
                                             loaded.decision_seq)
        states.move_to_end(loaded.game_id)
        while len(states) > STATE_CACHE_SIZE:
            states.popitem(last=False)

    def _legal_for(self, loaded: Loaded, position: int | None) -> list[str]:
        if loaded.state is None or position not in loaded.to_act():
            return []
        return loaded.rules.options(loaded.state, position)

    def _summary(self, loaded: Loaded) -> dict[str, Any]:
        game = loaded.game
        to_act = loaded.to_act() if loaded.state is not None else []
        return {
            "game": game.uid,
            "name": game.name,
            "ruleset": game.ruleset,
            "variant": game.variant,
            OLDER_SETUP: [c if isinstance(c, str) else c.get("name")
                         for c in loaded.rules.circuits_of(game.setup)],
            "setup": game.setup,
            "status": game.status,
            "seq": loaded.seq,
            "decision_seq": loaded.decision_seq,
            "paused": game.paused_at is not None,
            "pause_reason": game.pause_reason,
            "to_act": to_act,
            "sealed": sorted(loaded.sealed),
            "winner": game.winner,
            "fairness": fairness_summary(game, loaded.seats, (loaded.seq, loaded.head_hash)),
            "seats": [
                {
                    "position": seat.position,
                    "name": seat.player_name,
                    **loaded.rules.fields_of(seat.pieces),
                    "pieces": seat.pieces,
                    "bot": seat.is_bot,
                    "level": seat.bot_level if seat.is_bot else None,
                    "accepted": seat.accepted_at is not None,
                    "resigned": seat.resigned_at is not None,
                    "missed_deadlines": seat.missed_deadlines,
                    "bank_seconds": seat.bank_seconds,
                }
                for seat in loaded.seats
            ],
        }

    def _state_body(
        self, loaded: Loaded, position: int | None, spectator: bool = False
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"game": self._summary(loaded), "seq": loaded.seq,
                                "decision_seq": loaded.decision_seq, "you": position}
        if loaded.state is not None:
            body["view"] = loaded.view(position, spectator)
        if position is not None and position in loaded.sealed:
            body["sealed"] = loaded.sealed[position]
        result = loaded.result(position)
        if result is not None:
            body["result"] = result
        return body

    @staticmethod
    def _check_spectators(game: Game) -> None:
        if not game.settings.get("spectators", True):
            raise Forbidden("this game has no spectators: only its players may look at it")


def _is_uid(uid: Any) -> bool:
    """Whether ``uid`` has the form of a game's id (else no query need look for it)."""
    return isinstance(uid, str) and re.fullmatch(r"[0-9a-f]{32}", uid) is not None
