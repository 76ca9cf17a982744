"""Hidden information in The Great Race, tried through every channel at the same moments of one
race (issue 13), on SQLite and PostgreSQL.

Three crews race: A (French, seat 0), B (Belgian, seat 1, reads Polish) and C (Italian). The
race is found in the setup by searching seeds with the engine directly (deterministic, dealt as
the server deals a chosen seed): one where
A plans while holding drawn cards of a kind that is nowhere public, then chooses from a
Tracker's three cards. At each moment — A's plan sealed while B still plans, A's and B's sealed
while C plans, the reveal, A choosing what to keep from its Tracker, the two cards kept —
everything seat B and a spectator can reach is read:
the JSON API (state, options, log, my games, move answers, a 409 and refusals), the pages (game,
log, preview, mail link pages, the games list, in English and Polish), every mail B received
through a real SMTP server with the board picture each names by address (the picture the
server draws for it, read as its SVG's words), and ``titanpost show/options/log`` as B against a
real HTTP server.
None may name A's sealed plan or A's secret cards; A itself sees them (its plan on the API,
its page and the command line; its cards there and in its mail). The
admin's full views refuse players and spectators, and the dev outbox is absent in production.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from functools import cache
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.serving import make_server

from app import create_app
from app.core.config import Settings
from app.features.fairness import dealing
from app.games.greatrace.engine.bot import choose
from app.games.greatrace.engine.game import GreatRace
from app.games.rng import Dealing
from app.games.ui import game_ui
from app.mail.images import read_picture_token
from app.service import GameService
from tests.apifixtures import TEST_RATE_LIMIT
from tests.greatrace.test_mail import body, confirm_and_post
from tests.netutil import serve_in_thread
from tests.test_cli_player import Cli
from tests.test_mail_out import BASE, DOMAIN, FROM, SECRET, Post, Smtp, links, smtp  # noqa: F401

UI = game_ui("great-race")
CREWS = ("french", "belgian", "italian")
A, B, C = 0, 1, 2
EMAILS = ("ann@example.com", "bolek@example.com", "cyryl@example.com")
A_PLAN = "plan french P3 S2"
"""A's plan at the planning looked at: the test's choice (not one of the plans mails suggest),
so that its words anywhere B reads them once B has sealed its own are A's."""
ADMIN = "admin-token-for-the-hidden-tests-0123"
DISTINCT = ("cartographer", "con-artist", "jerrycan", "militia", "refueling-station",
            "saboteur", "spare-parts", "toolbox", "trail-hunter")
"""Cards whose names are no other word of the game in English or Polish (the Repairman is
named like the mechanics in English; Driver and Transport name actions too)."""
MAX_STEPS = 150

Step = tuple[int, str]  # (seat, input); a planning step is several of these, one per seat


# ------------------------------------------------------------------ the race, found in setup


@dataclass
class Race:
    """A seed and the answers that lead from the start to the two moments."""

    seed: int
    to_planning: list[Step]
    plans: list[Step]
    to_keep: list[Step]


def _public_words(game: GreatRace, reader: str) -> set[str]:
    """Every card name ``reader`` may know of without being told a secret: its own hand, the
    market, the discard pile, cards dealt face up and every played input (kept cards aside)."""
    view = game.view()
    known = set(view["crews"][reader]["hand"]) | set(view["market"]) | set(view["discard"])
    known |= set(GreatRace.from_state(game.initial).view()["market"])
    for text in game.inputs:
        if not text.startswith("keep"):
            known |= set(re.findall(r"[a-z]+(?:-[a-z]+)*", text))
    for outcomes in game.outcomes:
        known |= {o.split()[1] for o in outcomes if o.startswith("deal ")}
    return known


def secret_cards(game: GreatRace) -> set[str]:
    """A's cards (hand and a Tracker's three) of a distinct kind that B cannot know of."""
    view = game.view()
    held = set(view["crews"]["french"]["hand"]) | set(game.state.tracker)
    return (held & set(DISTINCT)) - _public_words(game, "belgian")


