"""The Great Race in words, in every language of :mod:`app.core.i18n`: the one place that words its
options, decisions, crews, cards, boxes, tiles, random outcomes and what an option changes.

Pages, signed-link pages, mails and the command line word an option the same way through
:class:`app.games.greatrace.ui.GreatRaceUI`. Every English string here is a message id of the
catalogue (``app/locale/<lang>/LC_MESSAGES/messages.po``). Polish sentences are built so that a
crew's or card's name never has to be declined ("Zagraj: Kanister", "Ekipa francuska: ...").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from app.core.i18n import N_, NC_, translate
from app.games.greatrace.engine.board import CITY, CITY_AT, LINES, NEIGHBOURS, RISK, parse_space
from app.games.greatrace.engine.pieces import (
    CARD_TIMING,
    CREWS,
    FINANCIAL_GAIN,
    PART_PRICE,
    PETROL_PRICE,
    REFUEL_GAIN,
    TILE,
    TILES_DRAWN,
    funding,
)

SPACE: Final = re.compile(r"\b([A-Ka-k](?:1[0-5]|[1-9]))\b")
CREW_NAMES: Final = {"french": N_("French crew"), "belgian": N_("Belgian crew"),
                     "italian": N_("Italian crew"), "english": N_("English crew")}
CARD_NAMES: Final = {
    "trail-hunter": NC_("great race card", "Trail Hunter"),
    "financial": NC_("great race card", "Financial"),
    "jerrycan": NC_("great race card", "Jerrycan"),
    "refueling-station": NC_("great race card", "Refueling Station"),
    "transport": NC_("great race card", "Transport"),
    "spare-parts": NC_("great race card", "Spare Parts"),
    "toolbox": NC_("great race card", "Toolbox"),
    "guide": NC_("great race card", "Guide"),
    "militia": NC_("great race card", "Militia"),
    "driver": NC_("great race card", "Driver"),
    "cartographer": NC_("great race card", "Cartographer"),
    "saboteur": NC_("great race card", "Saboteur"),
    "tracker": NC_("great race card", "Tracker"),
    "con-artist": NC_("great race card", "Con Artist"),
    "repairman": NC_("great race card", "Repairman"),
    "topographer": NC_("great race card", "Topographer"),
}
"""The resource cards' names (translated with ``context="great race card"``)."""
CARD_EFFECTS: Final = {
    "trail-hunter": N_("DANGER: remove 2 tiles from the board (no vehicle on them)."),
    "financial": N_("Receive 30F."),
    "jerrycan": N_("+1 petrol."),
    "refueling-station": N_("+5 petrol."),
    "transport": N_("50F less for this drive's transport line."),
    "spare-parts": N_("+1 engine or chassis."),
    "toolbox": N_("+3 split between engine and chassis."),
    "guide": N_("Ignore one STOP symbol during this drive."),
    "militia": N_("Avoid one DANGER aimed at you."),
    "driver": N_("A drive without an assistant."),
    "cartographer": N_("Draw 3 terrain tiles and place them."),
    "saboteur": N_("DANGER: another crew loses 2 engine/chassis, split by you."),
    "tracker": N_("Draw 3 resource cards, keep 2, discard the third."),
    "con-artist": N_("DANGER: swap 2 tiles on the board (no vehicle on them)."),
    "repairman": N_("A repair without an assistant."),
    "topographer": N_("Draw 4 terrain tiles, place 2, remove the other 2."),
}
TIMING_WORDS: Final = {"sequence": N_("in your sequence"), "driver": N_("while driving"),
                       "repairman": N_("while repairing"), "any": N_("any time")}
BOX_NAMES: Final = {"P": NC_("great race box", "Pathfinder"),
                     "M": NC_("great race box", "Mechanics"),
                     "S": NC_("great race box", "Security"),
                     "F": NC_("great race box", "Funding")}
BOX_COUNTS: Final = {"P": (N_("{n} pathfinder"), N_("{n} pathfinders")),
                     "M": (N_("{n} mechanic"), N_("{n} mechanics")),
                     "S": (N_("{n} security"), N_("{n} security")),
                     "F": (N_("{n} funding"), N_("{n} funding"))}
"""A box's assistants counted (the catalogue holds no plural forms: English picks the form,
Polish writes every count the same way)."""
GAUGES: Final = {"E": NC_("great race gauge", "engine"), "C": NC_("great race gauge", "chassis")}
VARIANT_NAMES: Final = {"standard": N_("Standard (2-4 players)"),
                        "leaders": N_("With the Leader module (leaders' powers, Topographers)")}
