"""Nobody sees another player's hand or acts for another seat, by any path (issue 8).

One started game of three human seats, Ann (A, seat 0), Ben (B, seat 1) and Cat (C, seat 2),
each holding a Bonus card, is built once per database (SQLite and PostgreSQL, migrated) and
brought to a decision of Ben's whose options name his card. Ben's seat was given to a new
player early on (``replace_seat``): the old Ben keeps his revoked API token, his browser and
his mail. Then every path is tried, one row of :data:`ATTEMPTS` each, by Ann (or the old Ben)
to read Ben's hand or to act for Ben: the JSON API (her token on his decision, on another game,
no token, a revoked and a forged token, the admin endpoints), the signed mail links (edited to
Ben's seat or another game, Ben's used link again, a link of an old decision, Ben's link in
Ann's browser), replies by mail (to Ben's reply address, to a forged one, to a stale decision,
for Ben's decision), the ``titanpost`` client logged in as Ann, and the web pages. Every row
checks the refusal (status and words), that the games, seats, log, tokens and clock are
exactly as before, and that nothing Ann gets back names Ben's or Cat's cards or holds their
hands (the views' structure: other hands are counts, another seat's options are absent).

Real parts only: the app on a migrated database, its HTTP server on loopback for the client,
the reply listener (aiosmtpd) on loopback with the real inbound worker, the mail renderer.
"""

from __future__ import annotations

import json
import re
import smtplib
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient
from itsdangerous.encoding import base64_decode, base64_encode
from sqlmodel import col, select
from werkzeug.serving import make_server

from app import create_app
from app.core.config import Settings
from app.core.models import OutboxMail
from app.mail.addresses import reply_address
from app.mail.inbound import process_inbound
from app.mail.inbound_smtp import make_controller
from app.mail.render import MailRenderer, build_message
from app.service import GameService, Unauthorized
from app.web.links import game_link, option_link
from tests.apifixtures import (
    ADMIN_TOKEN,
    Api,
    base_env,
    bearer,
    dispose,
    human_game,
    make_api,
    make_service,
    table_rows,
)
from tests.dbutil import fresh_postgres, fresh_sqlite, pg_unavailable_reason
from tests.netutil import free_port, serve_in_thread

pytest_plugins = ["tests.apifixtures"]

DOMAIN = "titanpost.test"
SEED = 7
"""A deal where each hand is one card with a name found nowhere else (checked below)."""
ANN, BEN, CAT = 0, 1, 2
EMAILS = {ANN: "ann@example.com", BEN: "ben@example.com", CAT: "cat@example.com"}
NEW_BEN = "ben2@example.com"
GAME_TABLES = ("games", "seats", "moves", "snapshots", "api_tokens", "deadlines", "absences")
"""What no refused attempt may change (a refused reply is answered: outbox and inbound_mail
change then, and only then)."""
MAIL_TABLES = ("outbox", "inbound_mail")
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


# ---------------------------------------------------------------------- the world


@dataclass
class World:
    """The game, its players' browsers, tokens, links and mail, at Ben's decision."""

    api: Api
    uid: str
    other_uid: str
    creator: str
    tokens: dict[int, str]
    old_ben_token: str
    browsers: dict[str, FlaskClient]
    links: dict[str, str]
    seq: int
    ben_option: str
    """An option of Ben's decision that names his card."""
    ben_plain: str
    """One that does not (a reply quoting the card's name is answered with what it said)."""
    ann_old_seq: int
    hidden: list[str]
    """Ben's and Cat's cards, as slugs and as shown ("borrowed-power", "borrowed power")."""
    hands: dict[int, list[str]]
    titans: dict[int, list[str]]
    smtp_port: int
    server_url: str
    config: Path
    answers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def settings(self) -> Settings:
        return self.api.service.settings

    def address(self, position: int) -> str:
        return reply_address(self.settings.secret_key, DOMAIN, self.uid, position)

    def decision_id(self, seq: int, position: int, kind: str = "turn") -> str:
        return f"<{self.uid}.{seq}.{position}.{kind}@{DOMAIN}>"

    def snapshot(self, *tables: str) -> dict[str, list[tuple[Any, ...]]]:
        return table_rows(self.api, *tables)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("isolation")
    if request.param == "sqlite":
        database = fresh_sqlite(folder)
    else:
        reason = pg_unavailable_reason()
        if reason is not None:
            pytest.skip(reason)
        database = fresh_postgres()
    with database as url:
        # every attempt comes from one address: rate limits would answer 429 instead
        api = make_api(url, TITANPOST_MAIL_DOMAIN=DOMAIN, TITANPOST_RATE_LIMIT_LOGIN="off",
                       TITANPOST_RATE_LIMIT_LINKS="off")
        controller = make_controller(api.engine, api.service.settings, "127.0.0.1",
                                     smtp := free_port())
        http = make_server("127.0.0.1", web := free_port(), api.app, threaded=True)
        controller.start()
        serve_in_thread(http)
        try:
            yield _build(api, smtp, f"http://127.0.0.1:{web}", folder / "client.json")
        finally:
            http.shutdown()
            controller.stop()
            dispose(api)


