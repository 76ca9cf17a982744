"""No hostile input breaks a game: a clear 4xx, never a 5xx, and nothing changed.

Hostile text is a lone surrogate (``"\\udc00"`` is valid JSON, yet neither database stores it
and no mail carries it), a NUL (PostgreSQL refuses it, SQLite stores it), any other control
character but tab and the line breaks, a string longer than any field takes, and JSON nested
deeper than the server parses (a thousand deep made the parser recurse until it failed: a
500). Every request's JSON body, query and form are checked once, before anything else reads
them (app/web/inputcheck.py); what is left is each field's own rule.

The explicit tests send the hostile strings the issue named to the fields it named (a chat
message, a game's name, a seat's name, a pause reason, a webhook address) on the JSON API and
in the HTML forms. The property-based tests (hypothesis) send hostile strings to every JSON
endpoint (each operation with a body in the OpenAPI document, and a query of the GET ones)
and every form of the pages: into each text field, as a key, and as a deeply nested value,
each on top of a request that is itself accepted (checked by :func:`test_every_base_request_
is_accepted`), and assert a 4xx answer and every table unchanged. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import SQLModel

import app.core.models  # noqa: F401  (registers the tables)
from app.features.signin import signins as signin
from app.web.browser_seats import store_seat
from app.web.inputcheck import plainly_usable, refuse_unusable_json
from tests.apifixtures import ADMIN_TOKEN, Api, Table, bot_game, dispose, make_api, table_rows
from tests.dbutil import fresh_database

ALL_TABLES = tuple(sorted(SQLModel.metadata.tables))
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
EXAMPLES = 12
"""Examples per endpoint and database (each one request and two looks at every table)."""
UNUSABLE = [chr(c) for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)] + [
    "\x7f", "\x80", "\x85", "\x9f", "\ud800", "\udbff", "\udc00", "\udfff"]
"""Characters no text may hold (app/core/textrules.py)."""
FORM_UNUSABLE = [c for c in UNUSABLE if not "\ud800" <= c <= "\udfff"]
"""What a form or a query string can carry of them: a lone surrogate cannot be encoded in
UTF-8, and the bytes of one are not decoded as one (see
test_a_forms_surrogate_bytes_never_become_a_surrogate)."""
PLACEHOLDER = "hostile-placeholder-7f3a"


# ---------------------------------------------------------------------- the world


@dataclass
class World:
    """Games in every state a request needs, on one database, and browsers holding seats and
    creator tokens (with their CSRF tokens)."""

    api: Api
    open: Table
    started: Table
    doomed: Table
    export: dict[str, Any]
    actor: tuple[int, int, str]
    """The started game's acting seat, the log's seq and a legal input."""
    over: Table
    """A finished game of three people, whose rematch seat 1 made (``rematch``: its answer);
    seats 2 and 3 wait for their players (seat 3's address signed in: ``account``)."""
    rematch: dict[str, Any]
    account: str
    note: int = 0
    """A note of the started game's seat 0 (the one its changes are sent to)."""
    browsers: dict[str, FlaskClient] = field(default_factory=dict)
    csrf: dict[str, str] = field(default_factory=dict)



def _browser(world: World, name: str, first_page: str) -> FlaskClient:
    client: FlaskClient = world.api.app.test_client()
    found = CSRF.search(client.get(first_page).get_data(as_text=True))
    assert found, first_page
    world.browsers[name], world.csrf[name] = client, found.group(1)
    return client


def _creator_browser(world: World, name: str, table: Table) -> None:
    client = _browser(world, name, "/new")
    answer = client.post(f"/games/{table.uid}/setup", data={
        "csrf_token": world.csrf[name], "creator_token": table.creator_token})
    assert answer.status_code == 303


def _bystander(world: World) -> int:
    """A seat of the started game that is neither the one to act nor seat 0 (the "seat"
    browser's): the one a replacement may take without stopping the others' requests (the
    resignation, last, is another seat's)."""
    return next(p for p in (1, 2) if p != world.actor[0])


def make_world(migrated_database_url: str) -> World:
    # (a body large enough for an exported game and for a long string to reach its field)
    api = make_api(migrated_database_url, TITANPOST_WEBHOOK_ALLOW_PRIVATE="1",
                   TITANPOST_MAX_BODY_BYTES=str(256 * 1024))
    started = api.new_started(3, name="Started race")
    position, opts = api.actor(started)
    over, rematch = _rematched(api)
    world = World(api, open=api.create(3, prefix="o"), started=started,
                  doomed=api.create(3, prefix="d"),
                  export=api.service.export(bot_game(api.service, 3)),
                  actor=(position, opts["seq"], opts["options"][0]), over=over,
                  rematch=rematch, account=_account_token(api, over.emails[2]))
    written = api.client.post(f"/api/games/{started.uid}/notes", json={"text": "my plan"},
                              headers=started.seat(0))
    assert written.status_code == 201, written.get_json()
    world.note = written.get_json()["note"]["id"]
    _browser(world, "fresh", "/new")
    _creator_browser(world, "owner", started)
    _creator_browser(world, "open owner", world.open)
    seat = _browser(world, "seat", "/new")
    secret = api.service.link_seat(started.uid, 0).secret
    with seat.session_transaction() as session:
        store_seat(session, started.uid, 0, secret)
    actor = _browser(world, "actor", "/new")
    with actor.session_transaction() as session:
        store_seat(session, started.uid, position,
                   api.service.link_seat(started.uid, position).secret)
    for name, uid, seat_at in (("old seat", over.uid, 1), ("maker", rematch["game"], 0)):
        with _browser(world, name, "/new").session_transaction() as session:
            store_seat(session, uid, seat_at, api.service.link_seat(uid, seat_at).secret)
    return world


def _rematched(api: Api) -> tuple[Table, dict[str, Any]]:
    """A finished game of three people (each resigned: the computer played it out) and the
    rematch its seat 1 made."""
    over = api.new_started(3, prefix="f", name="Over")
    for position in range(3):
        api.client.post(f"/api/games/{over.uid}/resign", headers=over.seat(position))
    made = api.client.post(f"/api/games/{over.uid}/rematch", headers=over.seat(0))
    assert made.status_code == 201, made.get_json()
    return over, made.get_json()


def _account_token(api: Api, email: str) -> str:
    """An account token of ``email``, signed in with the link mailed to it."""
    signin.ask_link(api.service, email, "127.0.0.1", "en")
    [payload] = [row[0] for row in api.rows(
        "SELECT payload FROM outbox WHERE kind = 'signin' AND recipient = :to", to=email)]
    token = (payload if isinstance(payload, dict) else json.loads(payload))["token"]
    used = api.client.post("/api/signin/use", json={"token": token})
    assert used.status_code == 200, used.get_json()
    return str(used.get_json()["account_token"])


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def world(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp(f"hostile-{request.param}")
    with fresh_database(request.param, folder) as database_url:
        made = make_world(database_url)
        yield made
        dispose(made.api)


def state_of(world: World) -> dict[str, list[tuple[Any, ...]]]:
    return table_rows(world.api, *ALL_TABLES)


# ---------------------------------------------------------------------- the JSON endpoints


@dataclass(frozen=True)
class JsonEndpoint:
    """One JSON operation: its path, who calls it, and a body it accepts."""

    method: str
    path: Callable[[World], str]
    operation: str
    """Its path in the OpenAPI document."""
    headers: Callable[[World], dict[str, str]] = lambda world: {}
    body: Callable[[World], Any] = lambda world: {}
    accepted: bool = True
    """Whether the base request is accepted as it is (a request with no body to speak of,
    such as resume on a running game, is refused for other reasons: only the central check
    matters to it)."""


def _seat(world: World, position: int = 0) -> dict[str, str]:
    return world.started.seat(position)


_GROUPS: dict[tuple[int, str], str] = {}


def _signed_in(world: World) -> dict[str, str]:
    return {"Authorization": f"Bearer {world.account}"}


def _group(world: World) -> str:
    """A group of the world's signed-in address (made once) holding its co-player of seat 0
    (added again when a test took it out)."""
    key = (id(world), world.api.url)
    if key not in _GROUPS:
        made = world.api.client.post("/api/groups", json={"name": "Fridays"},
                                     headers=_signed_in(world))
        assert made.status_code == 201, made.get_json()
        _GROUPS[key] = str(made.get_json()["group"])
    added = world.api.client.post(f"/api/groups/{_GROUPS[key]}/members",
                                  json={"email": world.over.emails[0]},
                                  headers=_signed_in(world))
    assert added.status_code == 200, added.get_json()
    return _GROUPS[key]


JSON_ENDPOINTS = {
    "create": JsonEndpoint("POST", lambda w: "/api/games", "/api/games", body=lambda w: {
        "name": "Friday race", "variant": "standard", "circuits": ["kaldheira"],
        "seats": [{"email": "ann@example.com", "name": "Ann", "language": "en",
                   "quiet": "22:00-08:00", "timezone": "Europe/Warsaw"},
                  {"email": "ben@example.com"}, {"bot": True}],
        "settings": {"deadline_hours": 24, "reminders": ["50%", "2h"], "on_timeout": "bot"},
        "owner_email": "owner@example.com"}),
    "accept": JsonEndpoint("POST", lambda w: "/api/invitations/accept",
                           "/api/invitations/accept", body=lambda w: {
                               "invite_token": w.open.invitations[0], "name": "Ann"}),
    "invite": JsonEndpoint("POST", lambda w: f"/api/games/{w.open.uid}/invitations",
                           "/api/games/{uid}/invitations", lambda w: w.open.creator,
                           lambda w: {"position": 1, "email": "someone@example.com"}),
    "start": JsonEndpoint("POST", lambda w: f"/api/games/{w.open.uid}/start",
                          "/api/games/{uid}/start", lambda w: w.open.creator,
                          lambda w: {"fill_with_bots": True}),
    "move": JsonEndpoint("POST", lambda w: f"/api/games/{w.started.uid}/moves",
                         "/api/games/{uid}/moves", lambda w: _seat(w, w.actor[0]),
                         lambda w: {"expected_seq": w.actor[1], "input": w.actor[2]}),
    "chat": JsonEndpoint("POST", lambda w: f"/api/games/{w.started.uid}/chat",
                         "/api/games/{uid}/chat", _seat, lambda w: {"text": "hello there"}),
    "webhook": JsonEndpoint("POST", lambda w: f"/api/games/{w.started.uid}/webhooks",
                            "/api/games/{uid}/webhooks", lambda w: w.started.creator,
                            lambda w: {"url": "http://127.0.0.1:9/hook", "format": "json",
                                       "language": "pl"}),
    "pause": JsonEndpoint("POST", lambda w: f"/api/games/{w.started.uid}/pause",
                          "/api/games/{uid}/pause", lambda w: w.started.creator,
                          lambda w: {"reason": "tea time"}),
    "resume": JsonEndpoint("POST", lambda w: f"/api/games/{w.started.uid}/resume",
                           "/api/games/{uid}/resume", lambda w: w.started.creator,
                           accepted=False),
    "resign": JsonEndpoint("POST", lambda w: f"/api/games/{w.started.uid}/resign",
                           "/api/games/{uid}/resign",
                           lambda w: _seat(w, next(p for p in (2, 1) if p != _bystander(w)))),
    "abandon": JsonEndpoint("POST", lambda w: f"/api/games/{w.doomed.uid}/abandon",
                            "/api/games/{uid}/abandon", lambda w: w.doomed.creator),
    "quiet": JsonEndpoint("PUT", lambda w: f"/api/games/{w.started.uid}/me/quiet",
                          "/api/games/{uid}/me/quiet", _seat,
                          lambda w: {"quiet": "23:00-07:00", "timezone": "Europe/Lisbon"}),
    "settings": JsonEndpoint("POST", lambda w: f"/api/games/{w.started.uid}/me/settings",
                             "/api/games/{uid}/me/settings", _seat, lambda w: {
                                 "mail": "digest", "language": "pl", "quiet": "21:00-06:00",
                                 "timezone": "Asia/Tokyo", "everywhere": True}),
    "note": JsonEndpoint("POST", lambda w: f"/api/games/{w.started.uid}/notes",
                         "/api/games/{uid}/notes", _seat,
                         lambda w: {"text": "watch the lava\non lap two", "seq": None}),
    "note (PATCH)": JsonEndpoint("PATCH", lambda w: f"/api/games/{w.started.uid}/notes/{w.note}",
                                 "/api/games/{uid}/notes/{note_id}", _seat,
                                 lambda w: {"text": "another plan"}),
    "settings (PATCH)": JsonEndpoint("PATCH", lambda w: f"/api/games/{w.started.uid}/me/settings",
                                     "/api/games/{uid}/me/settings", _seat,
                                     lambda w: {"mail": "none", "timezone": "America/Lima"}),
    "away": JsonEndpoint("POST", lambda w: "/api/away", "/api/away", _seat, lambda w: {
        "from": "2031-01-01T08:00:00+01:00", "until": "2031-01-09T08:00:00+01:00",
        "mode": "computer"}),
    "replace": JsonEndpoint("POST", lambda w: f"/api/games/{w.started.uid}/seats/"
                            f"{_bystander(w)}/replace",
                            "/api/games/{uid}/seats/{position}/replace",
                            lambda w: w.started.creator,
                            lambda w: {"email": "newcomer@example.com"}),
    "import": JsonEndpoint("POST", lambda w: "/api/admin/games/import",
                           "/api/admin/games/import",
                           lambda w: {"Authorization": f"Bearer {ADMIN_TOKEN}"},
                           lambda w: copy.deepcopy(w.export)),
    "remove webhook": JsonEndpoint("DELETE", lambda w: f"/api/games/{w.started.uid}/webhooks/1",
                                   "/api/games/{uid}/webhooks/{webhook_id}",
                                   lambda w: w.started.creator, accepted=False),
    "cancel away": JsonEndpoint("DELETE", lambda w: "/api/away/1", "/api/away/{absence_id}",
                                _seat, accepted=False),
    # (the maker's share before the others' yes: the last yes starts the rematch)
    "contribution": JsonEndpoint("POST", lambda w: f"/api/games/{w.rematch['game']}/contribution",
                                 "/api/games/{uid}/contribution",
                                 lambda w: {"Authorization": f"Bearer {w.rematch['api_token']}"},
                                 lambda w: {"contribution": "ef" * 32}),
    "rematch join": JsonEndpoint("POST", lambda w: f"/api/games/{w.over.uid}/rematch/join",
                                 "/api/games/{uid}/rematch/join", lambda w: w.over.seat(1),
                                 lambda w: {"contribution": "ab" * 32}),
    "rematch join (account)": JsonEndpoint(
        "POST", lambda w: f"/api/account/games/{w.over.uid}/rematch/join",
        "/api/account/games/{uid}/rematch/join",
        lambda w: {"Authorization": f"Bearer {w.account}"}, lambda w: {"contribution": "cd" * 32}),
    # (the account still holds its seat of the open rematch: refused, 409, after the body's
    # checks, which refuse every hostile body first)
    "forget": JsonEndpoint("POST", lambda w: "/api/account/forget", "/api/account/forget",
                           lambda w: {"Authorization": f"Bearer {w.account}"},
                           lambda w: {"confirm": w.over.emails[2]}, accepted=False),
    "rematch settle": JsonEndpoint("POST", lambda w: f"/api/games/{w.over.uid}/rematch/settle",
                                   "/api/games/{uid}/rematch/settle", lambda w: w.over.seat(0),
                                   lambda w: {"play": True}, accepted=False),
    "group": JsonEndpoint("POST", lambda w: "/api/groups", "/api/groups", _signed_in,
                          lambda w: {"name": "Friday"}),
    "group member": JsonEndpoint("POST", lambda w: f"/api/groups/{_group(w)}/members",
                                 "/api/groups/{uid}/members", _signed_in,
                                 lambda w: _group(w) and {"email": w.over.emails[1]}),
    "group member remove": JsonEndpoint(
        "POST", lambda w: f"/api/groups/{_group(w)}/members/remove",
        "/api/groups/{uid}/members/remove", _signed_in,
        lambda w: _group(w) and {"email": w.over.emails[0]}),
}


def _send(world: World, endpoint: JsonEndpoint, body: Any, *, raw: str | None = None,
          query: dict[str, str] | None = None) -> Any:
    data = raw if raw is not None else json.dumps(body)
    return world.api.client.open(endpoint.path(world), method=endpoint.method, data=data,
                                 content_type="application/json", query_string=query,
                                 headers=endpoint.headers(world))


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every place in a JSON value, with what is there."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _put(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return value


def _hostile_text(alphabet: list[str]) -> st.SearchStrategy[str]:
    """Text holding at least one character no text may hold."""
    return st.builds(lambda before, bad, after: before + bad + after,
                     st.text(max_size=12), st.sampled_from(alphabet), st.text(max_size=12))


LONG = st.builds(lambda letter, n: letter * n, st.sampled_from(["x", "é", "🏁"]),
                st.integers(min_value=4001, max_value=12_000))
"""Longer than any text field takes (the longest, a note, is 4000)."""
DEEP = st.integers(min_value=33, max_value=1000)


@st.composite
def hostile_request(draw: st.DrawFn, base: Any) -> tuple[Any, str | None]:
    """``base`` with one hostile change: (the body, or the raw JSON text when nested too
    deep to build as a value)."""
    body = copy.deepcopy(base)
    places = list(_paths(body))
    strings = [path for path, value in places if isinstance(value, str)]
    objects = [path for path, value in places if isinstance(value, dict)]
    kinds = ["key", "deep"] + (["text", "long"] if strings else [])
    kind = draw(st.sampled_from(kinds), label="kind")
    if kind == "text":
        path = draw(st.sampled_from(strings), label="field")
        return _put(body, path, draw(_hostile_text(UNUSABLE), label="text")), None
    if kind == "long":
        path = draw(st.sampled_from(strings), label="field")
        return _put(body, path, draw(LONG, label="length")), None
    if kind == "key":
        path = draw(st.sampled_from(objects or [()]), label="object")
        target = body
        for step in path:
            target = target[step]
        if isinstance(target, dict):
            target[draw(_hostile_text(UNUSABLE), label="key")] = "x"
            return body, None
        return {draw(_hostile_text(UNUSABLE), label="key"): "x"}, None
    path = draw(st.sampled_from([p for p, _ in places]), label="where")
    depth = draw(DEEP, label="depth")
    text = json.dumps(_put(body, path, PLACEHOLDER))
    return body, text.replace(json.dumps(PLACEHOLDER), "[" * depth + "]" * depth, 1)


def test_every_operation_with_a_body_is_fuzzed(world: World) -> None:
    """The table above lists every operation of the API document that takes a body."""
    spec = world.api.client.get("/api/openapi.json").get_json()
    with_body = {(method.upper(), path) for path, operations in spec["paths"].items()
                 for method, operation in operations.items()
                 if isinstance(operation, dict) and "requestBody" in operation}
    listed = {(e.method, e.operation) for e in JSON_ENDPOINTS.values()}
    assert with_body <= listed, sorted(with_body - listed)


@pytest.mark.parametrize("name", sorted(JSON_ENDPOINTS))
def test_a_hostile_json_body_is_refused_and_changes_nothing(world: World, name: str) -> None:
    endpoint = JSON_ENDPOINTS[name]
    base = endpoint.body(world)
    before = state_of(world)

    @given(change=hostile_request(base))
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    def send(change: tuple[Any, str | None]) -> None:
        body, raw = change
        answer = _send(world, endpoint, body, raw=raw)
        assert 400 <= answer.status_code < 500, (answer.status_code, answer.get_data()[:300])
        assert answer.is_json and answer.get_json()["error"]
        assert state_of(world) == before

    send()


@pytest.mark.parametrize("path", ["/api/games/{uid}", "/api/games/{uid}/chat",
                                  "/api/games/{uid}/log", "/api/games/{uid}/deadlines"])
def test_a_hostile_query_is_refused(world: World, path: str) -> None:
    url = path.format(uid=world.started.uid)

    @given(name=st.sampled_from(["before", "limit", "lang", "x"]),
           value=_hostile_text(FORM_UNUSABLE))  # (an address has no lone surrogates either)
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    def ask(name: str, value: str) -> None:
        answer = world.api.client.get(url, query_string={name: value},
                                      headers=_seat(world))
        assert answer.status_code == 400, answer.get_data()[:300]

    ask()


def test_every_base_request_is_accepted(tmp_path: Path) -> None:
    """The bodies the fuzzing changes are accepted as they are (on a world of their own), so
    that what refuses a changed one is its hostile part."""
    last = ("pause", "resign", "start")  # (what stops the others: after them)
    world = make_world(f"sqlite:///{tmp_path / 'json.db'}")
    try:
        for name, endpoint in sorted(JSON_ENDPOINTS.items(), key=lambda e: e[0] in last):
            if endpoint.accepted:
                answer = _send(world, endpoint, endpoint.body(world))
                assert answer.status_code < 300, (name, answer.get_json())
    finally:
        dispose(world.api)
    world = make_world(f"sqlite:///{tmp_path / 'forms.db'}")
    try:
        for name, form in sorted(FORMS.items(), key=lambda e: e[0] in last):
            if form.accepted:
                answer = _post_form(world, form, form.fields(world))
                assert answer.status_code == 303, (name, answer.status_code,
                                                   answer.get_data(as_text=True)[:2000])
    finally:
        dispose(world.api)


# ---------------------------------------------------------------------- the forms


@dataclass(frozen=True)
class Form:
    """One form of the pages: where it posts, from which browser, and fields it accepts."""

    path: Callable[[World], str]
    browser: str
    fields: Callable[[World], dict[str, str]]
    texts: tuple[str, ...] = ()
    """Its free-text fields (a name, an address): the ones a long value is tried in (a choice
    or a checkbox field takes any value for its default)."""
    accepted: bool = True


def _new_game(world: World) -> dict[str, str]:
    return {"name": "Friday race", "variant": "standard", "circuit0": "kaldheira",
            "seat0_kind": "human", "seat0_email": "ann@example.com", "seat0_name": "Ann",
            "seat0_lang": "en", "seat0_quiet": "22:00-08:00", "seat0_timezone": "UTC",
            "seat1_kind": "human", "seat1_email": "ben@example.com", "seat2_kind": "computer",
            "reminders": "50%, 2h", "deadline_hours": "24", "owner_email": "o@example.com"}


FORMS = {
    "new game": Form(lambda w: "/new", "fresh", _new_game,
                     ("name", "seat0_email", "seat0_name", "owner_email")),
    "join": Form(lambda w: f"/join/{w.open.invitations[1]}", "fresh",
                 lambda w: {"name": "Ben"}, ("name",)),
    "claim": Form(lambda w: f"/games/{w.open.uid}/setup", "fresh",
                  lambda w: {"creator_token": w.open.creator_token}, ("creator_token",)),
    "invite": Form(lambda w: f"/games/{w.open.uid}/invite", "open owner",
                   lambda w: {"position": "2", "email": "cy@example.com"}, ("email",)),
    "pause": Form(lambda w: f"/games/{w.started.uid}/pause", "owner",
                  lambda w: {"reason": "tea time"}, ("reason",)),
    "replace": Form(lambda w: f"/games/{w.started.uid}/seats/{_bystander(w)}/replace", "owner",
                    lambda w: {"email": "newcomer@example.com"}, ("email",)),
    "webhook": Form(lambda w: f"/games/{w.started.uid}/webhooks", "owner",
                    lambda w: {"url": "http://127.0.0.1:9/hook", "format": "slack",
                               "language": "en"}, ("url",)),
    "chat": Form(lambda w: f"/games/{w.started.uid}/chat", "seat",
                 lambda w: {"text": "hello there"}, ("text",)),
    "move": Form(lambda w: f"/games/{w.started.uid}/move", "actor",
                 lambda w: {"seq": str(w.actor[1]), "option": w.actor[2]}, ("option",)),
    "quiet hours": Form(lambda w: f"/games/{w.started.uid}/me/quiet", "seat",
                        lambda w: {"quiet": "22:00-07:00", "timezone": "Europe/Warsaw"},
                        ("quiet", "timezone")),
    "settings": Form(lambda w: f"/games/{w.started.uid}/me/settings", "seat",
                     lambda w: {"mail": "digest", "language": "pl"}),
    "away": Form(lambda w: f"/games/{w.started.uid}/me/away", "seat",
                 lambda w: {"from": "2031-02-01T08:00", "until": "2031-02-03T08:00",
                            "timezone": "UTC", "mode": "stretch"},
                 ("from", "until", "timezone")),
    "resign": Form(lambda w: f"/games/{w.started.uid}/resign", "seat", lambda w: {}),
    "rematch seat": Form(lambda w: f"/games/{w.over.uid}/rematch", "old seat",
                         lambda w: {"contribution": "ab" * 32}, ("contribution",)),
    "share of the deal": Form(lambda w: f"/games/{w.rematch['game']}/contribution", "maker",
                              lambda w: {"contribution": "ef" * 32}, ("contribution",)),
    "admin login": Form(lambda w: "/admin/login", "fresh",
                        lambda w: {"token": ADMIN_TOKEN}, ("token",)),
    # (the signed links' and unsubscribe forms, with tokens of no mail: only the check of
    # the form itself matters here)
    "option link": Form(lambda w: "/l/not-a-signed-token", "fresh", lambda w: {},
                        accepted=False),
    "open link": Form(lambda w: "/g/not-a-signed-token", "fresh", lambda w: {},
                      accepted=False),
    "unsubscribe": Form(lambda w: "/u/not-a-signed-token", "fresh",
                        lambda w: {"List-Unsubscribe": "One-Click"}, accepted=False),
}


def _post_form(world: World, form: Form, fields: dict[str, str]) -> Any:
    client = world.browsers[form.browser]
    return client.post(form.path(world), data={"csrf_token": world.csrf[form.browser],
                                               **fields})


@st.composite
def hostile_form(draw: st.DrawFn, form: Form, base: dict[str, str]) -> dict[str, str]:
    fields = dict(base)
    kinds = ["text", "key"] + (["long"] if form.texts else [])
    kind = draw(st.sampled_from(kinds), label="kind")
    if kind == "key":
        fields[draw(_hostile_text(FORM_UNUSABLE), label="key")] = "x"
    elif kind == "long":
        fields[draw(st.sampled_from(form.texts), label="field")] = draw(LONG, label="length")
    else:
        name = draw(st.sampled_from(sorted(fields) or ["extra"]), label="field")
        fields[name] = draw(_hostile_text(FORM_UNUSABLE), label="text")
    return fields


@pytest.mark.parametrize("name", sorted(FORMS))
def test_a_hostile_form_is_refused_and_changes_nothing(world: World, name: str) -> None:
    form = FORMS[name]
    base = form.fields(world)
    before = state_of(world)

    @given(fields=hostile_form(form, base))
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    def post(fields: dict[str, str]) -> None:
        answer = _post_form(world, form, fields)
        assert 400 <= answer.status_code < 500, (answer.status_code, answer.get_data()[:300])
        assert state_of(world) == before

    post()


def test_a_forms_surrogate_bytes_never_become_a_surrogate(world: World) -> None:
    """The UTF-8 bytes of a lone surrogate (``ED B0 80``, which no UTF-8 decoder accepts) in
    a form are not decoded as a surrogate: the field keeps the bytes' escapes as text, which
    no database refuses (no 500)."""
    client = world.browsers["seat"]
    body = (f"csrf_token={world.csrf['seat']}&text=x%ED%B0%80y").encode()
    answer = client.post(f"/games/{world.started.uid}/chat", data=body,
                         content_type="application/x-www-form-urlencoded")
    assert answer.status_code < 500
    texts = [row[0] for row in world.api.rows("SELECT text FROM chat_messages")]
    assert all(not re.search("[\ud800-\udfff]", text) for text in texts)


# ---------------------------------------------------------------------- the named cases


NAMED = {
    "chat message": ("chat", ("text",)),
    "game name": ("create", ("name",)),
    "seat name": ("create", ("seats", 0, "name")),
    "accepted name": ("accept", ("name",)),
    "pause reason": ("pause", ("reason",)),
    "webhook address": ("webhook", ("url",)),
}


@pytest.mark.parametrize("what", sorted(NAMED))
@pytest.mark.parametrize("bad", ["\udc00", "a\x00b"], ids=["lone surrogate", "NUL"])
def test_the_named_fields_refuse_a_lone_surrogate_and_a_nul(world: World, what: str,
                                                            bad: str) -> None:
    name, path = NAMED[what]
    endpoint = JSON_ENDPOINTS[name]
    before = state_of(world)
    answer = _send(world, endpoint, _put(endpoint.body(world), path, bad))
    assert answer.status_code == 400
    error = answer.get_json()["error"]
    assert "U+DC00" in error or "U+0000" in error
    assert ".".join(map(str, path)).replace(".0.", "[0].") in error  # where it is
    assert state_of(world) == before


@pytest.mark.parametrize("name", ["create", "chat", "pause", "webhook", "import"])
def test_json_nested_a_thousand_deep_is_refused(world: World, name: str) -> None:
    endpoint = JSON_ENDPOINTS[name]
    before = state_of(world)
    deep = "[" * 1000 + "]" * 1000
    for raw in (deep, json.dumps({"x": PLACEHOLDER}).replace(f'"{PLACEHOLDER}"', deep)):
        answer = _send(world, endpoint, None, raw=raw)
        assert answer.status_code == 400
        assert "nests arrays and objects" in answer.get_json()["error"]
    assert state_of(world) == before


@pytest.mark.parametrize(("form", "field_name"), [
    ("chat", "text"), ("new game", "name"), ("new game", "seat0_name"), ("pause", "reason"),
    ("webhook", "url"), ("join", "name")])
def test_the_forms_refuse_a_nul_with_a_page(world: World, form: str, field_name: str) -> None:
    before = state_of(world)
    fields = FORMS[form].fields(world) | {field_name: "a\x00b"}
    answer = _post_form(world, FORMS[form], fields)
    assert answer.status_code == 400
    page = answer.get_data(as_text=True)
    assert "<html" in page.lower() and "U+0000" in page and "Nothing was changed" in page
    assert state_of(world) == before


@pytest.mark.parametrize("path", ["/g/not-a-signed-token", "/l/not-a-signed-token",
                                  "/u/not-a-signed-token"])
def test_a_page_without_error_pages_of_its_own_answers_a_page(world: World, path: str) -> None:
    client = world.browsers["fresh"]
    answer = client.post(f"{path}?lang=pl", data={"csrf_token": world.csrf["fresh"],
                                                  "note": "a\x1bb"})
    assert answer.status_code == 400 and answer.mimetype == "text/html"
    page = answer.get_data(as_text=True)
    assert "U+001B" in page and "To żądanie zawiera znak" in page


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(value=_JSON_VALUES, ascii_only=st.booleans())
def test_a_body_the_quick_look_passes_is_one_the_whole_check_takes(value: Any,
                                                                   ascii_only: bool) -> None:
    """The check's quick look at a body (no escapes, no constants, few brackets, no unusable
    character in the text) never lets through what the whole check refuses."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    if plainly_usable(text):
        refuse_unusable_json(text)  # (raises UnusableInput if the quick look was wrong)