LEADER_POWERS: Final = {
    "french": N_("Leader: draw 3 terrain tiles and place them"),
    "italian": N_("Leader: a repair"),
    "english": N_("Leader: 50F less for this sea line"),
    "belgian": N_("Leader"),
}
SIMPLE: Final = {"draw": N_("Pathfinder: draw a resource card"),
                 "repair": N_("Mechanic: repair the vehicle"),
                 "stop": N_("Stop driving"), "done": N_("End the repair"),
                 "pass": N_("Pass (remove your assistants but security)")}
GROUPS: Final = {"buy": N_("Petrol and parts"), "play": N_("Cards"), "leader": N_("Leader"),
                 "scout": N_("Assistants"), "draw": N_("Assistants"), "repair": N_("Assistants"),
                 "drive": N_("Assistants"), "guard": N_("Assistants"), "fund": N_("Assistants"),
                 "go": N_("Drive"), "stop": N_("Drive"), "done": N_("Repair")}
GROUP_ORDER: Final = (N_("Drive"), N_("Assistants"), N_("Cards"), N_("Petrol and parts"),
                      N_("Leader"), N_("Repair"), N_("Other"))
DECISION_HEADINGS: Final = {
    "take": N_("Take a card from the market"),
    "plan": N_("Plan your 5 assistants"),
    "repair": N_("Repair your vehicle"),
    "keep": N_("Keep two of the Tracker's cards"),
}
WAITING_WORDS: Final = {
    "take": N_("take a card from the market"),
    "discard": N_("discard down to the hand limit"),
    "plan": N_("plan their assistants"),
    "turn": N_("play a convoy sequence"),
    "place": N_("place the drawn tiles"),
    "drive": N_("drive"),
    "repair": N_("repair"),
    "avoid": N_("answer a DANGER"),
    "damage": N_("split damage"),
    "keep": N_("keep two cards"),
}
DECISION_SENTENCES: Final = {
    "take": N_("{crew} takes a card from the market."),
    "discard": N_("{crew} must discard down to the hand limit."),
    "plan": N_("The crews plan their assistants in secret."),
    "turn": N_("{crew} plays a convoy sequence."),
    "place": N_("{crew} places the drawn tiles."),
    "drive": N_("{crew} is driving."),
    "repair": N_("{crew} is repairing."),
    "avoid": N_("{crew} faces a DANGER."),
    "damage": N_("{crew} splits damage."),
    "keep": N_("{crew} keeps two of the Tracker's cards."),
}


# ------------------------------------------------------------------ names


def crew_name(crew: str | None, lang: str) -> str:
    """A crew by name: "French crew" ("Ekipa francuska")."""
    if not crew:
        return "?"
    english = CREW_NAMES.get(crew)
    return translate(lang, english) if english else crew


def card_name(card: str, lang: str) -> str:
    english = CARD_NAMES.get(card)
    return translate(lang, english, context="great race card") if english else card


def card_info(card: str, lang: str) -> dict[str, str]:
    """A resource card for a hand shown on a page: slug, name, effect and when it is played."""
    effect = CARD_EFFECTS.get(card)
    timing = TIMING_WORDS.get(CARD_TIMING.get(card, "sequence"), "")
    return {
        "slug": card,
        "name": card_name(card, lang),
        "effect": translate(lang, effect) if effect else "",
        "timing": translate(lang, timing) if timing else "",
    }


def box_name(box: str, lang: str) -> str:
    """A dashboard box: Pathfinder, Mechanics, Security, Funding."""
    english = BOX_NAMES.get(box.upper())
    return translate(lang, english, context="great race box") if english else box


def box_count(box: str, n: int, lang: str) -> str:
    """``n`` assistants in a box: "2 mechanics" ("mechanicy: 2")."""
    one, many = BOX_COUNTS[box]
    return translate(lang, one if n == 1 else many, n=n)


def city_name(slug: str) -> str:
    """A city as the board prints it (the map's names are the same in every language)."""
    city = CITY.get(slug)
    return city.name if city else slug


def place_name(space: str | None) -> str:
    """A space for people: a city's name with its space ("Dakar (A4)"), else the space."""
    if not space:
        return "?"
    city = CITY_AT.get(space)
    return f"{city.name} ({space})" if city else space


def gauge_name(gauge: str, lang: str) -> str:
    english = GAUGES.get(gauge.upper())
    return translate(lang, english, context="great race gauge") if english else gauge


