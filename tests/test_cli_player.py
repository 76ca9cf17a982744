"""The player's commands (cli/player_view.py, player_moves.py, player_account.py) against a
real server on loopback.

A ``titanpost serve`` subprocess runs on a free port of 127.0.0.1 over a fresh SQLite file and a
fresh PostgreSQL database (skipped, with the reason, where none answers); one server per database
serves the whole module, and every test makes games of its own with addresses of its own. The
commands are driven through click's CliRunner with ``TITANPOST_CONFIG`` in the test's folder.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import click
import pytest
import requests
from click.testing import CliRunner, Result

from app.games import ruleset
from app.web.linkwords import describe_option
from cli.completion import complete_game, complete_inputs
from cli.main import main
from cli.player_moves import play
from cli.player_view import show
from tests.apifixtures import ADMIN_TOKEN
from tests.dbutil import fresh_database
from tests.netutil import free_port, serve_in_thread

STARTUP_SECONDS = 60



@dataclass
class Server:
    """A running server and helpers for what the CLI does not do (create and start games,
    the other players' moves)."""

    url: str
    log: Path
    database_url: str = ""

    def call(self, method: str, path: str, token: str | None = None, *,
             creator: str | None = None, **body: Any) -> dict[str, Any]:
        headers = {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if creator:
            headers["X-Creator-Token"] = creator
        if "seed" in body and not token:  # (a chosen seed is the admin's alone)
            headers["Authorization"] = f"Bearer {ADMIN_TOKEN}"
        response = requests.request(method, f"{self.url}/api{path}", json=body or None,
                                    headers=headers, timeout=30)
        assert response.status_code < 300, (response.status_code, response.text)
        data: dict[str, Any] = response.json()
        return data

    def create(self, *seats: dict[str, Any], name: str = "Race", seed: int = 7) -> Game:
        data = self.call("POST", "/games", seats=list(seats), name=name, seed=seed)
        links = {inv["position"]: inv["link"] for inv in data["invitations"]}
        invites = {inv["position"]: inv["invite_token"] for inv in data["invitations"]}
        return Game(self, data["game"], name, data["creator_token"], links, invites)


@dataclass
class Game:
    server: Server
    uid: str
    name: str
    creator: str
    links: dict[int, str]
    invites: dict[int, str]

    def accept(self, position: int, name: str | None = None) -> str:
        body = {"invite_token": self.invites[position], **({"name": name} if name else {})}
        token: str = self.server.call("POST", "/invitations/accept", **body)["api_token"]
        return token

    def start(self) -> dict[str, Any]:
        return self.server.call("POST", f"/games/{self.uid}/start", creator=self.creator)

    def state(self, token: str) -> dict[str, Any]:
        return self.server.call("GET", f"/games/{self.uid}", token)

    def play_first(self, token: str) -> str:
        """The seat of ``token`` answers with its first legal option."""
        opts = self.server.call("GET", f"/games/{self.uid}/options", token)
        assert opts["yours"], opts
        option: str = opts["options"][0]
        self.server.call("POST", f"/games/{self.uid}/moves", token,
                         expected_seq=opts["seq"], input=option)
        return option



@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest, titanpost: str,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp(f"server-{request.param}")
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
                env=env, stdout=out, stderr=subprocess.STDOUT,
            )
        try:
            _wait_until_up(url, process, log)
            yield Server(url, log, database_url)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_up(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server stopped at start:\n{log.read_text()}")
        try:
            if requests.get(f"{url}/api/", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.1)
    pytest.fail(f"the server did not answer within {STARTUP_SECONDS} s:\n{log.read_text()}")


class Cli:
    """``titanpost ...`` through CliRunner, with the config file in the test's folder."""

    def __init__(self, folder: Path) -> None:
        self.config = folder / "client.json"
        self.env: dict[str, str | None] = {
            "TITANPOST_CONFIG": str(self.config),
            "TITANPOST_SERVER": None,
            "TITANPOST_TOKEN": None,
            "COLUMNS": "120",
            "NO_COLOR": "1",
        }

    def __call__(self, *args: str, input: str | None = None, code: int | None = 0,
                 env: dict[str, str | None] | None = None) -> Result:
        result = CliRunner().invoke(main, list(args), input=input, env={**self.env, **(env or {})},
                                    prog_name="titanpost")
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"titanpost {' '.join(args)} raised {result.exception!r}:\n"
                                 f"{result.output}") from result.exception
        if code is not None:
            assert result.exit_code == code, (args, result.exit_code, result.output)
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self(*args, "--json").stdout)

    def json_failing(self, *args: str) -> Any:
        """The ``--json`` answer of a command that exits 1 (a check that failed)."""
        return json.loads(self(*args, "--json", code=1).stdout)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def address(who: str = "ann") -> str:
    return f"{who}-{uuid.uuid4().hex[:10]}@example.com"


