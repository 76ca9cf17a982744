"""Titan Race in words and marks on the pages (options, decisions, changes)."""

from __future__ import annotations

import re
from typing import Any

from flask import (
    url_for,
)

from ..engine.cards import CARD_TIMING, TITANS
from ..engine.circuits import Circuit
from ..service import (
    ServiceError,
)
from ..web import service
from .common import lang, tr
from .words import CARD_EFFECTS, CARD_NAMES, COLOUR_PL, DIRECTIONS, TIMING_WORDS

SPACE = re.compile(r"\b([A-F](?:1[0-2]|[1-9]))\b")



def titan_name(titan: str) -> str:
    return titan[:1].upper() + titan[1:]


def colour_name(colour: str) -> str:
    return COLOUR_PL.get(colour, colour) if lang() == "pl" else colour


def card_name(card: str) -> str:
    names = CARD_NAMES.get(card)
    if names is None:
        return card
    return names[1] if lang() == "pl" else names[0]


def card_info(card: str) -> dict[str, str]:
    effect = CARD_EFFECTS.get(card, ("", ""))
    return {
        "slug": card,
        "name": card_name(card),
        "effect": effect[1] if lang() == "pl" else effect[0],
        "timing": tr(TIMING_WORDS.get(CARD_TIMING.get(card, "turn"), "")),
    }


def _direction(word: str) -> str:
    return tr(DIRECTIONS.get(word.upper(), word))


def _args_words(args: list[str]) -> str:
    out = []
    for word in args:
        if word.upper() in DIRECTIONS:
            out.append(_direction(word))
        elif word in TITANS:
            out.append(titan_name(word))
        else:
            out.append(word)
    return ", ".join(out)


def describe_input(text: str, titan: str | None = None, kind: str | None = None) -> str:
    """An input in plain words: ``move SS`` -> "Move straight, straight"."""
    parts = [p.strip() for p in text.split(";") if p.strip()]
    if len(parts) > 1:
        return "; ".join(describe_input(p, titan, kind) for p in parts)
    words = text.split()
    if not words:
        return text
    verb, args = words[0].lower(), words[1:]
    first = args[0] if args else ""
    if verb == "pick" and args:
        return tr("Take the {colour} die", colour=colour_name(first))
    if verb == "start" and args:
        return tr("Start on {space}", space=first)
    if verb == "move" and args:
        return tr("Move {steps}", steps=", ".join(_direction(c) for c in first))
    if verb == "trap" and args:
        return tr("Put a trap on {space}", space=first)
    if verb == "hit" and args:
        return tr("Deal 1 damage on {space}", space=first)
    if verb == "ability":
        return _describe_ability(titan, args)
    if verb == "play" and args:
        label = tr("Play {card}", card=card_name(first))
        return f"{label} ({_args_words(args[1:])})" if len(args) > 1 else label
    if verb == "discard" and args:
        if kind == "pirates":
            return tr("Give {card} to the pirates", card=card_name(first))
        return tr("Discard {card}", card=card_name(first))
    simple = {
        "reroll": "Reroll the die (pentacle)",
        "end": "End the turn",
        "pass": "Pass (play no card)",
        "lose": "Lose 1 Life Point",
    }
    if verb in simple and not args:
        return tr(simple[verb])
    return text


def _describe_ability(titan: str | None, args: list[str]) -> str:
    space = next((a for a in args if SPACE.fullmatch(a)), None)
    direction = next((a for a in args if a.upper() in DIRECTIONS), None)
    label: str | None = None
    if titan == "grinder" and space:
        label = tr("Ability: a trap on {space}", space=space)
    elif titan == "rassik" and direction:
        label = tr("Ability: move 1 space {direction}", direction=_direction(direction))
    elif titan == "craken" and space:
        label = tr("Ability: swap with the Titan on {space}", space=space)
    elif titan == "ragnarok" and space and direction:
        label = tr("Ability: push the Titan on {space} 1 space {direction}", space=space,
                   direction=_direction(direction))
    elif titan == "slaugg":
        label = tr("Ability: 1 damage on each of the 3 spaces before him")
    elif titan == "chtoolhoo" and space:
        label = tr("Ability: drain the Titan on {space}", space=space)
    if label is not None:
        return f"{titan_name(titan or '')} · {label}"
    base = tr("Use the Ability")
    return f"{base} ({_args_words(args)})" if args else base


def decision_heading(pending: dict[str, Any]) -> str:
    kind = pending.get("kind")
    titan = titan_name(str(pending.get("titan") or ""))
    if kind == "pick":
        return tr("Pick a die")
    if kind == "start":
        return tr("Choose your start space")
    if kind == "turn":
        return tr("Your turn with the {die} die", die=colour_name(str(pending.get("die", ""))))
    if kind == "react":
        return tr("React? You may play a card, or pass")
    if kind == "pirates":
        return tr("Pirates attack {titan}!", titan=titan)
    return tr("Your decision")


def waiting_for(pending: dict[str, Any] | None, seats: list[dict[str, Any]],
                to_act: list[int]) -> str | None:
    if not pending:
        return None
    kind = pending.get("kind")
    what = {
        "pick": tr("pick a die"),
        "start": tr("choose a start space"),
        "turn": tr("play a turn with the {die} die",
                   die=colour_name(str(pending.get("die", "")))),
        "react": tr("react (play a card or pass)"),
        "pirates": tr("answer the pirates"),
    }.get(str(kind), tr("decide"))
    names = [
        f"{s['name']} ({titan_name(str(pending.get('titan') or ''))})"
        if pending.get("titan") else s["name"]
        for s in seats
        if s["position"] in to_act
    ]
    return tr("Waiting for {who} to {what}.", who=", ".join(names) or "?", what=what)