def tile_words(code: str, lang: str, space: str | None = None) -> str:
    """A terrain tile's requirements: "2 petrol, 1 damage, DANGER" (+1 petrol in a risk zone
    when ``space`` says where it lies)."""
    tile = TILE.get(code.lower())
    if tile is None:
        return code
    petrol = tile.petrol + (1 if space in RISK else 0)
    parts = [translate(lang, "{n} petrol", n=petrol)]
    if tile.damage:
        parts.append(translate(lang, "{n} damage", n=tile.damage))
    if tile.danger:
        parts.append(translate(lang, "DANGER"))
    if tile.stop:
        parts.append(translate(lang, "STOP"))
    return ", ".join(parts)


def variant_name(variant: str, lang: str) -> str:
    english = VARIANT_NAMES.get(variant)
    return translate(lang, english) if english else variant


# ------------------------------------------------------------------ options


def _crew_info(view: Mapping[str, Any] | None, crew: str | None) -> Mapping[str, Any]:
    found = ((view or {}).get("crews") or {}).get(crew or "")
    return found if isinstance(found, Mapping) else {}


def _in_city(info: Mapping[str, Any]) -> bool:
    return bool(info.get("city")) or str(info.get("space") or "") in CITY_AT


def _plan_words(args: list[str], lang: str) -> str:
    counts = dict.fromkeys(BOX_NAMES, 0)
    for arg in args:
        match = re.fullmatch(r"([PMSFpmsf])(\d+)", arg)
        if match:
            counts[match[1].upper()] += int(match[2])
    parts = [box_count(box, n, lang) for box, n in counts.items() if n]
    return translate(lang, "Plan: {boxes}", boxes=", ".join(parts))


def _play_words(args: list[str], lang: str) -> str:
    card, rest = args[0], args[1:]
    name = card_name(card, lang)
    spaces = [s.upper() for s in rest if parse_space(s)]
    if card == "saboteur" and rest:
        return translate(lang, "Play {card} against the {crew}", card=name,
                         crew=crew_name(rest[0], lang))
    if card == "trail-hunter" and spaces:
        return translate(lang, "Play {card}: remove the tiles on {spaces}", card=name,
                         spaces=", ".join(spaces))
    if card == "con-artist" and spaces:
        return translate(lang, "Play {card}: swap the tiles on {spaces}", card=name,
                         spaces=", ".join(spaces))
    if card in ("spare-parts", "toolbox") and rest:
        gauges = [a if card == "toolbox" else f"{a}1" for a in rest]
        return translate(lang, "Play {card}: {gain}", card=name, gain=_repair_gain(gauges, lang))
    effects = {"financial": (N_("+{n}F"), FINANCIAL_GAIN),
               "refueling-station": (N_("+{n} petrol"), REFUEL_GAIN),
               "jerrycan": (N_("+{n} petrol"), 1)}
    if card in effects:
        text, n = effects[card]
        return translate(lang, "Play {card}: {gain}", card=name, gain=translate(lang, text, n=n))
    if card in ("cartographer", "topographer", "tracker", "driver", "repairman", "guide",
                "transport", "militia"):
        return translate(lang, "Play {card}: {effect}", card=name,
                         effect=_short_effect(card, lang))
    return translate(lang, "Play {card}", card=name)


def _repair_gain(gauges: list[str], lang: str) -> str:
    parts = []
    for arg in gauges:
        match = re.fullmatch(r"([ECec])(\d+)", arg)
        if match:
            parts.append(translate(lang, "+{n} {gauge}", n=int(match[2]),
                                   gauge=gauge_name(match[1], lang)))
    return ", ".join(parts)


def _short_effect(card: str, lang: str) -> str:
    short = {
        "cartographer": N_("draw 3 tiles and place them"),
        "topographer": N_("draw 4 tiles, place 2"),
        "tracker": N_("draw 3 cards, keep 2"),
        "driver": N_("a drive without an assistant"),
        "repairman": N_("a repair without an assistant"),
        "guide": N_("ignore one STOP this drive"),
        "transport": N_("50F less for the transport line"),
        "militia": N_("avoid the DANGER"),
    }
    return translate(lang, short[card])


