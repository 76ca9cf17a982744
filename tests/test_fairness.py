"""Fair dealing (app/features/fairness/dealing.py, app/features/fairness/records.py,
docs/fairness.md): a game's chance comes from a 256-bit secret the server commits to at creation,
together with the game's facts, mixed with every seat's own contribution; nobody sees the secret
while the game runs, everyone may check the whole deal and the log's hash chain once it is over, and
old games keep the generator they were dealt by.

Tried as a cheater and as a dishonest operator would (issue 36): every contribution the server
makes is fixed by the commitment before any player gives theirs; a commitment once shown cannot
be turned into another dealing in the database; a chosen seed is hashed into the keyed scheme
with a slow KDF; the secret (and the key derived from it) is looked for in every answer a player
or spectator can get while the game runs. The tamper matrix is tests/test_fairness_tamper.py.
"""

from __future__ import annotations

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
from sqlalchemy.exc import IntegrityError
from sqlmodel import SQLModel

from app.core import migrate
from app.core.logchain import genesis_hash, head_digest
from app.features.fairness import dealing
from app.features.fairness.records import (
    PUBLISHED_FIELDS,
    SUMMARY_FIELDS,
    check_record,
    record_of_export,
)
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


# ---------------------------------------------------------------------- keys and commitments


def test_the_key_depends_on_the_secret_every_contribution_and_the_rules_version() -> None:
    secret = b"\x04" * 32
    base = dealing.game_key(secret, ["aa" * 16, "bb" * 16], 1)
    assert dealing.game_key(secret, ["aa" * 16, "bb" * 16], 1) == base
    assert dealing.game_key(secret, ["aa" * 16, "bc" * 16], 1) != base
    assert dealing.game_key(secret, ["aa" * 16, "bb" * 16], 2) != base
    assert dealing.game_key(b"\x05" * 32, ["aa" * 16, "bb" * 16], 1) != base
    assert dealing.game_key_v1(secret, ["aa" * 16, "bb" * 16]) not in (base, None)
    assert dealing.commitment_v1(secret) == hashlib.sha256(secret).hexdigest()


def test_the_commitment_covers_the_secret_and_every_fact_of_the_dealing() -> None:
    facts: dict[str, Any] = {"game": "a" * 32, "ruleset": "titan-race", "variant": "standard",
                             "seed_chosen": False, "secret": b"\x06" * 32}
    shown = dealing.commitment(**facts)
    assert HEX.fullmatch(shown) and shown != dealing.commitment_v1(facts["secret"])
    others = {"game": "b" * 32, "ruleset": "great-race", "variant": "relay",
              "seed_chosen": True, "secret": b"\x07" * 32}
    for name, other in others.items():
        assert dealing.commitment(**(facts | {name: other})) != shown, name
    assert dealing.commitment(**facts, scheme=SPLITMIX_SCHEME) != shown


def test_a_server_contribution_is_fixed_by_the_secret_and_the_seat() -> None:
    secret = b"\x08" * 32
    given = [dealing.server_contribution(secret, p) for p in range(6)]
    assert len(set(given)) == 6 and all(HEX.fullmatch(c) for c in given)
    assert given == [dealing.server_contribution(secret, p) for p in range(6)]
    assert dealing.server_contribution(b"\x09" * 32, 0) != given[0]


def test_a_chosen_seed_gives_its_secret_through_a_slow_salted_kdf() -> None:
    """scrypt with 128 MiB of work per seed tried (the parameters are published: the same
    seed must give the same secret on every machine)."""
    assert dealing.SEED_COST == {"n": 2**17, "r": 8, "p": 1}
    expected = hashlib.scrypt(b"42", salt=b"titanpost chosen seed v2", n=2**17, r=8, p=1,
                              dklen=32, maxmem=2**28)
    assert dealing.seed_secret(42) == expected
    assert dealing.seed_secret(43) != expected


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
    assert isinstance(seeded["rng"], int)  # the older generator, for old games and scenarios


