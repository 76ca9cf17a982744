"""The Great Race from the command line, against a real server on loopback (SQLite and
PostgreSQL): a player logs in with the invitation link and plays a whole race against a computer
seat with ``titanpost play``; a sealed plan waits for the others and is never shown to them; the
other crew's hand never reaches ``show``; ``titanpost admin`` creates and replays a Great Race.

The player's answers are the computer player's strategy applied to what the player sees (their
own view, options and the public log), so that the race ends in a few dozen inputs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from app.core.config import Settings
from app.games.greatrace.engine.bot import DECIDERS, Sight
from app.games.ui import game_ui
from app.listeners import build_service
from app.service import GameService
from cli.main import main
from tests.apifixtures import ADMIN_TOKEN
from tests.dbutil import fresh_database
from tests.netutil import free_port
from tests.test_cli_player import Cli, Server, _wait_until_up

MAX_INPUTS = 400
UI = game_ui("great-race")


@dataclass
class Site:
    """The server, its database and the service on it (for the full views only an admin
    sees)."""

    server: Server
    database_url: str

    @property
    def env(self) -> dict[str, str | None]:
        unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("TITANPOST_")}
        return unset | {"TITANPOST_DATABASE_URL": self.database_url, "TITANPOST_ENV": "test",
                        "TITANPOST_BASE_URL": self.server.url, "COLUMNS": "120",
                        "NO_COLOR": "1"}

    def service(self) -> GameService:
        return build_service(Settings.from_env({
            "TITANPOST_DATABASE_URL": self.database_url, "TITANPOST_ENV": "test",
            "TITANPOST_BASE_URL": self.server.url}))

    def admin(self, *args: str, code: int = 0) -> Result:
        result = CliRunner().invoke(main, ["admin", *args], env=self.env)
        assert result.exit_code == code, (args, result.output)
        return result

    def create(self, *seats: dict[str, Any], name: str, seed: int = 7,
               **body: Any) -> dict[str, Any]:
        return self.server.call("POST", "/games", seats=list(seats), name=name, seed=seed,
                                game="great-race", **body)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def site(request: pytest.FixtureRequest, titanpost: str,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp(f"great-race-cli-{request.param}")
    with fresh_database(request.param, folder) as database_url:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TITANPOST_")}
        env |= {"TITANPOST_DATABASE_URL": database_url, "TITANPOST_ENV": "test",
                "TITANPOST_BASE_URL": url,
                "TITANPOST_ADMIN_TOKEN": ADMIN_TOKEN}
        log = folder / "server.log"
        with log.open("w") as out:
            process = subprocess.Popen(
                [titanpost, "serve", "--port", str(port), "--no-scheduler"],
                env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            _wait_until_up(url, process, log)
            yield Site(Server(url, log), database_url)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "ann")


def address() -> str:
    return f"{uuid.uuid4().hex[:10]}@example.com"


def computer_answer(crew: str, state: dict[str, Any], options: list[str],
                    log: list[dict[str, Any]]) -> str:
    """What the computer would answer in the player's place, from what the player sees."""
    if len(options) == 1:
        return options[0]
    inputs = [part.strip() for move in log if move.get("kind") == "move"
              for part in str(move.get("input") or "").split(";") if part.strip()]
    view = state["view"]
    answer = DECIDERS[view["pending"]["kind"]](Sight(crew, view, options, inputs))
    return answer if answer in options else options[-1]


def hidden_cards(service: GameService, uid: str, seq: int, crew: str) -> set[str]:
    """The cards in the other crews' hands after move ``seq`` that ``crew`` cannot see
    anywhere (not in its own hand, not face up in the market)."""
    full = service.state_at(uid, seq)["view"]
    crews = full["crews"]
    seen = set(crews[crew]["hand"]) | set(full.get("market") or [])
    return {card for name, info in crews.items() if name != crew
            for card in info["hand"] if card not in seen}


