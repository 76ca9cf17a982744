"""Why an input was refused, in words a player can act on."""

from __future__ import annotations

from .board import CITY_AT, NEIGHBOURS
from .notation import DECISION_TEXT, DECISION_VERBS
from .pieces import BOX_NAMES, CARD_TIMING, CREWS, MAX_PETROL
from .rules import (
    free_tiles,
    line_between,
    petrol_price,
    placement_spaces,
    top_decision,
)
from .state import CrewState, GreatRaceState

BOX_OF_VERB = {"scout": "P", "draw": "P", "repair": "M", "drive": "M", "guard": "S", "fund": "F"}
TIMING_TEXT = {
    "sequence": "in your own convoy sequence, before the assistant action",
    "driver": "during a DRIVER action",
    "repairman": "during a REPAIRMAN action",
    "any": "at any time you owe a decision",
}


def describe(st: GreatRaceState) -> str:
    decision = top_decision(st)
    if decision is None:
        return "the race is over"
    crews = decision["crews"]
    who = f"the {crews[0]} crew" if len(crews) == 1 else f"the {', '.join(crews)} crews each"
    return f"{who} must {DECISION_TEXT[decision['kind']]}"


def explain(st: GreatRaceState, norm: str) -> str:
    """A reason for refusing ``norm``, the canonical form of an input that is not legal now."""
    decision = top_decision(st)
    assert decision is not None
    kind = decision["kind"]
    words = norm.split()
    verb = words[0]
    if verb not in DECISION_VERBS[kind]:
        return f"'{verb}' does not answer the pending decision: {describe(st)}"
    crew = st.crews[decision["crew"]]
    reason = _specific(st, kind, crew, words)
    if reason is None:
        reason = f"'{norm}' is not a legal answer now"
    return f"{reason} ({describe(st)})"


def _specific(st: GreatRaceState, kind: str, crew: CrewState, words: list[str]) -> str | None:
    verb = words[0]
    if kind == "plan":
        if words[1] not in CREWS:
            return "name your crew in the plan (plan <crew> P<n> M<n> S<n> F<n>)"
        named = st.crews.get(words[1])
        if named is None:
            return f"the {words[1]} crew is not in this race"
        return f"the {words[1]} crew has already given its plan"
    if kind == "take":
        if len(words) == 1:
            return "name the card you take (take <card>)"
        return f"there is no {words[1]} in the market; it holds {', '.join(st.market)}"
    if verb in ("play", "discard") and len(words) > 1 and words[1] not in crew.hand:
        return f"the {crew.crew} crew holds no {words[1]} card"
    if verb == "play":
        return _card_reason(st, kind, crew, words)
    if kind == "turn":
        return _turn_reason(st, crew, words)
    if kind == "drive" and verb == "go":
        return _go_reason(crew, words[1])
    if kind == "place":
        if words[1] not in st.drawn:
            return f"{words[1]} is not among the drawn tiles ({', '.join(st.drawn)})"
        spaces = placement_spaces(st, crew)
        return f"{words[2]} is not a blank space joined to your vehicle; try {', '.join(spaces)}"
    if kind == "damage":
        window = st.window or {}
        target = st.crews[str(window.get("target", crew.crew))]
        return (
            f"the split must add up to {window.get('amount')} and fit the gauges "
            f"(ENGINE {target.engine}, CHASSIS {target.chassis})"
        )
    if kind == "repair" and verb == "buy":
        if words[1].isdigit():
            return "petrol is bought only as the first thing of a sequence"
        return "a mechanical part needs the money and a gauge below its maximum"
    return None


def _card_reason(st: GreatRaceState, kind: str, crew: CrewState, words: list[str]) -> str | None:
    card = words[1]
    timing = CARD_TIMING[card]
    if card in ("jerrycan", "refueling-station") and crew.petrol >= MAX_PETROL:
        return "your petrol gauge is full"
    if card == "militia" and kind != "avoid":
        return "a Militia is played to avoid a DANGER that threatens you"
    wanted = {"turn": "sequence", "drive": "driver", "repair": "repairman"}.get(kind)
    if timing != "any" and timing != wanted:
        return f"a {card} card is played {TIMING_TEXT[timing]}"
    if card == "saboteur":
        return f"the Saboteur targets another crew still racing, not {words[2]}"
    if card in ("trail-hunter", "con-artist"):
        free = free_tiles(st)
        return (f"{card} needs tiles with no vehicle on them; the free tiles are "
                f"{', '.join(free) or 'none'}")
    if card == "transport":
        return "a Transport card needs a transport line from the city you stand in"
    return None


def _turn_reason(st: GreatRaceState, crew: CrewState, words: list[str]) -> str | None:
    verb = words[0]
    if verb == "buy":
        if not words[1].isdigit():
            return "mechanical parts are bought by a repairman (buy E or C in a repair)"
        if st.started:
            return "petrol is bought only as the first thing of a sequence"
        count = int(words[1])
        price = petrol_price(crew)
        if crew.petrol >= MAX_PETROL:
            return "the petrol gauge is full"
        if crew.petrol + count > MAX_PETROL:
            return f"the tank holds {MAX_PETROL}: you can buy {MAX_PETROL - crew.petrol} at most"
        return f"{count} petrol costs {count * price}F here and you have {crew.money}F"
    if verb in BOX_OF_VERB:
        box = BOX_OF_VERB[verb]
        if crew.assistants[box] == 0:
            return f"you have no assistant left on {BOX_NAMES[box].upper()}"
        if verb == "guard":
            near = [s for s in free_tiles(st) if s in NEIGHBOURS[crew.space]]
            return (f"a security guard discards a tile next to your vehicle with no vehicle on it: "
                    f"{', '.join(near) or 'there is none'}")
    if verb == "leader":
        if not st.leaders:
            return "this race is played without the Leader module"
        if crew.leader_used:
            return "your leader's power is used once per turn, and it is used"
        return "your leader's power is not used in a sequence"
    return None


def _go_reason(crew: CrewState, space: str) -> str:
    if space not in NEIGHBOURS[crew.space] and line_between(crew.space, space) is None:
        where = CITY_AT[crew.space].name if crew.space in CITY_AT else crew.space
        return f"{space} is not next to your vehicle on {where} nor at the end of a line from it"
    return (f"you cannot pay to enter {space} (petrol {crew.petrol}, ENGINE + CHASSIS "
            f"{crew.engine + crew.chassis}, {crew.money}F)")
