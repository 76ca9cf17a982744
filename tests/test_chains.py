"""A seat's chain of inputs (``a; b; c``) is fair play: it can never be an oracle.

1. A chain stops after the first input that meets chance or what is hidden (a roll, a drawn tile
   or card, a shuffle): that input is played, the rest is not, and the answer says so, the same
   way whatever chance gave. So whether the rest would have been legal (``move X; play <the
   card drawn>``) tells nothing. This is tried over many seeds with the rules alone, each chain
   against twins dealt anew, and through the API, the game page and the command line.
2. A chain stops too where the decision becomes another seat's, or one every seat answers in
   secret; a chain refused before any chance changes nothing (no log entry, the same state, no
   sealed answer) and its refusal carries the legal options at its first input.
3. A plan sent again after the reveal, the same as the one sealed, is "already applied".

The tests with a database run on SQLite and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.serving import make_server

from app import create_app
from app.core.config import Settings
from app.games import ruleset
from app.games.base import MoveRejected, Ruleset, SeatSetup
from app.games.greatrace.engine.pieces import CARDS, TILES
from app.games.rng import Dealing, KeyedRng
from app.games.titanrace.engine.cards import COLOURS
from app.service import GameService
from app.web.browser_seats import store_seat
from tests.apifixtures import Api, base_env, bearer
from tests.netutil import serve_in_thread
from tests.test_cli_player import Cli

pytest_plugins = ["tests.apifixtures"]

ANN = 0
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
TITAN_RACE = ruleset("titan-race")
GREAT_RACE = ruleset("great-race")


# ---------------------------------------------------------------------- the rules alone


def copy_of(rules: Ruleset, game: Any) -> Any:
    return rules.load(rules.dump(game))


def dealt(number: int) -> Dealing:
    """The fair dealing of a game, from a key made of ``number``."""
    return Dealing(key=hashlib.sha256(f"deal {number}".encode()).digest())


def rerandomised(state: dict[str, Any], rnd: random.Random) -> dict[str, Any] | None:
    """The state with what chance has not shown yet dealt anew: another generator, the bag
    and the deck in another order; the players see no difference. None for a state waiting
    inside an input (it goes on from the input's start, where the bag and the deck still hold
    what the input has already drawn and shown)."""
    if state.get("suspended") is not None:
        return None
    again = dict(state, rng=KeyedRng(rnd.randbytes(32), state["rng"]["drawn"]).to_json())
    for pile in ("bag", "deck"):
        if isinstance(again.get(pile), list):
            again[pile] = rnd.sample(again[pile], len(again[pile]))
    return again


def answer_of(refusal: MoveRejected) -> str:
    """Everything a refusal carries (its message, legal options, index, words...), as text."""
    return json.dumps([str(refusal), vars(refusal)], sort_keys=True)


def refusal(rules: Ruleset, game: Any, chain: str, seat: int) -> MoveRejected | None:
    """How ``chain`` from ``seat`` is refused (on a copy of ``game``); None if it is played."""
    try:
        rules.apply(copy_of(rules, game), chain, seat)
    except MoveRejected as exc:
        return exc
    return None


def ending(rules: Ruleset, game: Any, chain: str, seat: int) -> str:
    """How ``chain`` from ``seat`` ends (on a copy of ``game``), everything the sender is told
    of it as text: its refusal, or how many inputs were played and where it stopped."""
    try:
        produced, stop = rules.apply_chain(copy_of(rules, game), chain, seat)
    except MoveRejected as exc:
        return "refused " + answer_of(exc)
    return json.dumps({"played": len(produced), "stop": stop and stop.to_json()})


def mentions(text: str, token: str) -> bool:
    """Whether ``token`` (a card, a tile, some dice) is written in ``text`` as itself."""
    return re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", text) is not None


def dice_tokens(outcomes: list[list[str]], after: list[str]) -> set[str]:
    """Rolled dice as a refusal would list them: in a row, and as the dice on the table."""
    tokens = {", ".join(after)} if len(after) > 1 else set()
    for part in outcomes:
        for outcome in part:
            label, *faces = outcome.split()
            if label in ("roll", "reroll") and len(faces) > 1:
                tokens |= {", ".join(faces), " ".join(faces)}
    return tokens


def drawn_tokens(outcomes: list[list[str]]) -> set[str]:
    """The tiles and cards chance gave (Great Race outcomes ``tile``, ``card``, ``deal``)."""
    return {outcome.split()[1] for part in outcomes for outcome in part
            if outcome.split()[0] in ("tile", "card", "deal", "steal")}


def titan_follow_ups(trial: Any) -> list[str]:
    """Inputs to send after one that met chance: an answer to what chance gave (the first
    option then), a die that is not on the table, and an input that never answers a pick."""
    absent = [c for c in COLOURS if c not in trial.state.dice]
    return [*trial.options()[:1], f"pick {absent[0]}" if absent else "pick red", "start A1"]


def great_follow_ups(trial: Any) -> list[str]:
    """Inputs to send after one that met chance: an answer to what chance gave (the first
    option then), a tile not drawn, a card not dealt or not held, an input of the wrong kind."""
    st = trial.state
    tile = next(code for code in TILES if code not in st.drawn)
    card = next(name for name in CARDS if name not in st.market
                and all(name not in crew.hand for crew in st.crews.values()))
    follow = [*trial.options()[:1], f"place {tile} D12", f"take {card}", f"discard {card}"]
    options = trial.options()
    follow.append("fund" if "fund" not in options else "stop")
    return follow


@dataclass
class Sweep:
    """What a sweep tried: how many chains stopped at chance, and how many were compared with
    the same chain in twins dealt anew."""

    stopped: int = 0
    compared: int = 0


def try_chains(rules: Ruleset, game: Any, seat: int, follow_ups: Callable[[Any], list[str]],
               sweep: Sweep, rnd: random.Random) -> None:
    """For each of ``seat``'s options that meets chance, chains that go on after it: each is
    played up to and including that option and no further, and ends the same way (the same
    answer, word for word) in twins where chance would give something else."""
    for option in rules.options(game, seat):
        trial = copy_of(rules, game)
        outcomes = rules.apply(trial, option, seat)
        if not any(outcomes) and not rules.reveals_hidden(game, trial):
            continue
        for follow in follow_ups(trial):
            chain = f"{option}; {follow}"
            answer = ending(rules, game, chain, seat)
            assert json.loads(answer) == {"played": 1, "stop": {
                "played": option, "rest": follow, "reason": "chance", "note": (
                    f"'{option}' met chance or what the others keep hidden, so your inputs "
                    f"stopped there; not played: '{follow}'. Send it again once you have seen "
                    "the game, if you still want it")}}, (chain, answer)
            sweep.stopped += 1
            for _ in range(2):
                dealt = rerandomised(rules.dump(game), rnd)
                if dealt is None:
                    break
                sweep.compared += 1
                assert ending(rules, rules.load(dealt), chain, seat) == answer, chain


@pytest.mark.parametrize("variant,seats", [("standard", 3), ("two-player", 2)])
def test_titan_race_chains_stop_at_chance(variant: str, seats: int) -> None:
    rules = TITAN_RACE
    sweep = Sweep()
    rnd = random.Random(1)
    for seed in range(12 if variant == "standard" else 8):
        state, _ = rules.start(variant=variant, setup={"circuits": ["kaldheira"]},
                               dealing=dealt(seed), seats=[SeatSetup(i) for i in range(seats)])
        game = rules.load(state)
        for _ in range(60):
            to_act = rules.to_act(game)
            if not to_act:
                break
            try_chains(rules, game, to_act[0], titan_follow_ups, sweep, rnd)
            rules.apply(game, rules.bot_move(game))
    assert sweep.stopped > 50 and sweep.compared > 50, sweep


def test_great_race_chains_stop_at_chance() -> None:
    rules = GREAT_RACE
    sweep = Sweep()
    rnd = random.Random(2)
    for seed in range(8):
        state, _ = rules.start(variant="standard", setup={"start": "alger"}, dealing=dealt(seed),
                               seats=[SeatSetup(i) for i in range(3)])
        game = rules.load(state)
        for _ in range(120):
            to_act = rules.to_act(game)
            if not to_act:
                break
            if rules.simultaneous(game):
                plans = [rules.own_input(game, seat, rules.bot_move(game, seat))
                         for seat in to_act]
                rules.apply(game, "; ".join(plans))
                continue
            try_chains(rules, game, to_act[0], great_follow_ups, sweep, rnd)
            rules.apply(game, rules.bot_move(game))
    assert sweep.stopped > 50 and sweep.compared > 50, sweep


def test_a_chain_refused_before_any_chance_lists_the_first_options() -> None:
    """A chain whose second input is illegal, with nothing chance gave in between, is refused
    whole, with the legal options at its first input (the sender could see them)."""
    rules = TITAN_RACE
    state, _ = rules.start(variant="standard", setup={"circuits": ["kaldheira"]},
                           dealing=dealt(3), seats=[SeatSetup(i) for i in range(3)])
    game = rules.load(state)
    seat = rules.to_act(game)[0]
    first = rules.options(game, seat)
    pick = first[0]
    refused = refusal(rules, game, f"{pick}; pick {pick.split()[1]}", seat)
    assert refused is not None and refused.index == 1 and refused.legal == first


# ---------------------------------------------------------------------- a served app


@dataclass
class Site:
    url: str
    app: Any

    @property
    def service(self) -> GameService:
        svc: GameService = self.app.extensions["titanpost.service"]
        return svc


@pytest.fixture
def site(migrated_database_url: str) -> Iterator[Site]:
    """The app served over HTTP in a thread (for the command line), on a fresh database of
    each kind; its test clients for the API and the pages."""
    app = create_app(Settings.from_env(base_env(migrated_database_url)))
    app.config["TESTING"] = True
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = serve_in_thread(server, "chains-site")
    try:
        yield Site(f"http://127.0.0.1:{server.port}", app)
    finally:
        server.shutdown()
        thread.join(timeout=10)
        app.extensions["titanpost.service"].engine.dispose()


@dataclass
class Player:
    """Ann at seat 0 (the computer plays the others): her token, her browser, her command
    line."""

    site: Site
    uid: str
    token: str
    browser: FlaskClient
    cli: Cli

    @property
    def service(self) -> GameService:
        return self.site.service

    def state(self) -> dict[str, Any]:
        response = self.site.app.test_client().get(f"/api/games/{self.uid}",
                                                   headers=bearer(self.token))
        assert response.status_code == 200, response.get_json()
        body: dict[str, Any] = response.get_json()
        return body

    def game(self) -> Any:
        """The server's engine state of the game (a copy)."""
        with self.service.session() as s:
            loaded = self.service.load(s, self.uid)
            return copy_of(loaded.rules, loaded.state)

    def submit(self, text: str, seq: int | None = None) -> tuple[int, dict[str, Any]]:
        response = self.site.app.test_client().post(
            f"/api/games/{self.uid}/moves", headers=bearer(self.token),
            json={"expected_seq": self.state()["seq"] if seq is None else seq, "input": text})
        body: dict[str, Any] = response.get_json()
        return response.status_code, body

    def page(self) -> str:
        response = self.browser.get(f"/games/{self.uid}")
        assert response.status_code == 200, response.text
        return unescape(response.get_data(as_text=True))