def _answer(game: GreatRace, first_plan: bool) -> list[Step]:
    """The computer's answers to the pending decision (each crew's plan in a planning; A's
    is :data:`A_PLAN` at the planning the test looks at)."""
    pending = game.pending()
    assert pending is not None
    if pending["kind"] != "plan":
        return [(game.seat_of(pending["crew"]), choose(game))]
    plans = []
    for crew in sorted(pending["crews"], key=game.seat_of):
        text = A_PLAN if first_plan and crew == "french" else choose(game, crew)
        plans.append((game.seat_of(crew), game.own_input(game.seat_of(crew), text)))
    return plans


def new_race(seed: int) -> GreatRace:
    """The race the server deals from the admin's chosen ``seed`` (app/features/fairness/dealing.py:
    a key derived from the seed, the crews chosen), as the engine plays it."""
    key = dealing.seeded_key(dealing.seed_secret(seed))
    return GreatRace.new(list(CREWS), start="alger", rng=Dealing(key=key).source())


def _try(seed: int) -> Race | None:
    """The race of ``seed`` up to the two moments: a planning while A holds secret cards
    (its plan there is :data:`A_PLAN`), then a Tracker of A's with a secret card among its
    three; None when the race has no such moments within :data:`MAX_STEPS` answers."""
    game = new_race(seed)
    steps: list[list[Step]] = []
    planned_at: int | None = None
    for _ in range(MAX_STEPS):
        pending = game.pending()
        if pending is None:
            return None
        if pending["kind"] == "plan" and planned_at is None and secret_cards(game):
            planned_at = len(steps)
        if (pending["kind"] == "keep" and pending["crew"] == "french" and planned_at is not None
                and secret_cards(game) - set(game.view()["crews"]["french"]["hand"])):
            return Race(seed, [s for group in steps[:planned_at] for s in group],
                        steps[planned_at],
                        [s for group in steps[planned_at + 1:] for s in group])
        answer = _answer(game, planned_at is not None and len(steps) == planned_at)
        game.apply("; ".join(text for _, text in answer))
        steps.append(answer)
    return None


FIRST_SEED = 6
"""The first seed of 0..499 whose race has both moments, found by :func:`find_race` from 0: each
seed tried costs its scrypt (a third of a second), so the search starts here."""


@cache
def find_race() -> Race:
    """The first seed from :data:`FIRST_SEED` whose race has both moments (the engine alone)."""
    for seed in range(FIRST_SEED, 500):
        race = _try(seed)
        if race is not None:
            return race
    raise AssertionError(f"no seed in {FIRST_SEED}..499 gives A secret cards and a Tracker")


# ------------------------------------------------------------------ the site


@dataclass
class Site:
    """The app served over HTTP in a thread (for the command line) with mail to a real SMTP
    server; test clients of the same app for the API and the pages."""

    url: str
    app: Any
    post: Post

    @property
    def service(self) -> GameService:
        svc: GameService = self.app.extensions["titanpost.service"]
        return svc


def site_settings(database_url: str, smtp_url: str, **extra: str) -> Settings:
    return Settings.from_env({
        "TITANPOST_DATABASE_URL": database_url, "TITANPOST_ENV": "test",
        "TITANPOST_SECRET_KEY": SECRET, "TITANPOST_BASE_URL": BASE,
        "TITANPOST_MAIL_FROM": FROM, "TITANPOST_MAIL_DOMAIN": DOMAIN,
        "TITANPOST_SMTP_URL": smtp_url, "TITANPOST_ADMIN_TOKEN": ADMIN,
        "TITANPOST_RATE_LIMIT_LINKS": TEST_RATE_LIMIT, **extra})


@pytest.fixture
def site(migrated_database_url: str, smtp: Smtp) -> Iterator[Site]:  # noqa: F811
    # (mail names its board picture by address, so that the picture itself can be read here)
    app = create_app(site_settings(migrated_database_url, smtp.url, TITANPOST_MAIL_IMAGES="link"))
    app.config["TESTING"] = True
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = serve_in_thread(server, "hidden-site")
    try:
        yield Site(f"http://127.0.0.1:{server.port}", app,
                   Post(app.extensions["titanpost.service"], smtp))
    finally:
        server.shutdown()
        thread.join(timeout=10)
        app.extensions["titanpost.service"].engine.dispose()


# ------------------------------------------------------------------ readers and channels


