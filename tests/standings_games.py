"""Finished games with places known in advance, for the standings' tests and benchmark.

A race played to its end cannot be steered to a chosen result, so these games are made as
their players would make them (created, each invitation accepted under the player's name) and
then finished at a final position of the engine's own, built with the engine (as
tests/test_results.py builds one): its state is the game's genesis, its status finished at a
chosen time. The standings then read it as any finished game: its seats from the database,
its places from the game's rules (:meth:`app.service.records.Loaded.result`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import select

from app.core.models import FINISHED, Game
from app.games import ruleset
from app.games.greatrace.engine.game import GreatRace
from app.games.greatrace.engine.options import prestige
from app.games.greatrace.engine.state import OVER as RACE_OVER
from app.games.titanrace.engine import new_game
from app.games.titanrace.engine.rules import WINNING_Y
from app.games.titanrace.engine.state import OVER
from app.service import GameService

TITANS = ("grinder", "rassik", "craken", "slaugg", "ragnarok", "chtoolhoo")
CREWS = ("french", "belgian", "italian", "english")
TITAN_RACE, GREAT_RACE = "titan-race", "great-race"


@dataclass(frozen=True)
class Player:
    """A seat: a person (``email``, ``name``) or the computer at ``level``."""

    email: str = ""
    name: str = ""
    level: str | None = None

    def spec(self) -> dict[str, Any]:
        if self.level is not None:
            return {"bot": True, "level": self.level}
        return {"email": self.email}


def computer(level: str = "easy") -> Player:
    return Player(level=level)


def titan_race_over(places: Sequence[int]) -> dict[str, Any]:
    """A finished Titan Race whose seat ``i`` placed ``places[i]`` (one winner, placed 1;
    equal places share the rows still to go)."""
    race = new_game(list(TITANS[:len(places)]))
    st = race.state
    winners = []
    for seat, place in enumerate(places):
        titan = st.titans[TITANS[seat]]
        assert titan.seat == seat
        titan.pos = (0, WINNING_Y if place == 1 else WINNING_Y - 4 * place)
        if place == 1:
            winners.append(titan.name)
    assert len(winners) == 1, "a Titan Race has one winner"
    st.winner, st.winners, st.phase = winners[0], winners, OVER
    return ruleset(TITAN_RACE).dump(race)


def great_race_over(places: Sequence[int | None]) -> dict[str, Any]:
    """A finished Great Race whose seat ``i`` placed ``places[i]`` (None: it never arrived),
    in the order they arrived, each place its own."""
    game = GreatRace.new(list(CREWS[:len(places)]))
    st = game.state
    arrived = sorted((place, seat) for seat, place in enumerate(places) if place is not None)
    st.finishers = []
    for order, (_place, seat) in enumerate(arrived, start=1):
        crew = st.crews[CREWS[seat]]
        assert crew.seat == seat
        crew.finished, crew.engine, crew.chassis, crew.money = order, 1, 0, 0
        st.finishers.append(CREWS[seat])
    st.scores = {name: prestige(st.crews[name]) for name in st.finishers}
    st.phase = RACE_OVER
    found = {p.position: p.place for p in ruleset(GREAT_RACE).placings(
        game, {st.crews[c].seat: [c] for c in CREWS[:len(places)]})}
    assert [found[seat] for seat in range(len(places))] == list(places), found
    return ruleset(GREAT_RACE).dump(game)


def finished_game(service: GameService, players: Sequence[Player], places: Sequence[Any],
                  finished_at: datetime, *, game: str = TITAN_RACE,
                  spectators: bool = True, name: str = "Friday race") -> str:
    """A game of ``players`` finished at ``finished_at`` with seat ``i`` placed
    ``places[i]``; its id."""
    created = service.create_game(seats=[player.spec() for player in players], seed=5,
                                  rules_name=game, name=name,
                                  settings={"spectators": spectators})
    for invitation in created["invitations"]:
        service.accept(invitation["invite_token"],
                       name=players[invitation["position"]].name or None)
    final = titan_race_over(places) if game == TITAN_RACE else great_race_over(places)
    finish(service, created["game"], final, finished_at)
    return str(created["game"])


def finish(service: GameService, uid: str, final: dict[str, Any], when: datetime) -> None:
    """Game ``uid`` (not started) over at ``when``, at engine state ``final``."""
    with service.session(write=True) as s:
        row = s.exec(select(Game).where(Game.uid == uid)).one()
        row.initial_state, row.status = final, FINISHED
        row.started_at, row.finished_at = when, when
        s.add(row)
        s.commit()
