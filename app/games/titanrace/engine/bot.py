"""A simple computer player: legal and sensible, not clever.

It looks one input ahead (two for a pick: the pick and the best move after it) and scores the
position for its own side: progress first, then life, cards and the opponents' progress. It never
peeks at future dice: a pentacle reroll is judged by its average worth, not simulated.
"""

from __future__ import annotations

from app.games.errors import InputError

from .race import Race, step_state
from .rules import Resolver, turn_titan
from .state import OVER, RaceState

WIN = 1_000_000.0


def score(st: RaceState, seat: int) -> float:
    """How good ``st`` is for the player at ``seat`` (higher is better)."""
    if st.phase == OVER:
        winners = {st.titans[name].seat for name in st.winners}
        return WIN if seat in winners else -WIN
    total = 0.0
    mine_team = {t.team for t in st.titans.values() if t.seat == seat}
    for t in st.titans.values():
        progress = (t.pos[1] + 1) if t.pos is not None else 0
        value = progress * 10.0 + t.life * 4.0 + len(t.hand) * 2.5 - (20.0 if t.ko else 0.0)
        if t.seat == seat:
            total += value
        elif t.team is not None and t.team in mine_team:
            total += value * 0.5
        else:
            total -= progress * 3.0 + t.life
    return total


def _after(st: RaceState, option: str) -> RaceState | None:
    try:
        return step_state(st, option)[0]
    except InputError:
        return None


def _best_followup(st: RaceState, seat: int) -> float:
    """The best score reachable with the next input, when it is still this seat's turn."""
    best = score(st, seat)
    if st.phase == OVER or st.window is not None:
        return best
    for option in Resolver(st).options():
        if option.startswith("move") or option.startswith("start"):
            nxt = _after(st, option)
            if nxt is not None:
                best = max(best, score(nxt, seat))
    return best


def choose(race: Race) -> str:
    """The bot's answer to the pending decision."""
    st = race.state
    options = race.options()
    if len(options) == 1:
        return options[0]
    pending = race.pending()
    assert pending is not None
    seat = st.titans[pending["titan"]].seat
    kind = pending["kind"]
    best_option, best_value = options[0], -float("inf")
    here = score(st, seat)
    for option in options:
        if option == "reroll":
            t = turn_titan(st)
            value = here + (2.0 * 10.0 - 4.0 if t.life >= 3 else -50.0)
        elif option == "end":
            value = here
        elif option.startswith("discard") and kind == "turn":
            value = here - 100.0
        else:
            nxt = _after(st, option)
            if nxt is None:
                continue
            value = _best_followup(nxt, seat) if kind in ("pick", "start") else score(nxt, seat)
        if value > best_value + 1e-9:
            best_option, best_value = option, value
    return best_option
