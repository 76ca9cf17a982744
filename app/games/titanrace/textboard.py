"""Terminal rendering of a state view: the board (or the three Grand Slam boards), the Titans,
the dice and the pending decision.

The input is the JSON state view of ``ENGINE-INTERFACE.md`` (a plain mapping), so the renderer
works the same on a full view and on another player's view (hands given as a count). Nothing here
changes the game; a malformed field is shown as best it can be rather than raising.

A board is drawn with row 12 at the top (Titans race upward) and columns A-F; each of the 36 real
spaces is a 4-character tile::

    [feature glyph][Titan, 2 letters][trap mark]

e.g. ``~Gr`` then the trap mark is Grinder standing on a trapped lava space; an empty space with
no feature shows a middle dot, a feature with nobody on it repeats its glyph (`` ~~ ``). Cells
that are not spaces (column index + row even) are left blank. Titans are 2-letter chips in their
colour (Gr, Ra, Cr, Rg, Sl, Ch; in Polish Ma for Masakrator, Kr for Kraken).

Every word is in the language ``lang`` the entry points take (the CLI's: the seat's, else the
terminal's), through the catalogue of :mod:`app.core.i18n`, and the Titans, dice and cards are named
as the pages name them (:mod:`.describe`).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from app.core.i18n import N_, NC_, language, translate, translate_plural

from .describe import card_name, colour_name, titan_name, waiting_words
from .engine.circuits import (
    BONUS,
    FIRE_STATUE,
    ICE,
    LAVA,
    MULTI_RAMP,
    PENTACLE,
    PIRATES,
    SUPER_RAMP,
    Circuit,
)
from .engine.geometry import COLUMNS, ROWS, parse_space

__all__ = ["TITAN_ABBREVIATIONS", "render_board", "render_text"]

# --- looks -------------------------------------------------------------------------------------

TITAN_ABBREVIATIONS: Final[dict[str, str]] = {
    # Translators: the two letters drawn on a Titan's token, from its name in the language
    # (Polish: "Ma" for Masakrator, "Kr" for Kraken); two Titans must not share them.
    "grinder": NC_("titan mark", "Gr"),
    "rassik": NC_("titan mark", "Ra"),
    "craken": NC_("titan mark", "Cr"),
    "ragnarok": NC_("titan mark", "Rg"),
    "slaugg": NC_("titan mark", "Sl"),
    "chtoolhoo": NC_("titan mark", "Ch"),
}
"""Each Titan's mark on the boards (message ids: the picture shows them translated)."""
TITAN_COLOURS: Final[dict[str, str]] = {
    "grinder": "red1",
    "rassik": "yellow1",
    "craken": "dodger_blue1",
    "ragnarok": "orange3",
    "slaugg": "green3",
    "chtoolhoo": "purple",
}
_CHIP_TEXT: Final[dict[str, str]] = {
    "grinder": "bright_white",
    "rassik": "black",
    "craken": "bright_white",
    "ragnarok": "black",
    "slaugg": "black",
    "chtoolhoo": "bright_white",
}
DIE_COLOURS: Final[dict[str, str]] = {
    "blue": "dodger_blue1",
    "red": "red1",
    "brown": "orange3",
    "green": "green3",
    "yellow": "yellow1",
    "purple": "purple",
}

TILE_BG: Final = "grey23"
TRAP_GLYPH: Final = "\u00d7"  # multiplication sign
TRAP_STYLE: Final = "bold bright_red"
EMPTY_GLYPH: Final = "·"
CELL: Final = 4  # characters per tile
SEP: Final = 1  # blank columns between tiles
LABEL: Final = 3  # "12 " on the left, " 12" on the right
BOARD_WIDTH: Final = 6 * CELL + 5 * SEP
GAP: Final = 3  # between side-by-side boards (a rule in the middle)
MAX_OPTIONS: Final = 12
ABILITY_WORDS: Final = {
    # Translators: whether a Titan's Ability is spent, in the terminal's Titans table.
    False: NC_("ability", "ready"),
    True: NC_("ability", "used"),
}


