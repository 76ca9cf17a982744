"""Fair dealing (app/fairness.py, docs/fairness.md): a game's chance comes from a 256-bit secret
the server commits to at creation, mixed with every seat's own contribution; nobody sees the
secret while the game runs, everyone may check the whole deal once it is over, and old games
keep the generator they were dealt by.

Tried as a cheater would: the secret (and the key derived from it) is looked for in every
answer a player or spectator can get while the game runs; a tampered log, secret or
contribution must fail the check; a seed cannot be chosen but by the admin, and then every
seat is told.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from sqlmodel import SQLModel

from app import fairness, migrate
from app.fairness import check_record, record_of_export
from app.games import ruleset
from app.games.base import SeatSetup
from app.games.rng import KEYED_SCHEME, SPLITMIX_SCHEME, Dealing, KeyedRng, rng_from_json
from app.service import GameService
from cli.main import main
from tests.apifixtures import ADMIN_TOKEN, Api, Table, bearer, make_service

pytest_plugins = ["tests.apifixtures"]

OLD_GAMES = Path(__file__).parent / "data" / "games-before-fair-dealing.json"
HEX = re.compile(r"[0-9a-f]{64}")


# ---------------------------------------------------------------------- the generator


def test_a_keyed_source_replays_and_serialises_exactly() -> None:
    rng = KeyedRng(b"\x01" * 32)
    first = [rng.below(6, "dice") for _ in range(50)]
    again = KeyedRng(b"\x01" * 32)
    assert [again.below(6, "dice") for _ in range(50)] == first
    copied = rng_from_json(json.loads(json.dumps(rng.to_json())))
    assert [copied.below(1000, "dice") for _ in range(20)] == [
        rng.below(1000, "dice") for _ in range(20)]


def test_each_purpose_has_a_stream_of_its_own() -> None:
    """Drawing dice never shifts the deck: a purpose's outcomes depend on its own draws only."""
    plain, busy = KeyedRng(b"\x02" * 32), KeyedRng(b"\x02" * 32)
    for _ in range(17):
        busy.below(6, "dice")
    deck_a, deck_b = list(range(40)), list(range(40))
    plain.shuffle(deck_a, "deck")
    busy.shuffle(deck_b, "deck")
    assert deck_a == deck_b
    with pytest.raises(ValueError, match="purpose"):
        plain.below(6)


def test_a_keyed_source_is_uniform_and_refuses_short_keys() -> None:
    rng = KeyedRng(b"\x03" * 32)
    counts = Counter(rng.below(6, "dice") for _ in range(6000))
    assert set(counts) == set(range(6))
    assert all(850 < n < 1150 for n in counts.values()), counts
    with pytest.raises(ValueError, match="256 bits"):
        KeyedRng(b"short")


def test_the_key_depends_on_the_secret_and_on_every_contribution() -> None:
    secret = b"\x04" * 32
    base = fairness.game_key(secret, ["aa" * 16, "bb" * 16])
    assert fairness.game_key(secret, ["aa" * 16, "bb" * 16]) == base
    assert fairness.game_key(secret, ["aa" * 16, "bc" * 16]) != base
    assert fairness.game_key(b"\x05" * 32, ["aa" * 16, "bb" * 16]) != base
    assert fairness.commitment(secret) == hashlib.sha256(secret).hexdigest()


@pytest.mark.parametrize("game", ["titan-race", "great-race"])
def test_different_keys_deal_differently_and_a_seed_deals_as_before(game: str) -> None:
    rules = ruleset(game)
    setup = rules.default_setup("standard")
    seats = [SeatSetup(i) for i in range(3)]
    one, _ = rules.start(variant="standard", setup=setup, seats=seats,
                         dealing=Dealing(key=b"\x06" * 32))
    two, _ = rules.start(variant="standard", setup=setup, seats=seats,
                         dealing=Dealing(key=b"\x07" * 32))
    assert one["deck"] != two["deck"]
    assert one["rng"]["scheme"] == KEYED_SCHEME
    seeded, _ = rules.start(variant="standard", setup=setup, seats=seats,
                            dealing=Dealing(seed=5))
    assert isinstance(seeded["rng"], int)  # the older generator, as games before were dealt


# ---------------------------------------------------------------------- a game's secret


