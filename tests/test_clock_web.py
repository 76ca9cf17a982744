"""The game clock from the JSON API and the web pages, on SQLite and PostgreSQL.

Pause and resume, the open deadlines, away dates, quiet hours and seat replacement over the API;
the new-game form's clock settings, the game page's clock (deadline, time bank, pause, missed
deadlines), the away-dates page and replacing a player from the set-up page. Every refusal is
checked to change nothing in the database; time is moved on with the timekeeper's
``process_due``.
"""

from __future__ import annotations

import ast
import re
import string
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from app.core.i18n import catalogue
from app.web.browser_seats import store_seat
from app.web.pages.common import TIMEOUT_ACTION_WORDS
from app.web.pages.log import ACTOR_WORDS, HANDOVER_WORDS
from app.web.pages.me import AWAY_MODE_WORDS
from app.web.pages.newgame import HANDOVER_CHOICE_WORDS, parse_new_game
from tests.apifixtures import SEED, Api, Table, bearer, clock, table_rows
from tests.cases import each_case, labelled
from tests.test_pages import invitation_links, new_game_form

pytest_plugins = ["tests.apifixtures"]

ROOT = Path(__file__).resolve().parent.parent
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
TABLES = ("games", "seats", "moves", "snapshots", "api_tokens", "deadlines", "absences",
          "outbox")
UNKNOWN_UID = "0123456789abcdef0123456789abcdef"
WARSAW = "Europe/Warsaw"


# ---------------------------------------------------------------------- helpers


def rows(api: Api) -> dict[str, list[tuple[Any, ...]]]:
    """Every row a refused request must leave as it was."""
    return table_rows(api, *TABLES)


def error_of(response: TestResponse, status: int) -> dict[str, Any]:
    """A JSON refusal with ``status`` and a message; its body."""
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True))
    assert response.is_json, response.get_data(as_text=True)
    body: dict[str, Any] = response.get_json()
    assert isinstance(body.get("error"), str) and body["error"].strip(), body
    return body


def browser(api: Api) -> FlaskClient:
    client: FlaskClient = api.app.test_client()
    return client


def csrf(client: FlaskClient, url: str) -> str:
    page = client.get(url)
    assert page.status_code == 200, page.text
    found = CSRF.search(page.text)
    assert found, f"no CSRF token on {url}"
    return found.group(1)


def give_seat(client: FlaskClient, uid: str, position: int) -> None:
    secret = client.application.extensions["titanpost.service"].link_seat(uid, position).secret
    with client.session_transaction() as sess:
        store_seat(sess, uid, position, secret)


def give_creator(client: FlaskClient, uid: str, token: str) -> None:
    with client.session_transaction() as sess:
        sess["created"] = {**sess.get("created", {}), uid: {"token": token, "invites": {}}}


@dataclass
class Race:
    """A started game of Ann (seat 0), Ben (seat 1) and the computer (seat 2): a browser per
    player, and the creator's browser (which holds no seat)."""

    uid: str
    creator_token: str
    tokens: dict[int, str]
    clients: dict[int, FlaskClient]
    creator: FlaskClient

    @property
    def url(self) -> str:
        return f"/games/{self.uid}"


def start_race(api: Api, *, settings: dict[str, Any] | None = None,
               zones: dict[int, str] | None = None,
               languages: tuple[str, str] = ("en", "en")) -> Race:
    seats: list[dict[str, Any]] = [
        {"email": "ann@example.com", "name": "Ann", "language": languages[0]},
        {"email": "ben@example.com", "name": "Ben", "language": languages[1]},
        {"bot": True},
    ]
    for position, zone_name in (zones or {}).items():
        seats[position]["timezone"] = zone_name
    svc = api.service
    created = svc.create_game(seats=seats, seed=SEED, settings=settings, name="Clock race")
    tokens = {inv["position"]: svc.accept(inv["invite_token"])["api_token"]
              for inv in created["invitations"]}
    svc.start(created["game"], created["creator_token"])
    uid = created["game"]
    clients = {}
    for position in (0, 1):
        clients[position] = browser(api)
        give_seat(clients[position], uid, position)
    creator = browser(api)
    give_creator(creator, uid, created["creator_token"])
    return Race(uid, created["creator_token"], tokens, clients, creator)


def acting(api: Api, uid: str) -> int:
    to_act: list[int] = api.service.state(uid, 0)["game"]["to_act"]
    assert len(to_act) == 1, to_act
    return to_act[0]


def human_acting(api: Api, table: Table) -> int:
    position, _ = api.actor(table)
    return position


def deadlines(api: Api, uid: str, token: str | None = None) -> dict[str, Any]:
    response = api.client.get(f"/api/games/{uid}/deadlines",
                              headers=bearer(token) if token else None)
    assert response.status_code == 200, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


def due_of(api: Api, uid: str, position: int, token: str | None = None) -> datetime:
    """When seat ``position``'s pending decision times out."""
    found = [d for d in deadlines(api, uid, token)["deadlines"]
             if d["seat"] == position and d["kind"].startswith("timeout")]
    assert len(found) == 1, found
    return datetime.fromisoformat(found[0]["due_at"])


