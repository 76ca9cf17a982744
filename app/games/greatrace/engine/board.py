"""The Africa board of The Great Race (docs/great-race-rules.md section 1), as pure data.

A hex map of 11 columns (``A``-``K``) and 15 rows (``1``-``15``, north to south) whose even rows
sit half a space to the right. A space is named by its column letter and row (``"F15"``); names
are upper case everywhere inside the engine (:func:`parse_space` accepts any case).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

Space: TypeAlias = str
"""A space's name, such as ``"F15"``."""

COLUMNS: Final = "ABCDEFGHIJK"
ROWS: Final = 15

_MAP: Final = (
    "~~~..*....~",  # 1
    "~~.......*~",  # 2
    "~....*##..~",  # 3
    "*..####...~",  # 4
    "~.*.##...*.",  # 5
    "~...#.*...*",  # 6
    "~~*...##...",  # 7
    "~~~..###*..",  # 8
    "~~~*.##...~",  # 9
    "~~~....*..~",  # 10
    "~~~*.....*~",  # 11
    "~~~.##....~",  # 12
    "~~~*##.*.~~",  # 13
    "~~~~.....~~",  # 14
    "~~~~.*..~~~",  # 15
)
"""``~`` sea (no space), ``.`` terrain, ``#`` terrain in a risk zone, ``*`` a city."""


@dataclass(frozen=True)
class City:
    space: Space
    slug: str
    name: str
    cards: int
    """Resource cards drawn on entering (0 for the two purple cities)."""

    @property
    def purple(self) -> bool:
        return self.slug in PURPLE


@dataclass(frozen=True)
class Line:
    """A sea or air transport line between two cities, travelled both ways as one space."""

    a: str
    b: str
    kind: Literal["sea", "air"]
    cost: int

    def other(self, city: str) -> str:
        return self.b if city == self.a else self.a


CITIES: Final[tuple[City, ...]] = (
    City("F1", "alger", "Alger", 0),
    City("J2", "le-caire", "Le Caire", 2),
    City("F3", "tamanrasset", "Tamanrasset", 1),
    City("A4", "dakar", "Dakar", 2),
    City("C5", "tombouctou", "Tombouctou", 1),
    City("J5", "khartoum", "Khartoum", 2),
    City("G6", "fort-lamy", "Fort-Lamy", 1),
    City("K6", "addis-abeba", "Addis-Abeba", 2),
    City("C7", "lagos", "Lagos", 3),
    City("I8", "nairobi", "Nairobi", 2),
    City("D9", "leopoldville", "Léopoldville", 2),
    City("H10", "elisabethville", "Élisabethville", 1),
    City("D11", "luanda", "Luanda", 1),
    City("J11", "zanzibar", "Zanzibar", 2),
    City("D13", "windhoek", "Windhoek", 1),
    City("H13", "bulawayo", "Bulawayo", 1),
    City("F15", "le-cap", "Le Cap", 0),
)
PURPLE: Final = ("alger", "le-cap")
"""The start and finish cities, one each (the game option ``start`` says which starts)."""

LINES: Final[tuple[Line, ...]] = (
    Line("alger", "dakar", "sea", 100),
    Line("dakar", "lagos", "sea", 50),
    Line("lagos", "luanda", "sea", 100),
    Line("zanzibar", "le-cap", "sea", 150),
    Line("alger", "tombouctou", "air", 100),
    Line("le-caire", "khartoum", "air", 50),
    Line("nairobi", "bulawayo", "air", 100),
)

CITY_AT: Final[dict[Space, City]] = {city.space: city for city in CITIES}
CITY: Final[dict[str, City]] = {city.slug: city for city in CITIES}


def _cells() -> dict[Space, str]:
    cells: dict[Space, str] = {}
    for row, line in enumerate(_MAP, start=1):
        for col, mark in enumerate(line):
            if mark != "~":
                cells[f"{COLUMNS[col]}{row}"] = mark
    return cells


_CELLS: Final = _cells()
SPACES: Final[tuple[Space, ...]] = tuple(_CELLS)
"""Every space of the board, row by row from the north."""
RISK: Final[frozenset[Space]] = frozenset(s for s, mark in _CELLS.items() if mark == "#")
TERRAIN: Final[frozenset[Space]] = frozenset(s for s, mark in _CELLS.items() if mark != "*")
"""The spaces a terrain tile may lie on (every space but the cities)."""


def col_row(space: Space) -> tuple[int, int]:
    """Zero-based column and one-based row of a well-formed space name."""
    return COLUMNS.index(space[0]), int(space[1:])


def name(col: int, row: int) -> Space:
    return f"{COLUMNS[col]}{row}"


def parse_space(text: str) -> Space | None:
    """The board space ``text`` names (any case), or None when it names no space."""
    text = text.strip().upper()
    return text if text in _CELLS else None


def _offsets(row: int) -> tuple[tuple[int, int], ...]:
    side = (-1, 0) if row % 2 == 1 else (0, 1)
    return ((-1, 0), (1, 0), *((d, -1) for d in side), *((d, 1) for d in side))


def _neighbours(space: Space) -> tuple[Space, ...]:
    col, row = col_row(space)
    found = []
    for dc, dr in _offsets(row):
        c, r = col + dc, row + dr
        if 0 <= c < len(COLUMNS) and 1 <= r <= ROWS and name(c, r) in _CELLS:
            found.append(name(c, r))
    return tuple(found)


NEIGHBOURS: Final[dict[Space, tuple[Space, ...]]] = {s: _neighbours(s) for s in SPACES}
"""The spaces next to each space (sea has no spaces, so a coast has fewer)."""


def _cube(col: int, row: int) -> tuple[int, int]:
    """Axial coordinates of a grid position (0-based column, 1-based row), sea included."""
    i = row - 1
    return col - (i - (i & 1)) // 2, i


def distance(a: Space, b: Space) -> int:
    """Hex distance between two spaces on the full 11 x 15 grid (sea counted as spaces)."""
    qa, ra = _cube(*col_row(a))
    qb, rb = _cube(*col_row(b))
    dq, dr = qa - qb, ra - rb
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def finish_of(start: str) -> str:
    """The purple city that is not ``start``."""
    return PURPLE[1] if start == PURPLE[0] else PURPLE[0]


def progress(space: Space, start: str) -> int:
    """A space's value on the progression track for a race from ``start`` (0 at the start,
    :func:`track_length` at the finish, never below 0); read from :data:`PROGRESS` (every
    move asks)."""
    found = PROGRESS.get(start, {}).get(space)
    return _progress(space, start) if found is None else found


def _progress(space: Space, start: str) -> int:
    finish = CITY[finish_of(start)].space
    full = distance(CITY[start].space, finish)
    return max(0, full - distance(space, finish))


PROGRESS: Final[dict[str, dict[Space, int]]] = {
    start: {space: _progress(space, start) for space in SPACES} for start in PURPLE}
""":func:`progress` of every space, for a race from each purple city."""


def track_length(start: str) -> int:
    return distance(CITY[start].space, CITY[finish_of(start)].space)


def lines_from(city: str) -> tuple[Line, ...]:
    """The transport lines that leave ``city`` (by slug), from :data:`LINES_FROM`."""
    found = LINES_FROM.get(city)
    return _lines_from(city) if found is None else found


def _lines_from(city: str) -> tuple[Line, ...]:
    return tuple(line for line in LINES if city in (line.a, line.b))


LINES_FROM: Final[dict[str, tuple[Line, ...]]] = {slug: _lines_from(slug) for slug in CITY}
""":func:`lines_from` of every city (the rules ask at every step of a drive)."""
