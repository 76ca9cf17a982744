"""Revision 0013: a game's setup and a seat's pieces in the game's own JSON.

Games of every kind (open, running, finished; Titan Race standard, teams, two-player and Grand
Slam, The Great Race with and without its leaders) survive the migration down to 0012 and up
again: their rows hold the older columns as the code before stored them, and after the way back
every game replays to the same states and the API gives the same game JSON. The games the code
before 0013 made (tests/data) are inserted as it stored them, at 0012, and moved up. And the
rulesets' mapping between the older fields and their own JSON is checked on its own.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from app.core import migrate
from app.features.fairness.records import check_record, record_of_export
from app.games import ruleset
from app.games.base import SeatSetup, SetupError
from app.games.rng import Dealing
from app.service import GameService
from tests.apifixtures import make_service
from tests.test_fairness import OLD_GAMES, _insert_old_game, _view_digest

BEFORE = "0012"


# ---------------------------------------------------------------------- games of every kind


def _create(svc: GameService, seats: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
    created: dict[str, Any] = svc.create_game(seats=seats, seed=7, **kwargs)
    return created


def _started(svc: GameService, seats: list[dict[str, Any]], moves: int,
             **kwargs: Any) -> str:
    """A game of human seats, started and ``moves`` answers in (each the first option)."""
    created = _create(svc, seats, **kwargs)
    for invitation in created["invitations"]:
        svc.accept(invitation["invite_token"])
    uid: str = created["game"]
    svc.start(uid, created["creator_token"])
    for _ in range(moves):
        game = svc.state(uid, None)["game"]
        waiting = [seat for seat in game["to_act"] if seat not in game["sealed"]]
        if not waiting:
            break
        option = svc.options(uid, waiting[0])["options"][0]
        svc.submit(uid, waiting[0], game["seq"], option)
    return uid


def _finished(svc: GameService, seats: int, **kwargs: Any) -> str:
    """A game of computer seats: its start plays it to the end."""
    created = _create(svc, [{"bot": True}] * seats, **kwargs)
    uid: str = created["game"]
    assert svc.start(uid, created["creator_token"])["status"] == "finished"
    return uid


def _humans(count: int, **each: Any) -> list[dict[str, Any]]:
    return [{"email": f"p{i}@example.org", **each} for i in range(count)]


def _games(svc: GameService) -> list[str]:
    titans = ["grinder", "rassik", "craken", "slaugg"]
    return [
        _create(svc, [{"email": "a@example.org", "titans": ["rassik"]},
                      {"email": "b@example.org"}, {"bot": True}])["game"],
        _create(svc, [{"email": "a@example.org", "titans": ["french"]}, {"bot": True}],
                rules_name="great-race", circuits=["le-cap"])["game"],
        _started(svc, _humans(3), 12, circuits=["anglieh"]),
        _started(svc, [{"email": f"t{i}@example.org", "team": 1 + i % 2,
                        **({"titans": [titans[i]]} if i < 2 else {})} for i in range(4)],
                 10, variant="teams"),
        _started(svc, [{"email": "a@example.org", "titans": ["grinder", "craken"]},
                       {"email": "b@example.org"}], 8, variant="two-player"),
        _started(svc, _humans(3), 6, variant="grand-slam",
                 circuits=["kaldheira", "anglieh", "ban-kog"]),
        _started(svc, [{"email": "a@example.org", "titans": ["english"]}, *_humans(2)], 20,
                 rules_name="great-race"),
        _started(svc, _humans(3), 12, rules_name="great-race", variant="leaders",
                 circuits=["le-cap"]),
        _finished(svc, 3),
        _finished(svc, 3, rules_name="great-race"),
    ]


def _seen(svc: GameService, uid: str) -> dict[str, Any]:
    """All a game shows: its API JSON, every state of its replay, its fairness record, and
    what its verification finds."""
    game = svc.state(uid, None)["game"]
    started = game["status"] != "open"
    return {
        "game": game,
        "steps": svc.replay(uid)["steps"] if started else None,
        "fairness": svc.fairness(uid, None),
        "problems": svc.verify(uid),
    }


def _without_new_fields(game: dict[str, Any]) -> dict[str, Any]:
    """The game JSON as the API gave it before 0013 (no ``setup``, no seats' ``pieces``)."""
    return {key: value for key, value in game.items() if key != "setup"} | {
        "seats": [{k: v for k, v in seat.items() if k != "pieces"} for seat in game["seats"]]}


def _older_columns(url: str) -> dict[str, tuple[Any, list[tuple[Any, Any]]]]:
    """Each game's ``circuits`` and its seats' ``titans`` and ``team`` (at 0012)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            games = {game_id: (uid, circuits) for game_id, uid, circuits in conn.execute(
                sa.text("SELECT id, uid, circuits FROM games"))}
            seats: dict[str, list[tuple[Any, Any]]] = {}
            for game_id, titans, team in conn.execute(sa.text(
                    "SELECT game_id, titans, team FROM seats ORDER BY game_id, position")):
                seats.setdefault(games[game_id][0], []).append((_json(titans), team))
        return {uid: (_json(circuits), seats[uid]) for uid, circuits in games.values()}
    finally:
        engine.dispose()


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _moves_refuse_changes(url: str) -> None:
    engine = sa.create_engine(url)
    try:
        for statement in ("UPDATE moves SET input = 'pass'", "DELETE FROM moves"):
            with pytest.raises(IntegrityError, match="append-only"), engine.begin() as conn:
                conn.execute(sa.text(statement))
    finally:
        engine.dispose()


def test_every_kind_of_game_goes_down_to_0012_and_up_unchanged(database_url: str) -> None:
    svc = make_service(database_url)
    try:
        uids = _games(svc)
        before = {uid: _seen(svc, uid) for uid in uids}
    finally:
        svc.engine.dispose()
    assert all(seen["problems"] == [] for seen in before.values())
    assert [len(seen["steps"] or []) > 1 for seen in before.values()] == [False] * 2 + [True] * 8

    migrate.downgrade(database_url, BEFORE)
    older = _older_columns(database_url)
    for uid, seen in before.items():
        game = seen["game"]
        circuits, seats = older[uid]
        # the older columns hold what the API's older fields always showed
        assert circuits == game["circuits"], uid
        assert seats == [(seat["titans"], seat["team"]) for seat in game["seats"]], uid
    assert older[uids[1]][0] == ["le-cap"] and older[uids[1]][1][0] == (["french"], None)
    assert older[uids[3]][1][0] == (["grinder"], 1)
    _moves_refuse_changes(database_url)

    migrate.upgrade(database_url)
    _moves_refuse_changes(database_url)
    svc = make_service(database_url)
    try:
        for uid, seen in before.items():
            assert _seen(svc, uid) == seen, uid
    finally:
        svc.engine.dispose()


def test_games_stored_before_0013_move_up_and_back(database_url: str) -> None:
    """The games the code before setups made (tests/data), stored as it stored them."""
    old = json.loads(OLD_GAMES.read_text())
    migrate.upgrade(database_url, BEFORE)
    engine = sa.create_engine(database_url)
    for game in old:
        _insert_old_game(engine, game["export"])
    engine.dispose()
    stored = _older_columns(database_url)

    migrate.upgrade(database_url)
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as conn:
            rows = {uid: (_json(setup), ruleset_name) for uid, setup, ruleset_name in
                    conn.execute(sa.text("SELECT uid, setup, ruleset FROM games"))}
            pieces = [_json(p) for (p,) in conn.execute(sa.text(
                "SELECT pieces FROM seats ORDER BY game_id, position"))]
    finally:
        engine.dispose()
    titan_race, great_race = (game["export"]["game"]["uid"] for game in old)
    assert rows[titan_race] == ({"circuits": ["kaldheira"]}, "titan-race")
    assert rows[great_race] == ({"start": "alger"}, "great-race")
    assert pieces == [{"titans": ["ragnarok"]}, {"titans": ["chtoolhoo"]},
                      {"titans": ["grinder"]}, {"crew": "french"}, {"crew": "english"},
                      {"crew": "italian"}]

    svc = make_service(database_url)
    try:
        for game in old:
            export = game["export"]
            uid = export["game"]["uid"]
            assert svc.verify(uid) == []
            for seq, digest in enumerate(game["views"]):
                assert _view_digest(svc.state_at(uid, seq)["view"]) == digest, (uid, seq)
            shown = svc.state(uid, None)["game"]
            assert shown["circuits"] == export["game"]["circuits"]
            assert [(s["titans"], s["team"]) for s in shown["seats"]] == [
                (s["titans"], s["team"]) for s in export["seats"]]
    finally:
        svc.engine.dispose()

    migrate.downgrade(database_url, BEFORE)
    assert _older_columns(database_url) == stored


def test_an_open_game_made_at_0012_starts_after_the_upgrade(database_url: str) -> None:
    """A game whose seats asked for their pieces before 0013 is dealt from what they asked."""
    svc = make_service(database_url)
    try:
        created = _create(svc, [{"email": "a@example.org", "titans": ["rassik"], "team": 1},
                                {"email": "b@example.org", "team": 2},
                                {"email": "c@example.org", "team": 1},
                                {"email": "d@example.org", "team": 2}], variant="teams")
        asked = [seat["pieces"] for seat in svc.state(created["game"], None)["game"]["seats"]]
    finally:
        svc.engine.dispose()
    assert asked == [{"titans": ["rassik"], "team": 1}, {"titans": [], "team": 2},
                     {"titans": [], "team": 1}, {"titans": [], "team": 2}]
    migrate.downgrade(database_url, BEFORE)
    migrate.upgrade(database_url)
    svc = make_service(database_url)
    try:
        for invitation in created["invitations"]:
            svc.accept(invitation["invite_token"])
        game = svc.start(created["game"], created["creator_token"])
        assert game["seats"][0]["titans"] == ["rassik"]
        assert [seat["team"] for seat in game["seats"]] == [1, 2, 1, 2]
        assert [seat["pieces"]["team"] for seat in game["seats"]] == [1, 2, 1, 2]
        assert svc.verify(created["game"]) == []
    finally:
        svc.engine.dispose()


# ---------------------------------------------------------------------- the rulesets' mapping


@pytest.mark.parametrize(("game", "circuits", "setup"), [
    ("titan-race", ["kaldheira"], {"circuits": ["kaldheira"]}),
    ("titan-race", ["kaldheira", {"name": "plain"}, "anglieh"],
     {"circuits": ["kaldheira", {"name": "plain"}, "anglieh"]}),
    ("great-race", ["le-cap"], {"start": "le-cap"}),
])
def test_a_setup_maps_to_circuits_and_back(game: str, circuits: list[Any],
                                           setup: dict[str, Any]) -> None:
    rules = ruleset(game)
    assert rules.setup_from_circuits(circuits) == setup
    assert rules.circuits_of(setup) == circuits


@pytest.mark.parametrize(("game", "titans", "team", "pieces", "names"), [
    ("titan-race", ["rassik"], None, {"titans": ["rassik"]}, ["rassik"]),
    ("titan-race", [], 2, {"titans": [], "team": 2}, []),
    ("titan-race", ["grinder", "craken"], None, {"titans": ["grinder", "craken"]},
     ["grinder", "craken"]),
    ("great-race", ["french"], None, {"crew": "french"}, ["french"]),
    ("great-race", [], None, {}, []),
])
def test_pieces_map_to_titans_and_team_and_back(game: str, titans: list[str], team: int | None,
                                                pieces: dict[str, Any],
                                                names: list[str]) -> None:
    rules = ruleset(game)
    assert rules.pieces_from_fields(titans, team) == pieces
    assert rules.fields_of(pieces) == {"titans": titans, "team": team}
    assert rules.piece_names(pieces) == names


def test_each_game_has_a_default_setup_it_accepts() -> None:
    for game, variant, expected in (("titan-race", "standard", {"circuits": ["kaldheira"]}),
                                    ("great-race", "leaders", {"start": "alger"})):
        rules = ruleset(game)
        assert rules.default_setup(variant) == expected
        rules.check_setup(variant, rules.default_setup(variant))


@pytest.mark.parametrize(("game", "variant", "setup", "why"), [
    ("titan-race", "standard", {"circuits": ["atlantis"]}, "atlantis"),
    ("titan-race", "grand-slam", {"circuits": ["kaldheira"]}, "three circuits"),
    ("titan-race", "standard", {"start": "alger"}, "circuits"),
    ("titan-race", "standard", {"circuits": "kaldheira"}, "list"),
    ("great-race", "standard", {"start": "kaldheira"}, "purple cities"),
    ("great-race", "standard", {"start": "alger", "circuits": []}, "purple cities"),
    ("great-race", "grand-slam", {"start": "alger"}, "variant"),
])
def test_a_setup_that_is_not_the_games_is_refused(game: str, variant: str,
                                                  setup: dict[str, Any], why: str) -> None:
    with pytest.raises(SetupError, match=why):
        ruleset(game).check_setup(variant, setup)


@pytest.mark.parametrize(("game", "pieces", "why"), [
    ("titan-race", {"titans": ["nobody"]}, "unknown Titan"),
    ("titan-race", {"crew": "french"}, "pieces"),
    ("titan-race", {"titans": "rassik"}, "list of Titan names"),
    ("great-race", {"crew": "purple"}, "unknown crew"),
    ("great-race", {"crew": ["french", "english"]}, "one crew"),
    ("great-race", {"team": 1}, "no teams"),
    ("great-race", {"titans": ["french"]}, "pieces"),
])
def test_pieces_that_are_not_the_games_are_refused(game: str, pieces: dict[str, Any],
                                                   why: str) -> None:
    seats = [SeatSetup(0, pieces), SeatSetup(1), SeatSetup(2)]
    with pytest.raises(SetupError, match=why):
        ruleset(game).check_seats("standard", seats)


@pytest.mark.parametrize(("game", "setup", "asked"), [
    ("titan-race", {"circuits": ["kaldheira"]}, {"titans": ["rassik"]}),
    ("great-race", {"start": "alger"}, {"crew": "english"}),
])
def test_start_gives_each_seat_its_pieces(game: str, setup: dict[str, Any],
                                          asked: dict[str, Any]) -> None:
    rules = ruleset(game)
    seats = [SeatSetup(0), SeatSetup(1, asked), SeatSetup(2)]
    _, given = rules.start(variant="standard", setup=setup, seats=seats,
                           dealing=Dealing(seed=3))
    assert given[1] == asked
    names = [rules.piece_names(pieces) for pieces in given]
    assert all(len(n) == 1 for n in names) and len({n[0] for n in names}) == 3
    assert given == [rules.pieces_from_fields(n, None) for n in names]


def test_titan_race_reads_a_seats_reaction_windows_from_its_options() -> None:
    rules = ruleset("titan-race")
    seats = [SeatSetup(i, {"titans": [t]}, {"anytime_windows": i == 1})
             for i, t in enumerate(("grinder", "rassik", "craken"))]
    state, _ = rules.start(variant="standard", setup={"circuits": ["kaldheira"]}, seats=seats,
                           dealing=Dealing(seed=3))
    assert {titan["name"]: titan["anytime_windows"] for titan in state["titans"]} == {
        "grinder": False, "rassik": True, "craken": False}


# ---------------------------------------------------------------------- exports


def test_older_exports_import_and_new_ones_hold_setup_and_pieces(
        migrated_database_url: str) -> None:
    """The exports made before 0013 (format version 1: circuits, titans, team) import and
    replay as they did; an export now is version 2 (setup, pieces), imports as well, and its
    fairness record still deals the game again."""
    old = json.loads(OLD_GAMES.read_text())
    svc = make_service(migrated_database_url)
    try:
        for game in old:
            older = game["export"]
            uid = svc.import_game(older)["game"]
            assert svc.verify(uid) == []
            for seq, digest in enumerate(game["views"]):
                assert _view_digest(svc.state_at(uid, seq)["view"]) == digest, (uid, seq)
            export = svc.export(uid)
            assert export["version"] == 2
            assert "circuits" not in export["game"]
            assert ruleset(export["game"]["ruleset"]).circuits_of(export["game"]["setup"]) == (
                older["game"]["circuits"])
            assert [ruleset(export["game"]["ruleset"]).fields_of(seat["pieces"])
                    for seat in export["seats"]] == [
                {"titans": seat["titans"], "team": seat["team"]} for seat in older["seats"]]
            again = svc.import_game(export)["game"]
            assert svc.verify(again) == []
            assert svc.replay(again)["steps"] == svc.replay(uid)["steps"]
            over = {**export, "game": {**export["game"], "status": "abandoned"}}
            assert check_record(record_of_export(over)).fair  # (its record, once over)
    finally:
        svc.engine.dispose()
