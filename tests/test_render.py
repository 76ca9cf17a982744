"""The terminal board renderer: plain-text layout of the board(s), the Titans and the status."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from app.games.titanrace.engine.circuits import Circuit, built_in_circuit
from app.games.titanrace.engine.geometry import ALL_SPACES, COLUMNS, parse_space
from app.games.titanrace.textboard import render_board, render_text

HEADER = "A    B    C    D    E    F"
TRAP = "\u00d7"


def titan(space: str | None, **fields: Any) -> dict[str, Any]:
    info: dict[str, Any] = {
        "seat": 0,
        "space": space,
        "lap": 1,
        "life": 6,
        "ko": False,
        "hand": [],
        "ability_used": False,
    }
    info.update(fields)
    return info


def normal_view() -> dict[str, Any]:
    return {
        "round": 4,
        "first_round": False,
        "titans": {
            "grinder": titan("C3", hand=["tribal-trap", "speed-potion"]),
            "rassik": titan("F10", seat=1, lap=2, life=3, hand=1, ability_used=True),
            "craken": titan("E5", seat=2, life=0, ko=True, hand=0),
            "chtoolhoo": titan(None, seat=3, life=4),
        },
        "traps": ["B2", "E3"],
        "trap_supply": 13,
        "dice": ["red", "blue", "purple"],
        "pending": {
            "kind": "turn",
            "titan": "grinder",
            "options": ["move S", "trap B2", "trap D2", "ability", *[f"opt{i}" for i in range(11)]],
        },
        "winner": None,
        "winners": [],
    }


def grand_slam() -> list[Circuit]:
    return [built_in_circuit(n) for n in ("kaldheira", "dead-mans-lagoon", "moltenchest")]


def grand_slam_view() -> dict[str, Any]:
    return {
        "round": 9,
        "first_round": False,
        "titans": {
            "slaugg": titan("D6", lap=2, life=5, hand=["fireball"]),
            "grinder": titan("C3", seat=1, lap=1, hand=2),
            "ragnarok": titan("A11", seat=2, lap=3, life=2),
        },
        "traps": ["1:C5", "0:B2", "2:F8"],
        "trap_supply": 12,
        "dice": ["green", "brown"],
        "pending": {"kind": "react", "titan": "grinder", "options": ["play last-shield", "pass"]},
        "winner": None,
        "winners": [],
    }


class Board:
    """Locate board cells in plain-text output by the column letters of the header line."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.header = next(i for i, line in enumerate(self.lines) if HEADER in line)
        header = self.lines[self.header]
        self.letters = [i for i, ch in enumerate(header) if ch in COLUMNS]
        assert len(self.letters) % 6 == 0

    @property
    def boards(self) -> int:
        return len(self.letters) // 6

    def row_line(self, row: int) -> str:
        line = self.lines[self.header + 1 + (12 - row)]
        assert line[:3].strip() == str(row), f"row {row} is not labelled: {line!r}"
        return line

    def cell(self, space: str, board: int = 0) -> str:
        """The 4-character tile: glyph, Titan (2 letters, under the column letter), trap."""
        col, row = parse_space(space)
        start = self.letters[board * 6 + col] - 1
        return self.row_line(row)[start : start + 4].ljust(4)

    def titan_at(self, space: str, board: int = 0) -> str:
        return self.cell(space, board)[1:3]

    def trapped(self, space: str, board: int = 0) -> bool:
        return self.cell(space, board)[3] == TRAP


def line_with(text: str, needle: str) -> str:
    return next(line for line in text.splitlines() if needle in line)


# --- normal game ---------------------------------------------------------------------------------


def test_normal_board_places_titans_under_their_column_letters() -> None:
    text = render_text(normal_view(), [built_in_circuit("kaldheira")])
    board = Board(text)
    assert board.boards == 1
    assert "Kaldheira" in text
    assert board.titan_at("C3") == "Gr"
    assert board.row_line(3).index("Gr") == board.letters[COLUMNS.index("C")]
    assert board.titan_at("F10") == "Ra"
    assert board.titan_at("E5") == "Cr"  # KO Titans stay on the board
    assert board.cell("E5")[0] == "~"  # ... on Kaldheira's lava
    assert "Ch" not in "".join(board.row_line(row) for row in range(1, 13))


def test_every_real_space_is_drawn_and_every_other_cell_is_blank() -> None:
    board = Board(render_text({"titans": {}}, [built_in_circuit("estenggaard")]))
    for row in range(1, 13):
        for col, letter in enumerate(COLUMNS):
            cell = board.cell(f"{letter}{row}") if (col + row) % 2 else None
            if cell is None:
                start = board.letters[col] - 1
                assert board.row_line(row)[start : start + 4].strip() == "", (letter, row)
            else:
                assert cell.strip(), f"{letter}{row} is not drawn"
    assert sum(1 for space in ALL_SPACES if board.cell(space).strip()) == 36


