"""How a Great Race looks at the start of a game turn: each crew's chance to win, from a model
fitted to races played out by the easy player (:mod:`.bot`).

The searching players (:mod:`.search`) play their rollouts to the end of the game turn and
value what they reach with :func:`win_chances` instead of playing on to the end of the race:
half the inputs, and a smooth value in place of a win or a loss, so far fewer worlds tell the
candidates apart. The model is a conditional logit: each crew racing gets a score, a weighted
sum of what it has (:func:`features`), and its chance is its share of the exponentials of the
scores. The weights were fitted (maximum likelihood, a light L2 penalty) to the starts of the
game turns of 12,000 three-crew races between easy players, turn 2 apart from the later ones
(by turn 3 the turn order, the front crew moving first, weighs far more): on races not fitted,
it names the winner at the start of turn 2 two times in three (a third by chance).
"""

from __future__ import annotations

import math
from typing import Any, Final

from .bot import Sight
from .pieces import Card, Crew
from .state import GreatRaceState

UNREACHABLE: Final = 60.0
"""The cost to go of a space from which the finish cannot be reached."""

TURN_TWO: Final[dict[str, float]] = {
    "to_go": -0.204, "progress": 0.308, "first": 0.153, "second": -0.05, "petrol": 0.258,
    "money": 0.0221, "engine": 0.675, "chassis": 0.481, "broken": -0.21, "worn": 0.513,
    "hand": 0.134, "driver": 0.882, "financial": 0.266, "refueling-station": 0.792,
    "jerrycan": 0.201, "toolbox": 0.255, "saboteur": 0.426, "tracker": 0.29, "militia": 0.162,
    "repairman": 0.098,
}
"""The weights at the start of game turn 2 (money in francs)."""
LATER: Final[dict[str, float]] = {
    "to_go": -0.383, "progress": -0.136, "first": 1.502, "second": 0.596, "petrol": 0.186,
    "money": 0.0148, "engine": 0.79, "chassis": 0.667, "broken": -0.432, "worn": -0.261,
    "hand": 0.046, "driver": 0.685, "financial": 0.244, "refueling-station": 0.153,
    "jerrycan": 0.129, "toolbox": 0.42, "saboteur": 0.27, "tracker": 0.096, "militia": -0.08,
    "repairman": 0.207,
}
"""The weights at the start of game turn 3 and later."""
COUNTED: Final[tuple[Card, ...]] = ("driver", "financial", "refueling-station", "jerrycan",
                                    "toolbox", "saboteur", "tracker", "militia", "repairman")
"""The cards the model counts one by one (the others count only in the hand's size)."""


def win_chances(st: GreatRaceState) -> dict[Crew, float]:
    """Each racing crew's chance to win the race from ``st`` (they add up to 1)."""
    weights = TURN_TWO if st.turn <= 2 else LATER
    racing = [crew.crew for crew in st.racing()]
    scores = {name: sum(weights[key] * value for key, value in features(st, name).items())
              for name in racing}
    top = max(scores.values(), default=0.0)
    shares = {name: math.exp(score - top) for name, score in scores.items()}
    total = sum(shares.values())
    return {name: share / total for name, share in shares.items()}


def features(st: GreatRaceState, crew: Crew) -> dict[str, float]:
    """What the model weighs for ``crew``: its cost to go and progress, its place in the turn
    order, its gauges, money and cards."""
    c = st.crews[crew]
    rank = st.order.index(crew) if crew in st.order else len(st.order)
    found: dict[str, float] = {
        "to_go": to_go(st, crew),
        "progress": float(c.progress),
        "first": float(rank == 0),
        "second": float(rank == 1),
        "petrol": float(c.petrol),
        "money": float(c.money),
        "engine": float(c.engine),
        "chassis": float(c.chassis),
        "broken": float(c.engine == 0),
        "worn": float(c.engine <= 2),
        "hand": float(len(c.hand)),
    }
    for card in COUNTED:
        found[card] = float(c.hand.count(card))
    return found


def to_go(st: GreatRaceState, crew: Crew) -> float:
    """The easy player's cost to go for ``crew``, from a minimal view of the state."""
    c = st.crews[crew]
    view: dict[str, Any] = {
        "start": st.start,
        "leaders": st.leaders,
        "tiles": st.tiles,
        "removed": st.removed,
        "drawn": st.drawn,
        "bag": len(st.bag),
        "crews": {crew: {"space": c.space, "hand": c.hand, "money": c.money,
                         "leader_used": c.leader_used}},
        "pending": {"kind": "none"},
    }
    sight = Sight(crew, view, [], [])
    return sight.to_go.get(c.space, UNREACHABLE)
