"""A player's own data and leaving (app/features/privacy/): the download holds every kind of
row the server keeps about the address and nothing of another seat (two players' downloads never
hold each other's hands, notes or addresses), as JSON and as a ZIP; "forget me" is refused,
changing nothing, while the address still plays, and once it resigned it leaves no row that
holds the address, while the game stays verifiable and names the seat "a former player" in
English and Polish. Through the API and the page; on SQLite and PostgreSQL."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import SQLModel, col, select

from app.core.models import (
    Absence,
    GameNote,
    MailAddress,
    OutboxMail,
    PlayerGroup,
    PlayerGroupMember,
    PushSubscription,
    Seat,
    utcnow,
)
from app.features.fairness.records import check_record
from app.features.signin import signins
from tests.apifixtures import Api, Table, bearer, csrf_token
from tests.netutil import serve_in_thread
from tests.test_cli_player import Cli

pytest_plugins = ["tests.apifixtures"]

ANN = "ann@example.com"
BOB = "bob@example.com"
ANN_NOTE = "Ann's plan: save the shield for lap two"
BOB_NOTE = "Bob's plan: trap the bridge"


@pytest.fixture(autouse=True)
def _asks_answer_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sign-in asks without their floor (what is checked here is not how long they take)."""
    monkeypatch.setattr(signins, "ANSWER_FLOOR", 0.0)


def account_token(api: Api, email: str) -> str:
    """An account token of ``email``, signed in with the link mailed to it."""
    signins.ask_link(api.service, email, "127.0.0.1", "en")
    payloads = [row[0] for row in api.rows(
        "SELECT payload FROM outbox WHERE kind = 'signin' AND recipient = :to "
        "ORDER BY id", to=email)]
    payload = payloads[-1]
    token = (payload if isinstance(payload, dict) else json.loads(payload))["token"]
    used = api.client.post("/api/signin/use", json={"token": token})
    assert used.status_code == 200, used.get_json()
    return str(used.get_json()["account_token"])


def sign_in_browser(api: Api, email: str) -> Any:
    """A test client whose browser is signed in as ``email``."""
    client = api.app.test_client()
    signins.ask_link(api.service, email, "127.0.0.1", "en")
    payloads = [row[0] for row in api.rows(
        "SELECT payload FROM outbox WHERE kind = 'signin' AND recipient = :to "
        "ORDER BY id", to=email)]
    payload = payloads[-1]
    token = (payload if isinstance(payload, dict) else json.loads(payload))["token"]
    page = client.get(f"/signin/{token}").get_data(as_text=True)
    done = client.post(f"/signin/{token}", data={"csrf_token": csrf_token(page)})
    assert done.status_code == 303
    return client


@pytest.fixture
def world(api: Api) -> Iterator[tuple[Api, Table]]:
    """A game of Ann, Bob and the computer, started and a few moves in, with a row of every
    kind about Ann and about Bob: notes, chat, away dates, a push subscription, a mail
    standing, a group; and a finished computer game Ann owns."""
    table = api.accept_all(api.create([{"email": ANN, "name": "Ann"},
                                       {"email": BOB, "name": "Bob"}, {"bot": True}],
                                      name="Friday race"))
    api.start(table)
    api.play(table, 3)
    for position, text in ((0, "good luck, Bob"), (1, "thanks, Ann")):
        assert api.client.post(f"/api/games/{table.uid}/chat", json={"text": text},
                               headers=table.seat(position)).status_code == 201
    now = utcnow()
    with api.service.session(write=True) as s:
        seats = {seat.position: seat for seat in s.exec(
            select(Seat).where(col(Seat.email).in_([ANN, BOB])))}
        for position, email, note in ((0, ANN, ANN_NOTE), (1, BOB, BOB_NOTE)):
            seat = seats[position]
            assert seat.id is not None
            s.add(GameNote(game_id=seat.game_id, seat_id=seat.id, author=email, text=note,
                           seq=1))
            s.add(Absence(email=email, starts_at=now + timedelta(days=30),
                          ends_at=now + timedelta(days=40)))
            s.add(PushSubscription(seat_id=seat.id, endpoint=f"https://push.example.net/{email}",
                                   p256dh="k" * 20, auth="a" * 10))
            s.add(MailAddress(address=email, last_delivered_at=now, bounces=1,
                              bounce_reason=f"550 {email}: mailbox full"))
        group = PlayerGroup(uid="f" * 32, name="Friday club", owner_email=ANN)
        s.add(group)
        s.flush()
        assert group.id is not None
        s.add(PlayerGroupMember(group_id=group.id, email=ANN))
        s.add(PlayerGroupMember(group_id=group.id, email=BOB))
        s.commit()
    yield api, table


