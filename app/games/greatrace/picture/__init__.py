"""The Great Race board picture: a state view drawn as a self-contained SVG.

:func:`board_svg` (here) puts together the map (:mod:`.map`) and the side panel (:mod:`.panel`),
drawn with the geometry and colours of :mod:`.layout`, the fields of the view as
:mod:`.fields` reads them and the words of :mod:`.words`.

The input is the JSON state view of ``docs/great-race-engine.md`` (a plain mapping), in any of
its forms (full, a player's, a spectator's), and the board data of
:mod:`app.games.greatrace.engine.board`.

- The Africa map: pointy-top hexagons, even rows half a space to the right, the column letters
  ``A``-``K`` above it (placed over the odd rows) and the row numbers ``1``-``15`` on its left,
  the sea around it. Blank terrain is ochre, risk-zone spaces charcoal. Space names are written
  only on ``highlight`` spaces (where an option leads), on a pink tag: every label costs the
  mail's PNG render time, and the edges carry the coordinates.
- Cities are terracotta hexagons with their name on a pale label and as many little cards as are
  drawn on entering; the two purple cities are tagged ``start`` and ``finish``.
- Transport lines run city to city, sea lines dashed (round the coast over the sea), air lines
  dotted, each with its cost on a pill placed where it hides no tile if it can.
- A placed tile is a cream hexagon inside its space (so a risk zone shows as a dark rim): its
  petrol cost large with a fuel drop, a red dot per point of damage, DANGER as a yellow
  triangle and STOP as a red octagon.
- Each crew's vehicle is a little car in its colour with the crew's initial, several side by side
  on one space; a crew owing the pending decision has an orange ring; ``highlight`` spaces get a
  thick pink outline.
- The side panel (a group of class ``side-panel``): turn, phase and whom the game waits for, the
  turn order, one card per crew (space, money, petrol/engine/chassis gauges as bars of 10/5/5,
  hand size, dashboard or planning state, finishing place), the progression track with its token
  stacks, the tiles waiting to be placed, the market, the bag and deck counts, a legend, and at
  the end a winner banner with the prestige table.

The root's ``style`` gives the picture's size and the map's part (``--pic-w``, ``--pic-h``,
``--main-w``, ``--main-h``, in user units, the map's part from the top left corner): a narrow page
hides the panel and shows only the map, the panel's facts as HTML (:mod:`.facts`).

Edges are crisp where that looks as good (:data:`CRISP`), and damage and city cards are dots and
little cards rather than digits, to keep the PNG quick to render for mail.
Hands are only ever drawn as a count, and during planning nobody's plan is drawn (only whether it
is in), so any view can be shown to anyone it was made for. Every word drawn comes from
:data:`WORDS`. A malformed field is drawn as best it can be rather than raising.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape

from app.core.i18n import language
from app.games.svg import FONT, svg_attr, xml_chars

from .facts import panel_facts
from .fields import as_int, crews_of, mapping_of, space_of, strings_of
from .layout import (
    BACKGROUND,
    MAP_BOTTOM,
    PANEL_X,
    RISK_FILL,
    WIDTH,
    crew_colour,
    parse_tile,
)
from .map import map_svg
from .panel import panel_svg
from .words import WORDS, crew_name, word

__all__ = ["RISK_FILL", "WORDS", "board_svg", "crew_colour", "crew_name", "panel_facts",
           "parse_tile", "word"]


def _accessible_title(view: Mapping[str, Any], lang: str) -> str:
    phase = view.get("phase")
    head = (
        f"{word(lang, 'title')}, {word(lang, 'turn')} {view.get('turn', '?')}, "
        f"{word(lang, f'phase.{phase}') if isinstance(phase, str) else '?'}"
    )
    parts = [head]
    for name, info in crews_of(view):
        bits = [crew_name(lang, name), str(space_of(info.get("space")) or "?")]
        money = as_int(info.get("money"))
        if money is not None:
            bits.append(f"{money}F")
        for gauge in ("petrol", "engine", "chassis"):
            value = as_int(info.get(gauge))
            if value is not None:
                bits.append(f"{word(lang, gauge)} {value}")
        place = as_int(info.get("finished"))
        if place is not None:
            bits.append(f"{word(lang, 'finished')} {place}")
        parts.append(" ".join(bits))
    winners = strings_of(view.get("winners")) or strings_of([view.get("winner")])
    if winners:
        parts.append(f"{word(lang, 'winner')}: " + ", ".join(crew_name(lang, w) for w in winners))
    return "; ".join(parts)


def board_svg(view: Mapping[str, Any], *, lang: str = "en", highlight: Sequence[str] = ()) -> str:
    """The Great Race in ``view`` as one self-contained SVG document (a string).

    ``highlight`` names spaces to outline (where an option leads); ``lang`` is any language of
    :mod:`app.core.i18n` (English otherwise).
    """
    lang = language(lang)
    view = mapping_of(view)
    marks = [highlight] if isinstance(highlight, str) else [str(item) for item in highlight]
    board = map_svg(view, marks, lang)
    panel, panel_bottom = panel_svg(view, lang)
    height = math.ceil(max(MAP_BOTTOM, panel_bottom))
    width = math.ceil(WIDTH)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" lang="{lang}" data-game="great-race" '
        f'font-family="{svg_attr(FONT)}" style="--pic-w:{width};--pic-h:{height};'
        f'--main-w:{math.ceil(PANEL_X - 8)};--main-h:{math.ceil(MAP_BOTTOM)}">'
        f"<title>{escape(xml_chars(_accessible_title(view, lang)))}</title>"
        f'<rect width="{width}" height="{height}" fill="{BACKGROUND}"/>' + board + panel + "</svg>"
    )
