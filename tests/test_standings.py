"""Standings among friends (issue 41): the figures of a table (games, wins, average place and
openskill's Weng-Lin rating) from the places the games' rules gave, the automatic table of an
address and the named groups, seasons, the computer apart by level, former players; through the
API, the pages and the command line. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from openskill.models import PlackettLuce
from sqlmodel import col, select

from app.core.models import Game, Seat
from app.features.signin import signins as signin
from app.features.standings.figures import COMPUTER, PERSON, Entry, Result, figures
from app.features.standings.finals import final_places
from tests.apifixtures import Api, bearer, bot_game, csrf_token
from tests.netutil import serve_in_thread
from tests.standings_games import GREAT_RACE, Player, computer, finished_game
from tests.test_cli_player import Cli
from tests.test_rematch import ask, finished

pytest_plugins = ["tests.apifixtures"]

ANN = Player("ann@example.com", "Ann")
BOB = Player("bob@example.com", "Bob")
CAT = Player("cat@example.com", "Cat")
EVE = Player("eve@example.com", "Eve")
DAY = datetime(2026, 3, 1, 20, 0, tzinfo=UTC)

FOUR_GAMES = [(1, 2, 3), (2, 1, 3), (1, 3, 2), (2, 2, 1)]
"""The places of Ann, Bob and Cat in four evenings (the last, Ann and Bob tied second)."""


@pytest.fixture(autouse=True)
def _asks_answer_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signin, "ANSWER_FLOOR", 0.0)


def _mailed_token(api: Api, email: str) -> str:
    signin.ask_link(api.service, email, "127.0.0.1", "en")
    payload = api.rows("SELECT payload FROM outbox WHERE kind = 'signin' AND recipient = :to "
                       "ORDER BY id DESC", to=email)[0][0]
    return str((payload if isinstance(payload, dict) else json.loads(payload))["token"])


def account(api: Api, email: str) -> dict[str, str]:
    """The Authorization header of an account token of ``email``, signed in by mail."""
    used = api.client.post("/api/signin/use", json={"token": _mailed_token(api, email)})
    assert used.status_code == 200, used.get_json()
    return bearer(used.get_json()["account_token"])


def browser(api: Api, email: str) -> FlaskClient:
    """A browser signed in as ``email`` by the link mailed to it."""
    token = _mailed_token(api, email)
    client: FlaskClient = api.app.test_client()
    page = client.get(f"/signin/{token}").get_data(as_text=True)
    used = client.post(f"/signin/{token}", data={"csrf_token": csrf_token(page)})
    assert used.status_code == 303
    return client


def read(api: Api, who: dict[str, str], expect: int = 200, **query: str) -> dict[str, Any]:
    answer = api.client.get("/api/standings", query_string=query, headers=who)
    assert answer.status_code == expect, answer.get_json()
    found: dict[str, Any] = answer.get_json()
    return found


def by_name(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {line["name"]: line for line in found["players"]}


def four_evenings(api: Api) -> list[str]:
    return [finished_game(api.service, [ANN, BOB, CAT], places, DAY + timedelta(days=7 * n))
            for n, places in enumerate(FOUR_GAMES)]


def test_three_friends_four_games_hand_checked(api: Api) -> None:
    four_evenings(api)
    found = read(api, account(api, ANN.email))
    assert found["game"] == "titan-race" and found["table"] == "automatic"
    assert found["finished_games"] == 4 and found["computers"] == [] and found["former"] is None
    lines = by_name(found)
    figures_of = {name: (line["games"], line["wins"], line["average_place"])
                  for name, line in lines.items()}
    # Ann 1, 2, 1, 2; Bob 2, 1, 3, 2; Cat 3, 3, 2, 1
    assert figures_of == {"Ann": (4, 2, 1.5), "Bob": (4, 1, 2.0), "Cat": (4, 1, 2.25)}
    assert [line["you"] for line in found["players"]] == [True, False, False]
    # the ratings are openskill's own, the games rated in the order they finished
    model = PlackettLuce()
    ratings = [model.rating() for _ in range(3)]
    for places in FOUR_GAMES:
        rated = model.rate([[r] for r in ratings], ranks=[float(p) for p in places])
        ratings = [team[0] for team in rated]
    for name, rating in zip(("Ann", "Bob", "Cat"), ratings, strict=True):
        assert lines[name]["rating"] == {"ordinal": round(rating.ordinal(), 2),
                                         "mu": round(rating.mu, 2),
                                         "sigma": round(rating.sigma, 2)}
    assert found["players"][0]["name"] == "Ann"  # the best ordinal first
    # never an address of another: Bob sees Ann by her name only
    bobs = api.client.get("/api/standings", headers=account(api, BOB.email)).get_data(
        as_text=True)
    assert ANN.email not in bobs and CAT.email not in bobs and '"Ann"' in bobs


def test_the_figures_rate_several_seats_of_one_level_once() -> None:
    """Two computer seats of one level in a game: the level's line counts its best seat;
    the other still takes part in the match."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    game = Result(1, at, (Entry("a", PERSON, "Ann", 2), Entry("easy", COMPUTER, "easy", 1),
                          Entry("easy", COMPUTER, "easy", 3)))
    lines = {line.who: line for line in figures([game])}
    assert (lines["easy"].games, lines["easy"].wins, lines["easy"].average_place) == (1, 1, 1.0)
    model = PlackettLuce()
    rated = model.rate([[model.rating()] for _ in range(3)], ranks=[2.0, 1.0, 3.0])
    assert lines["a"].mu == pytest.approx(rated[0][0].mu)
    assert lines["easy"].mu == pytest.approx(rated[1][0].mu)


