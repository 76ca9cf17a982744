"""A request names its circuits by built-in name or gives them inline: never a path.

Nothing sent to the server (the JSON API, the new-game form) makes it read a file of its own:
a path (absolute, relative, a FIFO, a missing file, a real TOML file) is one clear 400 that
names no file and lists none of a file's keys, and changes nothing. An inline circuit (the
file's content as JSON) is checked as the file would be. The admin's command line still takes
a circuit file (the admin's own machine): it reads it itself and stores it inline. Games
stored before keep loading: they hold built-in names (any case) or inline objects. On SQLite
and PostgreSQL.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from flask.testing import FlaskClient

from app.games.titanrace.engine import CircuitError, local_circuit, resolve_circuit
from cli.main import main
from tests.apifixtures import Api

pytest_plugins = ["tests.apifixtures"]

ROOT = Path(__file__).resolve().parent.parent
SEATS = [{"email": f"{c}@example.com"} for c in "abc"]
INLINE = {"name": "my-track", "bonus": ["C5", "f10"], "ice": ["D4"], "super_ramps": {"a3": "r"}}
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
FILE_WORDS = ("passwd", "pyproject", "build-system", "No such file", "cannot read",
              "x.toml", "fifo", "root:")
"""What a refusal must not say: a file's name, a file's keys or content, an OS error."""


def game_count(api: Api) -> int:
    return int(api.scalar("SELECT count(*) FROM games"))


def refused_without_naming_files(api: Api, circuits: list[Any], word: str = "circuit",
                                 **body: Any) -> str:
    before = game_count(api)
    response = api.client.post("/api/games", json={"seats": SEATS, "circuits": circuits, **body})
    assert response.status_code == 400, response.get_data(as_text=True)
    answer = response.get_json()
    error = str(answer["error"]) + json.dumps(answer.get("detail", {}))
    assert word in error, error
    for word in FILE_WORDS:
        assert word not in error, error
    assert game_count(api) == before
    return error


# ---------------------------------------------------------------------- the JSON API


@pytest.mark.parametrize("path", [
    "/etc/passwd", "x.toml", "../pyproject.toml", "/nowhere/at/all.toml",
    str(ROOT / "pyproject.toml"), str(ROOT / "tests" / "circuits" / "mixed-bag.toml"),
])
def test_a_path_is_refused_naming_no_file(api: Api, path: str) -> None:
    error = refused_without_naming_files(api, [path])
    assert "file paths are not accepted" in error
    assert "kaldheira" in error  # what to give instead


def test_a_fifo_is_never_opened(api: Api, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    answers: list[Any] = []
    worker = threading.Thread(target=lambda: answers.append(api.client.post(
        "/api/games", json={"seats": SEATS, "circuits": [str(fifo)]})), daemon=True)
    worker.start()
    worker.join(timeout=20)
    if worker.is_alive():  # (the server opened the FIFO: let it go, then fail)
        with open(fifo, "w"):
            pass
        worker.join(timeout=20)
        pytest.fail("the server opened a FIFO a request named and waited on it")
    response = answers[0]
    assert response.status_code == 400
    assert "fifo" not in response.get_json()["error"]
    assert game_count(api) == 0


def test_grand_slam_with_one_path_among_names_is_refused(api: Api) -> None:
    refused_without_naming_files(api, ["kaldheira", "/etc/passwd", "anglieh"],
                                 variant="grand-slam")


@pytest.mark.parametrize("circuit", [7, ["kaldheira"], None, True])
def test_a_circuit_that_is_neither_name_nor_object_is_refused(api: Api, circuit: Any) -> None:
    refused_without_naming_files(api, [circuit])


def test_a_great_race_start_is_a_city_never_a_path(api: Api) -> None:
    refused_without_naming_files(api, ["/etc/passwd"], "alger", game="great-race")


def test_an_inline_circuit_is_played_on(api: Api) -> None:
    table = api.new_started(3, circuits=[INLINE])
    state = api.state(table.uid)
    assert state["game"]["circuits"] == ["my-track"]
    page = api.client.get(f"/games/{table.uid}")
    assert page.status_code == 200 and "my-track" in page.get_data(as_text=True)
    (stored,) = api.rows("SELECT setup FROM games WHERE uid = :uid", uid=table.uid)[0]
    stored = json.loads(stored) if isinstance(stored, str) else stored
    assert stored == {"circuits": [INLINE]}


@pytest.mark.parametrize(("circuit", "words"), [
    ({"name": "x", "lava": ["Z99"]}, "'lava'"),
    ({"name": "x", "doors": ["A1"]}, "unknown key 'doors'"),
    ({"bonus": ["A1"]}, "'name'"),
    ({"name": "x", "ice": ["D2", "D4", "D6", "D8", "D10", "D12"]}, "never stop"),
    ({"name": "two\nlines"}, "printable"),
    ({"name": "x" * 61}, "at most 60"),
])
def test_an_inline_circuit_is_checked_as_its_file_would_be(api: Api, circuit: dict[str, Any],
                                                           words: str) -> None:
    before = game_count(api)
    response = api.client.post("/api/games", json={"seats": SEATS, "circuits": [circuit]})
    assert response.status_code == 400
    assert words in response.get_json()["error"]
    assert "inline circuit" in response.get_json()["error"]
    assert game_count(api) == before


def test_stored_games_still_load(api: Api) -> None:
    """What games store: built-in names as given (any case and spacing, from the API), slugs
    (the form, the command line), inline objects, a Great Race's start city; each loads, draws
    and starts."""
    tables = [api.new_started(3, circuits=[" Kaldheira "]),
              api.new_started(3, circuits=["ban-kog"]),
              api.new_started(3, circuits=[INLINE]),
              api.new_started(3, circuits=["KALDHEIRA", INLINE, "anglieh"], variant="grand-slam"),
              api.new_started(3, circuits=["le-cap"], game="great-race")]
    stored = [row[0] for row in api.rows("SELECT setup FROM games ORDER BY id")]
    stored = [json.loads(c) if isinstance(c, str) else c for c in stored]
    assert stored == [{"circuits": [" Kaldheira "]}, {"circuits": ["ban-kog"]},
                      {"circuits": [INLINE]}, {"circuits": ["KALDHEIRA", INLINE, "anglieh"]},
                      {"start": "le-cap"}]
    for table in tables:
        assert api.client.get(f"/games/{table.uid}").status_code == 200
        assert api.client.get(f"/games/{table.uid}/log").status_code == 200
        api.play(table, 1)
    assert api.service.verify_all() == {}


# ---------------------------------------------------------------------- the new-game form


def _form(client: FlaskClient, **changes: str) -> dict[str, str]:
    page = client.get("/new")
    found = CSRF.search(page.get_data(as_text=True))
    assert found
    return {"csrf_token": found.group(1), "name": "Friday race", "variant": "standard",
            "circuit0": "kaldheira", "seat0_kind": "human", "seat0_email": "ann@example.com",
            "seat1_kind": "human", "seat1_email": "ben@example.com", "seat2_kind": "computer",
            **changes}


@pytest.mark.parametrize("path", ["/etc/passwd", "x.toml", "../pyproject.toml"])
def test_the_form_takes_built_in_boards_only(api: Api, path: str) -> None:
    client = api.app.test_client()
    response = client.post("/new", data=_form(client, circuit0=path))
    assert response.status_code == 400
    text = response.get_data(as_text=True)
    assert "built-in boards" in text
    assert "passwd" not in text and "pyproject" not in text
    assert game_count(api) == 0
    assert client.post("/new", data=_form(client)).status_code == 303
    assert game_count(api) == 1


# ---------------------------------------------------------------------- the command line


def test_the_admin_command_line_reads_a_circuit_file_and_stores_it_inline(
        migrated_database_url: str) -> None:
    env = {"TITANPOST_DATABASE_URL": migrated_database_url, "TITANPOST_ENV": "test"}
    path = ROOT / "tests" / "circuits" / "mixed-bag.toml"
    result = CliRunner().invoke(main, ["admin", "new-game", "-c", str(path), "--bot", "--bot",
                                       "--bot", "--json"], env=env)
    assert result.exit_code == 0, result.output
    engine = sa.create_engine(migrated_database_url)
    try:
        with engine.connect() as conn:
            setup = conn.execute(sa.text("SELECT setup FROM games")).scalar_one()
    finally:
        engine.dispose()
    stored = (json.loads(setup) if isinstance(setup, str) else setup)["circuits"]
    assert stored == [local_circuit(str(path)).to_data()]
    assert resolve_circuit(stored[0]).name == "mixed-bag"


def test_the_command_line_refuses_a_fifo_and_an_unknown_name(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(CircuitError, match="not a regular file"):
        local_circuit(str(fifo))
    with pytest.raises(CircuitError, match="unknown circuit 'atlantis'"):
        local_circuit("atlantis")


def test_resolving_a_circuit_never_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "track.toml"
    path.write_text('name = "track"\n', encoding="utf-8")
    with pytest.raises(CircuitError) as refused:
        resolve_circuit(str(path))
    assert str(path) not in str(refused.value) and "track" not in str(refused.value)
    assert local_circuit(str(path)).name == "track"