def seat_ann(site: Site, tmp_path: Path, *, rules_name: str, seed: int, variant: str = "standard",
             seats: int = 3, language: str = "en") -> Player:
    svc = site.service
    created = svc.create_game(
        seats=[{"email": "ann@example.com", "name": "Ann", "language": language}]
        + [{"bot": True}] * (seats - 1),
        seed=seed, rules_name=rules_name, variant=variant,
        circuits=["alger"] if rules_name == "great-race" else None, name="Chains")
    uid = created["game"]
    accepted = site.app.test_client().post(
        "/api/invitations/accept", json={"invite_token": created["invitations"][0]["invite_token"]})
    assert accepted.status_code == 201, accepted.get_json()
    token = accepted.get_json()["api_token"]
    svc.start(uid, created["creator_token"])
    browser = site.app.test_client()
    with browser.session_transaction() as sess:
        store_seat(sess, uid, ANN, svc.link_seat(uid, ANN).secret)
    cli = Cli(tmp_path / f"cli-{uid[:8]}")
    cli("login", site.url, "--token", token)
    return Player(site, uid, token, browser, cli)


CHANNELS = ("api", "page", "cli")


def send_through(ann: Player, channel: str, chain: str) -> str:
    """Ann sends ``chain`` through ``channel``; what that channel answers her, as text."""
    seq = ann.state()["seq"]
    if channel == "api":
        status, body = ann.submit(chain, seq)
        assert status == 200, body
        return json.dumps(body)
    if channel == "page":
        token = CSRF.search(ann.page())
        assert token, "no form on the game page"
        posted = ann.browser.post(f"/games/{ann.uid}/move", data={
            "csrf_token": token.group(1), "seq": str(seq), "text": chain})
        assert posted.status_code == 303, posted.text
        return ann.page()
    return str(ann.cli("play", ann.uid, chain).output)


