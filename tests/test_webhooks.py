"""Per-game webhooks (app/features/webhooks/hooks.py): added by the owner over the API, written in
the move's transaction, posted by the worker to a real HTTP server on loopback, with retries."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import Session

from app.core.config import ConfigError, Settings
from app.core.models import utcnow
from app.features.clock.scheduler import Jobs
from app.features.webhooks.hooks import (
    MAX_ATTEMPTS,
    WebhookRefused,
    WebhookSender,
    add_webhook,
    check_url,
    in_language,
    summary,
)
from app.games.ui import game_ui
from app.service import GameEvent
from tests.apifixtures import Api, Table, dispose, make_api
from tests.netutil import serve_in_thread
from tests.test_pages import browser, create_through_pages, csrf

pytest_plugins = ["tests.apifixtures"]


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Hooks:
    """A real HTTP server on loopback: records every request, answers with ``answers`` (in
    order, then 204)."""

    url: str
    received: list[Received] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)


@pytest.fixture
def hooks() -> Iterator[Hooks]:
    state = Hooks(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            state.received.append(Received(self.path, dict(self.headers.items()),
                                           self.rfile.read(length)))
            status = state.answers.pop(0) if state.answers else 204
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    serve_in_thread(server)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def api(migrated_database_url: str) -> Iterator[Api]:
    made = make_api(migrated_database_url, TITANPOST_WEBHOOK_ALLOW_PRIVATE="1")
    yield made
    dispose(made)


def add_hook(api: Api, table: Table, url: str, fmt: str, expect: int = 201,
             **more: str) -> dict[str, Any]:
    response = api.client.post(f"/api/games/{table.uid}/webhooks",
                               json={"url": url, "format": fmt, **more}, headers=table.creator)
    assert response.status_code == expect, response.get_json()
    data: dict[str, Any] = response.get_json()
    return data


def prepared(api: Api, hooks: Hooks, *formats: str) -> Table:
    """A 3-seat game, accepted, with one webhook per format, started."""
    table = api.accept_all(api.create(3))
    for fmt in formats:
        add_hook(api, table, f"{hooks.url}/{fmt}", fmt)
    api.start(table)
    return table


def outbox(api: Api) -> list[tuple[Any, ...]]:
    return api.rows("SELECT event, attempts, sent_at IS NOT NULL, last_error "
                    "FROM webhook_outbox ORDER BY id")


def test_each_format_gets_its_body(api: Api, hooks: Hooks) -> None:
    table = prepared(api, hooks, "discord", "slack", "matrix", "ntfy", "json")
    report = WebhookSender(api.service).run_once()
    assert report.sent == 5 and report.claimed == 5
    by_path = {r.path.strip("/"): r for r in hooks.received}
    link = f"{api.service.settings.base_url}/games/{table.uid}"
    assert by_path["discord"].json()["content"].endswith(link)
    assert "to play" in by_path["discord"].json()["content"]
    assert by_path["slack"].json()["text"] == by_path["discord"].json()["content"]
    assert by_path["matrix"].json()["text"] == by_path["slack"].json()["text"]
    ntfy = by_path["ntfy"]
    assert ntfy.body.decode() == by_path["slack"].json()["text"]
    assert ntfy.headers["Title"] == "Your turn" and ntfy.headers["Click"] == link
    ours = by_path["json"].json()
    to_act = api.to_act(table.uid, table.tokens[0])
    assert ours["event"] == "turn" and ours["game"] == table.uid and ours["link"] == link
    assert ours["positions"] == to_act and ours["players"] == [f"P{p}" for p in to_act]
    # nothing is due any more: sent rows are never sent again
    assert WebhookSender(api.service).run_once(utcnow() + timedelta(days=1)).claimed == 0
    assert len(hooks.received) == 5


def test_game_over_tells_the_winner(api: Api, hooks: Hooks) -> None:
    table = api.create([{"bot": True}] * 3)
    add_hook(api, table, f"{hooks.url}/json", "json")
    assert api.start(table)["status"] == "finished"
    WebhookSender(api.service).run_once()
    [post] = hooks.received
    winner = api.scalar("SELECT winner FROM games WHERE uid = :uid", uid=table.uid)
    assert post.json()["event"] == "game_over" and post.json()["winner"] == winner
    # (the machine field keeps the piece's id; the line names it as the pages do)
    assert winner and f"{game_ui('titan-race').piece_name(winner, 'en')} wins" in (
        post.json()["text"])


def test_an_abandoned_game_tells_every_format(api: Api, hooks: Hooks) -> None:
    table = prepared(api, hooks, "discord", "slack", "matrix", "ntfy", "json")
    WebhookSender(api.service).run_once()  # the first turn's posts
    hooks.received.clear()
    abandoned = api.client.post(f"/api/games/{table.uid}/abandon", headers=table.creator)
    assert abandoned.status_code == 200, abandoned.get_json()
    assert [row[0] for row in outbox(api)] == ["turn"] * 5 + ["game_abandoned"] * 5
    assert WebhookSender(api.service).run_once().sent == 5
    by_path = {r.path.strip("/"): r for r in hooks.received}
    link = f"{api.service.settings.base_url}/games/{table.uid}"
    line = by_path["slack"].json()["text"]
    assert "abandoned" in line and line.endswith(link) and "to play" not in line
    assert by_path["discord"].json()["content"] == line
    assert by_path["matrix"].json()["text"] == line
    assert by_path["ntfy"].body.decode() == line
    assert by_path["ntfy"].headers["Title"] == "Game abandoned"
    assert by_path["ntfy"].headers["Click"] == link
    ours = by_path["json"].json()
    assert ours == {"event": "game_abandoned", "game": table.uid, "name": ours["name"],
                    "link": link, "language": "en", "text": line}
    # abandoned once: a second abandon is refused and tells nobody again
    again = api.client.post(f"/api/games/{table.uid}/abandon", headers=table.creator)
    assert again.status_code == 409
    assert len(outbox(api)) == 10
    assert WebhookSender(api.service).run_once(utcnow() + timedelta(days=1)).claimed == 0


def test_a_game_abandoned_before_its_start_tells_its_webhooks(api: Api, hooks: Hooks) -> None:
    table = api.create(3)
    add_hook(api, table, f"{hooks.url}/json", "json")
    assert api.client.post(f"/api/games/{table.uid}/abandon",
                           headers=table.creator).status_code == 200
    assert WebhookSender(api.service).run_once().sent == 1
    [post] = hooks.received
    assert post.json()["event"] == "game_abandoned" and post.json()["game"] == table.uid


class Refuse:
    """A game-service listener that fails the abandonment it is told of (after the webhook
    listener has written its rows), as a database error there would."""

    def __call__(self, s: Session, event: GameEvent) -> None:
        if event.kind == "abandoned":
            raise RuntimeError("the abandonment's transaction fails here")


def test_the_abandoned_rows_are_written_in_the_abandonment_transaction(
        api: Api, hooks: Hooks) -> None:
    table = prepared(api, hooks, "json")
    before = outbox(api)
    refuse = api.service.listener(Refuse, Refuse)
    try:
        with pytest.raises(RuntimeError):
            api.service.abandon(table.uid, table.creator_token)
    finally:
        api.service.listeners.remove(refuse)
    assert outbox(api) == before  # neither the game's new status nor its webhook rows
    assert api.scalar("SELECT status FROM games WHERE uid = :uid", uid=table.uid) == "active"
    api.service.abandon(table.uid, table.creator_token)
    assert [row[0] for row in outbox(api)] == ["turn", "game_abandoned"]


def test_retried_after_a_500_then_sent_exactly_once(api: Api, hooks: Hooks) -> None:
    prepared(api, hooks, "slack")
    hooks.answers = [500]
    sender = WebhookSender(api.service)
    now = utcnow()
    assert sender.run_once(now).failed == 1
    assert outbox(api) == [("turn", 1, False, "HTTP 500: ")]
    assert sender.run_once(now + timedelta(seconds=30)).claimed == 0  # backing off
    assert sender.run_once(now + timedelta(minutes=2)).sent == 1
    assert sender.run_once(now + timedelta(days=1)).claimed == 0
    assert len(hooks.received) == 2
    assert outbox(api) == [("turn", 2, True, None)]


def test_given_up_after_a_400(api: Api, hooks: Hooks) -> None:
    prepared(api, hooks, "discord")
    hooks.answers = [400]
    sender = WebhookSender(api.service)
    assert sender.run_once().gave_up == 1
    assert sender.run_once(utcnow() + timedelta(days=1)).claimed == 0
    assert len(hooks.received) == 1
    [(_, attempts, sent, error)] = outbox(api)
    assert attempts == MAX_ATTEMPTS and not sent and error.startswith("gave up: HTTP 400")


def test_a_429_is_retried(api: Api, hooks: Hooks) -> None:
    prepared(api, hooks, "json")
    hooks.answers = [429]
    assert WebhookSender(api.service).run_once().failed == 1
    assert WebhookSender(api.service).run_once(utcnow() + timedelta(minutes=2)).sent == 1


def pass_the_turn(api: Api, table: Table) -> None:
    """Play first options until another seat is to act."""
    first = api.actor(table)[0]
    while True:
        position, opts = api.actor(table)
        if position != first:
            return
        status, body = api.submit(table, position, opts["seq"], opts["options"][0])
        assert status == 200 and body["applied"] is True, body


def test_a_move_writes_its_row_a_refused_move_none(api: Api, hooks: Hooks) -> None:
    table = prepared(api, hooks, "json")
    assert len(outbox(api)) == 1
    position, opts = api.actor(table)
    status, _ = api.submit(table, position, opts["seq"] + 5, opts["options"][0])
    assert status == 409
    assert len(outbox(api)) == 1
    pass_the_turn(api, table)  # (the move that hands the turn on writes the row)
    assert len(outbox(api)) == 2
    # the worker's job sends them all
    Jobs(api.service).send_webhooks()
    assert len(hooks.received) == 2


def test_an_unreachable_address_is_retried_without_its_secret_in_the_error(
        api: Api, hooks: Hooks) -> None:
    table = api.accept_all(api.create(3))
    add_hook(api, table, "http://127.0.0.1:9/secret-token", "discord")  # (the discard port)
    api.start(table)
    assert WebhookSender(api.service, timeout=2).run_once().failed == 1
    [(_, attempts, sent, error)] = outbox(api)
    assert attempts == 1 and not sent
    assert error.startswith("ConnectionError posting to 127.0.0.1") and "secret" not in error


def test_owner_adds_lists_and_removes(api: Api, hooks: Hooks) -> None:
    table = api.create(3)
    added = add_hook(api, table, f"{hooks.url}/x", "ntfy")
    listed = api.client.get(f"/api/games/{table.uid}/webhooks", headers=table.creator)
    assert listed.status_code == 200
    assert [h["id"] for h in listed.get_json()["webhooks"]] == [added["id"]]
    stranger = api.client.get(f"/api/games/{table.uid}/webhooks",
                              headers={"X-Creator-Token": "wrong"})
    assert stranger.status_code == 403
    gone = api.client.delete(f"/api/games/{table.uid}/webhooks/{added['id']}",
                             headers=table.creator)
    assert gone.status_code == 200
    again = api.client.delete(f"/api/games/{table.uid}/webhooks/{added['id']}",
                              headers=table.creator)
    assert again.status_code == 404
    api.accept_all(table)
    api.start(table)
    assert outbox(api) == []


@pytest.mark.parametrize("url, fmt", [("ftp://example.com/x", "json"),
                                      ("http://example.com/x", "telegram"),
                                      ("not a url", "json")])
def test_bad_webhooks_are_refused_and_change_nothing(api: Api, url: str, fmt: str) -> None:
    table = api.create(3)
    refused = add_hook(api, table, url, fmt, expect=400)
    assert refused["error"]
    assert api.rows("SELECT * FROM webhooks") == []


def test_private_addresses_need_the_setting(migrated_database_url: str) -> None:
    for url in ("http://127.0.0.1:9/x", "http://10.1.2.3/x", "http://[::1]/x",
                "http://localhost/x", "http://169.254.169.254/latest"):
        with pytest.raises(WebhookRefused, match="has no public address"):
            check_url(url, allow_private=False)
        assert check_url(url, allow_private=True) == url
    strict = make_api(migrated_database_url)
    try:
        table = strict.create(3)
        response = strict.client.post(f"/api/games/{table.uid}/webhooks", headers=table.creator,
                                      json={"url": "http://127.0.0.1:9/x", "format": "json"})
        assert response.status_code == 400
        assert "has no public address" in response.get_json()["error"]
    finally:
        dispose(strict)


def test_the_setting_is_read_and_checked() -> None:
    assert Settings.from_env({"TITANPOST_WEBHOOK_ALLOW_PRIVATE": "1"}).webhook_allow_private
    assert not Settings.from_env({}).webhook_allow_private
    with pytest.raises(ConfigError, match="TITANPOST_WEBHOOK_ALLOW_PRIVATE"):
        Settings.from_env({"TITANPOST_WEBHOOK_ALLOW_PRIVATE": "maybe"})



def test_the_owner_page_adds_and_removes_webhooks(api: Api, hooks: Hooks) -> None:
    owner = browser(api)
    uid, html = create_through_pages(api, owner)
    assert "Add webhook" in html
    other = browser(api)
    assert "Add webhook" not in other.get(f"/games/{uid}/setup").text
    token = csrf(owner, f"/games/{uid}/setup")
    refused = owner.post(f"/games/{uid}/webhooks", data={"csrf_token": token,
                                                          "url": "gopher://x", "format": "json"})
    assert refused.status_code == 400 and api.rows("SELECT * FROM webhooks") == []
    stranger = other.post(f"/games/{uid}/webhooks", data={
        "csrf_token": csrf(other, "/new"), "url": f"{hooks.url}/x", "format": "json"})
    assert stranger.status_code == 403 and api.rows("SELECT * FROM webhooks") == []
    added = owner.post(f"/games/{uid}/webhooks", data={"csrf_token": token,
                                                        "url": f"{hooks.url}/x", "format": "slack"})
    assert added.status_code == 303
    [(hook_id, url, fmt)] = api.rows("SELECT id, url, format FROM webhooks")
    assert (url, fmt) == (f"{hooks.url}/x", "slack")
    page = owner.get(f"/games/{uid}/setup").text
    assert f'data-webhook="{hook_id}"' in page
    removed = owner.post(f"/games/{uid}/webhooks/{hook_id}/remove", data={"csrf_token": token})
    assert removed.status_code == 303 and api.rows("SELECT * FROM webhooks") == []


# ------------------------------------------------------------------ languages


def title(received: Received) -> str:
    """The ntfy Title header as ntfy reads it (an RFC 2047 encoded-word when not ASCII)."""
    value = received.headers["Title"]
    assert value.isascii()
    if value.startswith("=?utf-8?b?") and value.endswith("?="):
        return base64.b64decode(value[len("=?utf-8?b?"):-2]).decode()
    return value


def test_a_polish_webhook_posts_polish_text_an_english_one_english(
        api: Api, hooks: Hooks) -> None:
    table = api.accept_all(api.create(3))
    for fmt in ("slack", "ntfy", "json"):
        add_hook(api, table, f"{hooks.url}/pl-{fmt}", fmt, language="pl")
    add_hook(api, table, f"{hooks.url}/en-slack", "slack")
    add_hook(api, table, f"{hooks.url}/en-json", "json", language="en")
    api.start(table)
    assert WebhookSender(api.service).run_once().sent == 5
    by_path = {r.path.strip("/"): r for r in hooks.received}
    name = api.scalar("SELECT name FROM games WHERE uid = :uid", uid=table.uid) or table.uid
    link = f"{api.service.settings.base_url}/games/{table.uid}"
    players = ", ".join(f"P{p}" for p in api.to_act(table.uid, table.tokens[0]))
    polish = f"Titan Post: gra {name}, kolej na: {players}. {link}"
    assert by_path["pl-slack"].json()["text"] == polish
    assert by_path["pl-ntfy"].body.decode() == polish
    assert title(by_path["pl-ntfy"]) == "Twój ruch"
    assert by_path["en-slack"].json()["text"] == f"Titan Post: {name}, {players} to play. {link}"
    # json: the same machine fields in each language, its language and its words added
    ours, theirs = by_path["pl-json"].json(), by_path["en-json"].json()
    assert ours.pop("language") == "pl" and theirs.pop("language") == "en"
    assert ours.pop("text") == polish and theirs.pop("text") != polish
    assert ours == theirs and ours["event"] == "turn"

    hooks.received.clear()
    abandoned = api.client.post(f"/api/games/{table.uid}/abandon", headers=table.creator)
    assert abandoned.status_code == 200
    assert WebhookSender(api.service).run_once().sent == 5
    by_path = {r.path.strip("/"): r for r in hooks.received}
    gone = f"Titan Post: gra {name} została porzucona: nie przyjmuje już ruchów. {link}"
    assert by_path["pl-slack"].json()["text"] == gone
    assert by_path["pl-ntfy"].body.decode() == gone
    assert title(by_path["pl-ntfy"]) == by_path["pl-ntfy"].headers["Title"] == "Gra porzucona"
    assert by_path["pl-json"].json() == {"event": "game_abandoned", "game": table.uid,
                                         "name": ours["name"], "link": link,
                                         "language": "pl", "text": gone}
    assert by_path["en-slack"].json()["text"] == (
        f"Titan Post: {name} was abandoned: it takes no more moves. {link}")


def test_a_polish_webhook_tells_the_winner_in_polish(api: Api, hooks: Hooks) -> None:
    table = api.create([{"bot": True}] * 3)
    add_hook(api, table, f"{hooks.url}/json", "json", language="pl")
    add_hook(api, table, f"{hooks.url}/ntfy", "ntfy", language="pl")
    assert api.start(table)["status"] == "finished"
    assert WebhookSender(api.service).run_once().sent == 2
    by_path = {r.path.strip("/"): r for r in hooks.received}
    winner = api.scalar("SELECT winner FROM games WHERE uid = :uid", uid=table.uid)
    name = api.scalar("SELECT name FROM games WHERE uid = :uid", uid=table.uid) or table.uid
    link = f"{api.service.settings.base_url}/games/{table.uid}"
    polish_name = game_ui("titan-race").piece_name(winner, "pl")
    over = f"Titan Post: gra {name} zakończona, wygrywa {polish_name}. {link}"
    ours = by_path["json"].json()
    assert (ours["event"], ours["winner"], ours["language"], ours["text"]) == (
        "game_over", winner, "pl", over)
    assert by_path["ntfy"].body.decode() == over and title(by_path["ntfy"]) == "Koniec gry"


def test_the_words_without_a_game_service() -> None:
    """The worded parts no game here reaches: no winner, two winners, a player without a name,
    and a row written before rows were worded (English, as it was worded then)."""
    payload = {"event": "game_over", "game": "g", "name": "Race", "link": "L", "winner": None}
    assert summary({**payload, "language": "pl"}) == (
        "Titan Post: gra Race zakończona, bez zwycięzcy. L")
    assert summary({**payload, "language": "en"}) == "Titan Post: Race is over, no winner. L"
    assert summary(payload) == summary({**payload, "language": "en"})
    assert summary({**payload, "language": "xx"}) == summary(payload)
    teams = {**payload, "winner": "craken,grinder"}
    assert in_language(teams, "pl", "titan-race")["text"] == (
        "Titan Post: gra Race zakończona, wygrywają Kraken, Masakrator. L")
    assert in_language(teams, "en", "titan-race")["text"] == (
        "Titan Post: Race is over, Craken, Grinder win. L")
    turn = {"event": "turn", "game": "g", "name": "", "link": "L", "positions": [0, 2],
            "players": ["Ann", None]}
    worded = in_language(turn, "pl", "titan-race")
    assert worded["players"] == ["Ann", "miejsce 3"]  # position 2 is the third seat
    assert worded["text"] == "Titan Post: gra g, kolej na: Ann, miejsce 3. L"
    assert in_language(turn, "en", "titan-race")["text"] == (
        "Titan Post: g, Ann, seat 3 to play. L")


def test_a_row_keeps_the_language_its_webhook_had_when_written(api: Api, hooks: Hooks) -> None:
    table = prepared(api, hooks, "slack")  # English: the first turn's row is written
    with api.engine.begin() as conn:  # (no API changes it yet; a later one may)
        conn.execute(sa.text("UPDATE webhooks SET language = 'pl'"))
    pass_the_turn(api, table)
    assert WebhookSender(api.service).run_once().sent == 2
    first, second = (r.json()["text"] for r in hooks.received)
    assert "to play" in first and "kolej na" in second


def test_an_unknown_language_is_refused_and_changes_nothing(api: Api, hooks: Hooks) -> None:
    table = api.create(3)
    refused = add_hook(api, table, f"{hooks.url}/x", "json", expect=400, language="xx")
    assert refused["detail"]["json"]["language"] == ["Must be one of: en, pl."]
    assert api.rows("SELECT * FROM webhooks") == []
    with pytest.raises(WebhookRefused) as caught:
        add_webhook(api.service, table.uid, table.creator_token, f"{hooks.url}/x", "json",
                    language="de")
    assert caught.value.message == "unknown webhook language 'de' (known: en, pl)"
    assert caught.value.say("pl") == "nieznany język webhooka „de” (znane: en, pl)"
    assert api.rows("SELECT * FROM webhooks") == []
    added = add_hook(api, table, f"{hooks.url}/x", "json", language="pl")
    assert added["language"] == "pl"
    listed = api.client.get(f"/api/games/{table.uid}/webhooks", headers=table.creator)
    assert [(h["id"], h["language"]) for h in listed.get_json()["webhooks"]] == [
        (added["id"], "pl")]
    assert add_hook(api, table, f"{hooks.url}/y", "json")["language"] == "en"


def test_the_owner_page_adds_a_polish_webhook(api: Api, hooks: Hooks) -> None:
    owner = browser(api)
    uid, _ = create_through_pages(api, owner)
    page = owner.get(f"/games/{uid}/setup?lang=pl").text
    assert "Język powiadomień" in page
    assert '<option value="pl" lang="pl" selected>polski</option>' in page  # the page's
    token = csrf(owner, f"/games/{uid}/setup?lang=pl")
    refused = owner.post(f"/games/{uid}/webhooks?lang=pl", data={
        "csrf_token": token, "url": f"{hooks.url}/x", "format": "json", "language": "xx"})
    assert refused.status_code == 400 and "nieznany język webhooka" in refused.text
    assert api.rows("SELECT * FROM webhooks") == []
    added = owner.post(f"/games/{uid}/webhooks?lang=pl", data={
        "csrf_token": token, "url": f"{hooks.url}/x", "format": "ntfy", "language": "pl"})
    assert added.status_code == 303
    # a form without the field (an older page) takes the page's language
    owner.post(f"/games/{uid}/webhooks", data={"csrf_token": token, "url": f"{hooks.url}/y",
                                                "format": "json"})
    assert api.rows("SELECT url, format, language FROM webhooks ORDER BY id") == [
        (f"{hooks.url}/x", "ntfy", "pl"), (f"{hooks.url}/y", "json", "en")]
    page = owner.get(f"/games/{uid}/setup?lang=pl").text
    assert 'data-language="pl">ntfy (<span lang="pl">polski</span>)' in page
    assert '<option value="en" lang="en" selected>English</option>' in owner.get(
        f"/games/{uid}/setup").text


# ------------------------------------------------------------------ no mentions, signatures


def verify_standard_webhook(secret: str, received: Received) -> int:
    """Check a post's Standard Webhooks signature independently (HMAC-SHA256 over
    ``id.timestamp.body`` keyed with the secret's base64 after ``whsec_``); its timestamp."""
    headers = {name.lower(): value for name, value in received.headers.items()}
    message_id, sent_at = headers["webhook-id"], headers["webhook-timestamp"]
    assert secret.startswith("whsec_")
    key = base64.b64decode(secret[len("whsec_"):])
    assert len(key) >= 24
    expected = base64.b64encode(hmac.new(
        key, f"{message_id}.{sent_at}.".encode() + received.body, hashlib.sha256).digest())
    versions = dict(part.split(",", 1) for part in headers["webhook-signature"].split())
    assert hmac.compare_digest(versions["v1"].encode(), expected)
    return int(sent_at)


