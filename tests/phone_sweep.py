"""The pages and games the phone sweep (tests/test_phone_sweep.py) opens, and what it measures.

:func:`set_up` makes, on the live server and with Flask's test client (as a browser would,
through the new-game form and the join pages), the games of one game and one language: one
still waiting for a player (its join page and set-up page), one racing with the player to act
and a takeback waiting for the player's answer, and one finished (its rematch page). Its
:class:`Site` lists the addresses of every page, and the cookies of a player (who also created
the games), of a spectator (none) and of the admin.

:data:`MEASURE` is the script run in each page: the page's width against the window's, what
sticks out past the width, the controls smaller than 24x24 CSS px (WCAG 2.2's target size; a
link inside running text is exempt, as WCAG exempts it), and the board picture's side panel (each
game's picture marks it as a group of class ``side-panel``): the smallest of its texts shown, as
large as the page shows it (its font size times the picture's scale), and the smallest text of
its facts as HTML (``.board-facts``), which a narrow page shows instead of the picture's panel;
the scrolling table regions (``.table-wrap``) that need scrolling sideways; the lists
(``<select>``, those in closed ``<details>`` too) whose options' words would be cut when chosen
(wider, in the list's font, than its width but for its padding and its arrow); the page's
height; and whether the page is a game page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from flask.testing import FlaskClient
from sqlmodel import select

from app.core.models import Game, OutboxMail, Seat
from app.features.signin.signins import ask_link
from app.features.takeback.takebacks import Takebacks
from app.web.linktokens import (
    OptionLink,
    digest_unsubscribe_url,
    make_game_token,
    make_option_token,
    unsubscribe_url,
)
from tests.gamefixtures import game_fixture

PAGE_ROUTES: dict[str, str] = {
    "/": "/",
    "/new": "/new?game={game}",
    "/games": "/games",
    "/signin": "/signin",
    "/signin/<token>": "/signin/{signin}",
    "/standings": "/standings",
    "/join/<token>": "/join/{invite}",
    "/games/<uid>/setup": "/games/{open}/setup",
    "/games/<uid>": "/games/{racing}",
    "/games/<uid>/log": "/games/{racing}/log",
    "/games/<uid>/me": "/games/{racing}/me",
    "/g/<token>": "/g/{game_link}",
    "/g/<token>/rematch": "/g/{finished_link}/rematch",
    "/l/<token>": "/l/{option_link}",
    "/t/<token>": "/t/{takeback_link}",
    "/u/<token>": "{unsubscribe}",
    "/u/digest/<token>": "{digest_unsubscribe}",
    "/admin": "/admin",
    "/admin/login": "/admin/login",
    "/admin/replay/<uid>": "/admin/replay/{racing}?step=2",
    "/account/forgotten": "/account/forgotten",
}
"""Every page route (GET, HTML) and the address the sweep opens for it."""
MORE_PAGES = ("/games/{setup_racing}/setup", "/games/{finished}", "/games/{finished}/log",
              "/games/{open}", "/games/{taking}", "/no/such/page")
"""Further states of the same routes: the set-up page of a running game, a finished game and
its log, a game still waiting for players, one with a takeback waiting for the player's answer,
and the 404 page."""
LEFT_OUT: dict[str, str] = {
    "/api/docs": "Swagger UI's own page (a developer's, drawn by its own stylesheet)",
    "/docs/oauth2-redirect": "Swagger UI's OAuth helper (no page of ours)",
    "/dev/mail": "the development outbox (a developer's tool); the mails it shows are swept",
    "/dev/mail/<int:mail_id>": "the development outbox's frame around a mail (as above)",
    "/dev/mail/<int:mail_id>/html": "a mail's HTML, swept as the mails are",
    "/games/<uid>/preview": "an option's preview: an SVG picture, no page",
    "/board/<token>.png": "a picture",
    "/games/<uid>/me/deadlines.ics": "a calendar file",
    "/dev/mail/<int:mail_id>.eml": "a raw mail",
    "/dev/mail/<int:mail_id>/image/<path:cid>": "a picture",
    "/standings/groups/<uid>": "a signed-in address's own group (no role here signs in): "
                               "tests/test_standings_browser.py opens it on a phone",
    "/account/data": "needs a sign-in: tests/test_privacy_browser.py opens it on a phone",
    "/account/data/download.<kind>": "a file (JSON or ZIP)",
}
"""GET routes the sweep does not open, each with the reason (besides /api/..., JSON, and the
files and streams :func:`is_page_route` knows are no pages)."""
NOT_PAGES = ("/api/", "/static/", "/icons/", "/favicon.ico", "/manifest.webmanifest", "/sw.js",
             "/push/key", "/healthz", "/live/", "/games/<uid>/live")


def is_page_route(rule: str) -> bool:
    """Whether a GET route may be an HTML page (JSON, files and streams are not)."""
    return not any(rule.startswith(prefix) for prefix in NOT_PAGES) or rule == "/api/docs"


@dataclass
class Site:
    """One game and language's set-up games: the addresses to open, and each role's cookies."""

    game: str
    lang: str
    ids: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def addresses(self) -> list[str]:
        sep = {True: "&", False: "?"}
        paths = [template.format(game=self.game, **self.ids)
                 for template in (*PAGE_ROUTES.values(), *MORE_PAGES)]
        return [f"{path}{sep['?' in path]}lang={self.lang}" for path in paths]


def token_of(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, "no form token on the page"
    return found.group(1)


def _form(game: str, lang: str, token: str) -> dict[str, str]:
    return {"csrf_token": token, "name": "Wyścig piątkowy", "deadline_hours": "24",
            "spectators": "on", "seat0_kind": "human", "seat0_email": "ann@example.com",
            "seat0_name": "Ann", "seat0_lang": lang, "seat1_kind": "human",
            "seat1_email": "ben@example.com", "seat1_name": "Ben", "seat1_lang": lang,
            "seat2_kind": "computer", **{f"seat{i}_kind": "none" for i in range(3, 6)},
            "game": game, **game_fixture(game).new_game_form}


def _created(owner: FlaskClient, game: str, lang: str) -> tuple[str, list[str]]:
    """A game made with the new-game form by ``owner``: its id and its invitations."""
    new = owner.get(f"/new?game={game}&lang={lang}")
    made = owner.post("/new", data=_form(game, lang, token_of(new.text)))
    assert made.status_code == 303, made.text[:500]
    uid = str(made.headers["Location"]).split("/games/")[1].split("/")[0].split("?")[0]
    setup = owner.get(f"/games/{uid}/setup").text
    return uid, list(dict.fromkeys(re.findall(r"/join/([A-Za-z0-9_\-.]+)", setup)))


def _join(client: FlaskClient, invite: str) -> None:
    page = client.get(f"/join/{invite}")
    joined = client.post(f"/join/{invite}", data={"csrf_token": token_of(page.text)})
    assert joined.status_code == 303, joined.text[:500]


def _seat(service: Any, uid: str, position: int) -> Seat:
    with service.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        row: Seat = s.exec(select(Seat).where(Seat.game_id == game.id,
                                              Seat.position == position)).one()
        return row


def _play(service: Any, uid: str) -> int | None:
    """One decision played (the computer's choice for whoever acts); the seat, None at the end."""
    state = service.state(uid, None)
    acting = state["game"]["to_act"]
    if not acting:
        return None
    with service.session() as s:
        loaded = service.load(s, uid)
        move = loaded.rules.bot_move(loaded.state, acting[0])
    service.submit(uid, acting[0], int(state["seq"]), move)
    return int(acting[0])


def _started(app: Any, game: str, lang: str, owner: FlaskClient) -> str:
    uid, invites = _created(owner, game, lang)
    _join(owner, invites[0])
    _join(app.test_client(), invites[1])
    setup = owner.get(f"/games/{uid}/setup").text
    started = owner.post(f"/games/{uid}/start", data={"csrf_token": token_of(setup)})
    assert started.status_code == 303, started.text[:500]
    return uid


def _to_act(service: Any, uid: str, position: int) -> int:
    """Played on until seat ``position`` is to act; the decision's seq."""
    for _ in range(400):
        state = service.state(uid, None)
        if state["game"]["to_act"][:1] == [position]:
            return int(state["seq"])
        assert _play(service, uid) is not None, "the race ended before the seat's turn came"
    raise AssertionError("the seat's turn never came")


def _takeback(service: Any, uid: str) -> int | None:
    """Played on until seat 1 (Ben) may take his last move back, and asked it: the takeback's
    id (waiting for Ann's answer); None if the race ended first."""
    from app.service.errors import BadRequest

    while (last := _play(service, uid)) is not None:
        if last == 1:
            try:
                return int(Takebacks(service).ask(uid, 1)["takeback"]["id"])
            except BadRequest:  # (chance came out since, or nothing to take back)
                continue
    return None


def set_up(server: Any, game: str, lang: str, admin_token: str) -> Site:
    app, service = server.app, server.service
    settings = service.settings
    site = Site(game, lang)
    owner = app.test_client()
    site.ids["open"], invites = _created(owner, game, lang)
    _join(owner, invites[0])
    site.ids["invite"] = invites[1]
    racing = site.ids["racing"] = site.ids["setup_racing"] = _started(app, game, lang, owner)
    seq = _to_act(service, racing, 0)
    ann = _seat(service, racing, 0)
    site.ids["game_link"] = make_game_token(settings.secret_key, ann.secret, racing, 0)
    option = service.options(racing, 0)["options"][0]
    site.ids["option_link"] = make_option_token(settings.secret_key, ann.secret,
                                                OptionLink(racing, 0, seq, option))
    for _ in range(5):  # (a race may end before a move can be taken back: another one)
        taking = site.ids["taking"] = _started(app, game, lang, owner)
        takeback_id = _takeback(service, taking)
        if takeback_id is not None:
            break
    assert takeback_id is not None, "no move could be taken back in five races"
    secret = _seat(service, taking, 0).secret
    site.ids["takeback_link"] = Takebacks(service).link(taking, 0, secret, takeback_id)
    base = settings.base_url
    site.ids["unsubscribe"] = unsubscribe_url(base, settings.secret_key, ann.secret, racing,
                                              0)[len(base):]
    site.ids["digest_unsubscribe"] = digest_unsubscribe_url(
        base, settings.secret_key, "ann@example.com", [(racing, 0)])[len(base):]
    site.ids["takeback_link"] = site.ids["takeback_link"][len(base) + len("/t/"):]
    finished = site.ids["finished"] = _started(app, game, lang, owner)
    while _play(service, finished) is not None:
        pass
    site.ids["finished_link"] = make_game_token(settings.secret_key,
                                                _seat(service, finished, 0).secret, finished, 0)
    ask_link(service, "ann@example.com", "127.0.0.1", lang)
    with service.session() as s:
        rows = s.exec(select(OutboxMail).where(OutboxMail.kind == "signin")).all()
        site.ids["signin"] = str(rows[-1].payload["token"])
    admin = app.test_client()
    login = admin.get("/admin/login")
    signed = admin.post("/admin/login", data={"csrf_token": token_of(login.text),
                                              "token": admin_token, "next": "/admin"})
    assert signed.status_code == 303
    site.cookies = {"player": _cookies(owner, base), "spectator": [],
                    "admin": _cookies(admin, base)}
    return site


def _cookies(client: FlaskClient, url: str) -> list[dict[str, Any]]:
    """The test client's cookies, as Playwright takes them for the live server."""
    return [{"name": cookie.key, "value": cookie.value, "url": url}
            for cookie in client._cookies.values()]


ARROW = 20
"""The CSS px a list's arrow takes of its width (Chromium's, at the pages' font size: a list
250 px wide inside its border, 6.4 px padding each side, shows words 218 px wide whole, and cuts
them at 248 px)."""
MEASURE = """(width) => {
  const ARROW = ARROW_PX;
  const controls = 'a[href], button, input:not([type=hidden]), select, summary, [role=button]';
  const small = [];
  const inText = (el) => {
    if (el.tagName !== 'A') return false;
    // a link with words of its own sentence beside it: WCAG's inline exception
    const block = el.closest('p, li, td, th, dd, dt, figcaption, label, span, small, div, footer');
    if (!block) return false;
    for (const node of el.parentElement.childNodes) {
      if (node.nodeType === 3 && node.textContent.trim().replace(/[·|()]/g, '').trim()) {
        return true;
      }
    }
    return false;
  };
  for (const el of document.querySelectorAll(controls)) {
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (r.width * r.height <= 1 || style.visibility === 'hidden') continue;
    if (el.closest('svg')) continue;  // the board's own shapes: the options are its controls
    if (inText(el)) continue;
    if (r.width < 23.5 || r.height < 23.5) {
      const label = (el.innerText || el.value || el.name || el.getAttribute('aria-label') || '')
        .trim().slice(0, 40);
      small.push(`${el.tagName.toLowerCase()}${el.type ? '[' + el.type + ']' : ''} "${label}" `
        + `${Math.round(r.width)}x${Math.round(r.height)}`);
    }
  }
  // the board picture's side panel: the smallest of its texts shown, as large as it is shown;
  // and the smallest text of its facts in HTML (.board-facts), where the page shows them
  const panel = {marked: document.querySelector('#board svg .side-panel') !== null,
                 svg: null, html: null};
  for (const t of document.querySelectorAll('#board svg .side-panel text')) {
    const r = t.getBoundingClientRect();
    if (r.width * r.height === 0 || !t.textContent.trim()) continue;
    const size = parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;
    if (panel.svg === null || size < panel.svg.size) {
      panel.svg = {size, text: t.textContent.slice(0, 30)};
    }
  }
  for (const el of document.querySelectorAll('.board-facts, .board-facts *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.closest('svg') || el.getBoundingClientRect().height === 0) continue;
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (panel.html === null || size < panel.html.size) {
      panel.html = {size, text: el.textContent.trim().slice(0, 30)};
    }
  }
  // each option of a list (<select>, those in closed <details> too) whose words are wider than
  // the list shows them when chosen (its width but for its padding and its arrow)
  const cut = [];
  const closed = [...document.querySelectorAll('details:not([open])')];
  closed.forEach((d) => { d.open = true; });
  const pen = document.createElement('canvas').getContext('2d');
  for (const el of document.querySelectorAll('select')) {
    const style = getComputedStyle(el);
    if (el.getBoundingClientRect().width === 0 || style.visibility === 'hidden') continue;
    pen.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
      - ARROW;
    for (const option of el.options) {  // (each, as each may be the one chosen)
      const words = pen.measureText(option.text.trim()).width;
      if (words > room + 0.5) {
        cut.push(`select[name=${el.name}] "${option.text.trim()}" ${Math.round(words)} px `
          + `in ${Math.round(room)} px`);
      }
    }
  }
  closed.forEach((d) => { d.open = false; });
  // the scrolling table regions that scroll: wider inside than they are shown
  const scrolling = [...document.querySelectorAll('.table-wrap')]
    .filter((el) => el.getBoundingClientRect().height > 0 && el.scrollWidth > el.clientWidth + 1)
    .map((el) => `${el.getAttribute('aria-label')} ${el.scrollWidth} px in ${el.clientWidth} px`);
  // what sticks out past the width asked for (the innermost such elements, a few)
  const wide = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (wide.length >= 3) break;
    const r = el.getBoundingClientRect();
    if (r.right <= width + 1 || el.closest('svg, .table-wrap, #board')) continue;
    if ([...el.children].some((c) => c.getBoundingClientRect().right > width + 1)) continue;
    wide.push(`${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}`
      + `${el.className && typeof el.className === 'string' ? '.' + el.className : ''} `
      + `to ${Math.round(r.right)} px`);
  }
  return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth,
          height: document.documentElement.scrollHeight,
          small, panel, wide, scrolling, cut, game: document.querySelector('.game-page') !== null};
}""".replace("ARROW_PX", str(ARROW))
