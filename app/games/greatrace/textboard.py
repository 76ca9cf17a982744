"""The Great Race in a terminal: a state view as a rich renderable for ``titanpost show``.

The same information as the picture (:mod:`app.games.greatrace.picture`), in characters. It
takes the terminal's width: from 84 columns the map's cells are 6 characters and the crews'
gauges bars; narrower (an 80-column terminal), cells are 5 characters and gauges numbers
(``7/10``), so that nothing wraps or is cut:

- the heading: turn, phase, whom the game waits for, the turn order;
- the Africa map, two lines per row, even rows shifted half a cell right as on the board. A
  blank space shows its name (on grey in a risk zone); a tile its petrol cost,
  a red dot per point of damage, ``!`` for DANGER and ``S`` for STOP; a city three letters of
  its name. The second line holds the vehicles (``F`` ``B`` ``I`` ``E`` in the crews' colours,
  reversed when the crew owes the pending decision), or else a tile's space name or a city's
  card count (``start`` / ``finish`` for the purple cities);
- the transport lines with their costs, then a table of the crews (space, progress, money,
  petrol / engine / chassis as bars, hand size, dashboard or planning state, finishing place),
  the progression track, the tiles to place, the market, the bag and deck counts, and at the end
  the winner and the prestige table.

Hands are shown as a count only and plans only as whether they are in. A malformed field is
shown as best it can be rather than raising. The words are those of the picture's table.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from rich import box
from rich.console import Console, ConsoleOptions, Group, JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text

from app.core.i18n import language
from app.games.greatrace.engine.board import CITY, CITY_AT, COLUMNS, LINES, RISK, ROWS, SPACES
from app.games.greatrace.picture.fields import (
    as_int,
    crews_of,
    finish_of,
    hand_count_of,
    mapping_of,
    pending_crews_of,
    phase_of,
    space_of,
    start_of,
    strings_of,
)
from app.games.greatrace.picture.layout import (
    BOXES,
    GAUGE_MAX,
    crew_colour,
    parse_tile,
)
from app.games.greatrace.picture.panel import NO_DASHBOARD
from app.games.greatrace.picture.words import box_letter, crew_name, word

__all__ = ["board_text"]

SEP: Final = 1
ROW_LABEL: Final = 3


@dataclass(frozen=True)
class Layout:
    """How wide a map cell is, and whether the gauges are bars or numbers."""

    cell: int
    bars: bool

    @property
    def width(self) -> int:
        """The columns the map takes (its widest lines are the shifted even rows)."""
        pitch = self.cell + SEP
        return ROW_LABEL + 1 + pitch // 2 + len(COLUMNS) * pitch


WIDE: Final = Layout(cell=6, bars=True)
NARROW: Final = Layout(cell=5, bars=False)
SEA_STYLE: Final = "dodger_blue3"
TERRAIN_STYLE: Final = "tan"
RISK_STYLE: Final = "grey78 on grey23"
TILE_STYLE: Final = "black on wheat1"
CITY_STYLE: Final = "bold white on dark_red"
PURPLE_STYLE: Final = "bold white on dark_violet"
HIGHLIGHT_STYLE: Final = "bold white on deep_pink3"
SCORE_PARTS: Final = ("place", "engine", "chassis", "money", "total")


def _crew_style(crew: str, pending: bool = False) -> str:
    colour = crew_colour(crew)
    return f"bold black on {colour}" if pending else f"bold {colour}"


def _city_mark(slug: str) -> str:
    """Three letters of a city's slug (``le-caire`` is ``CAI``)."""
    bare = slug.removeprefix("le-").replace("-", "")
    return bare[:3].upper()


