"""Sign-in by mail (app/features/signin/signins.py): a link mailed through a real SMTP server
(aiosmtpd) signs a browser in, and /games then lists every game of the address, of both games; and
everything a cheater might try is refused: a forged, damaged, expired or reused link, a link after
the address's seat was given away, someone else's seats, two uses racing, too many asks. On SQLite
and PostgreSQL."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any

import itsdangerous.timed
import pytest
from flask.testing import FlaskClient
from sqlmodel import select

from app import create_app
from app.core.migrate import upgrade
from app.core.models import OutboxMail, SignIn, utcnow
from app.features.signin import signins as signin
from app.features.signin.signins import ASKS_PER_ADDRESS, SignInRefused, use_link
from app.service import GameService
from app.web.linktokens import SIGNIN_LINK_MAX_AGE, SignInLink, make_signin_token
from tests.apifixtures import csrf_token
from tests.netutil import serve_in_thread
from tests.test_cli_player import Cli
from tests.test_mail_out import (
    ANN,
    BASE,
    BOLEK,
    SECRET,
    Inbox,
    Post,
    Smtp,
    _start,
    parts,
    settings_for,
)

CAROL = "carol@example.com"
LINK = re.compile(re.escape(BASE) + r"/signin/([A-Za-z0-9_.\-]+)")


@dataclass
class Site:
    app: Any
    post: Post
    inbox: Inbox

    @property
    def service(self) -> GameService:
        svc: GameService = self.app.extensions["titanpost.service"]
        return svc

    def client(self, **headers: str) -> FlaskClient:
        client = self.app.test_client()
        client.environ_base.update({f"HTTP_{k.upper().replace('-', '_')}": v
                                    for k, v in headers.items()})
        return client

    def ask(self, client: FlaskClient, email: str) -> Any:
        page = client.get("/signin").get_data(as_text=True)
        return client.post("/signin", data={"email": email, "csrf_token": csrf_token(page)})

    def mailed_token(self, email: str) -> str:
        """The token of the newest sign-in mail to ``email``, as it arrived over SMTP."""
        report = self.post.sender().run_once(now=utcnow())
        assert report.failed == 0, report
        mails = [m for m in self.inbox.mails(email) if m["X-Titan-Post-Kind"] == "signin"]
        assert mails, f"no sign-in mail to {email}"
        text, html, _ = parts(mails[-1])
        found = LINK.search(text)
        assert found is not None, text
        assert found.group(1) in unescape(html)
        return found.group(1)

    def sign_in(self, client: FlaskClient, email: str) -> Any:
        self.ask(client, email)
        token = self.mailed_token(email)
        page = client.get(f"/signin/{token}").get_data(as_text=True)
        return client.post(f"/signin/{token}", data={"csrf_token": csrf_token(page)})

    def used(self) -> list[Any]:
        with self.service.session() as s:
            return [row.used_at for row in s.exec(select(SignIn)).all()]


@pytest.fixture
def answer_floor() -> float:
    """The floor under an ask's answer (app.features.signin.signins.ANSWER_FLOOR), kept for the test
    that asks for this fixture: that test checks the floor itself."""
    return signin.ANSWER_FLOOR


@pytest.fixture(autouse=True)
def _asks_answer_at_once(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every other test asks without the floor (0.3 s an ask, some tests ask twenty times):
    what they check is not how long an answer takes."""
    if "answer_floor" not in request.fixturenames:
        monkeypatch.setattr(signin, "ANSWER_FLOOR", 0.0)


@pytest.fixture
def site(migrated_database_url: str) -> Iterator[Site]:
    inbox = Inbox()
    controller, port = _start(inbox)
    upgrade(migrated_database_url)
    app = create_app(settings_for(migrated_database_url, f"smtp://127.0.0.1:{port}"))
    app.config["TESTING"] = True
    post = Post(app.extensions["titanpost.service"], Smtp(inbox, port, []))
    try:
        yield Site(app, post, inbox)
    finally:
        post.service.engine.dispose()
        controller.stop()


def _games(site: Site) -> dict[str, str]:
    """A Titan Race of Ann and Bolek, a Great Race of Ann and the computer, and a Titan Race of
    Bolek and Carol (the computer playing the third seat of each); every invitation taken and
    every game started."""
    titan = site.post.new_game(name="Tuesday race")
    great = site.post.new_game(seats=[{"email": ANN, "name": "Ann"}, {"bot": True},
                                      {"bot": True}],
                               name="Around the world", rules_name="great-race")
    other = site.post.new_game(seats=[{"email": BOLEK, "name": "Bolek"},
                                      {"email": CAROL, "name": "Carol"}, {"bot": True}],
                               name="Not Ann's")
    return {"titan": titan["game"], "great": great["game"], "other": other["game"],
            "titan_creator": titan["creator_token"]}