def chance_chain(ann: Player, rules: Ruleset, follow: Callable[[Any], list[str]],
                 wanted: Callable[[list[list[str]]], bool]) -> tuple[str, str] | None:
    """An option of Ann's now that meets chance as ``wanted``, and an input to send after it
    (the first the follow-ups offer): (the option, the follow-up)."""
    game = ann.game()
    if rules.to_act(game) != [ANN]:
        return None
    for option in rules.options(game, ANN):
        trial = copy_of(rules, game)
        if wanted(rules.apply(trial, option, ANN)):
            return option, follow(trial)[-1]
    return None


def play_on(ann: Player, rules: Ruleset) -> bool:
    """Ann answers as the computer would; False once the game is over."""
    game = ann.game()
    if ANN not in rules.to_act(game):
        assert not rules.to_act(game), "the computer left a decision unanswered"
        return False
    status, body = ann.submit(rules.bot_move(game, ANN))
    assert status == 200, body
    return True


def try_through_every_channel(ann: Player, rules: Ruleset, follow: Callable[[Any], list[str]],
                              kinds: dict[str, Callable[[list[list[str]]], bool]],
                              steps: int) -> set[tuple[str, str]]:
    """Ann plays on; whenever one of her options meets a kind of chance, she sends it with an
    input after it, through the next channel in turn: the option alone is played (one log
    entry of hers), and the answer says the rest was not played. The (kind, channel) pairs
    tried."""
    tried: set[tuple[str, str]] = set()
    for _ in range(steps):
        kinds_done = {kind for kind, _ in tried}
        channels_done = {channel for _, channel in tried}
        if kinds_done == set(kinds) and channels_done == set(CHANNELS):
            break
        for kind, wanted in kinds.items():
            found = chance_chain(ann, rules, follow, wanted)
            if found is None or (kind in kinds_done and len(channels_done) == len(CHANNELS)):
                continue
            option, then = found
            channel = next((c for c in CHANNELS if c not in channels_done), CHANNELS[0])
            seq = ann.state()["seq"]
            answer = unescape(send_through(ann, channel, f"{option}; {then}"))
            played = ann.service.export(ann.uid)["moves"][seq]
            assert played["input"] == option and played["seat"] == ANN, played
            assert f"not played: '{then}'" in answer, (channel, answer[-3000:])
            tried.add((kind, channel))
            break
        else:
            if not play_on(ann, rules):
                break
    return tried


