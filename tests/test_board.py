"""The board picture (app/games/titanrace/picture/): the SVG drawn from a state view, and its PNG
rendering."""

from __future__ import annotations

import struct
import time
import xml.etree.ElementTree as ET
import zlib
from typing import Any

import pytest

from app.games.titanrace.describe import titan_name
from app.games.titanrace.engine import BUILT_IN, built_in_circuit, new_game, run_scenario
from app.games.titanrace.engine.circuits import SUPER_RAMP, Circuit
from app.games.titanrace.engine.geometry import ALL_SPACES
from app.games.titanrace.picture import board_png, board_svg, cell_centre, panel_facts
from app.games.titanrace.picture.layout import words_in
from app.games.titanrace.picture.panel import legend_entries

NS = {"svg": "http://www.w3.org/2000/svg"}
SVG = "{http://www.w3.org/2000/svg}"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
GRAND_SLAM = ["kaldheira", "dead-mans-lagoon", "moltenchest"]


def scenario(data: dict[str, Any]) -> dict[str, Any]:
    code, view = run_scenario(data)
    assert code == 0, view
    return view


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def texts(root: ET.Element) -> list[str]:
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text")]


def circuits(*names: str) -> list[Circuit]:
    return [built_in_circuit(name) for name in names]


def tokens(root: ET.Element) -> dict[str, ET.Element]:
    """The Titans drawn on the board(s) (not the panel's table), by Titan."""
    found = {}
    for group in root.iter(f"{SVG}g"):
        if "titan" in (group.get("class") or "").split():
            found[group.get("data-titan") or ""] = group
    return found


def token_centre(group: ET.Element) -> tuple[float, float]:
    circle = next(c for c in group.iter(f"{SVG}circle") if c.get("class") == "token")
    return float(circle.get("cx") or "nan"), float(circle.get("cy") or "nan")


def top_of(root: ET.Element) -> float:
    return float(root.get("data-board-top") or "nan")


def mid_game() -> dict[str, Any]:
    return scenario(
        {
            "circuit": "kaldheira",
            "titans": [
                {"titan": "grinder", "space": "C3", "life": 4, "hand": ["leap"]},
                {"titan": "rassik", "space": "F10", "lap": 2, "life": 2},
                {"titan": "craken", "space": "A7", "hand": ["dispel", "quake"]},
                {"titan": "slaugg", "space": "D12", "lap": 1, "life": 6},
            ],
            "traps": ["B2", "E7"],
            "turn": {"titan": "grinder", "die": "red"},
        }
    )


def grand_slam_view() -> dict[str, Any]:
    return scenario(
        {
            "circuit": GRAND_SLAM,
            "variant": "grand-slam",
            "titans": [
                {"titan": "grinder", "space": "C3", "lap": 1},
                {"titan": "rassik", "space": "D6", "lap": 2},
                {"titan": "craken", "space": "B10", "lap": 3},
                {"titan": "slaugg", "space": "C3", "lap": 2},
            ],
            "traps": ["0:B2", "1:C5", "2:F6"],
        }
    )


# --- the SVG document --------------------------------------------------------------------------


def test_new_game_svg_is_valid_xml_with_size_and_title() -> None:
    race = new_game(["grinder", "craken", "slaugg"], circuits=["kaldheira"], seed=7)
    svg = board_svg(race.view(), circuits("kaldheira"))
    root = parse(svg)
    width, height = int(root.get("width") or 0), int(root.get("height") or 0)
    assert 500 <= width <= 700 and 350 <= height <= 700
    assert root.get("viewBox") == f"0 0 {width} {height}"
    title = root.find("svg:title", NS)
    assert title is not None and "Kaldheira" in (title.text or "")
    assert "sans-serif" in (root.get("font-family") or "")
    # Self-contained: no external references, no <image>, no stylesheet imports.
    assert "href" not in svg and "<image" not in svg and "@import" not in svg and "url(" not in svg
    assert "round 1" in texts(root)


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_space_is_named_and_drawn_once(name: str) -> None:
    root = parse(board_svg(mid_game(), circuits(name)))
    labels = texts(root)
    for space in ALL_SPACES:
        assert space in labels, space
    cells = [g.get("data-space") for g in root.iter(f"{SVG}g") if g.get("class") == "cell"]
    assert sorted(cells) == sorted(ALL_SPACES)


