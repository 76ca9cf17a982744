"""Owl Dice, the game only the tests register (tests/owldice/; see tests/test_third_game.py),
through the channels that need a server on loopback or a process's commands: the ``titanpost``
player commands against the app served in a thread, its game page in chromium (Playwright),
and the admin's and the engine's commands (``admin new-game``, ``engine demo``, ``engine run``
and ``engine options``) taking it from the registry."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import cli.admin_new_game
import cli.engine  # noqa: F401
from tests.apifixtures import ADMIN_TOKEN
from tests.netutil import serve_in_thread
from tests.test_cli_player import Cli, Server

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.apifixtures", "tests.owldice", "tests.browser"]

ANN, BEN = "ann@example.com", "ben@example.com"


# ---------------------------------------------------------------------- a server on loopback


@pytest.fixture
def owl_server(owl_dice: str, tmp_path: Path) -> Iterator[LiveServer]:
    """The app, built with Owl Dice registered, served over HTTP on 127.0.0.1 in a thread (as
    ``tests/browser.py`` serves it) over a migrated SQLite file."""
    from werkzeug.serving import make_server

    from app import create_app
    from app.core.config import Settings
    from tests.dbutil import migrate

    url = f"sqlite:///{tmp_path / 'owls-live.db'}"
    migrate(url)
    holder: dict[str, Any] = {}

    def dispatch(environ: dict[str, Any], start_response: Any) -> Any:
        return holder["app"](environ, start_response)

    server = make_server("127.0.0.1", 0, dispatch, threaded=True)
    base = f"http://127.0.0.1:{server.port}"
    app = create_app(Settings.from_env({
        "TITANPOST_DATABASE_URL": url, "TITANPOST_ENV": "test", "TITANPOST_BASE_URL": base,
        "TITANPOST_ADMIN_TOKEN": ADMIN_TOKEN}))
    holder["app"] = app
    thread = serve_in_thread(server, "owl-server")  # type: ignore[arg-type]
    try:
        from tests.browser import LiveServer  # (after the plugin is loaded: its asserts rewritten)

        yield LiveServer(base, app)
    finally:
        server.shutdown()
        thread.join(timeout=10)
        app.extensions["titanpost.service"].engine.dispose()


def test_a_whole_game_from_the_command_line(owl_server: LiveServer, tmp_path: Path) -> None:
    """Ann logs in with her invitation link and plays every decision with ``titanpost play``
    (her hoot as ``hoot <n>``), reading the game with ``show``, ``options`` and ``log``."""
    server = Server(owl_server.url, tmp_path / "server.log")
    cli = Cli(tmp_path)
    data = server.call("POST", "/games", game="owl-dice", name="Owl night", seed=5,
                       circuits=["hollow-oak"], seats=[
                           {"email": "ann@example.com", "name": "Ann", "titans": ["ninox"]},
                           {"bot": True}, {"bot": True}])
    link = data["invitations"][0]["link"]
    uid = data["game"]
    assert "Logged in to Owl night" in cli("login", link).stdout
    server.call("POST", f"/games/{uid}/start", creator=data["creator_token"])
    shown = cli("show", uid).stdout
    for words in ("Owl night", "Ninox", "Round 1 of 3", "Ann"):
        assert words in shown, (words, shown)
    played = []
    for _ in range(20):
        options = cli.json("options", uid)
        if not options["yours"]:
            break
        kind = options["pending"]["kind"]
        choice = "hoot 2" if kind == "hoot" else options["options"][0]
        result = cli("play", uid, choice)
        assert "Played" in result.stdout or "sealed" in result.stdout.lower(), result.stdout
        played.append(choice)
    state = cli.json("show", uid)["state"]
    assert state["game"]["status"] == "finished", state["game"]
    assert played.count("hoot 2") == 3 and "roll" in played
    assert "Game over" in cli("show", uid).stdout
    moves = cli.json("log", uid)["moves"]
    assert sum("hoot ninox 2" in m["input"] for m in moves) == 3
    assert "roll" in cli("log", uid).stdout
    assert "Strix wins" in cli("games").stdout or "wins" in cli("games").stdout


# ---------------------------------------------------------------------- a real browser


def test_its_game_page_in_a_browser(owl_server: LiveServer, browser: Any) -> None:
    """Ann and Ben join from their invitation links in chromium and play the whole game with
    the game page's buttons (pointing at each first, as a player would): the page's script
    meets no error, and the board, the owls' table and the hand show. (The suite's one
    browser: a second Playwright in the process is refused.)"""
    service = owl_server.service
    created = service.create_game(
        seats=[{"email": ANN, "name": "Ann"}, {"email": BEN, "name": "Ben"}, {"bot": True}],
        name="Owls in chromium", seed=8, circuits=["hollow-oak"], rules_name="owl-dice")
    uid = created["game"]
    errors: list[str] = []
    contexts = []
    try:
        pages = {}
        for invite in created["invitations"]:
            position = invite["position"]
            context = browser.new_context()
            contexts.append(context)
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{owl_server.url}/join/{invite['invite_token']}")
            with page.expect_navigation():
                page.click("#accept-button")
            pages[position] = page
        service.start(uid, created["creator_token"])
        for _ in range(30):
            state = service.state(uid, None)
            if state["game"]["status"] != "active":
                break
            position = next(p for p in state["game"]["to_act"] if p in pages)
            page = pages[position]
            page.goto(f"{owl_server.url}/games/{uid}")
            assert page.locator("#board svg").count() == 1
            assert page.locator("#owls tr[data-owl]").count() == 3
            buttons = page.locator("#composer button[name=option]")
            options = [str(buttons.nth(i).get_attribute("value"))
                       for i in range(buttons.count())]
            assert options == service.options(uid, position)["options"]
            buttons.first.hover()
            with page.expect_navigation():
                buttons.first.click()
            flash = page.locator(".flash.ok").first.inner_text()
            assert flash.startswith("Sealed: " if options[0].startswith("hoot") else "Done")
        assert service.state(uid, None)["game"]["status"] == "finished"
        final = pages[0]
        final.goto(f"{owl_server.url}/games/{uid}")
        assert final.locator("#hand").count() == 1
        assert final.locator("#log tbody tr").count() > 0
    finally:
        for context in contexts:
            context.close()
    assert errors == []


# ---------------------------------------------------------------------- the admin's commands


def test_admin_new_game_and_engine_demo_take_it(owl_dice: str, tmp_path: Path) -> None:
    """``admin new-game --game owl-dice`` sets a game up (its seat's owl given as the seat's
    piece, computer seats besides, started at once and played out by them), and ``engine
    demo --game owl-dice`` plays one between computer players."""
    from click.testing import CliRunner
    from sqlmodel import select

    from app.core.models import Game
    from cli.main import main
    from tests.apifixtures import base_env, make_service
    from tests.dbutil import migrate

    url = f"sqlite:///{tmp_path / 'owls-admin.db'}"
    migrate(url)
    result = CliRunner().invoke(main, [
        "admin", "new-game", "--game", "owl-dice", "--name", "Admin owls", "--seat",
        "bot", "--bot", "--bot", "--seed", "4", "--start-with-bots", "--json"],
        env=base_env(url), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    uid = json.loads(result.output)["game"]
    service = make_service(url)
    try:
        with service.session() as s:
            game = s.exec(select(Game).where(Game.uid == uid)).one()
            assert (game.ruleset, game.status, game.setup) == (
                "owl-dice", "finished", {"glade": "hollow-oak"})
        assert service.verify(uid) == []
    finally:
        service.engine.dispose()
    refused = CliRunner().invoke(main, ["admin", "new-game", "--game", "owl-dice", "--seat",
                                        "ann@example.org", "--bot", "--start", "alger"],
                                 env=base_env(url))
    assert refused.exit_code != 0 and "Owl Dice takes no start" in refused.output
    demo = CliRunner().invoke(main, ["engine", "demo", "--game", "owl-dice", "--seed", "5",
                                     "--every", "end"], catch_exceptions=False)
    assert demo.exit_code == 0, demo.output
    assert "Owl Dice, seed 5" in demo.output and "won by" in demo.output


def test_engine_run_and_options_read_its_scenario_files(owl_dice: str, tmp_path: Path) -> None:
    """``engine run`` and ``engine options`` find Owl Dice's scenario module by the file's
    game: the state after the inputs, a refused input with the legal ones, the options."""
    from click.testing import CliRunner

    from cli.main import main

    scenario = tmp_path / "owls.json"
    scenario.write_text(json.dumps({"game": "owl-dice", "owls": ["tyto", "ninox"], "seed": 2,
                                    "inputs": ["roll", "hoot tyto 1"]}))
    ran = CliRunner().invoke(main, ["engine", "run", str(scenario), "--view", "1"])
    assert ran.exit_code == 0, ran.output
    view = json.loads(ran.output)
    assert view["phase"] == "hoot" and view["pending"]["options"] == [
        "hoot ninox 1", "hoot ninox 2", "hoot ninox 3"]
    assert view["owls"]["tyto"]["hand"] == 2 and len(view["owls"]["ninox"]["hand"]) == 2
    assert view["owls"]["tyto"]["hooted"] and view["owls"]["tyto"]["hoot"] is None
    options = CliRunner().invoke(main, ["engine", "options", str(scenario)])
    assert options.exit_code == 0 and json.loads(options.output)["kind"] == "hoot"
    scenario.write_text(json.dumps({"game": "owl-dice", "inputs": ["hoot strix 2"]}))
    refused = CliRunner().invoke(main, ["engine", "run", str(scenario)])
    assert refused.exit_code == 2 and json.loads(refused.output)["legal"] == ["roll"]