def utc_text(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def local_text(moment: datetime, zone_name: str) -> str:
    return f"{moment.astimezone(ZoneInfo(zone_name)):%Y-%m-%d %H:%M} {zone_name}"


def post_form(client: FlaskClient, url: str, page: str, **data: str) -> TestResponse:
    """POST ``data`` to ``url`` with the CSRF token of ``page``."""
    return client.post(url, data={"csrf_token": csrf(client, page), **data})


def export(api: Api, uid: str) -> dict[str, Any]:
    return api.service.export(uid)


# ---------------------------------------------------------------------- API: documents


def test_openapi_documents_the_clock(api: Api) -> None:
    doc = api.client.get("/api/openapi.json").get_json()
    paths = doc["paths"]
    for path, method in [
        ("/api/games/{uid}/pause", "post"),
        ("/api/games/{uid}/resume", "post"),
        ("/api/games/{uid}/deadlines", "get"),
        ("/api/games/{uid}/me/quiet", "put"),
        ("/api/away", "get"),
        ("/api/away", "post"),
        ("/api/away/{absence_id}", "delete"),
        ("/api/games/{uid}/seats/{position}/replace", "post"),
    ]:
        assert method in paths.get(path, {}), (path, method)
    schemas = doc["components"]["schemas"]
    settings = schemas["GameSettingsIn"]["properties"]
    for key, kind in [("deadline_hours", "integer"), ("reaction_hours", "integer"),
                      ("bank_hours", "integer"), ("increment_hours", "integer"),
                      ("reminders", "array"), ("on_timeout", "string"),
                      ("max_missed", "integer"), ("after_missed", "string"),
                      ("spectators", "boolean")]:
        assert settings[key]["type"] == kind and settings[key]["description"], key
    assert settings["on_timeout"]["enum"] == ["bot", "pass", "pause"]
    assert settings["after_missed"]["enum"] == ["computer", "invite"]
    assert settings["reminders"]["items"] == {"type": "string"}
    seat = schemas["SeatIn"]["properties"]
    assert {"email", "quiet", "timezone", "bot", "language"} <= set(seat)
    create = schemas["CreateGameIn"]["properties"]
    assert "owner_email" in create and "settings" in create
    away = schemas["AwayIn"]
    assert set(away["properties"]) == {"from", "until", "mode"}
    assert set(away["required"]) == {"from", "until"}
    assert away["properties"]["mode"]["enum"] == ["stretch", "computer"]
    assert away["properties"]["from"]["format"] == "date-time"
    assert {"quiet", "timezone"} <= set(schemas["QuietIn"]["properties"])
    assert {"email", "computer"} <= set(schemas["ReplaceIn"]["properties"])
    assert {"clock", "deadlines", "paused", "pause_reason"} <= set(
        schemas["DeadlinesOut"]["properties"])


# ---------------------------------------------------------------------- API: creating


CLOCK = {"deadline_hours": 24, "reaction_hours": 6, "bank_hours": 10, "increment_hours": 1,
         "reminders": ["50%", "3h"], "on_timeout": "pass", "max_missed": 2,
         "after_missed": "invite"}


def test_create_with_clock_settings_seat_quiet_hours_and_owner(api: Api) -> None:
    seats = [{"email": "a@x.org", "quiet": "22:00-07:00", "timezone": WARSAW},
             {"email": "b@x.org"}, {"email": "c@x.org", "timezone": "America/New_York"}]
    table = api.create(seats, settings=CLOCK, owner_email=" Boss@X.org ")
    data = export(api, table.uid)
    assert data["game"]["settings"] == CLOCK
    assert data["owner_email"] == "boss@x.org"
    assert [s["notify"] for s in data["seats"]] == [
        {"quiet": "22:00-07:00", "timezone": WARSAW}, {}, {"timezone": "America/New_York"}]
    api.accept_all(table)
    api.start(table)
    clock_body = deadlines(api, table.uid)
    assert clock_body["clock"] == {**CLOCK, "running": True}
    assert clock_body["paused"] is False and clock_body["status"] == "active"
    assert all(s["bank_seconds"] == 10 * 3600 for s in clock_body["seats"])
    # without an owner, the first seat's player is the owner
    plain = api.create(3, prefix="plain")
    assert export(api, plain.uid)["owner_email"] == "plain0@example.com"


BAD_CLOCK_SETTINGS = [
        ({"settings": {"on_timeout": "nap"}}, "on_timeout"),
        ({"settings": {"after_missed": "later"}}, "after_missed"),
        ({"settings": {"reminders": ["soon"]}}, "reminder point"),
        ({"settings": {"reminders": ["10%", "20%", "30%", "40%", "50%", "60%"]}}, "at most 5"),
        ({"settings": {"deadline_hours": 24, "reaction_hours": 30}}, "reaction_hours"),
        ({"settings": {"bank_hours": -1}}, "bank_hours"),
        ({"settings": {"max_missed": "two"}}, "max_missed"),
        ({"settings": {"deadline_hours": True}}, "deadline_hours"),
        ({"settings": {"sleep": 1}}, "unknown setting sleep"),
        ({"owner_email": "boss"}, "owner"),
        ({"seats": [{"email": "a@x.org", "timezone": "Mars/Base"}, {"email": "b@x.org"},
                    {"email": "c@x.org"}]}, "Mars/Base"),
        ({"seats": [{"email": "a@x.org", "quiet": "late"}, {"email": "b@x.org"},
                    {"email": "c@x.org"}]}, "quiet hours"),
        ({"seats": [{"email": "a@x.org", "quiet": "25:00-08:00"}, {"email": "b@x.org"},
                    {"email": "c@x.org"}]}, "22:00-08:00"),
]


def test_create_refuses_bad_clock_settings(api: Api) -> None:
    def check(body: dict[str, Any], words: str) -> None:
        full = {"seats": [{"email": f"{c}@x.org"} for c in "abc"], **body}
        refused = error_of(api.client.post("/api/games", json=full), 400)
        assert words in refused["error"], refused
        assert api.scalar("SELECT count(*) FROM games") == 0

    each_case(labelled(BAD_CLOCK_SETTINGS), check)


# ---------------------------------------------------------------------- API: pause and resume


def test_pause_and_resume_over_the_api(api: Api, started: Table) -> None:
    url = f"/api/games/{started.uid}"
    position = human_acting(api, started)
    before, stored = api.observe(started), rows(api)
    error_of(api.client.post(f"{url}/pause"), 401)
    error_of(api.client.post(f"{url}/pause", headers={"X-Creator-Token": "wrong"}), 403)
    error_of(api.client.post(f"{url}/pause", headers=started.seat(0)), 401)  # a seat token
    error_of(api.client.post(f"/api/games/{UNKNOWN_UID}/pause", headers=started.creator), 404)
    error_of(api.client.post(f"{url}/pause", headers=started.creator,
                             json={"reason": "x" * 201}), 400)
    not_paused = error_of(api.client.post(f"{url}/resume", headers=started.creator), 400)
    assert "not paused" in not_paused["error"]
    assert api.observe(started) == before and rows(api) == stored

    paused = api.client.post(f"{url}/pause", headers=started.creator,
                             json={"reason": "Ben is ill"})
    assert paused.status_code == 200, paused.get_json()
    assert paused.get_json()["paused"] is True
    body = deadlines(api, started.uid, started.tokens[0])
    assert body["paused"] is True and body["pause_reason"] == "Ben is ill"
    # while paused: no moves, no second pause, no resume by anyone else
    before, stored = api.observe(started), rows(api)
    opts = api.options(started, position)
    refused = error_of(api.client.post(f"{url}/moves", headers=started.seat(position), json={
        "expected_seq": opts["seq"], "input": opts["options"][0]}), 409)
    assert "paused" in refused["error"]
    assert "already paused" in error_of(
        api.client.post(f"{url}/pause", headers=started.creator), 400)["error"]
    error_of(api.client.post(f"{url}/resume", headers={"X-Creator-Token": "wrong"}), 403)
    error_of(api.client.post(f"{url}/resume"), 401)
    assert api.observe(started) == before and rows(api) == stored

    resumed = api.client.post(f"{url}/resume", headers=started.creator)
    assert resumed.status_code == 200 and resumed.get_json()["paused"] is False
    assert deadlines(api, started.uid)["paused"] is False
    notes = [(m["kind"], m["actor"]) for m in api.log(started.uid) if m["kind"] != "move"]
    assert notes == [("pause", "owner"), ("resume", "owner")]
    status, _ = api.submit(started, position, opts["seq"], opts["options"][0])
    assert status == 200


def test_pause_before_the_start_is_refused(api: Api) -> None:
    table = api.accept_all(api.create(3))
    stored = rows(api)
    # no body at all is fine for the schema: the refusal is the service's
    body = error_of(api.client.post(f"/api/games/{table.uid}/pause", headers=table.creator), 409)
    assert "open" in body["error"]
    assert rows(api) == stored


# ---------------------------------------------------------------------- API: deadlines


def test_deadlines_show_the_pending_decision(api: Api) -> None:
    opened = datetime.now(UTC)
    table = api.new_started(3)
    position = human_acting(api, table)
    body = deadlines(api, table.uid, table.tokens[0])
    assert body["to_act"] == [position] and body["clock"]["deadline_hours"] == 48
    assert body["clock"]["reminders"] == ["50%", "2h"] and body["clock"]["on_timeout"] == "bot"
    kinds = sorted(d["kind"] for d in body["deadlines"] if d["seat"] == position)
    assert kinds == ["reminder-1", "reminder-2", "timeout"]
    due = due_of(api, table.uid, position)
    assert abs(due - (opened + timedelta(hours=48))) < timedelta(minutes=5)
    # the same for a spectator, and for a seat of another game (a spectator here)
    other = api.new_started(3, prefix="o")
    assert deadlines(api, table.uid)["deadlines"] == body["deadlines"]
    assert deadlines(api, table.uid, other.tokens[0])["deadlines"] == body["deadlines"]
    # a game that has not started has no deadlines; an unknown game is 404; a bad token 401
    waiting = api.create(3, prefix="w")
    assert deadlines(api, waiting.uid)["deadlines"] == []
    error_of(api.client.get(f"/api/games/{UNKNOWN_UID}/deadlines"), 404)
    error_of(api.client.get(f"/api/games/{table.uid}/deadlines", headers=bearer("nonsense")),
             401)


def test_deadlines_of_a_private_game_are_for_its_seats(api: Api) -> None:
    private = api.new_started(3, settings={"spectators": False})
    public = api.new_started(3, prefix="pub")
    assert deadlines(api, private.uid, private.tokens[1])["deadlines"]
    error_of(api.client.get(f"/api/games/{private.uid}/deadlines"), 403)
    error_of(api.client.get(f"/api/games/{private.uid}/deadlines",
                            headers=public.seat(0)), 403)


def test_clock_off_has_no_deadlines(api: Api) -> None:
    table = api.new_started(3, settings={"deadline_hours": 0})
    body = deadlines(api, table.uid)
    assert body["clock"]["running"] is False and body["clock"]["deadline_hours"] == 0
    assert body["deadlines"] == []


def test_a_timeout_counts_as_a_missed_deadline(api: Api, started: Table) -> None:
    position = human_acting(api, started)
    due = due_of(api, started.uid, position)
    report = clock(api).process_due(now=due + timedelta(minutes=1), max_gap=None)
    assert report.timeouts == 1, report.summary()
    body = deadlines(api, started.uid)
    missed = {s["position"]: s["missed_deadlines"] for s in body["seats"]}
    assert missed == {p: int(p == position) for p in started.tokens}
    assert [m["seat"] for m in api.log(started.uid) if m["actor"] == "timeout"][:1] == [position]
    # the next decision has its own deadline, counted from the timeout
    assert all(datetime.fromisoformat(d["due_at"]) > due for d in body["deadlines"])


# ---------------------------------------------------------------------- API: away dates


def test_away_dates_over_the_api(api: Api, started: Table) -> None:
    position = human_acting(api, started)
    seat = started.seat(position)
    email = f"p{position}@example.com"
    assert api.client.get("/api/away", headers=seat).get_json() == {"email": email,
                                                                    "absences": []}
    due = due_of(api, started.uid, position)
    now = datetime.now(UTC)

    def iso(moment: datetime) -> str:
        return moment.isoformat()

    before, stored = api.observe(started), rows(api)
    error_of(api.client.get("/api/away"), 401)
    error_of(api.client.post("/api/away", json={"from": iso(now), "until": iso(now)}), 401)
    error_of(api.client.get("/api/away", headers=bearer("nonsense")), 401)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"from": iso(now + timedelta(days=2)), "until": iso(now + timedelta(days=1))},
         "end before they start"),
        ({"from": "next tuesday", "until": iso(now + timedelta(days=1))}, "from"),
        ({"from": iso(now), "until": "2025-13-40T00:00"}, "until"),
        ({"from": iso(now)}, "until"),
        ({"from": iso(now), "until": iso(now + timedelta(days=1)), "mode": "nap"},
         "stretch or computer"),
        ({"from": iso(now - timedelta(days=3)), "until": iso(now - timedelta(days=2))},
         "already over"),
        ({"from": iso(now), "until": iso(now + timedelta(days=100))}, "three months"),
    ]
    for body, words in cases:
        refused = error_of(api.client.post("/api/away", headers=seat, json=body), 400)
        if words in ("from", "until"):  # the field's own error, under detail
            assert "see detail" in refused["error"] and words in refused["detail"]["json"]
        else:
            assert words in refused["error"], (body, refused)
    assert api.observe(started) == before and rows(api) == stored

    added = api.client.post("/api/away", headers=seat, json={
        "from": iso(now - timedelta(hours=1)), "until": iso(now + timedelta(hours=10))})
    assert added.status_code == 201, added.get_json()
    absence = added.get_json()
    assert absence["email"] == email and absence["mode"] == "stretch"
    assert datetime.fromisoformat(absence["until"]) == now + timedelta(hours=10)
    # the deadline stretches over the time away
    assert due_of(api, started.uid, position) > due + timedelta(hours=9)
    listed = api.client.get("/api/away", headers=seat).get_json()["absences"]
    assert [a["id"] for a in listed] == [absence["id"]]
    # another player neither sees nor cancels it
    other = next(p for p in started.tokens if p != position)
    assert api.client.get("/api/away", headers=started.seat(other)).get_json()["absences"] == []
    stored = rows(api)
    error_of(api.client.delete(f"/api/away/{absence['id']}", headers=started.seat(other)), 404)
    error_of(api.client.delete("/api/away/999999", headers=seat), 404)
    error_of(api.client.delete(f"/api/away/{absence['id']}"), 401)
    assert rows(api) == stored

    cancelled = api.client.delete(f"/api/away/{absence['id']}", headers=seat)
    assert cancelled.status_code == 200
    assert cancelled.get_json() == {"id": absence["id"], "cancelled": True}
    assert api.client.get("/api/away", headers=seat).get_json()["absences"] == []
    assert abs(due_of(api, started.uid, position) - due) < timedelta(seconds=1)
    error_of(api.client.delete(f"/api/away/{absence['id']}", headers=seat), 404)