def one_error_line(result: Result) -> str:
    """The refusal: exit code 1, exactly one line on standard error, no traceback."""
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: "), lines
    assert "Traceback" not in result.output
    return lines[0]


def solo_game(server: Server, cli: Cli, *, name: str = "Solo race", seed: int = 7) -> Game:
    """A started game of one human seat (logged in from the CLI) and two computer seats."""
    game = server.create({"email": address(), "name": "Ann"}, {"bot": True}, {"bot": True},
                         name=name, seed=seed)
    result = cli("login", game.links[0])
    assert f"Logged in to {name} ({game.uid[:8]})" in result.stdout
    game.start()
    return game


def token_in(cli: Cli, game: Game) -> str:
    token: str = json.loads(cli.config.read_text())["games"][game.uid]["token"]
    return token


# ---------------------------------------------------------------------- a whole game


def test_a_whole_game_played_from_the_cli(server: Server, cli: Cli) -> None:
    game = server.create({"email": address(), "name": "Ann"}, {"bot": True}, {"bot": True},
                         name="Whole race", seed=11)
    login = cli("login", game.links[0], "--name", "Annie")
    assert "Waiting for players to join" in login.stdout
    waiting = cli.json("games")["games"]
    assert [(g["game"], g["status"]) for g in waiting] == [(game.uid, "open")]
    game.start()

    listing = cli("games").stdout
    assert game.uid[:8] in listing and "Whole race" in listing and "racing" in listing
    board = cli("show", "whole").stdout
    for words in ("Kaldheira", "Annie", "Titan", "Life", "Dice:", "Traps", "computer"):
        assert words in board, words
    assert "Your decision" in board or "Waiting for" in board

    played = []
    for _ in range(600):
        options = cli.json("options", game.uid[:6])
        if not options["yours"]:
            break
        choice = options["options"][0]
        result = cli("play", "whole race", choice)
        assert choice in result.stdout and "Played" in result.stdout
        played.append(choice)
    else:
        pytest.fail("the game did not end after 600 inputs")

    state = cli.json("show", game.uid)["state"]
    assert state["game"]["status"] == "finished"
    winner = state["game"]["winner"]
    assert winner and state["view"]["winner"] == winner
    final = cli("show", game.uid).stdout
    assert f"Game over: {winner.capitalize()}" in final and "wins" in final
    assert "Game over" in cli("options", game.uid).stdout

    row = cli.json("games")["games"][0]
    assert row["status"] == "finished" and row["winner"] == winner and not row["your_turn"]
    moves = cli.json("log", game.uid)["moves"]
    mine = [m["input"] for m in moves if m["seat"] == 0]
    assert mine == played
    assert len(cli.json("log", game.uid, "--last", "5")["moves"]) == 5
    text = cli("log", game.uid, "--last", "3").stdout
    assert str(moves[-1]["seq"]) in text and "Game over" in text
    # a finished game takes no moves; watching it shows it once and stops
    over = cli("play", game.uid, "end", code=1)
    assert "finished" in over.stderr and "Game over" in over.output
    frames = cli("watch", game.uid, "--json").stdout.splitlines()
    assert len(frames) == 1 and json.loads(frames[0])["game"]["status"] == "finished"


# ---------------------------------------------------------------------- refusals


def test_a_refused_play_changes_nothing_and_lists_the_legal_options(
        server: Server, cli: Cli) -> None:
    game = solo_game(server, cli, name="Refusals")
    before_state = cli.json("show", game.uid)["state"]
    before_log = cli.json("log", game.uid)["moves"]
    options = cli.json("options", game.uid)
    assert options["yours"] and options["pending"]["kind"] == "pick"
    legal = options["options"]
    on_table = set(before_state["view"]["dice"])
    absent = next(c for c in ("blue", "red", "brown", "green", "yellow", "purple")
                  if c not in on_table)

    refused = cli("play", game.uid, f"pick {absent}", code=1)
    line = one_error_line_with_more(refused)
    assert line.startswith(f"Error: refused: there is no {absent} die")
    assert "nothing was played" in line
    titan = options["pending"]["titan"]
    for option in legal:
        assert option in refused.stderr
        assert describe_option(option, "en", {"titan": titan}) in refused.stderr

    # atomic: a legal first input and an illegal second one play nothing
    both = cli("play", game.uid, f"{legal[0]}; flibble", code=1)
    assert "'flibble' is not a known input" in both.stderr
    assert legal[0] in both.stderr
    scripted = cli("play", game.uid, f"{legal[0]}; flibble", "--json", code=1)
    body = json.loads(scripted.stdout)
    assert body["status"] == 422 and body["legal"] == legal

    assert cli.json("log", game.uid)["moves"] == before_log
    after = cli.json("show", game.uid)["state"]
    assert after["view"] == before_state["view"] and after["seq"] == before_state["seq"]

    # answering a decision that is gone: the game moved on, and what is pending now is shown
    cli("play", game.uid, legal[0])
    now = cli.json("options", game.uid)
    stale = cli("play", game.uid, now["options"][0], "--seq", str(options["seq"]), code=1)
    assert stale.stderr.startswith("Error: the game moved on")
    assert "Your decision" in stale.output
    assert cli.json("log", game.uid)["moves"][-1]["input"] == legal[0]