def _listed(page: str) -> set[str]:
    return set(re.findall(r'<tr data-game="([0-9a-f]{32})" data-seat', page))


def test_a_mailed_link_signs_in_and_games_lists_every_game_of_the_address(site: Site) -> None:
    games = _games(site)
    browser = site.client()
    asked = site.ask(browser, ANN)
    assert asked.status_code == 200 and 'id="signin-sent"' in asked.get_data(as_text=True)
    token = site.mailed_token(ANN)
    confirm = browser.get(f"/signin/{token}")
    assert confirm.status_code == 200 and ANN in confirm.get_data(as_text=True)
    assert confirm.headers["Cache-Control"] == "no-store"
    assert site.used() == [None]  # a GET (a mail scanner) changes nothing
    assert browser.get("/games/" + games["titan"] + "/me").status_code == 403
    done = browser.post(f"/signin/{token}",
                        data={"csrf_token": csrf_token(confirm.get_data(as_text=True))})
    assert done.status_code == 303 and done.headers["Location"].endswith("/games")
    page = browser.get("/games").get_data(as_text=True)
    assert _listed(page) == {games["titan"], games["great"]}
    assert "Titan Race" in page and "The Great Race" in page
    # the game pages know the seats: a seat's own page opens in this browser
    assert browser.get("/games/" + games["titan"] + "/me").status_code == 200
    assert browser.get("/games/" + games["other"] + "/me").status_code == 403


def test_games_says_whose_turn_and_the_next_deadline(site: Site) -> None:
    titan = site.post.new_game(name="Clocked")
    uid = titan["game"]
    ann = site.post.position_of(uid, ANN)
    site.post.play_until(uid, ann)
    browser = site.client()
    site.sign_in(browser, ANN)
    page = browser.get("/games").get_data(as_text=True)
    row = re.search(rf'<tr data-game="{uid}".*?</tr>', page, re.S)
    assert row is not None
    assert 'class="mine"' in row.group(0) and "yours" in row.group(0)
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", row.group(0)), row.group(0)
    opened = browser.post(f"/games/{uid}/open/{ann}",
                          data={"csrf_token": csrf_token(page)})
    assert opened.status_code == 303 and opened.headers["Location"].endswith(f"/games/{uid}")


def test_an_unknown_address_gets_the_same_answer_and_no_mail(site: Site) -> None:
    _games(site)
    known, unknown = site.client(), site.client()
    said = site.ask(known, ANN).get_data(as_text=True)
    other = site.ask(unknown, "nobody@example.com").get_data(as_text=True)

    def bare(page: str, address: str) -> str:
        return re.sub(r'name="csrf_token" value="[^"]+"', "", page).replace(address, "ADDR")

    assert bare(said, ANN) == bare(other, "nobody@example.com")
    with site.service.session() as s:
        kinds = [row.recipient for row in s.exec(select(OutboxMail)
                                                 .where(OutboxMail.kind == "signin")).all()]
        mailed = sorted(row.mailed for row in s.exec(select(SignIn)).all())
    assert kinds == [ANN] and mailed == [False, True]


