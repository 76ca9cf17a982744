"""How the searching players score a race they stop looking at: each side's chance to win.

Every Titan gets a score from what anyone can see of it (its progress, life, cards, a KO, how
long it waits for its next turn, its place in the turn order and which Titan it is); the chance
that a side wins is its Titans' share of ``exp(score)``. The weights were fitted, by maximum
likelihood, to the winners of 40,000 three-Titan races between easy players (the players the
rollouts use), scored at every turn's pick: it predicts those winners far better than the
hand-set estimate it replaced (mean log-loss 0.669 against 0.849 on races it was not fitted to;
a coin with three faces scores 1.099).

Each weight comes in two parts, ``flat + steep * z`` with ``z = 1 / sqrt(rows left)`` for the
leading Titan: as the finish nears, a row of progress is worth more and a wait for one's turn
costs more.
"""

from __future__ import annotations

import math
from typing import Final, NamedTuple

from .rules import WINNING_Y
from .state import OVER, RaceState, TitanState


class Weight(NamedTuple):
    """A feature's weight: ``flat + steep * z`` (``z`` grows as the leader nears the finish)."""

    flat: float
    steep: float


PROGRESS: Final = Weight(0.1846, 0.9656)
"""Per row covered (a Titan on the grid before its first start has covered none)."""
LIFE: Final = Weight(0.2368, -0.1419)
HAND: Final = Weight(0.05, 0.0)
"""Per card held. Set by hand: the fit gives a card a small negative weight (-0.04, an easy
player gains nothing from holding one), and with it the search threw its cards away for
nothing; a card is an option the searching player can use, so it is worth a little."""
KNOCKED_OUT: Final = Weight(0.4468, -3.7761)
"""A KO (its life already counts as 0), on top of which a Titan that has already passed a turn
KO gets :data:`RECOVERING` (it is back at full life next turn)."""
RECOVERING: Final = Weight(1.7015, 1.2346)
WAITING: Final = Weight(-0.3776, -4.8120)
"""Per round to wait before its next pick (0 for the Titan about to pick)."""
FIRST: Final = Weight(1.1921, -1.2188)
"""First in the turn order: it picks from the round's full roll."""
LAST: Final = Weight(1.4316, -1.3341)
"""Last in the turn order: it picks from the reroll of all the dice."""
TITAN_BIAS: Final[dict[str, float]] = {
    "grinder": -0.8489,
    "rassik": 0.2219,
    "craken": 0.2184,
    "ragnarok": 0.1323,
    "slaugg": -0.4575,
    "chtoolhoo": 0.0,
}
"""What each Titan's Ability (and Chtoolhoo's four Life Points) is worth to an easy player."""


def _leader_factor(st: RaceState) -> float:
    """``z``: one over the square root of the rows the leading Titan still has to cover."""
    lead = max((t.pos[1] for t in st.titans.values() if t.pos is not None), default=-1)
    return 1.0 / math.sqrt(max(WINNING_Y - lead, 1))


def titan_score(st: RaceState, t: TitanState, place: int, z: float) -> float:
    """The log-weight of ``t``'s chance to win; ``place`` is its index in the turn order."""
    count = len(st.order)
    progress = t.pos[1] + 1 if t.pos is not None else 0
    wait = (place - st.turn_index) % count / count

    def weighted(weight: Weight, value: float) -> float:
        return (weight.flat + weight.steep * z) * value

    score = weighted(PROGRESS, progress) + weighted(LIFE, t.life) + weighted(HAND, len(t.hand))
    if t.ko:
        score += weighted(KNOCKED_OUT, 1.0)
        if t.ko_passed:
            score += weighted(RECOVERING, 1.0)
    score += weighted(WAITING, wait)
    if place == 0:
        score += weighted(FIRST, 1.0)
    elif place == count - 1:
        score += weighted(LAST, 1.0)
    return score + TITAN_BIAS.get(t.name, 0.0)


def sides(st: RaceState) -> dict[int, int]:
    """Each seat's side: its team in the teams variant, else itself."""
    return {t.seat: (t.team if t.team is not None else t.seat) for t in st.titans.values()}


def evaluate(st: RaceState, seat: int) -> float:
    """``seat``'s chance to win from ``st``, estimated in [0, 1] (a finished race: 1 or 0)."""
    if st.phase == OVER:
        return 1.0 if any(st.titans[n].seat == seat for n in st.winners) else 0.0
    z = _leader_factor(st)
    side_of = sides(st)
    mine = side_of[seat]
    scores = [(side_of[st.titans[name].seat], titan_score(st, st.titans[name], place, z))
              for place, name in enumerate(st.order)]
    top = max(score for _, score in scores)
    weights = [(side, math.exp(score - top)) for side, score in scores]
    return sum(w for side, w in weights if side == mine) / sum(w for _, w in weights)


__all__ = ["evaluate", "sides", "titan_score"]
