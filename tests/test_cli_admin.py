"""``titanpost admin``: every command driven through click's runner against the database of a
real server started here on loopback (``titanpost serve``), whose JSON API then shows what the
command did. On SQLite and on PostgreSQL (skipped, with the reason, where none answers)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result
from sqlmodel import col, select

from app.core.config import Settings
from app.core.db import make_engine
from app.core.models import OutboxMail
from app.listeners import build_service
from app.mail.render import MailRenderer
from app.service import GameService
from cli.main import main
from tests.netutil import free_port, wait_until_serving

LINK = re.compile(r"(http://\S+)/join/(\S+)")
UID = re.compile(r"\bgame ([0-9a-f]{32})\b")
NO_GAME = "0123456789abcdef" * 2
TABLES = ("games", "seats", "moves", "snapshots", "api_tokens", "outbox", "deadlines")



@dataclass
class Game:
    """A game made over the API: its id, creator token and each seat's API token."""

    uid: str
    creator: str
    tokens: dict[int, str] = field(default_factory=dict)


@dataclass
class Server:
    """The database, the server on it, and ways to ask both."""

    url: str
    base: str
    engine: sa.Engine

    # ------------------------------------------------------------------ the command

    @property
    def env(self) -> dict[str, str | None]:
        unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("TITANPOST_")}
        return unset | {"TITANPOST_DATABASE_URL": self.url, "TITANPOST_ENV": "test",
                        "TITANPOST_BASE_URL": self.base, "COLUMNS": "100", "NO_COLOR": "1"}

    def admin(self, *args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(main, ["admin", *args], env=self.env, input=input)

    def ok(self, *args: str, input: str | None = None) -> Result:
        result = self.admin(*args, input=input)
        assert result.exit_code == 0, result.output
        return result

    def refused(self, *args: str, words: tuple[str, ...] = (), input: str | None = None) -> str:
        """The command is refused: one line on standard error, exit 1, nothing changed."""
        before = self.fingerprint()
        result = self.admin(*args, input=input)
        assert result.exit_code == 1, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exception)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
        for word in words:
            assert word in lines[0], lines[0]
        assert self.fingerprint() == before
        return lines[0]

    # ------------------------------------------------------------------ the API

    def request(self, method: str, path: str, body: Any = None,
                headers: dict[str, str] | None = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.base + path, data=data, method=method,
            headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def get(self, path: str, token: str | None = None) -> Any:
        status, body = self.request("GET", path, headers=_bearer(token))
        assert status == 200, body
        return body

    def post(self, path: str, body: Any = None, *, expect: int = 200,
             headers: dict[str, str] | None = None) -> Any:
        status, answer = self.request("POST", path, {} if body is None else body, headers)
        assert status == expect, answer
        return answer

    def state(self, uid: str, token: str | None = None) -> dict[str, Any]:
        state: dict[str, Any] = self.get(f"/api/games/{uid}", token)
        return state

    def log(self, uid: str) -> list[dict[str, Any]]:
        moves: list[dict[str, Any]] = self.get(f"/api/games/{uid}/log")["moves"]
        return moves

    def accept(self, link_token: str, expect: int = 201) -> dict[str, Any]:
        answer: dict[str, Any] = self.post("/api/invitations/accept",
                                           {"invite_token": link_token}, expect=expect)
        return answer

    def human_game(self, seats: int = 3, **body: Any) -> Game:
        created = self.post("/api/games", {
            "seats": [{"email": f"p{i}@example.com", "language": "pl" if i == 1 else "en"}
                      for i in range(seats)], **body}, expect=201)
        game = Game(created["game"], created["creator_token"])
        for invitation in created["invitations"]:
            game.tokens[invitation["position"]] = self.accept(
                invitation["invite_token"])["api_token"]
        self.post(f"/api/games/{game.uid}/start", {}, headers={"X-Creator-Token": game.creator})
        return game

    def play(self, game: Game, moves: int) -> None:
        """Answer ``moves`` decisions, each with the first legal option."""
        for _ in range(moves):
            position = self.state(game.uid, game.tokens[0])["game"]["to_act"][0]
            token = game.tokens[position]
            options = self.get(f"/api/games/{game.uid}/options", token)
            self.post(f"/api/games/{game.uid}/moves",
                      {"expected_seq": options["seq"], "input": options["options"][0]},
                      headers=_bearer(token))

    # ------------------------------------------------------------------ the database

    def fingerprint(self) -> dict[str, list[tuple[Any, ...]]]:
        with self.engine.connect() as conn:
            return {table: [tuple(row) for row in conn.execute(
                sa.text(f"SELECT * FROM {table} ORDER BY 1, 2"))] for table in TABLES}

    def rows(self, sql: str, **params: Any) -> list[tuple[Any, ...]]:
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(sa.text(sql), params)]

    def execute(self, sql: str, **params: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(sa.text(sql), params)

    def service(self) -> GameService:
        return build_service(Settings.from_env({
            "TITANPOST_DATABASE_URL": self.url, "TITANPOST_ENV": "test",
            "TITANPOST_BASE_URL": self.base}))


def _bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


@pytest.fixture
def server(migrated_database_url: str, titanpost: str, tmp_path: Path) -> Iterator[Server]:
    """``titanpost serve`` on a free loopback port, on a fresh migrated database."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TITANPOST_")} | {
        "TITANPOST_DATABASE_URL": migrated_database_url, "TITANPOST_ENV": "test",
        "TITANPOST_BASE_URL": base}
    log_path = tmp_path / "server.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen([titanpost, "serve", "--port", str(port), "--no-scheduler"],
                                env=env, stdout=log, stderr=subprocess.STDOUT)
    engine = make_engine(migrated_database_url)
    try:
        wait_until_serving(base, proc, log_path)
        yield Server(migrated_database_url, base, engine)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        engine.dispose()


def chat_of(server: Server, uid: str) -> list[tuple[Any, ...]]:
    """Game ``uid``'s chat as a spectator reads it, without the messages' ids."""
    return [(m["seat"], m["name"], m["created_at"], m["text"])
            for m in server.get(f"/api/games/{uid}/chat")["messages"]]


def created_uid(result: Result) -> str:
    match = UID.search(result.stdout)
    assert match is not None, result.output
    return match[1]


# ---------------------------------------------------------------------- new-game, games


def test_new_game_sets_up_what_the_server_serves(server: Server) -> None:
    done = server.ok(
        "new-game", "--name", "Cli race", "--seat", "ann@example.com:grinder",
        "--seat", "bob@example.com", "--bot", "--language", "en", "--language", "pl",
        "--deadline-hours", "24", "--reaction-hours", "6", "--bank-hours", "10",
        "--increment-hours", "1", "--reminder", "50%", "--reminder", "3h",
        "--on-timeout", "pass", "--max-missed", "3", "--after-missed", "invite",
        "--no-spectators", "--owner-email", "owner@example.com", "--seed", "11")
    uid = created_uid(done)
    assert re.search(r"creator token .*: \S{20,}", done.stdout)
    links = LINK.findall(done.stdout)
    assert [base for base, _ in links] == [server.base, server.base]
    assert "seat 3: the computer" in done.stdout  # seats are numbered from 1
    assert re.search(r"^seat 1: ann@example.com ", done.stdout, re.M), done.stdout
    tokens = {}
    for _, invite in links:
        accepted = server.accept(invite)
        assert accepted["game"] == uid
        tokens[accepted["position"]] = accepted["api_token"]
    assert sorted(tokens) == [0, 1]
    server.accept(links[0][1], expect=404)  # an invitation is used once

    creator = re.search(r"creator token .*: (\S+)", done.stdout)
    assert creator is not None
    server.post(f"/api/games/{uid}/start", {}, headers={"X-Creator-Token": creator[1]})
    game = server.state(uid, tokens[0])["game"]
    assert game["name"] == "Cli race" and game["status"] == "active"
    assert game["seats"][0]["titans"] == ["grinder"]
    assert [seat["bot"] for seat in game["seats"]] == [False, False, True]
    assert server.request("GET", f"/api/games/{uid}")[0] == 403  # no spectators
    clock = server.get(f"/api/games/{uid}/deadlines", tokens[0])["clock"]
    assert clock | {"running": True} == {
        "running": True, "deadline_hours": 24, "reaction_hours": 6, "bank_hours": 10,
        "increment_hours": 1, "reminders": ["50%", "3h"], "on_timeout": "pass",
        "max_missed": 3, "after_missed": "invite"}
    assert server.rows(
        "SELECT seats.language, games.owner_email FROM seats JOIN games ON games.id = "
        "seats.game_id WHERE games.uid = :uid ORDER BY seats.position", uid=uid
    ) == [("en", "owner@example.com"), ("pl", "owner@example.com"),
          ("en", "owner@example.com")]

    # --json, three circuits (grand slam), and a game of computers started at once
    slam = json.loads(server.ok("new-game", "-c", "kaldheira", "-c", "anglieh", "-c", "ban-kog",
                                "--seat", "ann@example.com", "--seat", "bot", "--seat",
                                "cy@example.com", "--json").stdout)
    assert slam["variant"] == "grand-slam" and len(slam["invitations"]) == 2
    assert all(i["link"] == f"{server.base}/join/{i['invite_token']}"
               for i in slam["invitations"])
    assert server.state(slam["game"])["game"]["circuits"] == ["kaldheira", "anglieh", "ban-kog"]
    bots = json.loads(server.ok("new-game", "--bot", "--bot", "--bot", "--seed", "5",
                                "--start-with-bots", "--json").stdout)
    assert bots["invitations"] == [] and bots["started"]["status"] == "finished"
    assert server.state(bots["game"])["game"]["winner"] == bots["started"]["winner"]

    server.refused("new-game", "--seat", "not-an-address", words=("not an e-mail address",))
    server.refused("new-game", "--seat", "ann@example.com", "--bot", "--start-with-bots",
                   words=("computer seats only",))
    server.refused("new-game", "--variant", "grand-slam", "-c", "kaldheira", "--bot", "--bot",
                   "--bot", words=("three circuits",))
    server.refused("new-game", "-c", "atlantis", "--bot", "--bot", "--bot",
                   words=("unknown circuit",))
    server.refused("new-game", "--bot", "--bot", "--bot", "--reminder", "soon", words=("soon",))
    server.refused("new-game", "--bot", "--bot", "--bot", "--reaction-hours", "30",
                   "--deadline-hours", "20", words=("reaction_hours",))
    server.refused("new-game", words=("--seat",))


def test_start_waits_for_the_players_or_fills_with_computers(server: Server) -> None:
    created = server.ok("new-game", "--seat", "ann@example.com", "--seat", "bob@example.com",
                        "--bot")
    uid = created_uid(created)
    server.refused("start", uid, words=("not every player has accepted",))
    server.accept(LINK.findall(created.stdout)[0][1])  # ann takes her seat; bob never does
    server.refused("start", "0" * 32, words=("no game",))
    done = server.ok("start", uid, "--fill-with-bots")
    assert f"game {uid} started" in done.stdout
    seats = server.request("GET", f"/api/games/{uid}")[1]["game"]["seats"]
    assert [seat["bot"] for seat in seats] == [False, True, True]
    server.refused("start", uid, words=("already",))


def test_games_lists_and_filters(server: Server) -> None:
    waiting = created_uid(server.ok("new-game", "--seat", "ann@example.com", "--bot", "--bot"))
    over = json.loads(server.ok("new-game", "--bot", "--bot", "--bot", "--start-with-bots",
                                "--json").stdout)["game"]
    running = server.human_game()
    server.play(running, 3)
    dropped = server.human_game()
    server.post(f"/api/games/{dropped.uid}/abandon", {},
                headers={"X-Creator-Token": dropped.creator})
    server.post(f"/api/games/{running.uid}/pause", {"reason": "holidays"},
                headers={"X-Creator-Token": running.creator})

    listed = json.loads(server.ok("games", "--json").stdout)
    assert {g["game"]: g["status"] for g in listed} == {
        waiting: "open", over: "finished", running.uid: "active", dropped.uid: "abandoned"}
    [active] = json.loads(server.ok("games", "--status", "active", "--json").stdout)
    api = server.state(running.uid)
    assert active["game"] == running.uid and active["seq"] == api["seq"]
    assert active["to_act"] == api["game"]["to_act"] and active["decision"]["kind"]
    assert active["paused"] is True and active["pause_reason"] == "holidays"
    assert [p["email"] for p in active["players"]] == [f"p{i}@example.com" for i in range(3)]
    two = json.loads(server.ok("games", "--status", "open", "--status", "abandoned",
                               "--json").stdout)
    assert {g["game"] for g in two} == {waiting, dropped.uid}

    text = server.ok("games").stdout
    for uid in (waiting, over, running.uid, dropped.uid):
        assert uid in text
    assert "paused   holidays" in text and "turn     " in text
    assert over in server.ok("games", "--status", "finished").stdout
    assert server.ok("games", "--status", "open", "--database-url", server.url).stdout.count(
        "players") == 1
    server.refused("games", "--database-url", "nosuchdb://x", words=("nosuchdb",))


# ---------------------------------------------------------------------- replay


def test_replay_prints_each_entry_and_board(server: Server) -> None:
    game = server.human_game()
    server.play(game, 6)
    log = server.log(game.uid)
    last = len(log)

    one = server.ok("replay", game.uid, "--to", "4").stdout
    assert f"entry 4 of {last}" in one and f"input: {log[3]['input']}" in one
    assert "made by the player" in one and "outcomes: " in one
    assert "Titan" in one and "Round" in one  # the board and its table
    assert re.findall(r"entry (\d+) of \d+", one) == ["4"]
    assert f"entry 4 of {last} · seat {log[3]['seat'] + 1} · " in one  # seats from 1

    everything = server.ok("replay", game.uid).stdout
    assert [int(n) for n in re.findall(r"entry (\d+) of \d+", everything)] == list(
        range(last + 1))
    assert everything.count("Round ") == last + 1

    walked = server.ok("replay", game.uid, "--step", input="\n\np\n5\nx\nq\n").stdout
    assert [int(n) for n in re.findall(r"entry (\d+) of \d+", walked)] == [0, 1, 2, 1, 5]
    assert walked.count("a number from 0 to") == 1
    ended = server.ok("replay", game.uid, "--step", "--to", str(last - 1), input="\n\n").stdout
    assert [int(n) for n in re.findall(r"entry (\d+) of \d+", ended)] == [last - 1, last]
    assert "that was the last entry" in ended
    eof = server.ok("replay", game.uid, "--step", input="n\n").stdout
    assert [int(n) for n in re.findall(r"entry (\d+) of \d+", eof)] == [0, 1]

    server.refused("replay", NO_GAME, words=("no game",))
    server.refused("replay", "not-a-game", words=("no game",))
    server.refused("replay", game.uid, "--to", str(last + 1), words=(f"0 to {last}",))
    server.refused("replay", game.uid, "--to", "-1", words=("no entry -1",))
    waiting = created_uid(server.ok("new-game", "--seat", "ann@example.com", "--bot", "--bot"))
    server.refused("replay", waiting, words=("has not started",))


# ---------------------------------------------------------------------- export, import, verify


def test_export_import_and_verify_many_games(server: Server, tmp_path: Path) -> None:
    running = server.human_game()
    server.play(running, 4)
    for position, text in ((1, "Powodzenia!"), (0, "Thanks, you too")):
        server.post(f"/api/games/{running.uid}/chat", {"text": text}, expect=201,
                    headers=_bearer(running.tokens[position]))
    over = json.loads(server.ok("new-game", "--bot", "--bot", "--bot", "--seed", "5",
                                "--start-with-bots", "--json").stdout)["game"]
    waiting = created_uid(server.ok("new-game", "--seat", "ann@example.com", "--bot", "--bot"))

    every = tmp_path / "every"
    done = server.ok("export", "--all", str(every))
    assert "exported 3 game(s)" in done.stdout
    assert sorted(p.name for p in every.iterdir()) == sorted(
        f"{uid}.json" for uid in (running.uid, over, waiting))
    single = json.loads(server.ok("export", running.uid).stdout)
    assert json.loads((every / f"{running.uid}.json").read_text()) == single
    assert [(m["seat"], m["text"]) for m in single["chat"]] == [
        (1, "Powodzenia!"), (0, "Thanks, you too")]
    finished = tmp_path / "finished"
    server.ok("export", "--all", str(finished), "--status", "finished")
    assert [p.name for p in finished.iterdir()] == [f"{over}.json"]

    # several files at once; a bad one is named and the others are imported
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    result = server.admin("import", str(every / f"{running.uid}.json"), str(bad),
                          str(every / f"{over}.json"))
    assert result.exit_code == 1, result.output
    imported = json.loads(result.stdout)
    assert [Path(i["file"]).name for i in imported] == [f"{running.uid}.json", f"{over}.json"]
    assert str(bad) in result.stderr and "not valid JSON" in result.stderr
    for item, original in zip(imported, (running.uid, over), strict=True):
        assert item["game"] != original
        theirs = [(m["seq"], m["kind"], m["input"], m["outcomes"]) for m in server.log(original)]
        ours = [(m["seq"], m["kind"], m["input"], m["outcomes"])
                for m in server.log(item["game"])]
        assert ours == theirs
        assert chat_of(server, item["game"]) == chat_of(server, original)
    assert len(chat_of(server, imported[0]["game"])) == 2
    assert server.state(imported[1]["game"])["game"]["winner"] == server.state(
        over)["game"]["winner"]
    one = json.loads(server.ok("import", str(finished)).stdout)  # a folder of one file
    assert set(one) == {"game", "creator_token"}

    checked = server.ok("verify")
    assert "every game replays" in checked.stdout and "(5 checked)" in checked.stdout
    assert "the 1 game given" in server.ok("verify", over).stdout

    # a snapshot is a cache: a changed one is found, by this command and by the service alike
    server.execute(
        "UPDATE snapshots SET state = (SELECT s2.state FROM snapshots s2 WHERE s2.game_id = "
        "snapshots.game_id AND s2.seq = 10) WHERE seq = 20 AND game_id = (SELECT id FROM games "
        "WHERE uid = :uid)", uid=over)
    broken = server.admin("verify")
    assert broken.exit_code == 1, broken.output
    assert f"game {over}:" in broken.stderr and "snapshot at move 20" in broken.stderr
    assert running.uid not in broken.stderr
    service = server.service()
    try:
        report = service.verify_all()
        assert list(report) == [over]
        assert service.verify(over) == report[over]
        assert service.verify(running.uid) == []
    finally:
        service.engine.dispose()

    server.refused("export", words=("--all DIR",))
    server.refused("export", over, "--all", str(tmp_path / "x"), words=("--all DIR",))
    server.refused("export", NO_GAME, words=("no game",))
    server.refused("import", str(bad), words=("not valid JSON",))
    server.refused("import", str(tmp_path / "missing.json"), words=("cannot read",))
    server.refused("verify", NO_GAME, words=("no game",))


# ---------------------------------------------------------------------- resend, tick, seat


def test_resend_tick_and_seat(server: Server) -> None:
    game = server.human_game()
    server.play(game, 2)
    [position] = server.state(game.uid)["game"]["to_act"]
    outbox = "SELECT kind, recipient, message_id, seq FROM outbox WHERE message_id LIKE :like"

    sent = server.ok("resend", game.uid).stdout
    assert f"p{position}@example.com" in sent
    seq = server.state(game.uid)["decision_seq"]
    [(kind, recipient, _, row_seq)] = server.rows(outbox, like="%.resend1@%")
    assert kind in ("pick", "turn") and recipient == f"p{position}@example.com"
    assert row_seq == seq
    server.ok("resend", game.uid)
    assert len(server.rows(outbox, like="%.resend2@%")) == 1

    # one tick two days on: the deadline has passed and the computer answered for the seat
    later = (datetime.now(UTC) + timedelta(hours=49)).isoformat()
    ticked = server.ok("tick", "--now", later, "--max-gap", "0").stdout
    assert ticked.startswith("tick at ")
    assert any(m["actor"] == "timeout" and m["seat"] == position for m in server.log(game.uid))

    [now] = server.state(game.uid)["game"]["to_act"]
    took = server.ok("seat", game.uid, str(now + 1), "--computer").stdout  # SEAT from 1
    assert f"seat {now + 1} of game" in took
    state = server.state(game.uid)["game"]
    assert state["seats"][now]["bot"] is True
    handover = [m for m in server.log(game.uid) if m["kind"] == "handover"]
    assert [(m["seat"], m["actor"], m["input"]) for m in handover] == [
        (now, "admin", "handover computer")]
    # the old player's API token is revoked (the server itself may trust it for up to 30 s
    # more: it caches tokens in its own process)
    assert server.rows(
        "SELECT api_tokens.revoked_at IS NOT NULL FROM api_tokens JOIN seats ON seats.id = "
        "api_tokens.seat_id JOIN games ON games.id = seats.game_id WHERE games.uid = :uid AND "
        "seats.position = :position", uid=game.uid, position=now) == [(True,)]

    other = next(p for p in range(3) if p != now)
    invited = server.ok("seat", game.uid, str(other + 1), "--email",
                        "new@example.com").stdout
    [(base, invite)] = LINK.findall(invited)
    assert base == server.base
    taken = server.accept(invite)
    assert taken["position"] == other and taken["game"] == game.uid
    assert server.state(game.uid)["game"]["seats"][other]["bot"] is False

    server.refused("seat", game.uid, "9", "--computer", words=("no seat 9",))
    server.refused("seat", game.uid, "0", "--computer", words=("from 1",))
    server.refused("seat", game.uid, str(other + 1), "--email", "nobody", words=("e-mail",))
    server.refused("seat", game.uid, str(other + 1), words=("--email ADDRESS",))
    server.refused("seat", game.uid, str(other + 1), "--email", "x@example.com", "--computer",
                   words=("--email ADDRESS",))
    server.refused("seat", game.uid, str(now + 1), "--computer", words=("already plays",))
    server.refused("seat", NO_GAME, "1", "--computer", words=("no game",))
    server.refused("resend", NO_GAME, words=("no game",))
    over = json.loads(server.ok("new-game", "--bot", "--bot", "--bot", "--start-with-bots",
                                "--json").stdout)["game"]
    server.refused("resend", over, words=("finished",))
    server.post(f"/api/games/{game.uid}/pause", {},
                headers={"X-Creator-Token": game.creator})
    server.refused("resend", game.uid, words=("paused",))


# ---------------------------------------------------------------------- rollback


def test_rollback_appends_an_entry_and_goes_back(server: Server) -> None:
    game = server.human_game()
    server.play(game, 4)
    back_to = server.state(game.uid)["seq"]
    then = server.state(game.uid)
    server.play(game, 4)
    before = server.log(game.uid)
    head = len(before)

    server.refused("rollback", game.uid, "--to", str(head), "--yes", words=(f"0 to {head - 1}",))
    server.refused("rollback", game.uid, "--to", "-1", "--yes", words=(f"0 to {head - 1}",))
    server.refused("rollback", NO_GAME, "--to", "1", "--yes", words=("no game",))
    waiting = created_uid(server.ok("new-game", "--seat", "ann@example.com", "--bot", "--bot"))
    server.refused("rollback", waiting, "--to", "0", "--yes", words=("nothing to roll back",))
    unchanged = server.fingerprint()
    asked = server.admin("rollback", game.uid, "--to", str(back_to), input="n\n")
    assert asked.exit_code == 1 and "Aborted" in asked.output
    assert server.fingerprint() == unchanged

    done = server.ok("rollback", game.uid, "--to", str(back_to), input="y\n").stdout
    assert f"appended entry {head + 1}: rollback {back_to}" in done
    assert "pending now: " in done
    after = server.log(game.uid)
    assert after[:head] == before  # append-only: the rolled-back entries are still there
    assert [(m["seq"], m["seat"], m["kind"], m["actor"], m["input"]) for m in after[head:]] == [
        (head + 1, None, "rollback", "admin", f"rollback {back_to}")]
    now = server.state(game.uid)
    assert now["seq"] == head + 1 and now["decision_seq"] == head + 1
    assert now["view"] == then["view"]
    assert now["game"]["to_act"] == then["game"]["to_act"]

    # every player is told (in their language), and the decision is asked anew
    notices = server.rows("SELECT recipient, seq FROM outbox WHERE kind = 'rollback' "
                          "ORDER BY recipient")
    assert notices == [(f"p{i}@example.com", head + 1) for i in range(3)]
    [asker] = now["game"]["to_act"]
    assert server.rows("SELECT recipient FROM outbox WHERE seq = :seq AND kind IN "
                       "('pick', 'turn', 'react', 'pirates')", seq=head + 1) == [
        (f"p{asker}@example.com",)]
    service = server.service()
    try:
        renderer = MailRenderer(service)
        with service.session() as s:
            rows = s.exec(select(OutboxMail).where(OutboxMail.kind == "rollback")
                          .order_by(col(OutboxMail.recipient))).all()
        mails = [renderer.render(row) for row in rows]
        assert f"went back to move {back_to}" in mails[0].subject
        assert f"wróciła do ruchu {back_to}" in mails[1].subject
        assert "administrator" in mails[0].text and not mails[0].images
        assert f"{head - back_to} entries" in mails[0].text
        assert service.verify(game.uid) == [] and service.verify_all() == {}
    finally:
        service.engine.dispose()

    shown = server.ok("replay", game.uid, "--to", str(head + 1)).stdout
    assert f"rollback {back_to}: back to the state after entry {back_to}" in shown
    assert "made by an admin" in shown
    server.play(game, 2)  # the game goes on from there
    assert len(server.log(game.uid)) == head + 3


def test_games_are_named_by_the_start_of_their_id_or_their_name(server: Server) -> None:
    first = created_uid(server.ok("new-game", "--name", "Tuesday race", "--bot", "--bot",
                                  "--bot", "--start-with-bots"))
    second = created_uid(server.ok("new-game", "--name", "Twin", "--bot", "--bot", "--bot",
                                   "--start-with-bots"))
    created_uid(server.ok("new-game", "--name", "Twin", "--bot", "--bot", "--bot"))
    prefix = first[:6] if first[:6] != second[:6] else first[:12]
    assert "the 1 game given replays" in server.ok("verify", prefix).stdout
    assert json.loads(server.ok("export", "tuesday RACE").stdout)["game"]["uid"] == first
    server.ok("replay", prefix.upper(), "--to", "0")
    newest = created_uid(server.ok("new-game", "--name", "Twin", "--bot", "--bot", "--bot"))
    both = server.ok("export", "twin")
    assert json.loads(both.stdout)["game"]["uid"] == newest
    assert f"names 3 games: the newest, {newest[:8]}, is meant" in both.stderr
    assert second[:8] in both.stderr
    created_uid(server.ok("new-game", "--name", prefix, "--bot", "--bot", "--bot"))
    server.refused("verify", prefix, words=("more than one game", "give more of the id"))
    server.refused("export", "no such race", words=("no game 'no such race'",))
    server.refused("start", "abc", words=("no game 'abc'",))  # (too short to be a prefix)


def test_a_game_is_named_by_the_start_of_its_name_as_the_players_commands_do(
        server: Server) -> None:
    """"Friday" names the game "Friday race" in the admin's commands as in the player's
    (issue 40); a start that several names share is refused, naming each of them."""
    friday = created_uid(server.ok("new-game", "--name", "Friday race", "--bot", "--bot",
                                   "--bot"))
    lunch = created_uid(server.ok("new-game", "--name", "Friday lunch", "--bot", "--bot",
                                  "--bot"))
    sunday = created_uid(server.ok("new-game", "--name", "Sunday", "--bot", "--bot", "--bot"))
    assert json.loads(server.ok("export", "sun").stdout)["game"]["uid"] == sunday
    assert json.loads(server.ok("export", "FRIDAY R").stdout)["game"]["uid"] == friday
    refused = server.refused("export", "friday", words=("more than one game",))
    assert f"{friday[:8]} (Friday race)" in refused, refused
    assert f"{lunch[:8]} (Friday lunch)" in refused, refused
    server.refused("export", "saturday", words=("no game 'saturday'",))
    server.refused("export", "%", words=("no game '%'",))  # (no wildcard in a prefix)


def test_an_admin_command_refuses_a_database_that_is_not_the_servers(tmp_path: Path) -> None:
    """Run without the server's settings, an admin command names the URL it tried and how to
    set it, and makes no empty SQLite file on the way (issue 40: it made one under
    ~/.local/share and failed with "no such table: games")."""
    unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("TITANPOST_")}

    def admin(url: str, *args: str) -> Result:
        return CliRunner().invoke(main, ["admin", *args], env=unset | {
            "TITANPOST_DATABASE_URL": url, "TITANPOST_ENV": "test", "COLUMNS": "200"})

    missing = tmp_path / "nothing-here.db"
    answer = admin(f"sqlite:///{missing}", "games")
    assert answer.exit_code == 1
    assert f"There is no database at sqlite:///{missing}." in answer.output
    assert "Set TITANPOST_DATABASE_URL (or --database-url)" in answer.output
    assert not missing.exists()
    empty = tmp_path / "empty.db"
    sa.create_engine(f"sqlite:///{empty}").connect().close()
    answer = admin(f"sqlite:///{empty}", "games")
    assert answer.exit_code == 1 and "has no Titan Post tables" in answer.output
    assert "titanpost db upgrade" in answer.output
    answer = admin("postgresql://someone:hunter2@127.0.0.1:1/titanpost", "games")
    assert answer.exit_code == 1
    assert "Cannot open the database at postgresql+psycopg://someone:***@127.0.0.1:1/" in (
        answer.output)
    assert "hunter2" not in answer.output
