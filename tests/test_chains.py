"""A seat's chain of inputs (``a; b; c``, played all together or not at all) is fair play.

1. Every input of a chain must answer a decision of the sender's own: a chain that reaches
   another seat's decision, or a decision every seat answers in secret, is refused whole and
   changes nothing (no log entry, the same state, no sealed answer).
2. A refused chain tells only what the sender could know: the legal options at its first input,
   and for a later input a reason that names nothing chance gave to the inputs before it (the
   dice rolled, the tiles and cards drawn). This is tried over many seeds with the rules alone,
   and through the API, the game page, its preview and the command line against a served app.
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
from app.config import Settings
from app.games import ruleset
from app.games.base import MoveRejected, Ruleset, SeatSetup
from app.games.greatrace.engine.pieces import CARDS, TILES
from app.games.rng import Dealing, KeyedRng
from app.games.titanrace.engine.cards import COLOURS
from app.service import GameService
from app.web import store_seat
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
    """Inputs to send after one that met chance: a die that is not on the table, and an input
    that never answers a pick."""
    absent = [c for c in COLOURS if c not in trial.state.dice]
    return [f"pick {absent[0]}" if absent else "pick red", "start A1"]


def great_follow_ups(trial: Any) -> list[str]:
    """Inputs to send after one that met chance: a tile not drawn, a card not dealt or not
    held, and an input of the wrong kind."""
    st = trial.state
    tile = next(code for code in TILES if code not in st.drawn)
    card = next(name for name in CARDS if name not in st.market
                and all(name not in crew.hand for crew in st.crews.values()))
    follow = [f"place {tile} D12", f"take {card}", f"discard {card}"]
    options = trial.options()
    follow.append("fund" if "fund" not in options else "stop")
    return follow


@dataclass
class Sweep:
    """What a sweep tried: how many refused chains, and of which hidden things."""

    refused: int = 0
    checked_tokens: int = 0
    compared: int = 0


def try_chains(rules: Ruleset, game: Any, seat: int, follow_ups: Callable[[Any], list[str]],
               tokens: Callable[[Any, list[list[str]]], set[str]], sweep: Sweep,
               rnd: random.Random) -> None:
    """For each of ``seat``'s options that meets chance, chains that go on after it and are
    refused: none may tell what chance gave, and each is refused the same whatever chance
    would give."""
    before = json.dumps(rules.view(game, seat, False))
    for option in rules.options(game, seat):
        trial = copy_of(rules, game)
        outcomes = rules.apply(trial, option, seat)
        if not any(outcomes) and len(trial.state.deck) == len(game.state.deck):
            continue  # (a card drawn in Titan Race is in no outcome)
        hidden = {t for t in tokens(trial, outcomes) if not mentions(before, t)}
        chains = [f"{option}; {follow}" for follow in follow_ups(trial)]
        if rules.to_act(trial) == [seat] and not rules.simultaneous(trial):
            # an input that answers what chance gave here, then one that fails
            chains.append(f"{option}; {rules.options(trial, seat)[0]}; {follow_ups(trial)[-1]}")
        for chain in chains:
            refused = refusal(rules, game, chain, seat)
            if refused is None:
                continue
            sweep.refused += 1
            answer = answer_of(refused)
            leaked = sorted(t for t in hidden if mentions(answer, t) and t not in chain)
            assert not leaked, (chain, leaked, answer)
            assert refused.index == 1 and refused.legal == rules.options(game, seat), answer
            assert refused.message.startswith("the inputs from part 2 ("), answer
            sweep.checked_tokens += len(hidden)
            for _ in range(2):
                dealt = rerandomised(rules.dump(game), rnd)
                if dealt is None:
                    break
                again = refusal(rules, rules.load(dealt), chain, seat)
                if again is not None:  # (played there: chance gave what the chain needed)
                    sweep.compared += 1
                    assert answer_of(again) == answer, (chain, answer_of(again), answer)


def titan_tokens(trial: Any, outcomes: list[list[str]]) -> set[str]:
    return dice_tokens(outcomes, list(trial.state.dice)) | drawn_tokens(outcomes)


def great_tokens(trial: Any, outcomes: list[list[str]]) -> set[str]:
    return drawn_tokens(outcomes)


@pytest.mark.parametrize("variant,seats", [("standard", 3), ("two-player", 2)])
def test_refused_titan_race_chains_tell_no_dice(variant: str, seats: int) -> None:
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
            try_chains(rules, game, to_act[0], titan_follow_ups, titan_tokens, sweep, rnd)
            rules.apply(game, rules.bot_move(game))
    assert sweep.refused > 50 and sweep.checked_tokens > 20 and sweep.compared > 50, sweep


def test_refused_great_race_chains_tell_no_tiles_or_cards() -> None:
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
            try_chains(rules, game, to_act[0], great_follow_ups, great_tokens, sweep, rnd)
            rules.apply(game, rules.bot_move(game))
    assert sweep.refused > 50 and sweep.checked_tokens > 20 and sweep.compared > 50, sweep


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


def everything_before(ann: Player) -> dict[str, str]:
    """What Ann sees before she sends a chain, per channel."""
    state = json.dumps(ann.state())
    page = ann.page()
    shown = ann.cli("show", ann.uid).output + ann.cli("options", ann.uid, "--all").output
    return {"api": state, "page": page, "preview": page, "cli": shown}


def everything_refused(ann: Player, chain: str) -> dict[str, str]:
    """Every answer Ann gets to a refused chain: the API's, the game page's, the page's
    preview of it, the command line's."""
    seq = ann.state()["seq"]
    status, body = ann.submit(chain, seq)
    assert status == 422, body
    page = ann.page()
    token = CSRF.search(page)
    assert token, "no form on the game page"
    posted = ann.browser.post(f"/games/{ann.uid}/move",
                              data={"csrf_token": token.group(1), "seq": str(seq), "text": chain})
    assert posted.status_code == 422, posted.text
    preview = ann.browser.get(f"/games/{ann.uid}/preview",
                              query_string={"option": chain, "seq": str(seq)})
    assert preview.status_code == 422, preview.text
    played = ann.cli("play", ann.uid, chain, code=1)
    return {"api": json.dumps(body), "page": unescape(posted.get_data(as_text=True)),
            "preview": unescape(preview.get_data(as_text=True)), "cli": played.output}


