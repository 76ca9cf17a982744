"""No request is answered 500 (issue 36): a number beyond what a database column holds is a 404
in the path and a 400 in a query or a body, a number no field could take anywhere in a JSON body
is a 400, and nothing changes (app/core/integers.py lists the guards, one for each kind of input).

The named tests send each cause the review found: an id of 2**31 and more in the path (2**63 on
SQLite), a chat page's ``before`` too large for its column, a takeback's id of 2**31 and more,
a 5,000-digit number in a JSON body, an address of the development outbox beyond the range,
and two found since: a link's token naming a seat beyond the range (its seat is looked up
before its signature is checked) and a counts form's total that is no number. The property
tests walk the app: every rule of its URL map with an integer in its path, every query
parameter the OpenAPI document types as an integer (and those pages read by hand), every
integer field of every request body the document describes and every integer of the accepted
bodies tests/test_hostile_input.py sends, and every form field that holds a number; each is
given numbers beyond a column's range (-2**31 - 1, 2**31, 2**63, 10**5000 and drawn ones):
the answer is never 5xx, and nothing changes. On SQLite and PostgreSQL. A malformed chunked
body, which Flask's test client cannot send, is sent through a real socket in
tests/test_no_500_servers.py.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from itsdangerous import URLSafeTimedSerializer
from werkzeug.exceptions import NotFound as RoutingNotFound
from werkzeug.routing import IntegerConverter, Rule

from app.core.integers import COLUMN_MAX
from app.service import BadRequest
from app.web.inputcheck import whole_number
from tests.apifixtures import ADMIN_TOKEN, Api, Table, bearer, bot_game, dispose, make_api
from tests.dbutil import fresh_database
from tests.test_hostile_input import (
    FORMS,
    JSON_ENDPOINTS,
    PLACEHOLDER,
    Form,
    JsonEndpoint,
    World,
    make_world,
    state_of,
)
from tests.test_pages import browser, csrf, give_seat

pytest_plugins = ["tests.apifixtures"]

HUGE = "1" + "0" * 5000
"""10**5000 as JSON writes it (Python will not even turn it into text: over 4,300 digits)."""
BEYOND = ["-2147483649", "2147483648", "9223372036854775808", "-9223372036854775809",
          "100000000000000000000000000000", HUGE]
"""Whole numbers no column holds, as a path, a query, a form or JSON writes them."""
DRAWN = st.one_of(st.integers(min_value=COLUMN_MAX + 1, max_value=2**80),
                  st.integers(min_value=-(2**80), max_value=-COLUMN_MAX - 2)).map(str)
EXAMPLES = 25
"""Drawn examples per property (besides every one of :data:`BEYOND`)."""
QUICK = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                 suppress_health_check=list(HealthCheck))


def raw_json(body: Any, path: tuple[Any, ...], number: str) -> str:
    """``body`` as JSON text, with ``number`` written as it is at ``path`` (made where missing)."""
    changed = copy.deepcopy(body)
    parent = changed
    for step, following in pairwise(path):
        if isinstance(parent, dict) and step not in parent:
            parent[step] = [] if isinstance(following, int) else {}
        if isinstance(parent, list) and step >= len(parent):
            parent.extend({} for _ in range(step + 1 - len(parent)))
        parent = parent[step]
    if isinstance(parent, list):
        parent.extend(None for _ in range(path[-1] + 1 - len(parent)))
    parent[path[-1]] = PLACEHOLDER
    return json.dumps(changed).replace(json.dumps(PLACEHOLDER), number, 1)


def send_json(client: FlaskClient, method: str, path: str, text: str,
              headers: dict[str, str] | None = None) -> Any:
    return client.open(path, method=method, data=text, content_type="application/json",
                       headers=headers)


# ====================================================================== the named causes


@pytest.fixture
def site(migrated_database_url: str) -> Iterator[Api]:
    """The app on a new database of each kind, taking webhooks to loopback addresses."""
    made = make_api(migrated_database_url, TITANPOST_WEBHOOK_ALLOW_PRIVATE="1")
    yield made
    dispose(made)


def _webhook(site: Api, table: Table) -> int:
    added = site.client.post(f"/api/games/{table.uid}/webhooks", headers=table.creator,
                             json={"url": "http://127.0.0.1:9/hook", "format": "json"})
    assert added.status_code == 201, added.get_json()
    number: int = added.get_json()["id"]
    return number


def test_a_webhook_id_beyond_a_column_in_the_path_is_not_found(site: Api) -> None:
    table = site.create(3)
    hook = _webhook(site, table)
    owner = browser(site)
    token = csrf(owner, "/new")
    assert owner.post(f"/games/{table.uid}/setup", data={
        "csrf_token": token, "creator_token": table.creator_token}).status_code == 303
    for number in [*BEYOND, str(2**31), str(2**63)]:
        gone = site.client.delete(f"/api/games/{table.uid}/webhooks/{number}",
                                  headers=table.creator)
        assert gone.status_code == 404, (number, gone.get_data()[:200])
        page = owner.post(f"/games/{table.uid}/webhooks/{number}/remove",
                          data={"csrf_token": token}, headers={"Accept": "text/html"})
        assert page.status_code == 404 and page.mimetype == "text/html", number
    # the largest a column holds is looked up, and names no webhook
    unknown = site.client.delete(f"/api/games/{table.uid}/webhooks/{COLUMN_MAX}",
                                 headers=table.creator)
    assert unknown.status_code == 404
    assert unknown.get_json()["error"] == f"game {table.uid} has no webhook {COLUMN_MAX}"
    listed = site.client.get(f"/api/games/{table.uid}/webhooks", headers=table.creator)
    assert [h["id"] for h in listed.get_json()["webhooks"]] == [hook]
    removed = site.client.delete(f"/api/games/{table.uid}/webhooks/{hook}",
                                 headers=table.creator)
    assert removed.status_code == 200


def test_a_chat_page_before_beyond_a_column_is_refused_naming_it(site: Api) -> None:
    table = site.new_started(3)
    said = site.client.post(f"/api/games/{table.uid}/chat", headers=table.seat(0),
                            json={"text": "good luck"})
    assert said.status_code == 201
    for number in [*BEYOND, "3e9", "2147483648.0"]:
        refused = site.client.get(f"/api/games/{table.uid}/chat?before={number}")
        assert refused.status_code == 400, number
        error = refused.get_json()["error"]
        assert error.startswith("the request is not valid: 'before': "), error
    assert site.client.get(f"/api/games/{table.uid}/chat?before=2147483648").get_json()[
        "error"] == ("the request is not valid: 'before': must be greater than or equal to 1 "
                     "and less than or equal to 2147483647 (see detail for each field)")
    refused = site.client.get(f"/api/games/{table.uid}/chat?limit=2147483648")
    assert refused.status_code == 400 and "'limit'" in refused.get_json()["error"]
    page = site.client.get(f"/api/games/{table.uid}/chat?before={COLUMN_MAX}")
    assert page.status_code == 200
    assert [m["text"] for m in page.get_json()["messages"]] == ["good luck"]


def _takeback_asked(site: Api) -> tuple[Table, int, list[int]]:
    """A started game whose last mover asked to take the move back: the table, the asker and
    the seats asked."""
    table = site.new_started(3)
    mover, options = site.actor(table)
    status, _ = site.submit(table, mover, options["seq"], options["options"][0])
    assert status == 200
    asked = site.client.post(f"/api/games/{table.uid}/takeback", headers=table.seat(mover))
    assert asked.status_code == 200, asked.get_json()
    return table, mover, [p for p in range(3) if p != mover]


def _pending(site: Api, table: Table) -> Any:
    return site.client.get(f"/api/games/{table.uid}/takeback").get_json()["takeback"]


def test_a_takeback_id_beyond_a_column_is_refused_and_changes_nothing(site: Api) -> None:
    table, _, others = _takeback_asked(site)
    pending = _pending(site, table)
    path = f"/api/games/{table.uid}/takeback/answer"
    for number in BEYOND:
        refused = send_json(site.client, "POST", path, f'{{"agree": true, "takeback": {number}}}',
                            table.seat(others[0]))
        assert refused.status_code == 400, (number, refused.get_json())
        assert "takeback" in refused.get_json()["error"]
    refused = site.client.post(path, json={"agree": True, "takeback": 2**31},
                               headers=table.seat(others[0]))
    assert refused.get_json()["error"] == "takeback must be a whole number from 0 to 2147483647"
    assert _pending(site, table) == pending
    # on the game page's form, the same refusal in the page's words
    ann = browser(site)
    give_seat(ann, table.uid, others[0])
    token = csrf(ann, f"/games/{table.uid}")
    for number in BEYOND:
        answered = ann.post(f"/games/{table.uid}/takeback/answer",
                            data={"csrf_token": token, "answer": "agree", "takeback": number})
        assert answered.status_code == 303, number
    page = ann.get(f"/games/{table.uid}").get_data(as_text=True)
    assert "takeback must be a whole number from 0 to 2147483647" in page
    assert _pending(site, table) == pending
    agreed = site.client.post(path, json={"agree": True, "takeback": pending["id"]},
                              headers=table.seat(others[0]))
    assert agreed.status_code == 200, agreed.get_json()


def test_a_whole_number_refusal_is_said_in_polish() -> None:
    with pytest.raises(BadRequest) as refused:
        whole_number("2147483648", "takeback")
    assert refused.value.say("pl") == "takeback musi być liczbą całkowitą od 0 do 2147483647"
    assert whole_number(" 12 ", "takeback") == 12 and whole_number(7, "seq") == 7
    for bad in (True, 1.0, "1.5", "", "٣", None, [], 2**31, -1):
        with pytest.raises(BadRequest):
            whole_number(bad, "seq")


@pytest.mark.parametrize("where", ["field", "unknown key", "in a list", "whole body"])
def test_a_number_no_field_takes_anywhere_in_a_json_body_is_refused(site: Api,
                                                                    where: str) -> None:
    table = site.new_started(3)
    mover, options = site.actor(table)
    move = {"expected_seq": options["seq"], "input": options["options"][0]}
    place: tuple[Any, ...] = {"field": ("expected_seq",), "unknown key": ("note",),
                              "in a list": ("note", 2), "whole body": ()}[where]
    before = site.observe(table)
    for number in (HUGE, "-" + HUGE, str(2**64), str(-(2**63) - 1), "1e400", "-1" + "9" * 400):
        text = raw_json(move, place, number) if place else number
        for path, headers in ((f"/api/games/{table.uid}/moves", table.seat(mover)),
                              (f"/api/games/{table.uid}/chat", table.seat(0)),
                              ("/api/games", {}), ("/api/admin/games/import",
                                                   bearer(ADMIN_TOKEN))):
            refused = send_json(site.client, "POST", path, text, headers)
            assert refused.status_code == 400, (path, number[:30], refused.get_data()[:300])
            error = refused.get_json()["error"]
            shown = ".".join(str(step) for step in place).replace(".2", "[2]")
            assert error.startswith(f"{shown or 'the request body'} holds a number too "
                                    f"large ({len(number)} characters)"), error
            assert "Nothing was changed" in refused.get_json()["message"]
    assert site.observe(table) == before
    # the widest number still read is refused for what it is, not for its size
    widest = send_json(site.client, "POST", f"/api/games/{table.uid}/moves",
                       raw_json(move, ("expected_seq",), str(2**64 - 1)), table.seat(mover))
    assert widest.status_code == 400
    assert widest.get_json()["error"].startswith("the request is not valid: 'expected_seq'")
    played = site.client.post(f"/api/games/{table.uid}/moves", json=move,
                              headers=table.seat(mover))
    assert played.status_code == 200


@pytest.mark.parametrize("place", [("game", "engine_version"), ("moves", 0, "seat"),
                                   ("moves", 1, "seq"), ("seats", 0, "position")])
def test_an_exports_numbers_beyond_a_column_are_refused(migrated_database_url: str,
                                                        place: tuple[Any, ...]) -> None:
    """An exported game's numbers are held to their columns' ranges (its engine version of
    2**31 was a 500 on PostgreSQL); its seed, a BIGINT's, is not."""
    site = make_api(migrated_database_url, TITANPOST_MAX_BODY_BYTES=str(1024 * 1024))
    try:
        export = site.service.export(bot_game(site.service, 3))
        games = site.rows("SELECT uid FROM games")
        for number in (str(2**31), str(-(2**31) - 1), str(2**63)):
            refused = send_json(site.client, "POST", "/api/admin/games/import",
                                raw_json(export, place, number), bearer(ADMIN_TOKEN))
            assert refused.status_code == 400, (number, refused.get_json())
            assert refused.get_json()["error"].endswith("is out of range"), refused.get_json()
        assert site.rows("SELECT uid FROM games") == games
        widest = copy.deepcopy(export)
        widest["game"]["seed"] = 2**63 - 1
        taken = site.client.post("/api/admin/games/import", json=widest,
                                 headers=bearer(ADMIN_TOKEN))
        assert taken.status_code == 201, taken.get_json()
    finally:
        dispose(site)


