"""The Great Race board picture's side panel as HTML, for a narrow page: there the picture's
panel is hidden (its text would be a few pixels high) and the map alone fills the width.

Only what the game page shows nowhere else: the turn order, the progression track, the tiles
waiting to be placed, the discard pile's count and the legend. The turn and phase are on the
page's status line, the crews (space, money, gauges, cards, dashboard, place) in its crews table
with the market and the bag and deck counts, the winners and their prestige in its results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape

from app.games.greatrace.describe import tile_words
from app.games.svg import icon_html

from .fields import as_int, crews_of, hand_count_of, strings_of
from .panel import legend_entries, mini_tile
from .words import crew_name, word


def _line(lang: str, key: str, content: str, css: str) -> str:
    return (f'<p class="{css}"><span class="muted">{escape(word(lang, key))}:</span> '
            f"{content}</p>")


def _order(view: Mapping[str, Any], lang: str) -> str:
    order = strings_of(view.get("order"))
    if not order:
        return ""
    names = " \u203a ".join(escape(crew_name(lang, crew)) for crew in order)
    return _line(lang, "order", names, "facts-order")


def _track(view: Mapping[str, Any], lang: str) -> str:
    """Each crew's progress, the track's order (the front first)."""
    crews = dict(crews_of(view))
    ranked = strings_of(view.get("track")) or list(crews)
    parts = [f"{escape(crew_name(lang, crew))} "
             f"<strong>{as_int(crews.get(crew, {}).get('progress'), 0) or 0}</strong>"
             for crew in ranked]
    return _line(lang, "track", " \u00b7 ".join(parts), "facts-track") if parts else ""


def _drawn(view: Mapping[str, Any], lang: str) -> str:
    drawn = strings_of(view.get("drawn"))
    if not drawn:
        return ""
    tiles = " ".join(
        icon_html(mini_tile(0, 0, code), reach=17, size=34, label=tile_words(code, lang))
        for code in drawn[:8])
    return _line(lang, "drawn", tiles, "facts-drawn")


def _discard(view: Mapping[str, Any], lang: str) -> str:
    discard = view.get("discard")
    if not isinstance(discard, list | int) or isinstance(discard, bool):
        return ""
    return _line(lang, "discard", str(hand_count_of(discard)), "facts-discard")


def panel_facts(view: Mapping[str, Any], lang: str) -> str:
    """The facts as HTML (see the module's docstring), the legend last."""
    items = "".join(f"<li>{icon_html(icon)} {escape(label)}</li>"
                    for icon, label in legend_entries(lang))
    return (_order(view, lang) + _track(view, lang) + _drawn(view, lang) + _discard(view, lang)
            + f'<p class="facts-head">{escape(word(lang, "legend"))}</p>'
            f'<ul class="board-legend">{items}</ul>')
