"""Why an input was refused, in words a player can act on: a :class:`Reason` (its ``str`` the
English text; its template a catalogue message the layers above translate)."""

from __future__ import annotations

from app.games.errors import N_, Reason, Word, Words

from .board import CITY_AT, NEIGHBOURS
from .notation import DECISION_TEXT, DECISION_VERBS
from .options import (
    free_tiles,
    line_between,
    petrol_price,
    placement_spaces,
    top_decision,
)
from .pieces import BOX_NAMES, CARD_TIMING, CREWS, MAX_PETROL
from .state import CrewState, GreatRaceState

BOX_OF_VERB = {"scout": "P", "draw": "P", "repair": "M", "drive": "M", "guard": "S", "fund": "F"}
TIMING_TEXT = {
    "sequence": N_("in your own convoy sequence, before the assistant action"),
    "driver": N_("during a DRIVER action"),
    "repairman": N_("during a REPAIRMAN action"),
    "any": N_("at any time you owe a decision"),
}


def describe(st: GreatRaceState) -> str:
    return str(describe_reason(st))


def describe_reason(st: GreatRaceState) -> Reason:
    """The pending decision in words (a clause of a refusal)."""
    decision = top_decision(st)
    if decision is None:
        return Reason(N_("the race is over"))
    crews = decision["crews"]
    action = Reason(DECISION_TEXT[decision["kind"]])
    if len(crews) == 1:
        return Reason(N_("the {crew} crew must {action}"),
                      {"crew": Word("crew", crews[0]), "action": action})
    return Reason(N_("the {crews} crews each must {action}"),
                  {"crews": Words("crew", tuple(crews)), "action": action})


def explain(st: GreatRaceState, norm: str) -> Reason:
    """A reason for refusing ``norm``, the canonical form of an input that is not legal now."""
    decision = top_decision(st)
    assert decision is not None
    kind = decision["kind"]
    words = norm.split()
    verb = words[0]
    if verb not in DECISION_VERBS[kind]:
        return Reason(N_("'{input}' does not answer the pending decision: {decision}"),
                      {"input": verb, "decision": describe_reason(st)})
    crew = st.crews[decision["crew"]]
    reason = _specific(st, kind, crew, words)
    if reason is None:
        reason = Reason(N_("'{input}' is not a legal answer now"), {"input": norm})
    return Reason(N_("{reason} ({decision})"), {"reason": reason,
                                                "decision": describe_reason(st)})


def _crew(crew: str) -> Word:
    return Word("crew", crew)


def _specific(st: GreatRaceState, kind: str, crew: CrewState, words: list[str]) -> Reason | None:
    verb = words[0]
    if kind == "plan":
        if words[1] not in CREWS:
            return Reason(N_("name your crew in the plan (plan <crew> P<n> M<n> S<n> F<n>)"))
        named = st.crews.get(words[1])
        if named is None:
            return Reason(N_("the {crew} crew is not in this race"), {"crew": _crew(words[1])})
        return Reason(N_("the {crew} crew has already given its plan"), {"crew": _crew(words[1])})
    if kind == "take":
        if len(words) == 1:
            return Reason(N_("name the card you take (take <card>)"))
        return Reason(N_("there is no {input} in the market; it holds {market}"),
                      {"input": words[1], "market": Words("card", tuple(st.market))})
    if verb in ("play", "discard") and len(words) > 1 and words[1] not in crew.hand:
        return Reason(N_("the {crew} crew holds no {input} card"),
                      {"crew": _crew(crew.crew), "input": words[1]})
    if verb == "play":
        return _card_reason(st, kind, crew, words)
    if kind == "turn":
        return _turn_reason(st, crew, words)
    if kind == "drive" and verb == "go":
        return _go_reason(crew, words[1])
    return _other_reason(st, kind, crew, words)


def _other_reason(st: GreatRaceState, kind: str, crew: CrewState,
                  words: list[str]) -> Reason | None:
    """The reasons of a tile placement, a damage split and a repairman's purchase."""
    if kind == "place":
        if words[1] not in st.drawn:
            return Reason(N_("{input} is not among the drawn tiles ({drawn})"),
                          {"input": words[1], "drawn": ", ".join(st.drawn)})
        spaces = placement_spaces(st, crew)
        return Reason(N_("{input} is not a blank space joined to your vehicle; try {spaces}"),
                      {"input": words[2], "spaces": ", ".join(spaces)})
    if kind == "damage":
        window = st.window or {}
        target = st.crews[str(window.get("target", crew.crew))]
        return Reason(N_("the split must add up to {amount} and fit the gauges (ENGINE {engine}, "
                         "CHASSIS {chassis})"),
                      {"amount": str(window.get("amount")), "engine": target.engine,
                       "chassis": target.chassis})
    if kind == "repair" and words[0] == "buy":
        if words[1].isdigit():
            return Reason(N_("petrol is bought only as the first thing of a sequence"))
        return Reason(N_("a mechanical part needs the money and a gauge below its maximum"))
    return None