def test_titans_stand_on_the_centre_of_their_space() -> None:
    view = mid_game()
    root = parse(board_svg(view, circuits("kaldheira")))
    drawn = tokens(root)
    assert set(drawn) == {"grinder", "rassik", "craken", "slaugg"}
    labels = {"grinder": "Gr", "rassik": "Ra", "craken": "Cr", "slaugg": "Sl"}
    for titan, group in drawn.items():
        space = view["titans"][titan]["space"]
        assert group.get("data-space") == space
        assert token_centre(group) == pytest.approx(cell_centre(space, top=top_of(root)), abs=0.11)
        assert labels[titan] in texts(group)
        lap = next(g for g in group.iter(f"{SVG}g") if g.get("class") == "lap")
        assert lap.get("data-lap") == str(view["titans"][titan]["lap"])
    # The Titan to act is ringed, and only that one.
    ringed = [t for t, g in drawn.items() if any(c.get("class") == "pending" for c in g.iter())]
    assert ringed == ["grinder"]
    # Colours follow the Titan's colour.
    fill = next(c for c in drawn["grinder"].iter(f"{SVG}circle") if c.get("class") == "token")
    assert fill.get("fill") == "#d62828"


def test_cells_interleave_with_row_12_on_top() -> None:
    x_a1, y_a1 = cell_centre("A1")
    x_b2, y_b2 = cell_centre("B2")
    x_a3, y_a3 = cell_centre("A3")
    _, y_b12 = cell_centre("B12")
    assert x_b2 > x_a1 and y_b2 < y_a1  # B2 is up and to the right of A1
    assert x_a3 == x_a1 and y_a3 < y_b2 < y_a1  # A3 straight above A1, B2 half way
    assert y_b12 < y_a3


@pytest.mark.parametrize("name", BUILT_IN)
def test_features_and_traps_are_drawn_for_every_circuit(name: str) -> None:
    circuit = built_in_circuit(name)
    free = [s for s in ALL_SPACES if s not in circuit.features and s not in ("A1", "C1", "E1")]
    trap_spaces = free[:3]
    view = scenario(
        {
            "circuit": name,
            "titans": [
                {"titan": "grinder", "space": trap_spaces[0]},
                {"titan": "craken", "space": "A1"},
                {"titan": "slaugg", "space": "E1"},
            ],
            "traps": trap_spaces[1:],
        }
    )
    root = parse(board_svg(view, [circuit]))
    features = {
        g.get("data-space"): g.get("data-feature")
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "cell" and g.get("data-feature")
    }
    assert features == circuit.features
    ramps = {
        g.get("data-space"): g.get("data-ramp")
        for g in root.iter(f"{SVG}g")
        if g.get("data-feature") == SUPER_RAMP
    }
    assert ramps == circuit.super_ramps
    traps = sorted(
        g.get("data-space") or "" for g in root.iter(f"{SVG}g") if g.get("class") == "trap"
    )
    assert traps == sorted(view["traps"])
    assert view["traps"]  # the trap under Grinder was sprung at setup or is still there
    legend = " ".join(texts(root))
    assert "trap" in legend


def test_super_ramp_letters_show_their_direction() -> None:
    root = parse(board_svg(mid_game(), circuits("moltenchest")))
    cells = {g.get("data-space"): g for g in root.iter(f"{SVG}g") if g.get("class") == "cell"}
    assert "R" in texts(cells["A3"]) and "L" in texts(cells["F8"])


# --- Grand Slam, KO, winner, highlight, language -------------------------------------------------


