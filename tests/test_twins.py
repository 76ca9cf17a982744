"""Twin games: two games that differ only in what the rules hide (a card in Bob's hand and the
deck, or the dice still to be rolled, in Titan Race; the cards and tiles still face down in The
Great Race) look byte-identical, on every channel, to everyone who cannot see the difference,
until the rules show it.

Each twin is one game of a database of its own (SQLite, then PostgreSQL), served by an app of
its own with the same secret key, made the same way and then given the same id, seat secrets and
API tokens: so every answer, page, preview, mail, link page, push and webhook payload can be
compared as text. Masked before comparing: the times the server stamps (the log's entries, the
mails' dates), the forms' CSRF tokens and the pages' script nonces (a browser session's own), the
timed signatures in links (whose pages are fetched and compared themselves), and the digest of
the log's head (a commitment to the log, hidden parts included, that tells nothing of them).

For each viewer (Ann, Cyd, a spectator; Bob is the one whose hand differs) the test compares,
before the first input and after each: the API's state, options and log; the game page with the
options, their previews and the preview pictures of the viewer's decision; every mail the
viewer was sent, rendered; the page behind every option link of the newest; the push and webhook
payloads queued. A viewer is compared until the rules show it the difference (a random outcome
that differs, a card face up that differs, a card it draws itself). Bob also writes a private
note (app/features/notes/) before each comparison in the first twin only, pinned to the newest
entry: nothing any other viewer sees may change with it.

A second test sends chains that stop at chance (a card drawn) through the API, the game page's
form, the command line and a reply mail: the answers are the same in twins whose decks differ.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from email.message import EmailMessage
from html import unescape
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient
from sqlmodel import select
from werkzeug.serving import make_server

from app import create_app
from app.core.config import Settings
from app.core.models import ApiToken, Game, OutboxMail, PushSubscription, Seat
from app.features.webhooks.hooks import add_webhook
from app.games.titanrace.engine.cards import CARDS
from app.games.titanrace.engine.scenario import load_scenario
from app.mail.addresses import reply_address
from app.mail.inbound import process_inbound
from app.mail.inbound_queue import queue_inbound
from app.mail.render import MailRenderer
from app.service import GameService
from app.service.records import token_hash
from app.web.browser_seats import store_seat
from tests.apifixtures import base_env, bearer
from tests.dbutil import migrated_database
from tests.netutil import serve_in_thread
from tests.test_cli_player import Cli

KEY = "twin-games-secret-key-0123456789abcdef"
DOMAIN = "twins.example"
BASE = "http://twins.example"
UID = "c3" * 16
ANN, BOB, CYD = 0, 1, 2
NAMES = ("ann", "bob", "cyd")
VIEWERS: tuple[int | None, ...] = (ANN, CYD, None)
STEPS = 40

TIMES = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?")
MASKS = (
    (TIMES, "<time>"),
    (re.compile(r'(name="csrf_token"[^>]*value=")[^"]+'), r"\1<csrf>"),
    (re.compile(r'(content=")[^"]+("\s+name="csrf-token")'), r"\1<csrf>\2"),
    (re.compile(r'nonce="[^"]+"'), 'nonce="<nonce>"'),
    (re.compile(r"/(l|g|t|u|i|signin)/[A-Za-z0-9._\-]{20,}"), r"/\1/<token>"),
    (re.compile(r"\b\d{1,2} \w{3,12} \d{4},? \d\d:\d\d\b"), "<date>"),
    (re.compile(r'("digest\\?": \\?")[0-9a-f]{64}'), r"\1<head>"),
)
"""What is masked (see the module's docstring). The log head's digest too: SHA-256 of the
newest hash of the log's chain, which starts at a hash of the dealt state (its key, the deck
and the dice to come among it), so it differs between twins without telling anything of what
differs: a player's client keeps it to check the published log later (docs/fairness.md)."""


def masked(text: str) -> str:
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return text


def people() -> list[dict[str, Any]]:
    return [{"email": f"{who}@example.com", "name": who.title()} for who in NAMES]


def token_of(position: int) -> str:
    return f"twin-api-token-{position}".ljust(43, "x")