def test_a_whole_race_from_the_command_line(site: Site, cli: Cli) -> None:
    created = site.create({"email": address(), "name": "Ann"}, {"bot": True}, name="Sahara",
                          seed=5, circuits=["le-cap"])
    link = created["invitations"][0]["link"]
    login = cli("login", link, "--name", "Annie")
    assert "Logged in to Sahara" in login.stdout  # its crew is drawn when the race starts
    site.server.call("POST", f"/games/{created['game']}/start",
                     creator=created["creator_token"])
    uid = created["game"]
    listing = cli("games").stdout
    assert uid[:8] in listing and "Sahara" in listing and "racing" in listing

    service = site.service()
    crew = cli.json("show", uid)["state"]["game"]["seats"][0]["titans"][0]
    kinds: set[str] = set()
    shown_plans = 0
    for step in range(MAX_INPUTS):
        state = cli.json("show", uid)["state"]
        if state["game"]["status"] != "active":
            break
        options = cli.json("options", uid)
        assert options["yours"], options  # the computer seat answers at once
        kind = options["pending"]["kind"]
        kinds.add(kind)
        if step % 4 == 0 or kind in ("plan", "take"):
            board = cli("show", uid).stdout
            assert "Your decision" in board and "progression" in board
            for card in hidden_cards(service, uid, state["seq"], crew):
                assert f"({card})" not in board, card
                assert UI.card_name(card, "en") not in board, card
        words = cli("options", uid, "--all").stdout
        assert "Your decision" in words
        choice = computer_answer(crew, state, options["options"],
                                 cli.json("log", uid)["moves"])
        assert UI.describe_option(choice, {"pending": options["pending"]}, "en") in " ".join(
            words.split()) or len(choice) > 30
        played = cli("play", uid, choice)
        assert "Played" in played.stdout, played.stdout
        if kind == "plan":
            shown_plans += 1
    else:
        pytest.fail(f"the race did not end after {MAX_INPUTS} inputs")

    assert {"take", "plan", "turn"} <= kinds and shown_plans > 0
    final = cli.json("show", uid)["state"]
    assert final["game"]["status"] == "finished"
    winner = final["game"]["winner"]
    assert winner in final["view"]["crews"] and final["view"]["winner"] == winner
    text = cli("show", uid).stdout
    assert f"Game over: {UI.piece_name(winner, 'en')}" in text and "wins" in text
    assert "Game over" in cli("options", uid).stdout
    log = cli("log", uid, "--last", "3").stdout
    assert "Game over" in log
    reveals = [m["input"] for m in cli.json("log", uid)["moves"]
               if str(m["input"]).startswith("plan ")]
    assert reveals and all(m.count("plan ") == 2 for m in reveals)  # both crews' plans at once