@dataclass(frozen=True)
class _Look:
    glyph: str
    colour: str
    bg: str
    label: str
    """The feature's words in the legend (a message id of the catalogue)."""


_FEATURES: Final[dict[str, _Look]] = {
    # Translators: the terminal board's legend, a space's feature and what it does in short.
    BONUS: _Look("+", "bold gold1", "#3a3a10", N_("bonus card")),
    LAVA: _Look("~", "bold orange_red1", "#5f1010", N_("lava (-1 life)")),
    PIRATES: _Look("$", "bold light_goldenrod1", "#10305f", N_("pirates (card or -1 life)")),
    ICE: _Look("*", "bold bright_cyan", "#104a5a", N_("ice (slide on)")),
    FIRE_STATUE: _Look("!", "bold dark_orange", "#4a2a00", N_("fire statue (blasts around)")),
    PENTACLE: _Look("@", "bold orchid1", "#3a1050", N_("pentacle (-1 life, reroll)")),
    MULTI_RAMP: _Look("^", "bold bright_green", "#1a3a1a", N_("multi-ramp (jump 1)")),
}
_SUPER_RAMPS: Final[dict[str, _Look]] = {
    "L": _Look("\\", "bold bright_green", "#1a3a1a", N_("super-ramp left (jump 2)")),
    "R": _Look("/", "bold bright_green", "#1a3a1a", N_("super-ramp right (jump 2)")),
}


def _feature_look(circuit: Circuit, col: int, row: int) -> _Look | None:
    kind = circuit.feature_at(col, row)
    if kind is None:
        return None
    if kind == SUPER_RAMP:
        direction = circuit.super_ramps.get(f"{COLUMNS[col]}{row}", "").upper()
        return _SUPER_RAMPS.get(direction,
                                _Look("^", "bold bright_green", "#1a3a1a", N_("ramp")))
    return _FEATURES.get(kind, _Look("?", "bold white", TILE_BG, kind))


def abbreviation(titan: str, lang: str = "en") -> str:
    """The 2-letter board mark of a Titan in ``lang`` (unknown names fall back to their first
    letters)."""
    known = TITAN_ABBREVIATIONS.get(titan)
    if known:
        return translate(lang, known, context="titan mark")
    return (titan[:2].title() or "??").ljust(2)


def titan_colour(titan: str) -> str:
    return TITAN_COLOURS.get(titan, "bright_white")


def _chip_style(titan: str) -> str:
    return f"bold {_CHIP_TEXT.get(titan, 'black')} on {titan_colour(titan)}"


def _titan_name(titan: str, lang: str) -> Text:
    """``Gr Grinder``: the board chip, then the name in the Titan's colour."""
    text = Text().append(abbreviation(titan, lang), style=_chip_style(titan))
    text.append(" ")
    text.append(titan_name(titan, lang), style=f"bold {titan_colour(titan)}")
    return text


# --- reading the view --------------------------------------------------------------------------


def as_int(value: Any, default: int) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return default


