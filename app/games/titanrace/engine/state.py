"""The race state: plain data, cheap to copy, serialised to JSON and back without loss."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.games.logged import Suspended
from app.games.pieces import piece_from_json, piece_to_json
from app.games.rng import RandomSource, Rng, rng_from_json

from .circuits import Circuit, circuit_from_data
from .geometry import ROWS, Pos

FIRST_VERSION = 1
"""The rules version of a state that names none: every game set up before versions."""
PICK = "pick"
START = "start"
TURN = "turn"
OVER = "over"


@dataclass(slots=True)
class TitanState:
    name: str
    seat: int
    """The player who controls this Titan (in the 2-player variant one player has two)."""
    pos: Pos | None = None
    life: int = 6
    ko: bool = False
    ko_passed: bool = False
    hand: list[str] = field(default_factory=list)
    ability_used: bool = False
    team: int | None = None
    anytime_windows: bool = False
    """The player asked to be offered a window at other players' turn starts (RULINGS 6b)."""

    def copy(self) -> TitanState:
        return TitanState(
            self.name,
            self.seat,
            self.pos,
            self.life,
            self.ko,
            self.ko_passed,
            list(self.hand),
            self.ability_used,
            self.team,
            self.anytime_windows,
        )

    def to_json(self) -> dict[str, Any]:
        return piece_to_json(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> TitanState:
        return piece_from_json(TitanState, data, tuples=("pos",))


@dataclass(slots=True)
class TurnState:
    """What the Titan whose turn it is has done so far this turn."""

    die: str | None = None
    """The colour picked this turn."""
    face: str | None = None
    """The face being performed: the picked colour, or the new face after a pentacle reroll."""
    imitated: str | None = None
    """Under purple, the face being imitated once a move, trap or hit has fixed it."""
    moved: bool = False
    part_done: bool = False
    """The red trap / green hit of the face is done."""
    card_played: bool = False
    rerolled: bool = False
    reroll_pos: Pos | None = None
    """Where the die movement ended on a pentacle space (a reroll is possible while still there)."""

    def copy(self) -> TurnState:
        return TurnState(
            self.die,
            self.face,
            self.imitated,
            self.moved,
            self.part_done,
            self.card_played,
            self.rerolled,
            self.reroll_pos,
        )

    @property
    def effective_face(self) -> str | None:
        return self.imitated if self.face == "purple" else self.face

    def to_json(self) -> dict[str, Any]:
        return piece_to_json(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> TurnState:
        return piece_from_json(TurnState, data, tuples=("reroll_pos",))


@dataclass(slots=True)
class RaceState:
    variant: str
    circuits: tuple[Circuit, ...]
    titans: dict[str, TitanState]
    """All Titans in seating order."""
    order: list[str]
    """Turn order: ``order[0]`` plays first every round."""
    teams: list[list[str]] | None = None
    round: int = 1
    turn_index: int = 0
    phase: str = PICK
    dice: list[str] = field(default_factory=list)
    turn: TurnState = field(default_factory=TurnState)
    traps: set[int] = field(default_factory=set)
    deck: list[str] = field(default_factory=list)
    discard: list[str] = field(default_factory=list)
    rng: RandomSource = field(default_factory=Rng)
    forced_rolls: list[list[str]] = field(default_factory=list)
    winner: str | None = None
    winners: list[str] = field(default_factory=list)
    window: dict[str, Any] | None = None
    """A pending reaction or pirate decision inside a suspended input."""
    suspended: Suspended[RaceState] | None = None
    version: int = FIRST_VERSION
    """The rules version the race plays by, to its end: the engine's when it was set up
    (:data:`app.games.titanrace.engine.race.ENGINE_VERSION`; docs/rules-summary.md says what
    each changed)."""

    @property
    def boards(self) -> int:
        return len(self.circuits)

    @property
    def cycle_rows(self) -> int:
        return ROWS * len(self.circuits)

    def copy(self) -> RaceState:
        return RaceState(
            variant=self.variant,
            circuits=self.circuits,
            titans={name: t.copy() for name, t in self.titans.items()},
            order=list(self.order),
            teams=self.teams,
            round=self.round,
            turn_index=self.turn_index,
            phase=self.phase,
            dice=list(self.dice),
            turn=self.turn.copy(),
            traps=set(self.traps),
            deck=list(self.deck),
            discard=list(self.discard),
            rng=self.rng.copy(),
            forced_rolls=[list(r) for r in self.forced_rolls],
            winner=self.winner,
            winners=list(self.winners),
            window=self.window,
            suspended=self.suspended,
            version=self.version,
        )

    def to_json(self) -> dict[str, Any]:
        """The state as JSON; ``version`` is written only after the first rules, so the state
        of a race set up before versions is written exactly as it was stored (its snapshots and
        its log's first hash stay as they were)."""
        data: dict[str, Any] = {
            "variant": self.variant,
            "circuits": [c.to_data() for c in self.circuits],
            "titans": [t.to_json() for t in self.titans.values()],
            "order": list(self.order),
            "teams": [list(team) for team in self.teams] if self.teams is not None else None,
            "round": self.round,
            "turn_index": self.turn_index,
            "phase": self.phase,
            "dice": list(self.dice),
            "turn": self.turn.to_json(),
            "traps": sorted(self.traps),
            "deck": list(self.deck),
            "discard": list(self.discard),
            "rng": self.rng.to_json(),
            "forced_rolls": [list(r) for r in self.forced_rolls],
            "winner": self.winner,
            "winners": list(self.winners),
            "window": self.window,
            "suspended": self.suspended.to_json() if self.suspended is not None else None,
        }
        if self.version != FIRST_VERSION:
            data["version"] = self.version
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> RaceState:
        titans = [TitanState.from_json(t) for t in data["titans"]]
        return RaceState(
            variant=data["variant"],
            circuits=tuple(circuit_from_data(c) for c in data["circuits"]),
            titans={t.name: t for t in titans},
            order=list(data["order"]),
            teams=[list(team) for team in data["teams"]] if data["teams"] is not None else None,
            round=data["round"],
            turn_index=data["turn_index"],
            phase=data["phase"],
            dice=list(data["dice"]),
            turn=TurnState.from_json(data["turn"]),
            traps=set(data["traps"]),
            deck=list(data["deck"]),
            discard=list(data["discard"]),
            rng=rng_from_json(data["rng"]),
            forced_rolls=[list(r) for r in data["forced_rolls"]],
            winner=data["winner"],
            winners=list(data["winners"]),
            window=data["window"],
            suspended=(
                Suspended.from_json(data["suspended"], RaceState.from_json)
                if data["suspended"] is not None
                else None
            ),
            version=data.get("version", FIRST_VERSION),
        )