def test_away_in_computer_mode_lets_the_computer_play(api: Api, started: Table) -> None:
    position = human_acting(api, started)
    now = datetime.now(UTC)
    added = api.client.post("/api/away", headers=started.seat(position), json={
        "from": (now - timedelta(minutes=5)).isoformat(),
        "until": (now + timedelta(days=1)).isoformat(), "mode": "computer"})
    assert added.status_code == 201 and added.get_json()["mode"] == "computer"
    report = clock(api).process_due(now=now + timedelta(minutes=1), max_gap=None)
    assert report.timeouts == 1, report.summary()
    played = [m for m in api.log(started.uid) if m["actor"] == "away"]
    assert played and played[0]["seat"] == position


# ---------------------------------------------------------------------- API: quiet hours


def test_quiet_hours_over_the_api(api: Api, started: Table) -> None:
    position = human_acting(api, started)
    url = f"/api/games/{started.uid}/me/quiet"
    seat = started.seat(position)
    due = due_of(api, started.uid, position)
    other_game = api.new_started(3, prefix="o")
    before, stored = api.observe(started), rows(api)
    for body, words in [
        ({"quiet": "25:00-08:00", "timezone": "UTC"}, "22:00-08:00"),
        ({"quiet": "late"}, "22:00-08:00"),
        ({"quiet": "22:00-22:00"}, "same time"),
        ({"quiet": "22:00-08:00", "timezone": "Mars/Base"}, "not a time zone"),
        ({"timezone": "Europe/Nowhere"}, "not a time zone"),
    ]:
        refused = error_of(api.client.put(url, headers=seat, json=body), 400)
        assert words in refused["error"], refused
    error_of(api.client.put(url, json={"quiet": "22:00-08:00"}), 401)
    error_of(api.client.put(url, headers=other_game.seat(0), json={"quiet": "22:00-08:00"}), 403)
    error_of(api.client.put(f"/api/games/{UNKNOWN_UID}/me/quiet", headers=seat,
                            json={"quiet": "22:00-08:00"}), 404)
    error_of(api.client.put(url, headers=seat, json={"quiet": 22}), 400)
    assert api.observe(started) == before and rows(api) == stored

    # quiet hours around the deadline move it to their end
    start, end = (due - timedelta(hours=1)).hour, (due + timedelta(hours=2)).hour
    quiet = f"{start:02d}:00-{end:02d}:00"
    response = api.client.put(url, headers=seat, json={"quiet": quiet, "timezone": "UTC"})
    assert response.status_code == 200, response.get_json()
    assert response.get_json() == {"game": started.uid, "position": position, "quiet": quiet,
                                   "timezone": "UTC"}
    moved = due.replace(minute=0, second=0, microsecond=0) + timedelta(hours=2)
    assert due_of(api, started.uid, position) == moved
    notify = next(s["notify"] for s in export(api, started.uid)["seats"]
                  if s["position"] == position)
    assert notify == {"quiet": quiet, "timezone": "UTC"}
    # null clears both
    cleared = api.client.put(url, headers=seat, json={"quiet": None, "timezone": None})
    assert cleared.get_json()["quiet"] is None and cleared.get_json()["timezone"] is None
    assert due_of(api, started.uid, position) == due
    # any seat sets its own (not only the one to act)
    other = next(p for p in started.tokens if p != position)
    assert api.client.put(url, headers=started.seat(other), json={
        "quiet": "23:00-07:00", "timezone": WARSAW}).status_code == 200