def titans_of(view: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    raw = view.get("titans") or {}
    if isinstance(raw, Mapping):
        return [
            (str(name), info if isinstance(info, Mapping) else {}) for name, info in raw.items()
        ]
    if isinstance(raw, list):  # tolerate a list of {"titan": name, ...}
        return [(str(info.get("titan", "?")), info) for info in raw if isinstance(info, Mapping)]
    return []


def square_of(space: Any) -> tuple[int, int] | None:
    """``(col, row)`` of a space name, or None when it is missing or not a space."""
    if not isinstance(space, str):
        return None
    try:
        return parse_space(space)
    except ValueError:
        return None


def board_index_of(lap: int, boards: int) -> int:
    return (lap - 1) % boards if boards > 1 else 0


def trap_squares_of(view: Mapping[str, Any], boards: int) -> list[set[tuple[int, int]]]:
    squares: list[set[tuple[int, int]]] = [set() for _ in range(boards)]
    for trap in view.get("traps") or []:
        if not isinstance(trap, str):
            continue
        board, name = 0, trap
        if ":" in trap:
            head, _, name = trap.partition(":")
            board = as_int(head.strip(), -1)
            if not 0 <= board < boards:
                continue
        square = square_of(name)
        if square is not None:
            squares[board].add(square)
    return squares


# --- the board ---------------------------------------------------------------------------------


def _cell(look: _Look | None, titan: str | None, trapped: bool, lang: str) -> Text:
    bg = look.bg if look else TILE_BG
    text = Text(style=f"on {bg}")  # the tile: a base style under the glyphs
    if titan is not None:
        text.append(look.glyph if look else " ", f"{look.colour} on {bg}" if look else "")
        text.append(abbreviation(titan, lang), _chip_style(titan))
    elif look is not None:
        text.append(" " + look.glyph * 2, f"{look.colour} on {bg}")
    else:
        text.append(f" {EMPTY_GLYPH} ", f"grey50 on {bg}")
    text.append(TRAP_GLYPH if trapped else " ", f"{TRAP_STYLE} on {bg}" if trapped else "")
    return text


def _board_lines(
    circuit: Circuit,
    title: str,
    titans: Mapping[tuple[int, int], str],
    traps: set[tuple[int, int]],
    lang: str,
    *,
    left: bool,
    right: bool,
) -> list[Text]:
    """One board as lines of equal width: title, column letters, rows 12..1, column letters."""
    width = BOARD_WIDTH + (LABEL if left else 0) + (LABEL if right else 0)
    pad_left = " " * LABEL if left else ""
    letters = Text(pad_left)
    letters.append((" " * SEP).join(f" {letter}".ljust(CELL) for letter in COLUMNS), style="bold")
    letters.pad_right(width - letters.cell_len)
    heading = Text(title, style="bold", overflow="ellipsis", no_wrap=True)
    heading.truncate(width, overflow="ellipsis")
    heading.align("center", width)
    lines = [heading, letters]
    for row in range(ROWS, 0, -1):
        line = Text()
        if left:
            line.append(f"{row:>2} ", style="dim")
        for col in range(6):
            if col:
                line.append(" " * SEP)
            if (col + row) % 2 == 0:
                line.append(" " * CELL)
                continue
            line.append_text(
                _cell(_feature_look(circuit, col, row), titans.get((col, row)),
                      (col, row) in traps, lang)
            )
        if right:
            line.append(f" {row:<2}", style="dim")
        lines.append(line)
    lines.append(letters.copy())
    return lines


def _legend_lines(circuits: Sequence[Circuit], lang: str) -> list[Text]:
    looks: list[_Look] = []
    for circuit in circuits:
        for col, row in ((c, r) for r in range(1, ROWS + 1) for c in range(6) if (c + r) % 2):
            look = _feature_look(circuit, col, row)
            if look is not None and look not in looks:
                looks.append(look)
    order = [*_FEATURES.values(), *_SUPER_RAMPS.values()]
    looks.sort(key=lambda look: order.index(look) if look in order else len(order))
    lines: list[Text] = []
    for look in looks:
        line = Text().append(f" {look.glyph * 2} ", style=f"{look.colour} on {look.bg}")
        line.append(" " + translate(lang, look.label))
        lines.append(line)
    trap = Text().append(f" {EMPTY_GLYPH} ", style=f"grey50 on {TILE_BG}")
    trap.append(TRAP_GLYPH, style=f"{TRAP_STYLE} on {TILE_BG}")
    trap.append(" " + translate(lang, "trap"))
    lines.append(trap)
    chip = Text().append("·", style=f"grey50 on {TILE_BG}")
    chip.append(abbreviation("grinder", lang), style=_chip_style("grinder"))
    chip.append(" ", style=f"on {TILE_BG}")
    chip.append(" " + translate(lang, "a Titan (see below)"))
    lines.append(chip)
    return lines


def _join(columns: Sequence[Sequence[Text]], widths: Sequence[int], gap: Text) -> list[Text]:
    """Put blocks of lines side by side, each padded to its width."""
    height = max(len(block) for block in columns)
    lines: list[Text] = []
    for index in range(height):
        line = Text()
        for number, (block, width) in enumerate(zip(columns, widths, strict=True)):
            if number:
                line.append_text(gap)
            part = block[index].copy() if index < len(block) else Text()
            part.pad_right(width - part.cell_len)
            line.append_text(part)
        line.rstrip()
        lines.append(line)
    return lines


class _Boards:
    """The board(s) and the legend, laid out for the width available when printed."""

    def __init__(self, view: Mapping[str, Any], circuits: Sequence[Circuit], lang: str) -> None:
        self.circuits = list(circuits)
        self.lang = lang
        boards = len(self.circuits)
        self.titans: list[dict[tuple[int, int], str]] = [{} for _ in range(boards)]
        for name, info in titans_of(view):
            square = square_of(info.get("space"))
            if square is None or not boards:
                continue
            board = board_index_of(as_int(info.get("lap"), 1), boards)
            self.titans[board].setdefault(square, name)
        self.traps = trap_squares_of(view, max(boards, 1))

    def _title(self, index: int) -> str:
        circuit = self.circuits[index]
        if len(self.circuits) == 1:
            return circuit.title
        laps = ", ".join(str(lap) for lap in range(1, 4) if board_index_of(lap, 3) == index)
        # Translators: a Grand Slam board's heading on the terminal: its number, its circuit's
        # name and the laps raced on it ("0: Kaldheira (lap 1)").
        return translate(self.lang, "{index}: {title} (lap {laps})", index=index,
                         title=circuit.title, laps=laps)

    def _board(self, index: int, *, left: bool, right: bool) -> list[Text]:
        return _board_lines(
            self.circuits[index],
            self._title(index),
            self.titans[index],
            self.traps[index],
            self.lang,
            left=left,
            right=right,
        )

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.circuits:
            yield Text(translate(self.lang, "(no circuit)"), style="dim")
            return
        width = options.max_width
        legend = _legend_lines(self.circuits, self.lang)
        legend_width = max(line.cell_len for line in legend)
        full = BOARD_WIDTH + 2 * LABEL
        rule = Text(" │ ".center(GAP), style="grey30")
        spacer = Text(" " * GAP)
        count = len(self.circuits)
        side_by_side = LABEL * 2 + BOARD_WIDTH * count + GAP * (count - 1)
        if count == 1:
            board = self._board(0, left=True, right=True)
            if width >= full + GAP + legend_width:
                yield from _join([board, [Text(), Text(), *legend]], [full, legend_width], spacer)
            else:
                yield from board
                yield from legend
            return
        if width >= side_by_side:
            blocks = [
                self._board(index, left=index == 0, right=index == count - 1)
                for index in range(count)
            ]
            widths = [line[0].cell_len for line in blocks]
            yield from _join(blocks, widths, rule)
        else:
            for index in range(count):
                yield from self._board(index, left=True, right=True)
                yield Text()
        # A compact legend under the boards, as many entries a line as fit.
        yield from _flow(legend, width)


def _flow(items: Sequence[Text], width: int, gap: int = 3, indent: int = 0) -> list[Text]:
    """Lay items out left to right, starting a new line (indented) instead of splitting one."""
    lines: list[Text] = []
    line, count = Text(), 0
    for item in items:
        if count and line.cell_len + gap + item.cell_len > width:
            lines.append(line)
            line, count = Text(" " * indent), 0
        if count:
            line.append(" " * gap)
        line.append_text(item)
        count += 1
    if count:
        lines.append(line)
    return lines


class _Flow:
    """Items that wrap between items, never inside one (e.g. ``move S`` stays whole)."""

    def __init__(self, items: Sequence[Text], gap: int = 3, indent: int = 0) -> None:
        self.items = list(items)
        self.gap = gap
        self.indent = indent

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from _flow(self.items, options.max_width, self.gap, self.indent)


# --- the Titans and the table ------------------------------------------------------------------


def _life(info: Mapping[str, Any], lang: str) -> Text:
    if info.get("ko"):
        text = Text().append(translate(lang, "KO"), style="bold bright_white on red3")
        if info.get("ko_passed"):
            text.append(" " + translate(lang, "(back next turn)"), style="dim")
        else:
            text.append(" " + translate(lang, "(skips next turn)"), style="dim")
        return text
    life = info.get("life")
    if not isinstance(life, int) or isinstance(life, bool):
        return Text("?" if life is None else str(life))
    hearts = max(0, min(life, 6))
    text = Text().append("♥" * hearts, style="bold red1")
    text.append("♡" * (6 - hearts), style="grey35")
    text.append(f" {life}")
    return text


def _hand(hand: Any, lang: str) -> Text:
    """A hand as a count (another player's) or as its cards' names."""
    if isinstance(hand, bool) or hand is None:
        return Text("")
    if isinstance(hand, int):
        return Text(translate_plural(lang, "{n} card", "{n} cards", hand), style="italic")
    if isinstance(hand, list):
        if not hand:
            return Text(translate(lang, "no cards"), style="dim")
        return Text(", ".join(card_name(str(card), lang) for card in hand), style="cyan")
    return Text(str(hand))


def _space(info: Mapping[str, Any], boards: int, lang: str) -> Text:
    space = info.get("space")
    if space is None:
        # Translators: in the terminal's Titans table, a Titan not yet on the board.
        return Text(translate(lang, "not started"), style="dim italic")
    name = str(space).upper()
    if boards > 1:
        return Text(f"{board_index_of(as_int(info.get('lap'), 1), boards)}:{name}")
    return Text(name)


def _titan_table(view: Mapping[str, Any], boards: int, lang: str) -> Table:
    pending = view.get("pending")
    current = pending.get("titan") if isinstance(pending, Mapping) else None
    winners = {str(w) for w in view.get("winners") or [] if w}
    if view.get("winner"):
        winners.add(str(view.get("winner")))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, expand=False)
    table.add_column("", width=1, no_wrap=True)
    table.add_column(translate(lang, "Titan"), no_wrap=True)
    table.add_column(translate(lang, "Space") if boards == 1
                     else translate(lang, "Board:space"), no_wrap=True)
    table.add_column(translate(lang, "Lap"), justify="right", no_wrap=True)
    table.add_column(translate(lang, "Life"))  # (a KO's note wraps under it)
    table.add_column(translate(lang, "Ability"), no_wrap=True)
    table.add_column(translate(lang, "Hand"), min_width=9)
    for name, info in titans_of(view):
        marker = Text(">", style="bold") if name == current else Text("")
        title = _titan_name(name, lang)
        if name in winners:
            # Translators: after a Titan's name in the terminal's table, when it has won.
            title.append(" " + translate(lang, "WINS"), style="bold gold1")
        lap = info.get("lap")
        used = info.get("ability_used")
        ability = Text("" if used is None else translate(
            lang, ABILITY_WORDS[bool(used)], context="ability"))
        ability.stylize("dim" if used else "green")
        table.add_row(
            marker,
            title,
            _space(info, boards, lang),
            Text("1" if lap is None else str(lap)),
            _life(info, lang),
            ability,
            _hand(info.get("hand"), lang),
        )
    return table