def _bot_game(svc: GameService, game: str = "titan-race") -> str:
    created = svc.create_game(seats=[{"bot": True}] * 3, rules_name=game, name="Bots")
    svc.start(created["game"], created["creator_token"])
    return str(created["game"])


def _secrets_of(svc: GameService, uid: str) -> list[str]:
    """The game's secret and the key derived from it (in its state): neither may be seen."""
    with svc.engine.connect() as conn:
        secret, initial = conn.execute(sa.text(
            "SELECT dealing_secret, initial_state FROM games WHERE uid = :uid"),
            {"uid": uid}).one()
    if isinstance(initial, str):
        initial = json.loads(initial)
    return [secret, initial["rng"]["key"]]


def _everything_a_player_sees(api: Api, uid: str, token: str) -> str:
    """Every answer a seat or a spectator can get about a running game, as one text."""
    client = api.client
    seen = []
    for path in (f"/api/games/{uid}", f"/api/games/{uid}/log", f"/api/games/{uid}/options",
                 f"/api/games/{uid}/fairness", f"/api/games/{uid}/deadlines",
                 f"/api/games/{uid}/chat", "/api/games", "/api/me"):
        for headers in (bearer(token), None):
            seen.append(client.get(path, headers=headers).get_data(as_text=True))
    seen.append(client.get(f"/games/{uid}").get_data(as_text=True))
    seen.append(client.get(f"/games/{uid}/log").get_data(as_text=True))
    with api.engine.connect() as conn:
        seen += [str(row) for row in conn.execute(sa.text("SELECT * FROM outbox"))]
        seen += [str(row) for row in conn.execute(sa.text("SELECT * FROM webhook_outbox"))]
        seen += [str(row) for row in conn.execute(sa.text("SELECT * FROM push_outbox"))]
    return "\n".join(seen)


def _start_over_the_api(api: Api, game: str, seats: int = 3) -> tuple[str, dict[int, str],
                                                                     dict[str, Any]]:
    response = api.client.post("/api/games", json={
        "game": game, "seats": [{"email": f"p{i}@example.com"} for i in range(seats)]})
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    tokens = {}
    for invitation in created["invitations"]:
        accepted = api.client.post("/api/invitations/accept", json={
            "invite_token": invitation["invite_token"],
            "contribution": f"{invitation['position'] + 1:02x}" * 32})
        assert accepted.status_code == 201, accepted.get_json()
        tokens[invitation["position"]] = accepted.get_json()["api_token"]
    started = api.client.post(f"/api/games/{created['game']}/start", json={},
                              headers={"X-Creator-Token": created["creator_token"]})
    assert started.status_code == 200, started.get_json()
    return created["game"], tokens, started.get_json()


@pytest.mark.parametrize("game", ["titan-race", "great-race"])
def test_every_seat_sees_the_commitment_and_nobody_the_secret(api: Api, game: str) -> None:
    uid, tokens, summary = _start_over_the_api(api, game)
    hidden = _secrets_of(api.service, uid)
    fair = summary["fairness"]
    assert fair["scheme"] == KEYED_SCHEME and not fair["seed_chosen"]
    assert fair["commitment"] == hashlib.sha256(bytes.fromhex(hidden[0])).hexdigest()
    assert "secret" not in fair and fair["published"] is False
    _play_a_little(api, uid, tokens, 6)
    for position, token in tokens.items():
        state = api.state(uid, token)
        assert state["game"]["fairness"]["commitment"] == fair["commitment"]
        seen = _everything_a_player_sees(api, uid, token)
        for secret in hidden:
            assert secret not in seen, f"seat {position} can read the game's secret"
    page = api.client.get(f"/games/{uid}").get_data(as_text=True)
    assert fair["commitment"] in page


def _play_a_little(api: Api, uid: str, tokens: dict[int, str], answers: int) -> None:
    """Answer ``answers`` decisions (simultaneous ones seat by seat) with the first option."""
    table = Table(uid, "", {}, {}, dict(tokens))
    for _ in range(answers):
        position = api.to_act(uid, tokens[0])[0]
        options = api.options(table, position)
        status, body = api.submit(table, position, options["seq"], options["options"][0])
        assert status == 200, body


