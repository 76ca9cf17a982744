"""A simple computer player (the ``easy`` level): legal and sensible, not clever.

It looks one input ahead (two for a pick: the pick and the best move after it) and scores the
position for its own side: progress first, then life, cards and the opponents' progress. It never
peeks at future dice: a pentacle reroll is judged by its average worth, not simulated.

It looks ahead from what its seat may know (:func:`choose`): in a world sampled from the seat's
view as the searching players sample theirs (:mod:`.worlds`), the other hands, the deck's order
and the dice to come dealt again from a generator seeded by that view. Looking ahead on the true
state told it, in a race under the first rules (whose windows opened only for a fitting card),
whether an opponent held the Dispel that would cancel its Ability.
"""

from __future__ import annotations

import math

from app.games.errors import EngineError, InputError
from app.games.logged import answer_input

from .cards import ALL_PATHS, FACE_PATHS
from .race import Race, pending_decision
from .rules import Resolver, turn_titan
from .state import OVER, START, TURN, RaceState
from .worlds import passive, sample_world, seat_of, seat_random

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


def advance(st: RaceState, option: str) -> RaceState:
    """``st`` after ``option``, one of its legal options in normal form (not checked again:
    :func:`step_state` would list the options a second time)."""
    return answer_input(st, option, Resolver)[0]


def _after(st: RaceState, option: str) -> RaceState | None:
    try:
        return advance(st, option)
    except (InputError, EngineError):
        return None


def _followup(st: RaceState, seat: int) -> float:
    """As the easy player: the best score the next movement input reaches in this turn."""
    best = score(st, seat)
    if st.window is not None:
        return best
    for option in _movements(st):
        nxt = _after(st, option)
        if nxt is not None:
            best = max(best, score(nxt, seat))
    return best


def _movements(st: RaceState) -> list[str]:
    """The ``start`` and ``move`` options of ``st`` (no window open), listed without working out
    every other option as :meth:`Resolver.options` would."""
    if st.phase == START:
        return [f"start {space}" for space in Resolver(st).start_spaces()]
    ts = st.turn
    if st.phase != TURN or ts.moved:
        return []
    if ts.face == "purple":
        paths = FACE_PATHS[ts.imitated] if ts.imitated else ALL_PATHS
    else:
        paths = FACE_PATHS[ts.face or "blue"]
    return [f"move {path}" for path in paths]


def model(st: RaceState, options: list[str]) -> str:
    """The one-step choice among ``options`` (the legal options of ``st``, not checked again),
    reading all of ``st``: the easy player calls it in a sampled world, the searching players
    for every seat of their rollouts (each in a world of its own)."""
    if len(options) == 1:
        return options[0]
    pending = pending_decision(st)
    assert pending is not None
    seat = st.titans[pending["titan"]].seat
    kind = pending["kind"]
    here = score(st, seat)
    best_option, best_value = options[0], -math.inf
    for option in options:
        if option == "reroll":
            t = turn_titan(st)
            value = here + (16.0 if t.life >= 3 else -50.0)
        elif option == "end":
            value = here
        elif option.startswith("discard") and kind == "turn":
            value = here - 100.0
        else:
            nxt = _after(st, option)
            if nxt is None:
                continue
            value = _followup(nxt, seat) if kind in ("pick", "start") else score(nxt, seat)
        if value > best_value + 1e-9:
            best_option, best_value = option, value
    return best_option


def choose(race: Race) -> str:
    """The easy player's answer to the pending decision: :func:`model` in a world its seat
    cannot tell from the race, drawn from the seat's view alone (so the same view always gives
    the same answer)."""
    options = race.options()
    if len(options) == 1:
        return options[0]
    st = race.state
    seat = seat_of(st)
    assert seat is not None
    world = sample_world(st, seat, seat_random(st, seat))
    if world is None:
        return passive(options)
    return model(world, options)
