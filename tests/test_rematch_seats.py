"""A rematch seats the same players in their own seats (issues 36, 38): whoever asks for it takes
their own seat and nobody else's; every other seat is kept for its player's address, who is
asked "play again?" by a mail to that address alone and says yes from it, or straight from the
old game with the old seat's credential (its API token, the browser's seat, the address signed
in by mail). Nobody is invited; no answer, page, CLI output or mail given to one player holds
another seat's credential.
On SQLite and PostgreSQL, with mail delivered through a real SMTP server (aiosmtpd)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import getaddresses
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from app import create_app
from app.core.migrate import upgrade
from app.features.signin import signins as signin
from tests.apifixtures import ADMIN_TOKEN, TEST_RATE_LIMIT, Api, bearer, csrf_token
from tests.netutil import serve_in_thread
from tests.test_cli_player import Cli
from tests.test_mail_out import Inbox, Post, _start, settings_for
from tests.test_rematch import ask, finished, mailed_invitation, seats_of

pytest_plugins = ["tests.apifixtures"]

ANN, BOB, CAROL = "ann@example.com", "bob@example.com", "carol@example.com"
JOIN_LINK = re.compile(r"/join/([A-Za-z0-9_\-]+)")
SHARE = "5e" * 32


@dataclass
class Site:
    """The app with mail delivered to a real SMTP server, driven over its API and pages."""

    api: Api
    post: Post
    inbox: Inbox

    def deliver(self) -> list[EmailMessage]:
        """Send the outbox; every mail the SMTP server received so far."""
        report = self.post.send()
        assert report.failed == 0, report
        return self.inbox.mails()

    def browser(self) -> FlaskClient:
        client: FlaskClient = self.api.app.test_client()
        return client

    def game_uid_of(self, location: str) -> str:
        return location.split("/games/")[1].split("/")[0]


@pytest.fixture
def site(migrated_database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    monkeypatch.setattr(signin, "ANSWER_FLOOR", 0.0)  # (how long an ask takes is not checked)
    inbox = Inbox()
    controller, port = _start(inbox)
    upgrade(migrated_database_url)
    app = create_app(settings_for(
        migrated_database_url, f"smtp://127.0.0.1:{port}", TITANPOST_ADMIN_TOKEN=ADMIN_TOKEN,
        TITANPOST_RATE_LIMIT_LINKS=TEST_RATE_LIMIT, TITANPOST_RATE_LIMIT_LOGIN=TEST_RATE_LIMIT))
    app.config["TESTING"] = True
    api = Api(migrated_database_url, app, app.test_client())
    post = Post(api.service, None)
    try:
        yield Site(api, post, inbox)
    finally:
        api.engine.dispose()
        controller.stop()


def readable(msg: EmailMessage) -> str:
    """Everything a mail shows: its headers and every text part, decoded."""
    texts = [f"{name}: {value}" for name, value in msg.items()]
    texts += [str(part.get_content()) for part in msg.walk()
              if part.get_content_maintype() == "text"]
    return "\n".join(texts)


def recipients(msg: EmailMessage) -> list[str]:
    return [address.lower() for _, address in getaddresses([str(msg["To"])])]


def invitations_received(mails: list[EmailMessage]) -> dict[str, set[str]]:
    """The invitation tokens each address received by mail."""
    found: dict[str, set[str]] = {}
    for msg in mails:
        if msg["X-Titan-Post-Kind"] == "invitation":
            for to in recipients(msg):
                found.setdefault(to, set()).update(JOIN_LINK.findall(readable(msg)))
    return found


def no_other_invitation_in(text: str, tokens: dict[str, set[str]], reader: str) -> None:
    """``text``, given to ``reader``, holds no invitation token mailed to anyone else."""
    for to, mailed in tokens.items():
        if to != reader:
            for token in mailed:
                assert token not in text, f"{to}'s invitation shown to {reader}"


def rematch_link(site: Site, uid: str, to: str) -> str:
    """The rematch link of the game-over mail of game ``uid`` to ``to``, as rendered."""
    [mail_id] = [row[0] for row in site.api.rows(
        "SELECT outbox.id FROM outbox JOIN games ON games.id = outbox.game_id WHERE "
        "games.uid = :uid AND kind = 'game_over' AND recipient = :to", uid=uid, to=to)]
    text = site.api.client.get(f"/dev/mail/{mail_id}").text
    found = re.search(r"(/g/[A-Za-z0-9_.\-]+/rematch)", text)
    assert found, text
    return found.group(1)


def post_form(client: FlaskClient, url: str, page: str, **data: str) -> Any:
    return client.post(url, data={"csrf_token": csrf_token(page), **data})


@pytest.fixture
def served(site: Site) -> Iterator[str]:
    """The site on a real port of 127.0.0.1, for the CLI."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, site.api.app, threaded=True)
    thread = serve_in_thread(server, "rematch-server")
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