def _build(api: Api, smtp_port: int, server_url: str, config: Path) -> World:
    client = api.client
    admin = bearer(ADMIN_TOKEN)  # (a chosen seed, for a repeatable game, is the admin's alone)
    created = client.post("/api/games", headers=admin, json={
        "seed": SEED, "name": "Isolation", "seats": [
            {"email": EMAILS[p], "name": name}
            for p, name in ((ANN, "Ann"), (BEN, "Ben"), (CAT, "Cat"))]}).get_json()
    uid, creator = created["game"], created["creator_token"]
    tokens = {inv["position"]: _accept(api, inv["invite_token"]) for inv in created["invitations"]}
    other = client.post("/api/games", json={"seed": SEED + 1, "seats": [
        {"email": EMAILS[ANN]}, {"email": "dan@example.com"}, {"email": "eve@example.com"}]},
        headers=admin).get_json()
    for inv in other["invitations"]:
        _accept(api, inv["invite_token"])
    for game, token in ((uid, creator), (other["game"], other["creator_token"])):
        started = client.post(f"/api/games/{game}/start", json={},
                              headers={"X-Creator-Token": token})
        assert started.status_code == 200, started.get_json()

    browsers = {name: api.app.test_client() for name in ("ann", "old-ben", "ben", "cat",
                                                          "nobody")}
    for name, position in (("ann", ANN), ("old-ben", BEN), ("cat", CAT)):
        _open_seat(api, browsers[name], uid, position)

    # Ben's seat goes to a new player: the old token, browser, links and address stay with the
    # old Ben.
    old_ben_token = tokens[BEN]
    old_links = {"old-ben": _link(api, uid, BEN, 0, "pick red"),
                 "old-ben-game": _path(game_link(api.service.settings,
                                                 api.service.link_seat(uid, BEN).secret, uid,
                                                 BEN))}
    replaced = client.post(f"/api/games/{uid}/seats/{BEN}/replace", json={"email": NEW_BEN},
                           headers={"X-Creator-Token": creator})
    assert replaced.status_code == 200, replaced.get_json()
    tokens[BEN] = _accept(api, replaced.get_json()["invite_token"], "Ben")
    _open_seat(api, browsers["ben"], uid, BEN)
    away = client.post("/api/away", headers=bearer(tokens[BEN]), json={
        "from": "2035-01-01T00:00:00Z", "until": "2035-01-05T00:00:00Z", "mode": "stretch"})
    assert away.status_code == 201, away.get_json()

    links, ann_old_seq, seq, ben_option = _play_to_bens_card(api, uid, tokens, browsers)
    links |= old_links
    ben_plain = next(o for o in api.service.options(uid, BEN)["options"]
                     if not o.startswith(("play ", "discard ")))
    full = api.service.state_at(uid, seq)["view"]
    hands: dict[int, list[str]] = {ANN: [], BEN: [], CAT: []}
    titans: dict[int, list[str]] = {ANN: [], BEN: [], CAT: []}
    for titan, info in full["titans"].items():
        hands[info["seat"]] += info["hand"]
        titans[info["seat"]].append(titan)
    hidden_cards = [c for c in hands[BEN] + hands[CAT] if c not in hands[ANN]]
    assert hands[BEN] and hands[CAT] and len(hidden_cards) >= 2, hands
    return World(api, uid, other["game"], creator, tokens, old_ben_token, browsers, links, seq,
                 ben_option, ben_plain, ann_old_seq, card_words(hidden_cards), hands, titans,
                 smtp_port, server_url, config)


def card_words(cards: list[str]) -> list[str]:
    """How cards are written: ``borrowed-power``, ``borrowed power`` (any case)."""
    return sorted({form for card in cards for form in (card, card.replace("-", " "))})