def test_grand_slam_draws_three_boards_and_titans_on_their_lap_board() -> None:
    view = grand_slam_view()
    root = parse(board_svg(view, circuits(*GRAND_SLAM)))
    boards = [g for g in root.iter(f"{SVG}g") if g.get("class") == "board"]
    assert [b.get("data-board") for b in boards] == ["0", "1", "2"]
    labels = texts(root)
    assert "board 0: Kaldheira" in labels
    assert "board 1: Dead Man's Lagoon" in labels
    assert "board 2: Moltenchest" in labels
    for board in boards:
        assert sum(1 for g in board.iter(f"{SVG}g") if g.get("class") == "cell") == 36
    drawn = tokens(root)
    top = top_of(root)
    expected = {"grinder": 0, "rassik": 1, "craken": 2, "slaugg": 1}
    for titan, board in expected.items():
        group = drawn[titan]
        space = view["titans"][titan]["space"]
        assert group.get("data-board") == str(board)
        assert token_centre(group) == pytest.approx(cell_centre(space, board, 3, top=top), abs=0.11)
    # Grinder (lap 1) and Slaugg (lap 2) both stand on C3, on different boards.
    assert token_centre(drawn["grinder"]) != token_centre(drawn["slaugg"])
    traps = sorted(
        f"{g.get('data-board')}:{g.get('data-space')}"
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "trap"
    )
    assert traps == sorted(view["traps"])
    assert "1:D6" in labels  # the panel gives board:space
    assert int(root.get("width") or 0) > 3 * 300


def test_ko_titan_is_greyed_and_crossed() -> None:
    view = scenario(
        {
            "circuit": "ban-kog",
            "titans": [
                {"titan": "grinder", "space": "C3"},
                {"titan": "chtoolhoo", "space": "D8", "life": 0, "ko": True},
                {"titan": "craken", "space": "E1"},
            ],
        }
    )
    root = parse(board_svg(view, circuits("ban-kog")))
    group = tokens(root)["chtoolhoo"]
    assert "ko" in (group.get("class") or "").split()
    circle = next(c for c in group.iter(f"{SVG}circle") if c.get("class") == "token")
    assert circle.get("fill") != "#7b2cbf"
    assert len(list(group.iter(f"{SVG}line"))) == 2  # the cross
    assert "KO" in texts(root)
    assert "ko" not in (tokens(root)["grinder"].get("class") or "").split()


def test_winner_banner() -> None:
    view = scenario(
        {
            "circuit": "kaldheira",
            "titans": [
                {"titan": "grinder", "space": "B12", "lap": 3},
                {"titan": "rassik", "space": "C3"},
                {"titan": "craken", "space": "E1"},
            ],
            "turn": {"titan": "grinder", "die": "blue"},
            "inputs": ["move SS"],
        }
    )
    assert view["winner"] == "grinder"
    root = parse(board_svg(view, circuits("kaldheira")))
    banner = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "winner")
    assert banner.get("data-winner") == "grinder"
    assert "winner: Grinder" in texts(banner)
    drawn = tokens(root)
    assert token_centre(drawn["grinder"]) == pytest.approx(
        cell_centre(view["titans"]["grinder"]["space"], top=top_of(root)), abs=0.11
    )
    assert top_of(root) > 40  # the banner pushed the board down
    assert not any(c.get("class") == "pending" for c in root.iter(f"{SVG}circle"))
    pl = parse(board_svg(view, circuits("kaldheira"), lang="pl", title="Gra 7"))
    assert "zwycięzca: Masakrator" in texts(pl)  # the name the Polish text gives Grinder
    assert "Gra 7" in (pl.findtext("svg:title", namespaces=NS) or "")


def test_the_polish_picture_names_each_titan_as_the_text_does() -> None:
    """One name per Titan in picture and text: the Polish board says Masakrator and Kraken,
    as the Polish pages and mails do (issue 23), in its table and its accessible title."""
    view = mid_game()
    for lang in ("pl", "en"):
        root = parse(board_svg(view, circuits("kaldheira"), lang=lang))
        shown = texts(root)
        title = root.findtext("svg:title", namespaces=NS) or ""
        for titan in ("grinder", "rassik", "craken", "slaugg"):
            assert titan_name(titan, lang) in shown, (lang, titan)
            assert titan_name(titan, lang) in title, (lang, titan)
        if lang == "pl":
            assert not {"Grinder", "Craken"} & set(shown) and "Craken" not in title


