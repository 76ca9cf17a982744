"""Titan Race in words, in every language of :mod:`app.core.i18n`: the one place that words its
options, decisions, pieces, cards, dice, outcomes and what an option changes on the board.

Pages, signed-link pages, mails and the command line all word an option the same way through
:class:`app.games.titanrace.ui.TitanRaceUI`. Every English string here is a message id of the
catalogue (``app/locale/<lang>/LC_MESSAGES/messages.po``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from app.core.i18n import N_, NC_, translate
from app.games.titanrace.engine.cards import CARD_TIMING, TITANS

SPACE: Final = re.compile(r"\b([A-F](?:1[0-2]|[1-9]))\b")
DIRECTIONS: Final = {"S": N_("straight"), "L": N_("left"), "R": N_("right"), "B": N_("back"),
                     "BL": N_("back left"), "BR": N_("back right")}
TITAN_NAMES: Final = {"grinder": N_("Grinder"), "rassik": N_("Rassik"), "craken": N_("Craken"),
                      "ragnarok": N_("Ragnarok"), "slaugg": N_("Slaugg"),
                      "chtoolhoo": N_("Chtoolhoo")}
DIE_COLOURS: Final = {
    # Translators: a die's colour; in Polish the adjective agrees with "kostka".
    "blue": NC_("die colour", "blue"), "red": NC_("die colour", "red"),
    "brown": NC_("die colour", "brown"), "green": NC_("die colour", "green"),
    "yellow": NC_("die colour", "yellow"), "purple": NC_("die colour", "purple"),
}
"""The engine's die colours (:data:`app.games.titanrace.engine.cards.COLOURS`) as message ids."""
CARD_NAMES: Final = {
    "tribal-trap": N_("Tribal Trap"), "speed-potion": N_("Speed Potion"), "leap": N_("Leap"),
    "blink": N_("Blink"), "borrowed-power": N_("Borrowed Power"), "fireball": N_("Fireball"),
    "quake": N_("Quake"), "pickpocket": N_("Pickpocket"), "thunderbolt": N_("Thunderbolt"),
    "healing-potion": N_("Healing Potion"), "last-shield": N_("Last Shield"),
    "repulse": N_("Repulse"), "dispel": N_("Dispel"),
}
CARD_EFFECTS: Final = {
    "tribal-trap": N_("Place a trap on any adjacent space."),
    "speed-potion": N_("Move 1 space straight ahead."),
    "leap": N_("Move 2 spaces diagonally the same way, jumping the first."),
    "blink": N_("Move to any empty adjacent space (backward allowed)."),
    "borrowed-power": N_("Use the Ability of an adjacent Titan as if it were yours."),
    "fireball": N_("1 damage to one space up to 2 steps straight ahead."),
    "quake": N_("Each adjacent Titan is pushed 1 space away and loses 1 Life Point."),
    "pickpocket": N_("Take a random Bonus card from an adjacent Titan's owner."),
    "thunderbolt": N_("1 damage to a Titan on an adjacent space."),
    "healing-potion": N_("Gain 2 Life Points (never above 6)."),
    "last-shield": N_("Prevent a loss of Life Points in another player's turn."),
    "repulse": N_("Another Titan's push fails: its movement ends before yours."),
    "dispel": N_("Cancel an Ability or card that targets your Titan."),
}
TIMING_WORDS: Final = {"turn": N_("your turn"), "any": N_("any time"),
                       "reaction": N_("reaction")}
FACES: Final = {
    "blue": N_("2 spaces forward"),
    "red": N_("1 space forward and a trap on one of the 3 spaces behind you"),
    "brown": N_("1 forward and 1 diagonal, in either order"),
    "green": N_("2 diagonal the same way and 1 damage ahead of you"),
    "yellow": N_("3 diagonal the same way"),
    "purple": N_("any other face's action, for 1 Life Point"),
}
VARIANT_NAMES: Final = {
    "standard": N_("Standard (3-6 players)"),
    "two-player": N_("Two players (two Titans each)"),
    "teams": N_("Teams (4 or 6 players)"),
    "grand-slam": N_("Grand Slam (three circuits, one per lap)"),
}
MAIL_VARIANTS: Final = {"standard": NC_("variant", "standard"),
                        "two-player": NC_("variant", "two players"),
                        "teams": NC_("variant", "teams"),
                        "grand-slam": NC_("variant", "Grand Slam")}