def test_json_posts_are_signed_and_the_secret_is_shown_once(api: Api, hooks: Hooks) -> None:
    table = api.accept_all(api.create(3))
    ours = add_hook(api, table, f"{hooks.url}/json", "json")
    chat = add_hook(api, table, f"{hooks.url}/slack", "slack")
    secret = ours["secret"]
    assert secret.startswith("whsec_") and ours["signed"] is True
    assert chat["secret"] is None and chat["signed"] is False
    listed = api.client.get(f"/api/games/{table.uid}/webhooks", headers=table.creator)
    assert "whsec_" not in listed.get_data(as_text=True)  # shown once, never again
    assert [hook["signed"] for hook in listed.get_json()["webhooks"]] == [True, False]
    api.start(table)
    hooks.answers = [500]  # the json post's first attempt fails, the second is taken
    sender = WebhookSender(api.service)
    now = utcnow()
    sender.run_once(now)
    sender.run_once(now + timedelta(minutes=2))
    posts = [r for r in hooks.received if r.path == "/json"]
    assert len(posts) == 2
    for post in posts:
        sent_at = verify_standard_webhook(secret, post)
        assert abs(sent_at - now.timestamp()) < 600
        assert post.json()["event"] == "turn"
    assert posts[0].headers["webhook-id"] == posts[1].headers["webhook-id"]  # (a retry)
    tampered = Received(posts[0].path, posts[0].headers, posts[0].body.replace(b"turn", b"tarn"))
    with pytest.raises(AssertionError):
        verify_standard_webhook(secret, tampered)
    [slack] = [r for r in hooks.received if r.path == "/slack"]
    assert not {h.lower() for h in slack.headers} & {"webhook-id", "webhook-signature"}