def data_of(api: Api, token: str, kind: str = "json", **headers: str) -> Any:
    answer = api.client.get(f"/api/account/data?format={kind}",
                            headers={**bearer(token), **headers})
    assert answer.status_code == 200, answer.get_data()[:300]
    assert answer.headers["Cache-Control"] == "no-store"
    assert answer.headers["Content-Disposition"].startswith("attachment; filename=")
    return answer


def seat_view(api: Api, table: Table, position: int) -> dict[str, Any]:
    """What a seat's own token reads of the game (its state and log) through the API."""
    state = api.client.get(f"/api/games/{table.uid}", headers=table.seat(position)).get_json()
    for seat in state["game"]["seats"]:
        seat.pop("mail_bouncing_since")
    log = api.client.get(f"/api/games/{table.uid}/log", headers=table.seat(position))
    return {"state": state, "log": log.get_json()["moves"]}


def hands(state: dict[str, Any]) -> dict[int, Any]:
    """Each seat's hand as ``state`` shows it (a list: its cards; a number: how many)."""
    return {titan["seat"]: titan["hand"] for titan in state["view"]["titans"].values()}


def test_the_download_holds_every_kind_and_nothing_of_another_seat(
        world: tuple[Api, Table]) -> None:
    api, table = world
    ann, bob = account_token(api, ANN), account_token(api, BOB)
    mine = data_of(api, ann).get_json()
    theirs = data_of(api, bob).get_json()
    assert mine["address"] == ANN and mine["format"] == 1
    assert mine["mail_standing"]["bounces"] == 1 and len(mine["away"]) == 1
    [seat] = mine["seats"]
    assert (seat["game"], seat["name"], seat["position"], seat["player_name"]) == (
        table.uid, "Friday race", 0, "P0")
    assert seat["api_tokens"] and set(seat["api_tokens"][0]) == {"label", "created_at",
                                                                "revoked_at"}
    assert seat["push_subscriptions"] == [{"service": "push.example.net",
                                           "created_at": seat["push_subscriptions"][0][
                                               "created_at"]}]
    assert [n["text"] for n in mine["notes"]] == [ANN_NOTE]
    assert [c["text"] for c in mine["chat"]] == ["good luck, Bob"]
    assert [m["kind"] for m in mine["mails"]] and all("payload" not in m for m in mine["mails"])
    assert {"requested_at", "used_at", "used_by"} <= set(mine["sign_ins"][0])
    assert [(g["name"], g["owner"], g["members"]) for g in mine["groups"]] == [
        ("Friday club", True, 2)]
    # the game as Ann's own token reads it: her hand, and of Bob's only how many cards
    seen = mine["games"][table.uid]
    assert {"state": seen["state"], "log": seen["log"]} == seat_view(api, table, 0)
    assert isinstance(hands(seen["state"])[0], list) and isinstance(hands(seen["state"])[1], int)
    assert isinstance(hands(theirs["games"][table.uid]["state"])[0], int)
    # neither holds the other's address, note, hand, token or secret
    mine_text, theirs_text = json.dumps(mine), json.dumps(theirs)
    assert BOB not in mine_text and BOB_NOTE not in mine_text and "thanks, Ann" not in mine_text
    assert ANN not in theirs_text and ANN_NOTE not in theirs_text
    secrets = [row[0] for row in api.rows("SELECT token_hash FROM api_tokens")]
    secrets += [row[0] for row in api.rows("SELECT secret FROM seats")]
    secrets += [row[0] for row in api.rows("SELECT token_id FROM signins")]
    assert not [s for s in secrets if s in mine_text or s in theirs_text]
    assert table.tokens[0] not in mine_text and "k" * 20 not in mine_text


def test_the_zip_holds_data_games_and_a_readme_in_the_reader_s_language(
        world: tuple[Api, Table]) -> None:
    api, table = world
    token = account_token(api, ANN)
    for language, words in (("en", "everything the server holds"),
                            ("pl", "wszystko, co serwer przechowuje")):
        answer = data_of(api, token, "zip", **{"Accept-Language": language})
        assert answer.mimetype == "application/zip"
        archive = zipfile.ZipFile(io.BytesIO(answer.get_data()))
        assert sorted(archive.namelist()) == sorted(
            ["README.txt", "data.json", f"games/{table.uid}.json"])
        assert words in archive.read("README.txt").decode()
        data = json.loads(archive.read("data.json"))
        assert data["games"] == [f"games/{table.uid}.json"] and data["notes"]
        game = json.loads(archive.read(f"games/{table.uid}.json"))
        assert game["game"] == table.uid and game["position"] == 0 and game["log"]
        assert BOB not in archive.read("data.json").decode()


def every_row(api: Api) -> dict[str, list[tuple[Any, ...]]]:
    names = [table.name for table in SQLModel.metadata.sorted_tables]
    with api.engine.connect() as connection:
        return {name: sorted((tuple(map(str, row)) for row in connection.execute(
            sa.text(f"SELECT * FROM {name}"))), key=repr) for name in names}


