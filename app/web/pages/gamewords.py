"""The game's words and marks on the pages, through its :class:`app.games.ui.GameUI`.

A page that reads a game (:func:`app.web.pages.common.game_rows`) names the game it shows in
``g.game_name``; pages about no one game (the lists) word their rows with the default game.
"""

from __future__ import annotations

from collections.abc import Mapping
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


def piece_name(piece: str) -> str:
    return ui().piece_name(piece, lang())


def colour_name(colour: str) -> str:
    return ui().colour_name(colour, lang())


def card_info(card: str) -> dict[str, str]:
    return ui().card_info(card, lang())


def describe_input(text: str, pending: Mapping[str, Any] | None = None) -> str:
    """An input in plain words: ``move SS`` -> "Move straight, straight"."""
    return ui().describe_option(text, {"pending": dict(pending or {})}, lang())


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