# ---------------------------------------------------------------------- a game's secret


def _bot_game(svc: GameService, game: str = "titan-race", seed: int | None = None) -> str:
    created = svc.create_game(seats=[{"bot": True}] * 3, rules_name=game, name="Bots",
                              seed=seed)
    svc.start(created["game"], created["creator_token"])
    return str(created["game"])


def _game_row(engine: sa.Engine, uid: str) -> dict[str, Any]:
    with engine.connect() as conn:
        row = conn.execute(sa.text("SELECT * FROM games WHERE uid = :uid"), {"uid": uid}).one()
    data = dict(row._mapping)
    for name in ("initial_state", "setup", "seat_setups", "settings"):
        if isinstance(data[name], str):
            data[name] = json.loads(data[name])
    return data


def _contributions(engine: sa.Engine, uid: str) -> list[str | None]:
    with engine.connect() as conn:
        return [row[0] for row in conn.execute(sa.text(
            "SELECT contribution FROM seats JOIN games ON games.id = seats.game_id "
            "WHERE games.uid = :uid ORDER BY position"), {"uid": uid})]


def _secrets_of(svc: GameService, uid: str) -> list[str]:
    """The game's secret and the key derived from it (in its state): neither may be seen."""
    row = _game_row(svc.engine, uid)
    return [row["dealing_secret"], row["initial_state"]["rng"]["key"]]


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
    row = _game_row(api.engine, uid)
    fair = summary["fairness"]
    assert fair["scheme"] == KEYED_SCHEME and not fair["seed_chosen"]
    assert fair["commitment_version"] == dealing.COMMITMENT_VERSION == row["commitment_version"]
    assert fair["commitment"] == dealing.commitment(
        game=uid, ruleset=game, variant="standard", seed_chosen=False,
        secret=bytes.fromhex(hidden[0]))
    assert fair["engine_version"] == ruleset(game).version
    assert "secret" not in fair and "seed" not in fair and fair["published"] is False
    _play_a_little(api, uid, tokens, 6)
    for position, token in tokens.items():
        state = api.state(uid, token)
        assert state["game"]["fairness"]["commitment"] == fair["commitment"]
        seen = _everything_a_player_sees(api, uid, token)
        for secret in hidden:
            assert secret not in seen, f"seat {position} can read the game's secret"
    page = api.client.get(f"/games/{uid}").get_data(as_text=True)
    assert fair["commitment"] in page
    assert "can read the outcomes to come in its database" in page


def _play_a_little(api: Api, uid: str, tokens: dict[int, str], answers: int) -> None:
    """Answer ``answers`` decisions (simultaneous ones seat by seat) with the first option."""
    table = Table(uid, "", {}, {}, dict(tokens))
    for _ in range(answers):
        position = api.to_act(uid, tokens[0])[0]
        options = api.options(table, position)
        status, body = api.submit(table, position, options["seq"], options["options"][0])
        assert status == 200, body


def test_the_log_head_shown_while_the_game_runs_is_a_digest_of_its_newest_hash(
        api: Api) -> None:
    """A running game shows its log's length and a digest of its newest hash (a client keeps
    it to find it again in the record), never the hash itself: with two consecutive hashes a
    hidden card of the entry between could be tried out."""
    uid, tokens, summary = _start_over_the_api(api, "titan-race")
    head = summary["fairness"]["log_head"]
    genesis = genesis_hash(_game_row(api.engine, uid)["initial_state"])
    hashes = [row[0] for row in api.rows(
        "SELECT hash FROM moves JOIN games ON games.id = moves.game_id WHERE games.uid = :uid "
        "ORDER BY seq", uid=uid)]
    assert head == {"seq": len(hashes), "digest": head_digest(hashes[-1] if hashes
                                                               else genesis)}
    _play_a_little(api, uid, tokens, 3)
    later = api.state(uid, tokens[1])["game"]["fairness"]["log_head"]
    newest = api.rows("SELECT hash FROM moves JOIN games ON games.id = moves.game_id "
                      "WHERE games.uid = :uid ORDER BY seq DESC", uid=uid)[0][0]
    assert later == {"seq": api.move_count(uid), "digest": head_digest(newest)}
    seen = _everything_a_player_sees(api, uid, tokens[0])
    for (digest,) in api.rows("SELECT hash FROM moves"):
        assert digest not in seen
    assert genesis not in seen