def test_a_json_webhook_added_before_signing_posts_unsigned(api: Api, hooks: Hooks) -> None:
    """Migration 0011 gives the webhooks it finds no secret: nobody was shown one."""
    table = api.accept_all(api.create(3))
    add_hook(api, table, f"{hooks.url}/json", "json")
    with api.engine.begin() as conn:
        conn.execute(sa.text("UPDATE webhooks SET secret = NULL"))
    api.start(table)
    assert WebhookSender(api.service).run_once().sent == 1
    [post] = hooks.received
    assert post.json()["event"] == "turn"
    assert "webhook-signature" not in {h.lower() for h in post.headers}


MENTIONS = "@everyone @here <!channel> <!here> <@U024BE7LH> <@&123> & co"


def test_discord_and_slack_posts_mention_nobody(api: Api, hooks: Hooks) -> None:
    table = api.create(3, name=MENTIONS)
    for position, invite in sorted(table.invitations.items()):
        accepted = api.client.post("/api/invitations/accept", json={
            "invite_token": invite, "name": f"<!everyone> @here P{position}"})
        assert accepted.status_code == 201
    for fmt in ("discord", "slack"):
        add_hook(api, table, f"{hooks.url}/{fmt}", fmt)
    api.start(table)
    assert WebhookSender(api.service).run_once().sent == 2
    by_path = {r.path.strip("/"): r.json() for r in hooks.received}
    discord = by_path["discord"]
    assert discord["allowed_mentions"] == {"parse": []}
    assert MENTIONS in discord["content"]  # (shown as written, pinging nobody)
    slack = by_path["slack"]["text"]
    for mention in ("<!channel>", "<!here>", "<@U024BE7LH>", "<!everyone>", "<@&123>"):
        assert mention not in slack
    assert "&lt;!channel&gt;" in slack and "&lt;@U024BE7LH&gt;" in slack
    assert "&amp; co" in slack and "&lt;!everyone&gt; @here P" in slack