def _dice(dice: Any, lang: str) -> Text:
    if not isinstance(dice, list) or not dice:
        return Text(translate(lang, "none"), style="dim")
    text = Text()
    for index, die in enumerate(dice):
        if index:
            text.append(" ")
        colour = DIE_COLOURS.get(str(die), "white")
        text.append(f"[{colour_name(str(die), lang)}]", style=f"bold {colour}")
    return text


def _round_line(view: Mapping[str, Any], lang: str) -> Text:
    """The round, the dice on the table and the traps left in the supply."""
    line = Text().append(translate(lang, "Round {n}", n=view.get("round", "?")), style="bold")
    if view.get("first_round"):
        line.append(" " + translate(lang, "(first round: start on A1, C1 or E1)"), style="dim")
    line.append("   " + translate(lang, "Dice:") + " ", style="bold")
    line.append_text(_dice(view.get("dice"), lang))
    line.append("   " + translate(lang, "Traps in supply:") + " ", style="bold")
    line.append(str(view.get("trap_supply", "?")))
    return line


def _options(options: Sequence[Any], lang: str) -> _Flow:
    """The legal inputs as typed (``move LRLR``), the first :data:`MAX_OPTIONS` of them."""
    heading = translate(lang, "Options:")
    items = [Text(heading, style="bold")]
    items += [Text(str(option), style="cyan") for option in options[:MAX_OPTIONS]]
    if len(options) > MAX_OPTIONS:
        items.append(Text(translate(lang, "… and {n} more", n=len(options) - MAX_OPTIONS),
                          style="dim"))
    return _Flow(items, gap=2, indent=len(heading) + 2)