def test_features_and_traps_are_marked() -> None:
    text = render_text(normal_view(), [built_in_circuit("kaldheira")])
    board = Board(text)
    for space in ("E5", "F6", "B8", "C9", "A11", "D12"):
        assert "~" in board.cell(space), space
    for space in ("C5", "A7", "F10"):
        assert "+" in board.cell(space), space
    assert board.trapped("B2") and board.trapped("E3")
    assert not board.trapped("C3") and not board.trapped("D2")
    assert "lava" in text and "bonus card" in text and "trap" in text


def test_ramps_show_their_direction() -> None:
    board = Board(render_text({"titans": {}}, [built_in_circuit("moltenchest")]))
    assert board.cell("A3").strip() == "//"  # super-ramp R
    assert board.cell("F8").strip() == "\\\\"  # super-ramp L
    assert board.cell("C7").strip() == "^^"  # multi-ramps
    assert board.cell("E11").strip() == "^^"


@pytest.mark.parametrize("name", ["dead-mans-lagoon", "ban-kog", "anglieh", "estenggaard"])
def test_each_feature_kind_has_its_glyph(name: str) -> None:
    circuit = built_in_circuit(name)
    board = Board(render_text({"titans": {}}, [circuit]))
    glyph = {"pirates": "$", "fire_statue": "!", "pentacle": "@", "ice": "*", "bonus": "+"}
    for space, kind in circuit.features.items():
        assert board.cell(space).strip() == glyph[kind] * 2, (space, kind)
    assert circuit.title in render_text({"titans": {}}, [circuit])


def test_titan_table_and_status() -> None:
    text = render_text(normal_view(), [built_in_circuit("kaldheira")])
    grinder = line_with(text, "Grinder   ")
    assert "C3" in grinder and "♥♥♥♥♥♥ 6" in grinder and "Tribal Trap, Speed Potion" in grinder
    assert grinder.lstrip().startswith(">")  # whose decision it is
    rassik = line_with(text, "Rassik")
    assert "F10" in rassik and " 2 " in rassik and "1 card" in rassik and "used" in rassik
    craken = line_with(text, "Craken")
    assert "KO" in craken and "0 cards" in craken
    assert "not started" in line_with(text, "Chtoolhoo")
    status = line_with(text, "Round 4")
    assert "[red] [blue] [purple]" in status and "supply: 13" in status
    assert "B2, E3" in line_with(text, "Traps on the board")
    assert "play a turn" in line_with(text, "Waiting for")
    assert "Grinder" in line_with(text, "Waiting for")
    assert "move S" in text and "opt7" in text and "opt8" not in text  # 12 options shown
    assert "and 3 more" in text


def test_titans_are_listed_in_view_order() -> None:
    text = render_text(normal_view(), [built_in_circuit("kaldheira")])
    order = [text.index(f"{abbr} {name}") for abbr, name in [("Gr", "Grinder"), ("Ra", "Rassik")]]
    order += [text.index("Cr Craken"), text.index("Ch Chtoolhoo")]
    assert order == sorted(order)


def test_options_are_never_split() -> None:
    view = normal_view()
    view["pending"]["options"] = [f"play borrowed-power craken C{n}" for n in range(12)]
    for width in (60, 80, 100):
        text = render_text(view, [built_in_circuit("kaldheira")], width=width)
        for n in range(12):
            assert f"play borrowed-power craken C{n}" in text
        assert all(len(line) <= width for line in text.splitlines())


def test_first_round_everyone_waiting_and_no_pending() -> None:
    view = {
        "round": 1,
        "first_round": True,
        "titans": {name: titan(None) for name in ("grinder", "rassik", "craken")},
        "traps": [],
        "trap_supply": 15,
        "dice": [],
        "pending": None,
        "winner": None,
        "winners": [],
    }
    text = render_text(view, [built_in_circuit("anglieh")])
    assert text.count("not started") == 3
    assert "Nothing pending" in text and "first round" in text
    assert "Ang'lieh" in text


def test_winner_and_odd_values_do_not_crash() -> None:
    view: dict[str, Any] = {
        "round": 12,
        "titans": {
            "grinder": titan("b2", lap=4, hand=5),  # lower-case space, a count hand
            "slaugg": titan("A1", lap=0, life=None, hand=None, ability_used=None),
            "nobody": {"space": "Z9", "lap": "x"},  # unknown Titan, not a space
        },
        "traps": ["B2", "9:C3", "nonsense", 7],
        "dice": "red",
        "pending": None,
        "winner": "grinder",
        "winners": ["grinder", "slaugg"],
    }
    text = render_text(view, [built_in_circuit("kaldheira")])
    board = Board(text)
    assert board.titan_at("B2") == "Gr" and board.titan_at("A1") == "Sl"
    assert "Winner" in text and "WINS" in line_with(text, "Gr Grinder")
    assert "with Slaugg" in text
    assert "5 cards" in text and "Z9" in text