# ---------------------------------------------------------------------- contributions


def test_every_contribution_the_server_makes_is_fixed_before_any_player_gives_theirs(
        api: Api) -> None:
    """A computer seat's contribution, a seat accepted without one (no JavaScript) and a seat
    the start fills are all derived from the secret: what they will be is fixed by the
    commitment shown at creation, so the server has nothing left to try once the players
    contributed."""
    response = api.client.post("/api/games", json={"seats": [
        {"email": "ann@example.com"}, {"bot": True}, {"email": "ben@example.com"},
        {"email": "cy@example.com"}]})
    created = response.get_json()
    uid = created["game"]
    secret = bytes.fromhex(_game_row(api.engine, uid)["dealing_secret"])
    derived = [dealing.server_contribution(secret, p) for p in range(4)]
    assert _contributions(api.engine, uid) == [None, derived[1], None, None]
    invites = {i["position"]: i["invite_token"] for i in created["invitations"]}
    mine = "ab" * 32
    api.client.post("/api/invitations/accept", json={"invite_token": invites[0],
                                                     "contribution": mine})
    api.client.post("/api/invitations/accept", json={"invite_token": invites[2]})
    assert _contributions(api.engine, uid) == [mine, derived[1], derived[2], None]
    started = api.client.post(f"/api/games/{uid}/start", json={"fill_with_bots": True},
                              headers={"X-Creator-Token": created["creator_token"]})
    assert started.status_code == 200
    assert _contributions(api.engine, uid) == [mine, derived[1], derived[2], derived[3]]
    row = _game_row(api.engine, uid)
    expected, _ = ruleset("titan-race").start(
        variant="standard", setup=row["setup"], seats=[
            SeatSetup(s["position"], ruleset("titan-race").pieces_from_fields(
                s["titans"], s["team"]), {"anytime_windows": s["anytime_windows"]})
            for s in row["seat_setups"]],
        dealing=Dealing(key=dealing.game_key(secret, [mine, *derived[1:]],
                                             row["engine_version"])))
    assert expected == row["initial_state"]


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


def test_the_join_page_keeps_the_browsers_contribution(api: Api) -> None:
    """The join page draws the contribution in the browser, keeps it in localStorage by game
    and seat (giving a kept one again), and shows it; the form's value is taken as given
    (tests/test_fairness_browser.py runs the script)."""
    created = api.client.post("/api/games", json={
        "seats": [{"email": f"p{i}@example.com"} for i in range(3)]}).get_json()
    invite = created["invitations"][0]["invite_token"]
    page = api.client.get(f"/join/{invite}").get_data(as_text=True)
    assert 'name="contribution"' in page and "crypto.getRandomValues" in page
    assert "localStorage" in page and 'id="join-contribution"' in page
    commitment = api.scalar("SELECT dealing_commitment FROM games")
    assert f'data-commitment="{commitment}"' in page
    assert "cannot choose" in page
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert csrf is not None
    taken = api.client.post(f"/join/{invite}", data={
        "csrf_token": csrf.group(1), "name": "Ann", "contribution": "AB" * 32})
    assert taken.status_code == 303
    assert api.scalar("SELECT contribution FROM seats WHERE position = 0") == "ab" * 32


# ---------------------------------------------------------------------- a fixed dealing


@pytest.mark.parametrize("change", [
    "rng_scheme = 'splitmix64'", "seed = 42", "seed_chosen = :yes",
    "dealing_commitment = :other", "dealing_secret = :other", "commitment_version = 1",
    "committed_uid = :other_id", "ruleset = 'great-race'", "variant = 'relay'",
    "dealing_commitment = NULL"])