def rolled(outcomes: list[list[str]]) -> bool:
    return any(o.split()[0] in ("roll", "reroll") and len(o.split()) > 2
               for part in outcomes for o in part)


def test_every_channel_stops_a_chain_at_the_dice(site: Site, tmp_path: Path) -> None:
    ann = seat_ann(site, tmp_path, rules_name="titan-race", seed=3)
    tried = try_through_every_channel(ann, TITAN_RACE, titan_follow_ups, {"dice": rolled},
                                      steps=80)
    assert {channel for _, channel in tried} == set(CHANNELS), tried


def drew(kind: str) -> Callable[[list[list[str]]], bool]:
    def wanted(outcomes: list[list[str]]) -> bool:
        return any(o.split()[0] == kind for part in outcomes for o in part)
    return wanted


def test_every_channel_stops_a_chain_at_tiles_and_cards(site: Site, tmp_path: Path) -> None:
    ann = seat_ann(site, tmp_path, rules_name="great-race", seed=7)
    tried = try_through_every_channel(
        ann, GREAT_RACE, great_follow_ups,
        {"tiles": drew("tile"), "cards": drew("card"), "market": drew("deal")}, steps=150)
    assert {kind for kind, _ in tried} == {"tiles", "cards", "market"}, tried
    assert {channel for _, channel in tried} == set(CHANNELS), tried


# ---------------------------------------------------------------------- whose inputs


def observe(api: Api, uid: str, tokens: dict[int, str]) -> dict[str, Any]:
    """Everything a refused chain must leave as it was (sealed answers included)."""
    return {
        "log": api.log(uid),
        "states": {p: api.state(uid, t) for p, t in tokens.items()},
        "rows": api.rows("SELECT game_id, seq, seat, input FROM moves ORDER BY 1, 2"),
        "sealed": api.rows("SELECT game_id, decision_seq, seat, input FROM sealed_orders "
                           "ORDER BY 1, 2, 3"),
    }