def _card_reason(st: GreatRaceState, kind: str, crew: CrewState,
                 words: list[str]) -> Reason | None:
    card = words[1]
    timing = CARD_TIMING[card]
    if card in ("jerrycan", "refueling-station") and crew.petrol >= MAX_PETROL:
        return Reason(N_("your petrol gauge is full"))
    if card == "militia" and kind != "avoid":
        return Reason(N_("a Militia is played to avoid a DANGER that threatens you"))
    wanted = {"turn": "sequence", "drive": "driver", "repair": "repairman"}.get(kind)
    if timing != "any" and timing != wanted:
        return Reason(N_("a {card} card is played {timing}"),
                      {"card": Word("card", card), "timing": Reason(TIMING_TEXT[timing])})
    if card == "saboteur":
        return Reason(N_("the Saboteur targets another crew still racing, not {input}"),
                      {"input": words[2]})
    if card in ("trail-hunter", "con-artist"):
        free = free_tiles(st)
        return Reason(N_("{card} needs tiles with no vehicle on them; the free tiles are {free}"),
                      {"card": Word("card", card),
                       "free": ", ".join(free) if free else Reason(N_("none"))})
    if card == "transport":
        return Reason(N_("a Transport card needs a transport line from the city you stand in"))
    return None


def _turn_reason(st: GreatRaceState, crew: CrewState, words: list[str]) -> Reason | None:
    verb = words[0]
    if verb == "buy":
        return _petrol_reason(st, crew, words)
    if verb in BOX_OF_VERB:
        box = BOX_OF_VERB[verb]
        if crew.assistants[box] == 0:
            return Reason(N_("you have no assistant left on {box}"),
                          {"box": Word("box", BOX_NAMES[box].upper())})
        if verb == "guard":
            near = [s for s in free_tiles(st) if s in NEIGHBOURS[crew.space]]
            return Reason(N_("a security guard discards a tile next to your vehicle with no "
                             "vehicle on it: {spaces}"),
                          {"spaces": ", ".join(near) if near else Reason(N_("there is none"))})
    if verb == "leader":
        if not st.leaders:
            return Reason(N_("this race is played without the Leader module"))
        if crew.leader_used:
            return Reason(N_("your leader's power is used once per turn, and it is used"))
        return Reason(N_("your leader's power is not used in a sequence"))
    return None


def _petrol_reason(st: GreatRaceState, crew: CrewState, words: list[str]) -> Reason:
    if not words[1].isdigit():
        return Reason(N_("mechanical parts are bought by a repairman (buy E or C in a repair)"))
    if st.started:
        return Reason(N_("petrol is bought only as the first thing of a sequence"))
    count = int(words[1])
    price = petrol_price(crew)
    if crew.petrol >= MAX_PETROL:
        return Reason(N_("the petrol gauge is full"))
    if crew.petrol + count > MAX_PETROL:
        return Reason(N_("the tank holds {most}: you can buy {left} at most"),
                      {"most": MAX_PETROL, "left": MAX_PETROL - crew.petrol})
    return Reason(N_("{count} petrol costs {cost}F here and you have {money}F"),
                  {"count": count, "cost": count * price, "money": crew.money})


def _go_reason(crew: CrewState, space: str) -> Reason:
    if space not in NEIGHBOURS[crew.space] and line_between(crew.space, space) is None:
        where = CITY_AT[crew.space].name if crew.space in CITY_AT else crew.space
        return Reason(N_("{space} is not next to your vehicle on {where} nor at the end of a "
                         "line from it"), {"space": space, "where": where})
    return Reason(N_("you cannot pay to enter {space} (petrol {petrol}, ENGINE + CHASSIS "
                     "{parts}, {money}F)"),
                  {"space": space, "petrol": crew.petrol, "parts": crew.engine + crew.chassis,
                   "money": crew.money})
