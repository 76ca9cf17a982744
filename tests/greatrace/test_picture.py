"""The Great Race board picture (app/games/greatrace/picture.py) and terminal board
(app/games/greatrace/textboard.py), drawn from real engine views and from malformed ones."""

from __future__ import annotations

import io
import re
import struct
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from app.core.pictures import board_png
from app.games.greatrace.describe import card_name, gauge_name
from app.games.greatrace.engine import GreatRace
from app.games.greatrace.engine.board import CITIES, LINES, RISK, SPACES
from app.games.greatrace.engine.pieces import CARDS, CREW_COLOUR
from app.games.greatrace.picture import (
    RISK_FILL,
    WORDS,
    board_svg,
    crew_colour,
    crew_name,
    panel_facts,
    word,
)
from app.games.greatrace.textboard import board_text
from tests.test_board import placed_texts

from .seeded import CREWS, play

SVG = "{http://www.w3.org/2000/svg}"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# --- views from the engine -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def mid_game() -> GreatRace:
    """A drive in the middle of a race (seed 11 since rules version 3 changed the seeded
    races: a race whose crews' rows keep their dashboard cells on one line at 80 columns, and
    whose drive has the options the highlight tests name)."""
    return play(11, 400, stop_at="drive")


@pytest.fixture(scope="module")
def planning_game() -> GreatRace:
    game = play(5, 400, stop_at="plan")
    assert game.state.phase == "planning"
    # one plan in, so that the full view holds a plan the picture must not show
    crew = (game.pending() or {})["crews"][0]
    game.apply(next(o for o in game.options() if o.startswith(f"plan {crew} ")))
    return game


@pytest.fixture(scope="module")
def finished_game() -> GreatRace:
    game = play(1, 3000)
    assert game.is_over
    return game


# --- reading the SVG -----------------------------------------------------------------------------


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def texts(root: ET.Element) -> list[str]:
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text")]


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if cls in (g.get("class") or "").split()]


def title(root: ET.Element) -> str:
    node = root.find(f"{SVG}title")
    assert node is not None
    return node.text or ""


# --- the picture ---------------------------------------------------------------------------------


def test_mid_game_shows_cities_tiles_crews_and_lines(mid_game: GreatRace) -> None:
    view = mid_game.view()
    assert len(view["tiles"]) > 10
    root = parse(board_svg(view))
    words = texts(root)
    for city in CITIES:
        assert city.name in words
    tiles = {
        g.get("data-space"): g.get("data-tile") for g in root.iter(f"{SVG}g") if g.get("data-tile")
    }
    assert tiles == view["tiles"]
    vehicles = {g.get("data-crew"): g.get("data-space") for g in groups(root, "vehicle")}
    cards = {g.get("data-crew") for g in groups(root, "crew")}
    for crew, info in view["crews"].items():
        assert vehicles[crew] == info["space"]
        assert crew in cards
        assert word("en", f"crew.{crew}") in words
    costs = {g.get("data-line"): "".join(g.itertext()) for g in groups(root, "line-cost")}
    assert costs == {f"{line.a}-{line.b}": f"{line.cost}F" for line in LINES}
    assert mid_game.state.start == "alger"
    assert "START" in words and "FINISH" in words
    assert f"turn {view['turn']}" in title(root)


def test_risk_zone_spaces_are_dark(mid_game: GreatRace) -> None:
    view = mid_game.view()
    root = parse(board_svg(view))
    dark = {
        g.get("data-space")
        for g in groups(root, "space")
        if any(p.get("fill") == RISK_FILL for p in g.iter(f"{SVG}polygon"))
    }
    assert dark == RISK
    assert {g.get("data-space") for g in groups(root, "risk")} == RISK
    assert len(groups(root, "space")) + len(groups(root, "city")) == len(SPACES)


def test_highlight_outlines_and_names_the_options(mid_game: GreatRace) -> None:
    view = mid_game.view()
    pending = view["pending"]
    assert pending["kind"] == "drive"
    targets = [o.split()[1] for o in pending["options"] if o.startswith("go ")]
    assert targets
    root = parse(board_svg(view, highlight=[*targets, "nowhere", "z99"]))
    marked = {g.get("data-space"): "".join(g.itertext()) for g in groups(root, "highlight")}
    assert marked == {space: space for space in targets}


