"""The Great Race state: plain data, cheap to copy, serialised to JSON and back without loss."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from app.games.logged import Suspended
from app.games.pieces import piece_from_json, piece_to_json
from app.games.rng import RandomSource, rng_from_json

from .board import Space
from .pieces import BOXES, Box, Card, Crew, TileCode

BIVOUAC: Final = "bivouac"
PLANNING: Final = "planning"
CONVOY: Final = "convoy"
OVER: Final = "over"
PHASES: Final = (BIVOUAC, PLANNING, CONVOY, OVER)
FIRST_VERSION: Final = 1
"""The rules of the games set up before a state said which rules it plays by (a state without
``version``): the race is called off at the end of game turn 30 when nobody has finished, and
the Belgian leader's minimum of 2 cards leaves out the purple cities (docs/great-race-rules.md
section 11). Their logs replay by these rules, so they reach the states they reached."""
PUBLIC_FLOW: Final = 3
"""The first rules version whose flow depends on public facts only: whether a decision is asked,
of whom and in which order never depends on which cards a hand holds, on the bag or the deck
(docs/great-race-rules.md sections 10 and 11). Before it, a decision with one legal answer was
applied without asking even where only the hidden cards made it one (an avoid decision of a
crew holding no Militia, a sequence with no card to play)."""


def no_assistants() -> dict[Box, int]:
    return dict.fromkeys(BOXES, 0)


@dataclass(slots=True)
class CrewState:
    crew: Crew
    seat: int
    space: Space
    money: int
    petrol: int
    engine: int
    chassis: int
    hand: list[Card] = field(default_factory=list)
    assistants: dict[Box, int] = field(default_factory=no_assistants)
    """The assistants on the dashboard during the convoy (after the reveal)."""
    plan: dict[Box, int] | None = None
    """The plan given during the planning phase, secret until every plan is in."""
    passed: bool = False
    progress: int = 0
    finished: int | None = None
    """The finishing place (1, 2, ...) once the race of this vehicle is over."""
    leader_used: bool = False
    hand_answers: int = 0
    """How many decisions this crew has answered choosing among options read from its own
    hidden cards (from rules version :data:`PUBLIC_FLOW` on; written in the state only then):
    each answer told the others something of those cards, so a takeback by another crew
    after it is refused (``GreatRaceRuleset.reveals_hidden``)."""

    @property
    def racing(self) -> bool:
        return self.finished is None

    @property
    def left(self) -> int:
        """Assistants still on the dashboard."""
        return sum(self.assistants.values())

    @property
    def active(self) -> bool:
        """Still takes convoy sequences this turn."""
        return self.racing and not self.passed and self.left > 0

    def copy(self) -> CrewState:
        return CrewState(
            self.crew,
            self.seat,
            self.space,
            self.money,
            self.petrol,
            self.engine,
            self.chassis,
            list(self.hand),
            dict(self.assistants),
            dict(self.plan) if self.plan is not None else None,
            self.passed,
            self.progress,
            self.finished,
            self.leader_used,
            self.hand_answers,
        )

    def to_json(self, version: int = FIRST_VERSION) -> dict[str, Any]:
        """The crew as JSON (``hand_answers`` only under the rules that count them)."""
        return piece_to_json(self, () if version >= PUBLIC_FLOW else ("hand_answers",))

    @staticmethod
    def from_json(data: dict[str, Any]) -> CrewState:
        return piece_from_json(CrewState, data, defaults={"hand_answers": 0})


@dataclass(slots=True)
class GreatRaceState:
    start: str
    leaders: bool
    crews: dict[Crew, CrewState]
    """Every crew of the game, in seat order."""
    order: list[Crew]
    """This game turn's turn order (crews whose race is over are skipped)."""
    track: list[Crew]
    """The progression track read from the front: highest progress first, and on one value the
    token lower in the stack (the earlier arrival) first."""
    rng: RandomSource
    version: int = FIRST_VERSION
    """The rules version the game plays by: the engine's when the game was set up
    (:data:`FIRST_VERSION` for a state written without one)."""
    turn: int = 1
    phase: str = BIVOUAC
    tiles: dict[Space, TileCode] = field(default_factory=dict)
    bag: list[TileCode] = field(default_factory=list)
    """The bag, top first (its order is hidden from every player)."""
    removed: list[TileCode] = field(default_factory=list)
    drawn: list[TileCode] = field(default_factory=list)
    """Tiles drawn and waiting to be placed."""
    deck: list[Card] = field(default_factory=list)
    """The draw pile, top first."""
    discard: list[Card] = field(default_factory=list)
    market: list[Card] = field(default_factory=list)
    takers: list[Crew] = field(default_factory=list)
    """Crews still to take a market card this bivouac, in the order they take."""
    active: Crew | None = None
    """Whose convoy sequence it is."""
    started: bool = False
    """The active crew has done something in this sequence (petrol can no longer be bought)."""
    tracker: list[Card] = field(default_factory=list)
    """A Tracker's drawn cards waiting for the keep decision."""
    finishers: list[Crew] = field(default_factory=list)
    scores: dict[Crew, dict[str, int]] | None = None
    window: dict[str, Any] | None = None
    """The decision an action is waiting for (kind, crew, options and details)."""
    suspended: Suspended[GreatRaceState] | None = None
    looks: int = 0
    """How many of the inputs applied to reach this state met chance or hidden information:
    drew a tile or a card, revealed the sealed plans, or (before rules version
    :data:`PUBLIC_FLOW`) asked or skipped another crew's decision because of which cards it
    held. Counted since the state was read from JSON (never written), so only the states of
    one run of inputs compare: a chain of inputs stops being its sender's to plan once this
    changes (``GreatRaceRuleset.unseen``)."""

    def copy(self) -> GreatRaceState:
        """(The fields in order, by position: the searching players copy states by the
        hundred thousand.)"""
        return GreatRaceState(
            self.start,
            self.leaders,
            {name: crew.copy() for name, crew in self.crews.items()},
            list(self.order),
            list(self.track),
            self.rng.copy(),
            self.version,
            self.turn,
            self.phase,
            dict(self.tiles),
            list(self.bag),
            list(self.removed),
            list(self.drawn),
            list(self.deck),
            list(self.discard),
            list(self.market),
            list(self.takers),
            self.active,
            self.started,
            list(self.tracker),
            list(self.finishers),
            {k: dict(v) for k, v in self.scores.items()} if self.scores else self.scores,
            _copy_window(self.window),
            self.suspended,
            self.looks,
        )

    def to_json(self) -> dict[str, Any]:
        """The state as JSON; ``version`` is written only after the first rules, so a state of
        a game set up before versions is written exactly as it was stored (its snapshots still
        match a replay)."""
        data = self._json()
        if self.version != FIRST_VERSION:
            data["version"] = self.version
        return data

    def _json(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "leaders": self.leaders,
            "crews": [crew.to_json(self.version) for crew in self.crews.values()],
            "order": list(self.order),
            "track": list(self.track),
            "rng": self.rng.to_json(),
            "turn": self.turn,
            "phase": self.phase,
            "tiles": dict(self.tiles),
            "bag": list(self.bag),
            "removed": list(self.removed),
            "drawn": list(self.drawn),
            "deck": list(self.deck),
            "discard": list(self.discard),
            "market": list(self.market),
            "takers": list(self.takers),
            "active": self.active,
            "started": self.started,
            "tracker": list(self.tracker),
            "finishers": list(self.finishers),
            "scores": {k: dict(v) for k, v in self.scores.items()} if self.scores else self.scores,
            "window": _copy_window(self.window),
            "suspended": self.suspended.to_json() if self.suspended else None,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> GreatRaceState:
        crews = [CrewState.from_json(entry) for entry in data["crews"]]
        scores = data["scores"]
        return GreatRaceState(
            start=data["start"],
            leaders=data["leaders"],
            crews={crew.crew: crew for crew in crews},
            order=list(data["order"]),
            track=list(data["track"]),
            rng=rng_from_json(data["rng"]),
            version=data.get("version", FIRST_VERSION),
            turn=data["turn"],
            phase=data["phase"],
            tiles=dict(data["tiles"]),
            bag=list(data["bag"]),
            removed=list(data["removed"]),
            drawn=list(data["drawn"]),
            deck=list(data["deck"]),
            discard=list(data["discard"]),
            market=list(data["market"]),
            takers=list(data["takers"]),
            active=data["active"],
            started=data["started"],
            tracker=list(data["tracker"]),
            finishers=list(data["finishers"]),
            scores={k: dict(v) for k, v in scores.items()} if scores else scores,
            window=_copy_window(data["window"]),
            suspended=(
                Suspended.from_json(data["suspended"], GreatRaceState.from_json)
                if data["suspended"]
                else None
            ),
        )

    def racing(self) -> list[CrewState]:
        """The crews still racing, in turn order."""
        return [self.crews[name] for name in self.order if self.crews[name].racing]


def _copy_window(window: dict[str, Any] | None) -> dict[str, Any] | None:
    if window is None:
        return None
    return {k: list(v) if isinstance(v, list) else v for k, v in window.items()}