def test_a_shown_commitment_cannot_be_turned_into_another_dealing(api: Api, change: str) -> None:
    """The database itself refuses to change what a commitment covers, the way the log is
    append-only: a game that showed a commitment cannot become one "created before fair
    dealing", nor take another secret or seed (issue 36)."""
    uid, _, summary = _start_over_the_api(api, "titan-race")
    with pytest.raises(IntegrityError, match="dealing is fixed"), api.engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE games SET {change} WHERE uid = :uid"),
                     {"uid": uid, "yes": True, "other": "ab" * 32, "other_id": "c" * 32})
    assert api.state(uid)["game"]["fairness"] == summary["fairness"] | {
        "log_head": api.state(uid)["game"]["fairness"]["log_head"]}


def test_the_rules_version_is_fixed_from_the_start(api: Api) -> None:
    """Before the start a game takes the newest rules (its version may change); once dealt,
    the version it was dealt under is fixed."""
    created = api.client.post("/api/games", json={
        "game": "great-race", "seats": [{"bot": True}, {"email": "ann@example.com"}]}).get_json()
    uid = created["game"]
    with api.engine.begin() as conn:  # (created by a server before the newest rules)
        conn.execute(sa.text("UPDATE games SET engine_version = 1 WHERE uid = :uid"),
                     {"uid": uid})
    api.client.post(f"/api/games/{uid}/start", json={"fill_with_bots": True},
                    headers={"X-Creator-Token": created["creator_token"]})
    with pytest.raises(IntegrityError, match="dealing is fixed"), api.engine.begin() as conn:
        conn.execute(sa.text("UPDATE games SET engine_version = 1 WHERE uid = :uid"),
                     {"uid": uid})
    assert _game_row(api.engine, uid)["engine_version"] == ruleset("great-race").version


def test_the_guard_lets_the_game_itself_change(api: Api) -> None:
    """What a commitment does not cover (the status, the winner, a pause, the name) still
    changes as the game goes on."""
    uid, _, _ = _start_over_the_api(api, "titan-race")
    with api.engine.begin() as conn:
        conn.execute(sa.text("UPDATE games SET name = 'Renamed', pause_reason = 'x' "
                             "WHERE uid = :uid"), {"uid": uid})
    assert _game_row(api.engine, uid)["name"] == "Renamed"


# ---------------------------------------------------------------------- checking a game


@pytest.mark.parametrize("game", ["titan-race", "great-race"])
def test_a_finished_game_publishes_its_record_to_anyone_and_it_checks_out(
        api: Api, game: str) -> None:
    uid = _bot_game(api.service, game)
    with api.engine.begin() as conn:  # (no spectators: the record is still anyone's)
        conn.execute(sa.text("UPDATE games SET settings = :s WHERE uid = :uid"),
                     {"uid": uid, "s": json.dumps({"spectators": False})})
    assert api.client.get(f"/api/games/{uid}").status_code == 403
    response = api.client.get(f"/api/games/{uid}/fairness")
    assert response.status_code == 200
    record = response.get_json()
    assert set(record) == {*SUMMARY_FIELDS, *PUBLISHED_FIELDS}
    assert record == record_of_export(api.service.export(uid))
    assert record["status"] == "finished" and record["published"] is True
    assert record["secret"] == _secrets_of(api.service, uid)[0]
    assert record["server_contributions"] == [0, 1, 2] and record["seed"] is None
    assert record["length"] == api.move_count(uid) == len(record["moves"])
    report = check_record(record)
    assert report.fair, report.problems
    assert report.committed and report.outcomes > 0 and report.commitment_version == 2
    assert report.moves == api.move_count(uid)
    for secret in _secrets_of(api.service, uid)[1:]:
        assert secret not in json.dumps(record)  # (the key is recomputed, never published)
    for private in ("email", "player_name", "chat", "@example.com"):
        assert private not in json.dumps(record)