# ---------------------------------------------------------------------- API: replacing a seat


def test_replace_a_seat_over_the_api(api: Api, started: Table) -> None:
    def url(position: int, uid: str = started.uid) -> str:
        return f"/api/games/{uid}/seats/{position}/replace"

    waiting = api.accept_all(api.create(3, prefix="w"))
    before, stored = api.observe(started), rows(api)
    error_of(api.client.post(url(1), json={"computer": True}), 401)
    error_of(api.client.post(url(1), headers={"X-Creator-Token": "wrong"},
                             json={"computer": True}), 403)
    error_of(api.client.post(url(1), headers=waiting.creator, json={"computer": True}), 403)
    assert "either" in error_of(api.client.post(url(1), headers=started.creator, json={
        "email": "new@example.com", "computer": True}), 400)["error"]
    assert "email" in error_of(api.client.post(url(1), headers=started.creator, json={}),
                               400)["error"]
    assert "not an e-mail" in error_of(api.client.post(url(1), headers=started.creator, json={
        "email": "not-an-address"}), 400)["error"]
    error_of(api.client.post(url(7), headers=started.creator, json={"computer": True}), 404)
    error_of(api.client.post(url(1, UNKNOWN_UID), headers=started.creator,
                             json={"computer": True}), 404)
    error_of(api.client.post(url(1, waiting.uid), headers=waiting.creator,
                             json={"computer": True}), 409)
    assert api.observe(started) == before and rows(api) == stored

    # a new player for seat 1: the old token stops working, the computer plays meanwhile
    invited = api.client.post(url(1), headers=started.creator, json={"email": "New@Example.com"})
    assert invited.status_code == 200, invited.get_json()
    result = invited.get_json()
    assert result["email"] == "new@example.com" and result["position"] == 1
    assert result["link"].endswith("/join/" + result["invite_token"])
    error_of(api.client.get(f"/api/games/{started.uid}/options", headers=started.seat(1)), 401)
    assert api.state(started.uid)["game"]["seats"][1]["bot"] is True
    accepted = api.client.post("/api/invitations/accept",
                               json={"invite_token": result["invite_token"], "name": "Newt"})
    assert accepted.status_code == 201, accepted.get_json()
    started.tokens[1] = accepted.get_json()["api_token"]
    seat = api.state(started.uid, started.tokens[1])["game"]["seats"][1]
    assert seat["bot"] is False and seat["name"] == "Newt"
    # the computer for seat 2, then again: refused
    assert api.client.post(url(2), headers=started.creator,
                           json={"computer": True}).status_code == 200
    assert api.state(started.uid)["game"]["seats"][2]["bot"] is True
    error_of(api.client.get(f"/api/games/{started.uid}/options", headers=started.seat(2)), 401)
    stored = rows(api)
    assert "already" in error_of(api.client.post(url(2), headers=started.creator,
                                                 json={"computer": True}), 400)["error"]
    assert rows(api) == stored
    handovers = [m["input"] for m in api.log(started.uid) if m["kind"] == "handover"]
    assert handovers == ["handover invite", "handover player", "handover computer"]