def _status(view: Mapping[str, Any], lang: str) -> list[RenderableType]:
    lines: list[RenderableType] = [_round_line(view, lang)]
    traps = [str(trap) for trap in view.get("traps") or []]
    line = Text().append(translate(lang, "Traps on the board:") + " ", style="bold")
    if traps:
        line.append(", ".join(traps), style=TRAP_STYLE)
    else:
        line.append(translate(lang, "none"), style="dim")
    lines.append(line)
    winner = view.get("winner")
    pending = view.get("pending")
    if winner:
        line = Text().append(translate(lang, "Game over. Winner:") + " ", style="bold gold1")
        line.append_text(_titan_name(str(winner), lang))
        side = [titan_name(str(w), lang) for w in view.get("winners") or [] if w and w != winner]
        if side:
            line.append(" " + translate(lang, "with {titans}", titans=", ".join(side)))
        lines.append(line)
    elif isinstance(pending, Mapping):
        line = Text().append(translate(lang, "Waiting for:") + " ", style="bold")
        titan = pending.get("titan")
        if titan:
            line.append_text(_titan_name(str(titan), lang))
            line.append(" \u2013 ")
        line.append(waiting_words(pending, lang), style="bold reverse")
        lines.append(line)
        options = pending.get("options")
        if isinstance(options, list) and options:
            lines.append(_options(options, lang))
    else:
        lines.append(Text(translate(lang, "Nothing pending."), style="dim"))
    return lines