def test_plain_text_has_no_escape_codes_but_the_renderable_has_colours() -> None:
    circuits = [built_in_circuit("kaldheira")]
    assert "\x1b" not in render_text(normal_view(), circuits)
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=True, color_system="truecolor")
    console.print(render_board(normal_view(), circuits))
    assert "\x1b[" in out.getvalue()


@pytest.mark.parametrize("width", [100, 80, 60, 40])
def test_fits_the_width(width: int) -> None:
    text = render_text(normal_view(), [built_in_circuit("kaldheira")], width=width)
    assert Board(text).titan_at("C3") == "Gr"
    assert all(len(line) <= width for line in text.splitlines())


# --- Grand Slam -----------------------------------------------------------------------------------


def test_grand_slam_boards_side_by_side() -> None:
    text = render_text(grand_slam_view(), grand_slam(), width=100)
    board = Board(text)
    assert board.boards == 3
    assert "0: Kaldheira" in text
    assert "1: Dead Man's Lagoon" in text
    assert "2: Moltenchest" in text
    assert all(len(line) <= 100 for line in text.splitlines())
    # A Titan is on board (lap - 1) mod 3.
    assert board.titan_at("D6", board=1) == "Sl"
    assert board.titan_at("D6", board=0).strip() != "Sl"
    assert board.titan_at("C3", board=0) == "Gr"
    assert board.titan_at("A11", board=2) == "Rg"
    # Traps carry their board before the colon.
    assert board.trapped("C5", board=1)
    assert not board.trapped("C5", board=0) and not board.trapped("C5", board=2)
    assert board.trapped("B2", board=0) and board.trapped("F8", board=2)
    # Each board shows its own circuit.
    assert board.cell("C9", board=0).strip() == "~~"
    assert board.cell("C9", board=1).strip() == "$$"
    assert board.cell("A3", board=2).strip() == "//"
    for space in ALL_SPACES:
        for index in range(3):
            assert board.cell(space, board=index).strip(), (space, index)


def test_grand_slam_table_names_the_board() -> None:
    text = render_text(grand_slam_view(), grand_slam())
    assert "1:D6" in line_with(text, "Slaugg")
    assert "0:C3" in line_with(text, "Grinder")
    assert "2:A11" in line_with(text, "Ragnarok")
    assert "1:C5" in line_with(text, "Traps on the board")
    assert "react" in line_with(text, "Waiting for") and "play last-shield" in text


def test_grand_slam_stacks_boards_when_narrow() -> None:
    text = render_text(grand_slam_view(), grand_slam(), width=60)
    assert text.count(HEADER) == 6  # letters above and below each of the three boards
    assert all(len(line) <= 60 for line in text.splitlines())
    lines = text.splitlines()
    second = [i for i, line in enumerate(lines) if HEADER in line][2]
    board = Board("\n".join(lines[second:]))
    assert board.titan_at("D6") == "Sl" and board.trapped("C5")


def test_grand_slam_laps_wrap_around_the_three_boards() -> None:
    view = grand_slam_view()
    view["titans"] = {"craken": titan("E1", lap=4), "rassik": titan("B12", lap=0)}
    board = Board(render_text(view, grand_slam()))
    assert board.titan_at("E1", board=0) == "Cr"
    assert board.titan_at("B12", board=2) == "Ra"


# --- the language -------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "pl"])
@pytest.mark.parametrize("game", ["normal", "grand slam"])
def test_fits_80_columns_in_each_language(lang: str, game: str) -> None:
    view, circuits = ((normal_view(), [built_in_circuit("kaldheira")]) if game == "normal"
                      else (grand_slam_view(), grand_slam()))
    view["titans"]["grinder"].update(ko=True, life=0)  # the longest Life cell
    text = render_text(view, circuits, width=80, lang=lang)
    assert all(len(line) <= 80 for line in text.splitlines())
    heading = next(line for line in text.splitlines() if "Ragnarok" in line or "Rassik" in line)
    assert heading.rstrip().endswith(("karta", "kart", "card", "cards", "Ognia"))  # hand shown


def test_the_board_speaks_polish() -> None:
    text = render_text(normal_view(), [built_in_circuit("kaldheira")], lang="pl")
    board = Board(text)
    assert board.titan_at("C3") == "Ma" and board.titan_at("E5") == "Kr"  # Masakrator, Kraken
    for words in ("Masakrator", "Kraken", "pułapka", "lawa (-1 życie)", "tytan (zob. niżej)",
                  "Tytan", "Pole", "Życie", "Zdolność", "Ręka", "przed startem", "Runda 4",
                  "Kości: [czerwona] [niebieska] [fioletowa]", "Pułapki na planszy",
                  "Czekamy na", "Plemienna Pułapka", "i jeszcze 3"):
        assert words in text, words
    for english in ("Grinder", "Life", "Traps", "Round", "Dice", "waiting", "Hand", "ready"):
        assert english not in text, english


def test_a_language_without_a_catalogue_is_english() -> None:
    view, circuits = normal_view(), [built_in_circuit("kaldheira")]
    assert render_text(view, circuits, lang="xx") == render_text(view, circuits)
