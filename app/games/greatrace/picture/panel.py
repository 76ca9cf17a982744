"""The Great Race board picture's side panel: status, one card per crew with its gauges, the
progression track, the tiles waiting and the market, the counts, the legend and the scores."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from app.games.svg import INK, MUTED, pointy_hexagon, svg_attr, svg_text

from .fields import (
    as_int,
    crews_of,
    hand_count_of,
    mapping_of,
    pending_crews_of,
    phase_of,
    space_of,
    strings_of,
)
from .layout import (
    BOXES,
    CITY_EDGE,
    CITY_FILL,
    CRISP,
    GAUGE_EMPTY,
    GAUGE_FILL,
    GAUGE_MAX,
    GOLD,
    LINE_INK,
    MARGIN,
    PANEL_W,
    PANEL_X,
    PENDING_RING,
    PETROL_GREEN,
    PURPLE_FILL,
    RISK_EDGE,
    RISK_FILL,
    TERRAIN,
    TERRAIN_EDGE,
    TILE_EDGE,
    TILE_FILL,
    TILE_INK,
    crew_colour,
    parse_tile,
)
from .map import car_svg, card_pips, damage_pips, danger_icon, numeral_svg, stop_icon
from .words import box_letter, crew_name, word


def _status(view: Mapping[str, Any], x: float, y: float, lang: str) -> tuple[str, float]:
    out = [svg_text(x, y + 20, word(lang, "title"), size=20, bold=True)]
    phase = view.get("phase")
    phase_word = word(lang, f"phase.{phase}") if isinstance(phase, str) else "?"
    turn = as_int(view.get("turn"))
    line = f"{word(lang, 'turn')} {turn if turn is not None else '?'} \u00b7 {phase_word}"
    out.append(svg_text(x, y + 40, line, size=14, bold=True, fill="#5c4a2a"))
    height = 48.0
    pending = mapping_of(view.get("pending"))
    waiting = pending_crews_of(view)
    if waiting:
        kind = pending.get("kind")
        what = word(lang, f"pending.{kind}") if isinstance(kind, str) else ""
        who = ", ".join(crew_name(lang, c) for c in waiting)
        text = f"{word(lang, 'waiting')}: {who}" + (f" ({what})" if what else "")
        out.append(svg_text(x, y + 60, text, size=12, fill=PENDING_RING, bold=True))
        height += 20
    order = strings_of(view.get("order"))
    if order:
        names = " \u203a ".join(crew_name(lang, crew) for crew in order)
        out.append(
            f'<g class="order" data-order="{svg_attr(" ".join(order))}">'
            + svg_text(x, y + height + 13, f"{word(lang, 'order')}: {names}", size=12, fill=INK)
            + "</g>"
        )
        height += 22
    return "".join(out), height + 4


GAUGE_X: Final[dict[str, float]] = {"petrol": 14.0, "engine": 118.0, "chassis": 184.0}
"""Where each gauge's bar starts in a crew's card (its label is written once above the cards)."""
GAUGE_CELL: Final = 9.6


def _gauge(x: float, y: float, name: str, value: int | None) -> str:
    """A bar of cells, one per level, full up to ``value``; a gap after every fifth cell."""
    top = GAUGE_MAX[name]
    level = max(0, min(value or 0, top))
    out = [f'<g class="gauge" data-gauge="{name}" data-value="{"?" if value is None else value}">']
    for k in range(top):
        fill = GAUGE_FILL[name] if k < level else GAUGE_EMPTY
        cx = x + k * GAUGE_CELL + (k // 5) * 4
        out.append(
            f'<rect x="{cx:.1f}" y="{y:.1f}" width="{GAUGE_CELL - 1.8:.1f}" height="11" '
            f'fill="{fill}" {CRISP}/>'
        )
    out.append("</g>")
    return "".join(out)


def _gauge_heads(x: float, y: float, lang: str) -> str:
    """The gauges' names, once above the crews' cards, over their columns."""
    out = [
        svg_text(x + gx, y, f"{word(lang, name)} /{GAUGE_MAX[name]}", size=10, fill=MUTED)
        for name, gx in GAUGE_X.items()
    ]
    out.append(
        svg_text(x + PANEL_W - 22, y, word(lang, "cards"), size=10, fill=MUTED, anchor="middle")
    )
    return "".join(out)


def _assistants(info: Mapping[str, Any], phase: object, x: float, y: float, lang: str) -> str:
    """The dashboard's boxes with their counts, or only whether the plan is in while planning."""
    if phase == "planning":
        planned = info.get("planned") is True
        key = "planned" if planned else "planning"
        colour = PETROL_GREEN if planned else MUTED
        return (
            f'<g class="plan" data-planned="{str(planned).lower()}">'
            + svg_text(x, y + 12, word(lang, key), size=12, fill=colour, bold=planned)
            + "</g>"
        )
    boxes = mapping_of(info.get("assistants"))
    counts = {box: as_int(boxes.get(box), 0) or 0 for box in BOXES}
    label = "  ".join(f"{box_letter(lang, box)}{counts[box]}" for box in BOXES)
    data = " ".join(f'data-{box.lower()}="{counts[box]}"' for box in BOXES)
    text = svg_text(x, y + 12, label, size=12, bold=True)
    return f'<g class="assistants" {data}>' + text + "</g>"


