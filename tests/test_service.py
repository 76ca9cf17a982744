"""GameService directly, over real migrated databases: the append-only log and its hash chain,
admin replay, export/import between databases, ``titanpost admin`` and game set-ups."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from app.core.models import ChatMessage, Game, Move, Seat
from app.features.chat import messages as chat
from app.service import (
    BadRequest,
    GameService,
    NotFound,
    genesis_hash,
    move_hash,
)
from tests.apifixtures import (
    bot_game,
    human_game,
    make_service,
    replay_views,
    run_titanpost,
)

# The fixtures (service, ...) live in tests/apifixtures.py.
pytest_plugins = ["tests.apifixtures"]

APPEND_ONLY = "append-only"


def move_rows(svc: GameService) -> list[tuple[Any, ...]]:
    with svc.engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT game_id, seq, seat, input, outcomes, created_at, prev_hash, hash "
                "FROM moves ORDER BY game_id, seq"
            )
        )
        return [tuple(str(v) for v in row) for row in rows]


def execute(svc: GameService, sql: str, **params: Any) -> None:
    with svc.engine.begin() as conn:
        conn.execute(sa.text(sql), params)


def without_uid(state: dict[str, Any]) -> dict[str, Any]:
    """A state body with the game's id (which an import changes) left out."""
    return {**state, "game": {k: v for k, v in state["game"].items() if k != "game"}}


# ---------------------------------------------------------------------- the move log


def test_hash_chain_links_every_move(service: GameService) -> None:
    uid = bot_game(service)
    export = service.export(uid)
    moves = export["moves"]
    assert len(moves) > 20
    assert [m["seq"] for m in moves] == list(range(1, len(moves) + 1))
    previous = genesis_hash(export["game"]["initial_state"])
    with service.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        stored = s.exec(select(Move).where(Move.game_id == game.id).order_by(Move.seq)).all()
    assert len(stored) == len(moves)
    for move in stored:
        assert move.prev_hash == previous, move.seq
        assert move.hash == move_hash(
            move.prev_hash, move.seq, move.seat, move.input, move.outcomes, move.created_at,
            move.kind, move.actor,
        )
        assert len(set(move.hash)) > 1 and len(move.hash) == 64
        previous = move.hash
    assert service.verify_all() == {}


def test_moves_refuse_update_and_delete(service: GameService) -> None:
    uid = bot_game(service)
    before = move_rows(service)
    with service.session() as s:
        game_id = s.exec(select(Game).where(Game.uid == uid)).one().id

    # Through the ORM: a changed move, a deleted move.
    with service.session() as s:
        move = s.get(Move, (game_id, 3))
        assert move is not None
        move.input = "end"
        s.add(move)
        with pytest.raises(IntegrityError, match=APPEND_ONLY):
            s.commit()
    with service.session() as s:
        move = s.get(Move, (game_id, 3))
        s.delete(move)
        with pytest.raises(IntegrityError, match=APPEND_ONLY):
            s.commit()
    # Through Core statements, one row and every row.
    for statement in (
        sa.update(Move).where(Move.game_id == game_id, Move.seq == 1).values(seat=2),
        sa.update(Move).values(hash="0" * 64),
        sa.delete(Move).where(Move.game_id == game_id, Move.seq == 1),
        sa.delete(Move),
    ):
        with pytest.raises(IntegrityError, match=APPEND_ONLY), service.session() as s:
            s.execute(statement)
            s.commit()
    assert move_rows(service) == before
    assert service.verify_all() == {}