def test_nobody_is_given_another_players_invitation(site: Site, served: str,
                                                    tmp_path: Path) -> None:
    """Bob makes three rematches, over the API, the page and the CLI: each time he takes his
    own seat and is given Ann's invitation nowhere; every mail of every player, delivered,
    holds only the invitation to its own address; Ann takes her seat with it."""
    api = site.api
    by_api, by_page, by_cli = (finished(api) for _ in range(3))
    shown: list[str] = []
    made = ask(api, by_api, 1)
    shown.append(json.dumps(made))
    bob = site.browser()
    link = rematch_link(site, by_page.uid, BOB)
    pressed = post_form(bob, link, bob.get(link).text)
    assert pressed.status_code == 303
    page_game = site.game_uid_of(pressed.location)
    for path in (pressed.location, f"/games/{page_game}", f"/games/{by_page.uid}"):
        page = bob.get(path)
        assert page.status_code == 200 and "/join/" not in page.text
        shown.append(page.text)
    cli = Cli(tmp_path)
    cli("login", served, "--token", by_cli.tokens[1])
    said = cli("rematch", by_cli.uid[:10])
    assert "Rematch of Friday race" in said.stdout and "/join/" not in said.stdout
    shown.append(said.output)
    cli_game = said.stdout.split("/games/")[1].split()[0].rstrip("/")
    shown.append(json.dumps(json.loads(cli.config.read_text())))
    rematches = (made["game"], page_game, cli_game)

    mails = site.deliver()
    assert not invitations_received(mails)  # nobody is invited: each seat is kept
    assert not api.rows("SELECT recipient FROM outbox JOIN games ON games.id = outbox.game_id "
                        "WHERE kind = 'invitation' AND games.rematch_of IS NOT NULL")
    asked = [msg for msg in mails if msg["X-Titan-Post-Kind"] == "rematch"]
    assert sorted(to for msg in asked for to in recipients(msg)) == [ANN] * 3
    links = [REMATCH_LINK.search(readable(msg)) for msg in asked]
    for text in shown:  # Bob was shown none of Ann's links
        for found in links:
            assert found and found.group(1) not in text
    for uid in rematches:  # Bob is in each, said yes; Ann's seat waits for her answer
        assert [row[4] for row in seats_of(api, uid)] == [False, True, True]
    ann = site.browser()
    for found in links:  # Ann says yes from each mail: each rematch starts
        assert found
        link = found.group(0).split("://", 1)[1].split("/", 1)[1]
        page = ann.get("/" + link)
        assert page.status_code == 200 and 'id="join-rematch-button"' in page.text
        said = post_form(ann, "/" + link, page.text, contribution=SHARE)
        assert said.status_code == 303
    assert api.scalar("SELECT count(*) FROM games WHERE rematch_of IS NOT NULL AND "
                      "status = 'active'") == 3


REMATCH_LINK = re.compile(r"https?://\S+?/g/([A-Za-z0-9_.\-]+)/rematch")


def test_a_player_takes_their_seat_with_the_old_seats_token(site: Site) -> None:
    api = site.api
    table = finished(api)
    url = f"/api/games/{table.uid}/rematch"
    joining = f"{url}/join"
    assert api.client.post(joining, json={}, headers=table.seat(0)).status_code == 404
    made = ask(api, table, 1)
    new = made["game"]
    assert api.client.get(url, headers=table.seat(0)).get_json()["join"] is True
    assert api.client.get(url, headers=table.seat(1)).get_json()["join"] is False
    assert "join" not in api.client.get(url).get_json()
    # refused: no token, another game's seat, a malformed share; nothing changes
    other = api.new_started(3)
    before = seats_of(api, new)
    assert api.client.post(joining, json={}).status_code == 401
    assert api.client.post(joining, json={}, headers=bearer(other.tokens[0])).status_code == 403
    assert api.client.post(joining, json={"contribution": "not hex"},
                           headers=table.seat(0)).status_code == 400
    assert seats_of(api, new) == before
    # Bob's seat is his already; Ann takes hers with her share of the deal
    assert api.client.post(joining, json={}, headers=table.seat(1)).status_code == 409
    joined = api.client.post(joining, json={"contribution": SHARE}, headers=table.seat(0))
    assert joined.status_code == 201, joined.get_json()
    body = joined.get_json()
    assert {k: body[k] for k in ("game", "position", "rematch_of")} == {
        "game": new, "position": 0, "rematch_of": table.uid}
    assert body["commitment"] == api.state(new)["game"]["fairness"]["commitment"]
    assert api.client.get("/api/me", headers=bearer(body["api_token"])).get_json() == {
        "game": new, "position": 0, "email": ANN}
    assert api.rows("SELECT contribution FROM seats JOIN games ON games.id = seats.game_id "
                    "WHERE games.uid = :uid AND position = 0", uid=new) == [(SHARE,)]
    assert body["started"] is True  # hers was the last yes
    # taken once: a second join is refused
    assert api.client.post(joining, json={}, headers=table.seat(0)).status_code == 409
    assert api.client.get(url, headers=table.seat(0)).get_json()["join"] is False
    # no invitation was mailed; the question was, and a real server delivers it
    kinds = [m["X-Titan-Post-Kind"] for m in site.deliver()]
    assert "invitation" not in kinds[-3:] and "rematch" in kinds