def _hand_icon(x: float, y: float, count: int | None) -> str:
    shown = "?" if count is None else str(count)
    return (
        f'<g class="hand" data-cards="{shown}">'
        f'<rect x="{x - 4:.1f}" y="{y - 1:.1f}" width="14" height="19" rx="2" fill="#e9e1cf" '
        f'stroke="{MUTED}" stroke-width="1"/>'
        f'<rect x="{x - 8:.1f}" y="{y + 1:.1f}" width="14" height="19" rx="2" fill="#fff" '
        f'stroke="{INK}" stroke-width="1.2"/>'
        + svg_text(x - 1, y + 15, shown, size=12, bold=True, anchor="middle")
        + "</g>"
    )


CREW_ROW_H: Final = 66.0
NO_DASHBOARD: Final = frozenset({"bivouac", "over"})
"""Phases in which the dashboards play no part (the bivouac, the end): they are not drawn."""


def _crew_card(
    name: str,
    info: Mapping[str, Any],
    view: Mapping[str, Any],
    x: float,
    y: float,
    ringed: bool,
    lang: str,
) -> str:
    colour = crew_colour(name)
    frame = PENDING_RING if ringed else "#d8cfbd"
    height = CREW_ROW_H - 6
    right = x + PANEL_W - 10
    money = as_int(info.get("money"))
    out = [
        f'<g class="crew" data-crew="{svg_attr(name)}" {CRISP}>',
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{PANEL_W:.1f}" height="{height:.1f}" '
        f'rx="8" fill="#fffdf8" stroke="{frame}" stroke-width="{2.2 if ringed else 1}"/>',
        f'<rect x="{x:.1f}" y="{y:.1f}" width="6" height="{height:.1f}" rx="3" fill="{colour}"/>',
        car_svg(x + 22, y + 14, name, 0.9, ringed),
        svg_text(x + 38, y + 19, crew_name(lang, name), size=14, bold=True),
        svg_text(
            right,
            y + 19,
            f"{'?' if money is None else money}F",
            size=14,
            bold=True,
            fill="#5c4a2a",
            anchor="end",
        ),
    ]
    space = space_of(info.get("space"))
    if space:
        out.append(svg_text(right - 62, y + 19, space, size=12, fill=MUTED, anchor="end"))
    for gauge, gx in GAUGE_X.items():
        out.append(_gauge(x + gx, y + 27, gauge, as_int(info.get(gauge))))
    out.append(_hand_icon(right - 12, y + 25, hand_count_of(info.get("hand"))))
    place = as_int(info.get("finished"))
    tags = []
    if place is not None:
        tags.append(f"{word(lang, 'finished')}: {place}.")
    else:
        if phase_of(view) not in NO_DASHBOARD:
            out.append(_assistants(info, view.get("phase"), x + 14, y + 40, lang))
        if info.get("passed") is True and view.get("phase") == "convoy":
            tags.append(word(lang, "passed"))
    if info.get("leader_used") is True:
        tags.append(word(lang, "leader"))
    if tags:
        tag_x = x + (14 if place is not None else 130)
        out.append(svg_text(tag_x, y + 52, " \u00b7 ".join(tags), size=11, fill=MUTED, bold=True))
    out.append("</g>")
    return "".join(out)


TRACK_NUMBERS: Final = frozenset({0, 5, 10, 14})
"""The track's cells that carry their number (every label costs render time)."""