def test_the_game_page_tells_how_to_check_a_finished_game_without_a_login(api: Api) -> None:
    uid = _bot_game(api.service)
    record = api.client.get(f"/api/games/{uid}/fairness").get_json()
    page = api.client.get(f"/games/{uid}").get_data(as_text=True)
    assert record["secret"] in page and record["commitment"] in page
    assert f"titanpost verify-fair http://localhost/api/games/{uid}/fairness" in page


def test_a_running_game_publishes_nothing_and_spectators_rules_hold(api: Api) -> None:
    uid, tokens, _ = _start_over_the_api(api, "titan-race")
    record = api.client.get(f"/api/games/{uid}/fairness", headers=bearer(tokens[0])).get_json()
    assert set(record) == set(SUMMARY_FIELDS)
    assert record["published"] is False and record["status"] == "active"
    report = check_record(record)
    assert not report.fair and "not over" in report.problems[0]
    with api.engine.begin() as conn:
        conn.execute(sa.text("UPDATE games SET settings = :s WHERE uid = :uid"),
                     {"uid": uid, "s": json.dumps({"spectators": False})})
    assert api.client.get(f"/api/games/{uid}/fairness").status_code == 403
    assert api.client.get(f"/api/games/{uid}/fairness",
                          headers=bearer(tokens[1])).status_code == 200


def test_an_abandoned_game_ends_its_log_with_its_abandonment(api: Api) -> None:
    """Abandoning a started game writes its last log entry, so that a record whose log was
    cut short cannot pass for an abandoned game's; one abandoned before its start has no
    deal to publish."""
    response = api.client.post("/api/games", json={
        "game": "great-race", "seats": [{"email": "x@example.com"}, {"bot": True}]})
    other = response.get_json()
    api.client.post("/api/invitations/accept",
                    json={"invite_token": other["invitations"][0]["invite_token"]})
    api.client.post(f"/api/games/{other['game']}/start", json={},
                    headers={"X-Creator-Token": other["creator_token"]})
    before = api.move_count(other["game"])
    abandoned = api.client.post(f"/api/games/{other['game']}/abandon",
                                headers={"X-Creator-Token": other["creator_token"]})
    assert abandoned.status_code == 200
    log = api.log(other["game"])
    assert len(log) == before + 1
    assert log[-1]["kind"] == "abandon" and log[-1]["actor"] == "owner"
    record = api.client.get(f"/api/games/{other['game']}/fairness").get_json()
    assert record["status"] == "abandoned" and record["winner"] is None
    assert check_record(record).fair, check_record(record).problems
    assert "The game was abandoned" in api.client.get(
        f"/games/{other['game']}/log").get_data(as_text=True)
    assert api.service.verify(other["game"]) == []
    never = api.client.post("/api/games", json={"game": "great-race", "seats": [
        {"email": "y@example.com"}, {"bot": True}]}).get_json()
    api.client.post(f"/api/games/{never['game']}/abandon",
                    headers={"X-Creator-Token": never["creator_token"]})
    unstarted = api.client.get(f"/api/games/{never['game']}/fairness").get_json()
    assert unstarted["published"] is False and "secret" not in unstarted
    assert api.move_count(never["game"]) == 0


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
    record = tmp_path / "record.json"
    record.write_text(json.dumps(service.fairness(uid, None)))
    assert runner.invoke(main, ["verify-fair", str(record)]).exit_code == 0
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
    from app.core import i18n
    from tests.test_cli_pseudo_locale import POLISH, unmarked
    from tests.test_pseudo_locale import _Pseudo

    uid = _bot_game(service, "titan-race")
    export = tmp_path / "game.json"
    data = service.export(uid)
    data["game"]["dealing_secret"] = "ab" * 32
    data["moves"] = data["moves"][:-3]
    export.write_text(json.dumps(data))
    polish = CliRunner().invoke(main, ["verify-fair", str(export)], env=POLISH)
    assert polish.exit_code == 1
    said = " ".join(polish.output.split())
    assert "zobowiązanie pokazane na początku" in said, polish.output
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