def _go_words(target: str, view: Mapping[str, Any] | None, crew: str | None,
              lang: str) -> str:
    space = parse_space(target) or (CITY[target.lower()].space if target.lower() in CITY
                                    else None)
    if space is None:
        return translate(lang, "Drive to {place}", place=target)
    here = str(_crew_info(view, crew).get("space") or "")
    city = CITY_AT.get(space)
    if city is not None:
        line = next((ln for ln in LINES if here in CITY_AT and
                     {ln.a, ln.b} == {CITY_AT[here].slug, city.slug}), None)
        if line is not None and space not in NEIGHBOURS.get(here, ()):
            kind = (translate(lang, "sea line") if line.kind == "sea"
                    else translate(lang, "air line"))
            return translate(lang, "Take the {line} to {place} ({cost}F, 1 petrol)", line=kind,
                             place=place_name(space), cost=line.cost)
        return translate(lang, "Drive to {place} (city: 1 petrol, the drive ends)",
                         place=place_name(space))
    tile = ((view or {}).get("tiles") or {}).get(space)
    if isinstance(tile, str) and tile.lower() in TILE:
        return translate(lang, "Drive to {place} (tile: {tile})", place=space,
                         tile=tile_words(tile, lang, space))
    if view is None:
        return translate(lang, "Drive to {place}", place=space)
    return translate(lang, "Drive to {place} (unknown ground: a tile is drawn)", place=space)


def _damage_words(args: list[str], pending: Mapping[str, Any], crew: str | None,
                  lang: str) -> str:
    parts = []
    for arg in args:
        match = re.fullmatch(r"([ECec])(\d+)", arg)
        if match:
            parts.append(translate(lang, "{gauge} -{n}", gauge=gauge_name(match[1], lang),
                                   n=int(match[2])))
    target = pending.get("target")
    if target and target != crew:
        return translate(lang, "Damage the {crew}: {parts}", crew=crew_name(str(target), lang),
                         parts=", ".join(parts))
    return translate(lang, "Damage: {parts}", parts=", ".join(parts))


def _turn_words(verb: str, args: list[str], view: Mapping[str, Any] | None, crew: str | None,
                lang: str) -> str | None:
    info = _crew_info(view, crew)
    where = "city" if _in_city(info) else "wild"
    if verb == "buy" and args and args[0].isdigit():
        n = int(args[0])
        if not info:
            return translate(lang, "Buy {n} petrol", n=n)
        return translate(lang, "Buy {n} petrol for {price}F", n=n,
                         price=n * PETROL_PRICE[where])
    if verb == "buy" and args and args[0].upper() in GAUGES:
        gauge = gauge_name(args[0], lang)
        if not info:
            return translate(lang, "Buy a part: +1 {gauge}", gauge=gauge)
        return translate(lang, "Buy a part: +1 {gauge} for {price}F", gauge=gauge,
                         price=PART_PRICE[where])
    if verb == "scout":
        drawn, placed = TILES_DRAWN["scout"]
        return translate(lang, "Pathfinder: draw {drawn} tiles and place {placed}",
                         drawn=drawn, placed=placed)
    if verb == "drive" and not args:
        engine = info.get("engine")
        if isinstance(engine, int):
            return translate(lang, "Mechanic: drive (up to {n} spaces)", n=engine)
        return translate(lang, "Mechanic: drive")
    if verb == "guard":
        if args:
            tile = ((view or {}).get("tiles") or {}).get(args[0].upper())
            shown = (" (" + tile_words(tile, lang, args[0].upper()) + ")"
                     if isinstance(tile, str) else "")  # (no f-string in a translate call)
            return translate(lang, "Security: discard the tile on {space}{tile}",
                             space=args[0].upper(), tile=shown)
        return translate(lang, "Security: avoid the DANGER")
    if verb == "fund":
        boxes = info.get("assistants")
        count = boxes.get("F") if isinstance(boxes, Mapping) else None
        if isinstance(count, int) and count:
            return translate(lang, "Funding: receive {money}F", money=funding(count))
        return translate(lang, "Funding: receive the money")
    if verb == "leader":
        power = LEADER_POWERS.get(crew or "", N_("Leader"))
        return translate(lang, power)
    return None


def describe_option(option: str, view: Mapping[str, Any] | None, lang: str) -> str:
    """An input in plain words: ``go E4`` -> "Drive to E4 (tile: 2 petrol, 1 damage)".
    ``view`` is the state before it (whose decision, the tiles, the crew's money); inputs
    joined with ``;`` are worded each."""
    parts = [p.strip() for p in option.split(";") if p.strip()]
    if len(parts) > 1:
        return "; ".join(_named_plan(p, lang) or describe_option(p, view, lang) for p in parts)
    words = option.split()
    if not words:
        return option
    pending = (view or {}).get("pending") or {}
    if not isinstance(pending, Mapping):
        pending = {}
    crew = pending.get("crew") or pending.get("titan")
    crew = str(crew) if crew else None
    verb, args = words[0].lower(), [w.lower() for w in words[1:]]
    found = _option_words(verb, args, view, pending, crew, lang)
    return found if found is not None else option