def test_the_crew_to_act_is_ringed(mid_game: GreatRace) -> None:
    view = mid_game.view()
    crew = view["pending"]["crew"]
    root = parse(board_svg(view))
    for vehicle in groups(root, "vehicle"):
        rings = [c for c in vehicle.iter(f"{SVG}circle") if c.get("class") == "pending"]
        assert len(rings) == (1 if vehicle.get("data-crew") == crew else 0)


def test_crew_colours_come_from_the_pieces() -> None:
    for crew, colour in CREW_COLOUR.items():
        assert crew_colour(crew) == colour
    assert crew_colour("dutch").startswith("#")


def test_panel_gauges_dashboard_and_track(mid_game: GreatRace) -> None:
    view = mid_game.view()
    root = parse(board_svg(view))
    for card in groups(root, "crew"):
        info = view["crews"][card.get("data-crew")]
        gauges = {g.get("data-gauge"): g.get("data-value") for g in groups(card, "gauge")}
        assert gauges == {k: str(info[k]) for k in ("petrol", "engine", "chassis")}
        (hand,) = groups(card, "hand")
        assert hand.get("data-cards") == str(len(info["hand"]))
        (dashboard,) = groups(card, "assistants")
        assert {b: dashboard.get(f"data-{b.lower()}") for b in "PMSF"} == {
            b: str(info["assistants"][b]) for b in "PMSF"
        }
    tokens = {
        r.get("data-crew"): r.get("data-progress")
        for r in root.iter(f"{SVG}rect")
        if r.get("class") == "track-token"
    }
    assert tokens == {crew: str(info["progress"]) for crew, info in view["crews"].items()}
    (order,) = groups(root, "order")
    assert order.get("data-order") == " ".join(view["order"])


def hand_card_words(view: dict[str, Any]) -> set[str]:
    """Every way a card in someone's hand could be written, minus the public market's cards."""
    market = set(view["market"])
    held = {card for info in view["crews"].values() for card in info["hand"]} - market
    return {
        w for card in held for w in (card, word("en", f"card.{card}"), word("pl", f"card.{card}"))
    }


def test_no_view_shows_a_hand_or_a_plan(planning_game: GreatRace) -> None:
    full = planning_game.view()
    planned = [c for c, info in full["crews"].items() if info["planned"]]
    assert planned and any(info["hand"] for info in full["crews"].values())
    secret = hand_card_words(full)
    assert secret
    for view in (full, planning_game.view(spectator=True), planning_game.view(0)):
        for lang in ("en", "pl"):
            root = parse(board_svg(view, lang=lang))
            shown = " ".join(texts(root)) + title(root)
            assert not [w for w in secret if w in shown]
            assert not groups(root, "assistants")  # during planning, only whether a plan is in
            plans = {
                g.get("data-crew"): groups(g, "plan")[0].get("data-planned")
                for g in groups(root, "crew")
            }
            assert plans == {c: str(c in planned).lower() for c in full["crews"]}


def test_spectator_view_draws(mid_game: GreatRace) -> None:
    view = mid_game.view(spectator=True)
    assert all(isinstance(info["hand"], int) for info in view["crews"].values())
    root = parse(board_svg(view))
    counts = {
        g.get("data-crew"): groups(g, "hand")[0].get("data-cards") for g in groups(root, "crew")
    }
    assert counts == {c: str(info["hand"]) for c, info in view["crews"].items()}


def test_end_of_the_race_has_a_winner_banner_and_scores(finished_game: GreatRace) -> None:
    view = finished_game.view()
    root = parse(board_svg(view))
    (banner,) = groups(root, "winner")
    assert banner.get("data-winner") == view["winner"]
    assert word("en", f"crew.{view['winner']}") in "".join(banner.itertext())
    words = texts(root)
    for crew, score in view["scores"].items():
        assert str(score["total"]) in words
        assert word("en", f"crew.{crew}") in words
    assert "winner" in title(root)


