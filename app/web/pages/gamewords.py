"""The game's words and marks on the pages, through its :class:`app.games.ui.GameUI`.

A page that reads a game (:func:`app.web.pages.common.game_rows`) names the game it shows in
``g.game_name``; pages about no one game (the lists) word their rows with the default game.
"""

from __future__ import annotations

from typing import Any

from flask import g, has_app_context, url_for

from app.games.ui import DEFAULT_GAME, GameUI, game_ui
from app.service import ServiceError
from app.web.browser_seats import service
from app.web.pages.language import lang, tr


def ui(game_name: str | None = None) -> GameUI:
    """The UI of ``game_name``, else of the game this request shows."""
    shown = g.get("game_name") if has_app_context() else None
    return game_ui(game_name or shown or DEFAULT_GAME)


def titan_name(titan: str) -> str:
    return ui().piece_name(titan, lang())


def colour_name(colour: str) -> str:
    return ui().colour_name(colour, lang())


def card_info(card: str) -> dict[str, str]:
    return ui().card_info(card, lang())


def describe_input(text: str, titan: str | None = None, kind: str | None = None) -> str:
    """An input in plain words: ``move SS`` -> "Move straight, straight"."""
    return ui().describe_option(text, {"pending": {"titan": titan, "kind": kind}}, lang())


def decision_heading(pending: dict[str, Any]) -> str:
    return ui().decision_heading(pending, lang())


def waiting_for(pending: dict[str, Any] | None, seats: list[dict[str, Any]],
                to_act: list[int]) -> str | None:
    names = [str(s["name"]) for s in seats if s["position"] in to_act]
    return ui().waiting_for(pending, names, lang())


def changes(before: dict[str, Any], after: dict[str, Any], boards: Any) -> tuple[list[str],
                                                                             list[str]]:
    """What differs on the board from ``before`` to ``after``: words, and spaces to outline."""
    return ui().changes(before, after, boards, lang())


def option_entries(uid: str, position: int, options: list[str], view: dict[str, Any],
                   boards: Any, seq: int) -> list[dict[str, Any]]:
    """Each legal option with its words, group, preview summary and highlighted spaces."""
    game = ui()
    entries = []
    try:
        previews = service().previews(uid, position, options)
    except ServiceError:
        previews = {}
    for option in options:
        after = previews.get(option)
        words: list[str] = []
        if after is not None:
            words, _ = game.changes(view, after, boards, lang())
        entries.append(
            {
                "value": option,
                "label": game.describe_option(option, view, lang()),
                "group": game.option_group(option),
                "changes": words,
                "chance": after is None,
                "highlight": game.highlight(option, view, after, boards),
                "preview_url": url_for("play.preview", uid=uid, option=option, seq=seq),
            }
        )
    return entries


def grouped(entries: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        groups.setdefault(entry["group"], []).append(entry)
    if len(groups) == 1:  # one kind of answer (a pick, a start...): the heading says it all
        return [("", entries)]
    return [(tr(name), groups[name]) for name in ui().group_order if name in groups]


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
                "computer": seat.get("computer", "") if seat else "",
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


def crew_rows(view: dict[str, Any], seats: list[dict[str, Any]], position: int | None,
              sealed: list[int]) -> list[dict[str, Any]]:
    """The rows of a game whose pieces are crews with gauges and a dashboard (``crews`` in the
    view): during planning a crew's assistants show only as planned or not (``sealed`` are the
    seats whose plan is in), never the plan itself."""
    owner = {t: s for s in seats for t in s["titans"]}
    pending = view.get("pending") or {}
    planning = view.get("phase") == "planning"
    rows = []
    for crew, info in (view.get("crews") or {}).items():
        seat = owner.get(crew)
        hand = info.get("hand")
        city = info.get("city")
        boxes = info.get("assistants") if not planning else None
        rows.append({
            "crew": crew,
            "player": seat["name"] if seat else "?",
            "bot": bool(seat and seat["bot"]),
            "computer": seat.get("computer", "") if seat else "",
            "mine": seat is not None and seat["position"] == position,
            "space": info.get("space"),
            "city": ui().board_titles([city])[0] if city else None,
            "money": info.get("money"),
            "petrol": info.get("petrol"),
            "engine": info.get("engine"),
            "chassis": info.get("chassis"),
            "cards": len(hand) if isinstance(hand, list) else hand,
            "assistants": boxes if isinstance(boxes, dict) else None,
            "planned": bool(info.get("planned")) or (seat is not None
                                                     and seat["position"] in sealed),
            "planning": planning and crew in (pending.get("crews") or []),
            "passed": bool(info.get("passed")),
            "finished": info.get("finished"),
            "acting": crew in (pending.get("crews") or []) and not view.get("winner"),
        })
    return rows