def _named_plan(part: str, lang: str) -> str | None:
    """A plan among several (the reveal) with its crew's name: "French crew: Plan: ..."."""
    words = part.lower().split()
    if len(words) > 1 and words[0] == "plan" and words[1] in CREWS:
        return f"{crew_name(words[1], lang)}: {_plan_words(words[2:], lang)}"
    return None


def _option_words(verb: str, args: list[str], view: Mapping[str, Any] | None,
                  pending: Mapping[str, Any], crew: str | None, lang: str) -> str | None:
    if verb == "take":
        if args:
            return translate(lang, "Take the {card}", card=card_name(args[0], lang))
        if pending.get("danger") in CARD_NAMES:
            return translate(lang, "Take the {card}'s effect",
                             card=card_name(str(pending["danger"]), lang))
        return translate(lang, "Take the DANGER (2 more damage)")
    if verb == "discard" and args:
        return translate(lang, "Discard {card}", card=card_name(args[0], lang))
    if verb == "plan":
        if args and args[0] in CREWS:
            return _plan_words(args[1:], lang)
        return _plan_words(args, lang)
    if verb == "play" and args:
        return _play_words(args, lang)
    if verb == "place" and len(args) == 2:
        return translate(lang, "Place the tile ({tile}) on {space}",
                         tile=tile_words(args[0], lang, args[1].upper()), space=args[1].upper())
    if verb == "go" and args:
        return _go_words(args[0], view, crew, lang)
    if verb == "damage":
        return _damage_words(args, pending, crew, lang)
    if verb == "keep":
        if len(args) == 2 and args[0] == "2" and args[1] == "cards":
            return translate(lang, "Keep 2 cards")
        return translate(lang, "Keep {cards}", cards=", ".join(card_name(a, lang)
                                                               for a in args))
    if verb in SIMPLE and not args:
        return translate(lang, SIMPLE[verb])
    return _turn_words(verb, args, view, crew, lang)


def option_group(option: str) -> str:
    """The heading an option is listed under in the composer (an English message id)."""
    return GROUPS.get(option.split(" ", 1)[0].lower(), N_("Other"))


def option_targets(option: str, view: Mapping[str, Any]) -> list[str]:
    """Spaces an option names: spaces written in it, and cities named by their slug."""
    words = option.split()
    found: list[str] = []
    for word in words[1:]:
        space = parse_space(word) if SPACE.fullmatch(word) else None
        if space is None and word.lower() in CITY:
            space = CITY[word.lower()].space
        if space is not None:
            found.append(space)
    return list(dict.fromkeys(found))


# ------------------------------------------------------------------ decisions


def decision_heading(pending: Mapping[str, Any], lang: str) -> str:
    """The composer's heading: what the deciding player is asked."""
    kind = str(pending.get("kind"))
    if kind in DECISION_HEADINGS:
        return translate(lang, DECISION_HEADINGS[kind])
    if kind == "discard":
        return translate(lang, "Too many cards: discard down to {limit}",
                         limit=pending.get("limit", "?"))
    if kind == "turn":
        if pending.get("begun"):
            return translate(lang, "Your sequence goes on: play cards or an assistant")
        return translate(lang, "Your convoy sequence")
    if kind == "place":
        return translate(lang, "Place the drawn tiles ({n} to place)", n=pending.get("place", 1))
    if kind == "drive":
        return translate(lang, "Driving: {entered} of {allowance} spaces entered",
                         entered=pending.get("entered", 0), allowance=pending.get("allowance", 0))
    if kind == "avoid":
        return translate(lang, "DANGER: {danger}", danger=danger_words(pending, lang))
    if kind == "damage":
        return translate(lang, "Split {n} damage between engine and chassis",
                         n=pending.get("amount", "?"))
    return translate(lang, "Your decision")


def danger_words(pending: Mapping[str, Any], lang: str) -> str:
    """What threatens in an avoid decision: a tile's DANGER, or a card and who played it."""
    danger = str(pending.get("danger") or "tile")
    if danger == "tile":
        return translate(lang, "a DANGER tile: avoid it or take 2 more damage")
    source = pending.get("source")
    return translate(lang, "{card} played by the {crew}", card=card_name(danger, lang),
                     crew=crew_name(str(source), lang) if source else "?")