"""A variant as a mail's running text names it (translated with ``context="variant"``)."""
OPTION_GROUPS: Final = {"move": N_("Moves"), "trap": N_("Traps and damage"),
                        "hit": N_("Traps and damage"), "ability": N_("Ability"),
                        "play": N_("Cards"), "discard": N_("Cards")}
GROUP_ORDER: Final = (N_("Moves"), N_("Traps and damage"), N_("Ability"), N_("Cards"),
                      N_("Other"))
SIMPLE_OPTIONS: Final = {"reroll": N_("Reroll the die (pentacle)"), "end": N_("End the turn"),
                         "pass": N_("Pass (play no card)"), "lose": N_("Lose 1 Life Point")}
"""Inputs without arguments, worded whole."""
WAITING_WORDS: Final = {"pick": N_("pick a die"), "start": N_("choose a start space"),
                        "react": N_("react (play a card or pass)"),
                        "pirates": N_("answer the pirates")}
"""What the players being waited for are to do, by the decision's kind."""


# ------------------------------------------------------------------ names


def titan_name(titan: str | None, lang: str) -> str:
    """A Titan's name in ``lang`` (Polish gives some Titans their Polish names)."""
    if not titan:
        return "?"
    english = TITAN_NAMES.get(titan)
    return translate(lang, english) if english else titan[:1].upper() + titan[1:]


def colour_name(colour: str | None, lang: str) -> str:
    """A die's colour (in Polish the adjective agrees with "kostka")."""
    if not colour:
        return "?"
    english = DIE_COLOURS.get(colour)
    return translate(lang, english, context="die colour") if english else colour


def card_name(card: str, lang: str) -> str:
    english = CARD_NAMES.get(card)
    return translate(lang, english) if english else card


def card_info(card: str, lang: str) -> dict[str, str]:
    """A Bonus card for the hand shown on a page: slug, name, effect and when it is played."""
    effect = CARD_EFFECTS.get(card)
    return {
        "slug": card,
        "name": card_name(card, lang),
        "effect": translate(lang, effect) if effect else "",
        "timing": translate(lang, TIMING_WORDS[CARD_TIMING.get(card, "turn")]),
    }


def face_words(colour: str | None, lang: str) -> str:
    """What a die face does."""
    face = FACES.get(colour or "")
    return translate(lang, face) if face else ""


def direction(word: str, lang: str) -> str:
    english = DIRECTIONS.get(word.upper())
    return translate(lang, english) if english else word


def _args_words(args: list[str], lang: str) -> str:
    out = []
    for word in args:
        if word.upper() in DIRECTIONS:
            out.append(direction(word, lang))
        elif word in TITANS:
            out.append(titan_name(word, lang))
        else:
            out.append(word)
    return ", ".join(out)


# ------------------------------------------------------------------ options


def describe_option(option: str, lang: str, titan: str | None = None,
                    kind: str | None = None) -> str:
    """An input in plain words: ``move SS`` -> "Move straight, straight". ``titan`` is the
    acting Titan (an Ability's words depend on whose it is), ``kind`` the decision's kind (a
    discard to the pirates reads differently). Inputs joined with ``;`` are worded each."""
    parts = [p.strip() for p in option.split(";") if p.strip()]
    if len(parts) > 1:
        return "; ".join(describe_option(p, lang, titan, kind) for p in parts)
    words = option.split()
    if not words:
        return option
    verb, args = words[0].lower(), words[1:]
    first = args[0] if args else ""
    if verb == "pick" and args:
        return translate(lang, "Take the {colour} die", colour=colour_name(first.lower(), lang))
    if verb == "start" and args:
        return translate(lang, "Start on {space}", space=first.upper())
    if verb == "move" and args:
        steps = ", ".join(direction(c, lang) for c in first)
        return translate(lang, "Move {steps}", steps=steps)
    if verb == "trap" and args:
        return translate(lang, "Put a trap on {space}", space=first.upper())
    if verb == "hit" and args:
        return translate(lang, "Deal 1 damage on {space}", space=first.upper())
    if verb == "ability":
        return _describe_ability(titan, args, lang)
    if verb == "play" and args:
        label = translate(lang, "Play {card}", card=card_name(first, lang))
        return f"{label} ({_args_words(args[1:], lang)})" if len(args) > 1 else label
    if verb == "discard" and args:
        if kind == "pirates":
            return translate(lang, "Give {card} to the pirates", card=card_name(first, lang))
        return translate(lang, "Discard {card}", card=card_name(first, lang))
    if verb in SIMPLE_OPTIONS and not args:
        return translate(lang, SIMPLE_OPTIONS[verb])
    return option