def _tile_cell(code: str, cell_width: int) -> Text:
    tile = parse_tile(code)
    if tile is None:
        return Text("?".center(cell_width), style="bold white on grey39")
    cell = Text(style=TILE_STYLE)
    cell.append(str(tile.petrol), style="bold")
    cell.append("\u2022" * tile.damage, style="bold red3")
    if tile.danger:
        cell.append("!", style="bold dark_orange3")
    if tile.stop:
        cell.append("S", style="bold red3")
    pad = cell_width - cell.cell_len
    return (
        Text(" " * (pad // 2), style=TILE_STYLE)
        + cell
        + Text(" " * (pad - pad // 2), style=TILE_STYLE)
    )


def _top_cell(space: str, tiles: Mapping[str, str], marked: set[str], cell: int) -> Text:
    """The first line of a space: its tile, its city or its name."""
    city = CITY_AT.get(space)
    if city is not None:
        style = PURPLE_STYLE if city.purple else CITY_STYLE
        return Text(_city_mark(city.slug).center(cell), style=style)
    code = tiles.get(space)
    if code is not None:
        return _tile_cell(code, cell)
    style = RISK_STYLE if space in RISK else TERRAIN_STYLE
    if space in marked:
        style = HIGHLIGHT_STYLE
    return Text(space.center(cell), style=style)


def _bottom_cell(
    space: str,
    tiles: Mapping[str, str],
    crews: Sequence[str],
    pending: set[str],
    roles: Mapping[str, str],
    marked: set[str],
    lang: str,
    width: int,
) -> Text:
    """The second line of a space: the vehicles on it, else a tile's name or a city's cards."""
    if crews:
        cell = Text()
        for crew in crews[:width]:
            cell.append(crew[:1].upper(), style=_crew_style(crew, crew in pending))
        pad = width - cell.cell_len
        return Text(" " * (pad // 2)) + cell + Text(" " * (pad - pad // 2))
    city = CITY_AT.get(space)
    style = HIGHLIGHT_STYLE if space in marked else "grey62"
    if city is not None:
        role = roles.get(city.slug)
        label = f"{city.cards}\u2660" if role is None else _role(lang, role, width)
        return Text(label[:width].center(width), style=style)
    if space in tiles:
        return Text(space.center(width), style=style)
    return Text(" " * width)


def _role(lang: str, role: str, width: int) -> str:
    """``start`` or ``finish`` in ``lang``, in its short form where the long one is wider than a
    cell."""
    label = word(lang, role)
    return label if len(label) <= width else word(lang, f"{role}.short")


def _map(view: Mapping[str, Any], marked: set[str], lang: str, cell: int) -> list[Text]:
    tiles = {
        space: str(code)
        for key, code in mapping_of(view.get("tiles")).items()
        if (space := space_of(key)) is not None
    }
    placed: dict[str, list[str]] = {}
    for name, info in crews_of(view):
        space = space_of(info.get("space"))
        if space is not None:
            placed.setdefault(space, []).append(name)
    pending = set(pending_crews_of(view))
    roles = {start_of(view): "start", finish_of(view): "finish"}
    pitch = cell + SEP
    lines = [Text(" " * (ROW_LABEL + 1) + "".join(c.center(pitch) for c in COLUMNS), "bold")]
    for row in range(1, ROWS + 1):
        shift = " " * (pitch // 2 if row % 2 == 0 else 0)
        top = Text(f"{row:>{ROW_LABEL}} ", style="bold") + Text(shift)
        bottom = Text(" " * (ROW_LABEL + 1)) + Text(shift)
        for col in COLUMNS:
            space = f"{col}{row}"
            if space not in SPACES:
                top.append("~".center(cell) + " " * SEP, style=SEA_STYLE)
                bottom.append(" " * pitch)
                continue
            top.append_text(_top_cell(space, tiles, marked, cell))
            top.append(" " * SEP)
            bottom.append_text(
                _bottom_cell(space, tiles, placed.get(space, []), pending, roles, marked, lang,
                             cell)
            )
            bottom.append(" " * SEP)
        lines.extend([top, bottom])
    return lines


def _heading(view: Mapping[str, Any], lang: str) -> Text:
    phase = view.get("phase")
    turn = as_int(view.get("turn"))
    text = Text(word(lang, "title"), style="bold")
    text.append(
        f"  {word(lang, 'turn')} {'?' if turn is None else turn} \u00b7 "
        f"{word(lang, f'phase.{phase}') if isinstance(phase, str) else '?'}",
        style="bold tan",
    )
    waiting = pending_crews_of(view)
    if waiting:
        kind = mapping_of(view.get("pending")).get("kind")
        text.append(f"  {word(lang, 'waiting')}: ", style="dark_orange")
        for k, crew in enumerate(waiting):
            text.append((", " if k else "") + crew_name(lang, crew), style=_crew_style(crew))
        if isinstance(kind, str):
            text.append(f" ({word(lang, f'pending.{kind}')})", style="dark_orange")
    order = strings_of(view.get("order"))
    if order:
        text.append(f"\n{word(lang, 'order')}: ", style="grey62")
        for k, crew in enumerate(order):
            text.append((" \u203a " if k else "") + crew_name(lang, crew), style=_crew_style(crew))
    return text


def _lines_text(lang: str) -> Text:
    text = Text()
    for kind in ("sea", "air"):
        text.append(f"{word(lang, f'legend.{kind}')}: ", style="bold")
        text.append(
            ", ".join(
                f"{CITY[line.a].name}\u2013{CITY[line.b].name} {line.cost}F"
                for line in LINES
                if line.kind == kind
            )
        )
        text.append("\n")
    text.rstrip()
    return text


def _bar(value: int | None, top: int, colour: str, bars: bool) -> Text:
    if not bars:
        return Text(f"{'?' if value is None else value}/{top}", style=colour)
    level = max(0, min(value or 0, top))
    text = Text("\u25a0" * level, style=colour)
    text.append("\u25a1" * (top - level), style="grey50")
    text.append(f" {'?' if value is None else value}")
    return text


def _dashboard(info: Mapping[str, Any], phase: object, lang: str) -> Text:
    if as_int(info.get("finished")) is not None or phase in NO_DASHBOARD:
        return Text("")
    if phase == "planning":
        planned = info.get("planned") is True
        return Text(
            word(lang, "planned" if planned else "planning"), style="green" if planned else "grey62"
        )
    boxes = mapping_of(info.get("assistants"))
    return Text(" ".join(f"{box_letter(lang, box)}{as_int(boxes.get(box), 0) or 0}"
                         for box in BOXES))


def _status(info: Mapping[str, Any], phase: object, lang: str) -> str:
    bits = []
    place = as_int(info.get("finished"))
    if place is not None:
        bits.append(f"{word(lang, 'finished')}: {place}.")
    elif info.get("passed") is True and phase == "convoy":
        bits.append(word(lang, "passed"))
    if info.get("leader_used") is True:
        bits.append(word(lang, "leader"))
    return ", ".join(bits)


ASSISTANTS: Final = "assistants"
"""The key of the dashboard's column: its heading is the boxes' letters in the board's language
(its cells say ``P2 M1 S0 F1``, Polish ``Z2 M1 O0 F1``: no word of its own)."""


def _assistants_heading(lang: str) -> str:
    return " ".join(box_letter(lang, box) for box in BOXES)


def _crew_cells(view: Mapping[str, Any], lang: str, bars: bool) -> list[list[Text]]:
    """Each crew's row: name, space, progress, money, the three gauges, hand size, dashboard
    or planning state, finishing place (the order of :data:`CREW_COLUMNS`)."""
    pending = set(pending_crews_of(view))
    phase = phase_of(view)
    rows = []
    for name, info in crews_of(view):
        money = as_int(info.get("money"))
        hand = hand_count_of(info.get("hand"))
        progress = as_int(info.get("progress"))
        rows.append([
            Text(crew_name(lang, name), style=_crew_style(name, name in pending)),
            Text(space_of(info.get("space")) or "?"),
            Text("?" if progress is None else str(progress)),
            Text(f"{'?' if money is None else money}F"),
            _bar(as_int(info.get("petrol")), GAUGE_MAX["petrol"], "green", bars),
            _bar(as_int(info.get("engine")), GAUGE_MAX["engine"], "dodger_blue2", bars),
            _bar(as_int(info.get("chassis")), GAUGE_MAX["chassis"], "medium_purple", bars),
            Text("?" if hand is None else str(hand)),
            _dashboard(info, phase, lang),
            Text(_status(info, phase, lang)),
        ])
    return rows


CREW_COLUMNS: Final[tuple[tuple[str, JustifyMethod], ...]] = (
    ("", "left"),
    ("", "left"),
    ("progress", "right"),
    ("money", "right"),
    ("petrol", "left"),
    ("engine", "left"),
    ("chassis", "left"),
    ("cards", "right"),
    (ASSISTANTS, "left"),
    ("", "left"),
)
"""The crews table's columns: the key of each heading's word (none: no heading), and its
alignment."""


def _crew_table(view: Mapping[str, Any], lang: str) -> Table:
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    for key, justify in CREW_COLUMNS:
        header = (key if key == "" else _assistants_heading(lang) if key == ASSISTANTS
                  else word(lang, key))
        table.add_column(header, justify=justify, no_wrap=True)
    for row in _crew_cells(view, lang, bars=True):
        table.add_row(*row)
    return table


def _crew_lines(view: Mapping[str, Any], lang: str) -> Table:
    """The crews for a narrow terminal: a row each, the name and space, then every value after
    its heading's word (wrapped under itself where need be), the gauges as numbers."""
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column()
    for row in _crew_cells(view, lang, bars=False):
        details = Text()
        for (key, _), cell in zip(CREW_COLUMNS[2:], row[2:], strict=True):
            if cell.plain:
                if details:
                    details.append("  ")
                if key not in ("", ASSISTANTS):
                    details.append(f"{word(lang, key)}\u00a0", style="grey62")
                details.append_text(cell)
        table.add_row(row[0], row[1], details)
    return table


def _track(view: Mapping[str, Any], lang: str) -> Text:
    """The progression track: each value 0..14 that holds tokens, bottom of the stack first."""
    crews = dict(crews_of(view))
    stacks: dict[int, list[str]] = {}
    for crew in strings_of(view.get("track")) or list(crews):
        value = as_int(crews.get(crew, {}).get("progress"), 0) or 0
        stacks.setdefault(max(0, min(value, 14)), []).append(crew)
    text = Text(f"{word(lang, 'track')}: ", style="bold")
    for value in range(15):
        here = stacks.get(value, [])
        text.append(f"{value}", style="bold" if here else "grey50")
        if here:
            text.append("[")
            for crew in here:
                text.append(crew[:1].upper(), style=_crew_style(crew))
            text.append("]")
        text.append(" ")
    text.rstrip()
    return text


def _extras(view: Mapping[str, Any], lang: str, cell: int) -> list[Text]:
    lines = []
    drawn = strings_of(view.get("drawn"))
    if drawn:
        text = Text(f"{word(lang, 'drawn')}: ", style="bold")
        for code in drawn:
            text.append_text(_tile_cell(code, cell))
            text.append(" ")
        lines.append(text)
    market = strings_of(view.get("market"))
    if market:
        names = ", ".join(word(lang, f"card.{card}") for card in market)
        lines.append(Text(f"{word(lang, 'market')}: ", style="bold") + Text(names))
    counts = []
    for key in ("bag", "deck", "discard"):
        count = hand_count_of(view.get(key))
        if count is not None:
            counts.append(f"{word(lang, key)}: {count}")
    if counts:
        lines.append(Text(" \u00b7 ".join(counts), style="grey62"))
    return lines


def _scores(view: Mapping[str, Any], lang: str) -> list[RenderableType]:
    winners = strings_of(view.get("winners"))
    winner = view.get("winner")
    if isinstance(winner, str) and winner not in winners:
        winners.insert(0, winner)
    if not winners:
        return []
    banner = Text(f"{word(lang, 'winner')}: ", style="bold black on gold1")
    banner.append(" & ".join(crew_name(lang, w) for w in winners), style="bold black on gold1")
    parts: list[RenderableType] = [banner]
    scores = mapping_of(view.get("scores"))
    if scores:
        table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
        table.add_column("")
        for key in SCORE_PARTS:
            table.add_column(word(lang, f"score.{key}"), justify="right")
        order = [c for c in strings_of(view.get("finishers")) if c in scores]
        order += [str(c) for c in scores if str(c) not in order]
        for crew in order:
            row = mapping_of(scores.get(crew))
            values = [
                as_int(row.get(key)) for key in ("place", "engine", "chassis", "money", "total")
            ]
            table.add_row(
                Text(crew_name(lang, crew), style=_crew_style(crew)),
                *("?" if v is None else str(v) for v in values),
            )
        parts.append(table)
    return parts


def board_text(
    view: Mapping[str, Any], *, lang: str = "en", highlight: Sequence[str] = ()
) -> RenderableType:
    """The Great Race in ``view`` for a terminal: a rich renderable that fits the terminal's
    width, 80 columns or more (see the module's documentation)."""
    lang = language(lang)
    view = mapping_of(view)
    marked = {space for item in highlight if (space := space_of(item)) is not None}
    return _Board(view, lang, marked)


@dataclass(frozen=True)
class _Board:
    view: Mapping[str, Any]
    lang: str
    marked: set[str]

    def __rich_console__(self, console: Console,
                         options: ConsoleOptions) -> Iterator[RenderableType]:
        layout = WIDE if options.max_width >= WIDE.width else NARROW
        yield self.parts(layout)

    def parts(self, layout: Layout) -> Group:
        view, lang = self.view, self.lang
        parts: list[RenderableType] = [_heading(view, lang), Text()]
        parts.extend(_map(view, self.marked, lang, layout.cell))
        parts.append(_lines_text(lang))
        if layout.bars:
            parts.append(_crew_table(view, lang))
        else:
            parts.extend([Text(), _crew_lines(view, lang), Text()])
        parts.append(_track(view, lang))
        parts.extend(_extras(view, lang, layout.cell))
        parts.extend(_scores(view, lang))
        return Group(*parts)