def test_bad_links_say_what_is_wrong_and_sign_nobody_in(site: Site,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    games = _games(site)
    browser = site.client()
    site.ask(browser, ANN)
    token = site.mailed_token(ANN)
    body, _, signature = token.rpartition(".")
    forged = f"{body}.{'A' if signature[0] != 'A' else 'B'}{signature[1:]}"
    other_key = make_signin_token("another server's key",
                                  SignInLink(ANN, token_id=_token_ids(site)[0]))
    someone_else = make_signin_token(SECRET, SignInLink(BOLEK, _token_ids(site)[0]))
    started = time.time()
    monkeypatch.setattr(itsdangerous.timed.time, "time",
                        lambda: started - SIGNIN_LINK_MAX_AGE - 5)
    expired = make_signin_token(SECRET, SignInLink(ANN, _token_ids(site)[0]))
    monkeypatch.undo()
    cases = {"forged": forged, "forged ": other_key, "forged  ": someone_else,
             "expired": expired, "malformed": token[:40], "malformed ": "not-a-link",
             "malformed  ": token.replace(".", "", 1)}
    for reason, bad in cases.items():
        for answer in (browser.get(f"/signin/{bad}"),
                       browser.post(f"/signin/{bad}", data={"csrf_token": _csrf(browser)})):
            page = answer.get_data(as_text=True)
            assert f'data-reason="{reason.strip()}"' in page, (reason, page[:300])
            assert answer.status_code in (400, 410)
    assert site.used() == [None]
    assert _listed(browser.get("/games").get_data(as_text=True)) == set()
    # a seat of Ann's given to someone else since the link was mailed: the link is useless
    site.service.replace_seat(games["titan"], games["titan_creator"],
                              site.post.position_of(games["titan"], ANN), CAROL)
    replaced = browser.get(f"/signin/{token}").get_data(as_text=True)
    assert 'data-reason="replaced"' in replaced
    assert site.used() == [None]


def _token_ids(site: Site) -> list[str]:
    with site.service.session() as s:
        return [row.token_id for row in s.exec(select(SignIn)).all()]


def _csrf(client: FlaskClient) -> str:
    return csrf_token(client.get("/signin").get_data(as_text=True))


def test_a_link_signs_in_once(site: Site) -> None:
    _games(site)
    first, second = site.client(), site.client()
    site.ask(first, ANN)
    token = site.mailed_token(ANN)
    page = first.get(f"/signin/{token}").get_data(as_text=True)
    assert first.post(f"/signin/{token}", data={"csrf_token": csrf_token(page)}).status_code \
        == 303
    again = second.post(f"/signin/{token}", data={"csrf_token": _csrf(second)})
    assert again.status_code == 410 and 'data-reason="reused"' in again.get_data(as_text=True)
    assert 'data-reason="reused"' in second.get(f"/signin/{token}").get_data(as_text=True)
    assert _listed(second.get("/games").get_data(as_text=True)) == set()


def test_two_uses_racing_sign_in_one(site: Site) -> None:
    _games(site)
    site.ask(site.client(), ANN)
    token = site.mailed_token(ANN)
    results: list[str] = []
    gate = threading.Barrier(4)

    def use() -> None:
        gate.wait()
        try:
            use_link(site.service, token, "web")
            results.append("signed in")
        except SignInRefused as exc:
            results.append(exc.reason)

    threads = [threading.Thread(target=use) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == ["reused", "reused", "reused", "signed in"]


def test_a_seat_given_away_leaves_the_signed_in_browser(site: Site) -> None:
    games = _games(site)
    browser = site.client()
    site.sign_in(browser, ANN)
    page = browser.get("/games").get_data(as_text=True)
    ann = site.post.position_of(games["titan"], ANN)
    browser.post(f"/games/{games['titan']}/open/{ann}", data={"csrf_token": csrf_token(page)})
    assert browser.get(f"/games/{games['titan']}/me").status_code == 200
    site.service.replace_seat(games["titan"], games["titan_creator"], ann, CAROL)
    assert browser.get(f"/games/{games['titan']}/me").status_code == 403
    assert _listed(browser.get("/games").get_data(as_text=True)) == {games["great"]}
    # nor can it open someone else's seat by naming it
    bolek = site.post.position_of(games["other"], BOLEK)
    refused = browser.post(f"/games/{games['other']}/open/{bolek}",
                           data={"csrf_token": csrf_token(page)})
    assert refused.status_code == 403
    assert browser.get(f"/games/{games['other']}/me").status_code == 403


def test_signing_out_ends_the_session_even_for_a_copied_cookie(site: Site) -> None:
    games = _games(site)
    browser = site.client()
    site.sign_in(browser, ANN)
    cookie = browser.get_cookie("session")
    assert cookie is not None
    page = browser.get("/games").get_data(as_text=True)
    out = browser.post("/signout", data={"csrf_token": csrf_token(page)})
    assert out.status_code == 303
    assert _listed(browser.get("/games").get_data(as_text=True)) == set()
    thief = site.client()
    thief.set_cookie("session", cookie.value)
    assert _listed(thief.get("/games").get_data(as_text=True)) == set()
    assert thief.get(f"/games/{games['great']}/me").status_code == 403


def test_asks_are_limited_per_address_and_per_client(site: Site) -> None:
    _games(site)
    browser = site.client()
    for _ in range(ASKS_PER_ADDRESS):
        assert site.ask(browser, ANN).status_code == 200
    refused = site.ask(browser, ANN)
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    many = [site.ask(site.client(), f"guess{n}@example.com").status_code for n in range(20)]
    assert many.count(429) == 5  # 20 asks from one client an hour: the last 5 refused


def test_the_sign_in_mail_speaks_the_seat_s_language(site: Site) -> None:
    site.post.new_game(seats=[{"email": BOLEK, "name": "Bolek", "language": "pl"},
                              {"bot": True}, {"bot": True}], name="Wyścig")
    browser = site.client(**{"Accept-Language": "en"})
    site.ask(browser, BOLEK)
    site.mailed_token(BOLEK)
    [mail] = [m for m in site.inbox.mails(BOLEK) if m["X-Titan-Post-Kind"] == "signin"]
    assert mail["Content-Language"] == "pl"
    assert "Zaloguj" in parts(mail)[0]



# ---------------------------------------------------------------------- from a terminal


@pytest.fixture
def served(site: Site) -> Iterator[tuple[Site, str]]:
    """The site on a real port, for the CLI."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, site.app, threaded=True)
    thread = serve_in_thread(server, "signin-server")
    try:
        yield site, f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


def test_the_cli_signs_in_by_mail_and_lists_every_game(served: tuple[Site, str],
                                                       tmp_path: Path) -> None:
    site, url = served
    games = _games(site)
    cli = Cli(tmp_path)
    asked = cli("login", ANN, "--server", url, input="\n", code=None)
    assert asked.exit_code != 0  # nothing pasted: nothing kept
    link = f"{BASE}/signin/{site.mailed_token(ANN)}"
    result = cli("login", ANN, "--server", url, input=link + "\n")
    assert f"Signed in as {ANN} on {url}" in result.stdout
    stored = json.loads(cli.config.read_text())["accounts"][url]
    assert stored["email"] == ANN and stored["token"]
    listed = cli.json("games")["games"]
    assert {row["game"] for row in listed} == {games["titan"], games["great"]}
    for row in listed:
        assert {"name", "status", "turn", "deadline", "seq", "your_turn"} <= set(row)
    table = cli("games").stdout
    assert games["titan"][:8] in table and games["great"][:8] in table
    assert games["other"][:8] not in table
    # the same link a second time, as a pasted code: refused, and says why
    again = cli("login", ANN, "--server", url, input=link.rsplit("/", 1)[1] + "\n", code=1)
    assert "used already" in again.stderr
    # signing out stops the token on the server, not just here
    token = stored["token"]
    assert "Signed out" in cli("logout", ANN).stdout
    assert "accounts" not in json.loads(cli.config.read_text())
    refused = site.client().get("/api/account/games",
                                headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 401


def test_an_account_token_is_no_seat_token(served: tuple[Site, str]) -> None:
    site, _ = served
    games = _games(site)
    client = site.client()
    assert client.get("/api/account/games").status_code == 401
    forged = make_signin_token(SECRET, SignInLink(ANN, "0" * 32))
    assert client.get("/api/account/games",
                      headers={"Authorization": f"Bearer {forged}"}).status_code == 401
    site.ask(client, ANN)
    used = client.post("/api/signin/use", json={"token": site.mailed_token(ANN)}).get_json()
    # an account token opens no game's seat API, and a link's token no account
    bearer = {"Authorization": f"Bearer {used['account_token']}"}
    assert client.get(f"/api/games/{games['titan']}/options", headers=bearer).status_code \
        == 401
    assert client.get("/api/account/games", headers=bearer).status_code == 200


def test_a_sign_in_token_never_reaches_the_log() -> None:
    from app.core.observability import redact_path, redact_text

    token = make_signin_token(SECRET, SignInLink(ANN, "0" * 32))
    assert token not in redact_path(f"/signin/{token}")
    assert redact_path("/signin") == "/signin"
    assert token not in redact_text(f"GET {BASE}/signin/{token} 200")


def test_the_api_answers_the_same_for_every_address_and_as_slowly(site: Site,
                                                                 answer_floor: float) -> None:
    _games(site)
    client = site.client()
    answers = []
    for email in (ANN, "nobody@example.com"):
        started = time.monotonic()
        asked = client.post("/api/signin", json={"email": email})
        answers.append((asked.status_code, asked.get_json(), time.monotonic() - started))
    (known_status, known, known_took), (other_status, other, other_took) = answers
    assert known_status == other_status == 200 and known == other
    assert answer_floor == 0.3 and min(known_took, other_took) >= answer_floor
    assert client.post("/api/signin", json={"email": "not an address"}).status_code == 400
    with site.service.session() as s:
        mailed = [row.recipient for row in s.exec(select(OutboxMail)
                                                  .where(OutboxMail.kind == "signin")).all()]
    assert mailed == [ANN]
