"""Which finished games a table counts, and who each of their seats is and where it placed.

A seat at the end of a game is (:func:`identity`):

- a **former player** when its player asked to be forgotten (``Seat.forgotten_at``): no longer
  linked to any address;
- a **person**, by the address holding it at the end, when it was taken by its player (its
  invitation used: ``invite_token_hash`` cleared). A seat replaced mid-game counts for whoever
  took it over; a seat its player resigned, or the clock handed to the computer, still counts
  as that player's game, with the place it reached;
- else **the computer**, by its level: a seat made for the computer, one filled at the start
  because nobody took it, one declined in a rematch, or one offered to a new player who never
  came.

Places come from the game's own rules (:meth:`app.service.records.Loaded.result`: what the
game page, the game-over mail, the API and the command line show); seats the rules leave
without a place (one that never reached the finish, say) share the rank after the placed ones.
A finished game's places never change while it stays finished: they are kept in this process
(:data:`PLACES`), keyed by the game and its finishing time, so that a table of hundreds of games
reads its engine states once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final, NamedTuple

from sqlalchemy import ColumnElement, and_
from sqlalchemy import select as core_select
from sqlmodel import Session, col, select

from app.core.i18n import N_
from app.core.models import FINISHED, Game, Seat, table_of
from app.games import GAMES
from app.service import BadRequest, GameService

from .figures import COMPUTER, FORMER, PERSON, Entry, Result
from .finals import Places, final_places

PLACES_KEPT: Final = 20_000
"""Finished games whose places this process keeps (a few hundred bytes each)."""
PLACES: OrderedDict[tuple[str, str], dict[int, int | None]] = OrderedDict()
"""Each finished game's place by seat position, by (game id, finishing time)."""
CHUNK: Final = 500
"""Games read per statement (SQLite's limit on a statement's parameters is far above)."""

UNKNOWN_GAME: Final = N_("there is no game '{game}' here: choose one of {games}")
BAD_DATE: Final = N_("'{text}' is not a date: give one such as 2026-09-01")
BACKWARDS: Final = N_("the season ends before it begins: {start} is after {end}")


@dataclass(frozen=True)
class Season:
    """A date range on the games' finishing times (UTC), both days included; None: open."""

    start: date | None = None
    end: date | None = None

    def condition(self) -> ColumnElement[bool]:
        """The range as a condition on ``games.finished_at``."""
        found: list[ColumnElement[bool]] = [col(Game.finished_at).is_not(None)]
        if self.start is not None:
            found.append(col(Game.finished_at) >= datetime.combine(self.start, time(), UTC))
        if self.end is not None:
            after = datetime.combine(self.end + timedelta(days=1), time(), UTC)
            found.append(col(Game.finished_at) < after)
        return and_(*found)

    def to_json(self) -> dict[str, str | None]:
        return {"from": self.start.isoformat() if self.start else None,
                "to": self.end.isoformat() if self.end else None}


def _day(text: str | None) -> date | None:
    text = (text or "").strip()
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        fields = {"text": text[:40]}
        raise BadRequest(BAD_DATE.format(**fields), words=(BAD_DATE, fields)) from None


def season(start: str | None, end: str | None) -> Season:
    """The season of the ``from`` and ``to`` fields (``2026-09-01``; empty: open); BadRequest
    for a text that is no date, or a range that ends before it begins."""
    found = Season(_day(start), _day(end))
    if found.start and found.end and found.start > found.end:
        fields = {"start": found.start.isoformat(), "end": found.end.isoformat()}
        raise BadRequest(BACKWARDS.format(**fields), words=(BACKWARDS, fields))
    return found


def game_name(text: str | None) -> str:
    """The game (a registered ruleset's name) of the ``game`` field; the first game when
    empty; BadRequest for an unknown one."""
    text = (text or "").strip()
    if not text:
        return next(iter(GAMES))
    if text not in GAMES:
        fields = {"game": text[:40], "games": ", ".join(GAMES)}
        raise BadRequest(UNKNOWN_GAME.format(**fields), words=(UNKNOWN_GAME, fields))
    return text


# ---------------------------------------------------------------------------- who sat


class GameRow(NamedTuple):
    """What a table reads of a finished game (not its JSON state or set-up)."""

    id: int
    uid: str
    finished_at: datetime
    settings: dict[str, Any]


GAME_COLUMNS: Final = tuple(table_of(Game).c[name] for name in GameRow._fields)


class SeatRow(NamedTuple):
    """What a table reads of a seat."""

    id: int
    game_id: int
    position: int
    email: str
    player_name: str
    invite_token_hash: str | None
    forgotten_at: datetime | None
    bot_level: str


SEAT_COLUMNS: Final = tuple(table_of(Seat).c[name] for name in SeatRow._fields)


def identity(seat: SeatRow) -> tuple[str, str]:
    """(kind, who) of a seat at the end of its game (see the module's docstring)."""
    if seat.forgotten_at is not None:
        return FORMER, f"seat:{seat.id}"
    if seat.email and seat.invite_token_hash is None:
        return PERSON, seat.email.strip().lower()
    return COMPUTER, seat.bot_level


def is_person(seat: SeatRow) -> bool:
    return identity(seat)[0] == PERSON