def test_a_rematch_started_without_a_player_takes_them_no_more(site: Site) -> None:
    api = site.api
    table = finished(api)
    made = ask(api, table, 1)
    started = api.client.post(f"/api/games/{made['game']}/start", json={"fill_with_bots": True},
                              headers={"X-Creator-Token": made["creator_token"]})
    assert started.status_code == 200
    refused = api.client.post(f"/api/games/{table.uid}/rematch/join", json={},
                              headers=table.seat(0))
    assert refused.status_code == 409, refused.get_json()


def test_the_maker_gives_the_share_of_the_deal_once_shown_the_commitment(site: Site) -> None:
    api = site.api
    table = finished(api)
    made = ask(api, table, 0)
    new, mine = made["game"], bearer(made["api_token"])
    assert made["commitment"] == api.state(new)["game"]["fairness"]["commitment"]
    share = f"/api/games/{new}/contribution"

    def shares() -> list[tuple[Any, ...]]:
        return api.rows("SELECT position, contribution FROM seats JOIN games ON games.id = "
                        "seats.game_id WHERE games.uid = :uid AND NOT is_bot ORDER BY "
                        "position", uid=new)

    assert shares() == [(0, None), (1, None)]
    assert api.client.post(share, json={"contribution": "xyz"}, headers=mine).status_code == 400
    assert api.client.post(share, json={}, headers=mine).status_code == 400
    assert api.client.post(share, json={"contribution": SHARE},
                           headers=table.seat(0)).status_code == 403  # the old game's token
    given = api.client.post(share, json={"contribution": SHARE}, headers=mine)
    assert given.status_code == 200 and given.get_json()["commitment"] == made["commitment"]
    assert shares() == [(0, SHARE), (1, None)]
    again = api.client.post(share, json={"contribution": "0" * 64}, headers=mine)
    assert again.status_code == 409 and shares() == [(0, SHARE), (1, None)]


def test_the_creator_of_a_rematch_is_given_no_invitation(site: Site) -> None:
    api = site.api
    table = finished(api)
    made = ask(api, table, 1)
    new, creator = made["game"], {"X-Creator-Token": made["creator_token"]}
    invite = f"/api/games/{new}/invitations"
    again = api.client.post(invite, json={"position": 0, "email": ANN}, headers=creator)
    assert again.status_code == 201 and again.get_json() == {"position": 0, "email": ANN}
    first = mailed_invitation(api, new, ANN)  # (asked again, by an invitation to her alone)
    second = first
    before = seats_of(api, new)
    for body in ({"position": 0, "email": CAROL}, {"position": 0, "email": BOB},
                 {"position": 2, "email": CAROL}):
        refused = api.client.post(invite, json=body, headers=creator)
        assert refused.status_code == 403, refused.get_json()
    assert seats_of(api, new) == before
    # the maker's set-up page offers to mail it again, never the link
    bob = site.browser()
    claimed = post_form(bob, f"/games/{new}/setup", bob.get(f"/games/{new}/setup").text,
                        creator_token=made["creator_token"])
    assert claimed.status_code == 303
    setup = bob.get(f"/games/{new}/setup").text
    assert "/join/" not in setup and first not in setup and second not in setup
    assert 'type="email"' not in setup  # (no other address can be given)
    resent = post_form(bob, f"/games/{new}/invite", setup, position="0", email=ANN)
    assert resent.status_code == 303
    assert "/join/" not in bob.get(resent.location).text
    third = mailed_invitation(api, new, ANN)
    assert third != first and api.client.post(
        "/api/invitations/accept", json={"invite_token": first}).status_code == 404
    assert api.client.post("/api/invitations/accept",
                           json={"invite_token": third}).status_code == 201
    # once it runs, a seat given to someone new is offered to them by mail alone
    assert api.client.post(f"/api/games/{new}/start", json={}, headers=creator).status_code \
        == 200
    replaced = api.client.post(f"/api/games/{new}/seats/0/replace", json={"email": CAROL},
                               headers=creator)
    assert replaced.status_code == 200, replaced.get_json()
    assert "invite_token" not in replaced.get_json() and "link" not in replaced.get_json()
    mailed_invitation(api, new, CAROL)