def _accept(api: Api, invite: str, name: str | None = None) -> str:
    response = api.client.post("/api/invitations/accept",
                               json={"invite_token": invite, "name": name})
    assert response.status_code == 201, response.get_json()
    token: str = response.get_json()["api_token"]
    return token


def _path(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def _csrf(client: FlaskClient, path: str) -> str:
    page = client.get(path)
    found = CSRF.search(page.get_data(as_text=True))
    assert found, (path, page.status_code, page.get_data(as_text=True)[:2000])
    return found.group(1)


def _open_seat(api: Api, browser: FlaskClient, uid: str, position: int) -> None:
    """What a player does with the game link of a mail: open it, press the button."""
    secret = api.service.link_seat(uid, position).secret
    path = _path(game_link(api.service.settings, secret, uid, position))
    done = browser.post(path, data={"csrf_token": _csrf(browser, path)})
    assert done.status_code == 303, done.get_data(as_text=True)


def _link(api: Api, uid: str, position: int, seq: int, option: str) -> str:
    secret = api.service.link_seat(uid, position).secret
    return _path(option_link(api.service.settings, secret, uid, position, seq, option))


def _use_link(browser: FlaskClient, path: str) -> None:
    done = browser.post(path, data={"csrf_token": _csrf(browser, path)})
    assert done.status_code == 303, done.get_data(as_text=True)


def _play_to_bens_card(api: Api, uid: str, tokens: dict[int, str],
                       browsers: dict[str, FlaskClient]) -> tuple[dict[str, str], int, int, str]:
    """Play (no cards) until Ben must decide with his card among his options. Ann answers her
    first decision with a link from her mail, and keeps the link of another option of it;
    Ben answers his first decision with a link too."""
    svc = api.service
    links: dict[str, str] = {}
    ann_old_seq = -1
    for _ in range(80):
        acting = svc.state(uid, ANN)["game"]["to_act"]
        assert len(acting) == 1, acting
        position = acting[0]
        opts = svc.options(uid, position)
        seq, options = int(opts["seq"]), list(opts["options"])
        cards = [o for o in options if o.startswith(("play ", "discard "))]
        if position == BEN and cards and "ben-used" in links:
            links["ben-now"] = _link(api, uid, BEN, seq, cards[0])
            return links, ann_old_seq, seq, cards[0]
        plain = [o for o in options if o not in cards] or options
        if position == ANN and "ann-used" not in links and len(plain) > 1:
            ann_old_seq = seq
            links["ann-used"] = _link(api, uid, ANN, seq, plain[0])
            links["ann-old"] = _link(api, uid, ANN, seq, plain[1])
            _use_link(browsers["ann"], links["ann-used"])
        elif position == BEN and "ben-used" not in links:
            links["ben-used"] = _link(api, uid, BEN, seq, plain[0])
            _use_link(browsers["ben"], links["ben-used"])
        else:
            svc.submit(uid, position, seq, plain[0])
    raise AssertionError("Ben never had his card among his options")


# ---------------------------------------------------------------------- what Ann gets back


@dataclass
class Seen:
    """What an attempt got back: a status (HTTP, a reply's result, an exit code) and every
    text the attacker receives (a body, a page, an answer mail, the client's output)."""

    status: int | str
    text: str
    body: Any = None


def _json(response: Any) -> Seen:
    return Seen(response.status_code, response.get_data(as_text=True), response.get_json())


def _page(response: Any) -> Seen:
    return Seen(response.status_code, response.get_data(as_text=True))


def hands_hidden(body: Any, viewer: int | None, titans: dict[int, list[str]]) -> None:
    """Every state view in ``body`` hides the hands of the seats other than ``viewer`` (a
    count), and another seat's pending decision carries no options."""
    mine = set(titans.get(viewer, [])) if viewer is not None else set()
    if isinstance(body, dict):
        if isinstance(body.get("titans"), dict):
            for titan, info in body["titans"].items():
                if titan not in mine and isinstance(info, dict) and "hand" in info:
                    assert isinstance(info["hand"], int), (titan, info)
            pending = body.get("pending")
            if isinstance(pending, dict) and pending.get("titan") not in mine:
                assert not pending.get("options"), pending
        for value in body.values():
            hands_hidden(value, viewer, titans)
    elif isinstance(body, list):
        for value in body:
            hands_hidden(value, viewer, titans)


def names_hidden(text: str, hidden: list[str]) -> None:
    low = text.lower()
    found = [word for word in hidden if word in low]
    assert not found, f"{found} in: {text[:3000]}"


# ---------------------------------------------------------------------- the API


def api_moves(w: World, token: str | None, uid: str | None = None) -> Seen:
    headers = bearer(token) if token else {}
    return _json(w.api.client.post(f"/api/games/{uid or w.uid}/moves", headers=headers,
                                   json={"expected_seq": w.seq, "input": w.ben_option}))


def api_get(w: World, path: str, token: str | None) -> Seen:
    return _json(w.api.client.get(path, headers=bearer(token) if token else {}))


def altered(token: str) -> str:
    return token[:-1] + ("A" if token[-1] != "A" else "B")


def cancel_bens_away(w: World) -> Seen:
    listed = w.api.client.get("/api/away", headers=bearer(w.tokens[BEN])).get_json()
    [absence] = listed["absences"]
    return _json(w.api.client.delete(f"/api/away/{absence['id']}", headers=bearer(w.tokens[ANN])))


def replace_ben(w: World, headers: dict[str, str]) -> Seen:
    return _json(w.api.client.post(f"/api/games/{w.uid}/seats/{BEN}/replace",
                                   json={"email": EMAILS[ANN]}, headers=headers))


def admin(w: World, path: str, token: str | None) -> Seen:
    return api_get(w, f"/api/admin{path}", token)


# ---------------------------------------------------------------------- links


def edit_link(path: str, **changes: Any) -> str:
    """The link with its payload changed and its signature kept (what an attacker can do)."""
    prefix, token = path.rsplit("/", 1)
    payload, rest = token.lstrip(".").split(".", 1)
    data = base64_decode(payload)
    if token.startswith("."):
        data = zlib.decompress(data)
    fields = json.loads(data)
    fields.update(changes)
    encoded = base64_encode(json.dumps(fields, separators=(",", ":")).encode()).decode()
    return f"{prefix}/{encoded}.{rest}"


def link_get(w: World, browser: str, path: str) -> Seen:
    return _page(w.browsers[browser].get(path))


def link_post(w: World, browser: str, path: str) -> Seen:
    client = w.browsers[browser]
    return _page(client.post(path, data={"csrf_token": _csrf(client, "/new")}))


def ann_game_link(w: World) -> str:
    secret = w.api.service.link_seat(w.uid, ANN).secret
    return _path(game_link(w.settings, secret, w.uid, ANN))


# ---------------------------------------------------------------------- web pages


def web_move(w: World, browser: str, option: str | None = None) -> Seen:
    client = w.browsers[browser]
    token = _csrf(client, "/new")  # the session's CSRF token, from any form
    return _page(client.post(f"/games/{w.uid}/move", data={
        "csrf_token": token, "option": option or w.ben_option, "seq": str(w.seq)}))


def web_admin_login(w: World, token: str) -> Seen:
    client = w.browsers["ann"]
    csrf = _csrf(client, "/admin/login")
    refused = client.post("/admin/login", data={"csrf_token": csrf, "token": token,
                                                 "next": f"/admin/replay/{w.uid}"})
    replay = client.get(f"/admin/replay/{w.uid}")
    assert replay.status_code == 302 and "/admin/login" in replay.headers["Location"]
    return _page(refused)


# ---------------------------------------------------------------------- replies by mail


def reply(w: World, to: str, text: str, *, sender: str, in_reply_to: str | None = None,
          reply_to: str | None = None) -> Seen:
    """A reply sent to the reply listener and processed by the inbound worker: its result and
    every answer mailed to someone other than the seat's player."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = "Re: your turn"
    msg["Message-ID"] = make_msgid(domain="example.com")
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
        msg["References"] = in_reply_to
    if reply_to:
        msg["Reply-To"] = reply_to
    msg.set_content(f"{text}\n\n-- \nsent from my phone\n")
    with w.api.service.session() as s:
        last = s.exec(select(OutboxMail.id).order_by(col(OutboxMail.id).desc())).first() or 0
    try:
        with smtplib.SMTP("127.0.0.1", w.smtp_port, timeout=10) as smtp:
            smtp.sendmail(sender, [to], msg.as_bytes())
    except smtplib.SMTPRecipientsRefused as exc:
        code, why = exc.recipients[to]
        return Seen(code, why.decode())
    [outcome] = process_inbound(w.api.service)
    with w.api.service.session() as s:
        answers = s.exec(select(OutboxMail).where(col(OutboxMail.id) > last)).all()
    text_back = ""
    for answer in answers:
        w.answers.append({"to": answer.recipient, "payload": answer.payload})
        if answer.recipient != NEW_BEN:
            text_back += f"To: {answer.recipient}\n{(answer.payload or {}).get('text', '')}\n"
    recipients = ", ".join(a.recipient for a in answers) or "nobody"
    return Seen(outcome.result, text_back or f"no answer to {sender}: answered {recipients}")


def forged_address(w: World) -> str:
    return re.sub(r"\.[0-9a-f]{16}@", ".0123456789abcdef@", w.address(BEN))


# ---------------------------------------------------------------------- the client


def cli(w: World, token: str, *args: str) -> Seen:
    from cli.main import main

    env = {"TITANPOST_CONFIG": str(w.config), "TITANPOST_SERVER": w.server_url,
           "TITANPOST_TOKEN": token, "NO_COLOR": "1", "COLUMNS": "200"}
    result = CliRunner().invoke(main, list(args), env=env)
    body = None
    if "--json" in args and result.exit_code == 0:
        body = json.loads(result.output)
    return Seen(result.exit_code, result.output, body)


# ---------------------------------------------------------------------- the attempts


@dataclass(frozen=True)
class Attempt:
    name: str
    run: Callable[[World], Seen]
    status: int | str
    says: str
    viewer: int | None = ANN
    """Whose view the answer may show (None: no seat's, e.g. a spectator's)."""
    mail: bool = False
    """A reply by mail: it is answered, so the outbox and the inbound queue change."""


ATTEMPTS = [
    # --- the JSON API, with Ann's token and others
    Attempt("api: Ann's token plays Ben's decision", lambda w: api_moves(w, w.tokens[ANN]),
            403, "it is not your decision"),
    Attempt("api: Ann's state shows no other hand",
            lambda w: api_get(w, f"/api/games/{w.uid}", w.tokens[ANN]), 200, '"you":0'),
    Attempt("api: Ann's options while Ben decides",
            lambda w: api_get(w, f"/api/games/{w.uid}/options", w.tokens[ANN]), 200,
            '"yours":false'),
    Attempt("api: Ann's log",
            lambda w: api_get(w, f"/api/games/{w.uid}/log", w.tokens[ANN]), 200, '"moves"'),
    Attempt("api: Ann's clock view",
            lambda w: api_get(w, f"/api/games/{w.uid}/deadlines", w.tokens[ANN]), 200,
            '"deadlines"'),
    Attempt("api: Ann's games",
            lambda w: api_get(w, "/api/games", w.tokens[ANN]), 200, '"games"'),
    Attempt("api: Ann's token on another game's options",
            lambda w: api_get(w, f"/api/games/{w.other_uid}/options", w.tokens[ANN]), 403,
            "belongs to a seat in another game"),
    Attempt("api: Ann's token plays in another game",
            lambda w: api_moves(w, w.tokens[ANN], w.other_uid), 403,
            "belongs to a seat in another game"),
    Attempt("api: Ann's token reads another game as a spectator",
            lambda w: api_get(w, f"/api/games/{w.other_uid}", w.tokens[ANN]), 200,
            '"you":null', viewer=None),
    Attempt("api: no token plays", lambda w: api_moves(w, None), 401, "authentication needed"),
    Attempt("api: no token asks for Ben's options",
            lambda w: api_get(w, f"/api/games/{w.uid}/options", None), 401,
            "authentication needed"),
    Attempt("api: the spectator view", lambda w: api_get(w, f"/api/games/{w.uid}", None), 200,
            '"you":null', viewer=None),
    Attempt("api: the old Ben's revoked token plays", lambda w: api_moves(w, w.old_ben_token),
            401, "unknown or revoked"),
    Attempt("api: the old Ben's revoked token reads Ben's view",
            lambda w: api_get(w, f"/api/games/{w.uid}", w.old_ben_token), 401,
            "unknown or revoked"),
    Attempt("api: an altered token plays", lambda w: api_moves(w, altered(w.tokens[BEN])), 401,
            "unknown or revoked"),
    Attempt("api: an altered token reads",
            lambda w: api_get(w, f"/api/games/{w.uid}/options", altered(w.tokens[BEN])), 401,
            "unknown or revoked"),
    Attempt("api: Ann cancels Ben's away dates", cancel_bens_away, 404,
            "you have no away dates"),
    Attempt("api: Ann's seat token as the creator's gives Ben's seat away",
            lambda w: replace_ben(w, {"X-Creator-Token": w.tokens[ANN]}), 403,
            "only the game's creator"),
    Attempt("api: Ann's seat token as a bearer gives Ben's seat away",
            lambda w: replace_ben(w, bearer(w.tokens[ANN])), 401, "creator token"),
    # --- the admin endpoints (the full view holds every hand)
    *(Attempt(f"admin api: {what} {path}", (lambda p, t: lambda w: admin(
        w, p.format(uid=w.uid, seq=w.seq), t(w)))(path, token), 401, says, viewer=None)
      for path in ("/games/{uid}/states/{seq}", "/games/{uid}/replay", "/games/{uid}/export",
                   "/verify")
      for what, token, says in (
          ("no token", lambda w: None, "authentication needed"),
          ("Ann's seat token", lambda w: w.tokens[ANN], "the admin token is wrong"),
          ("a wrong admin token", lambda w: altered(ADMIN_TOKEN), "the admin token is wrong"))),
    Attempt("admin page: a wrong admin token",
            lambda w: web_admin_login(w, altered(ADMIN_TOKEN)), 403, "wrong admin token",
            viewer=None),
    # --- signed links
    Attempt("link: Ann's link edited to Ben's seat",
            lambda w: link_get(w, "nobody", edit_link(w.links["ann-old"], s=BEN)), 400,
            "Forged link", viewer=None),
    Attempt("link: Ann's link edited to Ben's seat, the decision now and his card",
            lambda w: link_post(w, "ann", edit_link(w.links["ann-old"], s=BEN, q=w.seq,
                                                    o=w.ben_option)), 400, "Forged link"),
    Attempt("link: Ann's link edited to another game",
            lambda w: link_get(w, "nobody", edit_link(w.links["ann-old"], g=w.other_uid)),
            400, "Forged link", viewer=None),
    Attempt("link: Ann's game link edited to Ben's seat",
            lambda w: link_post(w, "nobody", edit_link(ann_game_link(w), s=BEN)), 400,
            "Forged link", viewer=None),
    Attempt("link: garbage", lambda w: link_get(w, "nobody", "/l/not-a-link"), 400,
            "Damaged link", viewer=None),
    Attempt("link: Ben's used link again",
            lambda w: link_post(w, "ben", w.links["ben-used"]), 409, "Link already used",
            viewer=BEN),
    Attempt("link: Ben's used link again, from Ann's browser",
            lambda w: link_get(w, "nobody", w.links["ben-used"]), 409, "Link already used",
            viewer=None),
    Attempt("link: Ann's link of an old decision",
            lambda w: link_post(w, "ann", w.links["ann-old"]), 409, "The game moved on"),
    Attempt("link: Ann's used link",
            lambda w: link_post(w, "ann", w.links["ann-used"]), 409, "Link already used"),
    Attempt("link: the old Ben's option link, from before his seat was given away",
            lambda w: link_get(w, "old-ben", w.links["old-ben"]), 400, "Forged link",
            viewer=None),
    Attempt("link: the old Ben's game link, from before his seat was given away",
            lambda w: link_post(w, "old-ben", w.links["old-ben-game"]), 400, "Forged link",
            viewer=None),
    Attempt("link: Ben's current link in Ann's browser",
            lambda w: link_post(w, "ann", w.links["ben-now"]), 403, "A link for another player"),
    # --- the web pages
    Attempt("web: Ann's game page", lambda w: _page(w.browsers["ann"].get(f"/games/{w.uid}")),
            200, "Ann"),
    Attempt("web: Ann's log page",
            lambda w: _page(w.browsers["ann"].get(f"/games/{w.uid}/log")), 200, "Ann"),
    Attempt("web: Ann plays Ben's decision", lambda w: web_move(w, "ann"), 403,
            "it is not your decision"),
    Attempt("web: Ann previews Ben's option",
            lambda w: _page(w.browsers["ann"].get(f"/games/{w.uid}/preview",
                                                  query_string={"option": w.ben_option})),
            422, "not yours"),
    Attempt("web: the old Ben's browser plays Ben's decision", lambda w: web_move(w, "old-ben"),
            403, "this browser has no seat", viewer=None),
    Attempt("web: the old Ben's browser looks at the game",
            lambda w: _page(w.browsers["old-ben"].get(f"/games/{w.uid}")), 200, "Ben",
            viewer=None),
    Attempt("web: a browser without a seat plays", lambda w: web_move(w, "nobody"), 403,
            "this browser has no seat", viewer=None),
    # --- replies by mail
    Attempt("mail: Ann replies to Ben's turn mail",
            lambda w: reply(w, w.address(BEN), w.ben_plain, sender=EMAILS[ANN],
                            in_reply_to=w.decision_id(w.seq, BEN)),
            "not-the-player", "not played", mail=True),
    Attempt("mail: the old Ben replies to Ben's turn mail",
            lambda w: reply(w, w.address(BEN), w.ben_plain, sender=EMAILS[BEN],
                            in_reply_to=w.decision_id(w.seq, BEN)),
            "not-the-player", "not played", viewer=None, mail=True),
    Attempt("mail: Ann, as Ben (a forged From), asks for the answer at her address",
            lambda w: reply(w, w.address(BEN), "move nowhere", sender=NEW_BEN,
                            reply_to=EMAILS[ANN]),
            "illegal", f"answered {NEW_BEN}", mail=True),
    Attempt("mail: a forged reply address",
            lambda w: reply(w, forged_address(w), w.ben_plain, sender=EMAILS[ANN]),
            550, "No such reply address", mail=True),
    Attempt("mail: Ann answers Ben's decision from her own address",
            lambda w: reply(w, w.address(ANN), w.ben_plain, sender=EMAILS[ANN]),
            "not-yours", "it is not your decision", mail=True),
    Attempt("mail: Ann replies to her old decision",
            lambda w: reply(w, w.address(ANN), "end", sender=EMAILS[ANN],
                            in_reply_to=w.decision_id(w.ann_old_seq, ANN)),
            "moved-on", "the game moved on", mail=True),
    # --- the terminal client, logged in as Ann
    Attempt("cli: Ann plays Ben's decision",
            lambda w: cli(w, w.tokens[ANN], "play", w.uid[:8], w.ben_option), 1,
            "it is not your decision"),
    Attempt("cli: Ann shows the game", lambda w: cli(w, w.tokens[ANN], "show", w.uid[:8]), 0,
            "Ben"),
    Attempt("cli: Ann shows the game as JSON",
            lambda w: cli(w, w.tokens[ANN], "show", w.uid[:8], "--json"), 0, '"you": 0'),
    Attempt("cli: Ann's options", lambda w: cli(w, w.tokens[ANN], "options", w.uid[:8]), 0,
            "Ben"),
    Attempt("cli: Ann's token names another game",
            lambda w: cli(w, w.tokens[ANN], "play", w.other_uid[:8], "end"), 1,
            "no game of yours matches"),
    Attempt("cli: the old Ben's revoked token shows the game",
            lambda w: cli(w, w.old_ben_token, "show", w.uid[:8]), 1, "unknown or revoked",
            viewer=None),
]


@pytest.mark.parametrize("attempt", ATTEMPTS, ids=[a.name for a in ATTEMPTS])
def test_nobody_reads_another_hand_or_acts_for_another_seat(world: World,
                                                            attempt: Attempt) -> None:
    tables = GAME_TABLES if attempt.mail else GAME_TABLES + MAIL_TABLES
    before = world.snapshot(*tables)
    seen = attempt.run(world)
    assert seen.status == attempt.status, seen.text[:3000]
    assert attempt.says in seen.text, seen.text[:3000]
    assert world.snapshot(*tables) == before
    names_hidden(seen.text, world.hidden)
    hands_hidden(seen.body, attempt.viewer, world.titans)


def test_answers_to_replies_go_to_the_seats_player_only(world: World) -> None:
    """Answers that tell a seat's situation (its options can name its cards) went to that
    seat's player; a stranger's answer tells nothing of the game. (The replies are sent here,
    whatever the attempts above sent on this test process.)"""
    reply(world, world.address(BEN), "move nowhere", sender=NEW_BEN, reply_to=EMAILS[ANN])
    for stranger in (EMAILS[ANN], EMAILS[BEN]):  # Ann, and the old Ben, reply to Ben's mail
        reply(world, world.address(BEN), world.ben_plain, sender=stranger,
              in_reply_to=world.decision_id(world.seq, BEN))
    players = {world.address(ANN): EMAILS[ANN], world.address(BEN): NEW_BEN,
               world.address(CAT): EMAILS[CAT]}
    strangers = 0
    for answer in world.answers:
        text = answer["payload"]["text"]
        if answer["to"] == players[answer["payload"]["reply_to"]]:
            continue
        strangers += 1
        assert "came from" in text, text
        for telling in ("options", "waiting for", "your decision", world.ben_plain):
            assert telling not in text, text
        names_hidden(text, world.hidden)
    bens = [a["payload"]["text"] for a in world.answers if a["to"] == NEW_BEN]
    assert any(world.ben_option in text for text in bens), bens  # his options, to him
    assert strangers >= 2


def test_the_words_looked_for_are_in_bens_own_views(world: World) -> None:
    """The checks above can fail: Ben's own state, options, page and turn mail name his card
    (and Ann's name hers)."""
    ben = world.api.client.get(f"/api/games/{world.uid}", headers=bearer(world.tokens[BEN]))
    text = ben.get_data(as_text=True).lower()
    assert any(word in text for word in world.hidden)
    with pytest.raises(AssertionError):
        hands_hidden(world.api.service.state_at(world.uid, world.seq), ANN, world.titans)
    options = world.api.client.get(f"/api/games/{world.uid}/options",
                                   headers=bearer(world.tokens[BEN])).get_json()
    assert world.ben_option in options["options"]
    page = world.browsers["ben"].get(f"/games/{world.uid}").get_data(as_text=True).lower()
    assert any(word in page for word in world.hidden)
    mine = world.browsers["ann"].get(f"/games/{world.uid}").get_data(as_text=True).lower()
    assert any(word in mine for word in card_words(world.hands[ANN]))


def test_turn_mails_show_no_other_hand(world: World) -> None:
    """Every mail written for Ann (text and HTML as sent; the board picture is drawn from her
    view, which holds counts for the others' hands) names none of Ben's or Cat's cards, while
    Ben's mail of his decision names his."""
    renderer = MailRenderer(world.api.service)
    with world.api.service.session() as s:
        rows = s.exec(select(OutboxMail).order_by(col(OutboxMail.id))).all()
    mailed: dict[str, list[str]] = {}
    for row in rows:
        if row.kind.startswith("reply-"):
            continue
        mail = renderer.render(row, always=True)
        message = build_message(world.settings, row, mail)
        parts = [str(message["Subject"])] + [
            part.get_content() for part in message.walk()
            if part.get_content_type() in ("text/plain", "text/html")]
        mailed.setdefault(row.recipient, []).append("\n".join(parts))
    assert len(mailed.get(EMAILS[ANN], [])) >= 3, sorted(mailed)
    for text in mailed[EMAILS[ANN]]:
        names_hidden(text, world.hidden)
    for text in mailed[EMAILS[CAT]] + mailed[EMAILS[BEN]]:
        names_hidden(text, card_words(world.hands[ANN]))
    bens = "\n".join(mailed[NEW_BEN]).lower()
    assert any(word in bens for word in card_words(world.hands[BEN]))


# ---------------------------------------------------------------------- revoked tokens


def test_a_revoked_token_is_refused_at_once_in_every_process(migrated_database_url: str) -> None:
    """Two web processes (two apps, each with its own GameService) on one database: a seat
    given away in one, its old token is refused by the other at once."""
    svc = make_service(migrated_database_url)
    other = GameService(svc.engine, svc.settings)
    first = create_app(Settings.from_env(base_env(migrated_database_url)))
    second = create_app(Settings.from_env(base_env(migrated_database_url)))
    try:
        game = human_game(svc, 3)
        uid, token = game["game"], game["tokens"][1]
        assert other.seat_for_token(token)[:2] == (uid, 1)
        path = f"/api/games/{uid}/options"
        assert second.test_client().get(path, headers=bearer(token)).status_code == 200
        replaced = first.test_client().post(
            f"/api/games/{uid}/seats/1/replace", json={"computer": True},
            headers={"X-Creator-Token": game["creator_token"]})
        assert replaced.status_code == 200, replaced.get_json()
        refused = second.test_client().get(path, headers=bearer(token))
        assert refused.status_code == 401, refused.get_json()
        assert "unknown or revoked" in refused.get_json()["error"]
        with pytest.raises(Unauthorized):
            other.seat_for_token(token)
        # the other seats' tokens go on working in both
        for app in (first, second):
            assert app.test_client().get(path, headers=bearer(game["tokens"][0])).status_code \
                == 200
    finally:
        for app in (first, second):
            app.extensions["titanpost.service"].engine.dispose()
        svc.engine.dispose()