def holding(api: Api, text: str) -> list[str]:
    """Every table and column whose value holds ``text`` (any case), bytes too."""
    found = []
    with api.engine.connect() as connection:
        for table in SQLModel.metadata.sorted_tables:
            for row in connection.execute(sa.select(table)).mappings():
                for column, value in row.items():
                    shown = (value.decode("utf-8", "replace") if isinstance(value, bytes)
                             else json.dumps(value, default=str) if isinstance(value, dict | list)
                             else str(value))
                    if text.lower() in shown.lower():
                        found.append(f"{table.name}.{column}")
    return found


def test_forgetting_is_refused_while_playing_then_leaves_no_trace(
        world: tuple[Api, Table]) -> None:
    api, table = world
    token = account_token(api, ANN)
    before = every_row(api)
    wrong = api.client.post("/api/account/forget", json={"confirm": BOB}, headers=bearer(token))
    assert wrong.status_code == 400 and "type your address" in wrong.get_json()["error"]
    refused = api.client.post("/api/account/forget", json={"confirm": ANN},
                              headers={**bearer(token), "Accept-Language": "pl"})
    body = refused.get_json()
    assert refused.status_code == 409, body
    assert "Friday race" in body["error"] and "titanpost resign" in body["error"]
    assert [g["game"] for g in body["games"]] == [table.uid] and "Friday race" in body["message"]
    assert every_row(api) == before  # (nothing changed)
    assert api.client.post(f"/api/games/{table.uid}/resign",
                           headers=table.seat(0)).status_code == 200
    done = api.client.post("/api/account/forget", json={"confirm": f" {ANN.upper()} "},
                           headers=bearer(token))
    assert done.status_code == 200, done.get_json()
    removed = done.get_json()["removed"]
    assert removed["notes"] == 1 and removed["sign_ins"] >= 1 and removed["groups"] == 1
    assert holding(api, ANN) == []
    # Bob's rows stay whole, and the game goes on to its end
    assert [row[0] for row in api.rows("SELECT text FROM game_notes")] == [BOB_NOTE]
    assert api.scalar("SELECT count(*) FROM chat_messages") == 2
    assert api.client.get("/api/account/data", headers=bearer(token)).status_code == 401
    assert api.client.post(f"/api/games/{table.uid}/resign",
                           headers=table.seat(1)).status_code == 200
    assert api.state(table.uid)["game"]["status"] == "finished"
    assert api.service.verify(table.uid) == []
    assert check_record(api.service.fairness(table.uid, None)).fair
    seats = api.state(table.uid)["game"]["seats"]
    assert seats[0]["name"] == "a former player"
    for language, name in (("en", "a former player"), ("pl", "ktoś, kto już tu nie gra")):
        page = api.client.get(f"/games/{table.uid}?lang={language}").get_data(as_text=True)
        assert name in page and ANN not in page
    # Bob's own download names Ann's seat the same way, and Bob's mail still goes out
    assert "a former player" in json.dumps(data_of(api, account_token(api, BOB)).get_json())


def test_the_page_downloads_refuses_a_wrong_confirmation_and_forgets(
        world: tuple[Api, Table]) -> None:
    api, table = world
    client = sign_in_browser(api, ANN)
    games = client.get("/games").get_data(as_text=True)
    assert 'href="/account/data"' in games
    page = client.get("/account/data?lang=pl")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "Moje dane" in text and "Friday race" in text
    assert page.headers["Cache-Control"] == "no-store"
    download = client.get("/account/data/download.json")
    assert download.status_code == 200 and download.get_json()["address"] == ANN
    assert download.headers["Content-Disposition"].startswith("attachment")
    zipped = client.get("/account/data/download.zip?lang=pl")
    readme = zipfile.ZipFile(io.BytesIO(zipped.get_data())).read("README.txt").decode()
    assert "wszystko, co serwer przechowuje" in readme
    refused = client.post("/account/forget", data={"csrf_token": csrf_token(text),
                                                   "confirm": ANN})
    assert refused.status_code == 409 and "titanpost resign" in refused.get_data(as_text=True)
    api.client.post(f"/api/games/{table.uid}/resign", headers=table.seat(0))
    wrong = client.post("/account/forget", data={"csrf_token": csrf_token(text),
                                                 "confirm": "someone@example.com"})
    assert wrong.status_code == 400 and api.scalar(
        "SELECT count(*) FROM seats WHERE email = :e", e=ANN) == 1
    done = client.post("/account/forget?lang=pl", data={"csrf_token": csrf_token(text),
                                                        "confirm": ANN})
    assert done.status_code == 303 and "/account/forgotten" in done.headers["Location"]
    said = client.get(done.headers["Location"]).get_data(as_text=True)
    assert "ktoś, kto już tu nie gra" in said
    assert holding(api, ANN) == []
    assert client.get("/account/data").status_code == 303  # (signed out)
    assert ANN not in client.get("/games").get_data(as_text=True)