@dataclass
class Reader:
    """Someone looking at the race: a seat (token, browser session, mailbox, command line) or
    a spectator (an anonymous browser)."""

    name: str
    browser: FlaskClient
    position: int | None = None
    token: str | None = None
    cli: Cli | None = None
    seen_links: set[str] = field(default_factory=set)
    pictures: dict[str, str] = field(default_factory=dict)
    """The words of each board picture read, by its token: a token names one state (the game,
    its sequence number, the seat), so the picture is drawn and read once, when its mail is
    first read; the mail's text is read again every time."""

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def page_text(response: Any) -> str:
    return unescape(response.get_data(as_text=True))


def api_channels(site: Site, uid: str, reader: Reader) -> dict[str, str]:
    client = site.app.test_client()
    got = {"api state": client.get(f"/api/games/{uid}", headers=reader.headers),
           "api log": client.get(f"/api/games/{uid}/log", headers=reader.headers)}
    if reader.token:
        got["api options"] = client.get(f"/api/games/{uid}/options", headers=reader.headers)
        got["api my games"] = client.get("/api/games", headers=reader.headers)
    for name, response in got.items():
        assert response.status_code == 200, (reader.name, name, response.get_json())
    return {name: json.dumps(r.get_json(), ensure_ascii=False) for name, r in got.items()}


def move_answers(site: Site, uid: str, reader: Reader) -> dict[str, str]:
    """What the API answers to moves that change nothing: a 409 (an old decision), refusals
    (an illegal input lists the legal options), and a sealed plan sent again."""
    assert reader.token is not None
    client = site.app.test_client()
    seq = site.service.state(uid, None)["seq"]
    sent = {"409 moved on": (0, "pass"), "refused garbage": (seq, "xyzzy"),
            "refused drive": (seq, "drive")}
    sealed = site.service.state(uid, reader.position).get("sealed")
    if sealed:
        sent["sealed again"] = (seq, sealed)
        sent["sealed changed"] = (seq, "plan F5")
    answers = {}
    for name, (expected, text) in sent.items():
        response = client.post(f"/api/games/{uid}/moves", headers=reader.headers,
                               json={"expected_seq": expected, "input": text})
        assert response.status_code in (200, 403, 409, 422), (name, response.get_json())
        answers[f"move {name} ({response.status_code})"] = json.dumps(response.get_json(),
                                                                      ensure_ascii=False)
    assert any("(409)" in name for name in answers)
    return answers


def page_channels(uid: str, reader: Reader) -> dict[str, str]:
    pages = {}
    for lang in ("en", "pl"):
        for path in (f"/games/{uid}", f"/games/{uid}/log", "/games"):
            response = reader.browser.get(f"{path}?lang={lang}")
            assert response.status_code == 200, (reader.name, path)
            pages[f"page {path} {lang}"] = page_text(response)
        for option in ("drive", "pass", "plan F5", A_PLAN):
            response = reader.browser.get(f"/games/{uid}/preview",
                                          query_string={"option": option, "lang": lang})
            assert response.status_code in (200, 403, 422), (reader.name, option)
            pages[f"preview {option} {lang} ({response.status_code})"] = page_text(response)
    return pages


def mailbox(site: Site, position: int) -> list[EmailMessage]:
    """What the SMTP server received for seat ``position``'s address."""
    assert site.post.smtp is not None
    return site.post.smtp.inbox.mails(EMAILS[position])


def mail_channels(site: Site, reader: Reader) -> dict[str, str]:
    """Every mail the reader's address received (subject, text and HTML), and the page each of
    its links opens (GET only: it changes nothing): a link the first time it is seen, and the
    newest mail's links every time."""
    if reader.position is None:
        return {}
    found = {}
    received = mailbox(site, reader.position)
    for number, msg in enumerate(received):
        text = body(msg)
        found[f"mail {number} {msg['X-Titan-Post-Kind']}"] = f"{msg['Subject']}\n{text}"
        found |= picture_channels(site, reader, number, text)
        for link in links(text, "l") + links(text, "g"):
            if link in reader.seen_links and number < len(received) - 1:
                continue
            reader.seen_links.add(link)
            response = site.app.test_client().get(link.removeprefix(BASE))
            assert response.status_code in (200, 409, 410), (link, response.status_code)
            found[f"link page {link[-12:]}"] = page_text(response)
    return found