@dataclass
class Twin:
    """One of the twins: its app (a served one, for the command line), its game's id fixed."""

    app: Any
    url: str = ""
    browsers: dict[int | None, FlaskClient] = field(default_factory=dict)
    mailed: dict[int, int] = field(default_factory=dict)
    """How many mails of each viewer were compared already (each is compared once, rendered
    when it is new, as the sender renders it)."""

    @property
    def svc(self) -> GameService:
        svc: GameService = self.app.extensions["titanpost.service"]
        return svc

    def browser(self, viewer: int | None) -> FlaskClient:
        if viewer not in self.browsers:
            client = self.app.test_client()
            if viewer is not None:
                with client.session_transaction() as sess:
                    store_seat(sess, UID, viewer, self.svc.link_seat(UID, viewer).secret)
            self.browsers[viewer] = client
        return self.browsers[viewer]

    def api(self, path: str, viewer: int | None) -> str:
        headers = bearer(token_of(viewer)) if viewer is not None else None
        response = self.app.test_client().get(f"/api/games/{UID}{path}", headers=headers)
        return f"{response.status_code} {json.dumps(response.get_json(), sort_keys=True)}"

    def page(self, path: str, viewer: int | None) -> str:
        response = self.browser(viewer).get(path)
        return f"{response.status_code} {response.get_data(as_text=True)}"

    def game_id(self) -> int:
        with self.svc.session() as s:
            game_id = s.exec(select(Game.id).where(Game.uid == UID)).one()
            assert game_id is not None
            return game_id

    def mails(self, viewer: int, *, new: bool = False) -> list[str]:
        """The mails sent to ``viewer``'s address about the game (only those not compared yet
        when ``new``), rendered."""
        renderer = MailRenderer(self.svc)
        with self.svc.session() as s:
            rows = s.exec(select(OutboxMail).where(
                OutboxMail.game_id == self.game_id(),
                OutboxMail.recipient == f"{NAMES[viewer]}@example.com")
                .order_by(OutboxMail.id)).all()
            skip = self.mailed.get(viewer, 0) if new else 0
            shown = []
            for row in rows[skip:]:
                mail = renderer.render(row, always=True, session=s)
                shown.append(f"{row.kind} {row.seq} {mail.subject}\n{mail.text}\n{mail.html}")
        if new:
            self.mailed[viewer] = len(rows)
        return shown

    def links(self, mail: str) -> list[str]:
        """The pages behind the option links of a rendered mail (each fetched without a
        session, as a mail reader opens it)."""
        found = sorted(set(re.findall(rf"{re.escape(BASE)}(/l/[A-Za-z0-9._\-]+)", mail)))
        client = self.app.test_client()
        return [self.page_of(client, path) for path in found]

    @staticmethod
    def page_of(client: FlaskClient, path: str) -> str:
        response = client.get(path)
        return f"{response.status_code} {response.get_data(as_text=True)}"

    def queued(self) -> list[str]:
        """The push and webhook payloads queued for the game, in order."""
        with self.svc.engine.connect() as conn:
            pushes = conn.execute(sa.text(
                "SELECT p.seq, p.payload, s.seat_id, p.next_attempt_at IS NULL FROM push_outbox p "
                "JOIN push_subscriptions s ON s.id = p.subscription_id ORDER BY p.id")).all()
            hooks = conn.execute(sa.text(
                "SELECT payload FROM webhook_outbox ORDER BY id")).all()
        return ([f"push {row[0]} {_json(row[1])} {row[3]}" for row in pushes]
                + [f"hook {_json(row[0])}" for row in hooks])

    def note(self, position: int, text: str) -> None:
        """Seat ``position``'s player writes a private note, pinned to the newest entry."""
        seq = self.svc.state(UID, position)["seq"]
        response = self.app.test_client().post(
            f"/api/games/{UID}/notes", json={"text": text, "seq": seq or None},
            headers=bearer(token_of(position)))
        assert response.status_code == 201, response.get_json()

    def submit(self, position: int, text: str) -> dict[str, Any]:
        seq = self.svc.state(UID, position)["seq"]
        return self.svc.submit(UID, position, seq, text)

    def view(self, position: int | None) -> dict[str, Any]:
        view: dict[str, Any] = self.svc.state(UID, position)["view"]
        return view