def test_the_seats_contributions_make_the_deal(api: Api) -> None:
    """The same secret with other contributions deals another game: the server alone does
    not choose the deal."""
    uid, _, _ = _start_over_the_api(api, "titan-race")
    record = api.service.export(uid)
    assert [seat["contribution"] for seat in record["seats"]] == [
        f"{i + 1:02x}" * 32 for i in range(3)]
    secret = bytes.fromhex(record["game"]["dealing_secret"])
    rules = ruleset("titan-race")
    setups = [SeatSetup(row["position"], rules.pieces_from_fields(row["titans"], row["team"]),
                        {"anytime_windows": row["anytime_windows"]})
              for row in record["game"]["seat_setups"]]
    mine, _ = rules.start(variant="standard", setup={"circuits": ["kaldheira"]}, seats=setups,
                          dealing=Dealing(key=fairness.game_key(
                              secret, [s["contribution"] for s in record["seats"]])))
    assert mine == record["game"]["initial_state"]
    other, _ = rules.start(variant="standard", setup={"circuits": ["kaldheira"]}, seats=setups,
                           dealing=Dealing(key=fairness.game_key(secret, ["00" * 32] * 3)))
    assert other["deck"] != mine["deck"]


def test_a_bad_contribution_is_refused_and_takes_no_seat(api: Api) -> None:
    created = api.client.post("/api/games", json={
        "seats": [{"email": f"p{i}@example.com"} for i in range(3)]}).get_json()
    invite = created["invitations"][0]["invite_token"]
    for bad in ("xyz", "ab", "g" * 64):
        refused = api.client.post("/api/invitations/accept",
                                  json={"invite_token": invite, "contribution": bad})
        assert refused.status_code == 400
        assert "hexadecimal" in refused.get_json()["error"]
    assert api.scalar("SELECT count(*) FROM seats WHERE accepted_at IS NOT NULL") == 0
    taken = api.client.post("/api/invitations/accept", json={"invite_token": invite})
    assert taken.status_code == 201  # none given: the server draws one
    assert HEX.fullmatch(api.scalar("SELECT contribution FROM seats WHERE position = 0"))


def test_the_browser_gives_its_own_contribution_when_the_seat_is_taken(api: Api) -> None:
    created = api.client.post("/api/games", json={
        "seats": [{"email": f"p{i}@example.com"} for i in range(3)]}).get_json()
    invite = created["invitations"][0]["invite_token"]
    page = api.client.get(f"/join/{invite}").get_data(as_text=True)
    assert 'name="contribution"' in page and "crypto.getRandomValues" in page
    commitment = api.scalar("SELECT dealing_commitment FROM games")
    assert commitment in page
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert csrf is not None
    taken = api.client.post(f"/join/{invite}", data={
        "csrf_token": csrf.group(1), "name": "Ann", "contribution": "AB" * 32})
    assert taken.status_code == 303
    assert api.scalar("SELECT contribution FROM seats WHERE position = 0") == "ab" * 32


# ---------------------------------------------------------------------- checking a game


@pytest.mark.parametrize("game", ["titan-race", "great-race"])
def test_a_finished_game_publishes_its_secret_and_checks_out(api: Api, game: str) -> None:
    uid = _bot_game(api.service, game)
    record = api.client.get(f"/api/games/{uid}/fairness").get_json()
    assert record["status"] == "finished" and record["published"] is True
    assert record["secret"] == _secrets_of(api.service, uid)[0]
    report = check_record(record)
    assert report.fair, report.problems
    assert report.committed and report.outcomes > 0
    assert report.moves == api.move_count(uid)
    page = api.client.get(f"/games/{uid}").get_data(as_text=True)
    assert record["secret"] in page and f"titanpost verify-fair {uid}" in page


def test_tampering_fails_the_check(service: GameService) -> None:
    uid = _bot_game(service)
    record = record_of_export(service.export(uid))
    assert check_record(record).fair

    def broken(change: Any) -> list[str]:
        altered = copy.deepcopy(record)
        change(altered)
        return check_record(altered).problems

    first_roll = next(i for i, m in enumerate(record["moves"]) if any(m["outcomes"]))

    def other_roll(r: dict[str, Any]) -> None:
        r["moves"][first_roll]["outcomes"] = [["forged"]]

    def other_secret(r: dict[str, Any]) -> None:
        r["secret"] = "00" * 32

    def other_commitment(r: dict[str, Any]) -> None:
        r["commitment"] = "11" * 32

    def other_contribution(r: dict[str, Any]) -> None:
        r["contributions"][1] = "22" * 32

    def other_deal(r: dict[str, Any]) -> None:
        r["initial_state"]["deck"].reverse()

    assert any("the log shows" in p for p in broken(other_roll))
    assert any("commitment" in p for p in broken(other_secret))
    assert any("commitment" in p for p in broken(other_commitment))
    assert broken(other_contribution)  # another key: another deal and other outcomes
    assert any("deal at the start" in p for p in broken(other_deal))