def test_a_sealed_plan_waits_for_the_others_and_stays_secret(site: Site, tmp_path: Path) -> None:
    created = site.create({"email": address(), "name": "Ann"},
                          {"email": address(), "name": "Bob"}, name="Secrets", seed=9)
    uid = created["game"]
    ann, bob = Cli(tmp_path / "ann"), Cli(tmp_path / "bob")
    ann("login", created["invitations"][0]["link"])
    bob("login", created["invitations"][1]["link"])
    site.server.call("POST", f"/games/{uid}/start", creator=created["creator_token"])

    for _ in range(12):  # the bivouac: each takes a card until the planning phase
        players = [p for p in (ann, bob) if p.json("options", uid)["yours"]]
        pending = players[0].json("options", uid)
        if pending["pending"]["kind"] == "plan":
            break
        players[0]("play", uid, pending["options"][0])
    else:
        pytest.fail("no planning phase")
    assert bob.json("options", uid)["yours"]
    # 56 plans: a few are listed with what they do, the rest on asking, any may be typed
    listed = " ".join(ann("options", uid).stdout.split())
    assert "and 53 more" in listed and "--all" in listed
    assert len([line for line in ann("options", uid, "--all").stdout.splitlines()
                if line.strip().startswith("plan ")]) == 56

    sealed = ann("play", uid, "plan P2 M2 S1")
    said = " ".join(sealed.stdout.split())
    assert "sealed: waiting for Bob" in said, sealed.stdout
    ann_words = UI.describe_option("plan P2 M2 S1", None, "en")
    assert ann_words in said
    mine = ann("show", uid).stdout
    assert "Sealed" in mine and "answer sealed" in mine and "Waiting for Bob" in " ".join(
        mine.split())
    assert not ann.json("options", uid)["yours"]

    # Bob's own options list every plan of his crew; what he sees of Ann's is that it is in
    ann_crew = ann.json("show", uid)["state"]["game"]["seats"][0]["titans"][0]
    seen_by_bob = bob("show", uid).stdout + bob("log", uid).stdout
    assert "P2 M2 S1" not in seen_by_bob and ann_words not in " ".join(seen_by_bob.split())
    assert "answer sealed" in seen_by_bob
    as_json = bob.json("show", uid)["state"]
    assert "sealed" not in as_json and as_json["view"]["crews"][ann_crew]["assistants"] is None
    assert f"{ann_crew} P2 M2 S1" not in json.dumps(as_json)
    assert "P2 M2 S1" not in json.dumps(bob.json("log", uid))

    # a sealed plan is final: the same plan again is a retry, another one is refused
    again = ann("play", uid, "plan S1 M2 P2")
    assert "sealed: waiting for Bob" in " ".join(again.stdout.split())
    changed = ann("play", uid, "plan F5", code=1)
    assert "cannot be changed" in changed.stderr

    revealed = bob("play", uid, "plan M3 S2")
    assert "Played" in revealed.stdout
    assert "P2 M2 S1" in revealed.stdout and "M3 S2" in revealed.stdout  # the reveal, at once
    after = ann("show", uid).stdout
    assert "Sealed" not in after and "answer sealed" not in after
    assert ann.json("show", uid)["state"]["view"]["phase"] == "convoy"


def test_admin_creates_lists_and_replays_a_great_race(site: Site) -> None:
    made = site.admin("new-game", "--game", "great-race", "--start", "le-cap", "--leaders",
                      "--name", "Admin race", "--seat", f"{address()}:italian", "--bot")
    assert "The Great Race, leaders on Le Cap, 2 seats" in " ".join(made.stdout.split())
    uid = re.search(r"game ([0-9a-f]{32})", made.stdout)
    assert uid is not None
    stored = site.server.call("GET", f"/games/{uid[1]}")["game"]
    assert stored["ruleset"] == "great-race" and stored["variant"] == "leaders"
    assert stored["circuits"] == ["le-cap"] and stored["seats"][0]["titans"] == ["italian"]

    raced = json.loads(site.admin("new-game", "--game", "great-race", "--bot", "--bot",
                                  "--seed", "3", "--start-with-bots", "--json").stdout)
    assert raced["ruleset"] == "great-race" and raced["started"]["status"] == "finished"
    listed = site.admin("games").stdout
    assert "The Great Race  leaders" in listed and "The Great Race  standard" in listed
    assert f"winner   {UI.piece_name(raced['started']['winner'], 'en')}" in listed

    replay = site.admin("replay", raced["game"], "--to", "2").stdout
    assert "entry 2 of" in replay and "progression" in replay and "input: " in replay
    whole = site.admin("replay", raced["game"]).stdout
    entries = [int(n) for n in re.findall(r"entry (\d+) of \d+", whole)]
    assert entries == list(range(len(entries))) and "winner" in whole

    for args, words in ((("--circuit", "kaldheira"), "--start"),
                        (("--start", "kaldheira"), "purple cities"),
                        (("--leaders", "--variant", "standard"), "--leaders")):
        refused = site.admin("new-game", "--game", "great-race", "--bot", "--bot", *args,
                             code=1)
        assert words in refused.output, refused.output
    assert "Great Race" in site.admin("new-game", "--start", "alger", "--bot", "--bot",
                                      code=1).output