def test_the_development_outbox_beyond_a_column_is_not_found(site: Api) -> None:
    site.create(3)
    first = site.scalar("SELECT min(id) FROM outbox")
    assert site.client.get(f"/dev/mail/{first}").status_code == 200
    for number in [*BEYOND, str(2**63)]:
        for path in (f"/dev/mail/{number}", f"/dev/mail/{number}/html",
                     f"/dev/mail/{number}.eml", f"/dev/mail/{number}/image/board.png"):
            assert site.client.get(path).status_code == 404, path
    assert site.client.get(f"/dev/mail/{COLUMN_MAX}").status_code == 404


def test_the_int_converter_takes_what_a_column_holds(site: Api) -> None:
    adapter = site.app.url_map.bind("localhost")
    assert adapter.match("/dev/mail/2147483647") == ("devmail.show", {"mail_id": 2147483647})
    assert adapter.match("/dev/mail/000000000000000000000012")[1] == {"mail_id": 12}
    for number in ("2147483648", "9" * 11, HUGE):
        with pytest.raises(RoutingNotFound):
            adapter.match(f"/dev/mail/{number}")
    # a rule asking a range of its own keeps it
    rule = Rule("/page/<int(min=3, max=9):n>", endpoint="page")
    own = site.app.url_map.__class__([rule]).bind("localhost")
    assert own.match("/page/9") == ("page", {"n": 9})
    with pytest.raises(RoutingNotFound):
        own.match("/page/10")