def test_state_at_equals_replaying_the_log(service: GameService) -> None:
    uid = bot_game(service)
    views = replay_views(service, uid)
    last = len(views) - 1
    replay = service.replay(uid)
    for seq in sorted({0, 1, 2, 3, 7, 10, last // 2, last - 1, last}):
        at = service.state_at(uid, seq)
        assert at["seq"] == seq
        assert at["view"] == views[seq] == replay["steps"][seq]["view"], seq
    # The full (admin) view: every hand is shown.
    assert all(isinstance(t["hand"], list) for t in views[5]["titans"].values())
    for bad in (-1, last + 1):
        with pytest.raises(NotFound):
            service.state_at(uid, bad)
    with pytest.raises(NotFound):
        service.state_at("0" * 32, 0)


def test_replay_has_the_start_and_one_step_per_move(service: GameService) -> None:
    uid = bot_game(service)
    replay = service.replay(uid)
    log = service.log(uid)["moves"]
    steps = replay["steps"]
    assert len(steps) == len(log) + 1
    assert steps[0]["seq"] == 0 and steps[0]["move"] is None
    whole = [{k: v for k, v in m.items() if k not in ("prev_hash", "hash")}
             for m in service.export(uid)["moves"]]  # (the admin's replay hides nothing)
    assert [s["move"] for s in steps[1:]] == whole
    assert [s["move"]["seq"] for s in steps[1:]] == [m["seq"] for m in log]
    assert steps[-1]["view"] == service.state_at(uid, len(log))["view"]
    assert steps[-1]["view"]["winners"]
    # A game not started has nothing to replay.
    open_game = service.create_game(seats=[{"email": f"o{i}@x.org"} for i in range(3)])
    assert service.replay(open_game["game"])["steps"] == []


def test_verify_with_a_game_waiting_for_players(service: GameService) -> None:
    """A game not started yet has no log to check: verify must pass over it, not crash."""
    bot_game(service)
    service.create_game(seats=[{"email": f"o{i}@x.org"} for i in range(3)])
    assert service.verify_all() == {}


# ---------------------------------------------------------------------- export and import


@pytest.fixture
def sqlite_service(tmp_path: Path) -> Iterator[GameService]:
    svc = make_service(f"sqlite:///{tmp_path / 'other.db'}", TITANPOST_SNAPSHOT_EVERY="3")
    yield svc
    svc.engine.dispose()


@pytest.fixture
def postgres_service(postgres_url: str) -> Iterator[GameService]:
    svc = make_service(postgres_url, TITANPOST_SNAPSHOT_EVERY="3")
    yield svc
    svc.engine.dispose()


def assert_same_game(source: GameService, uid: str, target: GameService, new_uid: str) -> None:
    assert new_uid != uid
    assert without_uid(target.state(new_uid, None)) == without_uid(source.state(uid, None))
    for position in (0, 1):
        assert without_uid(target.state(new_uid, position)) == without_uid(
            source.state(uid, position)
        )
    assert target.log(new_uid)["moves"] == source.log(uid)["moves"]
    assert [s["view"] for s in target.replay(new_uid)["steps"]] == [
        s["view"] for s in source.replay(uid)["steps"]
    ]
    original, copied = source.export(uid), target.export(new_uid)
    assert copied["moves"] == original["moves"]
    assert copied["seats"] == original["seats"]
    assert copied["chat"] == original["chat"]
    assert chat_seen(target, new_uid) == chat_seen(source, uid)
    assert {k: v for k, v in copied["game"].items() if k not in ("uid", "created_at")} == {
        k: v for k, v in original["game"].items() if k not in ("uid", "created_at")
    }


def chat_seen(svc: GameService, uid: str) -> list[tuple[Any, ...]]:
    """The game's chat as its seats read it (every message but its id, which differs)."""
    return [(m["seat"], m["name"], m["created_at"], m["text"])
            for m in chat.read(svc, uid, 0, limit=chat.MAX_PAGE)["messages"]]


def talk(svc: GameService, uid: str) -> list[tuple[Any, ...]]:
    """Three messages in game ``uid``'s chat (one from each of two seats, one of several
    lines with letters beyond ASCII); the chat as read."""
    chat.post(svc, uid, 0, "Good luck, everyone!")
    chat.post(svc, uid, 1, "Zażółć gęślą jaźń\n\nsee you at the finish")
    chat.post(svc, uid, 0, "gg")
    seen = chat_seen(svc, uid)
    assert [seat for seat, *_ in seen] == [0, 1, 0]
    return seen


@pytest.mark.parametrize("direction", ["sqlite-to-postgresql", "postgresql-to-sqlite"])
def test_export_import_into_another_database_and_back(
    sqlite_service: GameService, postgres_service: GameService, direction: str
) -> None:
    source, target = (
        (sqlite_service, postgres_service)
        if direction == "sqlite-to-postgresql"
        else (postgres_service, sqlite_service)
    )
    finished = bot_game(source, settings={"deadline_hours": 24})
    running = human_game(source)
    talk(source, running["game"])
    for _ in range(7):  # a game in progress too: seats 0..2 answer with their first option
        state = source.state(running["game"], None)
        position = state["game"]["to_act"][0]
        first = source.options(running["game"], position)["options"][0]
        source.submit(running["game"], position, state["seq"], first)
    for uid in (finished, running["game"]):
        data = json.loads(json.dumps(source.export(uid)))  # through JSON text, as a file would
        assert len(data["chat"]) == (3 if uid == running["game"] else 0)
        new_uid = target.import_game(data)["game"]
        assert_same_game(source, uid, target, new_uid)
        # ... and back again into the first database.
        back = source.import_game(json.loads(json.dumps(target.export(new_uid))))["game"]
        assert_same_game(target, new_uid, source, back)
    assert source.verify_all() == {}
    assert target.verify_all() == {}


def test_import_refuses_a_tampered_export(service: GameService) -> None:
    uid = bot_game(service)
    export = service.export(uid)
    moves_before = len(export["moves"])

    def tampered(change: Any) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(json.dumps(export))
        change(data)
        return data

    cases = [
        lambda d: d["moves"][4].update(input="end" if d["moves"][4]["input"] != "end"
                                       else "pass"),
        lambda d: d["moves"][4].update(hash="0" * 64),
        lambda d: d["moves"][4].update(outcomes=[["roll red red red"]]),
        lambda d: d["moves"][4].update(created_at="2020-01-01T00:00:00.000000Z"),
        lambda d: d["moves"].pop(4),
        lambda d: d["game"]["initial_state"].update(round=7),
        lambda d: d.update(format="something-else"),
        lambda d: d.pop("moves"),
    ]
    for change in cases:
        with pytest.raises(BadRequest):
            service.import_game(tampered(change))
    with service.session() as s:
        assert len(s.exec(select(Game)).all()) == 1
    assert len(service.export(uid)["moves"]) == moves_before


def test_an_export_carries_the_chat_and_an_import_restores_it(service: GameService) -> None:
    game = human_game(service)
    uid = game["game"]
    seen = talk(service, uid)
    export = service.export(uid)
    assert [(m["seat"], m["text"]) for m in export["chat"]] == [(s[0], s[3]) for s in seen]
    assert [m["created_at"] for m in export["chat"]] == [s[2] for s in seen]
    assert set(export["chat"][0]) == {"seat", "created_at", "text"}
    copied = service.import_game(json.loads(json.dumps(export)))["game"]
    assert chat_seen(service, copied) == seen
    assert service.export(copied)["chat"] == export["chat"]
    # an export made before exports carried the chat imports with none
    older = json.loads(json.dumps(export))
    del older["chat"]
    assert chat_seen(service, service.import_game(older)["game"]) == []


def test_import_refuses_a_bad_chat_and_stores_nothing(service: GameService) -> None:
    uid = human_game(service)["game"]
    talk(service, uid)
    export = service.export(uid)

    def changed(change: Any) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(json.dumps(export))
        change(data)
        return data

    cases = {
        "not a list": lambda d: d.update(chat={"seat": 0}),
        "not an object": lambda d: d["chat"].append("hello"),
        "no such seat": lambda d: d["chat"][1].update(seat=5),
        "a seat that is no number": lambda d: d["chat"][1].update(seat="0"),
        "empty text": lambda d: d["chat"][1].update(text="  "),
        "too long": lambda d: d["chat"][1].update(text="x" * 2001),
        "a NUL": lambda d: d["chat"][1].update(text="a\x00b"),
        "no time": lambda d: d["chat"][1].pop("created_at"),
        "not a time": lambda d: d["chat"][1].update(created_at="yesterday"),
        "no text": lambda d: d["chat"][1].pop("text"),
    }
    for why, change in cases.items():
        with pytest.raises(BadRequest, match="chat"):
            service.import_game(changed(change))
            pytest.fail(f"imported with {why}")
    with service.session() as s:
        assert len(s.exec(select(Game)).all()) == 1
        assert len(s.exec(select(ChatMessage)).all()) == 3


# ---------------------------------------------------------------------- titanpost admin


def test_admin_verify_command(service: GameService, titanpost: str) -> None:
    good = bot_game(service)
    bad = bot_game(service, circuits=["anglieh"])
    url = service.settings.database_url
    clean = run_titanpost(titanpost, "admin", "verify", database_url=url)
    assert clean.returncode == 0, clean.stdout + clean.stderr

    with service.engine.connect() as conn:
        game_id, snapshots = conn.execute(
            sa.text(
                "SELECT games.id, count(*) FROM snapshots JOIN games ON games.id = "
                "snapshots.game_id WHERE games.uid = :uid GROUP BY games.id"
            ),
            {"uid": bad},
        ).one()
    assert snapshots >= 3  # TITANPOST_SNAPSHOT_EVERY=2
    # Snapshots are a cache, not the log: they can be changed, and verify must notice.
    execute(
        service,
        "UPDATE snapshots SET state = (SELECT state FROM snapshots s2 WHERE s2.game_id = :g "
        "AND s2.seq = 2) WHERE game_id = :g AND seq = 4",
        g=game_id,
    )
    result = run_titanpost(titanpost, "admin", "verify", database_url=url)
    assert result.returncode == 1, result.stdout + result.stderr
    assert bad in result.stderr and "snapshot at move 4" in result.stderr
    assert good not in result.stderr + result.stdout


def test_admin_export_import_commands(
    sqlite_service: GameService, postgres_service: GameService, titanpost: str, tmp_path: Path
) -> None:
    """SQLite -> file -> PostgreSQL through the installed command."""
    uid = bot_game(sqlite_service, variant="grand-slam",
                   circuits=["kaldheira", "anglieh", "ban-kog"])
    source = sqlite_service.settings.database_url
    exported = tmp_path / "game.json"
    out = run_titanpost(titanpost, "admin", "export", uid, "-o", str(exported),
                        database_url=source)
    assert out.returncode == 0, out.stderr
    assert json.loads(exported.read_text()) == sqlite_service.export(uid)
    done = run_titanpost(titanpost, "admin", "import", str(exported),
                         database_url=postgres_service.settings.database_url)
    assert done.returncode == 0, done.stderr
    new_uid = json.loads(done.stdout)["game"]
    assert_same_game(sqlite_service, uid, postgres_service, new_uid)
    assert postgres_service.verify_all() == {}
    missing = run_titanpost(titanpost, "admin", "export", "f" * 32, database_url=source)
    assert missing.returncode == 1 and "no game" in missing.stderr


# ---------------------------------------------------------------------- set-ups


def started_game(svc: GameService, seats: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
    created = svc.create_game(seats=seats, seed=11, **kwargs)
    for inv in created["invitations"]:
        svc.accept(inv["invite_token"])
    summary = svc.start(created["game"], created["creator_token"])
    return summary


def test_deadline_settings_are_kept(service: GameService) -> None:
    settings = {"deadline_hours": 48, "reaction_hours": 6, "bank_hours": 24,
                "increment_hours": 2, "reminders": ["25%", "3h"], "on_timeout": "pass",
                "max_missed": 3, "after_missed": "invite"}
    created = service.create_game(
        seats=[{"email": f"d{i}@x.org"} for i in range(3)], settings=settings, name="  Slow  "
    )
    with service.session() as s:
        game = s.exec(select(Game).where(Game.uid == created["game"])).one()
        assert game.settings == settings and game.name == "Slow"
    for inv in created["invitations"]:
        service.accept(inv["invite_token"])
    service.start(created["game"], created["creator_token"])
    assert service.export(created["game"])["game"]["settings"] == settings


def test_bad_game_settings_are_refused(service: GameService) -> None:
    for settings in ({"deadline": 48}, {"deadline_hours": -1}, {"deadline_hours": "48"},
                     {"deadline_hours": True}, {"reaction_hours": 24 * 31},
                     {"on_timeout": "forfeit"}, {"spectators": "no"}, {"max_missed": 51},
                     {"after_missed": "nobody"}, {"reminders": "50%"},
                     {"reminders": ["half"]}, {"reminders": ["0h"]},
                     {"deadline_hours": 6, "reaction_hours": 12}):
        with pytest.raises(BadRequest, match=r"setting|reminder|reaction_hours"):
            service.create_game(seats=[{"email": f"d{i}@x.org"} for i in range(3)],
                                settings=settings)
    with service.session() as s:
        assert s.exec(select(Game)).all() == []


def test_teams_game_starts(service: GameService) -> None:
    seats = [{"email": f"t{i}@x.org", "team": i % 2} for i in range(4)]
    summary = started_game(service, seats, variant="teams")
    assert summary["status"] == "active" and summary["variant"] == "teams"
    assert [s["team"] for s in summary["seats"]] == [0, 1, 0, 1]
    view = service.state(summary["game"], 0)["view"]
    for seat in summary["seats"]:
        (titan,) = seat["titans"]
        assert view["titans"][titan]["seat"] == seat["position"]
        assert view["titans"][titan]["team"] == seat["team"]
    # Teammates side by side are refused when the game is created.
    with pytest.raises(BadRequest, match="next to each other"):
        service.create_game(
            seats=[{"email": f"u{i}@x.org", "team": 0 if i < 2 else 1} for i in range(4)],
            variant="teams",
        )


def test_grand_slam_with_three_circuits_starts(service: GameService) -> None:
    circuits = ["kaldheira", "anglieh", "ban-kog"]
    summary = started_game(
        service, [{"email": f"g{i}@x.org"} for i in range(3)], variant="grand-slam",
        circuits=circuits,
    )
    assert summary["status"] == "active" and summary["circuits"] == circuits
    assert service.state(summary["game"], None)["view"]["circuits"] == circuits
    with pytest.raises(BadRequest, match="three circuits"):
        service.create_game(seats=[{"email": f"g{i}@x.org"} for i in range(3)],
                            variant="grand-slam", circuits=["kaldheira"])


def test_two_player_game_gives_each_seat_two_titans(service: GameService) -> None:
    seats = [{"email": "a@x.org", "titans": ["grinder", "craken"]},
             {"email": "b@x.org", "titans": ["Slaugg", "rassik"]}]
    summary = started_game(service, seats, variant="two-player")
    assert summary["status"] == "active"
    assert [s["titans"] for s in summary["seats"]] == [["grinder", "craken"], ["slaugg", "rassik"]]
    for position, mine in ((0, {"grinder", "craken"}), (1, {"slaugg", "rassik"})):
        view = service.state(summary["game"], position)["view"]
        assert {n for n, t in view["titans"].items() if t["seat"] == position} == mine
        for name, titan in view["titans"].items():
            assert isinstance(titan["hand"], list) == (name in mine)
    with pytest.raises(BadRequest):
        service.create_game(seats=[{"email": f"x{i}@x.org"} for i in range(3)],
                            variant="two-player")


def test_titans_chosen_or_random(service: GameService) -> None:
    seats: list[dict[str, Any]] = [{"email": "c0@x.org", "titans": "rassik"},
                                   {"email": "c1@x.org"}, {"email": "c2@x.org"}]
    summary = started_game(service, seats)
    given = [s["titans"] for s in summary["seats"]]
    assert given[0] == ["rassik"]
    assert all(len(t) == 1 for t in given) and len({t[0] for t in given}) == 3
    with service.session() as s:
        stored = s.exec(select(Seat).order_by(Seat.position)).all()
        assert [seat.pieces["titans"] for seat in stored] == given
    for clash, reason in ((["rassik"], "chosen by two seats"), (["nobody"], "unknown Titan")):
        with pytest.raises(BadRequest, match=reason):  # refused when the game is created
            service.create_game(seats=[{"email": "c0@x.org", "titans": ["rassik"]},
                                       {"email": "c1@x.org", "titans": clash},
                                       {"email": "c2@x.org"}])