def signed_in_token(site: Site, email: str) -> str:
    """The sign-in link token mailed to ``email`` (read from its outbox row)."""
    signin.ask_link(site.api.service, email, "127.0.0.1", "en")
    [payload] = [row[0] for row in site.api.rows(
        "SELECT payload FROM outbox WHERE kind = 'signin' AND recipient = :to ORDER BY id DESC",
        to=email)][:1]
    data = payload if isinstance(payload, dict) else json.loads(payload)
    return str(data["token"])


def test_a_signed_in_address_takes_its_own_seat(site: Site, served: str,
                                                tmp_path: Path) -> None:
    """Signed in by mail, in a browser, on the API or in the CLI, a player takes the seat of
    the rematch kept for their address; an address of another table takes nothing."""
    api = site.api
    api.accept_all(api.create([{"email": CAROL}, {"bot": True}, {"bot": True}]))  # her own table
    by_page, by_api, by_cli = (finished(api) for _ in range(3))
    for table in (by_page, by_api, by_cli):
        ask(api, table, 1)
    # a browser signed in as Ann: the old game's page offers her seat, with its commitment
    ann = site.browser()
    token = signed_in_token(site, ANN)
    assert post_form(ann, f"/signin/{token}", ann.get(f"/signin/{token}").text
                     ).status_code == 303
    page_game = api.client.get(f"/api/games/{by_page.uid}/rematch").get_json()["rematch"]
    old_page = ann.get(f"/games/{by_page.uid}").text
    assert 'id="join-rematch-button"' in old_page
    assert api.state(page_game)["game"]["fairness"]["commitment"] in old_page
    joined = post_form(ann, f"/games/{by_page.uid}/rematch", old_page, contribution=SHARE)
    assert joined.status_code == 303 and joined.location.endswith(f"/games/{page_game}")
    assert [row[4] for row in seats_of(api, page_game)] == [True, True, True]
    assert 'id="join-rematch-button"' not in ann.get(f"/games/{by_page.uid}").text
    # the API, with the account token
    used = api.client.post("/api/signin/use", json={"token": signed_in_token(site, ANN)})
    account = bearer(used.get_json()["account_token"])
    join = f"/api/account/games/{by_api.uid}/rematch/join"
    carols = api.client.post("/api/signin/use", json={"token": signed_in_token(site, CAROL)})
    refused = api.client.post(join, json={}, headers=bearer(carols.get_json()["account_token"]))
    assert refused.status_code == 403, refused.get_json()
    assert api.client.post(join, json={}).status_code == 401
    taken = api.client.post(join, json={"contribution": SHARE}, headers=account)
    assert taken.status_code == 201, taken.get_json()
    assert taken.get_json()["position"] == 0 and taken.get_json()["rematch_of"] == by_api.uid
    assert api.client.post(join, json={}, headers=account).status_code == 409
    # the CLI, signed in by mail (no seat token of the old game kept)
    cli = Cli(tmp_path)
    link = signed_in_token(site, ANN)
    cli("login", ANN, "--server", served, input=link + "\n")
    said = cli("rematch", by_cli.uid[:10])
    cli_game = api.client.get(f"/api/games/{by_cli.uid}/rematch").get_json()["rematch"]
    assert "Masz miejsce w rewanżu" in said.stdout  # (in Ann's language)
    assert cli_game in said.stdout
    kept = json.loads(cli.config.read_text())["games"][cli_game]
    assert kept["position"] == 0 and kept["commitment"] == api.state(cli_game)["game"][
        "fairness"]["commitment"]
    assert api.rows("SELECT contribution FROM seats JOIN games ON games.id = seats.game_id "
                    "WHERE games.uid = :uid AND position = 0", uid=cli_game) == [
        (kept["contribution"],)]
    assert [row[4] for row in seats_of(api, cli_game)] == [True, True, True]
    assert "already" in cli("rematch", by_cli.uid[:10], code=1).stderr