def _json(value: Any) -> str:
    data = json.loads(value) if isinstance(value, str) else value
    return json.dumps(data, sort_keys=True)


def twin_app(url: str) -> Twin:
    app = create_app(Settings.from_env(base_env(
        url, TITANPOST_SECRET_KEY=KEY, TITANPOST_MAIL_DOMAIN=DOMAIN, TITANPOST_BASE_URL=BASE,
        TITANPOST_WEBHOOK_ALLOW_PRIVATE="1")))
    app.config["TESTING"] = True
    return Twin(app)


def template(twin: Twin, rules_name: str = "titan-race", seed: int | None = None,
             ) -> dict[str, Any]:
    """The export every twin is imported from: a game made, started and exported on the first
    twin's server (so its dealing, settings and seats are the same in every twin), dealt from
    ``seed`` when given (the admin's: the same deal every run)."""
    svc = twin.svc
    created = svc.create_game(seats=people(), rules_name=rules_name, name="Twins", seed=seed)
    for invitation in created["invitations"]:
        svc.accept(invitation["invite_token"])
    svc.start(created["game"], created["creator_token"])
    return svc.export(created["game"])


def make_twin(twin: Twin, export: dict[str, Any], scenario: dict[str, Any] | None,
              state: dict[str, Any]) -> Twin:
    """The twin's game: ``export`` imported with ``state`` as its start (the position of a
    Titan Race ``scenario``, when given: its circuit and Titans), then given the id, seat
    secrets, API tokens, push subscriptions and webhook every twin gets."""
    svc = twin.svc
    export = json.loads(json.dumps(export))
    export["game"]["initial_state"] = state
    export["moves"] = []
    if scenario is not None:
        export["game"]["setup"] = {"circuits": [scenario["circuit"]]}
        for seat in export["seats"]:
            seat["pieces"] = {"titans": [scenario["titans"][seat["position"]]["titan"]]}
    imported = svc.import_game(export)
    with svc.session(write=True) as s:
        game = s.exec(select(Game).where(Game.uid == imported["game"])).one()
        game.uid = UID
        s.add(game)
        for seat in s.exec(select(Seat).where(Seat.game_id == game.id)).all():
            seat.secret = f"twin-seat-secret-{seat.position}".ljust(40, "x")
            s.add(seat)
            assert seat.id is not None
            s.add(ApiToken(token_hash=token_hash(token_of(seat.position)), seat_id=seat.id))
            if seat.position != BOB:
                s.add(PushSubscription(seat_id=seat.id, p256dh="p" * 87, auth="a" * 22,
                                       endpoint=f"https://push.example/{seat.position}"))
        s.commit()
    svc._states.clear()
    add_webhook(svc, UID, imported["creator_token"], "http://127.0.0.1:9/twins", "json")
    return twin


def everything(twin: Twin, viewer: int | None) -> dict[str, Any]:
    """Every channel's answer to ``viewer``, masked."""
    seen: dict[str, Any] = {
        "api": twin.api("", viewer),
        "options": twin.api("/options", viewer) if viewer is not None else "",
        "log": twin.api("/log", viewer),
        "page": twin.page(f"/games/{UID}", viewer),
        "queued": twin.queued(),
    }
    view = twin.view(viewer)
    pending = view.get("pending") or {}
    options = pending.get("options") or []
    seq = twin.svc.state(UID, viewer)["seq"]
    seen["pictures"] = [twin.page(f"/games/{UID}/preview?option={option}&seq={seq}", viewer)
                        for option in options]
    if viewer is not None:
        mails = twin.mails(viewer, new=True)
        seen["mails"] = mails
        seen["links"] = twin.links(mails[-1]) if mails else []
    return {channel: json.dumps(_masked_all(value)) for channel, value in seen.items()}


def _masked_all(value: Any) -> Any:
    if isinstance(value, str):
        return masked(value)
    if isinstance(value, list):
        return [_masked_all(item) for item in value]
    return value