def own_turn(rules: Ruleset, game: Any, seat: int) -> tuple[list[str], str]:
    """The inputs of ``seat``'s turn from now (its first options) and the first input of the
    seat whose decision comes next."""
    trial = copy_of(rules, game)
    parts = []
    while rules.to_act(trial) == [seat]:
        parts.append(rules.options(trial, seat)[0])
        rules.apply(trial, parts[-1])
    nxt = rules.to_act(trial)
    assert nxt and nxt != [seat], nxt
    return parts, rules.options(trial, nxt[0])[0]


def engine_state(api: Api, uid: str) -> Any:
    with api.service.session() as s:
        loaded = api.service.load(s, uid)
        return copy_of(loaded.rules, loaded.state)


def test_a_chain_reaching_another_seats_decision_stops_there(api: Api) -> None:
    table = api.accept_all(api.create([{"email": f"{who}@example.com", "language": "pl"}
                                       for who in ("ann", "bob", "cyd")]))
    api.start(table)
    ann, _ = api.actor(table)
    parts, theirs = own_turn(TITAN_RACE, engine_state(api, table.uid), ann)
    assert len(parts) >= 2  # a pick, a start or a move, an end...
    before = observe(api, table.uid, table.tokens)
    seq = before["states"][ann]["seq"]

    # a refused input before the stop changes nothing
    status, body = api.submit(table, ann, seq, "; ".join([parts[0], "start Z9", *parts[1:]]))
    assert status == 422 and body["index"] == 1, body
    assert observe(api, table.uid, table.tokens) == before

    # Ann's page, in her language (Polish): her own inputs are played, the other's are not
    browser = api.app.test_client()
    with browser.session_transaction() as sess:
        store_seat(sess, table.uid, ann, api.service.link_seat(table.uid, ann).secret)
    page = unescape(browser.get(f"/games/{table.uid}").get_data(as_text=True))
    token = CSRF.search(page)
    assert token
    posted = browser.post(f"/games/{table.uid}/move", data={
        "csrf_token": token.group(1), "seq": str(seq), "text": "; ".join([*parts, theirs])})
    assert posted.status_code == 303
    shown = unescape(browser.get(f"/games/{table.uid}").get_data(as_text=True))
    assert f"decyzja należy do innego gracza, więc Twoje ruchy zatrzymały się tam; niezagrane: " \
           f"„{theirs}”" in shown
    log = api.log(table.uid)
    assert len(log) == len(before["log"]) + 1
    assert log[-1]["seat"] == ann and log[-1]["input"] == "; ".join(parts)
    after = engine_state(api, table.uid)
    assert TITAN_RACE.to_act(after) != [ann]
    assert theirs in TITAN_RACE.options(after, TITAN_RACE.to_act(after)[0])

    # the same chain sent again (a retry) is told it was played
    status, body = api.submit(table, ann, seq, "; ".join([*parts, theirs]))
    assert status == 200 and body["already_applied"], body


def great_race(api: Api, seats: list[dict[str, Any]], seed: int) -> tuple[str, dict[int, str]]:
    svc = api.service
    created = svc.create_game(seats=seats, seed=seed, rules_name="great-race",
                              circuits=["alger"], name="Chains")
    tokens = {inv["position"]: svc.accept(inv["invite_token"])["api_token"]
              for inv in created["invitations"]}
    svc.start(created["game"], created["creator_token"])
    return created["game"], tokens


def test_great_race_chains_stop_at_another_crews_and_at_secret_decisions(api: Api) -> None:
    uid, tokens = great_race(api, [{"email": "ann@example.com"}, {"bot": True}, {"bot": True}],
                             seed=3)
    rules = GREAT_RACE
    svc = api.service

    def send(text: str) -> tuple[int, dict[str, Any]]:
        seq = svc.state(uid, ANN)["seq"]
        response = api.client.post(f"/api/games/{uid}/moves", headers=bearer(tokens[ANN]),
                                   json={"expected_seq": seq, "input": text})
        body: dict[str, Any] = response.get_json()
        return response.status_code, body

    # The first bivouac: Ann takes a card last, then every crew plans in secret.
    game = engine_state(api, uid)
    assert rules.to_act(game) == [ANN] and rules.pending(game)["kind"] == "take"
    take = rules.options(game, ANN)[0]
    trial = copy_of(rules, game)
    rules.apply(trial, take)
    assert rules.simultaneous(trial)
    plan = rules.bot_move(trial, ANN)
    status, body = send(f"{take}; {plan}")
    assert status == 200, body
    assert body["unplayed"] == {"played": take, "rest": plan, "reason": "secret", "note": (
        f"after '{take}' every player answers at once and in secret, so your inputs stopped "
        f"there; not played: '{plan}': send your answer on its own")}, body

    # A plan joined to anything else is not sealed.
    before = observe(api, uid, tokens)
    status, body = send(f"{plan}; fund")
    assert status == 422 and body["index"] == 1, body
    assert "a secret answer is sent on its own" in body["error"]
    assert observe(api, uid, tokens) == before
    status, body = send(plan)
    assert status == 200 and body["applied"], body

    # Convoy: Ann's action (a draw, when she may), then the next crew's (the computer's) first
    # input, as one chain: Ann's part is played, the other's is not.
    for _ in range(100):
        game = engine_state(api, uid)
        if rules.to_act(game) == [ANN]:
            found = handing_on(rules, game, ANN)
            if found is not None:
                break
        assert send(rules.bot_move(game, ANN))[0] == 200
    else:
        pytest.fail("Ann never ended an action before another crew's decision")
    option, theirs = found
    seq = svc.state(uid, ANN)["seq"]
    status, body = send(f"{option}; {theirs}")
    assert status == 200, body
    assert body["unplayed"]["played"] == option and body["unplayed"]["rest"] == theirs, body
    assert body["unplayed"]["reason"] == ("chance" if found_chance(rules, game, option)
                                          else "turn"), body
    assert api.log(uid)[seq]["input"] == option