def test_a_finished_game_shows_a_former_player_to_the_others(api: Api) -> None:
    """A game over: forgetting needs no resignation, and the others' mail and pages name the
    seat "a former player" in their language."""
    table = api.accept_all(api.create([{"email": ANN, "name": "Ann"},
                                       {"email": BOB, "name": "Bob", "language": "pl"},
                                       {"bot": True}], name="Done race"))
    api.start(table)
    for position in (0, 1):
        api.client.post(f"/api/games/{table.uid}/resign", headers=table.seat(position))
    assert api.state(table.uid)["game"]["status"] == "finished"
    token = account_token(api, ANN)
    assert api.client.post("/api/account/forget", json={"confirm": ANN},
                           headers=bearer(token)).status_code == 200
    assert holding(api, ANN) == []
    with api.service.session() as s:
        rows = s.exec(select(OutboxMail).where(OutboxMail.recipient == "")).all()
        assert rows and all(r.payload == {} and r.body_purged_at is not None for r in rows)
    log = api.client.get(f"/games/{table.uid}/log?lang=pl").get_data(as_text=True)
    assert "ktoś, kto już tu nie gra" in log
    assert api.service.verify(table.uid) == []
    assert api.client.post(f"/api/games/{table.uid}/chat", json={"text": "hi"},
                           headers=table.seat(0)).status_code == 401
    # a rematch gives the forgotten seat to the computer, under the computer's name
    made = api.client.post(f"/api/games/{table.uid}/rematch", headers=table.seat(1))
    assert made.status_code == 201, made.get_json()
    seats = api.state(made.get_json()["game"])["game"]["seats"]
    assert (seats[0]["bot"], seats[0]["name"]) == (True, "Computer")
    assert holding(api, ANN) == []


@pytest.fixture
def served(world: tuple[Api, Table]) -> Iterator[tuple[Api, Table, str]]:
    """The world's app on a real port, for the command line."""
    from werkzeug.serving import make_server

    api, table = world
    server = make_server("127.0.0.1", 0, api.app, threaded=True)
    thread = serve_in_thread(server, "privacy-server")
    try:
        yield api, table, f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


def test_the_command_line_downloads_and_forgets(served: tuple[Api, Table, str],
                                                tmp_path: Path) -> None:
    api, table, url = served
    cli = Cli(tmp_path)
    assert "titanpost login EMAIL" in cli("my-data", code=1).output  # (not signed in)
    cli("login", ANN, "--server", url, input="\n", code=None)
    [payload] = [row[0] for row in api.rows(
        "SELECT payload FROM outbox WHERE kind = 'signin' AND recipient = :to", to=ANN)]
    token = (payload if isinstance(payload, dict) else json.loads(payload))["token"]
    cli("login", ANN, "--server", url, input=f"{url}/signin/{token}\n")
    out = tmp_path / "mine.json"
    assert str(out) in cli("my-data", "-o", str(out)).stdout
    data = json.loads(out.read_text())
    assert data["address"] == ANN and table.uid in data["games"] and BOB not in out.read_text()
    archive = tmp_path / "mine.zip"
    cli("my-data", "--zip", "-o", str(archive), env={"LANG": "pl_PL.UTF-8"})
    assert "data.json" in zipfile.ZipFile(archive).namelist()
    # refused while Ann plays: the game named, and the way out
    refused = cli("forget-me", "--yes", code=1)
    assert "Friday race" in refused.output and "titanpost resign" in refused.output
    assert api.scalar("SELECT count(*) FROM seats WHERE email = :e", e=ANN) == 1
    assert api.client.post(f"/api/games/{table.uid}/resign",
                           headers=table.seat(0)).status_code == 200
    mistyped = cli("forget-me", input="ann@example.org\n", code=1)
    assert "type your address" in mistyped.output
    done = cli("forget-me", input=f"{ANN}\n")
    assert f"{ANN} is forgotten" in done.stdout
    assert "accounts" not in json.loads(cli.config.read_text())
    assert holding(api, ANN) == []
    api.client.post(f"/api/games/{table.uid}/resign", headers=table.seat(1))
    # the others' checks of the game still pass: the admin's and anyone's
    checked = cli("admin", "verify", table.uid, env={"TITANPOST_DATABASE_URL": api.url})
    assert "replay" in checked.stdout
    assert cli("verify-fair", "--server", url, table.uid).stdout.startswith("fair:")
    shown = cli("show", table.uid, code=None)  # (no seat left here: the game is not Ann's)
    assert ANN not in shown.output