def test_polish_words(mid_game: GreatRace) -> None:
    view = mid_game.view()
    root = parse(board_svg(view, lang="pl"))
    assert root.get("lang") == "pl"
    words = " ".join(texts(root))
    assert f"tura {view['turn']}" in words
    assert all(word("pl", f"crew.{crew}") in words for crew in view["crews"])
    assert "petrol" not in words
    fallback = parse(board_svg(view, lang="xx"))
    assert fallback.get("lang") == "en"


def test_every_word_is_translated_and_cards_are_named_as_elsewhere() -> None:
    """Every word comes from the catalogue (the autouse fixture fails on a missing Polish one),
    every card has its name, and a card is named as the pages and mails name it."""
    assert {key.removeprefix("card.") for key in WORDS if key.startswith("card.")} == set(
        CARDS
    ) | {"topographer"}
    for key in WORDS:
        assert word("pl", key) != word("en", key) or key in {
            "card.transport", "legend.stop", "start", "start.short", "pending.plan", "box.M",
            "box.F"}  # (mechanicy, finanse: the same letters)
    assert word("pl", "card.trail-hunter") == card_name("trail-hunter", "pl")
    assert word("pl", "engine") == gauge_name("E", "pl")
    assert word("xx", "turn") == "turn" and word("pl", "no.such") == "such"


def test_png_renders_at_800_pixels(mid_game: GreatRace) -> None:
    png = board_png(board_svg(mid_game.view(), highlight=["E4"]), 800)
    assert png.startswith(PNG_SIGNATURE)
    width, height = struct.unpack(">II", png[16:24])
    assert width == 800 and 500 < height < 800


# --- malformed views -----------------------------------------------------------------------------

MALFORMED: list[dict[str, Any]] = [
    {},
    {"crews": "french", "tiles": ["E4"], "track": 5, "order": None, "pending": "drive"},
    {
        "turn": "three",
        "phase": 7,
        "start": "paris",
        "crews": {
            "french": {"space": "Z99", "money": "lots", "hand": None, "assistants": [1, 2]},
            "dutch": {"space": "e4", "petrol": 99, "engine": -3, "chassis": True, "seat": "x"},
            "italian": None,
        },
        "tiles": {"E4": "q9", "E5": 5, "ZZ": "p1", "F1": "p1", "D4": "P2D1XS"},
        "track": ["dutch", "ghost", 3],
        "drawn": ["p1", None, "zz"],
        "market": ["guide", 4, "nonsense"],
        "pending": {"kind": "?", "crews": "french", "crew": 3},
        "scores": {"french": "lots", "dutch": {"total": "x"}},
        "winners": ["dutch", None],
        "winner": "french",
        "finishers": "french",
        "bag": "many",
        "deck": None,
        "discard": True,
    },
    {"crews": {f"crew{k}": {"space": "F1"} for k in range(7)}, "phase": "planning"},
]


@pytest.mark.parametrize("view", MALFORMED)
def test_malformed_views_draw(view: dict[str, Any]) -> None:
    for lang in ("en", "pl"):
        parse(board_svg(view, lang=lang, highlight=["", "E4", "x"]))
        render(view)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 200) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELD = st.sampled_from(
    [
        "crews",
        "tiles",
        "track",
        "order",
        "pending",
        "scores",
        "winner",
        "winners",
        "drawn",
        "market",
        "turn",
        "phase",
        "start",
        "finish",
        "bag",
        "deck",
        "finishers",
    ]
)

CREW_FIELD = st.sampled_from(
    [
        "seat",
        "space",
        "money",
        "petrol",
        "engine",
        "chassis",
        "hand",
        "assistants",
        "planned",
        "passed",
        "progress",
        "finished",
        "leader_used",
    ]
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    changes=st.dictionaries(FIELD, JSONISH, max_size=5),
    crew=st.dictionaries(CREW_FIELD, JSONISH, max_size=6),
    highlight=st.lists(st.text(max_size=4), max_size=4),
)
def test_any_field_may_be_garbage(
    mid_game: GreatRace, changes: dict[str, Any], crew: dict[str, Any], highlight: list[str]
) -> None:
    view = mid_game.view(spectator=True)
    view["crews"]["french"].update(crew)
    view.update(changes)
    parse(board_svg(view, highlight=highlight))
    render(view)


