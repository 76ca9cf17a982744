"""Owl Dice's state: the owls (each one seat's piece), the pellet deck, the moon die and the
round, copied without sharing and written to JSON without loss."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from app.games.pieces import piece_from_json, piece_to_json
from app.games.rng import RandomSource, rng_from_json

OWLS: Final = ("strix", "bubo", "ninox", "tyto")
"""The owls a seat may play, in seating order of a random deal."""
PELLETS: Final = tuple(range(1, 10))
"""The deck: pellets worth 1 to 9, one each."""
ROUNDS: Final = 3
ROLL: Final = "roll"
HOOT: Final = "hoot"
OVER: Final = "over"


@dataclass
class Owl:
    """One owl: its seat, its two secret pellets, its score and its last revealed hoot."""

    owl: str
    seat: int
    pellets: list[int] = field(default_factory=list)
    score: int = 0
    hoot: int | None = None
    """The hoot of the round being revealed (only inside the reveal), else the last one shown."""
    hooted: bool = False


@dataclass
class OwlState:
    owls: dict[str, Owl]
    order: list[str]
    deck: list[int]
    rng: RandomSource
    glade: str = "hollow-oak"
    round: int = 1
    rounds: int = ROUNDS
    phase: str = ROLL
    moon: int | None = None
    version: int = 1

    @property
    def lead(self) -> str:
        """The owl that rolls the moon this round (round 1: the first seat, then in turn)."""
        return self.order[(self.round - 1) % len(self.order)]

    def owing(self) -> list[str]:
        """The owls that still owe a hoot this round."""
        return [name for name in self.order if not self.owls[name].hooted]

    def copy(self) -> OwlState:
        return OwlState.from_json(self.to_json())

    def to_json(self) -> dict[str, Any]:
        return {
            "owls": {name: piece_to_json(owl) for name, owl in self.owls.items()},
            "order": list(self.order), "deck": list(self.deck), "rng": self.rng.to_json(),
            "glade": self.glade, "round": self.round, "rounds": self.rounds,
            "phase": self.phase, "moon": self.moon, "version": self.version,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> OwlState:
        return OwlState(
            owls={name: piece_from_json(Owl, owl) for name, owl in data["owls"].items()},
            order=list(data["order"]), deck=list(data["deck"]), rng=rng_from_json(data["rng"]),
            glade=str(data["glade"]), round=int(data["round"]), rounds=int(data["rounds"]),
            phase=str(data["phase"]), moon=data["moon"], version=int(data["version"]))