def handing_on(rules: Ruleset, game: Any, seat: int) -> tuple[str, str] | None:
    """An option of ``seat``'s after which another seat decides alone (a draw first), and
    that seat's first option then."""
    options = rules.options(game, seat)
    for option in sorted(options, key=lambda o: o != "draw"):
        trial = copy_of(rules, game)
        rules.apply(trial, option, seat)
        after = rules.to_act(trial)
        if len(after) == 1 and after != [seat] and not rules.simultaneous(trial):
            return option, rules.options(trial, after[0])[0]
    return None


def found_chance(rules: Ruleset, game: Any, option: str) -> bool:
    trial = copy_of(rules, game)
    return any(rules.apply(trial, option)) or rules.reveals_hidden(game, trial)


# ---------------------------------------------------------------------- a plan sent again


def test_the_same_plan_sent_again_after_the_reveal_is_already_applied(api: Api) -> None:
    seats = [{"email": f"{who}@example.com"} for who in ("ann", "bob", "cyd")]
    uid, tokens = great_race(api, seats, seed=3)
    rules = GREAT_RACE
    svc = api.service

    def send(position: int, seq: int, text: str) -> tuple[int, dict[str, Any]]:
        response = api.client.post(f"/api/games/{uid}/moves", headers=bearer(tokens[position]),
                                   json={"expected_seq": seq, "input": text})
        body: dict[str, Any] = response.get_json()
        return response.status_code, body

    for _ in range(10):  # the bivouac's takes, to the first planning
        game = engine_state(api, uid)
        if rules.simultaneous(game):
            break
        seat = rules.to_act(game)[0]
        assert send(seat, svc.state(uid, seat)["seq"], rules.bot_move(game, seat))[0] == 200
    game = engine_state(api, uid)
    assert rules.simultaneous(game)
    seq = svc.state(uid, ANN)["seq"]
    plans = {seat: rules.bot_move(game, seat) for seat in (0, 1, 2)}
    for seat in (0, 1):
        status, body = send(seat, seq, plans[seat])
        assert status == 200 and body["sealed"], body
    status, body = send(0, seq, plans[0])  # sealed, not yet revealed: already applied
    assert status == 200 and body["already_applied"], body
    status, body = send(2, seq, plans[2])  # the last plan: the reveal
    assert status == 200 and body["seq"] > seq, body
    revealed = api.log(uid)[seq]
    assert revealed["seat"] is None and plans[0] in revealed["input"]
    before = observe(api, uid, tokens)

    for seat in (0, 2):  # one plan sealed before, the one that revealed
        status, body = send(seat, seq, plans[seat])
        assert status == 200, body
        assert body["already_applied"] is True and body["applied_seq"] == seq + 1, body
    words = plans[1].split()  # "plan belgian P2 ..." written without the crew's name
    status, body = send(1, seq, " ".join([words[0], *words[2:]]))
    assert status == 200 and body["already_applied"] is True, body
    other = next(p for p in rules.options(game, 0) if p != plans[0])
    status, body = send(0, seq, other)
    assert status == 409, body
    assert body["error"].startswith("the game moved on: the answers to that decision have been "
                                    "revealed")
    assert observe(api, uid, tokens) == before
