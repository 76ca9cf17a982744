"""Scenario files (ENGINE-INTERFACE.md): set up a position, apply inputs, report the state.

``titanpost engine run`` and ``engine options`` call :func:`run_scenario_file`; the tests run
every scenario through the same function.
"""

from __future__ import annotations

from typing import Any, Final

from app.games.errors import CircuitError, EngineError
from app.games.rng import Rng
from app.games.scenario_file import ScenarioCommands, fail, scenario_inputs
from app.games.scenario_file import read_scenario as read_scenario  # where cli/engine.py reads

from .cards import CARDS, COLOURS, TITANS, start_life
from .circuits import Circuit, local_circuit, resolve_circuit
from .geometry import location, parse_location, pos_from
from .race import ENGINE_VERSION, VARIANTS, Race, check_teams
from .rules import TRAP_TOKENS, Resolver
from .state import FIRST_VERSION, START, TURN, RaceState, TitanState, TurnState

TITAN_KEYS = {
    "titan",
    "space",
    "lap",
    "life",
    "hand",
    "ko",
    "ko_passed",
    "ability_used",
    "anytime_windows",
}




def _circuits(spec: Any) -> list[Circuit]:
    specs = spec if isinstance(spec, list) else [spec]
    try:
        # (a scenario is a file on one's own machine: it may name a circuit file beside it)
        return [local_circuit(s) if isinstance(s, str) else resolve_circuit(s) for s in specs]
    except CircuitError as exc:
        raise fail(str(exc)) from None


def _titan(entry: Any, index: int, variant: str, boards: int) -> TitanState:
    if not isinstance(entry, dict) or "titan" not in entry:
        raise fail(f"titans[{index}] must be an object with a 'titan' name")
    unknown = set(entry) - TITAN_KEYS
    if unknown:
        raise fail(f"titans[{index}]: unknown key {', '.join(sorted(unknown))}")
    name = str(entry["titan"]).lower()
    if name not in TITANS:
        raise fail(f"unknown Titan '{entry['titan']}'; the Titans are {', '.join(TITANS)}")
    lap = entry.get("lap", 1)
    if not isinstance(lap, int) or not 0 <= lap <= 3:
        raise fail(f"{name}: lap must be 0 to 3")
    pos = None
    if entry.get("space") is not None:
        try:
            pos = pos_from(str(entry["space"]), lap)
        except ValueError as exc:
            raise fail(f"{name}: {exc}") from None
    ko = bool(entry.get("ko", False))
    life = entry.get("life", 0 if ko else start_life(name))
    if not isinstance(life, int) or not 0 <= life <= 6:
        raise fail(f"{name}: life must be 0 to 6")
    if ko and life != 0:
        raise fail(f"{name}: a KO Titan has 0 Life Points")
    hand = entry.get("hand", [])
    if not isinstance(hand, list) or any(card not in CARDS for card in hand):
        raise fail(f"{name}: hand must list Bonus cards ({', '.join(CARDS)})")
    if len(hand) > 2:
        raise fail(f"{name}: a hand holds at most 2 Bonus cards")
    return TitanState(
        name=name,
        seat=index % 2 if variant == "two-player" else index,
        pos=pos,
        life=life,
        ko=ko or life == 0,
        ko_passed=bool(entry.get("ko_passed", False)),
        hand=list(hand),
        ability_used=bool(entry.get("ability_used", False)),
        anytime_windows=bool(entry.get("anytime_windows", False)),
    )