# ---------------------------------------------------------------------- pages: the new-game form


def field_value(html: str, name: str) -> str | None:
    found = re.search(rf'<input[^>]*name="{name}"[^>]*value="([^"]*)"', html)
    return found.group(1) if found else None


def test_new_game_form_offers_the_clock_with_defaults(api: Api) -> None:
    page = browser(api).get("/new")
    assert page.status_code == 200
    for name, value in [("deadline_hours", "48"), ("reaction_hours", "12"), ("bank_hours", "0"),
                        ("increment_hours", "0"), ("reminders", "50%, 2h"), ("max_missed", "0"),
                        ("owner_email", ""), ("seat0_timezone", ""), ("seat0_quiet", "")]:
        assert field_value(page.text, name) == value, name
    assert 'name="on_timeout" value="bot" checked>' in page.text
    assert 'name="after_missed" value="computer" checked> <span>the computer plays' in page.text
    for name, value in (("on_timeout", "pass"), ("on_timeout", "pause"),
                        ("after_missed", "invite")):
        assert f'name="{name}" value="{value}">' in page.text
    assert '<datalist id="time-zones">' in page.text and f'<option value="{WARSAW}">' in page.text
    polish = browser(api).get("/new?lang=pl")
    assert "Zegar" in polish.text and "Godziny ciszy" in polish.text
    assert "Strefa czasowa" in polish.text


def test_form_creates_a_game_with_its_clock(api: Api) -> None:
    client = browser(api)
    form = new_game_form(csrf(client, "/new"), deadline_hours="24", reaction_hours="6",
                         bank_hours="10", increment_hours="1", reminders="50%; 3h",
                         on_timeout="pass", max_missed="2", after_missed="invite",
                         owner_email="Boss@Example.com", seat0_timezone=WARSAW,
                         seat0_quiet="22:00 - 07:00", seat1_timezone="", seat1_quiet="")
    response = client.post("/new", data=form)
    assert response.status_code == 303, response.text
    uid = response.location.split("/games/")[1].split("/")[0]
    data = export(api, uid)
    assert data["game"]["settings"] == {**CLOCK, "spectators": True}
    assert data["owner_email"] == "boss@example.com"
    assert [s["notify"] for s in data["seats"]] == [
        {"quiet": "22:00-07:00", "timezone": WARSAW}, {}, {}]
    # the players join, the creator starts; the game page shows the clock
    links = invitation_links(client.get(f"/games/{uid}/setup").text)
    players = {}
    for position, token in links.items():
        players[position] = browser(api)
        joined = post_form(players[position], f"/join/{token}", f"/join/{token}")
        assert joined.status_code == 303
    started = post_form(client, f"/games/{uid}/start", f"/games/{uid}/setup")
    assert started.status_code == 303
    to_act = acting(api, uid)
    due = due_of(api, uid, to_act)
    page = players[0].get(f"/games/{uid}")
    assert "Decisions have a deadline of 24 hours." in page.text
    assert utc_text(due) in page.text and local_text(due, WARSAW) in page.text
    assert "Your time bank: 10 h" in page.text
    assert "When time runs out: pass what can be passed." in page.text


