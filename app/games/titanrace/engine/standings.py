"""The finishing order of a finished race (pure).

The rules name only the winner: the first Titan to finish its third lap wins, and with it its
player (both Titans of a seat in the two-player game) or its whole team (RULINGS 4 and 7). The
others are ranked by how far they came, the fewer rows to the finish the better: a seat by its
leading Titan, a team by its leading Titan. Life Points break no tie (the rules never compare
them): seats equally far from the finish share a place.
"""

from __future__ import annotations

from dataclasses import dataclass

from .geometry import ROWS
from .rules import WINNING_Y
from .state import OVER, RaceState, TitanState

LAPS = WINNING_Y // ROWS
"""The laps of a race."""


@dataclass(frozen=True)
class Standing:
    """A seat at the end: ``key`` orders the seats (0 for the winners, else the rows its side's
    leading Titan had still to go; equal keys share a place); ``titan`` is its own leading
    Titan, with the lap it is on (as the pages count it: 1 to 3, the last once finished), its
    rows to the finish and its Life Points."""

    seat: int
    key: int
    titan: str
    lap: int
    to_go: int
    life: int


def to_go(t: TitanState) -> int:
    """The rows ``t`` still had to go to finish the race (0 once finished)."""
    y = t.pos[1] if t.pos is not None else -1
    return max(WINNING_Y - y, 0)


def standings(st: RaceState) -> list[Standing]:
    """Every seat's standing once the race is over (empty before), in seat order."""
    if st.phase != OVER:
        return []
    seats = sorted({t.seat for t in st.titans.values()})
    winners = {st.titans[name].seat for name in st.winners if name in st.titans}

    def side(seat: int) -> list[TitanState]:
        """The Titans whose progress ranks ``seat``: its own, or its team's."""
        own = [t for t in st.titans.values() if t.seat == seat]
        team = next((team for team in st.teams or [] if any(t.name in team for t in own)), None)
        return own if team is None else [st.titans[name] for name in team if name in st.titans]

    found = []
    for seat in seats:
        lead = min((t for t in st.titans.values() if t.seat == seat), key=to_go)
        key = 0 if seat in winners else min(to_go(t) for t in side(seat))
        y = lead.pos[1] if lead.pos is not None else 0
        found.append(Standing(seat, key, lead.name, min(max(y // ROWS + 1, 1), LAPS), to_go(lead),
                              0 if lead.ko else lead.life))
    return found