def _track(
    view: Mapping[str, Any], crews: Mapping[str, Mapping[str, Any]], x: float, y: float, lang: str
) -> tuple[str, float]:
    """The progression track 0..14, each crew's token stacked where its progress is."""
    out = [svg_text(x, y + 12, word(lang, "track"), size=12, bold=True)]
    stacks: dict[int, list[str]] = {}
    for crew in strings_of(view.get("track")) or list(crews):
        value = as_int(crews.get(crew, {}).get("progress"), 0) or 0
        stacks.setdefault(max(0, min(value, 14)), []).append(crew)
    cell = PANEL_W / 15
    base = y + 62
    for value in range(15):
        cx = x + value * cell
        fill = PURPLE_FILL if value in (0, 14) else "#e9e1cf"
        out.append(
            f'<rect x="{cx + 1:.1f}" y="{base:.1f}" width="{cell - 2:.1f}" height="14" '
            f'fill="{fill}" {CRISP}/>'
        )
        if value in TRACK_NUMBERS:
            ink = "#fff" if value in (0, 14) else MUTED
            out.append(
                svg_text(
                    cx + cell / 2,
                    base + 11,
                    str(value),
                    size=9.5,
                    fill=ink,
                    bold=True,
                    anchor="middle",
                )
            )
    # ``track`` reads from the front, and on one value the lower token (the earlier arrival)
    # comes first: each stack is listed bottom first
    for value, stack in stacks.items():
        cx = x + value * cell
        for level, crew in enumerate(stack):
            ty = base - 10 - level * 10
            out.append(
                f'<rect class="track-token" data-crew="{svg_attr(crew)}" data-progress="{value}" '
                f'x="{cx + 2:.1f}" y="{ty:.1f}" width="{cell - 4:.1f}" height="8.5" '
                f'fill="{crew_colour(crew)}" stroke="#1a1a1a" stroke-width="0.8" '
                f"{CRISP}/>"
            )
    return "".join(out), 84


def mini_tile(x: float, y: float, code: str) -> str:
    tile = parse_tile(code)
    out = [
        f'<g class="drawn-tile" data-tile="{svg_attr(code)}">'
        f'<polygon points="{pointy_hexagon(x, y, 15)}" fill="{TILE_FILL}" stroke="{TILE_EDGE}" '
        'stroke-width="1.3"/>'
    ]
    if tile is None:
        out.append(svg_text(x, y + 5, "?", size=13, bold=True, anchor="middle"))
    else:
        out.append(numeral_svg(x - 1, y + 1.5, tile.petrol, scale=0.6))
        if tile.damage:
            out.append(damage_pips(x + 8, y + 2, tile.damage, radius=2.6))
        if tile.danger:
            out.append(danger_icon(x - 6 if tile.stop else x, y - 8, 0.6))
        if tile.stop:
            out.append(stop_icon(x + 6 if tile.danger else x, y - 8, 0.6))
    out.append("</g>")
    return "".join(out)


def _drawn_and_market(view: Mapping[str, Any], x: float, y: float, lang: str) -> tuple[str, float]:
    out: list[str] = []
    height = 0.0
    drawn = strings_of(view.get("drawn"))
    if drawn:
        out.append(svg_text(x, y + 20, f"{word(lang, 'drawn')}:", size=12, bold=True))
        tx = x + 14 + len(word(lang, "drawn")) * 7
        for k, code in enumerate(drawn[:8]):
            out.append(mini_tile(tx + 12 + k * 34, y + 16, code))
        height += 38
    market = strings_of(view.get("market"))
    if market:
        names = ", ".join(word(lang, f"card.{card}") for card in market)
        out.append(
            '<g class="market">'
            + svg_text(x, y + height + 14, f"{word(lang, 'market')}: ", size=12, bold=True)
            + svg_text(x + 14 + len(word(lang, "market")) * 7, y + height + 14, names, size=11)
            + "</g>"
        )
        height += 22
    return "".join(out), height


def _counts(view: Mapping[str, Any], x: float, y: float, lang: str) -> tuple[str, float]:
    parts = []
    for key in ("bag", "deck"):
        value = view.get(key)
        count = hand_count_of(value)
        parts.append(f"{word(lang, key)}: {count if count is not None else '?'}")
    discard = view.get("discard")
    if isinstance(discard, list | int) and not isinstance(discard, bool):
        parts.append(f"{word(lang, 'discard')}: {hand_count_of(discard)}")
    return svg_text(x, y + 12, " \u00b7 ".join(parts), size=11, fill=MUTED), 20


LEGEND_STEP: Final = 19.0
"""One legend entry a line: the Polish labels are too long for two columns."""


def legend_entries(lang: str) -> list[tuple[str, str]]:
    """The legend: an icon (SVG drawn round 0,0, 10 units each way) and its words, each."""
    return [
        (
            f'<polygon points="{pointy_hexagon(0, 0, 9)}" fill="{TERRAIN}" '
            f'stroke="{TERRAIN_EDGE}"/>',
            word(lang, "legend.terrain"),
        ),
        (
            f'<polygon points="{pointy_hexagon(0, 0, 9)}" fill="{RISK_FILL}" '
            f'stroke="{RISK_EDGE}"/>',
            word(lang, "legend.risk"),
        ),
        (
            f'<polygon points="{pointy_hexagon(0, 0, 9)}" fill="{TILE_FILL}" stroke="{TILE_EDGE}"/>'
            + svg_text(-2, 4, "2", size=11, fill=TILE_INK, bold=True, anchor="middle")
            + damage_pips(5, 1, 1, radius=2.6),
            word(lang, "legend.tile"),
        ),
        (
            f'<polygon points="{pointy_hexagon(0, 0, 9)}" fill="{CITY_FILL}" stroke="{CITY_EDGE}"/>'
            + card_pips(0, 0, 2),
            word(lang, "legend.city"),
        ),
        (danger_icon(0, 0), word(lang, "legend.danger")),
        (stop_icon(0, 0), word(lang, "legend.stop")),
        (
            f'<line x1="-10" y1="0" x2="10" y2="0" stroke="{LINE_INK}" stroke-width="3" '
            'stroke-dasharray="6 3"/>',
            word(lang, "legend.sea"),
        ),
        (
            f'<line x1="-10" y1="0" x2="10" y2="0" stroke="{LINE_INK}" stroke-width="3" '
            'stroke-dasharray="1.5 4" stroke-linecap="round"/>',
            word(lang, "legend.air"),
        ),
    ]


