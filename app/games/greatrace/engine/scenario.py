"""Great Race scenario files (docs/great-race-engine.md): set up a position, apply inputs, report
the state. ``titanpost engine run`` and ``engine options`` call these for ``"game":
"great-race"``; the tests run every scenario through the same functions."""

from __future__ import annotations

from collections import Counter
from typing import Any, Final

from app.games.errors import EngineError, InputError
from app.games.rng import Rng
from app.games.scenario_file import ScenarioCommands, fail, scenario_inputs

from .board import CITY, CITY_AT, PURPLE, TERRAIN, parse_space, progress
from .game import GREAT_RACE_VERSION, GreatRace, check_crews
from .notation import plan_boxes
from .options import to_plan
from .pieces import (
    ALL_CARDS,
    ASSISTANTS,
    BOXES,
    CARDS,
    LAST_START_MONEY,
    MAX_CHASSIS,
    MAX_ENGINE,
    MAX_PETROL,
    START_MONEY,
    TILES,
    bag_tiles,
    deck_cards,
)
from .rules import Rules
from .state import BIVOUAC, CONVOY, PLANNING, CrewState, GreatRaceState

TOP_KEYS = {
    "game", "start", "leaders", "crews", "tiles", "bag", "removed", "deck", "market", "taken",
    "plans", "turn", "phase", "active", "seed", "inputs", "track", "description", "name",
    "expect",
}
MOST_TURNS: Final = 10_000
"""The highest game turn a scenario may open at: a bound against absurd input only (a race has
no turn limit, and no game played by post comes near it)."""
CREW_KEYS = {
    "crew", "space", "money", "petrol", "engine", "chassis", "hand", "assistants", "passed",
    "finished", "leader_used",
}




def _int(entry: dict[str, Any], key: str, default: int, low: int, high: int, who: str) -> int:
    value = entry.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise fail(f"{who}: {key} must be a whole number from {low} to {high}")
    return value


def _space(value: Any, who: str) -> str:
    space = parse_space(str(value))
    if space is None:
        raise fail(f"{who}: '{value}' is not a space of the board")
    return space


def _boxes(value: Any, who: str, whole: bool) -> dict[str, int]:
    if not isinstance(value, dict) or any(
        k not in BOXES or not isinstance(n, int) or n < 0 for k, n in value.items()
    ):
        raise fail(f"{who}: assistants are box letters (P, M, S, F) with counts")
    boxes = {box: int(value.get(box, 0)) for box in BOXES}
    if whole:
        try:
            plan_boxes([f"{b.lower()}{n}" for b, n in boxes.items()])
        except InputError as exc:
            raise fail(f"{who}: {exc.message}") from None
    elif sum(boxes.values()) > ASSISTANTS:
        raise fail(f"{who}: a crew has {ASSISTANTS} assistants")
    return boxes


def _cards(value: Any, who: str, known: dict[str, int]) -> list[str]:
    if not isinstance(value, list) or any(card not in known for card in value):
        raise fail(f"{who} must list resource cards ({', '.join(known)})")
    return [str(card) for card in value]


def _crew(entry: Any, seat: int, count: int, start: str, known: dict[str, int]) -> CrewState:
    if not isinstance(entry, dict) or not isinstance(entry.get("crew"), str):
        raise fail(f"crews[{seat}] must be an object with a 'crew' name")
    unknown = set(entry) - CREW_KEYS
    if unknown:
        raise fail(f"crews[{seat}]: unknown key {', '.join(sorted(unknown))}")
    name = entry["crew"].lower()
    space = _space(entry.get("space", CITY[start].space), name)
    if space not in CITY_AT and space not in TERRAIN:
        raise fail(f"{name}: '{space}' is not a space")
    money = _int(entry, "money", LAST_START_MONEY if seat == count - 1 else START_MONEY,
                 0, 10_000, name)
    finished = entry.get("finished")
    if finished is not None and (not isinstance(finished, int) or not 1 <= finished <= count):
        raise fail(f"{name}: finished is a finishing place from 1 to {count}")
    return CrewState(
        crew=name,
        seat=seat,
        space=space,
        money=money,
        petrol=_int(entry, "petrol", MAX_PETROL, 0, MAX_PETROL, name),
        engine=_int(entry, "engine", MAX_ENGINE, 0, MAX_ENGINE, name),
        chassis=_int(entry, "chassis", MAX_CHASSIS, 0, MAX_CHASSIS, name),
        hand=_cards(entry.get("hand", []), f"{name}: hand", known),
        assistants=_boxes(entry.get("assistants", {}), name, whole=False),
        passed=bool(entry.get("passed", False)),
        progress=progress(space, start),
        finished=finished,
        leader_used=bool(entry.get("leader_used", False)),
    )


def _tiles(data: dict[str, Any]) -> dict[str, str]:
    tiles = data.get("tiles", {})
    if not isinstance(tiles, dict):
        raise fail("tiles maps spaces to tiles")
    placed: dict[str, str] = {}
    for raw, tile in tiles.items():
        space = _space(raw, "tiles")
        if space not in TERRAIN:
            raise fail(f"tiles: {space} is a city; tiles lie on terrain only")
        if tile not in TILES:
            raise fail(f"tiles: '{tile}' is not a tile ({', '.join(TILES)})")
        placed[space] = str(tile)
    return placed


