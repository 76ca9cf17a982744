"""Titan Race as the game service sees it (the :class:`app.games.base.Ruleset` protocol)."""

from __future__ import annotations

from typing import Any

from app.clock import QUICK_DECISIONS
from app.games.base import (
    CONTINUES,
    PASSIVE_INPUTS,
    QUICK,
    TURN,
    ClockKind,
    LoggedRuleset,
    MoveRejected,
    SeatSetup,
    SetupError,
    rules_version,
)
from app.games.errors import EngineError
from app.games.rng import Dealing

from .engine import ENGINE_VERSION, VARIANTS, Race, new_game
from .engine.bot import choose
from .engine.cards import TITANS
from .engine.circuits import resolve_circuit
from .engine.notation import normalise
from .engine.race import check_teams
from .engine.state import RaceState


class TitanRaceRuleset(LoggedRuleset):
    """Titan Race through :mod:`app.games.titanrace.engine`."""

    normalise_input = staticmethod(normalise)

    name = "titan-race"
    version = ENGINE_VERSION
    variants: tuple[str, ...] = tuple(VARIANTS)
    default_circuits: tuple[str, ...] = ("kaldheira",)
    most_seats = 6

    def check_circuits(self, variant: str, circuits: list[Any]) -> None:
        if variant == "grand-slam" and len(circuits) != 3:
            raise SetupError("Grand Slam is raced over three circuits, one per lap")
        if len(circuits) not in (1, 3):
            raise SetupError("a game uses one circuit, or three for Grand Slam")
        for circuit in circuits:
            try:
                resolve_circuit(circuit)
            except EngineError as exc:
                raise SetupError(str(exc)) from None

    def seat_count(self, variant: str, seats: int) -> None:
        if variant not in VARIANTS:
            raise SetupError(f"unknown variant '{variant}'; choose one of {', '.join(VARIANTS)}")
        allowed = {"two-player": (2,), "teams": (4, 6)}.get(variant, (3, 4, 5, 6))
        if seats not in allowed:
            raise SetupError(
                f"a {variant} game has {' or '.join(str(n) for n in allowed)} players, not {seats}"
            )

    def check_seats(self, variant: str, seats: list[SeatSetup]) -> None:
        self.seat_count(variant, len(seats))
        self._titans(seats, 2 if variant == "two-player" else 1, Dealing())
        if variant != "teams":
            return
        teams = [s.team for s in seats]
        if any(team is None for team in teams):
            raise SetupError("in a teams game every seat needs a team")
        sizes = {teams.count(team) for team in set(teams)}
        if len(sizes) != 1 or (len(seats), len(set(teams))) not in ((4, 2), (6, 2), (6, 3)):
            raise SetupError("teams are 2 teams of 2 (4 players), or 2 of 3 or 3 of 2 (6 players)")
        for i, team in enumerate(teams):
            if team == teams[(i + 1) % len(teams)]:
                raise SetupError(
                    f"seats {i} and {(i + 1) % len(teams)} are teammates: teammates may not "
                    "sit next to each other"
                )

    def start(
        self, *, variant: str, circuits: list[Any], seats: list[SeatSetup], dealing: Dealing,
        version: int | None = None,
    ) -> tuple[dict[str, Any], list[list[str]]]:
        rules_version(self.name, version, self.version)  # (one version so far: nothing differs)
        self.check_seats(variant, seats)
        per_seat = 2 if variant == "two-player" else 1
        chosen = self._titans(seats, per_seat, dealing)
        if variant == "two-player":
            order = [chosen[0][0], chosen[1][0], chosen[0][1], chosen[1][1]]
        else:
            order = [titans[0] for titans in chosen]
        teams = None
        if variant == "teams":
            team_ids = sorted({s.team for s in seats if s.team is not None})
            if len(team_ids) < 2 or any(s.team is None for s in seats):
                raise SetupError("in a teams game every seat needs a team")
            teams = [[chosen[i][0] for i, s in enumerate(seats) if s.team == t] for t in team_ids]
        anytime = [
            chosen[i][k] for i, s in enumerate(seats) if s.anytime_windows for k in range(per_seat)
        ]
        try:
            boards = [resolve_circuit(c) for c in circuits]
            if teams is not None:
                check_teams(order, teams)
            race = new_game(
                order,
                circuits=boards,
                variant=variant,
                teams=teams,
                rng=dealing.source(),
                anytime_windows=anytime,
            )
        except EngineError as exc:
            raise SetupError(str(exc)) from None
        return race.state.to_json(), chosen

    @staticmethod
    def _titans(seats: list[SeatSetup], per_seat: int, dealing: Dealing) -> list[list[str]]:
        """Each seat's Titans: its choice, else drawn at random from those nobody chose."""
        taken: list[str] = []
        for seat in seats:
            for titan in seat.titans:
                if titan not in TITANS:
                    raise SetupError(f"unknown Titan '{titan}'; the Titans are {', '.join(TITANS)}")
                if titan in taken:
                    raise SetupError(f"{titan} is chosen by two seats")
                taken.append(titan)
            if len(seat.titans) > per_seat:
                raise SetupError(f"a seat races {per_seat} Titan(s) in this variant")
        free = [t for t in TITANS if t not in taken]
        dealing.setup_source(0x7171).shuffle(free, "titans")
        return [
            list(s.titans) + [free.pop() for _ in range(per_seat - len(s.titans))] for s in seats
        ]

    def load(self, state: dict[str, Any]) -> Race:
        return Race(RaceState.from_json(state), initial={})

    def dump(self, game: Race) -> dict[str, Any]:
        return game.state.to_json()

    def to_act(self, game: Race) -> list[int]:
        seat = game.seat_to_act()
        return [] if seat is None else [seat]

    def unseen(self, game: Race) -> int:
        """The face-down deck: a card drawn from it is in no outcome."""
        return len(game.state.deck)

    def options(self, game: Race, seat: int | None = None) -> list[str]:
        return game.options()

    def simultaneous(self, game: Race) -> bool:
        return False

    def own_input(self, game: Race, seat: int, text: str) -> str:
        raise MoveRejected("Titan Race has no simultaneous decisions", game.options())

    def pending(self, game: Race) -> dict[str, Any] | None:
        return game.pending()

    def view(self, game: Race, seat: int | None, spectator: bool) -> dict[str, Any]:
        if seat is None and not spectator:
            return game.view()
        return game.view(seat=seat, spectator=spectator)

    def mark_sealed(self, view: dict[str, Any], seats: list[int],
                    own: str | None = None) -> dict[str, Any]:
        return view

    def winners(self, game: Race) -> list[str] | None:
        return list(game.state.winners) if game.is_over else None

    def bot_move(self, game: Race, seat: int | None = None) -> str:
        return choose(game)

    def timeout_move(self, game: Race, mode: str, seat: int | None = None) -> str:
        if mode == "pass":
            options = game.options()
            for passive in PASSIVE_INPUTS:
                if passive in options:
                    return passive
        return choose(game)

    def same_turn(self, first: dict[str, Any], now: dict[str, Any]) -> bool:
        """A Titan's turn is the pick of its die, the first round's start, its moves and its
        end."""
        return (now.get("kind") in ("start", "turn")
                and first.get("kind") in ("pick", "start", "turn")
                and now.get("titan") == first.get("titan"))

    def clock_kind(self, pending: dict[str, Any]) -> ClockKind:
        """Reactions and pirates are quick; a turn's start and moves go on after its pick."""
        kind = pending.get("kind")
        if kind in QUICK_DECISIONS:
            return QUICK
        return CONTINUES if kind in ("start", "turn") else TURN

    def redact_outcomes(self, outcomes: list[list[str]]) -> list[list[str]]:
        """Dice are public once rolled; a shuffled deck's order and a stolen card are not."""
        hidden = {"shuffle": "shuffle", "steal": "steal a card"}
        return [[hidden.get(o.split(" ", 1)[0], o) for o in part] for part in outcomes]

    def public_input(self, text: str) -> str:
        """Every Titan Race input is public."""
        return text