@pytest.mark.parametrize("payload", [
    {"s": 2**31}, {"s": 2**63}, {"s": 3e9}, {"s": 0, "q": 2**31, "o": "pick red"},
    {"s": -(2**31) - 1}, {"s": "1"}, {"s": True}])
def test_a_link_naming_a_seat_beyond_a_column_is_damaged(site: Api,
                                                         payload: dict[str, Any]) -> None:
    """Anyone can make a token that names any seat: its seat is looked up (to find whose
    secret checks its signature) only when a column can hold it."""
    table = site.new_started(3)
    before = site.observe(table)
    token = URLSafeTimedSerializer("anyone's key").dumps({"g": table.uid, **payload})
    reader = browser(site)
    for path in (f"/t/{token}", f"/g/{token}", f"/l/{token}", f"/u/{token}",
                 f"/g/{token}/rematch"):
        answer = reader.get(path)
        assert 400 <= answer.status_code < 500, (path, answer.status_code)
    assert site.observe(table) == before


# ====================================================================== the properties


@dataclass
class Walk:
    """The world of tests/test_hostile_input.py, and what is walked in it: who calls (each a
    client with its headers and the body its requests carry)."""

    world: World
    callers: dict[str, tuple[FlaskClient, dict[str, str], dict[str, Any]]] = field(
        default_factory=dict)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def walk(request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[Walk]:
    folder = tmp_path_factory.mktemp(f"no500-{request.param}")
    with fresh_database(request.param, folder) as database_url:
        world = make_world(database_url)
        admin = world.api.app.test_client()
        token = csrf(admin, "/admin/login")
        assert admin.post("/admin/login", data={"csrf_token": token, "token": ADMIN_TOKEN}
                          ).status_code == 303
        world.browsers["admin"], world.csrf["admin"] = admin, csrf(admin, "/new")
        walked = Walk(world)
        seat, creator = world.started.seat(0), world.started.creator
        walked.callers = {
            "seat and creator": (world.api.client, seat | creator, {"json": {"computer": True}}),
            "admin": (world.api.client, bearer(ADMIN_TOKEN) | creator, {}),
            **{name: (world.browsers[name], {}, {"data": {"csrf_token": world.csrf[name]}})
               for name in ("owner", "seat", "admin")},
        }
        yield walked
        dispose(world.api)


# ---------------------------------------------------------------------- the path


RULE_PART = re.compile(r"<(?:[^:>]+:)?(?P<name>[^>]+)>")


def integer_rules(walk: Walk) -> list[tuple[Rule, str]]:
    """Every rule of the app's URL map with an integer converter, with each of its methods."""
    return [(rule, method) for rule in walk.world.api.app.url_map.iter_rules()
            if any(isinstance(c, IntegerConverter) for c in rule._converters.values())
            for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"})]


def _address(walk: Walk, rule: Rule, number: str) -> str:
    """The rule's address, its integers ``number`` and its other parts of the world's game."""

    def part(found: re.Match[str]) -> str:
        converter = rule._converters[found["name"]]
        if isinstance(converter, IntegerConverter):
            return number
        return walk.world.started.uid if found["name"] == "uid" else "board.png"

    return RULE_PART.sub(part, rule.rule)


def test_the_walk_finds_the_integer_addresses(walk: Walk) -> None:
    found = {rule.endpoint for rule, _ in integer_rules(walk)}
    assert found >= {"webhooks_api.delete_webhook", "clock_api.cancel_away", "api.replace_seat",
                     "admin_api.admin_state_at", "webhooks.remove_hook", "seats.replace_seat",
                     "me.cancel_away", "signin.open_seat", "devmail.show", "devmail.raw",
                     "devmail.html", "devmail.image"}, sorted(found)
    rule = next(rule for rule, _ in integer_rules(walk) if rule.endpoint == "devmail.image")
    assert _address(walk, rule, "5") == "/dev/mail/5/image/board.png"


def test_every_integer_in_a_path_beyond_a_column_is_not_found(walk: Walk) -> None:
    before = state_of(walk.world)
    rules = integer_rules(walk)

    def ask(rule: Rule, method: str, number: str) -> None:
        for name, (client, headers, body) in walk.callers.items():
            answer = client.open(_address(walk, rule, number), method=method, headers=headers,
                                 **body)
            assert answer.status_code == 404, (rule.rule, method, number[:30], name,
                                               answer.get_data()[:300])

    for rule, method in rules:
        for number in BEYOND:
            ask(rule, method, number)

    @given(chosen=st.sampled_from(rules), number=DRAWN)
    @QUICK
    def drawn(chosen: tuple[Rule, str], number: str) -> None:
        ask(*chosen, number)

    drawn()
    assert state_of(walk.world) == before


# ---------------------------------------------------------------------- the query


def _spec(walk: Walk) -> dict[str, Any]:
    spec: dict[str, Any] = walk.world.api.client.get("/api/openapi.json").get_json()
    return spec


def integer_queries(walk: Walk) -> list[tuple[str, str, str]]:
    """(method, path, parameter) of every query parameter the API document types as an
    integer."""
    return [(method.upper(), path, parameter["name"])
            for path, operations in _spec(walk)["paths"].items()
            for method, operation in operations.items() if isinstance(operation, dict)
            for parameter in operation.get("parameters", [])
            if parameter.get("in") == "query"
            and parameter.get("schema", {}).get("type") == "integer"]


PAGE_QUERIES = [("admin", "/admin/replay/{uid}", "step"), ("seat", "/games/{uid}/preview", "seq")]
"""The numbers pages read from their query by hand (who asks, the page, the parameter)."""


def test_every_integer_in_a_query_beyond_a_column_is_refused(walk: Walk) -> None:
    before = state_of(walk.world)
    queries = integer_queries(walk)
    assert ("GET", "/api/games/{uid}/chat", "before") in queries
    client, headers, _ = walk.callers["seat and creator"]

    def ask(method: str, path: str, name: str, number: str) -> None:
        answer = client.open(path.format(uid=walk.world.started.uid), method=method,
                             query_string={name: number}, headers=headers)
        assert answer.status_code == 400, (path, name, number[:30], answer.get_data()[:300])
        assert f"'{name}'" in answer.get_json()["error"]

    def ask_page(who: str, path: str, name: str, number: str) -> None:
        answer = walk.world.browsers[who].get(path.format(uid=walk.world.started.uid),
                                              query_string={name: number})
        assert answer.status_code < 500, (path, name, number[:30])

    for number in BEYOND:
        for query in queries:
            ask(*query, number)
        for page in PAGE_QUERIES:
            ask_page(*page, number)

    @given(query=st.sampled_from(queries), page=st.sampled_from(PAGE_QUERIES), number=DRAWN)
    @QUICK
    def drawn(query: tuple[str, str, str], page: tuple[str, str, str], number: str) -> None:
        ask(*query, number)
        ask_page(*page, number)

    drawn()
    assert state_of(walk.world) == before


# ---------------------------------------------------------------------- the JSON bodies


TAKEBACK_ANSWER = JsonEndpoint(
    "POST", lambda w: f"/api/games/{w.started.uid}/takeback/answer",
    "/api/games/{uid}/takeback/answer", lambda w: w.started.seat(1),
    lambda w: {"agree": True, "takeback": 1}, accepted=False)
"""The answer to a takeback, whose body the view reads by hand (the document describes no
schema for it)."""
BODIES = {**JSON_ENDPOINTS, "takeback answer": TAKEBACK_ANSWER}
HAND_READ = {"takeback answer": [("takeback",)]}
"""The integer fields of the bodies views read by hand."""


def _resolved(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A schema with its reference followed (a nested schema's, given as the one item of an
    ``allOf``, too)."""
    while "$ref" in schema or len(schema.get("allOf", [])) == 1:
        if "allOf" in schema:
            schema = schema["allOf"][0]
        else:
            schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def schema_integers(spec: dict[str, Any], schema: dict[str, Any],
                    path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every integer field of a request schema (an array's by its first item)."""
    schema = _resolved(spec, schema)
    if schema.get("type") == "integer":
        yield path
    for name, inner in schema.get("properties", {}).items():
        yield from schema_integers(spec, inner, (*path, name))
    if "items" in schema:
        yield from schema_integers(spec, schema["items"], (*path, 0))


def body_integers(walk: Walk, name: str) -> list[tuple[Any, ...]]:
    """The integer fields of endpoint ``name``'s body: its schema's in the document (or those
    its view reads by hand)."""
    endpoint = BODIES[name]
    if name in HAND_READ:
        return HAND_READ[name]
    spec = _spec(walk)
    operation = spec["paths"][endpoint.operation][endpoint.method.lower()]
    content = operation.get("requestBody", {}).get("content", {})
    schema = content.get("application/json", {}).get("schema")
    return sorted(set(schema_integers(spec, schema)), key=str) if schema else []


def _integers_in(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place of a JSON value holding an integer (not a boolean)."""
    if type(value) is int:
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _integers_in(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _integers_in(item, (*path, index))


def test_the_walk_finds_the_integer_fields(walk: Walk) -> None:
    assert ("expected_seq",) in body_integers(walk, "move")
    assert {("seed",), ("seats", 0, "team"), ("settings", "deadline_hours")} <= set(
        body_integers(walk, "create"))
    assert ("position",) in body_integers(walk, "invite")
    assert ("version",) in body_integers(walk, "import")
    assert len(list(_integers_in(walk.world.export))) > 50


@pytest.mark.parametrize("name", sorted(BODIES))
def test_every_integer_field_of_a_body_beyond_a_column_is_refused(walk: Walk,
                                                                  name: str) -> None:
    """Each integer field an endpoint's body may have is refused (400, named) beyond a
    column's range; so is (never 5xx) each integer of the accepted body it is sent."""
    endpoint = BODIES[name]
    world = walk.world
    base = endpoint.body(world)
    fields = body_integers(walk, name)
    before = state_of(world)

    def send(place: tuple[Any, ...], number: str) -> Any:
        return send_json(world.api.client, endpoint.method, endpoint.path(world),
                         raw_json(base, place, number), endpoint.headers(world))

    for place in fields:
        for number in BEYOND:
            answer = send(place, number)
            assert answer.status_code == 400, (place, number[:30], answer.get_data()[:300])
            shown = ".".join(str(step) for step in place if not isinstance(step, int))
            assert str(place[-1]) in answer.get_json()["error"] or shown in json.dumps(
                answer.get_json().get("detail")), (place, answer.get_json())
    assert state_of(world) == before
    places = fields + [p for p in _integers_in(base) if p not in fields]
    if not places:
        return

    @given(place=st.sampled_from(places), number=st.one_of(st.sampled_from(BEYOND), DRAWN))
    @QUICK
    def drawn(place: tuple[Any, ...], number: str) -> None:
        answer = send(place, number)
        assert answer.status_code < 500, (place, number[:30], answer.get_data()[:300])

    drawn()


# ---------------------------------------------------------------------- the forms


TAKEBACK_FORM = Form(lambda w: f"/games/{w.started.uid}/takeback/answer", "seat",
                     lambda w: {"answer": "agree", "takeback": "1"}, accepted=False)
NUMBER_FIELDS = {
    "new game": ["deadline_hours", "reaction_hours", "bank_hours", "increment_hours",
                 "max_missed", "seat0_team"],
    "invite": ["position"],
    "move": ["seq", "total", "count_P"],
    "takeback answer": ["takeback"],
}
"""The form fields the pages read as numbers."""
NUMBER_FORMS = {**FORMS, "takeback answer": TAKEBACK_FORM}


def test_every_form_field_holding_a_number_is_walked(walk: Walk) -> None:
    """The fields above include every field of the forms that holds a number as it is sent."""
    for name, form in NUMBER_FORMS.items():
        holding = {key for key, value in form.fields(walk.world).items() if value.isdigit()}
        assert holding <= set(NUMBER_FIELDS.get(name, [])), (name, holding)


@pytest.mark.parametrize("name", sorted(NUMBER_FIELDS))
def test_every_number_of_a_form_beyond_a_column_changes_nothing(walk: Walk, name: str) -> None:
    form = NUMBER_FORMS[name]
    world = walk.world
    client = world.browsers[form.browser]
    base = {"csrf_token": world.csrf[form.browser], **form.fields(world)}
    if name == "move":
        base["counts"] = "place"  # (a counts form: its total and counts read as numbers)
    before = state_of(world)

    def post(key: str, number: str) -> None:
        answer = client.post(form.path(world), data={**base, key: number})
        assert answer.status_code < 500, (key, number[:30], answer.get_data()[:300])

    for key in NUMBER_FIELDS[name]:
        for number in BEYOND:
            post(key, number)

    @given(key=st.sampled_from(NUMBER_FIELDS[name]), number=DRAWN)
    @QUICK
    def drawn(key: str, number: str) -> None:
        post(key, number)

    drawn()
    assert state_of(world) == before