def _tile_list(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or any(tile not in TILES for tile in value):
        raise fail(f"{what} must list tiles ({', '.join(TILES)})")
    return [str(tile) for tile in value]


def _check_copies(used: list[str], counts: dict[str, int], what: str) -> None:
    for item, n in Counter(used).items():
        if n > counts[item]:
            raise fail(f"there are {counts[item]} {item} {what} in the game, not {n}")


def _track(data: dict[str, Any], crews: dict[str, CrewState]) -> list[str]:
    listed = list(crews)
    track = sorted(listed, key=lambda name: -crews[name].progress)
    given = data.get("track")
    if given is None:
        return track
    if not isinstance(given, list) or sorted(map(str, given)) != sorted(listed):
        raise fail("track lists every crew once, front first")
    values = [crews[name].progress for name in given]
    if values != sorted(values, reverse=True):
        raise fail("track must run from the highest progress to the lowest")
    return [str(name) for name in given]


def load_scenario(data: Any) -> tuple[GreatRace, list[str]]:
    """Build the race a scenario describes; return it with the scenario's inputs."""
    if not isinstance(data, dict):
        raise fail("a scenario is a JSON object")
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise fail(f"unknown key {', '.join(sorted(unknown))}")
    if data.get("game") != "great-race" or "crews" not in data:
        raise fail("'game': 'great-race' and 'crews' are required")
    start = data.get("start", PURPLE[0])
    if start not in PURPLE:
        raise fail(f"start is {' or '.join(PURPLE)}")
    leaders = bool(data.get("leaders", False))
    known = dict(ALL_CARDS) if leaders else dict(CARDS)
    entries = data["crews"]
    if not isinstance(entries, list):
        raise fail("crews lists the crews in turn order")
    try:
        check_crews([e.get("crew", "") if isinstance(e, dict) else "" for e in entries])
    except EngineError as exc:
        raise fail(str(exc)) from None
    crews = {c.crew: c for c in (_crew(e, i, len(entries), start, known)
                                 for i, e in enumerate(entries))}
    seed = data.get("seed", 0)
    if not isinstance(seed, int):
        raise fail("seed must be an integer")
    rng = Rng(seed)
    tiles = _tiles(data)
    removed = _tile_list(data.get("removed", []), "removed")
    on_board = [*tiles.values(), *removed]
    if "bag" in data:
        bag = _tile_list(data["bag"], "bag")
    else:
        rest = Counter(bag_tiles())
        rest.subtract(on_board)
        bag = sorted(rest.elements())
        rng.shuffle(bag, "bag")
    _check_copies([*on_board, *bag], TILES, "tiles")
    market = _cards(data.get("market", []), "market", known)
    hands = [card for c in crews.values() for card in c.hand]
    if "deck" in data:
        deck = _cards(data["deck"], "deck", known)
        rest = Counter(deck_cards(leaders))
        rest.subtract([*hands, *market, *deck])
        discard = sorted(rest.elements())
    else:
        rest = Counter(deck_cards(leaders))
        rest.subtract([*hands, *market])
        deck = sorted(rest.elements())
        rng.shuffle(deck, "deck")
        discard = []
    _check_copies([*hands, *market, *deck, *discard], known, "cards")
    turn = _int(data, "turn", 1, 1, MOST_TURNS, "scenario")
    finished = sorted((c for c in crews.values() if c.finished), key=lambda c: c.finished or 0)
    state = GreatRaceState(
        start=start,
        leaders=leaders,
        crews=crews,
        order=list(crews),
        track=_track(data, crews),
        rng=rng,
        version=GREAT_RACE_VERSION,
        turn=turn,
        tiles=tiles,
        bag=bag,
        removed=removed,
        deck=deck,
        discard=discard,
        market=market,
        finishers=[c.crew for c in finished],
    )
    _open_phase(state, data, "market" in data)
    return GreatRace(state), scenario_inputs(data)


def _open_phase(state: GreatRaceState, data: dict[str, Any], market_given: bool) -> None:
    phase = data.get("phase", BIVOUAC)
    rules = Rules(state)
    racing = [c.crew for c in state.racing()]
    if phase == BIVOUAC:
        taken = data.get("taken", [])
        if not isinstance(taken, list) or any(name not in racing for name in taken):
            raise fail("taken lists crews of the scenario")
        if market_given:
            state.takers = [n for n in reversed(racing) if n not in taken][: len(state.market)]
            if not state.takers:
                rules.end_bivouac()
        else:
            rules.begin_bivouac()
            state.takers = [n for n in state.takers if n not in taken]
            if not state.takers:
                rules.end_bivouac()
    elif phase == PLANNING:
        state.phase = PLANNING
        plans = data.get("plans", {})
        if not isinstance(plans, dict) or any(name not in racing for name in plans):
            raise fail("plans maps crews of the scenario to their box counts")
        for name, boxes in plans.items():
            state.crews[name].plan = _boxes(boxes, name, whole=True)
        if not to_plan(state):
            raise fail("every crew has planned: open the scenario in the convoy instead")
    elif phase == CONVOY:
        state.phase = CONVOY
        active = data.get("active")
        if active is None:
            active = next((name for name in racing if state.crews[name].active), racing[0])
        if active not in racing:
            raise fail("active names a crew of the scenario still racing")
        state.active = active
    else:
        raise fail("phase is bivouac, planning or convoy")
    rules.settle()


SCENARIOS: Final = ScenarioCommands(
    load_scenario, lambda race: sorted(crew.seat for crew in race.state.crews.values()))
"""What ``titanpost engine run`` / ``engine options`` do with a Great Race scenario."""
run_scenario = SCENARIOS.run_scenario
scenario_options = SCENARIOS.scenario_options
run_scenario_file = SCENARIOS.run_scenario_file
scenario_options_file = SCENARIOS.scenario_options_file