def test_a_game_and_its_rematch_both_count(api: Api) -> None:
    """Played for real: Ann and Bob resign, the computer plays on; Bob asks for the rematch,
    Ann says yes, and they resign again."""
    table = finished(api)
    made = ask(api, table, 1)
    given = api.client.post(f"/api/games/{made['game']}/contribution",
                            json={"contribution": "ab" * 32}, headers=bearer(made["api_token"]))
    assert given.status_code == 200
    yes = api.client.post(f"/api/games/{table.uid}/rematch/join",
                          json={"contribution": "cd" * 32}, headers=table.seat(0))
    assert yes.status_code == 201 and yes.get_json()["started"] is True
    for token in (yes.get_json()["api_token"], made["api_token"]):
        api.client.post(f"/api/games/{made['game']}/resign", headers=bearer(token))
    assert api.state(made["game"])["game"]["status"] == "finished"
    found = read(api, account(api, "ann@example.com"))
    assert found["finished_games"] == 2
    assert {line["name"]: line["games"] for line in found["players"]} == {"P0": 2, "P1": 2}
    assert [(line["level"], line["games"]) for line in found["computers"]] == [("easy", 2)]
    assert all(line["rating"] for line in found["players"] + found["computers"])


def test_the_season_is_a_range_of_days_both_included(api: Api) -> None:
    for month in (1, 2, 3):
        finished_game(api.service, [ANN, BOB, CAT], (1, 2, 3),
                      datetime(2026, month, 10, 23, 30, tzinfo=UTC))
    ann = account(api, ANN.email)
    assert read(api, ann)["finished_games"] == 3
    february = read(api, ann, **{"from": "2026-02-01", "to": "2026-02-28"})
    assert february["finished_games"] == 1 and february["from"] == "2026-02-01"
    assert by_name(february)["Ann"]["games"] == 1
    assert read(api, ann, **{"from": "2026-02-10", "to": "2026-02-10"})["finished_games"] == 1
    assert read(api, ann, **{"from": "2026-02-11"})["finished_games"] == 1
    assert read(api, ann, to="2026-02-09")["finished_games"] == 1
    assert "not a date" in read(api, ann, 400, **{"from": "last week"})["error"]
    assert "ends before" in read(api, ann, 400, **{"from": "2026-03-01",
                                                   "to": "2026-02-01"})["error"]
    assert read(api, ann, 400, game="chess")["error"]