# --- the terminal board --------------------------------------------------------------------------


def terminal(width: int = 100) -> Console:
    """A colour terminal ``width`` columns wide that records what is printed (and shows it
    nowhere)."""
    return Console(
        record=True, width=width, color_system="truecolor", force_terminal=True,
        file=io.StringIO()
    )


def render(view: dict[str, Any], lang: str = "en", width: int = 100) -> str:
    console = terminal(width)
    console.print(board_text(view, lang=lang))
    return console.export_text()


def test_text_board_fits_100_columns_and_holds_the_map(mid_game: GreatRace) -> None:
    view = mid_game.view(spectator=True)
    out = render(view)
    lines = out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 100
    assert f"turn {view['turn']}" in out
    assert "ALG" in out and "CAP" in out and "finish" in out
    for crew in view["crews"]:
        assert word("en", f"crew.{crew}") in out
    blank = [s for s in SPACES if s not in view["tiles"] and s not in {c.space for c in CITIES}]
    assert all(space in out for space in blank)
    for line in LINES:
        assert f"{line.cost}F" in out


@pytest.mark.parametrize("lang", ["en", "pl"])
def test_text_board_fits_an_80_column_terminal(
    lang: str, mid_game: GreatRace, planning_game: GreatRace, finished_game: GreatRace
) -> None:
    """At 80 columns nothing wraps or is cut: the map's cells narrow, the crews' gauges become
    numbers, and each crew's line keeps every field after its heading's word."""
    placing = play(2, 400, stop_at="place")
    for game in (mid_game, planning_game, finished_game, placing):
        view = game.view()
        out = render(view, lang, width=80)
        lines = out.splitlines()
        assert max(len(line.rstrip()) for line in lines) <= 80, out
        map_rows = [line for line in lines if re.match(r"\s*\d+ ", line)]
        assert len(map_rows) == 15 and all(len(row.rstrip()) <= 80 for row in map_rows)
        for crew, info in view["crews"].items():
            (row,) = [line for line in lines if line.startswith(word(lang, f"crew.{crew}") + " ")]
            if not info.get("finished") and view["phase"] != "over":
                assert f"{word(lang, 'petrol')}\u00a0{info['petrol']}/10" in out, row
            assert f"{info['money']}F" in row, row
        assert "ALG" in out and "CAP" in out
        assert "\u2026" not in out.replace(word(lang, "planning"), ""), out
    wide = render(mid_game.view(), lang, width=100)
    assert "\u25a0" in wide and max(len(line.rstrip()) for line in wide.splitlines()) <= 100


@pytest.mark.parametrize(("lang", "letters"), [("en", "PMSF"), ("pl", "ZMOF")])
def test_text_board_dashboard_letters_speak_the_language(lang: str, letters: str,
                                                         mid_game: GreatRace) -> None:
    """The dashboard's boxes are lettered in the board's language (Polish: Zwiadowcy,
    Mechanicy, Ochrona, Finanse, docs/glossary-pl.md), at 80 and 100 columns, and in the
    picture's panel too; the engine's notation (``plan french P2 M1``) keeps its letters."""
    view = mid_game.view()
    assert view["phase"] == "convoy"
    for width in (80, 100):
        out = render(view, lang, width=width)
        assert max(len(line.rstrip()) for line in out.splitlines()) <= width, out
        for info in view["crews"].values():
            cells = " ".join(f"{letter}{info['assistants'][box]}"
                             for letter, box in zip(letters, "PMSF", strict=True))
            assert cells in out, (cells, out)
        if width == 100:
            assert " ".join(letters) in out, out
    panel = "".join("".join(g.itertext())
                    for g in groups(parse(board_svg(view, lang=lang)), "assistants"))
    assert panel.startswith(letters[0]) and f"  {letters[2]}" in panel, panel


