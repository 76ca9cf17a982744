"""What each decision of The Great Race offers, and the queries on the state that the rules
(:mod:`.rules`) and the pages share: the legal options of every decision, where a crew may
place, drive or enter, what it pays, who may avoid a DANGER, a drive's :class:`Trip`, the
prestige and the winners. Pure functions of the state."""

from __future__ import annotations

from itertools import combinations
from typing import Any, Final

from .board import (
    CITY,
    CITY_AT,
    NEIGHBOURS,
    PURPLE,
    RISK,
    SPACES,
    TERRAIN,
    Line,
    Space,
    lines_from,
)
from .notation import all_plans, damage_text, toolbox_text
from .pieces import (
    BELGIAN_MIN_CARDS,
    FIRST_VERSION_CALL_OFF_TURN,
    MAX_CHASSIS,
    MAX_ENGINE,
    MAX_PETROL,
    PART_PRICE,
    PETROL_PRICE,
    PLACE_PRESTIGE,
    TILE,
    TOOLBOX_GAIN,
    TRANSPORT_SAVING,
    Card,
    Crew,
    TileCode,
)
from .state import (
    BIVOUAC,
    CONVOY,
    FIRST_VERSION,
    OVER,
    PLANNING,
    CrewState,
    GreatRaceState,
)

ASSISTANT_ACTIONS: Final = ("scout", "draw", "repair", "drive", "guard", "fund", "pass")
"""The inputs that end a convoy sequence."""
BLANK_TRACK_PETROL: Final = 2
"""The petrol a blank space costs when the bag is empty (open track)."""
HIDDEN_OPTIONS: Final = frozenset({"turn", "drive", "repair", "avoid", "discard", "keep"})
"""The decisions whose options are read from cards only the deciding crew sees: its hand (the
cards it may play or discard) or a Tracker's three (what it may keep)."""


def unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _order_key(space: Space) -> int:
    return SPACE_INDEX[space]


SPACE_INDEX: Final = {space: i for i, space in enumerate(SPACES)}
NEIGHBOURS_IN_ORDER: Final[dict[Space, tuple[Space, ...]]] = {
    space: tuple(sorted(near, key=_order_key)) for space, near in NEIGHBOURS.items()}
"""The spaces next to each space, in board order."""


# ---------------------------------------------------------------------- queries


def in_city(crew: CrewState) -> bool:
    return crew.space in CITY_AT


def vehicle_spaces(st: GreatRaceState) -> set[Space]:
    return {crew.space for crew in st.crews.values()}


def free_tiles(st: GreatRaceState) -> list[Space]:
    """Tile spaces no vehicle stands on, in board order (what cards and guards may touch)."""
    occupied = vehicle_spaces(st)
    return sorted((s for s in st.tiles if s not in occupied), key=_order_key)


def entry_petrol(st: GreatRaceState, space: Space, tile: TileCode | None) -> int:
    """Petrol to enter ``space`` holding ``tile`` (None: a city, or open track)."""
    if space in CITY_AT:
        return 1
    risk = 1 if space in RISK else 0
    if tile is None:
        return BLANK_TRACK_PETROL + risk
    return TILE[tile].petrol + risk


def can_meet(crew: CrewState, petrol: int, damage: int) -> bool:
    return crew.petrol >= petrol and crew.engine + crew.chassis >= damage


def network(st: GreatRaceState, crew: CrewState) -> set[Space]:
    """The vehicle's space and every tile or city space joined to it by neighbouring ones."""
    seen = {crew.space}
    todo = [crew.space]
    while todo:
        for near in NEIGHBOURS[todo.pop()]:
            if near not in seen and (near in st.tiles or near in CITY_AT):
                seen.add(near)
                todo.append(near)
    return seen


def placement_spaces(st: GreatRaceState, crew: CrewState) -> list[Space]:
    """Blank terrain spaces next to the vehicle's network, in board order."""
    spaces: set[Space] = set()
    for space in network(st, crew):
        for near in NEIGHBOURS[space]:
            if near in TERRAIN and near not in st.tiles:
                spaces.add(near)
    return sorted(spaces, key=_order_key)