def test_the_admins_chosen_seed_is_keyed_announced_and_published(api: Api) -> None:
    """A chosen seed is never a raw generator seed again: the secret is scrypt of it, the game
    is keyed and committed to like any other, every seat is told the seed was chosen, and
    the seed is published when the game ends; the same seed deals the same in every game."""
    seats = [{"bot": True}] * 3
    made = [api.client.post("/api/games", json={"seats": seats, "seed": 42},
                            headers=bearer(ADMIN_TOKEN)).get_json() for _ in range(2)]
    uids = [m["game"] for m in made]
    state = api.client.get(f"/api/games/{uids[0]}").get_json()
    fair = state["game"]["fairness"]
    row = _game_row(api.engine, uids[0])
    assert fair == {"scheme": KEYED_SCHEME, "commitment": row["dealing_commitment"],
                    "commitment_version": 2, "seed_chosen": True, "published": False}
    assert row["dealing_secret"] == dealing.seed_secret(42).hex()
    assert fair["commitment"] == dealing.commitment(
        game=uids[0], ruleset="titan-race", variant="standard", seed_chosen=True,
        secret=dealing.seed_secret(42))
    assert "chose this game" in api.client.get(f"/games/{uids[0]}").get_data(as_text=True)
    for m in made:
        api.client.post(f"/api/games/{m['game']}/start", json={},
                        headers={"X-Creator-Token": m["creator_token"]})
    first, second = (_game_row(api.engine, uid)["initial_state"] for uid in uids)
    assert first == second and first["rng"]["scheme"] == KEYED_SCHEME
    assert first["rng"]["key"] != dealing.seed_secret(42).hex()
    record = api.client.get(f"/api/games/{uids[0]}/fairness").get_json()
    assert record["seed"] == 42 and record["seed_chosen"] is True
    report = check_record(record)
    assert report.fair and report.committed and report.chosen_seed, report.problems
    page = api.client.get(f"/games/{uids[0]}").get_data(as_text=True)
    assert "The seed: 42." in page
    assert any("seed gives" in p for p in check_record(record | {"seed": 43}).problems)


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
    """Games created by the code before fair dealing (tests/data, made by it) keep their
    generator: after the upgrade they verify, rebuild every state as they were, play on, and
    once over their record checks out from their seed."""
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
            fair = state["game"]["fairness"]
            assert {k: fair[k] for k in ("scheme", "commitment", "commitment_version",
                                         "seed_chosen", "published")} == {
                "scheme": SPLITMIX_SCHEME, "commitment": None, "commitment_version": None,
                "seed_chosen": False, "published": False}
            if 0 in state["game"]["to_act"]:
                option = svc.options(uid, 0)["options"][0]
                assert svc.submit(uid, 0, state["seq"], option)["applied"] is True
            assert svc.verify(uid) == []
            export = svc.export(uid)
            assert export["game"]["rng_scheme"] == SPLITMIX_SCHEME
            assert isinstance(export["game"]["initial_state"]["rng"], int)
            with svc.engine.begin() as conn:  # (their creator token is not known here)
                conn.execute(sa.text("UPDATE games SET status = 'abandoned' WHERE uid = :uid"),
                             {"uid": uid})
            report = check_record(record_of_export(svc.export(uid)))
            assert report.fair and not report.committed, report.problems
            assert report.scheme == SPLITMIX_SCHEME
    finally:
        svc.engine.dispose()