# --- entry points ------------------------------------------------------------------------------


def render_board(view: Mapping[str, Any], circuits: Sequence[Circuit],
                 lang: str = "en") -> Group:
    """The whole position as one rich renderable: board(s) with legend, Titans, dice, decision.

    ``circuits`` holds one circuit for a normal game and three for Grand Slam (boards 0-2, one
    per lap). The board layout adapts to the console width it is printed on; its words are in
    ``lang`` (English for a language without a catalogue).
    """
    lang = language(lang)
    boards = max(len(circuits), 1)
    parts: list[RenderableType] = [
        _Boards(view, circuits, lang),
        Text(),
        _titan_table(view, boards, lang),
        Text(),
        *_status(view, lang),
    ]
    return Group(*parts)


def render_text(view: Mapping[str, Any], circuits: Sequence[Circuit], width: int = 100,
                lang: str = "en") -> str:
    """:func:`render_board` as plain text (no colour codes), for logs and tests."""
    console = Console(
        file=io.StringIO(),
        width=width,
        record=True,
        color_system=None,
        force_terminal=False,
        force_jupyter=False,
        legacy_windows=False,
        highlight=False,
        emoji=False,
        markup=False,
    )
    console.print(render_board(view, circuits, lang))
    text = console.export_text(styles=False)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