def test_the_computer_apart_by_level_and_each_game_alone(api: Api) -> None:
    finished_game(api.service, [ANN, computer("strong"), BOB, computer("easy")], (2, 1, 4, 3),
                  DAY)
    finished_game(api.service, [ANN, BOB, computer("easy"), computer("easy")], (1, 2, 3, 4),
                  DAY + timedelta(days=1))
    finished_game(api.service, [ANN, BOB, computer("normal")], (2, 1, None), DAY,
                  game=GREAT_RACE)
    ann = account(api, ANN.email)
    titan = read(api, ann, game="titan-race")
    assert titan["finished_games"] == 2 and set(by_name(titan)) == {"Ann", "Bob"}
    levels = {line["level"]: line for line in titan["computers"]}
    assert list(levels) == ["easy", "strong"]  # by level, and only those that played
    assert (levels["easy"]["games"], levels["easy"]["average_place"]) == (2, 3.0)
    assert (levels["strong"]["games"], levels["strong"]["wins"]) == (1, 1)
    assert levels["strong"]["rating"]["mu"] > 25  # rated like a player
    great = read(api, ann, game=GREAT_RACE)
    assert great["finished_games"] == 1
    assert {n: (line["wins"], line["average_place"]) for n, line in by_name(great).items()} == {
        "Ann": (0, 2.0), "Bob": (1, 1.0)}
    # the crew that never arrived ranks after every placed one
    assert [(line["level"], line["average_place"]) for line in great["computers"]] == [
        ("normal", 3.0)]


def test_former_players_abandoned_and_running_games(api: Api) -> None:
    uid = finished_game(api.service, [ANN, BOB, CAT], (3, 1, 2), DAY)
    with api.service.session(write=True) as s:  # Cat asked to be forgotten (issue 41)
        seat = s.exec(select(Seat).join(Game, col(Game.id) == col(Seat.game_id))
                      .where(Game.uid == uid, Seat.position == 2)).one()
        seat.email, seat.player_name, seat.forgotten_at = "", "a former player", DAY
        s.add(seat)
        s.commit()
    doomed = api.create([{"email": ANN.email}, {"email": BOB.email}, {"bot": True}])
    api.accept_all(doomed)
    api.service.abandon(doomed.uid, doomed.creator_token)
    api.new_started(3, prefix="ann")  # (a running game of other addresses: nothing of it)
    found = read(api, account(api, ANN.email))
    assert found["finished_games"] == 1 and set(by_name(found)) == {"Ann", "Bob"}
    assert found["former"] == {"games": 1, "wins": 0, "average_place": 2.0, "rating": None}
    assert "Cat" not in json.dumps(found)


def make_group(api: Api, who: dict[str, str], name: str = "Friday") -> str:
    made = api.client.post("/api/groups", json={"name": name}, headers=who)
    assert made.status_code == 201, made.get_json()
    return str(made.get_json()["group"])


def add(api: Api, who: dict[str, str], group: str, email: str, expect: int = 200) -> Any:
    answer = api.client.post(f"/api/groups/{group}/members", json={"email": email},
                             headers=who)
    assert answer.status_code == expect, answer.get_json()
    return answer.get_json()