def waiting_words(pending: Mapping[str, Any], lang: str) -> str:
    """What the players being waited for are to do ("plan their assistants")."""
    what = WAITING_WORDS.get(str(pending.get("kind")), N_("decide"))
    return translate(lang, what)


def describe_decision(pending: Mapping[str, Any] | None, lang: str) -> str:
    """The pending decision in a sentence, for anyone."""
    if not pending:
        return translate(lang, "no decision is pending")
    kind = str(pending.get("kind"))
    crew = crew_name(str(pending.get("crew") or ""), lang)
    sentence = DECISION_SENTENCES.get(kind)
    if sentence is None:
        return f"{crew}: {kind}."
    return translate(lang, sentence, crew=crew)


# ------------------------------------------------------------------ outcomes and changes


def outcome_words(outcome: str, lang: str) -> tuple[str, list[str]]:
    """A random outcome of the log in words (no dice in this game)."""
    words = outcome.split()
    head, rest = (words[0], words[1:]) if words else ("", [])
    if head == "tile" and rest:
        return translate(lang, "tile drawn: {tile}", tile=tile_words(rest[0], lang)), []
    if head == "card":
        if rest:
            return translate(lang, "card drawn: {card}", card=card_name(rest[0], lang)), []
        return translate(lang, "a card was drawn"), []
    if head == "deal" and rest:
        return translate(lang, "dealt to the market: {card}", card=card_name(rest[0], lang)), []
    if head == "shuffle":
        return translate(lang, "the deck was shuffled"), []
    return outcome, []


GAUGE_FIELDS: Final = (("money", N_("{crew}: money {before}F → {after}F")),
                       ("petrol", N_("{crew}: petrol {before} → {after}")),
                       ("engine", N_("{crew}: engine {before} → {after}")),
                       ("chassis", N_("{crew}: chassis {before} → {after}")))


def _crew_changes(crew: str, old: Mapping[str, Any], new: Mapping[str, Any],
                  lang: str) -> tuple[list[str], list[str]]:
    words: list[str] = []
    marks: list[str] = []
    name = crew_name(crew, lang)
    space = new.get("space")
    if space and old.get("space") and space != old.get("space"):
        words.append(translate(lang, "{crew} to {place}", crew=name, place=place_name(space)))
        marks.append(str(space))
    for field, sentence in GAUGE_FIELDS:
        before, after = old.get(field), new.get(field)
        if isinstance(before, int) and isinstance(after, int) and before != after:
            words.append(translate(lang, sentence, crew=name, before=before, after=after))
    if new.get("finished") and not old.get("finished"):
        words.append(translate(lang, "{crew} reaches the finish (place {place})", crew=name,
                               place=new["finished"]))
    return words, marks


def changes(before: Mapping[str, Any], after: Mapping[str, Any],
            lang: str) -> tuple[list[str], list[str]]:
    """What differs from ``before`` to ``after``: words, and spaces to outline."""
    words: list[str] = []
    marks: list[str] = []
    old_crews = before.get("crews") or {}
    for crew, info in (after.get("crews") or {}).items():
        old = old_crews.get(crew)
        if isinstance(info, Mapping) and isinstance(old, Mapping):
            said, marked = _crew_changes(str(crew), old, info, lang)
            words += said
            marks += marked
    old_tiles = before.get("tiles") or {}
    new_tiles = after.get("tiles") or {}
    for space in sorted(set(new_tiles) - set(old_tiles)):
        words.append(translate(lang, "tile on {space}: {tile}", space=space,
                               tile=tile_words(str(new_tiles[space]), lang, space)))
        marks.append(space)
    for space in sorted(set(old_tiles) - set(new_tiles)):
        words.append(translate(lang, "tile removed from {space}", space=space))
        marks.append(space)
    for space in sorted(set(old_tiles) & set(new_tiles)):
        if old_tiles[space] != new_tiles[space]:
            words.append(translate(lang, "tile on {space}: {tile}", space=space,
                                   tile=tile_words(str(new_tiles[space]), lang, space)))
            marks.append(space)
    winner = after.get("winner")
    if winner and not before.get("winner"):
        words.append(translate(lang, "{crew} wins!", crew=crew_name(str(winner), lang)))
    return words, list(dict.fromkeys(marks))