def petrol_price(crew: CrewState) -> int:
    return PETROL_PRICE["city" if in_city(crew) else "wild"]


def part_price(crew: CrewState) -> int:
    return PART_PRICE["city" if in_city(crew) else "wild"]


def can_avoid(crew: CrewState) -> bool:
    """Whether the crew holds a Militia or has a security assistant (before rules version
    :data:`PUBLIC_FLOW`, only such a crew was asked to avoid a DANGER)."""
    return "militia" in crew.hand or crew.assistants["S"] > 0


def may_avoid(crew: CrewState) -> bool:
    """Whether the crew may hold a way to avoid a DANGER, as everyone can tell: a card in hand
    (a Militia, for all the others know) or a security assistant."""
    return bool(crew.hand) or crew.assistants["S"] > 0


def options_hidden(st: GreatRaceState, kind: str, name: Crew) -> bool:
    """Whether the options of ``name``'s ``kind`` decision are read from cards only that crew
    sees, so that the others cannot tell how many it has (a Tracker's three cards; a hand that
    is not empty, for a decision where cards may be played or discarded)."""
    return kind == "keep" or (kind in HIDDEN_OPTIONS and bool(st.crews[name].hand))


def avoid_options(crew: CrewState) -> list[str]:
    options = []
    if "militia" in crew.hand:
        options.append("play militia")
    if crew.assistants["S"] > 0:
        options.append("guard")
    return [*options, "take"]


def damage_options(crew: CrewState, amount: int) -> list[str]:
    """Every split of ``amount`` the gauges can take, ENGINE-heavy first."""
    return [
        damage_text(e, amount - e)
        for e in range(amount, -1, -1)
        if e <= crew.engine and amount - e <= crew.chassis
    ]


def pair_options(card: str, spaces: list[Space], single: bool) -> list[str]:
    options = [f"play {card} {a} {b}" for a, b in combinations(spaces, 2)]
    if single and len(spaces) == 1:
        options.append(f"play {card} {spaces[0]}")
    return options