def picture_channels(site: Site, reader: Reader, number: int, text: str) -> dict[str, str]:
    """The board picture a mail names by address: served to anyone who has the address, it is
    the reader's own view (its SVG's words are what is read)."""
    found = {}
    for token in re.findall(re.escape(BASE) + r"/board/([A-Za-z0-9_.\-]+)\.png", text):
        if token not in reader.pictures:
            picture = read_picture_token(SECRET, token)
            assert picture.seat == reader.position, (reader.name, picture)
            served = site.app.test_client().get(f"/board/{token}.png")
            assert served.status_code == 200 and served.data.startswith(b"\x89PNG")
            renderer = site.app.extensions["titanpost.mail_renderer"]
            reader.pictures[token] = renderer.picture_svg(picture)
        found[f"mail {number} picture"] = reader.pictures[token]
    return found


def cli_channels(uid: str, reader: Reader) -> dict[str, str]:
    if reader.cli is None:
        return {}
    said = {}
    for command in (("show", uid), ("options", uid), ("log", uid)):
        said[f"cli {' '.join(command[:1])}"] = reader.cli(*command).stdout
        said[f"cli {command[0]} --json"] = reader.cli(*command, "--json").stdout
    return said


def everything(site: Site, uid: str, reader: Reader) -> dict[str, str]:
    site.post.send()
    seen = api_channels(site, uid, reader) | page_channels(uid, reader)
    seen |= mail_channels(site, reader) | cli_channels(uid, reader)
    if reader.token:
        seen |= move_answers(site, uid, reader)
    return seen


def card_words(cards: set[str]) -> set[str]:
    return {word for card in cards
            for word in (card, UI.card_name(card, "en"), UI.card_name(card, "pl"))}


def plan_words(plan: str) -> set[str]:
    return {UI.describe_option(plan, None, lang) for lang in ("en", "pl")}