def test_highlight_outlines_the_given_spaces() -> None:
    root = parse(board_svg(mid_game(), circuits("kaldheira"), highlight=["b2", "D2", "X9", "D4"]))
    outlined = sorted(
        p.get("data-space") or ""
        for p in root.iter(f"{SVG}polygon")
        if p.get("class") == "highlight"
    )
    assert outlined == ["B2", "D2", "D4"]
    assert not any(
        p.get("class") == "highlight"
        for p in parse(board_svg(mid_game(), circuits("kaldheira"))).iter(f"{SVG}polygon")
    )
    gs = parse(board_svg(grand_slam_view(), circuits(*GRAND_SLAM), highlight=["1:C5", "E3"]))
    outlined = sorted(
        f"{p.get('data-board')}:{p.get('data-space')}"
        for p in gs.iter(f"{SVG}polygon")
        if p.get("class") == "highlight"
    )
    assert outlined == ["0:E3", "1:C5", "1:E3", "2:E3"]


def test_panel_lists_titans_life_lap_hand_and_dice() -> None:
    view = mid_game()
    root = parse(board_svg(view, circuits("kaldheira")))
    rows = {g.get("data-titan"): g for g in root.iter(f"{SVG}g") if g.get("class") == "titan-row"}
    assert list(rows) == list(view["titans"])
    for titan, row in rows.items():
        info = view["titans"][titan]
        assert titan.capitalize() in texts(row)
        life = next(g for g in row.iter(f"{SVG}g") if g.get("class") == "life")
        assert life.get("data-life") == str(info["life"])
        lap = next(g for g in row.iter(f"{SVG}g") if g.get("class") == "lap-count")
        assert lap.get("data-lap") == str(info["lap"])
        hand = next(g for g in row.iter(f"{SVG}g") if g.get("class") == "hand")
        assert hand.get("data-cards") == str(len(info["hand"]))
    dice = [g.get("data-colour") for g in root.iter(f"{SVG}g") if g.get("class") == "die"]
    assert dice == view["dice"] and dice
    labels = texts(root)
    for word in ("round 2", "dice", "life", "lap", "cards"):
        assert word in labels, word


def test_polish_labels() -> None:
    root = parse(board_svg(grand_slam_view(), circuits(*GRAND_SLAM), lang="pl"))
    labels = texts(root)
    for word in (
        "runda 2",
        "kości",
        "życie",
        "okrążenie",
        "karty",
        "plansza 1: Dead Man's Lagoon",
    ):
        assert word in labels, word
    assert root.get("lang") == "pl"


def test_other_players_view_and_odd_input_still_render() -> None:
    race = new_game(["grinder", "craken", "slaugg", "rassik"], circuits=["anglieh"], seed=3)
    root = parse(board_svg(race.view(seat=1), circuits("anglieh")))
    hands = [g.get("data-cards") for g in root.iter(f"{SVG}g") if g.get("class") == "hand"]
    assert hands == ["1", "1", "1", "1"]
    assert "Craken not started" in (root.findtext("svg:title", namespaces=NS) or "")
    assert not tokens(root)
    parse(board_svg({}, circuits("kaldheira")))
    parse(board_svg({"titans": {"grinder": {"space": "Z9", "lap": "x"}}, "traps": [3, "9:B2"]}, []))
    inline = Circuit(name="<b>&'\"", features={})
    odd = parse(board_svg(mid_game(), [inline], title="a < b"))
    assert "<b>&'\"" in texts(odd) and "a < b" in texts(odd)


def test_board_svg_is_fast() -> None:
    view, boards = grand_slam_view(), circuits(*GRAND_SLAM)
    board_svg(view, boards)
    start = time.perf_counter()
    for _ in range(20):
        board_svg(view, boards)
    assert (time.perf_counter() - start) / 20 < 0.05  # ~1 ms for one board, ~3 ms for three