def differs_for(mine: Twin, other: Twin, viewer: int | None) -> bool:
    """Whether the rules have shown ``viewer`` what tells the twins apart: a random outcome
    it may see (the log as it reads it: a die, a tile, a card dealt face up, one it drew), a
    card face up, its own hand."""
    logs = [json.loads(twin.api("/log", viewer).split(" ", 1)[1])["moves"]
            for twin in (mine, other)]
    if [m.get("outcomes") for m in logs[0]] != [m.get("outcomes") for m in logs[1]]:
        return True
    views = [twin.view(viewer) for twin in (mine, other)]
    if views[0]["discard"] != views[1]["discard"]:
        return True
    return viewer is not None and own_hands(views[0], viewer) != own_hands(views[1], viewer)


def own_hands(view: dict[str, Any], viewer: int) -> list[Any]:
    """The hands of ``viewer``'s own pieces (Titans or crew) in a view."""
    pieces = view.get("titans") or view.get("crews") or {}
    return [piece["hand"] for piece in pieces.values() if piece["seat"] == viewer]


def common_choice(twins: tuple[Twin, Twin], position: int, rnd: random.Random) -> str | None:
    """An input for ``position`` legal in both twins that shows no card of Bob's (Bob plays
    his own cards only where they differ nowhere: never here; the others' cards are the same
    in both twins, or they would not be legal in both)."""
    options = [twin.svc.options(UID, position)["options"] for twin in twins]
    common = [o for o in options[0] if o in options[1]]
    if position == BOB:
        common = [o for o in common if o.split()[0] not in ("play", "discard")]
    if not common:
        return None
    return rnd.choice(common)


def walk(twins: tuple[Twin, Twin], seed: int, steps: int = STEPS) -> dict[str, int]:
    """Play both twins the same way and compare each viewer's everything after every input,
    until it is shown the difference; how many comparisons each viewer had."""
    rnd = random.Random(seed)
    compared = {str(v): 0 for v in VIEWERS}
    live = set(VIEWERS)
    for step in range(steps):
        twins[0].note(BOB, f"step {step}: my hand tells me to wait")
        for viewer in sorted(live, key=str):
            if differs_for(*twins, viewer):
                live.discard(viewer)
                continue
            a, b = (everything(twin, viewer) for twin in twins)
            for channel in a:
                assert a[channel] == b[channel], _first_difference(viewer, channel, a, b)
            compared[str(viewer)] += 1
        if not live:
            break
        to_act = twins[0].svc.state(UID, None)["game"]["to_act"]
        choices = {seat: common_choice(twins, seat, rnd) for seat in to_act}
        if not choices or None in choices.values():
            break
        for seat, choice in choices.items():  # (several at once: sealed until the last)
            for twin in twins:
                twin.submit(seat, str(choice))
    return compared


def _first_difference(viewer: int | None, channel: str, a: dict[str, str],
                      b: dict[str, str]) -> str:
    left, right = a[channel], b[channel]
    at = next((i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y),
              min(len(left), len(right)))
    return (f"viewer {viewer}, {channel} differs at {at}:\n"
            f"...{unescape(left[max(0, at - 300):at + 300])}\n---\n"
            f"...{unescape(right[max(0, at - 300):at + 300])}")


def position(bob_hand: list[str], *, seed: int = 3) -> dict[str, Any]:
    """Ann's Grinder, her red die picked, before Bob's Craken (holding ``bob_hand``), Cyd's
    Rassik (a Bonus card of his own) beyond; every other card face down in the deck, which is
    dealt in the same order but for Bob's card."""
    held = {*bob_hand, "healing-potion", "leap"}
    deck = [card for card in CARDS if card not in held]
    return {
        "circuit": {"name": "twins", "bonus": ["B12", "F12"], "lava": ["E11"]},
        "titans": [
            {"titan": "grinder", "space": "D6", "hand": ["healing-potion"]},
            {"titan": "craken", "space": "D8", "hand": bob_hand},
            {"titan": "rassik", "space": "D10", "hand": ["leap"]},
        ],
        "deck": deck,
        "turn": {"titan": "grinder", "die": "red"},
        "seed": seed,
    }