def test_a_commitment_of_version_1_still_checks_out(service: GameService) -> None:
    """A game created with a commitment before version 2 (SHA-256 of the secret alone, the
    key from the contributions only) keeps verifying: its row says version 1."""
    uid = _bot_game(service)
    export = service.export(uid)
    game = export["game"]
    secret = bytes.fromhex(game["dealing_secret"])
    contributions = [seat["contribution"] for seat in export["seats"]]
    rules = ruleset("titan-race")
    setups = [SeatSetup(s["position"], rules.pieces_from_fields(s["titans"], s["team"]),
                        {"anytime_windows": s["anytime_windows"]}) for s in game["seat_setups"]]
    initial, _ = rules.start(variant="standard", setup=game["setup"], seats=setups,
                             dealing=Dealing(key=dealing.game_key_v1(secret, contributions)))
    older = {**export, "game": {**game, "commitment_version": 1, "committed_uid": None,
                                "dealing_commitment": dealing.commitment_v1(secret),
                                "initial_state": initial}, "moves": []}
    older["game"] |= {"status": "abandoned", "winner": None}
    report = check_record(record_of_export(older))
    assert report.fair and report.committed and report.commitment_version == 1, report.problems
    del older["game"]["commitment_version"]  # (an export made before versions: 1)
    assert record_of_export(older)["commitment_version"] == 1


def test_the_upgrade_reads_each_commitments_version_from_the_commitment(
        database_url: str) -> None:
    """Revision 0019 labels the commitments made before it (SHA-256 of the secret alone) as
    version 1 and any other as version 2, with the game's own id, so that a database taken
    down past it and up again keeps its games checking out; a game without one has none."""
    migrate.upgrade(database_url, "0018")
    engine = sa.create_engine(database_url)
    secret = b"\x0a" * 32
    rows = {"a" * 32: dealing.commitment_v1(secret),
            "b" * 32: dealing.commitment(game="b" * 32, ruleset="titan-race",
                                         variant="standard", seed_chosen=False, secret=secret),
            "c" * 32: None}
    try:
        with engine.begin() as conn:
            games = sa.Table("games", sa.MetaData(), autoload_with=conn)
            for uid, shown in rows.items():
                conn.execute(sa.insert(games), {
                    "uid": uid, "name": "", "ruleset": "titan-race", "engine_version": 1,
                    "variant": "standard", "setup": {"circuits": ["kaldheira"]}, "settings": {},
                    "status": "open", "seed": 0, "creator_token_hash": "0" * 64,
                    "created_at": datetime(2026, 11, 27), "dealing_commitment": shown,
                    "dealing_secret": secret.hex() if shown else None,
                    "rng_scheme": KEYED_SCHEME if shown else SPLITMIX_SCHEME})
        migrate.upgrade(database_url)
        with engine.connect() as conn:
            found = {uid: (version, committed) for uid, version, committed in conn.execute(
                sa.text("SELECT uid, commitment_version, committed_uid FROM games"))}
    finally:
        engine.dispose()
    assert found == {"a" * 32: (1, None), "b" * 32: (2, "b" * 32), "c" * 32: (None, None)}


def test_an_imported_game_keeps_the_commitment_its_players_were_shown(
        service: GameService) -> None:
    uid = _bot_game(service)
    export = service.export(uid)
    copy = service.import_game(export)["game"]
    record = service.fairness(copy, None)
    assert record["game"] == uid and record["imported_as"] == copy
    assert record["commitment"] == export["game"]["dealing_commitment"]
    assert check_record(record).fair, check_record(record).problems
    again = service.export(copy)
    assert again["game"]["committed_uid"] == uid
    assert record_of_export(again) == record


def test_an_export_with_a_bad_commitment_version_is_refused_and_stores_nothing(
        service: GameService) -> None:
    from app.service import BadRequest

    uid = _bot_game(service)
    export = service.export(uid)
    for version, said in ((7, "commitment_version must be 1 or 2"), (True, "whole int"),
                          (None, "go together")):
        bad = {**export, "game": {**export["game"], "commitment_version": version}}
        with pytest.raises(BadRequest, match=said):
            service.import_game(bad)
    with service.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM games")).scalar_one() == 1
