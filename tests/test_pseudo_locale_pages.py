"""Untranslated text cannot hide on the pages :mod:`tests.test_pseudo_locale` does not open (issue
23), for every registered game (its sample new-game form from its test fixture), in its
pseudo-locale and with the attributes a reader sees: the owner's set-up page (before and during
the race, paused, a refused invitation and web hook), the pages of the signed links (confirm,
open, done, and every refusal of :data:`app.web.linkwords.REFUSALS`, the CSRF one through a real
form), the error pages (403, 404, 405, 409, 413, 422, 500, 503, an expired form), the
unsubscribe pages (a seat's and a digest's, asked and done, and a damaged link), a player's
settings with an absence, and the admin's pages (login, a wrong token, the list, a replay).

The development outbox (``/dev/mail``) is left out: it is a developer's tool, served only in
development, and shows the mails themselves (which :mod:`tests.test_pseudo_locale_mail` checks)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from sqlalchemy.exc import OperationalError
from sqlmodel import select
from werkzeug.exceptions import InternalServerError

from app.core.models import Game, Move, Seat
from app.features.webhooks.hooks import FORMATS
from app.games import GAMES
from app.games.ui import game_ui
from app.web import linkwords
from app.web.linktokens import (
    OptionLink,
    digest_unsubscribe_url,
    make_game_token,
    make_option_token,
    unsubscribe_url,
)
from tests.apifixtures import ADMIN_TOKEN, Api, dispose, make_api
from tests.gamefixtures import game_fixture
from tests.test_pseudo_locale import _token, _unmarked
from tests.test_pseudo_locale import pseudo as pseudo  # the fixture

DATA = {"Wyscig", "Ann", "Ben", "ann", "ben", "example", "com", "UTC", "Europe", "Warsaw",
        "hooks", "invalid", "no", "such", "address", "localhost", "http", "titan", "test",
        "fly", "to", "the", "moon"}
"""What the test itself typed (names, addresses, a bad address, a web hook's address, a move
no game knows)."""
OFFERED: set[str] = set()
"""The words of the options the test played or linked to (notation)."""


@pytest.fixture
def site(tmp_path: Path, pseudo: None) -> Iterator[Api]:
    made = make_api(f"sqlite:///{tmp_path / 'pseudo-pages.db'}")
    yield made
    dispose(made)


def _form(game: str, token: str) -> dict[str, str]:
    return {"csrf_token": token, "name": "Wyscig", "deadline_hours": "24", "spectators": "on",
            "seat0_kind": "human", "seat0_email": "ann@example.com", "seat0_name": "Ann",
            "seat0_lang": "en", "seat1_kind": "human", "seat1_email": "ben@example.com",
            "seat1_name": "Ben", "seat1_lang": "pl", "seat2_kind": "computer",
            **{f"seat{i}_kind": "none" for i in range(3, 6)}, "game": game,
            **game_fixture(game).new_game_form}


class Pages(dict[str, str]):
    """The pages seen so far by name; :meth:`get` and :meth:`post` keep one, checking its
    status."""

    def get(self, name: str, client: FlaskClient, path: str,  # type: ignore[override]
            status: int = 200, **kwargs: Any) -> str:
        response = client.get(path, **kwargs)
        assert response.status_code == status, (name, path, response.status_code)
        self[name] = response.text
        return response.text

    def post(self, name: str, client: FlaskClient, path: str, status: int,
             **kwargs: Any) -> str:
        response = client.post(path, **kwargs)
        assert response.status_code == status, (name, path, response.status_code,
                                                response.text[:300])
        self[name] = response.text
        return response.text


def _created(site: Api, game: str, pages: Pages) -> tuple[FlaskClient, str]:
    owner = site.app.test_client()
    new = owner.get(f"/new?game={game}")
    created = owner.post("/new", data=_form(game, _token(new.text)))
    assert created.status_code == 303, created.text
    uid = str(created.headers["Location"]).split("/games/")[1].split("/")[0]
    setup = pages.get("setup (open)", owner, f"/games/{uid}/setup")
    pages.post("setup: a refused invitation", owner, f"/games/{uid}/invite", 400,
               data={"csrf_token": _token(setup), "position": "1", "email": "no such address"})
    return owner, uid


def _joined(site: Api, owner: FlaskClient, uid: str, pages: Pages) -> list[FlaskClient]:
    setup = owner.get(f"/games/{uid}/setup").text
    players = []
    for token in dict.fromkeys(re.findall(r"/join/([A-Za-z0-9_\-.]+)", setup)):
        browser = site.app.test_client()
        invitation = browser.get(f"/join/{token}")
        joined = browser.post(f"/join/{token}", data={"csrf_token": _token(invitation.text)})
        assert joined.status_code == 303
        players.append(browser)
    started = owner.post(f"/games/{uid}/start", data={"csrf_token": _token(setup)})
    assert started.status_code == 303
    pages.get("setup (racing)", owner, f"/games/{uid}/setup")
    pages.get("game (owner)", owner, f"/games/{uid}")
    return players


def _owner_pages(owner: FlaskClient, uid: str, pages: Pages) -> None:
    setup = pages["setup (racing)"]
    token = _token(setup)
    pages.post("setup: a refused web hook", owner, f"/games/{uid}/webhooks", 400,
               data={"csrf_token": token, "url": "http://localhost/hooks", "format": "json"})
    paused = owner.post(f"/games/{uid}/pause", data={"csrf_token": token, "reason": ""})
    assert paused.status_code == 303
    pages.get("setup (paused)", owner, f"/games/{uid}/setup")
    pages.get("game (paused)", owner, f"/games/{uid}")
    resumed = owner.post(f"/games/{uid}/resume", data={"csrf_token": token})
    assert resumed.status_code == 303


def _seat(site: Api, uid: str, position: int) -> Seat:
    with site.service.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        return s.exec(select(Seat).where(Seat.game_id == game.id,
                                         Seat.position == position)).one()


def _link_pages(site: Api, uid: str, pages: Pages) -> None:
    """The signed links of the seat to act: open the game, confirm an option (asked, without
    its form's token, done, and used again)."""
    secret_key = site.service.settings.secret_key
    state = site.service.state(uid, None)
    position, seq = state["game"]["to_act"][0], int(state["seq"])
    seat = _seat(site, uid, position)
    options = site.service.options(uid, position)["options"]
    OFFERED.update(re.findall(r"[^\W\d_]+", " ".join(options)))
    option = options[0]
    browser = site.app.test_client()
    game_link = f"/g/{make_game_token(secret_key, seat.secret, uid, position)}"
    opened = pages.get("/g open", browser, game_link)
    browser.post(game_link, data={"csrf_token": _token(opened)})
    link = "/l/" + make_option_token(secret_key, seat.secret,
                                     OptionLink(uid, position, seq, option))
    confirm = pages.get("/l confirm", browser, link)
    pages.post("/l without its form's token", browser, link, 400, data={})
    done = browser.post(link, data={"csrf_token": _token(confirm)})
    assert done.status_code in (200, 303), done.status_code
    if done.status_code == 303:
        pages.get("/l done", browser, str(done.headers["Location"]))
    else:
        pages["/l done"] = done.text
    again = browser.get(link)
    assert again.status_code in (409, 410), again.status_code
    pages["/l used again"] = again.text


def _refusals(site: Api, uid: str, pages: Pages) -> None:
    """Every refusal of a link the code knows, each page made as the link view makes it."""
    fields = {"owner": "Ann", "mine": "Ben", "option": "pass", "winner": "", "why": "—",
              "waiting": "Ann"}
    for reason in linkwords.REFUSALS:
        with site.app.test_request_context("/l/x?lang=en"):
            page, status = linkwords.refused_page(linkwords.Refused(reason, uid=uid, lang="en",
                                                                  **fields))
        assert status == linkwords.STATUS[reason]
        pages[f"link refused: {reason}"] = page


def _errors(site: Api, owner: FlaskClient, players: list[FlaskClient], uid: str,
            pages: Pages) -> None:
    html = {"Accept": "text/html"}
    stranger = site.app.test_client()
    me = owner.get(f"/games/{uid}/setup").text
    pages.post("403", stranger, f"/games/{uid}/pause", 403,
               data={"csrf_token": _token(stranger.get("/new").text)})
    pages.get("404 (a game)", owner, "/games/" + "0" * 32, 404, headers=html)
    pages.get("404 (no page)", owner, "/no/such/page?lang=pl", 404, headers=html)
    pages.get("405", owner, f"/games/{uid}/pause", 405, headers=html)
    pages.post("400 (an expired form)", owner, f"/games/{uid}/pause", 400, data={})
    mover, seq = _mover(site, players, uid)
    token = _token(mover.get(f"/games/{uid}").text)
    pages.post("422", mover, f"/games/{uid}/move", 422,
               data={"csrf_token": token, "seq": str(seq), "option": "fly to the moon"})
    pages.post("409", mover, f"/games/{uid}/move", 409,
               data={"csrf_token": token, "seq": str(seq - 1), "option": "pass"})
    pages.post("413", owner, f"/games/{uid}/pause", 413,
               data={"csrf_token": _token(me), "reason": "x" * 3_000_000})
    with site.app.test_request_context(f"/games/{uid}", headers=html):  # (a page's)
        failed = site.app.handle_user_exception(InternalServerError())
        pages["500"] = str(failed[0])
    with site.app.test_request_context("/no/page", headers=html):  # (no page's)
        failed = site.app.handle_user_exception(InternalServerError())
        pages["500 (no page)"] = str(failed[0])
        away = site.app.handle_user_exception(OperationalError("SELECT 1", {}, Exception()))
        pages["503"] = away.get_data(as_text=True)


def _mover(site: Api, players: list[FlaskClient], uid: str) -> tuple[FlaskClient, int]:
    """A browser whose seat is to act (the computer's turns played), and the log's length."""
    for _ in range(200):
        state = site.service.state(uid, None)
        acting, seq = state["game"]["to_act"], int(state["seq"])
        for browser in players:
            page = browser.get(f"/games/{uid}").text
            if f'name="seq" value="{seq}"' in page and "/move" in page:
                options = site.service.options(uid, acting[0])["options"]
                OFFERED.update(re.findall(r"[^\W\d_]+", " ".join(options)))
                return browser, seq
        assert acting, "the race ended"
        options = site.service.options(uid, acting[0])["options"]
        OFFERED.update(re.findall(r"[^\W\d_]+", " ".join(options)))
        option = options[0]
        site.service.submit(uid, acting[0], seq, option)
    raise AssertionError("no player's turn came")


def _unsubscribe(site: Api, uid: str, pages: Pages) -> None:
    settings = site.service.settings
    seat = _seat(site, uid, 1)
    browser = site.app.test_client()
    base = settings.base_url
    seat_link = unsubscribe_url(base, settings.secret_key, seat.secret, uid, 1)[len(base):]
    pages.get("/u asked", browser, seat_link)  # (no form token: RFC 8058's one click)
    pages.post("/u done", browser, seat_link, 200, data={"mail": "digest"})
    digest = digest_unsubscribe_url(base, settings.secret_key, "ben@example.com",
                                    [(uid, 1)])[len(base):]
    pages.get("/u/digest asked", browser, digest)
    pages.post("/u/digest done", browser, digest, 200, data={"mail": "none"})
    pages.get("/u damaged", browser, "/u/garbage", 400)


def _settings(players: list[FlaskClient], uid: str, pages: Pages) -> None:
    player = players[0]
    me = player.get(f"/games/{uid}/me").text
    player.post(f"/games/{uid}/me/quiet", data={
        "csrf_token": _token(me), "quiet": "22:00-07:00", "timezone": "Europe/Warsaw"})
    player.post(f"/games/{uid}/me/away", data={
        "csrf_token": _token(me), "from": "2030-01-01T00:00", "until": "2030-01-08T00:00",
        "mode": "stretch"})
    pages.get("/me (quiet hours, away)", player, f"/games/{uid}/me")
    pages.post("/me refused away", player, f"/games/{uid}/me/away", 400, data={
        "csrf_token": _token(me), "from": "soon", "until": "", "mode": "stretch"})


def _notation(site: Api) -> set[str]:
    """The words of every input in the logs (the log's input column shows them as written,
    the same in every language) and of every option the test offered."""
    found = set(OFFERED)
    with site.service.session() as s:
        for uid in s.exec(select(Game.uid)).all():
            loaded = site.service.load(s, uid)
            for text in s.exec(select(Move.input).where(Move.game_id == loaded.game.id)).all():
                found |= set(re.findall(r"[^\W\d_]+", f"{text} {loaded.rules.public_input(text)}"))
    return found


def _admin(site: Api, uid: str, pages: Pages) -> None:
    admin = site.app.test_client()
    login = pages.get("admin login", admin, "/admin/login")
    pages.post("admin: a wrong token", admin, "/admin/login", 403,
               data={"csrf_token": _token(login), "token": "wrong", "next": "/admin"})
    signed = admin.post("/admin/login", data={"csrf_token": _token(login), "token": ADMIN_TOKEN,
                                              "next": "/admin"})
    assert signed.status_code == 303
    pages.get("admin", admin, "/admin")
    pages.get("admin replay", admin, f"/admin/replay/{uid}?step=2")


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_other_pages_show_no_words_outside_the_catalogue(site: Api, game: str) -> None:
    pages = Pages()
    owner, uid = _created(site, game, pages)
    players = _joined(site, owner, uid, pages)
    _owner_pages(owner, uid, pages)
    _settings(players, uid, pages)
    _link_pages(site, uid, pages)
    _refusals(site, uid, pages)
    _errors(site, owner, players, uid, pages)
    _unsubscribe(site, uid, pages)
    _admin(site, uid, pages)
    data = DATA | {uid, uid[:8]} | _notation(site)
    data |= {shown for name in FORMATS for shown in (name, name.title())}  # (Slack, Matrix)
    ui = game_ui(game)  # (the notation the pages show as examples)
    data |= set(re.findall(r"[^\W\d_]+", " ".join((ui.notation_example, *ui.reply_examples))))
    found = {name: _unmarked(page, data) for name, page in pages.items()}
    unmarked = {name: words for name, words in found.items() if words}
    assert not unmarked, "\n".join(f"{name}: {words}" for name, words in unmarked.items())