def test_a_group_counts_the_games_among_its_members_that_its_owner_may_see(api: Api) -> None:
    finished_game(api.service, [ANN, BOB, EVE], (1, 2, 3), DAY)  # all members
    finished_game(api.service, [BOB, EVE, computer()], (1, 2, 3), DAY, spectators=False)
    finished_game(api.service, [BOB, EVE, computer()], (2, 1, 3), DAY)  # open to spectators
    finished_game(api.service, [ANN, BOB, CAT], (1, 2, 3), DAY)  # Cat is not a member
    finished_game(api.service, [ANN, computer(), computer()], (1, 2, 3), DAY)  # Ann alone
    ann = account(api, ANN.email)
    group = make_group(api, ann)
    for email in (BOB.email, EVE.email):
        add(api, ann, group, email)
    listed = api.client.get("/api/groups", headers=ann).get_json()["groups"]
    assert listed == [{"group": group, "name": "Friday",
                       "members": [ANN.email, BOB.email, EVE.email]}]
    found = read(api, ann, group=group)
    assert found["table"] == "group" and found["name"] == "Friday"
    assert found["finished_games"] == 2
    assert {n: line["games"] for n, line in by_name(found).items()} == {
        "Ann": 1, "Bob": 2, "Eve": 2}
    assert read(api, ann)["finished_games"] == 3  # Ann's own table: the games she played
    # an address Ann never played with is refused; Cat, whom she played with, is taken
    refused = add(api, ann, group, "dan@example.com", 400)
    assert "played no game" in refused["error"]
    assert CAT.email in add(api, ann, group, CAT.email)["members"]
    removed = api.client.post(f"/api/groups/{group}/members/remove",
                              json={"email": CAT.email}, headers=ann)
    assert removed.status_code == 200 and CAT.email not in removed.get_json()["members"]


def test_only_the_owner_sees_or_changes_a_group(api: Api) -> None:
    finished_game(api.service, [ANN, BOB, CAT], (1, 2, 3), DAY)
    ann, bob = account(api, ANN.email), account(api, BOB.email)
    group = make_group(api, ann)
    before = api.rows("SELECT email FROM player_group_members ORDER BY email")
    # to Bob, Ann's group is one that does not exist: the same answer as a made-up id
    for uid in (group, "0" * 32):
        assert read(api, bob, 404, group=uid)["error"]
        assert api.client.post(f"/api/groups/{uid}/members", json={"email": BOB.email},
                               headers=bob).status_code == 404
        assert api.client.post(f"/api/groups/{uid}/members/remove",
                               json={"email": ANN.email}, headers=bob).status_code == 404
        assert api.client.delete(f"/api/groups/{uid}", headers=bob).status_code == 404
    assert api.client.get("/api/groups", headers=bob).get_json() == {"groups": []}
    assert api.rows("SELECT email FROM player_group_members ORDER BY email") == before
    assert api.client.get("/api/standings").status_code == 401
    assert api.client.post("/api/groups", json={"name": "x"}).status_code == 401
    assert api.client.delete(f"/api/groups/{group}", headers=ann).status_code == 200
    assert api.scalar("SELECT count(*) FROM player_groups") == 0


def test_the_page_shows_the_tables_and_keeps_the_groups(api: Api) -> None:
    four_evenings(api)
    visitor = api.app.test_client()
    told = visitor.get("/standings").get_data(as_text=True)
    assert 'id="standings-sign-in"' in told and "/signin" in told
    ann = browser(api, ANN.email)
    page = ann.get("/standings?game=titan-race&from=2026-03-01&to=2026-03-31").get_data(
        as_text=True)
    assert 'id="table-automatic"' in page and "Bob" in page and "Cat" in page
    assert BOB.email not in page and 'data-games="4"' in page and "1.50" in page
    bad = ann.get("/standings?from=yesterday")
    assert bad.status_code == 400 and "not a date" in bad.get_data(as_text=True)
    made = ann.post("/standings/groups", data={"name": "Friday", "csrf_token": csrf_token(page)})
    assert made.status_code == 303
    group_url = made.location
    group = group_url.rsplit("/", 1)[1]
    shown = ann.get(group_url).get_data(as_text=True)
    assert 'data-member="ann@example.com"' in shown
    token = csrf_token(shown)
    added = ann.post(f"/standings/groups/{group}/members",
                     data={"email": "Bob@Example.com", "csrf_token": token})
    assert added.status_code == 303
    refused = ann.post(f"/standings/groups/{group}/members",
                       data={"email": "dan@example.com", "csrf_token": token})
    assert refused.status_code == 400 and "played no game" in refused.get_data(as_text=True)
    assert ann.post(f"/standings/groups/{group}/members",
                    data={"email": CAT.email}).status_code == 400  # (no CSRF token)
    tables = ann.get("/standings").get_data(as_text=True)
    assert f'id="table-{group}"' in tables
    removed = ann.post(f"/standings/groups/{group}/members/remove",
                       data={"email": BOB.email, "csrf_token": token})
    assert removed.status_code == 303
    assert 'data-member="bob@example.com"' not in ann.get(group_url).get_data(as_text=True)
    # another address's group is not found, and cannot be changed
    bob = browser(api, BOB.email)
    assert bob.get(group_url).status_code == 404
    bobs = bob.get("/standings").get_data(as_text=True)
    assert bob.post(f"/standings/groups/{group}/delete",
                    data={"csrf_token": csrf_token(bobs)}).status_code == 404
    assert ann.post(f"/standings/groups/{group}/delete",
                    data={"csrf_token": token}).status_code == 303
    assert ann.get(group_url).status_code == 404