def one_error_line_with_more(result: Result) -> str:
    """The first line of a refusal with details after it (exit 1, no traceback)."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    return result.stderr.splitlines()[0]


# ---------------------------------------------------------------------- logging in


def test_the_config_file_is_private(server: Server, cli: Cli) -> None:
    game = solo_game(server, cli, name="Private")
    mode = stat.S_IMODE(cli.config.stat().st_mode)
    assert mode == 0o600
    stored = json.loads(cli.config.read_text())
    entry = stored["games"][game.uid]
    assert entry["server"] == server.url and entry["position"] == 0
    assert entry["name"] == "Private" and len(entry["token"]) > 20
    # a file someone made readable is private again after the next write
    cli.config.chmod(0o644)
    second = server.create({"email": address(), "name": "Ann"}, {"bot": True}, {"bot": True},
                           name="Second")
    cli("login", second.links[0])
    assert stat.S_IMODE(cli.config.stat().st_mode) == 0o600
    assert set(json.loads(cli.config.read_text())["games"]) == {game.uid, second.uid}
    cli("logout", "second")
    assert set(json.loads(cli.config.read_text())["games"]) == {game.uid}
    assert stat.S_IMODE(cli.config.stat().st_mode) == 0o600


class _LosingProxy(BaseHTTPRequestHandler):
    """Forwards every request to the server; the first answer to an invitation's accept is
    lost on the way back (the server took the request, the client never hears)."""

    target = ""
    accepts: ClassVar[list[str | None]] = []
    """The Idempotency-Key of every accept that went through."""

    def do_GET(self) -> None:
        self._forward()

    def do_POST(self) -> None:
        self._forward()

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        wanted = ("Content-Type", "Authorization", "Accept", "User-Agent", "Idempotency-Key")
        headers = {name: self.headers[name] for name in wanted if self.headers.get(name)}
        answer = requests.request(self.command, self.target + self.path, data=body or None,
                                  headers=headers, timeout=30)
        if self.path == "/api/invitations/accept":
            self.accepts.append(self.headers.get("Idempotency-Key"))
            if len(self.accepts) == 1:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
        self.send_response(answer.status_code)
        for name in ("Content-Type", "Idempotent-Replayed"):
            if name in answer.headers:
                self.send_header(name, answer.headers[name])
        self.send_header("Content-Length", str(len(answer.content)))
        self.end_headers()
        self.wfile.write(answer.content)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_login_whose_answer_was_lost_asks_again_and_gets_the_same_seat(
        server: Server, cli: Cli) -> None:
    game = server.create({"email": address(), "name": "Ann"}, {"bot": True}, {"bot": True})
    _LosingProxy.target = server.url
    _LosingProxy.accepts = []
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _LosingProxy)
    serve_in_thread(proxy)
    try:
        base = f"http://127.0.0.1:{proxy.server_address[1]}"
        result = cli("login", f"{base}/join/{game.invites[0]}")
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert "Logged in to" in result.stdout
    keys = _LosingProxy.accepts
    assert len(keys) == 2 and keys[0] is not None and keys[0] == keys[1]
    token = token_in(cli, game)  # the token of the first accept, replayed: it works
    me = server.call("GET", "/me", token)
    assert (me["game"], me["position"]) == (game.uid, 0)
    # a second accept by anyone else is refused as before
    refused = requests.post(f"{server.url}/api/invitations/accept",
                            json={"invite_token": game.invites[0]}, timeout=30)
    assert refused.status_code == 404


def test_login_with_a_token_and_from_the_environment(server: Server, cli: Cli,
                                                     tmp_path: Path) -> None:
    me = address("bea")
    game = server.create({"email": me, "name": "Bea"}, {"bot": True}, {"bot": True},
                         name="Tokens")
    token = game.accept(0)
    game.start()

    # the token alone, from the environment: no file is written
    env_cli = Cli(tmp_path / "env")
    env = {"TITANPOST_SERVER": server.url, "TITANPOST_TOKEN": token}
    listing = json.loads(env_cli("games", "--json", env=env).stdout)
    assert [g["game"] for g in listing["games"]] == [game.uid]
    assert listing["games"][0]["your_turn"] is True
    assert "Bea" in env_cli("show", "tokens", env=env).stdout
    assert json.loads(env_cli("options", game.uid, "--json", env=env).stdout)["yours"]
    assert not env_cli.config.exists()

    # the server's address and the token (asked for, hidden)
    asked = cli("login", server.url, input=token + "\n")
    assert "Logged in to Tokens" in asked.stdout and token not in asked.stdout
    assert json.loads(cli.config.read_text())["games"][game.uid]["token"] == token
    # or given, with the address of the API
    again = Cli(tmp_path / "again")
    again("login", server.url + "/api/", "--token", token)
    assert game.uid in json.loads(again.config.read_text())["games"]
    # and taken from the environment by login, which stores them
    stored = Cli(tmp_path / "stored")
    stored("login", env=env)
    assert json.loads(stored.config.read_text())["games"][game.uid]["token"] == token


# ---------------------------------------------------------------------- vacation and resign


def test_vacation_add_list_cancel(server: Server, cli: Cli) -> None:
    solo_game(server, cli, name="Holiday")
    assert "No away dates" in cli("vacation").stdout
    added = cli("vacation", "add", "--from", "2031-07-01", "--until", "2031-07-14",
                "--mode", "computer")
    assert "the computer plays for you" in added.stdout
    accounts = cli.json("vacation", "list")["accounts"]
    assert len(accounts) == 1
    (absence,) = accounts[0]["absences"]
    assert absence["mode"] == "computer" and absence["from"].startswith("2031-07-01")
    assert "2031-07-15" in absence["until"]  # the last day is included
    listed = cli("vacation", "list").stdout
    assert str(absence["id"]) in listed and "computer" in listed
    cancelled = cli("vacation", "cancel", str(absence["id"]))
    assert f"Cancelled away dates {absence['id']}" in cancelled.stdout
    assert cli.json("vacation", "list")["accounts"][0]["absences"] == []
    assert "no away dates" in one_error_line(cli("vacation", "cancel", "999999", code=1))
    assert cli("vacation", "add", "--from", "2031-07-10", "--until", "2031-07-01",
               code=2).exit_code == 2
    assert cli("vacation", "add", "--from", "soon", "--until", "2031-07-01",
               code=2).exit_code == 2


def test_settings_change_and_show_what_is_in_force(server: Server, cli: Cli) -> None:
    game = solo_game(server, cli, name="Quiet one")
    shown = cli("settings").stdout
    assert "mail:        every mail" in shown and "language:    English" in shown
    assert "quiet hours: none (time zone UTC)" in shown
    changed = cli("settings", "--mail", "digest", "--language", "pl", "--quiet", "22-7",
                  "--zone", "Europe/Warsaw").stdout
    # (the seat speaks Polish now: so do its settings)
    assert "codzienne podsumowanie" in changed and "język:         polski" in changed
    assert "godziny ciszy: 22-7 (Europe/Warsaw)" in changed
    # the server keeps them: the seat's own token reads them back
    stored = server.call("GET", f"/games/{game.uid}/me/settings", token_in(cli, game))
    assert stored | {"game": None} == {"game": None, "position": 0, "mail": "digest",
                                       "language": "pl", "quiet": "22-7",
                                       "timezone": "Europe/Warsaw", "anytime_windows": False,
                                       "ruleset": "titan-race", "reactions": "ask",
                                       "reaction_choices": [
                                           "ask", "never", "last-shield", "repulse", "dispel"]}
    assert "okna:          nigdy nie reaguj: pasuj od razu" in cli(
        "settings", "--reactions", "never").stdout
    refused = cli("settings", "--reactions", "thunderbolt", code=1).output
    assert "thunderbolt" in refused
    assert cli.json("settings", game.uid[:6], "--mail", "none")["mail"] == "none"
    # refusals: one line, nothing changed
    assert "not a time zone" in one_error_line(cli("settings", "--zone", "Mars/Base", code=1))
    assert "22:00-08:00" in one_error_line(cli("settings", "--quiet", "late", code=1))
    assert cli("settings", "--mail", "weekly", code=2).exit_code == 2
    assert server.call("GET", f"/games/{game.uid}/me/settings",
                       token_in(cli, game))["mail"] == "none"
    # what `settings` prints is what it takes: "none" clears the quiet hours, "UTC" the zone
    cleared = cli("settings", "--quiet", "none", "--zone", "UTC").stdout
    assert "godziny ciszy: brak (strefa czasowa UTC)" in cleared  # (in the seat's Polish)
    assert server.call("GET", f"/games/{game.uid}/me/settings",
                       token_in(cli, game))["quiet"] is None


def test_resign(server: Server, cli: Cli) -> None:
    game = solo_game(server, cli, name="Quitter")
    declined = cli("resign", game.uid, input="n\n", code=1)
    assert "Resign from Quitter" in declined.output
    seat = cli.json("show", game.uid)["state"]["game"]["seats"][0]
    assert not seat["resigned"] and not seat["bot"]
    resigned = cli("resign", game.uid, "--yes")
    assert "You resigned" in resigned.stdout
    state = cli.json("show", game.uid)["state"]["game"]
    assert state["seats"][0]["resigned"] and state["seats"][0]["bot"]
    assert state["status"] == "finished"  # nobody but the computer is left: it plays it out
    log = cli.json("log", game.uid)["moves"]
    assert any(m["kind"] == "resign" and m["seat"] == 0 for m in log)


# ---------------------------------------------------------------------- watch


def test_watch_redraws_when_another_client_moves(server: Server, cli: Cli) -> None:
    game = server.create({"email": address(), "name": "Ann"}, {"email": address("bob"),
                         "name": "Bob"}, {"bot": True}, name="Watched")
    ann, bob = game.accept(0), game.accept(1)
    game.start()
    cli("login", server.url, "--token", ann)
    for _ in range(50):  # Ann plays until Bob is to move
        to_act = game.state(ann)["game"]["to_act"]
        if to_act == [1]:
            break
        game.play_first(ann)
    else:
        pytest.fail("Bob never got the move")
    seq = game.state(ann)["seq"]
    errors: list[BaseException] = []

    def bob_moves() -> None:
        try:
            time.sleep(1.0)
            game.play_first(bob)
        except BaseException as exc:  # shown by the test below
            errors.append(exc)

    other = threading.Thread(target=bob_moves)
    other.start()
    result = cli("watch", game.uid, "--once", "--interval", "0.2", "--timeout", "30")
    other.join()
    assert not errors, errors
    frames = result.stdout.count("Watched · ")
    assert frames == 2, result.stdout
    assert f"move {seq}" in result.stdout and f"move {seq + 1}" in result.stdout
    assert "Stopped watching" not in result.output
    # nothing happens: --timeout ends the watch
    quiet = cli("watch", game.uid, "--interval", "0.2", "--timeout", "0.5")
    assert quiet.stdout.count("Watched · ") == 1 and "Stopped watching" in quiet.stderr


# ---------------------------------------------------------------------- completion


def test_completion(server: Server, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    game = solo_game(server, cli, name="Completed")
    monkeypatch.setenv("TITANPOST_CONFIG", str(cli.config))
    dummy = click.Argument(["x"])

    values = [item.value for item in complete_game(click.Context(show), dummy, "")]
    assert values == [game.uid[:8], "Completed"]
    assert [i.value for i in complete_game(click.Context(show), dummy, game.uid[:3])] == [
        game.uid[:8]]
    assert [i.value for i in complete_game(click.Context(show), dummy, "comp")] == ["Completed"]
    assert complete_game(click.Context(show), dummy, "zzz") == []

    legal = cli.json("options", game.uid)["options"]
    colours = [option.split()[1] for option in legal]

    def inputs(*done: str, incomplete: str = "") -> list[str]:
        ctx = click.Context(play)
        ctx.params = {"game": game.uid[:8], "inputs": done}
        return [item.value for item in complete_inputs(ctx, dummy, incomplete)]

    assert inputs() == ["pick"]
    assert inputs("pick") == colours
    assert inputs("pick", incomplete=colours[0][:2]) == [
        c for c in colours if c.startswith(colours[0][:2])]
    assert inputs(incomplete="pick ") == legal  # a quoted argument is completed whole
    assert inputs(incomplete=f"{legal[0]}; e") == [f"{legal[0]}; end"]  # later: the verbs
    described = complete_inputs(click.Context(play), dummy, "pick")
    assert described[0].value == "pick"

    # through the shell protocol, as bash asks
    result = cli("play", env={"_TITANPOST_COMPLETE": "bash_complete",
                              "COMP_WORDS": f"titanpost play {game.uid[:8]} pick ",
                              "COMP_CWORD": "4"})
    assert result.stdout.split() == [f"plain,{c}" for c in colours]
    commands = cli(env={"_TITANPOST_COMPLETE": "bash_complete", "COMP_WORDS": "titanpost wa",
                        "COMP_CWORD": "1"})
    assert commands.stdout.split() == ["plain,watch"]
    for shell in ("bash", "zsh", "fish"):
        script = cli("completion", shell).stdout
        assert "_TITANPOST_COMPLETE" in script and "titanpost" in script
    assert cli("completion", "tcsh", code=2).exit_code == 2


# ---------------------------------------------------------------------- errors


def test_errors_are_one_line(server: Server, cli: Cli, tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    nobody = Cli(tmp_path / "down")
    env = {"TITANPOST_SERVER": down, "TITANPOST_TOKEN": "whatever"}
    line = one_error_line(nobody("games", env=env, code=1))
    assert f"cannot reach {down}" in line
    assert "cannot reach" in one_error_line(nobody("login", down, "--token", "x", code=1))

    assert "not logged in" in one_error_line(nobody("show", "anything", code=1))
    line = one_error_line(cli("login", server.url, "--token", "not-a-token", code=1))
    assert "refused this API token" in line
    line = one_error_line(cli("login", f"{server.url}/join/{'x' * 30}", code=1))
    assert "unknown or was already used" in line

    game = solo_game(server, cli, name="Errors")
    assert "no game of yours matches 'nope'" in one_error_line(cli("show", "nope", code=1))
    assert cli("play", game.uid, code=2).exit_code == 2  # no inputs: a usage error

    # a game the server does not know
    config = json.loads(cli.config.read_text())
    ghost = "f" * 32
    config["games"][ghost] = {**config["games"][game.uid], "game": ghost, "name": "Ghost"}
    cli.config.write_text(json.dumps(config))
    assert "no game" in one_error_line(cli("show", "ghost", code=1))
    # the token revoked: the creator gave the seat to the computer
    server.call("POST", f"/games/{game.uid}/seats/0/replace", creator=game.creator,
                computer=True)
    line = one_error_line(cli("show", game.uid, code=1))
    assert "unknown or revoked" in line and "titanpost login" in line
    line = one_error_line(cli("play", game.uid, "end", code=1))
    assert "unknown or revoked" in line
    # the same server's games, listed: each failure is said, the exit code is 1
    listing = cli("games", code=1)
    assert "Error:" in listing.stderr and "Traceback" not in listing.output

    # a damaged config file
    cli.config.write_text("{not json")
    assert "is not a Titan Post client file" in one_error_line(cli("games", code=1))


# ---------------------------------------------------------------------- chat


def test_chat_posts_and_prints_the_recent_messages(server: Server, cli: Cli) -> None:
    game = server.create({"email": address(), "name": "Ann"}, {"email": address("bob")},
                         {"bot": True}, name="Chatty race")
    cli("login", game.links[0])
    bob = game.accept(1, "Bob")
    game.start()
    assert "No messages in Chatty race" in cli("chat", game.uid[:8]).stdout
    server.call("POST", f"/games/{game.uid}/chat", bob, text="Hello Ann")
    posted = cli("chat", game.uid[:8], "Hi", "Bob!")
    assert "posted: Hi Bob!" in posted.stdout
    printed = cli("chat", game.uid[:8]).stdout
    assert printed.index("Bob: Hello Ann") < printed.index("you: Hi Bob!")
    listing = cli.json("chat", game.uid[:8])["messages"]
    assert [(m["seat"], m["text"]) for m in listing] == [(1, "Hello Ann"), (0, "Hi Bob!")]
    refused = cli("chat", game.uid[:8], "   ", code=1)
    assert one_error_line(refused) == "Error: a chat message needs some text: nothing was posted"
    too_long = one_error_line(cli("chat", game.uid[:8], "x" * 1001, code=1))
    assert "at most 1000 characters" in too_long
    assert len(server.call("GET", f"/games/{game.uid}/chat")["messages"]) == 2


def test_verify_fair_checks_the_deal_and_what_this_seat_gave_and_saw(server: Server,
                                                                     cli: Cli) -> None:
    """``titanpost login`` gives the seat's own randomness to the deal and keeps it with the
    commitment it was shown; every fetch of the game keeps the facts the commitment covers and
    the newest log head; once the game is over, ``verify-fair`` recomputes the deal from the
    published secret and finds all of them in the record (docs/fairness.md)."""
    data = server.call("POST", "/games", name="Fair",
                       seats=[{"email": address()}, {"bot": True}, {"bot": True}])
    uid = data["game"]
    cli("login", data["invitations"][0]["link"], "--name", "Fay")
    kept = json.loads(cli.config.read_text())["games"][uid]
    assert len(kept["contribution"]) == 64 and len(kept["commitment"]) == 64
    assert kept["seen"] == {"game": uid, "ruleset": "titan-race", "variant": "standard",
                            "scheme": "hmac-sha256", "commitment_version": 2,
                            "seed_chosen": False}
    server.call("POST", f"/games/{uid}/start", creator=data["creator_token"])
    cli("show", uid[:8])
    seen = json.loads(cli.config.read_text())["games"][uid]["seen"]
    assert seen["engine_version"] == ruleset("titan-race").version and seen["head"]["seq"] >= 0
    running = cli("verify-fair", uid[:8], code=1)
    assert "not over" in running.stdout
    assert "contribution" not in running.stdout, running.stdout  # (not published yet: unknown)
    cli("show", uid[:8])  # (the newest head: kept)
    server.call("POST", f"/games/{uid}/abandon", creator=data["creator_token"])
    checked = cli("verify-fair", uid[:8])
    assert checked.stdout.startswith("fair:"), checked.stdout
    assert "What this computer kept of your seat" in " ".join(checked.stdout.split())
    record = cli.json("verify-fair", uid[:8])
    assert record["fair"] and record["committed"] and not record["seed_chosen"]
    assert record["compared_with_your_seat"] and record["commitment_version"] == 2

    def refused(change: Any) -> str:
        whole = json.loads(cli.config.read_text())
        original = json.loads(json.dumps(whole))
        change(whole["games"][uid])
        cli.config.write_text(json.dumps(whole))
        try:
            return " ".join(cli("verify-fair", uid[:8], code=1).stdout.split())
        finally:
            cli.config.write_text(json.dumps(original))

    def other_contribution(entry: dict[str, Any]) -> None:
        entry["contribution"] = "0" * 64  # as if the server had used another one

    def other_head(entry: dict[str, Any]) -> None:
        entry["seen"]["head"]["digest"] = "0" * 64  # as if the log were rewritten since

    def longer_log(entry: dict[str, Any]) -> None:
        entry["seen"]["head"]["seq"] += 5  # as if entries were cut since

    def other_version(entry: dict[str, Any]) -> None:
        entry["seen"]["engine_version"] = 7

    def other_commitment(entry: dict[str, Any]) -> None:
        entry["commitment"] = "1" * 64

    assert "contribution you gave" in refused(other_contribution)
    assert "not the one this computer was shown" in refused(other_head)
    assert "record's log stops at entry" in refused(longer_log)
    assert (f"engine_version is {seen['engine_version']}, but this computer was shown 7"
            in refused(other_version))
    assert "commitment shown when you took the seat" in refused(other_commitment)


def test_verify_fair_needs_no_login_once_the_game_is_over(server: Server, cli: Cli,
                                                          tmp_path: Path) -> None:
    """Anyone can check a finished game from its public fairness address (or the server and
    the game's id): no seat, no token; a running game's record says it is not over; a saved
    record whose game this computer played is compared with what it kept."""
    data = server.call("POST", "/games", name="Public", seats=[{"bot": True}] * 3)
    uid = data["game"]
    server.call("POST", f"/games/{uid}/start", creator=data["creator_token"])
    address_ = f"{server.url}/api/games/{uid}/fairness"
    assert not cli.config.exists()
    checked = cli("verify-fair", address_)
    assert checked.stdout.startswith("fair:") and uid in checked.stdout
    assert "What this computer kept" not in checked.stdout
    assert cli.json("verify-fair", "--server", server.url, uid)["fair"] is True
    assert cli("verify-fair", f"{server.url}/games/{uid}").stdout.startswith("fair:")
    wrong = cli("verify-fair", "--server", server.url, uid[:8], code=2)
    assert "whole id" in wrong.output
    unknown = cli("verify-fair", f"{server.url}/api/games/{'0' * 32}/fairness", code=1)
    assert "no game" in unknown.output
    assert not cli.config.exists()  # (nothing kept: no login)

    running = server.call("POST", "/games", name="Running",
                          seats=[{"email": address()}, {"email": address("bob")}, {"bot": True}])
    cli("login", running["invitations"][0]["link"])
    bob = Cli(tmp_path / "bob")  # (a seat logged in with its token keeps what it is shown too)
    token = server.call("POST", "/invitations/accept",
                        invite_token=running["invitations"][1]["invite_token"])["api_token"]
    bob("login", server.url, "--token", token)
    shown = server.call("GET", f"/games/{running['game']}")["game"]["fairness"]["commitment"]
    assert json.loads(bob.config.read_text())["games"][running["game"]]["commitment"] == shown
    server.call("POST", f"/games/{running['game']}/start", creator=running["creator_token"])
    said = cli("verify-fair", f"{server.url}/api/games/{running['game']}/fairness", code=1)
    assert "not over" in said.stdout
    server.call("POST", f"/games/{running['game']}/abandon", creator=running["creator_token"])
    saved = tmp_path / "record.json"
    record = server.call("GET", f"/games/{running['game']}/fairness")
    saved.write_text(json.dumps(record))
    compared = cli.json("verify-fair", str(saved))
    assert compared["fair"] and compared["compared_with_your_seat"]
    other = server.call("GET", f"/games/{uid}/fairness") | {"game": running["game"]}
    saved.write_text(json.dumps(other))  # (another game's record, relabelled as this one)
    problems = cli.json_failing("verify-fair", str(saved))["problems"]
    assert any("commitment" in p for p in problems), problems


# ---------------------------------------------------------------------- rematch


def test_rematch_makes_the_next_game_once(server: Server, cli: Cli) -> None:
    game = solo_game(server, cli, name="Rematched")
    refused = cli("rematch", game.uid, code=1)
    assert "finished" in one_error_line(refused)
    cli("resign", game.uid, "--yes")  # the computer plays it out
    made = cli("rematch", game.uid)
    said = " ".join(made.stdout.split())
    assert "Rematch of Rematched" in said and "/join/" not in said
    assert "You have your seat in it (seat 1)" in said
    new = made.stdout.split("/games/")[1].split()[0].rstrip("/")
    assert len(new) == 32 and new != game.uid
    # the new seat is kept, with the share of the deal this client gave once shown the
    # commitment; the creator token starts the game
    kept = json.loads(cli.config.read_text())["games"][new]
    assert kept["position"] == 0 and len(kept["contribution"]) == 64
    assert kept["commitment"] == server.call("GET", f"/games/{new}", kept["token"])["game"][
        "fairness"]["commitment"]
    again = cli.json("rematch", game.uid)
    assert again == {"game": new, "rematch_of": game.uid, "made": False}
    links = server.call("GET", f"/games/{new}/rematch")
    assert (links["follows"], links["rematch"]) == (game.uid, None)
    # every other seat is the computer's: the rematch started with this client's share
    assert server.call("GET", f"/games/{new}", kept["token"])["game"]["status"] == "active"
    cli("resign", new, "--yes")
    assert cli("verify-fair", new[:8]).stdout.startswith("fair:")  # (the share it gave)


def test_rematch_takes_the_seat_kept_for_you(server: Server, tmp_path: Path) -> None:
    """Ann makes the rematch; Bob takes his own seat of it with his old seat's token, without
    the invitation mailed to him (and nobody printed it)."""
    ann, bob = Cli(tmp_path / "ann"), Cli(tmp_path / "bob")
    game = server.create({"email": address(), "name": "Ann"},
                         {"email": address("bob"), "name": "Bob"}, {"bot": True}, name="Pair")
    ann("login", game.links[0])
    bob("login", game.links[1])
    game.start()
    ann("resign", game.uid, "--yes")
    bob("resign", game.uid, "--yes")
    made = ann("rematch", game.uid)
    assert "/join/" not in made.stdout
    new = made.stdout.split("/games/")[1].split()[0].rstrip("/")
    joined = bob("rematch", game.uid)
    assert "You have taken your seat in the rematch of Pair" in " ".join(joined.stdout.split())
    kept = json.loads(bob.config.read_text())["games"][new]
    assert kept["position"] == 1 and len(kept["contribution"]) == 64
    assert server.call("GET", f"/games/{new}", kept["token"])["you"] == 1
    assert bob.json("rematch", game.uid) == {"game": new, "rematch_of": game.uid,
                                             "made": False}


def test_chat_times_are_on_the_clock_of_the_seats_zone(server: Server, cli: Cli) -> None:
    game = solo_game(server, cli, name="Zoned")
    cli("chat", game.uid, "Hello")
    cli("settings", game.uid, "--zone", "Asia/Tokyo")
    [line] = [x for x in cli("chat", game.uid).stdout.splitlines() if "Hello" in x]
    assert "Asia/Tokyo" in line


def test_every_kind_of_log_entry_has_its_words() -> None:
    """The log's notes (a resignation, a pause, an abandonment...) are said in words by
    ``titanpost log`` and ``admin replay``: a new kind of entry cannot come out as its id."""
    from app.core.models import ENTRY_KINDS, MOVE
    from cli import admin_history, player_view

    assert set(player_view.KIND_WORDS) == set(ENTRY_KINDS) - {MOVE}
    assert set(admin_history.KIND_WORDS) == set(ENTRY_KINDS)
    assert player_view.kind_words("abandon", "abandon") == "abandoned"


def test_settings_show_a_bouncing_address_and_ask_for_a_test_mail(server: Server,
                                                                  cli: Cli) -> None:
    """``titanpost settings`` shows the state of the seat's address (issue 39) and
    ``--test-mail`` asks for a test mail through the API, which tries the address again."""
    from sqlalchemy import create_engine
    from sqlmodel import Session

    from app.features.delivery import standing

    game = solo_game(server, cli, name="Bouncing")
    shown = cli("settings").stdout
    assert "last mail taken by the relay: none yet" in shown and "bounced" not in shown
    email = server.call("GET", "/me", token_in(cli, game))["email"]
    engine = create_engine(server.database_url)
    try:
        with Session(engine) as s:
            standing.record_bounce(s, email, "550 5.1.1 user unknown",
                                   datetime(2026, 3, 2, 14, 5, tzinfo=UTC), permanent=True)
            s.commit()
        shown = " ".join(cli("settings").stdout.split())
        assert (f"Mail to {email} bounced on 2026-03-02 14:05 UTC: 550 5.1.1 user unknown. "
                "We stopped mailing you.") in shown
        assert "titanpost settings --test-mail" in shown
        assert cli.json("settings")["address"]["undeliverable_since"].startswith("2026-03-02")
        asked = " ".join(cli("settings", "--test-mail").stdout.split())
        assert f"A test mail is on its way to {email}" in asked and "We stopped" not in asked
        with Session(engine) as s:
            row = standing.state_of(s, email)
            assert row is not None and row.undeliverable_since is None
        refused = one_error_line(cli("settings", "--test-mail", code=1))
        assert "less than 10 minutes ago" in refused
    finally:
        engine.dispose()