def _describe_ability(titan: str | None, args: list[str], lang: str) -> str:
    space = next((a.upper() for a in args if SPACE.fullmatch(a.upper())), None)
    way = next((a for a in args if a.upper() in DIRECTIONS), None)
    label: str | None = None
    if titan == "grinder" and space:
        label = translate(lang, "Ability: a trap on {space}", space=space)
    elif titan == "rassik" and way:
        label = translate(lang, "Ability: move 1 space {direction}",
                          direction=direction(way, lang))
    elif titan == "craken" and space:
        label = translate(lang, "Ability: swap with the Titan on {space}", space=space)
    elif titan == "ragnarok" and space and way:
        label = translate(lang, "Ability: push the Titan on {space} 1 space {direction}",
                          space=space, direction=direction(way, lang))
    elif titan == "slaugg":
        label = translate(lang, "Ability: 1 damage on each of the 3 spaces before him")
    elif titan == "chtoolhoo" and space:
        label = translate(lang, "Ability: drain the Titan on {space}", space=space)
    if label is not None:
        return f"{titan_name(titan, lang)} · {label}"
    base = translate(lang, "Use the Ability")
    return f"{base} ({_args_words(args, lang)})" if args else base


def option_group(option: str) -> str:
    """The heading an option is listed under in the composer (an English message id)."""
    return OPTION_GROUPS.get(option.split(" ", 1)[0], N_("Other"))


# ------------------------------------------------------------------ decisions


def decision_heading(pending: Mapping[str, Any], lang: str) -> str:
    """The composer's heading: what the acting player is asked."""
    kind = pending.get("kind")
    if kind == "pick":
        return translate(lang, "Pick a die")
    if kind == "start":
        return translate(lang, "Choose your start space")
    if kind == "turn":
        return translate(lang, "Your turn with the {die} die",
                         die=colour_name(str(pending.get("die", "")), lang))
    if kind == "react":
        return translate(lang, "React? You may play a card, or pass")
    if kind == "pirates":
        return translate(lang, "Pirates attack {titan}!",
                         titan=titan_name(str(pending.get("titan") or ""), lang))
    return translate(lang, "Your decision")


def waiting_words(pending: Mapping[str, Any], lang: str) -> str:
    """What the players being waited for are to do ("pick a die")."""
    kind = str(pending.get("kind"))
    if kind == "turn":
        return translate(lang, "play a turn with the {die} die",
                         die=colour_name(str(pending.get("die", "")), lang))
    what = WAITING_WORDS.get(kind, N_("decide"))
    return translate(lang, what)


REACT_EVENTS: Final = {
    "damage": N_("{titan} is about to lose Life Points: you may play a card or pass."),
    "target": N_("{by} targets {titan}: you may play a card or pass."),
    "push": N_("{by} pushes {titan}: you may play a card or pass."),
    "turn-start": N_("{by}'s turn begins: you may play a card or pass."),
}