def test_text_board_planning_and_end(planning_game: GreatRace, finished_game: GreatRace) -> None:
    full = planning_game.view()
    out = render(full)
    assert "planned" in out and "planning" in out
    assert not [w for w in hand_card_words(full) if w in out]
    end = finished_game.view()
    out = render(end, lang="pl")
    assert "zwycięzca" in out and word("pl", f"crew.{end['winner']}") in out
    for score in end["scores"].values():
        assert str(score["total"]) in out


def test_start_and_finish_follow_the_view() -> None:
    game = GreatRace.new(["french", "english"], start="le-cap", seed=2)
    root = parse(board_svg(game.view()))
    tags = {g.get("data-city"): "".join(g.itertext()) for g in groups(root, "city")}
    assert tags["le-cap"].endswith("START") and tags["alger"].endswith("FINISH")
    vehicles = {g.get("data-crew"): g.get("data-space") for g in groups(root, "vehicle")}
    assert vehicles == {"french": "F15", "english": "F15"}


def test_market_and_drawn_tiles_are_shown() -> None:
    bivouac = GreatRace.new(CREWS, seed=4).view()
    assert bivouac["pending"]["kind"] == "take" and bivouac["market"]
    root = parse(board_svg(bivouac))
    (market,) = groups(root, "market")
    for card in bivouac["market"]:
        assert word("en", f"card.{card}") in "".join(market.itertext())
        assert word("en", f"card.{card}") in render(bivouac)
    placing = play(2, 400, stop_at="place").view()
    assert placing["pending"]["kind"] == "place" and placing["drawn"]
    drawn = [g.get("data-tile") for g in groups(parse(board_svg(placing)), "drawn-tile")]
    assert drawn == placing["drawn"]


def test_text_board_highlights() -> None:
    game = play(2, 400, stop_at="place")
    view = game.view()
    spaces = sorted({o.split()[-1] for o in view["pending"]["options"] if o.startswith("place ")})
    pink = "background-color: #d70087"  # rich's deep_pink3, the highlight's background
    marked = render_html(view, spaces)
    assert all(f'{pink}; font-weight: bold">{space.center(6)}<' in marked for space in spaces)
    assert pink not in render_html(view, [])


def render_html(view: dict[str, Any], highlight: list[str]) -> str:
    console = terminal()
    console.print(board_text(view, highlight=highlight))
    return console.export_html(inline_styles=True)


def test_a_narrow_page_can_show_the_map_without_the_panel(mid_game: GreatRace) -> None:
    """The panel is one group of class side-panel, right of the map's part the root's style
    names (a narrow page hides the panel and shows that part only)."""
    root = parse(board_svg(mid_game.view()))
    crop = {name: int(value) for name, value in
            (part.split(":") for part in (root.get("style") or "").split(";") if part)}
    assert (crop["--pic-w"], crop["--pic-h"]) == (int(root.get("width") or 0),
                                                  int(root.get("height") or 0))
    (panel,) = groups(root, "side-panel")
    assert groups(panel, "crew") and groups(panel, "legend")
    for text in placed_texts(panel):
        assert float(text.get("x") or 0) > crop["--main-w"], "".join(text.itertext())
    assert crop["--main-h"] <= crop["--pic-h"]


@pytest.mark.parametrize("lang", ["en", "pl"])
def test_the_panels_facts_as_html(mid_game: GreatRace, lang: str) -> None:
    """What the panel shows that the game page does not: the order, each crew's progress, the
    discard pile and the legend, in the page's language."""
    view = mid_game.view()
    root = ET.fromstring(f"<div>{panel_facts(view, lang)}</div>")
    shown = "".join(root.itertext())
    for key in ("order", "track", "legend", "legend.risk", "legend.air"):
        assert word(lang, key) in shown, key
    for crew, info in view["crews"].items():
        assert f"{crew_name(lang, crew)} {info['progress']}" in shown
    assert " \u203a ".join(crew_name(lang, crew) for crew in view["order"]) in shown