def test_the_page_in_polish(api: Api) -> None:
    four_evenings(api)
    ann = browser(api, ANN.email)
    page = ann.get("/standings?lang=pl").get_data(as_text=True)
    assert "Ranking" in page and "1,50" in page and "Średnie miejsce" in page
    assert "Osoby, z którymi grasz" in page
    visitor = api.app.test_client().get("/standings?lang=pl").get_data(as_text=True)
    assert "zaloguj się przez e-mail" in visitor


@pytest.fixture
def served(api: Api) -> Iterator[str]:
    """The app on a real port, for the command line."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, api.app, threaded=True)
    thread = serve_in_thread(server, "standings-server")
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


def test_the_command_line_shows_the_standings(api: Api, served: str, tmp_path: Path) -> None:
    four_evenings(api)
    finished_game(api.service, [ANN, BOB, computer("strong")], (2, 3, 1), DAY, game=GREAT_RACE)
    cli = Cli(tmp_path)
    nobody = cli("standings", code=1)
    assert "titanpost login" in nobody.stderr
    token = account(api, ANN.email)["Authorization"].split()[1]
    cli.config.write_text(json.dumps({"format": 1, "server": served, "games": {},
                                      "accounts": {served: {"email": ANN.email,
                                                            "token": token}}}))
    shown = cli("standings").stdout
    assert "Titan Race" in shown and "finished games: 4" in shown
    assert "Ann (you)" in shown and "1.50" in shown and BOB.email not in shown
    great = cli("standings", "--game", "great-race").stdout
    assert "The Great Race" in great and "the computer (strong)" in great
    season = cli.json("standings", "--from", "2026-03-08", "--to", "2026-03-15")
    assert season["standings"][0]["finished_games"] == 2
    api.client.post("/api/groups", json={"name": "Friday"}, headers=bearer(token))
    grouped = cli.json("standings", "--group", "friday")["standings"][0]
    assert grouped["table"] == "group" and grouped["finished_games"] == 0
    missing = cli("standings", "--group", "Sunday", code=1)
    assert "no group named Sunday" in missing.stderr
    polish = cli("standings", env={"LANGUAGE": "pl"}).stdout
    assert "1,50" in polish


def test_the_places_read_in_one_batch_are_the_games_own(api: Api) -> None:
    """Games played to their end (the computer playing on for the people who resigned): the
    places the standings rebuild from the snapshots and the log, several games at once, are
    those the game's own result gives (the game page, the mail, the API)."""
    uids = [finished(api).uid for _ in range(2)]
    uids.append(bot_game(api.service, 3, name="Computers"))
    with api.service.session() as s:
        games = [(int(api.scalar("SELECT id FROM games WHERE uid = :uid", uid=uid)), uid)
                 for uid in uids]
        batch = final_places(api.service, s, games)
    assert api.scalar("SELECT count(*) FROM snapshots") > 0
    for game_id, uid in games:
        result = api.state(uid)["result"]
        assert batch[game_id] == {entry["position"]: entry["place"]
                                  for entry in result["places"]}
