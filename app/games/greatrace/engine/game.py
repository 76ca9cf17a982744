"""The public face of The Great Race engine: a :class:`GreatRace` takes inputs, lists options and
shows views (docs/great-race-engine.md), like
:class:`app.games.titanrace.engine.race.Race` for Titan Race."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Final

from app.games.errors import (
    N_,
    EngineError,
    GameOverError,
    IllegalInputError,
    InvalidInputError,
    Reason,
    Word,
)
from app.games.logged import LoggedGame, resume
from app.games.rng import RandomSource, Rng

from .board import CITY, CITY_AT, PURPLE, finish_of
from .explain import explain
from .notation import normalise
from .options import decision_options, options_hidden, top_decision, winners
from .pieces import (
    CREWS,
    LAST_START_MONEY,
    MAX_CHASSIS,
    MAX_ENGINE,
    MAX_PETROL,
    START_MONEY,
    Crew,
    bag_tiles,
    deck_cards,
)
from .rules import Rules
from .state import CONVOY, OVER, PLANNING, PUBLIC_FLOW, CrewState, GreatRaceState

GREAT_RACE_VERSION: Final = 3
"""Bumped whenever a rule change could make an old log replay differently. A new game's state
carries it (``version``), and the rules read it there, so an old game's log replays by the
rules it was played by: 1 (a state without ``version``): the race called off at turn 30, the
Belgian leader's minimum not in the purple cities; 2: no turn limit, the Belgian leader's
minimum in every city; 3: whether a decision is asked, and of whom, depends on public facts
only (docs/great-race-rules.md sections 10 and 11)."""
BOARD: Final = "africa"


def pending_decision(st: GreatRaceState) -> dict[str, Any] | None:
    """The decision waiting for an answer, without options; None once the game is over."""
    decision = top_decision(st)
    if decision is None:
        return None
    if st.phase == CONVOY:
        decision["active"] = st.active
        if decision["kind"] == "turn":
            decision["begun"] = st.started
    return decision


def step_state(st: GreatRaceState, text: str) -> tuple[GreatRaceState, list[str]]:
    """Apply one input; return the new state and the random outcomes it produced.

    ``st`` itself is never modified, so a refused input changes nothing.
    """
    if st.phase == OVER:
        raise GameOverError(Reason(N_("the race is over: no more inputs")), [])
    legal = decision_options(st)
    try:
        norm = normalise(text)
    except InvalidInputError as exc:
        raise InvalidInputError(exc.message, legal) from None
    if norm not in legal:
        raise IllegalInputError(explain(st, norm), legal)
    decision = st.window if st.window is not None else top_decision(st)
    assert decision is not None
    author: Crew = decision["crew"]
    rules, reported = resume(st, norm, partial(Rules, author=author))
    _count(st, rules, decision["kind"])
    return rules.st, rules.outcomes[reported:]


def _count(before: GreatRaceState, rules: Rules, kind: str) -> None:
    """Carry the counts of :attr:`GreatRaceState.looks` and :attr:`CrewState.hand_answers`
    over from ``before`` to the state ``rules`` reached (run again from an action's start, it
    holds that start's), with this input's."""
    after = rules.st
    after.looks = before.looks + (1 if rules.met_hidden else 0)
    for name, crew in after.crews.items():
        crew.hand_answers = before.crews[name].hand_answers
    author = rules.author
    if (author is not None and before.version >= PUBLIC_FLOW
            and options_hidden(before, kind, author)):
        after.crews[author].hand_answers += 1


def new_state(
    crews: Sequence[str], *, start: str = "alger", leaders: bool = False, seed: int = 0,
    rng: RandomSource | None = None, version: int = GREAT_RACE_VERSION,
) -> tuple[GreatRaceState, list[str]]:
    """A new game's state at its first decision, and the outcomes of setting it up (under the
    rules ``version``: an older one only to deal an old game again, as it was dealt)."""
    names = check_crews(crews)
    if start not in PURPLE:
        raise EngineError(f"a race starts in {' or '.join(PURPLE)}, not '{start}'")
    rng = rng if rng is not None else Rng(seed)
    bag = bag_tiles()
    rng.shuffle(bag, "bag")
    deck = deck_cards(leaders)
    rng.shuffle(deck, "deck")
    space = CITY[start].space
    state = GreatRaceState(
        start=start,
        leaders=leaders,
        crews={
            name: CrewState(
                crew=name,
                seat=seat,
                space=space,
                money=LAST_START_MONEY if seat == len(names) - 1 else START_MONEY,
                petrol=MAX_PETROL,
                engine=MAX_ENGINE,
                chassis=MAX_CHASSIS,
            )
            for seat, name in enumerate(names)
        },
        order=list(names),
        track=list(names),
        rng=rng,
        version=version,
        bag=bag,
        deck=deck,
    )
    rules = Rules(state)
    rules.begin_bivouac()
    rules.settle()
    return state, rules.outcomes


def check_crews(crews: Sequence[str]) -> list[str]:
    names = [str(c).strip().lower() for c in crews]
    for name in names:
        if name not in CREWS:
            raise EngineError(f"unknown crew '{name}'; the crews are {', '.join(CREWS)}")
    if len(set(names)) != len(names):
        raise EngineError("each crew races only once")
    if not 2 <= len(names) <= len(CREWS):
        raise EngineError(f"a Great Race has 2 to {len(CREWS)} crews")
    return names


class GreatRace(LoggedGame[GreatRaceState]):
    """A game of The Great Race: its state, the inputs applied so far (with the random outcomes
    each produced: tiles, cards, shuffles), and where it began."""

    RULESET = "great-race"
    ENGINE_VERSION = GREAT_RACE_VERSION

    step = staticmethod(step_state)
    load_state = staticmethod(GreatRaceState.from_json)
    log_form = staticmethod(normalise)

    @classmethod
    def new(
        cls, crews: list[str], *, start: str = "alger", leaders: bool = False, seed: int = 0,
        rng: RandomSource | None = None, version: int = GREAT_RACE_VERSION,
    ) -> GreatRace:
        """Set up a race (crews in seat order) and deal the first bivouac's market (from
        ``rng``, else from the older generator seeded with ``seed``), under the rules
        ``version`` (see :data:`GREAT_RACE_VERSION`)."""
        state, _ = new_state(crews, start=start, leaders=leaders, seed=seed, rng=rng,
                             version=version)
        return cls(state)

    # -------------------------------------------------------------- queries

    @property
    def is_over(self) -> bool:
        return self.state.phase == OVER

    @property
    def winners(self) -> list[str]:
        return winners(self.state)

    @property
    def winner(self) -> str | None:
        found = self.winners
        return found[0] if found else None

    def crew_of(self, seat: int) -> Crew:
        for crew in self.state.crews.values():
            if crew.seat == seat:
                return crew.crew
        raise EngineError(f"there is no seat {seat} in this race")

    def seat_of(self, crew: Crew) -> int:
        if crew not in self.state.crews:
            raise EngineError(f"the {crew} crew is not in this race")
        return self.state.crews[crew].seat

    def pending(self, crew: Crew | None = None) -> dict[str, Any] | None:
        """The pending decision with the legal options (only ``crew``'s when given)."""
        decision = pending_decision(self.state)
        if decision is not None:
            decision["options"] = self.options(crew)
        return decision

    def options(self, crew: Crew | None = None) -> list[str]:
        return decision_options(self.state, crew)

    def to_act(self) -> list[int]:
        """The seats that owe the pending decision (several only for ``plan``)."""
        st = self.state
        decision = st.window if st.window is not None else top_decision(st)
        if decision is None:
            return []
        return [st.crews[name].seat for name in decision["crews"]]

    # -------------------------------------------------------------- inputs

    def apply(self, text: str) -> list[str]:
        """Apply one input or several joined with ``;``, atomically.

        Returns the random outcomes of the last input. On a refused input nothing changes and an
        :class:`InputError` is raised naming the input's index and the legal options.
        """
        return list(self.apply_each(text)[-1])

    def own_input(self, seat: int, text: str) -> str:
        """Seat ``seat``'s plan in canonical form, from ``plan P1 M2 F2`` or ``plan <own crew>
        ...``; refuses anything else, another crew's plan and a plan not owed now."""
        crew = self.crew_of(seat)
        words = text.strip().lower().split()
        if not words or words[0] != "plan":
            raise IllegalInputError(Reason(N_("only a plan can be given in secret (plan P<n> "
                                              "M<n> S<n> F<n>)")), self.options(crew))
        rest = words[1:]
        if rest and rest[0] in CREWS:
            if rest[0] != crew:
                raise IllegalInputError(
                    Reason(N_("you plan for the {crew} crew, not the {other} crew"),
                           {"crew": Word("crew", crew), "other": Word("crew", rest[0])}),
                    self.options(crew))
            rest = rest[1:]
        norm = normalise(" ".join(["plan", crew, *rest]))
        decision = top_decision(self.state)
        if decision is None or decision["kind"] != "plan" or crew not in decision["crews"]:
            raise IllegalInputError(Reason(N_("the {crew} crew has no plan to give now"),
                                           {"crew": Word("crew", crew)}), [])
        return norm

    # -------------------------------------------------------------- persistence

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> GreatRace:
        """A game from a state snapshot alone (``state.to_json()``)."""
        return cls(GreatRaceState.from_json(state))

    # -------------------------------------------------------------- views

    def view(self, seat: int | None = None, spectator: bool = False) -> dict[str, Any]:
        """The state view of great-race-engine.md: full when neither ``seat`` nor ``spectator``
        is given; otherwise other hands are counts, unrevealed plans null, the Tracker's cards
        and the options only the viewer's."""
        viewer = None if seat is None or spectator else self.crew_of(seat)
        return state_view(self.state, viewer=viewer, full=seat is None and not spectator)


def state_view(st: GreatRaceState, *, viewer: Crew | None, full: bool) -> dict[str, Any]:
    def shows(name: Crew) -> bool:
        return full or name == viewer

    crews = {name: _crew_view(st, crew, shows(name)) for name, crew in st.crews.items()}
    pending = pending_decision(st)
    if pending is not None:
        if st.tracker and shows(pending["crew"]):
            pending["tracker"] = list(st.tracker)
        if full or viewer in pending["crews"]:
            pending["options"] = decision_options(st, None if full else viewer)
    found = winners(st)
    return {
        "game": "great-race",
        "board": BOARD,
        "start": st.start,
        "finish": finish_of(st.start),
        "leaders": st.leaders,
        "turn": st.turn,
        "phase": st.phase,
        "order": [c.crew for c in st.racing()],
        "crews": crews,
        "track": list(st.track),
        "tiles": dict(st.tiles),
        "bag": len(st.bag),
        "deck": len(st.deck),
        "discard": list(st.discard),
        "removed": list(st.removed),
        "market": list(st.market),
        "drawn": list(st.drawn),
        "pending": pending,
        "finishers": list(st.finishers),
        "scores": {k: dict(v) for k, v in st.scores.items()} if st.scores is not None else None,
        "winner": found[0] if found else None,
        "winners": found,
    }


def sight_view(st: GreatRaceState, viewer: Crew, options: list[str]) -> dict[str, Any]:
    """The parts of ``viewer``'s :func:`state_view` that the easy player reads, given the
    options it owes: the same values, built for the rollouts of the searching players (who ask
    for tens of thousands a decision), so the lists and tables of ``st`` are shared, not copied:
    the view is read, never changed, and ``st`` stays as it is while it is read."""
    crews = {name: _crew_sight(st, crew, name == viewer) for name, crew in st.crews.items()}
    pending = pending_decision(st)
    if pending is not None:
        if st.tracker and pending["crew"] == viewer:
            pending["tracker"] = st.tracker
        if viewer in pending["crews"]:
            pending["options"] = options
    return {
        "start": st.start,
        "leaders": st.leaders,
        "crews": crews,
        "track": st.track,
        "tiles": st.tiles,
        "bag": len(st.bag),
        "removed": st.removed,
        "drawn": st.drawn,
        "pending": pending,
    }


def _crew_sight(st: GreatRaceState, crew: CrewState, shown: bool) -> dict[str, Any]:
    """:func:`_crew_view`'s entries that the easy player reads, not copied."""
    assistants = (crew.plan if shown else None) if st.phase == PLANNING else crew.assistants
    return {
        "space": crew.space,
        "money": crew.money,
        "petrol": crew.petrol,
        "engine": crew.engine,
        "chassis": crew.chassis,
        "hand": crew.hand if shown else len(crew.hand),
        "assistants": assistants,
        "progress": crew.progress,
        "finished": crew.finished,
        "leader_used": crew.leader_used,
    }


def _crew_view(st: GreatRaceState, crew: CrewState, shown: bool) -> dict[str, Any]:
    planning = st.phase == PLANNING
    if planning:
        assistants = dict(crew.plan) if crew.plan is not None and shown else None
    else:
        assistants = dict(crew.assistants)
    return {
        "seat": crew.seat,
        "space": crew.space,
        "city": CITY_AT[crew.space].slug if crew.space in CITY_AT else None,
        "money": crew.money,
        "petrol": crew.petrol,
        "engine": crew.engine,
        "chassis": crew.chassis,
        "hand": list(crew.hand) if shown else len(crew.hand),
        "assistants": assistants,
        "planned": crew.plan is not None if planning else st.phase == CONVOY and crew.racing,
        "passed": crew.passed,
        "progress": crew.progress,
        "finished": crew.finished,
        "leader_used": crew.leader_used,
    }