def describe_decision(pending: Mapping[str, Any] | None, lang: str) -> str:
    """The pending decision in a sentence: whose it is and what kind."""
    if not pending:
        return translate(lang, "no decision is pending")
    kind = str(pending.get("kind"))
    titan = titan_name(pending.get("titan"), lang)
    by = titan_name(pending.get("by"), lang)
    if kind == "pick":
        return translate(lang, "{titan} must pick a die.", titan=titan)
    if kind == "start":
        return translate(lang, "{titan} must choose a start space.", titan=titan)
    if kind == "turn":
        die = colour_name(str(pending.get("die") or ""), lang)
        imitating = pending.get("imitating")
        if imitating:
            return translate(lang, "It is {titan}'s turn with the {die} die (imitating {other}).",
                             titan=titan, die=die, other=colour_name(str(imitating), lang))
        return translate(lang, "It is {titan}'s turn with the {die} die.", titan=titan, die=die)
    if kind == "pirates":
        return translate(lang, "Pirates attack {titan}: discard a Bonus card or lose a Life "
                               "Point.", titan=titan)
    if kind == "react":
        sentence = REACT_EVENTS.get(str(pending.get("event")),
                                    N_("{titan} may react: you may play a card or pass."))
        return translate(lang, sentence, titan=titan, by=by)
    return f"{titan}: {kind}."


# ------------------------------------------------------------------ outcomes and changes


def outcome_words(outcome: str, lang: str) -> tuple[str, list[str]]:
    """A random outcome of the log in words, and the dice it shows (as colours)."""
    words = outcome.split()
    head = words[0] if words else ""
    if head in ("roll", "reroll", "pentacle"):
        if head == "reroll":
            return translate(lang, "rerolled"), words[1:]
        return translate(lang, "rolled"), words[1:]
    if head == "shuffle" and len(words) == 1:
        return translate(lang, "the deck was shuffled"), []
    if head == "steal" and words[1:] == ["a", "card"]:
        return translate(lang, "a card was stolen"), []
    return outcome, []


def board_index(lap: Any, boards: int) -> int:
    """Which of a Grand Slam's boards a lap is raced on (0 with one board)."""
    try:
        lap_number = int(lap)
    except (TypeError, ValueError):
        lap_number = 1
    return (lap_number - 1) % boards if boards > 1 else 0


def on_board(space: str, lap: Any, boards: int) -> str:
    """A space as the board picture names it (``1:C4`` on a Grand Slam's second board)."""
    return f"{board_index(lap, boards)}:{space}" if boards > 1 else space


def _trap_name(trap: str) -> str:
    return trap.split(":", 1)[1] if ":" in trap else trap


def changes(before: Mapping[str, Any], after: Mapping[str, Any], boards: int,
            lang: str) -> tuple[list[str], list[str]]:
    """What differs on the board from ``before`` to ``after``: words, and spaces to outline."""
    words: list[str] = []
    marks: list[str] = []
    old_titans = before.get("titans") or {}
    for titan, info in (after.get("titans") or {}).items():
        old = old_titans.get(titan) or {}
        name = titan_name(titan, lang)
        space, lap = info.get("space"), info.get("lap")
        if space and (space != old.get("space") or lap != old.get("lap")):
            words.append(translate(lang, "{titan} to {space}", titan=name, space=space))
            marks.append(on_board(str(space), lap, boards))
        if lap != old.get("lap") and lap is not None and old.get("lap") is not None:
            words.append(translate(lang, "{titan} starts lap {lap}", titan=name, lap=lap))
        if info.get("ko") and not old.get("ko"):
            words.append(translate(lang, "{titan} is knocked out", titan=name))
        elif info.get("life") != old.get("life") and old.get("life") is not None:
            words.append(translate(lang, "{titan}: life {before} → {after}", titan=name,
                                   before=old.get("life"), after=info.get("life")))
    old_traps = set(before.get("traps") or [])
    new_traps = set(after.get("traps") or [])
    for trap in sorted(new_traps - old_traps):
        words.append(translate(lang, "trap on {space}", space=_trap_name(trap)))
        marks.append(trap)
    for trap in sorted(old_traps - new_traps):
        words.append(translate(lang, "trap gone from {space}", space=_trap_name(trap)))
        marks.append(trap)
    if after.get("winner") and not before.get("winner"):
        words.append(translate(lang, "{titan} wins!",
                               titan=titan_name(str(after["winner"]), lang)))
    return words, marks


def option_targets(option: str, view: Mapping[str, Any], titan: str | None,
                   boards: int) -> list[str]:
    """Spaces an option names, on the acting Titan's board."""
    if " " not in option:
        return []
    lap = ((view.get("titans") or {}).get(titan or "") or {}).get("lap", 1)
    return [on_board(space, lap, boards) for space in SPACE.findall(option.split(" ", 1)[-1])]
