"""Schemathesis over every operation of ``/api/openapi.json``: no 5xx, answers as documented.

The app runs in-process (WSGI) on a migrated SQLite database holding real games: a started
game of three human seats (their API tokens), an open game (its creator token and unused
invitations), a game kept for abandoning and a finished computer game. Each generated request
is given, drawn by hypothesis, real credentials (a seat token, the admin token, a creator token,
or none or a wrong one) and real game ids in its path; moves are sometimes the legal option
pending now, invitations real ones, and imports a real export with one field changed to any
JSON value, so that the fuzzing reaches the service and the rules engine rather than stopping
at "unknown game". Every answer must be below 500, carry a status code the document lists for
the operation, with the documented content type, and match the schema it declares.

Generation is derandomized (a fixed seed, no example database) and bounded by ``EXAMPLES`` per
operation so that CI is stable and quick.

Schemathesis is used as a library: each operation of the document (read once at collection
from an app on a throwaway database) is one test, whose cases come from the operation's
hypothesis strategies, positive and negative. Its pytest plugin (``from_fixture`` and
``parametrize``) is not used: it writes pytest's private node attributes, which pytest 9.1
removed (schemathesis 4.32 with pytest 9.2 fails every test with ``AttributeError:
'Function' object has no attribute '_nodeid'``); pyproject.toml declares the versions this
module is known to run with.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from app import create_app
from app.core.config import Settings
from tests.apifixtures import ADMIN_TOKEN, Api, Table, base_env, bot_game, dispose, make_api

pytest_plugins = ["tests.apifixtures"]

EXAMPLES = 30
SEED = 8
WRONG = "wrong-token-0123456789abcdef"
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@dataclass
class World:
    api: Api
    started: Table
    waiting: Table
    doomed: Table
    finished: str
    export: dict[str, Any]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder: Path = tmp_path_factory.mktemp("fuzz-api")
    api = make_api(f"sqlite:///{folder / 'fuzz.db'}", TITANPOST_RATE_LIMIT_LOGIN="off")
    started = api.new_started(3)
    waiting = api.create(3, prefix="w")
    doomed = api.create(3, prefix="d")
    finished = bot_game(api.service, 3)
    export = api.service.export(finished)
    yield World(api, started, waiting, doomed, finished, export)
    dispose(api)


@pytest.fixture(scope="module")
def api_schema(world: World) -> Any:
    config = schemathesis.Config.from_dict({
        "seed": SEED,
        "generation": {"mode": "all", "deterministic": True},
        "phases": {"examples": {"enabled": False}, "coverage": {"enabled": False},
                   "stateful": {"enabled": False}},
    })
    return schemathesis.openapi.from_wsgi("/api/openapi.json", world.api.app, config=config)


def _operations() -> list[tuple[str, str]]:
    """Every operation of the API document as ``(METHOD, path)``, read from an app on a
    database in a folder of its own (the document needs nothing of it)."""
    with tempfile.TemporaryDirectory() as folder:
        app = create_app(Settings.from_env(base_env(f"sqlite:///{folder}/spec.db")))
        spec = app.test_client().get("/api/openapi.json").get_json()
        app.extensions["titanpost.service"].engine.dispose()
    return [(method.upper(), path) for path, operations in sorted(spec["paths"].items())
            for method in operations if method in ("get", "post", "put", "patch", "delete")]


OPERATIONS = _operations()

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=3),
    max_leaves=8,
)


def _legal_move(world: World) -> dict[str, Any] | None:
    """The seat whose decision is pending in the started game and its legal options."""
    svc = world.api.service
    uid = world.started.uid
    acting = svc.state(uid, None)["game"]["to_act"]
    if not acting:
        return None
    opts = svc.options(uid, acting[0])
    if not opts.get("options"):
        return None
    return {"position": acting[0], "seq": opts["seq"], "options": opts["options"]}


def _credentials(case: Any, world: World, data: st.DataObject) -> None:
    """Real ids and tokens in place of what was generated (or the generated ones, or none)."""
    if "uid" in (case.path_parameters or {}) and data.draw(st.booleans(), label="real uid"):
        path = case.operation.path
        uids = [world.started.uid, world.waiting.uid, world.finished, "0" * 32]
        if path.endswith("/abandon"):  # only the game kept for it may be abandoned
            uids = [world.doomed.uid, world.finished, "0" * 32]
        case.path_parameters["uid"] = data.draw(st.sampled_from(uids), label="uid")
    headers = dict(case.headers or {})
    seats = [f"Bearer {token}" for token in world.started.tokens.values()]
    auth = data.draw(st.sampled_from([*seats, f"Bearer {ADMIN_TOKEN}", f"Bearer {WRONG}", None]),
                     label="authorization")
    if auth is not None:
        headers["Authorization"] = auth
    creators = [world.waiting.creator_token, world.doomed.creator_token,
                world.started.creator_token, WRONG, None]
    creator = data.draw(st.sampled_from(creators), label="creator token")
    if creator is not None:
        headers["X-Creator-Token"] = creator
    case.headers = headers


def _deep_bodies(case: Any, world: World, data: st.DataObject) -> None:
    """Bodies that get past validation to the service: a legal move, a real invitation, an
    export with one field set to any JSON value."""
    path = case.operation.path
    if path.endswith("/moves") and data.draw(st.booleans(), label="legal move"):
        move = _legal_move(world)
        if move is not None:
            case.path_parameters["uid"] = world.started.uid
            case.headers["Authorization"] = f"Bearer {world.started.tokens[move['position']]}"
            case.body = {"expected_seq": move["seq"],
                         "input": data.draw(st.sampled_from(move["options"]), label="input")}
    elif path.endswith("/invitations/accept") and data.draw(st.booleans(), label="invited"):
        tokens = sorted(world.waiting.invitations.values())
        case.body = {"invite_token": data.draw(st.sampled_from(tokens), label="invitation")}
    elif path.endswith("/games/import") and data.draw(st.booleans(), label="real export"):
        body = copy.deepcopy(world.export)
        if not data.draw(st.booleans(), label="unchanged"):
            part = data.draw(st.sampled_from(["game", "seat", "move", "top"]), label="part")
            target = {"game": body["game"], "seat": body["seats"][0],
                      "move": body["moves"][0], "top": body}[part]
            key = data.draw(st.sampled_from(sorted(target)), label="field")
            target[key] = data.draw(JSON, label="value")
        case.headers["Authorization"] = f"Bearer {ADMIN_TOKEN}"
        case.body = body


@pytest.mark.parametrize(("method", "path"), OPERATIONS,
                         ids=[f"{method} {path}" for method, path in OPERATIONS])
def test_api_never_fails_and_answers_as_documented(
    method: str, path: str, api_schema: Any, world: World
) -> None:
    operation = api_schema[path][method]
    cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE),
                      operation.as_strategy(GenerationMode.NEGATIVE))

    @given(case=cases, data=st.data())
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def call(case: Any, data: st.DataObject) -> None:
        _credentials(case, world, data)
        _deep_bodies(case, world, data)
        case.call_and_validate(checks=CHECKS)

    call()