def test_the_owner_page_shows_a_json_webhooks_secret_once(api: Api, hooks: Hooks) -> None:
    owner = browser(api)
    uid, _ = create_through_pages(api, owner)
    token = csrf(owner, f"/games/{uid}/setup")
    added = owner.post(f"/games/{uid}/webhooks", data={"csrf_token": token, "format": "json",
                                                        "url": f"{hooks.url}/x"})
    assert added.status_code == 303
    [(secret,)] = api.rows("SELECT secret FROM webhooks")
    page = owner.get(added.location).text
    assert secret in page and "signed" in page
    assert secret not in owner.get(added.location).text  # shown once


@pytest.mark.parametrize("url", ["http://example.com/a b", "http://example.com/\u202e",
                                 "http://exa\u2028mple.com/", "http://example.com/\tx"])
def test_an_address_with_spaces_or_marks_is_refused(api: Api, url: str) -> None:
    table = api.create(3)
    refused = add_hook(api, table, url, "json", expect=400)
    assert refused["error"]
    assert api.rows("SELECT * FROM webhooks") == []


def turn_posts(api: Api) -> list[tuple[str, list[int]]]:
    rows = api.rows("SELECT event, payload FROM webhook_outbox ORDER BY id")
    return [(event, (payload if isinstance(payload, dict) else json.loads(payload))
             .get("positions", [])) for event, payload in rows]


