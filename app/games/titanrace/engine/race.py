"""The public face of the engine: a :class:`Race` takes inputs, lists options and shows views."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from app.games.errors import (
    N_,
    EngineError,
    GameOverError,
    IllegalInputError,
    Reason,
    ScenarioError,
    Word,
    Words,
)
from app.games.logged import LoggedGame, answer_input
from app.games.rng import RandomSource, Rng

from .cards import CARDS, COLOURS, TITAN_COLOUR, TITANS, start_life
from .circuits import Circuit, resolve_circuit
from .geometry import lap_of, location_name, pos_name
from .notation import DECISION_VERBS, decision_reason, explain_turn, normalise
from .rules import Resolver, trap_supply, turn_titan
from .state import FIRST_VERSION, OVER, RaceState, TitanState

VARIANTS: Final = ("standard", "two-player", "teams", "grand-slam")
RULESET: Final = "titan-race"
ENGINE_VERSION: Final = 2
"""Bumped whenever a rule change could make an old log replay differently; a race plays by the
version it was set up under (``RaceState.version``). Version 2: reaction windows open on public
facts alone (docs/rules-summary.md, "Rules versions")."""


def pending_decision(st: RaceState) -> dict[str, Any] | None:
    """The decision waiting for an answer (without its options), or None once the game is over."""
    if st.window is not None:
        return {k: v for k, v in st.window.items() if k != "options"}
    if st.phase == OVER:
        return None
    decision: dict[str, Any] = {"kind": st.phase, "titan": turn_titan(st).name}
    if st.phase == "turn":
        decision["die"] = st.turn.face
        if st.turn.face == "purple" and st.turn.imitated:
            decision["imitating"] = st.turn.imitated
    return decision


def step_state(st: RaceState, text: str) -> tuple[RaceState, list[str]]:
    """Apply one input; return the new state and the random outcomes it produced.

    ``st`` itself is never modified, so a refused input changes nothing.
    """
    if st.phase == OVER:
        raise GameOverError(Reason(N_("the game is over: {titan} has won"),
                                   {"titan": Word("titan", str(st.winner))}), [])
    if st.window is not None:
        legal = list(st.window["options"])
        norm = normalise(text, legal)
        if norm not in legal:
            raise IllegalInputError(Reason(N_("'{input}' does not answer: {decision}"),
                                           {"input": norm, "decision": _describe(st)}), legal)
    else:
        legal = Resolver(st).options()
        norm = normalise(text, legal)
        if norm not in legal:
            raise IllegalInputError(explain(st, norm, legal), legal)
    return answer_input(st, norm, Resolver)


def _describe(st: RaceState) -> Reason:
    pending = pending_decision(st)
    if pending is None:
        return Reason(N_("the game is over"))
    return decision_reason(pending["kind"], pending.get("titan"), pending.get("die"))


def explain(st: RaceState, norm: str, legal: list[str]) -> Reason:
    """A reason a person can act on for refusing ``norm``."""
    words = norm.split()
    pending = pending_decision(st)
    assert pending is not None
    kind = pending["kind"]
    if words[0] not in DECISION_VERBS[kind]:
        return Reason(N_("'{input}' does not answer the pending decision: {decision}"),
                      {"input": words[0], "decision": _describe(st)})
    if kind == "pick":
        return Reason(N_("there is no {input} die on the table; the dice are {dice}"),
                      {"input": " ".join(words[1:]), "dice": Words("die", tuple(st.dice))})
    if kind == "start":
        return Reason(N_("'{input}' is not a free start space (A1, C1, E1 without a Titan)"),
                      {"input": " ".join(words[1:])})
    t = turn_titan(st)
    resolver = Resolver(st)
    return explain_turn(
        words,
        die=(st.turn.effective_face or st.turn.face or "?"),
        moved=st.turn.moved,
        first_round=st.round <= 1,
        ability_used=t.ability_used,
        card_played=st.turn.card_played,
        rerolled=st.turn.rerolled,
        hand=t.hand,
        part_pending=bool(resolver.part_targets(t)),
    )


class Race(LoggedGame[RaceState]):
    """A game of Titan Race: its state, the inputs applied so far, and where it began.

    ``initial`` is the state the game started from, so :meth:`replay` can rebuild the current
    state from the inputs alone.
    """

    RULESET = RULESET
    ENGINE_VERSION = ENGINE_VERSION

    def __init__(self, state: RaceState, initial: dict[str, Any] | None = None) -> None:
        super().__init__(state, initial)
        self._options: list[str] | None = None

    step = staticmethod(step_state)
    load_state = staticmethod(RaceState.from_json)
    log_form = staticmethod(normalise)

    def _changed(self) -> None:
        self._options = None

    # -------------------------------------------------------------- queries

    @property
    def is_over(self) -> bool:
        return self.state.phase == OVER

    @property
    def winner(self) -> str | None:
        return self.state.winner

    def pending(self) -> dict[str, Any] | None:
        """The pending decision with its legal options, or None once the game is over."""
        decision = pending_decision(self.state)
        if decision is not None:
            decision["options"] = self.options()
        return decision

    def options(self) -> list[str]:
        if self._options is None:
            self._options = Resolver(self.state).options()
        return list(self._options)

    def seat_to_act(self) -> int | None:
        """The seat (player) who owns the pending decision."""
        decision = pending_decision(self.state)
        if decision is None:
            return None
        return self.state.titans[decision["titan"]].seat

    # -------------------------------------------------------------- inputs

    def apply(self, text: str) -> list[str]:
        """Apply one input or several joined with ``;``, atomically.

        Returns the random outcomes produced. On a refused input nothing changes and an
        :class:`InputError` is raised naming the input's index and the legal options.
        """
        return [outcome for outcomes in self.apply_each(text) for outcome in outcomes]

    # -------------------------------------------------------------- views

    def view(self, seat: int | None = None, *, spectator: bool = False) -> dict[str, Any]:
        """The state view of ENGINE-INTERFACE.md.

        With no ``seat`` (and not ``spectator``) every hand is shown: the full view. For a seat,
        other players' hands are counts and another player's pending options are hidden; a
        spectator sees no hand and no options.
        """
        return state_view(self.state, seat=seat, spectator=spectator, options=self.options())


def state_view(
    st: RaceState,
    *,
    seat: int | None = None,
    spectator: bool = False,
    options: list[str] | None = None,
) -> dict[str, Any]:
    full = seat is None and not spectator

    def shows(t: TitanState) -> bool:
        return full or (not spectator and t.seat == seat)

    titans: dict[str, Any] = {}
    for t in st.titans.values():
        entry: dict[str, Any] = {
            "seat": t.seat,
            "space": pos_name(t.pos) if t.pos is not None else None,
            "lap": lap_of(t.pos) if t.pos is not None else 1,
            "life": t.life,
            "ko": t.ko,
            "ko_passed": t.ko_passed,
            "hand": list(t.hand) if shows(t) else len(t.hand),
            "ability_used": t.ability_used,
        }
        if st.boards > 1:
            entry["board"] = (entry["lap"] - 1) % st.boards
        if t.team is not None:
            entry["team"] = t.team
        titans[t.name] = entry
    rows = st.cycle_rows
    pending = pending_decision(st)
    if pending is not None:
        owner = st.titans[pending["titan"]]
        if shows(owner):
            pending["options"] = options if options is not None else Resolver(st).options()
    view: dict[str, Any] = {
        "round": st.round,
        "first_round": st.round <= 1,
        "titans": titans,
        "traps": [location_name(loc, st.boards) for loc in sorted(st.traps, key=lambda x: x)],
        "trap_supply": trap_supply(st),
        "dice": list(st.dice),
        "pending": pending,
        "winner": st.winner,
        "winners": list(st.winners),
        "variant": st.variant,
        "circuits": [c.name for c in st.circuits],
        "order": list(st.order),
        "deck": len(st.deck),
        "discard": list(st.discard),
        "cycle_rows": rows,
    }
    if st.version != FIRST_VERSION:  # (a race of the first rules shows as it always did)
        view["version"] = st.version
    return view


# ---------------------------------------------------------------------- new games


def _check_titans(titans: Sequence[str]) -> list[str]:
    names = [t.strip().lower() for t in titans]
    for name in names:
        if name not in TITANS:
            raise EngineError(f"unknown Titan '{name}'; the Titans are {', '.join(TITANS)}")
    if len(set(names)) != len(names):
        raise EngineError("each Titan can race only once")
    return names


def check_teams(order: Sequence[str], teams: Sequence[Sequence[str]]) -> list[list[str]]:
    """Validate teams: equal sizes, every Titan in one team, teammates never seated side by side."""
    if not isinstance(teams, list | tuple) or not all(
        isinstance(team, list | tuple) and all(isinstance(name, str) for name in team)
        for team in teams
    ):
        raise EngineError("teams must be a list of lists of Titan names")
    named = [[name.strip().lower() for name in team] for team in teams]
    members = [name for team in named for name in team]
    if sorted(members) != sorted(order):
        raise EngineError("the teams must list every Titan in the race exactly once")
    sizes = {len(team) for team in named}
    layout = (len(order), len(named))
    if len(sizes) != 1 or layout not in ((4, 2), (6, 2), (6, 3)):
        raise EngineError(
            "teams are 2 teams of 2 (4 players), or 2 teams of 3 or 3 teams of 2 (6 players)"
        )
    team_of = {name: i for i, team in enumerate(named) for name in team}
    for i, name in enumerate(order):
        neighbour = order[(i + 1) % len(order)]
        if team_of[name] == team_of[neighbour]:
            raise EngineError(f"teammates {name} and {neighbour} may not sit next to each other")
    return named


def check_variant(variant: str, titans: Sequence[str], boards: int) -> None:
    if variant not in VARIANTS:
        raise EngineError(f"unknown variant '{variant}'; the variants are {', '.join(VARIANTS)}")
    if variant == "grand-slam" and boards != 3:
        raise EngineError("Grand Slam is raced over three circuits, one per lap")
    if boards not in (1, 3):
        raise EngineError("a race uses one circuit, or three for Grand Slam")


def new_game(
    titans: Sequence[str],
    *,
    circuits: Sequence[str | Circuit | dict[str, Any]] = ("kaldheira",),
    variant: str = "standard",
    teams: Sequence[Sequence[str]] | None = None,
    seed: int = 0,
    anytime_windows: Sequence[str] = (),
    rng: RandomSource | None = None,
    version: int = ENGINE_VERSION,
) -> Race:
    """Set up a new race, deal the cards, find the first player and roll the first dice.

    ``titans`` are in seating order; in the 2-player variant that is A's first Titan, B's first,
    A's second, B's second.
    """
    names = _check_titans(titans)
    boards = [resolve_circuit(c) for c in circuits]
    check_variant(variant, names, len(boards))
    if variant == "two-player" and len(names) != 4:
        raise EngineError("the 2-player variant races four Titans, two for each player")
    if variant in ("standard", "grand-slam") and not 3 <= len(names) <= 6:
        raise EngineError("a race has 3 to 6 players (use the 2-player variant for two)")
    team_lists = check_teams(names, teams) if teams else None
    if variant == "teams" and team_lists is None:
        raise EngineError("the teams variant needs teams")
    rng = rng if rng is not None else Rng(seed)
    deck = list(CARDS)
    rng.shuffle(deck, "deck")
    titan_states = {}
    for i, name in enumerate(names):
        titan_states[name] = TitanState(
            name=name,
            seat=i % 2 if variant == "two-player" else i,
            life=start_life(name),
            hand=[deck.pop(0)],
            team=_team_index(team_lists, name),
            anytime_windows=name in anytime_windows,
        )
    while True:
        colour = COLOURS[rng.below(6, "first")]
        first = next((n for n in names if TITAN_COLOUR[n] == colour), None)
        if first is not None:
            break
    at = names.index(first)
    state = RaceState(
        variant=variant,
        circuits=tuple(boards),
        titans=titan_states,
        order=names[at:] + names[:at],
        teams=team_lists,
        deck=deck,
        rng=rng,
        version=version,
    )
    Resolver(state).begin_turn()
    return Race(state)


def _team_index(teams: list[list[str]] | None, name: str) -> int | None:
    if teams is None:
        return None
    return next(i for i, team in enumerate(teams) if name in team)


__all__ = [
    "ENGINE_VERSION",
    "RULESET",
    "VARIANTS",
    "Race",
    "ScenarioError",
    "check_teams",
    "new_game",
    "pending_decision",
    "state_view",
    "step_state",
]