def board_index(lap: Any, boards: int) -> int:
    try:
        lap_number = int(lap)
    except (TypeError, ValueError):
        lap_number = 1
    return (lap_number - 1) % boards if boards > 1 else 0


def on_board(space: str, lap: Any, boards: int) -> str:
    return f"{board_index(lap, boards)}:{space}" if boards > 1 else space


def _trap_name(trap: str) -> str:
    return trap.split(":", 1)[1] if ":" in trap else trap


# ---------------------------------------------------------------------------- where options lead


def changes(before: dict[str, Any], after: dict[str, Any], boards: int) -> tuple[list[str],
                                                                                 list[str]]:
    """What differs on the board from ``before`` to ``after``: words, and spaces to outline."""
    words: list[str] = []
    marks: list[str] = []
    old_titans = before.get("titans") or {}
    for titan, info in (after.get("titans") or {}).items():
        old = old_titans.get(titan) or {}
        name = titan_name(titan)
        space, lap = info.get("space"), info.get("lap")
        if space and (space != old.get("space") or lap != old.get("lap")):
            words.append(tr("{titan} to {space}", titan=name, space=space))
            marks.append(on_board(str(space), lap, boards))
        if lap != old.get("lap") and lap is not None and old.get("lap") is not None:
            words.append(tr("{titan} starts lap {lap}", titan=name, lap=lap))
        if info.get("ko") and not old.get("ko"):
            words.append(tr("{titan} is knocked out", titan=name))
        elif info.get("life") != old.get("life") and old.get("life") is not None:
            words.append(tr("{titan}: life {before} → {after}", titan=name,
                            before=old.get("life"), after=info.get("life")))
    old_traps = set(before.get("traps") or [])
    new_traps = set(after.get("traps") or [])
    for trap in sorted(new_traps - old_traps):
        words.append(tr("trap on {space}", space=_trap_name(trap)))
        marks.append(trap)
    for trap in sorted(old_traps - new_traps):
        words.append(tr("trap gone from {space}", space=_trap_name(trap)))
        marks.append(trap)
    if after.get("winner") and not before.get("winner"):
        words.append(tr("{titan} wins!", titan=titan_name(str(after["winner"]))))
    return words, marks


def option_targets(option: str, view: dict[str, Any], titan: str | None, boards: int) -> list[str]:
    """Spaces an option names, on the acting Titan's board."""
    lap = ((view.get("titans") or {}).get(titan or "") or {}).get("lap", 1)
    return [on_board(space, lap, boards) for space in SPACE.findall(option.split(" ", 1)[-1])
            if " " in option]


def option_entries(uid: str, position: int, options: list[str], view: dict[str, Any],
                   circuits: list[Circuit], seq: int) -> list[dict[str, Any]]:
    """Each legal option with its words, group, preview summary and highlighted spaces."""
    pending = view.get("pending") or {}
    titan = pending.get("titan")
    kind = pending.get("kind")
    boards = max(len(circuits), 1)
    entries = []
    for option in options:
        try:
            after = service().preview(uid, position, option)
        except ServiceError:
            after = None
        targets = option_targets(option, view, titan, boards)
        words: list[str] = []
        if after is None:
            marks, chance = targets, True
        else:
            words, marks = changes(view, after, boards)
            marks = list(dict.fromkeys(marks + targets))
            chance = False
        verb = option.split(" ", 1)[0]
        group = {
            "move": "Moves",
            "trap": "Traps and damage", "hit": "Traps and damage",
            "ability": "Ability", "play": "Cards", "discard": "Cards",
        }.get(verb, "Other")
        entries.append(
            {
                "value": option,
                "label": describe_input(option, titan, kind),
                "group": group,
                "changes": words,
                "chance": chance,
                "highlight": marks,
                "preview_url": url_for("play.preview", uid=uid, option=option, seq=seq),
            }
        )
    return entries


def grouped(entries: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    order = ["Moves", "Traps and damage", "Ability", "Cards", "Other"]
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        groups.setdefault(entry["group"], []).append(entry)
    if len(groups) == 1:  # one kind of answer (a pick, a start...): the heading says it all
        return [("", entries)]
    return [(tr(name), groups[name]) for name in order if name in groups]


def titan_rows(view: dict[str, Any], seats: list[dict[str, Any]],
                position: int | None) -> list[dict[str, Any]]:
    owner = {t: s for s in seats for t in s["titans"]}
    pending = view.get("pending") or {}
    rows = []
    for titan, info in (view.get("titans") or {}).items():
        seat = owner.get(titan)
        hand = info.get("hand")
        rows.append(
            {
                "titan": titan,
                "player": seat["name"] if seat else "?",
                "bot": bool(seat and seat["bot"]),
                "mine": seat is not None and seat["position"] == position,
                "space": info.get("space"),
                "lap": info.get("lap"),
                "life": info.get("life"),
                "ko": info.get("ko"),
                "cards": len(hand) if isinstance(hand, list) else hand,
                "acting": pending.get("titan") == titan and not view.get("winner"),
            }
        )
    return rows