def person_seat() -> ColumnElement[bool]:
    """:func:`is_person` as a condition on the seats table."""
    return and_(col(Seat.email) != "", col(Seat.invite_token_hash).is_(None),
                col(Seat.forgotten_at).is_(None))


# ---------------------------------------------------------------------------- places


def _key(game: GameRow) -> tuple[str, str]:
    return game.uid, game.finished_at.isoformat()


def places_of(service: GameService, s: Session, games: Sequence[GameRow]
              ) -> dict[int, Places]:
    """Each finished game's place by seat position, read from :data:`PLACES` or from the
    games' final states (app/features/standings/finals.py)."""
    found: dict[int, Places] = {}
    missing = []
    for game in games:
        kept = PLACES.get(_key(game))
        if kept is None:
            missing.append(game)
        else:
            found[game.id] = kept
    for part in _chunk_rows(missing):
        placed = final_places(service, s, [(game.id, game.uid) for game in part])
        for game in part:
            found[game.id] = PLACES[_key(game)] = placed[game.id]
    while len(PLACES) > PLACES_KEPT:
        PLACES.popitem(last=False)
    return found


def _chunk_rows(rows: Sequence[GameRow]) -> Iterable[Sequence[GameRow]]:
    for start in range(0, len(rows), CHUNK):
        yield rows[start:start + CHUNK]


def ranks(places: dict[int, int | None], positions: Iterable[int]) -> dict[int, int]:
    """Each seat's rank: its place; a seat without one ranks after every placed seat."""
    placed = [place for place in places.values() if place is not None]
    last = 1 + len(placed)
    return {position: places.get(position) or last for position in positions}


# ---------------------------------------------------------------------------- the games


def _chunks(ids: Sequence[int]) -> Iterable[Sequence[int]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start:start + CHUNK]


def _seats_of(s: Session, ids: Sequence[int]) -> dict[int, list[SeatRow]]:
    found: dict[int, list[SeatRow]] = {game_id: [] for game_id in ids}
    for part in _chunks(ids):
        for row in s.execute(core_select(*SEAT_COLUMNS).where(col(Seat.game_id).in_(part))
                             .order_by(col(Seat.game_id), col(Seat.position))).all():
            seat = SeatRow(*row)
            found[seat.game_id].append(seat)
    return found


def finished_games(s: Session, game: str, period: Season,
                   addresses: Sequence[str]) -> list[GameRow]:
    """The finished games of ``game`` in ``period`` in which one of ``addresses`` held a
    person's seat."""
    if not addresses:
        return []
    return [GameRow(*row) for row in s.execute(
        core_select(*GAME_COLUMNS).where(
            col(Game.status) == FINISHED, col(Game.ruleset) == game, period.condition(),
            col(Game.id).in_(select(Seat.game_id).where(person_seat(),
                                                        col(Seat.email).in_(addresses))))
        .order_by(col(Game.finished_at), col(Game.id))).all()]


def results(service: GameService, s: Session, games: Sequence[GameRow],
            seats: dict[int, list[SeatRow]] | None = None) -> list[Result]:
    """The :class:`Result` of each of ``games`` (finished), its seats read when not given."""
    seats = seats if seats is not None else _seats_of(s, [game.id for game in games])
    places = places_of(service, s, games)
    found = []
    for game in games:
        rows = seats.get(game.id, [])
        rank = ranks(places.get(game.id, {}), [seat.position for seat in rows])
        entries = []
        for seat in rows:
            kind, who = identity(seat)
            entries.append(Entry(who, kind, seat.player_name if kind == PERSON else who,
                                 rank[seat.position]))
        found.append(Result(game.id, game.finished_at, tuple(entries)))
    return found


def address_table(service: GameService, email: str, game: str,
                  period: Season) -> list[Result]:
    """The automatic table of ``email``: the finished games of ``game`` in ``period`` in which
    it held a person's seat (with everyone who sat in them). Only games it played: the table
    tells it nothing of its friends' other games."""
    with service.session() as s:
        return results(service, s, finished_games(s, game, period, [email]))


def group_table(service: GameService, viewer: str, members: Sequence[str], game: str,
                period: Season) -> list[Result]:
    """The table of a group of ``members``: the finished games of ``game`` in ``period`` whose
    every person's seat is a member's, with two members at least, and that ``viewer`` may see
    (it sat in it, or the game lets spectators look on: the group shows nothing its owner could
    not see on the game's page)."""
    wanted = set(members)
    with service.session() as s:
        games = finished_games(s, game, period, sorted(wanted))
        seats = _seats_of(s, [game.id for game in games])
        kept = [game for game in games
                if _among(seats[game.id], wanted) and _visible(game, seats[game.id], viewer)]
        return results(service, s, kept, seats)


def _among(seats: Sequence[SeatRow], members: set[str]) -> bool:
    people = [identity(seat)[1] for seat in seats if is_person(seat)]
    return len(people) >= 2 and all(person in members for person in people)


def _visible(game: GameRow, seats: Sequence[SeatRow], viewer: str) -> bool:
    settings: dict[str, Any] = game.settings or {}
    return bool(settings.get("spectators", True)) or any(
        is_person(seat) and identity(seat)[1] == viewer for seat in seats)