def leaks(before: dict[str, str], answers: dict[str, str], hidden: set[str],
          chain: str) -> dict[str, list[str]]:
    """The hidden things a channel's answer names that the channel had not shown before."""
    found = {}
    for channel, answer in answers.items():
        named = sorted(t for t in hidden if mentions(answer, t)
                       and not mentions(before[channel], t) and not mentions(chain, t))
        if named:
            found[channel] = named
    return found


def chance_chain(ann: Player, rules: Ruleset, follow: Callable[[Any], list[str]],
                 wanted: Callable[[list[list[str]]], bool]) -> tuple[str, str] | None:
    """An option of Ann's now that meets chance as ``wanted``, and a chain going on after it
    that is refused: (the option, the chain)."""
    game = ann.game()
    if rules.to_act(game) != [ANN]:
        return None
    for option in rules.options(game, ANN):
        trial = copy_of(rules, game)
        outcomes = rules.apply(trial, option, ANN)
        if not wanted(outcomes):
            continue
        for then in follow(trial):
            chain = f"{option}; {then}"
            if refusal(rules, game, chain, ANN) is not None:
                return option, chain
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
                              tokens: Callable[[Any, list[list[str]]], set[str]],
                              steps: int) -> set[str]:
    """Ann plays on; once for each kind of chance, she first sends a chain that goes on after
    it and is refused, then the option alone: whatever the option then gives must not be
    named by any answer to the chain. The kinds tried."""
    tried: set[str] = set()
    for _ in range(steps):
        if len(tried) == len(kinds):
            break
        for kind, wanted in kinds.items():
            found = None if kind in tried else chance_chain(ann, rules, follow, wanted)
            if found is None:
                continue
            option, chain = found
            before = everything_before(ann)
            seq = ann.state()["seq"]
            answers = everything_refused(ann, chain)
            assert ann.state()["seq"] == seq, "a refused chain changed the game"
            status, body = ann.submit(option, seq)
            assert status == 200, body
            played = ann.service.export(ann.uid)["moves"][seq]
            assert played["input"] == option and played["seat"] == ANN, played
            hidden = tokens(ann.game(), played["outcomes"])
            assert hidden, (option, played)
            assert leaks(before, answers, hidden, chain) == {}, (chain, played["outcomes"])
            tried.add(kind)
            break
        else:
            if not play_on(ann, rules):
                break
    return tried


def rolled(outcomes: list[list[str]]) -> bool:
    return any(o.split()[0] in ("roll", "reroll") and len(o.split()) > 2
               for part in outcomes for o in part)


def titan_after(game: Any, outcomes: list[list[str]]) -> set[str]:
    return dice_tokens(outcomes, list(game.state.dice))


def test_no_channel_tells_the_dice_of_a_refused_chain(site: Site, tmp_path: Path) -> None:
    ann = seat_ann(site, tmp_path, rules_name="titan-race", seed=3)
    tried = try_through_every_channel(ann, TITAN_RACE, titan_follow_ups, {"dice": rolled},
                                      titan_after, steps=40)
    assert tried == {"dice"}