@pytest.fixture(params=["sqlite", "postgresql"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def twin_pair(kind: str, tmp_path: Path, scenarios: tuple[dict[str, Any], dict[str, Any]],
              stack: ExitStack, states: tuple[dict[str, Any], dict[str, Any]] | None = None,
              ) -> tuple[Twin, Twin]:
    """Two twins on databases of ``kind``, at the positions of ``scenarios`` (or ``states``,
    when given, made of them)."""
    apps = []
    for name in "ab":
        folder = tmp_path / name
        folder.mkdir()
        url = stack.enter_context(migrated_database(kind, folder))
        twin = twin_app(url)
        stack.callback(twin.svc.engine.dispose)
        apps.append(twin)
    export = template(apps[0])
    states = states or (state_of(scenarios[0]), state_of(scenarios[1]))
    return (make_twin(apps[0], export, scenarios[0], states[0]),
            make_twin(apps[1], export, scenarios[1], states[1]))


def state_of(scenario: dict[str, Any]) -> dict[str, Any]:
    race, _ = load_scenario(scenario)
    return race.state.to_json()


def test_twins_with_another_card_in_bobs_hand_look_the_same(kind: str, tmp_path: Path) -> None:
    with ExitStack() as stack:
        twins = twin_pair(kind, tmp_path, (position(["last-shield"]), position(["speed-potion"])),
                          stack)
        compared = walk(twins, seed=1)
    assert all(count >= 6 for count in compared.values()), compared


def test_twins_with_other_dice_to_come_look_the_same(kind: str, tmp_path: Path) -> None:
    scenario = position(["dispel"])
    states = []
    for key in (11, 12):
        state = state_of(scenario)
        state["rng"] = key  # (the dice on the table are the same; those to come are not)
        states.append(state)
    with ExitStack() as stack:
        twins = twin_pair(kind, tmp_path, (scenario, scenario), stack,
                          states=(states[0], states[1]))
        compared = walk(twins, seed=2)
    assert all(count >= 3 for count in compared.values()), compared


def great_race_twins(state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Great Race start and its twin: the same but for the order of the deck beneath the
    first market's cards: the cards the crews draw into their hands differ (each seen by its
    drawer alone) until the next market deals face up from what is left."""
    twin = json.loads(json.dumps(state))
    market = len(state["crews"]) + 1
    twin["deck"] = [*state["deck"][:market], *reversed(state["deck"][market:])]
    assert twin["deck"] != state["deck"]
    return state, twin


def test_great_race_twins_with_other_cards_to_come_look_the_same(
        kind: str, tmp_path: Path) -> None:
    with ExitStack() as stack:
        apps = []
        for name in "ab":
            folder = tmp_path / name
            folder.mkdir()
            twin = twin_app(stack.enter_context(migrated_database(kind, folder)))
            stack.callback(twin.svc.engine.dispose)
            apps.append(twin)
        export = template(apps[0], "great-race", seed=6)
        states = great_race_twins(export["game"]["initial_state"])
        twins = (make_twin(apps[0], export, None, states[0]),
                 make_twin(apps[1], export, None, states[1]))
        compared = walk(twins, seed=3, steps=24)
    assert all(count >= 20 for count in compared.values()), compared


# ---------------------------------------------------------------------- chains at chance


def drawing_position(deck_first: str) -> dict[str, Any]:
    """Ann's Grinder before a Bonus space (D8) with nothing on it: her red step draws the
    deck's top card, ``deck_first`` (the twins' decks differ there)."""
    scenario = position(["dispel"])
    scenario["circuit"] = {"name": "draw", "bonus": ["D8"]}
    scenario["titans"][1]["space"] = "A9"  # (Cyd's Rassik stays on D10, a Fireball's target)
    deck = [card for card in scenario["deck"] if card != deck_first]
    scenario["deck"] = [deck_first, *deck]
    return scenario


@dataclass
class Served:
    twin: Twin
    cli: Cli
    stop: Callable[[], None]


def serve(twin: Twin, folder: Path) -> Served:
    server = make_server("127.0.0.1", 0, twin.app, threaded=True)
    thread = serve_in_thread(server, "twin")
    twin.url = f"http://127.0.0.1:{server.port}"
    cli = Cli(folder)
    cli("login", twin.url, "--token", token_of(ANN))

    def stop() -> None:
        server.shutdown()
        thread.join(timeout=10)

    return Served(twin, cli, stop)


CHAIN = "move S; play fireball D10"


def reply(twin: Twin, text: str) -> str:
    """Ann replies to her turn mail with ``text``; the answer mailed back to her."""
    msg = EmailMessage()
    msg["From"] = "ann@example.com"
    address = reply_address(KEY, DOMAIN, UID, ANN)
    msg["To"] = address
    msg["Subject"] = "Re: your turn"
    msg.set_content(f"{text}\n")
    before = len(twin.mails(ANN))
    queue_inbound(twin.svc.engine, twin.svc.settings, address, msg.as_bytes(),
                  sender="ann@example.com")
    process_inbound(twin.svc)
    answers = twin.mails(ANN)[before:]
    assert answers, "no answer mailed"
    return answers[-1]


STOPPED = re.compile(r"'[^'\n]{1,80}' met chance or what the others keep hidden, so your "
                     r"inputs stopped there; not played: '[^'\n]{1,200}'")


def unplayed_lines(text: str) -> list[str]:
    """The sentences saying where a chain stopped (whatever the rest of the answer shows)."""
    return STOPPED.findall(" ".join(unescape(text).split()))


def test_a_chain_stops_at_a_drawn_card_the_same_way_in_twins(kind: str, tmp_path: Path) -> None:
    """Ann draws the fireball in one twin and the quake in the other; her chain 'move S; play
    fireball D10' stops after the move in both, and every channel says so in the same words
    (were it refused in one and played in the other, it would tell her the card)."""
    answers: dict[str, list[str]] = {"api": [], "page": [], "cli": [], "mail": []}
    for first in ("fireball", "quake"):
        state = state_of(drawing_position(first))
        for channel in answers:
            folder = tmp_path / f"{first}-{channel}"
            folder.mkdir()
            with ExitStack() as stack:
                url = stack.enter_context(migrated_database(kind, folder))
                twin = twin_app(url)
                stack.callback(twin.svc.engine.dispose)
                make_twin(twin, template(twin), drawing_position(first), state)
                answers[channel].append(masked(send_chain(twin, channel, folder, stack)))
                log = twin.svc.export(UID)["moves"]
                assert [m["input"] for m in log] == ["move S"]
                hand = twin.view(ANN)["titans"]["grinder"]["hand"]
                assert hand == ["healing-potion", first]  # the card drawn, shown to Ann only
    for channel, (one, other) in answers.items():
        assert one == other, (channel, one, other)
        assert "not played: 'play fireball D10'" in one, (channel, one)


def send_chain(twin: Twin, channel: str, folder: Path, stack: ExitStack) -> str:
    if channel == "api":
        response = twin.app.test_client().post(f"/api/games/{UID}/moves",
                                               headers=bearer(token_of(ANN)),
                                               json={"expected_seq": 0, "input": CHAIN})
        assert response.status_code == 200, response.get_json()
        return json.dumps(response.get_json()["unplayed"], sort_keys=True)
    if channel == "page":
        browser = twin.browser(ANN)
        page = browser.get(f"/games/{UID}").get_data(as_text=True)
        token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert token
        posted = browser.post(f"/games/{UID}/move", data={
            "csrf_token": token.group(1), "seq": "0", "text": CHAIN})
        assert posted.status_code == 303
        return "\n".join(unplayed_lines(browser.get(f"/games/{UID}").get_data(as_text=True)))
    if channel == "cli":
        served = serve(twin, folder)
        stack.callback(served.stop)
        result = served.cli("play", UID[:8], CHAIN)
        return "\n".join(unplayed_lines(result.output))
    return "\n".join(unplayed_lines(reply(twin, CHAIN)))