def load_scenario(data: Any) -> tuple[Race, list[str]]:
    """Build the race a scenario describes; return it with the scenario's inputs."""
    if not isinstance(data, dict):
        raise fail("a scenario is a JSON object")
    if "circuit" not in data or "titans" not in data:
        raise fail("'circuit' and 'titans' are required")
    circuits = _circuits(data["circuit"])
    variant = data.get("variant", "grand-slam" if len(circuits) == 3 else "standard")
    if variant not in VARIANTS:
        raise fail(f"unknown variant '{variant}'; the variants are {', '.join(VARIANTS)}")
    if variant == "grand-slam" and len(circuits) != 3:
        raise fail("Grand Slam needs a list of three circuits")
    if len(circuits) not in (1, 3):
        raise fail("give one circuit, or a list of three for Grand Slam")
    entries = data["titans"]
    if not isinstance(entries, list) or not 1 <= len(entries) <= 6:
        raise fail("'titans' lists 1 to 6 Titans in seating order")
    titans = [_titan(e, i, variant, len(circuits)) for i, e in enumerate(entries)]
    names = [t.name for t in titans]
    if len(set(names)) != len(names):
        raise fail("a Titan is listed twice")
    cycle_rows = 12 * len(circuits)
    occupied: dict[int, str] = {}
    for t in titans:
        if t.pos is not None:
            loc = location(t.pos, cycle_rows)
            if loc in occupied:
                raise fail(f"{t.name} and {occupied[loc]} stand on the same space")
            occupied[loc] = t.name
    teams = None
    if data.get("teams") is not None:
        try:
            teams = check_teams(names, data["teams"])
        except EngineError as exc:
            raise fail(str(exc)) from None
        for t in titans:
            t.team = next(i for i, team in enumerate(teams) if t.name in team)
    elif variant == "teams":
        raise fail("the teams variant needs 'teams'")
    traps = _traps(data.get("traps", []), len(circuits), occupied)
    seed = data.get("seat_seed", data.get("seed", 0))
    if not isinstance(seed, int):
        raise fail("seed must be an integer")
    rng = Rng(seed)
    in_hands = [c for t in titans for c in t.hand]
    if len(set(in_hands)) != len(in_hands):
        raise fail("a Bonus card is in two hands")
    deck, discard = _deck(data.get("deck"), in_hands, rng)
    rolls = data.get("rolls", [])
    if not isinstance(rolls, list) or any(
        not isinstance(r, list) or any(c not in COLOURS for c in r) for r in rolls
    ):
        raise fail(f"rolls must be a list of lists of colours ({', '.join(COLOURS)})")
    started = any(t.pos is not None for t in titans)
    round_no = data.get("round", 2 if started else 1)
    if not isinstance(round_no, int) or round_no < 1:
        raise fail("round must be 1 or more")
    version = data.get("version", ENGINE_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or not (
            FIRST_VERSION <= version <= ENGINE_VERSION):
        raise fail(f"version must be a rules version, {FIRST_VERSION} to {ENGINE_VERSION}")
    state = RaceState(
        variant=variant,
        circuits=tuple(circuits),
        titans={t.name: t for t in titans},
        order=names,
        teams=teams,
        round=round_no,
        traps=traps,
        deck=deck,
        discard=discard,
        rng=rng,
        forced_rolls=[list(r) for r in rolls],
        version=version,
    )
    _start_position(state, data.get("turn"))
    return Race(state), scenario_inputs(data)


def _traps(spec: Any, boards: int, occupied: dict[int, str]) -> set[int]:
    if not isinstance(spec, list):
        raise fail("traps must be a list of spaces")
    traps: set[int] = set()
    for raw in spec:
        try:
            loc = parse_location(str(raw), boards)
        except ValueError as exc:
            raise fail(f"traps: {exc}") from None
        if loc in traps:
            raise fail(f"traps: two traps on {raw}")
        if loc in occupied:
            raise fail(f"traps: {raw} is under {occupied[loc]} (a trap never lies under a Titan)")
        traps.add(loc)
    if len(traps) > TRAP_TOKENS:
        raise fail(f"there are only {TRAP_TOKENS} trap tokens")
    return traps


def _deck(spec: Any, in_hands: list[str], rng: Rng) -> tuple[list[str], list[str]]:
    if spec is None:
        deck = [c for c in CARDS if c not in in_hands]
        rng.shuffle(deck, "deck")
        return deck, []
    if not isinstance(spec, list) or any(card not in CARDS for card in spec):
        raise fail(f"deck must list Bonus cards ({', '.join(CARDS)})")
    if len(set(spec)) != len(spec) or set(spec) & set(in_hands):
        raise fail("each Bonus card exists once: the deck repeats a card or one in a hand")
    discard = [c for c in CARDS if c not in spec and c not in in_hands]
    return list(spec), discard


def _start_position(state: RaceState, turn: Any) -> None:
    """Open the scenario at a round start, or inside a Titan's turn with its die picked."""
    resolver = Resolver(state)
    resolver.ctx.windows = False
    if turn is None:
        resolver.begin_turn()
        return
    if not isinstance(turn, dict) or not isinstance(turn.get("titan"), str) or (
        turn["titan"] not in state.titans
    ):
        raise fail('turn must name a Titan of the scenario: {"titan": ..., "die": ...}')
    die = turn.get("die")
    if die not in COLOURS:
        raise fail(f"turn.die must be a colour ({', '.join(COLOURS)})")
    index = state.order.index(turn["titan"])
    count = len(state.order)
    state.turn_index = index
    left = count - 1 if index == count - 1 else count - index - 1
    state.dice = [COLOURS[state.rng.below(6, "dice")] for _ in range(left)]
    state.turn = TurnState(die=die, face=die)
    t = state.titans[turn["titan"]]
    if t.ko and t.ko_passed:
        t.ko = t.ko_passed = False
        t.life = start_life(t.name)
    if t.ko:
        t.ko_passed = True
        resolver.advance()
        return
    state.phase = START if t.pos is None else TURN


SCENARIOS: Final = ScenarioCommands(
    load_scenario, lambda race: sorted({t.seat for t in race.state.titans.values()}))
"""What ``titanpost engine run`` / ``engine options`` do with a Titan Race scenario."""
run_scenario = SCENARIOS.run_scenario
scenario_options = SCENARIOS.scenario_options
run_scenario_file = SCENARIOS.run_scenario_file
scenario_options_file = SCENARIOS.scenario_options_file