def test_a_running_game_publishes_nothing(api: Api) -> None:
    uid, tokens, _ = _start_over_the_api(api, "titan-race")
    record = api.client.get(f"/api/games/{uid}/fairness", headers=bearer(tokens[0])).get_json()
    assert record["published"] is False and "secret" not in record and "moves" not in record
    report = check_record(record)
    assert not report.fair and "not over" in report.problems[0]


def test_verify_fair_command_on_an_export_and_a_record(service: GameService,
                                                       tmp_path: Path) -> None:
    uid = _bot_game(service, "great-race")
    export = tmp_path / "game.json"
    export.write_text(json.dumps(service.export(uid)))
    runner = CliRunner()
    good = runner.invoke(main, ["verify-fair", str(export)])
    assert good.exit_code == 0, good.output
    said = " ".join(good.output.split())
    assert said.startswith("fair:") and "committed to at the start" in said
    data = json.loads(export.read_text())
    data["game"]["dealing_secret"] = "ab" * 32
    export.write_text(json.dumps(data))
    bad = runner.invoke(main, ["verify-fair", str(export), "--json"])
    assert bad.exit_code == 1
    assert any("commitment" in p for p in json.loads(bad.output)["problems"])


def test_verify_fair_says_its_findings_in_the_locales_language(
        service: GameService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``verify-fair`` found wrong is said from the catalogue: in Polish, and in the
    pseudo-locale with no word outside a message but the data (ids, hex, the file's path)."""
    from app import i18n
    from tests.test_cli_pseudo_locale import POLISH, unmarked
    from tests.test_pseudo_locale import _Pseudo

    uid = _bot_game(service, "titan-race")
    export = tmp_path / "game.json"
    data = service.export(uid)
    data["game"]["dealing_secret"] = "ab" * 32
    export.write_text(json.dumps(data))
    polish = CliRunner().invoke(main, ["verify-fair", str(export)], env=POLISH)
    assert polish.exit_code == 1
    assert "opublikowany sekret nie zgadza się" in " ".join(polish.output.split()), polish.output
    monkeypatch.setattr(i18n, "_translations", lambda lang: _Pseudo())
    pseudo = CliRunner().invoke(main, ["verify-fair", str(export)],
                                env=POLISH | {"COLUMNS": "200"})
    assert pseudo.exit_code == 1
    typed = {str(move["input"]) for move in data["moves"]}  # (the log's inputs, quoted)
    typed |= {json.dumps(move.get("outcomes")) for move in data["moves"]}  # (and outcomes)
    words = unmarked(pseudo.output, {uid, str(export), "titanpost-game", *typed})
    assert not words, (words, pseudo.output)


# ---------------------------------------------------------------------- chosen seeds


def test_players_cannot_choose_the_seed(api: Api) -> None:
    seats = [{"email": f"p{i}@example.com"} for i in range(3)]
    refused = api.client.post("/api/games", json={"seats": seats, "seed": 42})
    assert refused.status_code == 400
    assert "seed cannot be chosen" in refused.get_json()["error"]
    assert api.scalar("SELECT count(*) FROM games") == 0
    page = api.client.get("/new").get_data(as_text=True)
    assert 'name="seed"' not in page
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert csrf is not None
    form = api.client.post("/new", data={"csrf_token": csrf.group(1), "seed": "42",
                                         "circuit0": "kaldheira",
                                         "seat0_kind": "computer", "seat1_kind": "computer",
                                         "seat2_kind": "computer"})
    assert "seed cannot be chosen" in form.get_data(as_text=True)
    assert api.scalar("SELECT count(*) FROM games") == 0


def test_the_admins_chosen_seed_is_told_to_every_seat(api: Api) -> None:
    seats = [{"email": f"p{i}@example.com"} for i in range(3)]
    made = api.client.post("/api/games", json={"seats": seats, "seed": 42},
                           headers=bearer(ADMIN_TOKEN))
    assert made.status_code == 201
    uid = made.get_json()["game"]
    state = api.client.get(f"/api/games/{uid}").get_json()
    assert state["game"]["fairness"] == {"scheme": SPLITMIX_SCHEME, "commitment": None,
                                         "seed_chosen": True, "published": False}
    assert "chose this game" in api.client.get(f"/games/{uid}").get_data(as_text=True)


# ---------------------------------------------------------------------- old games


def _insert_old_game(engine: sa.Engine, export: dict[str, Any]) -> None:
    """The rows of a game as the code before fair dealing stored them (schema 0010)."""
    game, seats = export["game"], export["seats"]
    with engine.begin() as conn:
        game_id = conn.execute(sa.text(
            "INSERT INTO games (uid, name, ruleset, engine_version, variant, circuits, settings, "
            "status, seed, initial_state, creator_token_hash, created_at, started_at) VALUES "
            "(:uid, :name, :ruleset, :engine_version, :variant, :circuits, :settings, :status, "
            ":seed, :initial_state, :hash, :created_at, :started_at) RETURNING id"), {
            **{k: game[k] for k in ("uid", "name", "ruleset", "engine_version", "variant",
                                   "status", "seed")},
            "circuits": json.dumps(game["circuits"]), "settings": json.dumps(game["settings"]),
            "initial_state": json.dumps(game["initial_state"]), "hash": "0" * 64,
            "created_at": datetime.fromisoformat(game["created_at"]),
            "started_at": datetime.fromisoformat(game["started_at"])}).scalar_one()
        for seat in seats:
            conn.execute(sa.text(
                "INSERT INTO seats (game_id, position, player_name, email, titans, language, "
                "notify, secret, accepted_at, is_bot, missed_deadlines) VALUES (:game, "
                ":position, :name, :email, :titans, 'en', '{}', :secret, :at, :bot, 0)"), {
                "game": game_id, "position": seat["position"], "name": seat["name"],
                "email": seat["email"], "titans": json.dumps(seat["titans"]),
                "secret": "5" * 64, "at": datetime.fromisoformat(game["started_at"]),
                "bot": seat["bot"]})
        moves = SQLModel.metadata.tables["moves"]
        for move in export["moves"]:
            conn.execute(sa.insert(moves), {
                "game_id": game_id, "seq": move["seq"], "seat": move["seat"],
                "kind": move["kind"], "actor": move["actor"], "input": move["input"],
                "outcomes": move["outcomes"], "prev_hash": move["prev_hash"],
                "hash": move["hash"], "created_at": datetime.fromisoformat(move["created_at"])})


def _view_digest(view: Any) -> str:
    return hashlib.sha256(json.dumps(view, sort_keys=True).encode()).hexdigest()


def test_games_made_before_fair_dealing_replay_and_play_on(database_url: str) -> None:
    """Games created by the code before this change (tests/data, made by it) keep their
    generator: after the upgrade they verify, rebuild every state as they were, and play on."""
    old = json.loads(OLD_GAMES.read_text())
    migrate.upgrade(database_url, "0010")
    engine = sa.create_engine(database_url)
    for game in old:
        _insert_old_game(engine, game["export"])
    engine.dispose()
    svc = make_service(database_url)
    try:
        for game in old:
            uid = game["export"]["game"]["uid"]
            assert svc.verify(uid) == []
            for seq, digest in enumerate(game["views"]):
                assert _view_digest(svc.state_at(uid, seq)["view"]) == digest, (uid, seq)
            state = svc.state(uid, 0)
            assert state["game"]["fairness"] == {"scheme": SPLITMIX_SCHEME, "commitment": None,
                                                 "seed_chosen": False, "published": False}
            if 0 in state["game"]["to_act"]:
                option = svc.options(uid, 0)["options"][0]
                assert svc.submit(uid, 0, state["seq"], option)["applied"] is True
            assert svc.verify(uid) == []
            export = svc.export(uid)
            assert export["game"]["rng_scheme"] == SPLITMIX_SCHEME
            assert isinstance(export["game"]["initial_state"]["rng"], int)
            assert check_record(record_of_export(export)).fair
    finally:
        svc.engine.dispose()