def turn_options(st: GreatRaceState) -> list[str]:
    """The single next inputs of the active crew's convoy sequence."""
    assert st.active is not None
    crew = st.crews[st.active]
    options: list[str] = []
    if not st.started:
        room = min(MAX_PETROL - crew.petrol, crew.money // petrol_price(crew))
        options += [f"buy {n}" for n in range(1, room + 1)]
    for card in unique(crew.hand):
        options += sequence_card_options(st, crew, card)
    if leader_ready(st, crew) and crew.crew in ("french", "italian"):
        options.append("leader")
    boxes = crew.assistants
    if boxes["P"]:
        options += ["scout", "draw"]
    if boxes["M"]:
        options += ["repair", "drive"]
    if boxes["S"]:
        near = set(NEIGHBOURS[crew.space])
        options += [f"guard {s}" for s in free_tiles(st) if s in near]
    if boxes["F"]:
        options.append("fund")
    return [*options, "pass"]


def leader_ready(st: GreatRaceState, crew: CrewState) -> bool:
    return st.leaders and not crew.leader_used


def sequence_card_options(st: GreatRaceState, crew: CrewState, card: Card) -> list[str]:
    if card in ("jerrycan", "refueling-station"):
        return [f"play {card}"] if crew.petrol < MAX_PETROL else []
    if card in ("financial", "driver", "repairman", "cartographer", "tracker", "topographer"):
        return [f"play {card}"]
    if card == "saboteur":
        return [f"play saboteur {c.crew}" for c in st.racing() if c.crew != crew.crew]
    if card == "trail-hunter":
        return pair_options(card, free_tiles(st), single=True)
    if card == "con-artist":
        return pair_options(card, free_tiles(st), single=False)
    return []


def discard_options(crew: CrewState) -> list[str]:
    options = [f"discard {card}" for card in unique(crew.hand)]
    if "jerrycan" in crew.hand and crew.petrol < MAX_PETROL:
        options.append("play jerrycan")
    return options


def to_plan(st: GreatRaceState) -> list[Crew]:
    return [c.crew for c in st.racing() if c.plan is None]


def top_decision(st: GreatRaceState) -> dict[str, Any] | None:
    """The pending decision without options, or None once the game is over."""
    if st.window is not None:
        return {k: (list(v) if isinstance(v, list) else v) for k, v in st.window.items()
                if k != "options"}
    if st.phase == BIVOUAC:
        return {"kind": "take", "crew": st.takers[0], "crews": [st.takers[0]]}
    if st.phase == PLANNING:
        crews = to_plan(st)
        return {"kind": "plan", "crew": crews[0], "crews": crews}
    if st.phase == CONVOY:
        assert st.active is not None
        return {"kind": "turn", "crew": st.active, "crews": [st.active]}
    return None


def decision_options(st: GreatRaceState, crew: Crew | None = None) -> list[str]:
    """The legal inputs of the pending decision; only ``crew``'s when it is given."""
    window = st.window
    if window is not None:  # what top_decision would copy, read in place
        return [] if crew is not None and crew not in window["crews"] else list(window["options"])
    decision = top_decision(st)
    if decision is None or (crew is not None and crew not in decision["crews"]):
        return []
    kind = decision["kind"]
    if kind == "take":
        return unique([f"take {card}" for card in st.market])
    if kind == "plan":
        return [plan for c in decision["crews"] if crew in (None, c) for plan in all_plans(c)]
    return turn_options(st)


# ---------------------------------------------------------------------- the rules


def city_cards(st: GreatRaceState, crew: CrewState, city: str) -> int:
    """The cards ``crew`` draws entering ``city``: the city's value (none in the purple
    cities), at least :data:`BELGIAN_MIN_CARDS` for the Belgian leader, in any city (in the
    first rules version not in the purple cities)."""
    count = CITY[city].cards
    belgian = st.leaders and crew.crew == "belgian"
    if belgian and (st.version != FIRST_VERSION or city not in PURPLE):
        count = max(count, BELGIAN_MIN_CARDS)
    return count


def called_off(st: GreatRaceState) -> bool:
    """Whether the race ends unfinished at this maintenance: only in the first rules version,
    at the end of game turn 30 (the rulebook has no turn limit)."""
    return st.version == FIRST_VERSION and st.turn >= FIRST_VERSION_CALL_OFF_TURN


class Trip:
    """What a DRIVER action has done so far."""

    __slots__ = ("allowance", "english", "entered", "guides", "transports")

    def __init__(self, allowance: int) -> None:
        self.allowance = allowance
        self.entered = 0
        self.guides = 0
        self.transports = 0
        self.english = False

    def fare(self, cost: int, kind: str) -> int:
        saving = TRANSPORT_SAVING * self.transports
        if self.english and kind == "sea":
            saving += TRANSPORT_SAVING
        return max(0, cost - saving)


def repair_options(crew: CrewState) -> list[str]:
    options = []
    if "spare-parts" in crew.hand:
        options += ["play spare-parts E", "play spare-parts C"]
    if "toolbox" in crew.hand:
        options += [toolbox_text(e, TOOLBOX_GAIN - e) for e in range(TOOLBOX_GAIN, -1, -1)]
    if crew.money >= part_price(crew):
        if crew.engine < MAX_ENGINE:
            options.append("buy E")
        if crew.chassis < MAX_CHASSIS:
            options.append("buy C")
    if "jerrycan" in crew.hand and crew.petrol < MAX_PETROL:
        options.append("play jerrycan")
    return [*options, "done"]


def drive_options(st: GreatRaceState, crew: CrewState, trip: Trip) -> list[str]:
    targets = [f"go {space}" for space in drive_targets(st, crew, trip)]
    return [*targets, *drive_plays(st, crew, trip), "stop"]


def can_choose_drive(st: GreatRaceState, crew: CrewState, trip: Trip) -> bool:
    """Whether :func:`drive_options` has more than "stop", found without listing them."""
    if drive_plays(st, crew, trip):
        return True
    if any(can_enter(st, crew, space) for space in NEIGHBOURS[crew.space]):
        return True
    city = CITY_AT.get(crew.space)
    return city is not None and crew.petrol >= 1 and any(
        crew.money >= trip.fare(line.cost, line.kind) for line in lines_from(city.slug))


def drive_plays(st: GreatRaceState, crew: CrewState, trip: Trip) -> list[str]:
    """The cards and the leader's power a drive may play before its next step."""
    options = []
    city = CITY_AT.get(crew.space)
    lines = lines_from(city.slug) if city else ()
    if "guide" in crew.hand:
        options.append("play guide")
    if "transport" in crew.hand and lines:
        options.append("play transport")
    if "jerrycan" in crew.hand and crew.petrol < MAX_PETROL:
        options.append("play jerrycan")
    if (
        crew.crew == "english"
        and leader_ready(st, crew)
        and not trip.english
        and any(line.kind == "sea" for line in lines)
    ):
        options.append("leader")
    return options


def drive_targets(st: GreatRaceState, crew: CrewState, trip: Trip) -> list[Space]:
    """The spaces the vehicle may enter next, in board order: neighbours it can pay for, and
    line ends (the neighbours are walked in board order, so only line ends need sorting)."""
    targets = [space for space in NEIGHBOURS_IN_ORDER[crew.space]
               if can_enter(st, crew, space)]
    city = CITY_AT.get(crew.space)
    if city is not None and crew.petrol >= 1:
        ends = [CITY[line.other(city.slug)].space for line in lines_from(city.slug)
                if crew.money >= trip.fare(line.cost, line.kind)]
        if ends:
            return sorted(unique(targets + ends), key=_order_key)
    return targets


def can_enter(st: GreatRaceState, crew: CrewState, space: Space) -> bool:
    """Whether the vehicle can pay for entering ``space``, a neighbour (a blank one: for the
    cheapest tile, when the bag still has tiles)."""
    if space in CITY_AT:
        return crew.petrol >= 1
    tile = st.tiles.get(space)
    if tile is not None:
        return can_meet(crew, entry_petrol(st, space, tile), TILE[tile].damage)
    if st.bag:
        return crew.petrol >= 1 + (1 if space in RISK else 0)
    return crew.petrol >= entry_petrol(st, space, None)


def prestige(crew: CrewState) -> dict[str, int]:
    assert crew.finished is not None
    place = PLACE_PRESTIGE[crew.finished - 1] if crew.finished <= len(PLACE_PRESTIGE) else 0
    parts = {
        "place": place,
        "engine": crew.engine,
        "chassis": crew.chassis,
        "money": crew.money // 50,
    }
    parts["total"] = sum(parts.values())
    return parts


def winners(st: GreatRaceState) -> list[Crew]:
    """The finisher with the highest prestige (a tie goes to the earlier finisher)."""
    ranked = ranking(st)
    return ranked[:1] if ranked and st.crews[ranked[0]].finished is not None else []


def ranking(st: GreatRaceState) -> list[Crew]:
    """Every crew in its final order once the race is over (empty before): the finishers by
    prestige, a tie going to the earlier finisher (so no two share a place), then the crews
    that did not finish, the furthest on the progression track first (they have no place:
    only finishers score)."""
    if st.phase != OVER or not st.scores:
        return []
    scores = st.scores
    finishers = sorted(st.finishers, key=lambda name: (-scores[name]["total"],
                                                        st.finishers.index(name)))
    track = [name for name in st.track if name not in finishers]
    rest = [name for name in st.crews if name not in finishers and name not in track]
    return finishers + track + rest


def line_between(a: Space, b: Space) -> Line | None:
    """The transport line joining the cities on ``a`` and ``b``, if any."""
    city_a, city_b = CITY_AT.get(a), CITY_AT.get(b)
    if city_a is None or city_b is None:
        return None
    return next((ln for ln in lines_from(city_a.slug) if ln.other(city_a.slug) == city_b.slug),
                None)