def test_a_turn_is_posted_when_the_player_to_act_changes(api: Api, hooks: Hooks) -> None:
    table = prepared(api, hooks, "json")
    decisions = [api.actor(table)[0]]
    for _ in range(40):
        position, opts = api.actor(table)
        status, body = api.submit(table, position, opts["seq"], opts["options"][0])
        assert status == 200 and body["applied"] is True, body
        decisions.append(api.actor(table)[0])
    posts = turn_posts(api)
    # the players to act, each time it changed: one post each, never the same one twice running
    changes = [p for i, p in enumerate(decisions) if i == 0 or decisions[i - 1] != p]
    assert len(changes) < len(decisions)  # (a turn of several decisions was played)
    assert posts == [("turn", [p]) for p in changes]


def test_the_end_is_posted_after_the_last_turn(api: Api, hooks: Hooks) -> None:
    table = api.create([{"email": "p0@example.com"}, {"bot": True}, {"bot": True}])
    api.accept_all(table)
    add_hook(api, table, f"{hooks.url}/json", "json")
    api.start(table)
    while api.state(table.uid)["game"]["status"] == "active":
        position, opts = api.actor(table)
        api.submit(table, position, opts["seq"], opts["options"][0])
    posts = turn_posts(api)
    assert posts[-1][0] == "game_over" and [e for e, _ in posts].count("game_over") == 1
    assert all(e == "turn" and p == [0] for e, p in posts[:-1]) and len(posts) == 2


def test_each_planning_round_of_the_great_race_is_posted(api: Api, hooks: Hooks) -> None:
    table = api.accept_all(api.create(3, game="great-race"))
    add_hook(api, table, f"{hooks.url}/json", "json")
    api.start(table)
    rounds = 0
    for _ in range(200):
        acting = api.to_act(table.uid, table.tokens[0])
        if len(acting) > 1 and all(p in acting for p in range(3)):
            rounds += 1
            if rounds == 3:
                break
        position = acting[0]
        opts = api.options(table, position)
        status, body = api.submit(table, position, opts["seq"], opts["options"][0])
        assert status == 200, body
    assert rounds == 3
    everyone = [p for e, p in turn_posts(api) if e == "turn" and p == [0, 1, 2]]
    assert len(everyone) == 3  # each round told once, though the same seats were told before