BAD_CLOCK_FIELDS = [
        ({"reminders": "soon"}, "reminder point"),
        ({"reminders": "10%, 20%, 30%, 40%, 50%, 60%"}, "at most 5"),
        ({"deadline_hours": "24", "reaction_hours": "30"}, "must not be longer than the deadline"),
        ({"on_timeout": "nap"}, "choose one of: bot, pass, pause"),
        ({"after_missed": "later"}, "choose one of: computer, invite"),
        ({"seat0_timezone": "Mars/Base"}, "seat 1: &#39;Mars/Base&#39; is not a time zone"),
        ({"seat1_quiet": "late"}, "seat 2: quiet hours"),
        ({"owner_email": "boss"}, "is not an e-mail address"),
        ({"deadline_hours": "-1"}, "the deadline must be between 0 and 720"),
        ({"bank_hours": "lots"}, "whole number"),
]


def test_form_refuses_bad_clock_fields(api: Api) -> None:
    client = browser(api)
    token = csrf(client, "/new")
    stored = rows(api)

    def check(changes: dict[str, str], message: str) -> None:
        response = client.post("/new", data=new_game_form(token, **changes))
        assert response.status_code == 400
        assert message in response.text
        assert 'value="Friday race"' in response.text
        for name, value in changes.items():  # the form keeps what was typed
            if name.startswith(("reminders", "seat0_timezone", "owner_email", "bank_hours")):
                assert field_value(response.text, name) == value.replace("'", "&#39;")
        assert rows(api) == stored

    each_case(labelled(BAD_CLOCK_FIELDS), check)


def test_parse_new_game_reads_the_clock_fields() -> None:
    parsed = parse_new_game(new_game_form(
        "t", deadline_hours="0", reaction_hours="", reminders="", on_timeout="pause",
        seat0_quiet="23:00-6:30", seat0_timezone="", owner_email=""))
    assert parsed["settings"] == {"spectators": True, "deadline_hours": 0, "reminders": [],
                                  "on_timeout": "pause"}
    assert parsed["seats"][0] == {"name": "Ann", "email": "ann@example.com", "language": "en",
                                  "quiet": "23:00-6:30", "pieces": {"titans": []}}
    assert parsed["owner_email"] is None
    # fields the form leaves out are left to the defaults
    assert parse_new_game(new_game_form("t"))["settings"] == {"spectators": True}


# ---------------------------------------------------------------------- pages: the game page


def test_game_page_shows_who_must_act_by_when(api: Api) -> None:
    race = start_race(api, settings={"bank_hours": 5}, zones={1: WARSAW})
    position = acting(api, race.uid)
    other = 1 - position
    names = {0: "Ann", 1: "Ben"}
    due = due_of(api, race.uid, position)
    mine = race.clients[position].get(race.url)
    assert f"You must act by {utc_text(due)}" in mine.text
    assert "Your time bank: 5 h" in mine.text
    theirs = race.clients[other].get(race.url)
    assert f"{names[position]} must act by {utc_text(due)}" in theirs.text
    assert "You must act by" not in theirs.text
    # Ben has a time zone: his page shows the local time too
    assert (local_text(due, WARSAW) in race.clients[1].get(race.url).text)
    assert local_text(due, WARSAW) not in race.clients[0].get(race.url).text
    # a spectator sees the deadline, no bank and no buttons
    watcher = browser(api).get(race.url)
    assert f"{names[position]} must act by {utc_text(due)}" in watcher.text
    assert "time bank" not in watcher.text and 'id="pause-button"' not in watcher.text
    # the missed deadlines of each player (none yet)
    for seat, name in names.items():
        assert (f'<tr data-seat="{seat}"><td>{name}</td><td class="missed-count">0</td>'
                in mine.text)
    assert f'href="/games/{race.uid}/me"' in mine.text
    assert f'href="/games/{race.uid}/me"' not in watcher.text


def test_game_page_in_polish_shows_the_clock_in_polish(api: Api) -> None:
    race = start_race(api, languages=("pl", "pl"))
    position = acting(api, race.uid)
    due = due_of(api, race.uid, position)
    page = race.clients[position].get(race.url)
    assert "Zegar" in page.text and f"Masz czas do {utc_text(due)}" in page.text
    assert "Moje ustawienia" in page.text


def test_pause_and_resume_from_the_game_page(api: Api) -> None:
    race = start_race(api)
    position = acting(api, race.uid)
    page = race.creator.get(race.url)
    assert 'id="pause-button"' in page.text and 'id="resume-button"' not in page.text
    assert f"/games/{race.uid}/setup" in page.text  # the creator manages the running game
    player = race.clients[position]
    assert 'id="pause-button"' not in player.get(race.url).text
    stored = rows(api)
    assert race.creator.post(f"{race.url}/pause", data={"reason": "x"}).status_code == 400
    refused = post_form(player, f"{race.url}/pause", race.url, reason="mine")
    assert refused.status_code == 403 and "creator" in refused.text
    assert post_form(player, f"{race.url}/resume", race.url).status_code == 403
    not_paused = post_form(race.creator, f"{race.url}/resume", race.url)
    assert not_paused.status_code == 400 and "is not paused" in not_paused.text
    assert rows(api) == stored

    paused = post_form(race.creator, f"{race.url}/pause", race.url, reason="Ben is ill")
    assert paused.status_code == 303 and paused.location.endswith(race.url)
    page = race.creator.get(race.url)
    assert 'id="paused"' in page.text and "Ben is ill" in page.text
    assert 'id="resume-button"' in page.text and 'id="pause-button"' not in page.text
    seen = player.get(race.url)
    assert 'id="paused"' in seen.text and "Ben is ill" in seen.text
    assert 'id="composer"' not in seen.text  # a paused game takes no moves
    assert "the clock is stopped" in seen.text
    stored = rows(api)
    again = post_form(race.creator, f"{race.url}/pause", race.url)
    assert again.status_code == 400 and "already paused" in again.text
    assert rows(api) == stored

    resumed = post_form(race.creator, f"{race.url}/resume", race.url)
    assert resumed.status_code == 303
    page = player.get(race.url)
    assert 'id="paused"' not in page.text and 'id="composer"' in page.text
    log = browser(api).get(f"{race.url}/log").text
    assert "The game was paused: Ben is ill" in log and "The game was resumed" in log
    assert 'data-actor="owner"' in log