def test_engine_demo_plays_a_computer_race_on_the_terminal_board() -> None:
    result = CliRunner().invoke(main, ["engine", "demo", "--game", "great-race", "--seed", "3",
                                       "-t", "french,italian",
                                       "--start", "le-cap", "--every", "end"],
                                env={"COLUMNS": "120", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert "The Great Race demo - from le-cap - seed 3" in result.output
    assert "progression" in result.output and "replay with --seed 3" in result.output
    assert re.search(r"(French|Italian) crew wins after \d+ turns", result.output)
    again = CliRunner().invoke(main, ["engine", "demo", "--game", "great-race", "--seed", "3",
                                      "-t", "french,italian", "--start", "le-cap",
                                      "--every", "end"], env={"COLUMNS": "120", "NO_COLOR": "1"})
    assert again.output == result.output  # a seed replays the same race
    wrong = CliRunner().invoke(main, ["engine", "demo", "--game", "great-race", "-t", "dutch"])
    assert wrong.exit_code == 2 and "dutch" in wrong.output


# ---------------------------------------------------------------------- engine run --view

SEALED_PLAN = {
    "game": "great-race",
    "phase": "planning",
    "crews": [{"crew": "french", "hand": ["guide"]}, {"crew": "belgian", "hand": ["militia"]}],
    "plans": {"french": {"P": 2, "M": 2, "F": 1}},
}
"""The French crew has planned (sealed); the Belgian crew has still to."""


def engine_run(titanpost: str, tmp_path: Path, scenario: dict[str, Any], *args: str
               ) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    return subprocess.run([titanpost, "engine", "run", *args, str(path)], capture_output=True,
                          text=True, timeout=60, check=False)


def test_engine_run_view_hides_the_others_hands_and_sealed_plans(titanpost: str,
                                                                  tmp_path: Path) -> None:
    full = json.loads(engine_run(titanpost, tmp_path, SEALED_PLAN).stdout)
    assert full["crews"]["french"]["assistants"] == {"P": 2, "M": 2, "S": 0, "F": 1}
    done = engine_run(titanpost, tmp_path, SEALED_PLAN, "--view", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    belgian = json.loads(done.stdout)
    assert belgian["crews"]["french"]["assistants"] is None, "a sealed plan stays hidden"
    assert belgian["crews"]["french"]["hand"] == 1
    assert belgian["crews"]["belgian"]["hand"] == ["militia"]
    assert belgian["pending"]["options"][0].startswith("plan belgian ")
    french = json.loads(engine_run(titanpost, tmp_path, SEALED_PLAN, "--view", "0").stdout)
    assert french["crews"]["french"]["assistants"] == {"P": 2, "M": 2, "S": 0, "F": 1}
    assert french["crews"]["belgian"]["hand"] == 1
    assert "options" not in french["pending"], "the French crew owes nothing more"


def test_engine_run_refusal_carries_the_state_left(titanpost: str, tmp_path: Path) -> None:
    refused = {**SEALED_PLAN, "inputs": ["plan belgian P5 M1"]}
    done = engine_run(titanpost, tmp_path, refused)
    assert done.returncode == 2, done.stdout + done.stderr
    payload = json.loads(done.stdout)
    assert set(payload) == {"error", "input", "legal", "state"}
    assert payload["input"] == 0 and "plan belgian P5" in payload["legal"]
    assert payload["state"] == json.loads(engine_run(titanpost, tmp_path, SEALED_PLAN).stdout)
    seen = json.loads(engine_run(titanpost, tmp_path, refused, "--view", "1").stdout)
    assert seen["legal"] == payload["legal"]
    view = engine_run(titanpost, tmp_path, SEALED_PLAN, "--view", "1")
    assert seen["state"] == json.loads(view.stdout)
    assert seen["state"]["crews"]["french"]["assistants"] is None


def test_engine_run_view_refuses_a_seat_not_in_the_race(titanpost: str, tmp_path: Path) -> None:
    done = engine_run(titanpost, tmp_path, SEALED_PLAN, "--view", "2")
    assert done.returncode == 2 and done.stdout == ""
    assert "seat 2 is not in this game (its seats: 0, 1)" in done.stderr
