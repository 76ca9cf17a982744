"""Board geometry: spaces, directions, zones, wrap-around and laps.

A board has columns A-F (0-5) and rows 1-12; a space exists where ``column + row`` is odd.
A Titan's position is held as ``(col, y)`` where ``y = (lap - 1) * 12 + (row - 1)`` is its
absolute progress along the race. The physical cycle is one board long in a normal game and three
boards long in Grand Slam, so occupancy and adjacency are taken on ``y`` modulo the cycle length.
"""

from __future__ import annotations

from typing import Final

Pos = tuple[int, int]
"""``(col, y)``: column 0-5 and absolute progress (row - 1 + 12 * (lap - 1))."""

COLUMNS: Final = "ABCDEF"
ROWS: Final = 12

DIRECTIONS: Final[dict[str, tuple[int, int]]] = {
    "S": (0, 2),
    "L": (-1, 1),
    "R": (1, 1),
    "B": (0, -2),
    "BL": (-1, -1),
    "BR": (1, -1),
}
FORWARD: Final = ("S", "L", "R")
BACKWARD: Final = ("B", "BL", "BR")
ALL_DIRECTIONS: Final = FORWARD + BACKWARD
OPPOSITE: Final = {"S": "B", "L": "BR", "R": "BL", "B": "S", "BL": "R", "BR": "L"}

ALL_SPACES: Final[tuple[str, ...]] = tuple(
    f"{COLUMNS[col]}{row}" for row in range(1, ROWS + 1) for col in range(6) if (col + row) % 2
)
START_SPACES: Final = ("A1", "C1", "E1")


def parse_space(text: str) -> tuple[int, int]:
    """Return ``(col, row)`` for a space name such as ``"c3"``; raise ValueError if none exists."""
    name = text.strip().upper()
    if len(name) < 2 or name[0] not in COLUMNS or not name[1:].isdigit():
        raise ValueError(f"'{text}' is not a space name (A1 to F12)")
    col, row = COLUMNS.index(name[0]), int(name[1:])
    if not 1 <= row <= ROWS:
        raise ValueError(f"'{text}' is not a space: rows run from 1 to 12")
    if (col + row) % 2 == 0:
        raise ValueError(f"'{text}' is not a space: odd rows hold A, C, E and even rows B, D, F")
    return col, row


def space_name(col: int, row: int) -> str:
    return f"{COLUMNS[col]}{row}"


def pos_name(pos: Pos) -> str:
    """The printed name of the space under a position, whatever its lap."""
    return f"{COLUMNS[pos[0]]}{pos[1] % ROWS + 1}"


def lap_of(pos: Pos) -> int:
    return pos[1] // ROWS + 1


def pos_from(space: str, lap: int) -> Pos:
    col, row = parse_space(space)
    return col, (lap - 1) * ROWS + row - 1


def step(pos: Pos, direction: str, times: int = 1) -> Pos:
    dc, dy = DIRECTIONS[direction]
    return (pos[0] + dc * times) % 6, pos[1] + dy * times


def location(pos: Pos, cycle_rows: int) -> int:
    """A physical spot on the cycle: equal for two positions exactly when they share a space."""
    return (pos[1] % cycle_rows) * 6 + pos[0]


def board_of(pos: Pos, boards: int) -> int:
    return (pos[1] // ROWS) % boards


def location_name(loc: int, boards: int) -> str:
    """Name a physical spot: ``"B4"``, or ``"2:B4"`` on a three-board cycle."""
    y, col = divmod(loc, 6)
    name = space_name(col, y % ROWS + 1)
    return f"{y // ROWS}:{name}" if boards > 1 else name


def parse_location(text: str, boards: int) -> int:
    """Parse ``"B4"`` or ``"2:B4"`` (board before the space, Grand Slam) into a physical spot."""
    board = 0
    name = text
    if ":" in text:
        head, _, name = text.partition(":")
        if not head.strip().isdigit() or not 0 <= int(head) < boards:
            raise ValueError(f"'{text}': the board number must be 0 to {boards - 1}")
        board = int(head)
    col, row = parse_space(name)
    return (board * ROWS + row - 1) * 6 + col