def test_a_page_shows_the_computers_move_after_a_timeout(api: Api) -> None:
    race = start_race(api)
    position = acting(api, race.uid)
    name = {0: "Ann", 1: "Ben"}[position]
    due = due_of(api, race.uid, position)
    keeper = clock(api)
    early = keeper.process_due(now=due - timedelta(minutes=1), max_gap=None)
    assert early.timeouts == 0
    report = keeper.process_due(now=due + timedelta(minutes=1), max_gap=None)
    assert report.timeouts == 1, report.summary()
    timed_out = [m for m in api.service.log(race.uid)["moves"] if m["actor"] == "timeout"]
    assert timed_out and timed_out[0]["seat"] == position
    page = race.clients[position].get(race.url)
    assert 'data-actor="timeout"' in page.text
    assert "time ran out: the computer chose" in page.text
    assert (f'<tr data-seat="{position}"><td>{name}</td><td class="missed-count">1</td>'
            in page.text)
    log = browser(api).get(f"{race.url}/log")
    assert log.text.count('data-actor="timeout"') == len(timed_out)


def test_a_timeout_that_pauses_the_game_waits_for_that_player(api: Api) -> None:
    race = start_race(api, settings={"on_timeout": "pause", "max_missed": 3})
    position = acting(api, race.uid)
    name = {0: "Ann", 1: "Ben"}[position]
    due = due_of(api, race.uid, position)
    clock(api).process_due(now=due + timedelta(minutes=1), max_gap=None)
    page = race.clients[position].get(race.url)
    assert 'id="paused"' in page.text
    assert f"waiting for {name}, whose time ran out" in page.text
    assert 'id="composer"' in page.text  # their answer ends the pause
    assert 'class="missed-count">1 / 3</td>' in page.text
    other = race.clients[1 - position].get(race.url)
    assert 'id="paused"' in other.text and 'id="composer"' not in other.text
    options = api.service.options(race.uid, position)
    answered = post_form(race.clients[position], f"{race.url}/move", race.url,
                         seq=str(options["seq"]), option=options["options"][0])
    assert answered.status_code == 303, answered.text
    assert 'id="paused"' not in race.clients[position].get(race.url).text


# ---------------------------------------------------------------------- pages: away and quiet


def me_url(race: Race) -> str:
    return f"{race.url}/me"


def test_away_dates_page(api: Api) -> None:
    race = start_race(api, zones={0: WARSAW})
    ann = race.clients[0]
    page = ann.get(me_url(race))
    assert page.status_code == 200
    assert "Times are in Europe/Warsaw" in page.text and "No away dates." in page.text
    assert field_value(page.text, "timezone") == WARSAW
    stored = rows(api)
    for client in (browser(api), race.creator):
        refused = client.get(me_url(race))
        assert refused.status_code == 403 and "no seat in this game" in refused.text
    assert browser(api).get(f"/games/{UNKNOWN_UID}/me").status_code == 404
    local_now = datetime.now(ZoneInfo(WARSAW)).replace(second=0, microsecond=0, tzinfo=None)

    def stamp(moment: datetime) -> str:
        return moment.strftime("%Y-%m-%dT%H:%M")

    start, end = local_now + timedelta(days=1), local_now + timedelta(days=3)
    assert ann.post(f"{me_url(race)}/away", data={
        "from": stamp(start), "until": stamp(end), "mode": "stretch"}).status_code == 400
    for data, words in [
        ({"from": "soon", "until": stamp(end)}, "give a date and time"),
        ({"from": stamp(start), "until": ""}, "give a date and time"),
        ({"from": stamp(end), "until": stamp(start)}, "end before they start"),
        ({"from": stamp(start), "until": stamp(end), "mode": "nap"}, "stretch or computer"),
        ({"from": stamp(local_now - timedelta(days=3)),
          "until": stamp(local_now - timedelta(days=2))}, "already over"),
        ({"from": stamp(start), "until": stamp(start + timedelta(days=120))}, "three months"),
    ]:
        data.setdefault("mode", "stretch")
        refused = post_form(ann, f"{me_url(race)}/away", me_url(race), **data)
        assert refused.status_code == 400, data
        assert 'role="alert"' in refused.text and words in refused.text, (data, refused.text)
        assert f'value="{data["from"]}"' in refused.text  # what was typed is kept
    outsider = browser(api)
    refused = post_form(outsider, f"{me_url(race)}/away", "/new", **{
        "from": stamp(start), "until": stamp(end), "mode": "stretch"})
    assert refused.status_code == 403
    assert rows(api) == stored

    added = post_form(ann, f"{me_url(race)}/away", me_url(race), **{
        "from": stamp(start), "until": stamp(end), "mode": "computer"})
    assert added.status_code == 303 and added.location.endswith(me_url(race))
    (absence,) = clock(api).absences("ann@example.com")
    warsaw = ZoneInfo(WARSAW)
    assert datetime.fromisoformat(absence["from"]) == start.replace(tzinfo=warsaw)
    assert datetime.fromisoformat(absence["until"]) == end.replace(tzinfo=warsaw)
    assert absence["mode"] == "computer"
    page = ann.get(me_url(race))
    assert f'<tr data-absence="{absence["id"]}">' in page.text
    assert f"{start:%Y-%m-%d %H:%M} {WARSAW}" in page.text
    assert "the computer plays for me meanwhile" in page.text
    assert "Away from" in page.text  # the flash
    # Ben cannot cancel Ann's, nor can anyone cancel what does not exist
    stored = rows(api)
    ben = race.clients[1]
    theirs = post_form(ben, f"/games/{race.uid}/me/away/{absence['id']}/cancel",
                       me_url(race))
    assert theirs.status_code == 404
    missing = post_form(ann, f"{me_url(race)}/away/999999/cancel", me_url(race))
    assert missing.status_code == 404
    assert ann.post(f"{me_url(race)}/away/{absence['id']}/cancel").status_code == 400
    assert rows(api) == stored
    cancelled = post_form(ann, f"{me_url(race)}/away/{absence['id']}/cancel", me_url(race))
    assert cancelled.status_code == 303
    assert clock(api).absences("ann@example.com") == []
    assert "No away dates." in ann.get(me_url(race)).text