def _legend(x: float, y: float, lang: str) -> tuple[str, float]:
    entries = legend_entries(lang)
    out = ['<g class="legend">']
    for k, (icon, label) in enumerate(entries):
        ex = x + 12
        ey = y + k * LEGEND_STEP + 10
        out.append(f'<g transform="translate({ex:.1f} {ey:.1f})">{icon}</g>')
        out.append(svg_text(ex + 16, ey + 4, label, size=10.5))
    out.append("</g>")
    return "".join(out), len(entries) * LEGEND_STEP


def _scores(view: Mapping[str, Any], x: float, y: float, lang: str) -> tuple[str, float]:
    """The winner banner and the prestige table of the finishers, once the game is over."""
    winners = strings_of(view.get("winners"))
    winner = view.get("winner")
    if isinstance(winner, str) and winner not in winners:
        winners.insert(0, winner)
    if not winners:
        return "", 0.0
    names = " & ".join(crew_name(lang, w) for w in winners)
    out = [
        f'<g class="winner" data-winner="{svg_attr(winners[0])}">'
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{PANEL_W:.1f}" height="36" rx="10" '
        f'fill="{GOLD}" stroke="#c77700" stroke-width="2"/>'
        + svg_text(
            x + PANEL_W / 2,
            y + 24,
            f"{word(lang, 'winner').capitalize()}: {names}",
            size=17,
            bold=True,
            fill="#3b2500",
            anchor="middle",
        )
        + "</g>"
    ]
    scores = mapping_of(view.get("scores"))
    if not scores:
        return "".join(out), 44.0
    columns = ("place", "engine", "chassis", "money", "total")
    col_x = [x + 106 + k * 44 for k in range(len(columns))]
    ty = y + 54
    for cx, key in zip(col_x, columns, strict=True):
        out.append(svg_text(cx, ty, word(lang, f"score.{key}"), size=9, fill=MUTED,
                            anchor="middle"))
    order = [c for c in strings_of(view.get("finishers")) if c in scores]
    order += [str(c) for c in scores if str(c) not in order]
    for k, crew in enumerate(order):
        row = mapping_of(scores.get(crew))
        ry = ty + 18 + k * 18
        out.append(car_svg(x + 12, ry - 4, crew, 0.7, False))
        out.append(svg_text(x + 26, ry, crew_name(lang, crew), size=12, bold=crew in winners))
        for cx, key in zip(col_x, columns, strict=True):
            value = as_int(row.get(key))
            out.append(
                svg_text(
                    cx,
                    ry,
                    "?" if value is None else str(value),
                    size=12,
                    bold=key == "total",
                    anchor="middle",
                )
            )
    return '<g class="scores">' + "".join(out) + "</g>", 62 + 18 * len(order)


def panel_svg(view: Mapping[str, Any], lang: str) -> tuple[str, float]:
    x, y = PANEL_X, MARGIN
    out: list[str] = []
    scores, h = _scores(view, x, y, lang)
    out.append(scores)
    y += h + (8 if h else 0)
    status, h = _status(view, x, y, lang)
    out.append(status)
    y += h
    crews = crews_of(view)
    ringed = set(pending_crews_of(view))
    if crews:
        out.append(_gauge_heads(x, y + 10, lang))
        y += 15
    for name, info in crews:
        out.append(_crew_card(name, info, view, x, y, name in ringed, lang))
        y += CREW_ROW_H
    track, h = _track(view, dict(crews), x, y + 2, lang)
    out.append(track)
    y += h + 6
    extra, h = _drawn_and_market(view, x, y, lang)
    out.append(extra)
    y += h
    counts, h = _counts(view, x, y, lang)
    out.append(counts)
    y += h + 6
    out.append(
        f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x + PANEL_W:.1f}" y2="{y:.1f}" stroke="#d8cfbd"/>'
    )
    legend, h = _legend(x, y + 6, lang)
    out.append(legend)
    return '<g class="side-panel">' + "".join(out) + "</g>", y + 6 + h + MARGIN