# --- PNG -----------------------------------------------------------------------------------------


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def png_pixels(data: bytes) -> bytes:
    """The raw (still filtered) scanlines: enough to tell two renders apart."""
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        if kind == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    return zlib.decompress(b"".join(chunks))


def test_board_png_has_the_asked_width() -> None:
    pytest.importorskip("resvg_py")
    svg = board_svg(mid_game(), circuits("kaldheira"))
    root = parse(svg)
    data = board_png(svg)
    width, height = png_size(data)
    assert width == 600
    ratio = int(root.get("height") or 0) / int(root.get("width") or 1)
    assert height == pytest.approx(600 * ratio, abs=2)
    wide = board_png(board_svg(grand_slam_view(), circuits(*GRAND_SLAM)), width=900)
    assert png_size(wide)[0] == 900


def test_board_png_renders_text() -> None:
    pytest.importorskip("resvg_py")
    head = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="80" height="30" viewBox="0 0 80 30" '
        'font-family="\'DejaVu Sans\', sans-serif"><rect width="80" height="30" fill="#fff"/>'
    )
    blank = board_png(head + "</svg>", width=80)
    written = board_png(head + '<text x="4" y="20" font-size="16">Ab żC</text></svg>', width=80)
    assert png_pixels(blank) != png_pixels(written), "no font: text is not drawn"


def crop_of(root: ET.Element) -> dict[str, int]:
    """The picture's size and its boards' part, as its root's style gives them to a page."""
    return {name.strip(): int(value) for name, value in
            (part.split(":") for part in (root.get("style") or "").split(";") if part)}


@pytest.mark.parametrize("names", [["kaldheira"], GRAND_SLAM])
def test_a_narrow_page_can_show_the_boards_without_the_panel(names: list[str]) -> None:
    """The panel is one group of class side-panel, wholly outside the boards' part the root's
    style names (a narrow page hides the panel and shows that part only); the Titans inside."""
    view = mid_game() if len(names) == 1 else grand_slam_view()
    root = parse(board_svg(view, circuits(*names)))
    crop = crop_of(root)
    assert (crop["--pic-w"], crop["--pic-h"]) == (int(root.get("width") or 0),
                                                  int(root.get("height") or 0))
    assert crop["--main-w"] <= crop["--pic-w"] and crop["--main-h"] <= crop["--pic-h"]
    (panel,) = [g for g in root.iter(f"{SVG}g") if "side-panel" in (g.get("class") or "").split()]
    assert any(g.get("class") == "legend" for g in panel.iter(f"{SVG}g"))
    assert any(g.get("class") == "titan-row" for g in panel.iter(f"{SVG}g"))
    for text in placed_texts(panel):
        x, y = float(text.get("x") or 0), float(text.get("y") or 0)
        assert x > crop["--main-w"] or y > crop["--main-h"], "".join(text.itertext())
    for group in tokens(root).values():
        x, y = token_centre(group)
        assert x < crop["--main-w"] and y < crop["--main-h"]


@pytest.mark.parametrize("lang", ["en", "pl"])
def test_the_panels_legend_as_html(lang: str) -> None:
    """What the panel shows that the game page does not: its legend, with the traps left."""
    view = mid_game()
    facts = panel_facts(circuits("kaldheira"), view, lang)
    root = ET.fromstring(f"<div>{facts}</div>")  # (well-formed: each icon a closed <svg>)
    shown = "".join(root.itertext())
    assert words_in(lang)["legend"] in shown
    entries = legend_entries(circuits("kaldheira"), view, lang)
    assert len(root.findall(".//li")) == len(entries) > 2
    for _, label in entries:
        assert label in shown
    assert f"({view['trap_supply']})" in shown


def placed_texts(group: ET.Element) -> list[ET.Element]:
    """The texts of ``group`` placed in the picture's own coordinates (not in an icon's, under
    a transform)."""
    found: list[ET.Element] = []

    def walk(node: ET.Element) -> None:
        for child in node:
            if child.get("transform"):
                continue
            if child.tag == f"{SVG}text":
                found.append(child)
            walk(child)

    walk(group)
    assert found
    return found