def test_quiet_hours_page(api: Api) -> None:
    race = start_race(api, languages=("en", "pl"))
    ann = race.clients[0]
    stored = rows(api)
    for data, words in [
        ({"quiet": "25:00-01:00", "timezone": ""}, "22:00-08:00"),
        ({"quiet": "22:00-08:00", "timezone": "Mars/Base"}, "is not a time zone"),
    ]:
        refused = post_form(ann, f"{me_url(race)}/quiet", me_url(race), **data)
        assert refused.status_code == 400 and words in refused.text
        assert field_value(refused.text, "quiet") == data["quiet"]
    assert ann.post(f"{me_url(race)}/quiet", data={"quiet": "22:00-08:00"}).status_code == 400
    assert rows(api) == stored

    saved = post_form(ann, f"{me_url(race)}/quiet", me_url(race), quiet="22:00-08:00",
                      timezone="America/New_York")
    assert saved.status_code == 303
    seats = export(api, race.uid)["seats"]
    assert seats[0]["notify"] == {"quiet": "22:00-08:00", "timezone": "America/New_York"}
    page = ann.get(me_url(race))
    assert field_value(page.text, "quiet") == "22:00-08:00"
    assert "Your quiet hours are 22:00-08:00 (America/New_York)." in page.text
    # the game page now shows Ann's deadlines in her time
    position = acting(api, race.uid)
    due = due_of(api, race.uid, position)
    assert local_text(due, "America/New_York") in ann.get(race.url).text
    cleared = post_form(ann, f"{me_url(race)}/quiet", me_url(race), quiet="", timezone="")
    assert cleared.status_code == 303
    assert export(api, race.uid)["seats"][0]["notify"] == {}
    # Ben reads the page in Polish
    polish = race.clients[1].get(me_url(race))
    assert "Godziny ciszy" in polish.text and "Nieobecności" in polish.text


# ---------------------------------------------------------------------- pages: replacing


def test_replace_a_player_from_the_setup_page(api: Api) -> None:
    race = start_race(api)
    setup = f"{race.url}/setup"
    page = race.creator.get(setup)
    assert page.text.count("Replace this player") == 3
    assert f'action="/games/{race.uid}/seats/1/replace"' in page.text
    other = browser(api).get(setup)
    assert "Replace this player" not in other.text
    stored = rows(api)
    url = f"{race.url}/seats/1/replace"
    assert race.creator.post(url, data={"to": "computer"}).status_code == 400
    refused = post_form(race.clients[1], url, race.url, to="computer")
    assert refused.status_code == 403
    empty = post_form(race.creator, url, setup, to="invite", email="")
    assert empty.status_code == 400 and "e-mail address" in empty.text
    bad = post_form(race.creator, url, setup, to="invite", email="not-an-address")
    assert bad.status_code == 400 and "is not an e-mail address" in bad.text
    missing = post_form(race.creator, f"{race.url}/seats/9/replace", setup, to="computer")
    assert missing.status_code == 404
    computer = post_form(race.creator, f"{race.url}/seats/2/replace", setup, to="computer")
    assert computer.status_code == 400 and "already plays" in computer.text
    assert rows(api) == stored

    invited = post_form(race.creator, url, setup, to="invite", email="cat@example.com")
    assert invited.status_code == 303 and invited.location.endswith(setup)
    page = race.creator.get(setup)
    assert "cat@example.com" in page.text
    token = invitation_links(page.text)[1]
    assert api.service.state(race.uid, None)["game"]["seats"][1]["bot"] is True
    cat = browser(api)
    join = cat.get(f"/join/{token}")
    assert join.status_code == 200 and 'id="take-over"' in join.text
    taken = post_form(cat, f"/join/{token}", f"/join/{token}", name="Cat")
    assert taken.status_code == 303 and taken.location.endswith(race.url)
    seat = api.service.state(race.uid, None)["game"]["seats"][1]
    assert seat["bot"] is False and seat["name"] == "Cat"
    assert "You play seat 2." in cat.get(race.url).text
    assert 1 not in invitation_links(race.creator.get(setup).text)  # the link is used

    handed = post_form(race.creator, f"{race.url}/seats/0/replace", setup, to="computer")
    assert handed.status_code == 303
    assert api.service.state(race.uid, None)["game"]["seats"][0]["bot"] is True
    log = browser(api).get(f"{race.url}/log").text
    assert "The computer plays this seat from now on" in log
    assert "A new player takes over this seat" in log


# ---------------------------------------------------------------------- words


TR_CALL = re.compile(r'\btr\(\s*("(?:[^"\\]|\\.)*"(?:\s*"(?:[^"\\]|\\.)*")*)', re.S)


def test_every_page_word_has_its_polish() -> None:
    words: set[str] = set()
    pages = [*(ROOT / "app" / "web" / "pages").glob("*.py"),
             *(ROOT / "templates" / "pages").glob("*.html"),
             *(ROOT / "app" / "features").glob("*/templates/pages/*.html")]
    for path in pages:
        for match in TR_CALL.finditer(path.read_text(encoding="utf-8")):
            words.add(ast.literal_eval("(" + match.group(1) + ")"))
    for table in (ACTOR_WORDS, HANDOVER_WORDS, TIMEOUT_ACTION_WORDS, HANDOVER_CHOICE_WORDS,
                  AWAY_MODE_WORDS):
        words |= set(table.values())
    assert len(words) > 100
    polish = catalogue("pl")
    assert polish is not None
    PL = {str(m.id): str(m.string) for m in polish if m.id and m.string}
    assert sorted(w for w in words if w not in PL) == []

    def fields(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    assert [k for k, v in PL.items() if fields(k) != fields(v)] == []