def named(text: str, words: set[str]) -> list[str]:
    flat = " ".join(text.split())
    return [w for w in words
            if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", flat, re.IGNORECASE)]


def assert_hidden(seen: dict[str, str], words: set[str], who: str) -> None:
    leaks = {channel: found for channel, text in seen.items() if (found := named(text, words))}
    assert not leaks, f"{who} is told {leaks}"


def assert_shown(seen: dict[str, str], words: set[str], channels: tuple[str, ...]) -> None:
    """Each of ``channels`` (name prefixes) names at least one of ``words``."""
    for prefix in channels:
        texts = [text for name, text in seen.items() if name.startswith(prefix)]
        assert texts, f"no channel {prefix}"
        assert any(named(text, words) for text in texts), f"{prefix} hides {words} from A"


def views_in(seen: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """Every Great Race state view inside the JSON channels (state, move answers, --json)."""
    found: list[tuple[str, dict[str, Any]]] = []

    def walk(name: str, data: Any) -> None:
        if isinstance(data, dict):
            if data.get("game") == "great-race" and "crews" in data:
                found.append((name, data))
            for value in data.values():
                walk(name, value)
        elif isinstance(data, list):
            for value in data:
                walk(name, value)

    for name, text in seen.items():
        try:
            walk(name, json.loads(text))
        except ValueError:
            continue
    return found


def check_views(seen: dict[str, str], reader: Reader, plan: dict[str, int] | None) -> None:
    """In each view the reader gets, the bag and deck are counts, other crews' hands are
    counts, and A's assistants are ``plan`` (None: still hidden)."""
    views = views_in(seen)
    assert len(views) >= (1 if reader.token is None else 3), [name for name, _ in views]
    own = CREWS[reader.position] if reader.position is not None else None
    for name, view in views:
        assert isinstance(view["bag"], int) and isinstance(view["deck"], int), name
        for crew, info in view["crews"].items():
            assert isinstance(info["hand"], list if crew == own else int), (name, crew)
        assert view["crews"]["french"]["assistants"] == plan, (name, reader.name)


# ------------------------------------------------------------------ playing


def submit(site: Site, uid: str, mirror: GreatRace, steps: list[Step]) -> str:
    """Answer through the service (as the API does; the last answer's body is returned);
    ``mirror`` (the test's own engine, the full state only the test reads) applies the same, a
    planning's plans once all are in."""
    answer: dict[str, Any] = {}
    for position, text in steps:
        seq = site.service.state(uid, position)["seq"]
        answer = site.service.submit(uid, position, seq, text)
        assert answer["applied"], answer
        if answer["seq"] > seq:
            mirror.apply(answer_text(site, uid, text))
        site.post.send()  # each decision's mail goes out before it is answered
    full = site.service.state_at(uid, site.service.state(uid, None)["seq"])["view"]
    assert full == mirror.view(), "the test's engine and the server's race differ"
    return json.dumps(answer, ensure_ascii=False)


def answer_text(site: Site, uid: str, text: str) -> str:
    """The input as the log holds it (the reveal joins every plan)."""
    last = site.service.log(uid, None)["moves"][-1]
    return str(last["input"]) if text.startswith("plan") else text


def start(site: Site, race: Race, tmp_path: Path) -> tuple[str, dict[str, Reader]]:
    created = site.service.create_game(
        seats=[{"email": EMAILS[A], "name": "Ann", "titans": ["french"]},
               {"email": EMAILS[B], "name": "Bolek", "titans": ["belgian"], "language": "pl"},
               {"email": EMAILS[C], "name": "Cyryl", "titans": ["italian"]}],
        name="Secrets of the Sahara", seed=race.seed, circuits=["alger"],
        rules_name="great-race")
    uid = str(created["game"])
    client = site.app.test_client()
    tokens = {}
    for invitation in created["invitations"]:
        accepted = client.post("/api/invitations/accept",
                               json={"invite_token": invitation["invite_token"]})
        assert accepted.status_code == 201, accepted.get_json()
        tokens[invitation["position"]] = accepted.get_json()["api_token"]
    site.service.start(uid, created["creator_token"])
    site.post.send()
    readers = {"spectator": Reader("spectator", site.app.test_client())}
    for who, position in (("A", A), ("B", B)):
        cli = Cli(tmp_path / who)
        cli("login", site.url, "--token", tokens[position])
        browser = site.app.test_client()
        game_link = links(body(mailbox(site, position)[-1]), "g")[0]
        _, action, csrf = confirm_and_post(browser, game_link)
        assert browser.post(action, data={"csrf_token": csrf}).status_code == 303
        readers[who] = Reader(who, browser, position, tokens[position], cli)
    return uid, readers


# ------------------------------------------------------------------ the test


def test_secrets_reach_no_other_player_or_spectator(site: Site, tmp_path: Path) -> None:
    race = find_race()
    uid, readers = start(site, race, tmp_path)
    mirror = new_race(race.seed)
    submit(site, uid, mirror, race.to_planning)
    first_secrets = card_words(secret_cards(mirror))

    # 1. A's plan is sealed; B and C still plan: B's plan options are B's own
    plans = dict(race.plans)
    assert plans[A] == A_PLAN
    submit(site, uid, mirror, [(A, plans[A])])
    a_plan = {"french P3 S2"}
    for who in ("spectator", "B"):
        seen = everything(site, uid, readers[who])
        assert_hidden(seen, first_secrets | a_plan, who)
        check_views(seen, readers[who], None)
        if who == "spectator":
            assert_hidden(seen, plan_words(A_PLAN), who)
    # (B's own channels were really read: its preview, and a refusal listing its own plans)
    assert any(name.startswith("preview") and "(200)" in name for name in seen)
    assert "plan belgian P1 M2 S1 F1" in seen["move refused drive (422)"]
    assert any(name.endswith(" picture") for name in seen), "B's mails named no picture"
    seen = everything(site, uid, readers["A"])
    check_views(seen, readers["A"], {"P": 3, "M": 0, "S": 2, "F": 0})  # A sees its own plan
    assert json.loads(seen["api state"])["sealed"] == A_PLAN
    assert_shown(seen, a_plan, ("api state", "cli show --json"))
    assert_shown(seen, plan_words(A_PLAN), ("page /games/" + uid + " ", "cli show"))
    assert_shown(seen, first_secrets, ("api state", f"page /games/{uid} ", "cli show", "mail"))

    # 2. B's plan is sealed too; only C owes one: nothing of A's plan anywhere for B
    answers = {"B": {"move answer to B's plan": submit(site, uid, mirror, [(B, plans[B])])}}
    for who in ("B", "spectator"):
        seen = everything(site, uid, readers[who]) | answers.get(who, {})
        assert_hidden(seen, first_secrets | {"P3 S2"} | plan_words(A_PLAN), who)
        check_views(seen, readers[who], None)

    # 3. C's plan reveals all three at once: now B reads A's plan
    submit(site, uid, mirror, [(C, plans[C])])
    revealed = everything(site, uid, readers["B"])
    assert_shown(revealed, {A_PLAN}, ("api log", "cli log --json"))
    assert_shown(revealed, plan_words(A_PLAN), (f"page /games/{uid}/log en",))

    # 4. A chooses what to keep of its Tracker's three cards
    submit(site, uid, mirror, race.to_keep)
    engine = mirror
    pending = engine.pending()
    assert pending is not None and pending["kind"] == "keep" and pending["crew"] == "french"
    secrets = secret_cards(engine)
    tracker_only = secrets - set(engine.view()["crews"]["french"]["hand"])
    assert tracker_only, secrets
    for who in ("B", "spectator"):
        seen = everything(site, uid, readers[who])
        assert_hidden(seen, card_words(secrets), who)
        for name, view in views_in(seen):
            assert "tracker" not in (view["pending"] or {}), (name, who)
    seen = everything(site, uid, readers["A"])
    assert all(view["pending"]["tracker"] == engine.state.tracker
               for _, view in views_in(seen)), "A does not see its Tracker's cards"
    assert_shown(seen, card_words(tracker_only),
                 ("api state", "api options", f"page /games/{uid} ", "cli show", "cli options"))

    # 5. A keeps two of them: the log tells the others that two cards were kept, not which
    keep = choose(mirror)
    submit(site, uid, mirror, [(A, keep)])
    kept = secret_cards(mirror)
    for who in ("B", "spectator"):
        seen = everything(site, uid, readers[who])
        assert_hidden(seen, card_words(kept) | {keep}, who)
        moves = json.loads(seen["api log"])["moves"]
        assert "keep 2 cards" in [m["input"] for m in moves], who
        drawn = [o for m in moves for part in m["outcomes"] for o in part if o.startswith("card")]
        assert drawn and set(drawn) == {"card"}, (who, drawn)
    assert keep in [m["input"] for m in json.loads(api_channels(
        site, uid, readers["A"])["api log"])["moves"]]

    check_admin_paths(site, uid, readers)
    check_dev_outbox(site)


def check_admin_paths(site: Site, uid: str, readers: dict[str, Reader]) -> None:
    """The admin's full views answer the admin token only: a seat token, none, or a browser
    without the admin's login is refused, and the refusal holds no state."""
    client = site.app.test_client()
    seq = site.service.state(uid, None)["seq"]
    paths = (f"/api/admin/games/{uid}/states/{seq}", f"/api/admin/games/{uid}/replay",
             f"/api/admin/games/{uid}/export")
    for path in paths:
        for reader in (readers["B"], readers["A"], readers["spectator"]):
            refused = client.get(path, headers=reader.headers)
            assert refused.status_code in (401, 403), (path, reader.name, refused.status_code)
            assert '"crews"' not in refused.get_data(as_text=True)
        allowed = client.get(path, headers={"Authorization": f"Bearer {ADMIN}"})
        assert allowed.status_code == 200, path
    for reader in readers.values():
        page = reader.browser.get(f"/admin/replay/{uid}")
        assert page.status_code in (302, 303, 401, 403), (reader.name, page.status_code)


def check_dev_outbox(site: Site) -> None:
    """The dev outbox shows every player's mail: in production it is not there at all."""
    database_url = str(site.service.settings.database_url)
    production = create_app(site_settings(database_url, "smtp://127.0.0.1:1",
                                          TITANPOST_ENV="production"))
    try:
        client = production.test_client()
        for path in ("/dev/mail", "/dev/mail/1", "/dev/mail/1/html", "/dev/mail/1.eml"):
            assert client.get(path).status_code == 404, path
    finally:
        production.extensions["titanpost.service"].engine.dispose()