def drew(kind: str) -> Callable[[list[list[str]]], bool]:
    def wanted(outcomes: list[list[str]]) -> bool:
        return any(o.split()[0] == kind for part in outcomes for o in part)
    return wanted


def test_no_channel_tells_the_tiles_or_cards_of_a_refused_chain(site: Site,
                                                                  tmp_path: Path) -> None:
    ann = seat_ann(site, tmp_path, rules_name="great-race", seed=4)
    tried = try_through_every_channel(
        ann, GREAT_RACE, great_follow_ups,
        {"tiles": drew("tile"), "cards": drew("card"), "market": drew("deal")},
        great_tokens, steps=150)
    assert tried == {"tiles", "cards", "market"}


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


def test_a_chain_reaching_another_seats_decision_is_refused_whole(api: Api) -> None:
    table = api.accept_all(api.create([{"email": f"{who}@example.com", "language": "pl"}
                                       for who in ("ann", "bob", "cyd")]))
    api.start(table)
    ann, _ = api.actor(table)
    parts, theirs = own_turn(TITAN_RACE, engine_state(api, table.uid), ann)
    assert len(parts) >= 2  # a pick, a start or a move, an end...
    before = observe(api, table.uid, table.tokens)
    seq = before["states"][ann]["seq"]
    first = api.options(table, ann)["options"]

    status, body = api.submit(table, ann, seq, "; ".join([*parts, theirs]))
    assert status == 422, body
    number = len(parts) + 1
    assert body["error"] == (f"part {number} ('{theirs}') is not your decision: after part "
                             f"{number - 1} the decision is another player's. Nothing was "
                             "played: send only the inputs of your own decisions")
    assert body["index"] == len(parts) and body["legal"] == first
    assert observe(api, table.uid, table.tokens) == before

    # Ann's page says so in her language (Polish), and changes nothing either
    browser = api.app.test_client()
    with browser.session_transaction() as sess:
        store_seat(sess, table.uid, ann, api.service.link_seat(table.uid, ann).secret)
    page = unescape(browser.get(f"/games/{table.uid}").get_data(as_text=True))
    token = CSRF.search(page)
    assert token
    posted = browser.post(f"/games/{table.uid}/move", data={
        "csrf_token": token.group(1), "seq": str(seq), "text": "; ".join([*parts, theirs])})
    assert posted.status_code == 422
    assert (f"krok {number} („{theirs}”) nie jest Twoją decyzją"
            in unescape(posted.get_data(as_text=True)))
    assert observe(api, table.uid, table.tokens) == before

    # her own inputs alone are one entry of hers; the next seat still has its decision
    status, body = api.submit(table, ann, seq, "; ".join(parts))
    assert status == 200 and body["applied"], body
    log = api.log(table.uid)
    assert len(log) == len(before["log"]) + 1
    assert log[-1]["seat"] == ann and log[-1]["input"] == "; ".join(parts)
    after = engine_state(api, table.uid)
    assert TITAN_RACE.to_act(after) != [ann]
    assert theirs in TITAN_RACE.options(after, TITAN_RACE.to_act(after)[0])


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
    before = observe(api, uid, tokens)
    status, body = send(f"{take}; {plan}")
    assert status == 422, body
    assert body["error"].startswith(f"part 2 ('{plan}') answers a decision that every player "
                                    "answers at once and in secret")
    assert body["index"] == 1 and body["legal"] == rules.options(game, ANN)
    assert observe(api, uid, tokens) == before
    status, body = send(take)
    assert status == 200, body

    # A plan joined to anything else is not sealed.
    before = observe(api, uid, tokens)
    status, body = send(f"{plan}; fund")
    assert status == 422 and body["index"] == 1, body
    assert "a secret answer is sent on its own" in body["error"]
    assert observe(api, uid, tokens) == before
    status, body = send(plan)
    assert status == 200 and body["applied"], body

    # Convoy: Ann's action (a draw, when she may), then the next crew's (the computer's) first
    # input, as one chain.
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
    before = observe(api, uid, tokens)
    status, body = send(f"{option}; {theirs}")
    assert status == 422, body
    assert body["index"] == 1 and body["legal"] == rules.options(game, ANN), body
    assert body["error"] == (
        f"part 2 ('{theirs}') is not your decision: after part 1 the decision is another "
        "player's. Nothing was played: send only the inputs of your own decisions"
        if not found_chance(rules, game, option) else
        f"the inputs from part 2 ('{theirs}') on could not all be applied after the random "
        "outcomes of part 1 (one was not a legal answer then, or not your decision). Nothing "
        "was played: send the inputs up to part 1 first, and the rest once you have seen what "
        "chance gave")
    assert observe(api, uid, tokens) == before


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
    return any(rules.apply(trial, option)) or len(trial.state.deck) != len(game.state.deck)


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
