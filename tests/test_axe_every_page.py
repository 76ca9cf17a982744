"""axe-core finds no violation of any impact on any page of either game, in either language, on a
390 px phone and a 1280 px desktop (issue 40).

The pages are the app's routes (``app.url_map``): one walk per game, language and width sets up
its games through the service and then goes through every page as its reader would (a stranger,
a spectator, each player through the mails' links, the game's owner, a signed-in account, the
admin), submitting the forms whose answer is a page; axe-core (``axe-playwright-python``, which
carries its own copy: nothing is fetched) checks each page the browser lands on. Every route the
walk reached is recorded (the main frame's navigations, redirects included), and the test fails
when a route is neither reached nor left out in :data:`LEFT_OUT` with the reason: a new page
route has to join the walk. Each page must also speak the walk's language.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
from sqlmodel import col, select

from app.core.models import OutboxMail
from app.games import GAMES as REGISTERED

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]

WIDTHS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
LANGUAGES = {"en": "en-GB", "pl": "pl-PL"}

FORM_ACTION = ("a form's action: answers with a redirect (303) to a page of the walk, or with "
               "the error page the walk visits")
SCRIPT_CALL = "called by the page's script (an answer to it, not a page)"
LEFT_OUT = {
    "static": "the stylesheet, scripts and pictures the pages load",
    "docs_asset": "Swagger UI's files for the API's documentation",
    "openapi.docs": "the API's documentation: Swagger UI's own page, not ours",
    "openapi.swagger_ui_oauth_redirect": "Swagger UI's OAuth helper (no page of ours)",
    "openapi.spec": "JSON (the API's description)",
    "health.healthz": "JSON for the monitoring",
    "pictures.board": "a PNG (the mails' board)",
    "installable.favicon": "an icon",
    "installable.icon": "an icon",
    "installable.manifest": "JSON (the web app's manifest)",
    "installable.service_worker": "JavaScript (the service worker)",
    "installable.push_key": "JSON (the push server's public key)",
    "installable.push_subscribe": SCRIPT_CALL,
    "installable.push_unsubscribe": SCRIPT_CALL,
    "live.game_stream": "an event stream the game page's script reads",
    "live.my_games_stream": "an event stream the My games page's script reads",
    "play.preview": "SVG the game page's script shows (a preview of an option)",
    "calendar.deadlines_ics": "an iCalendar feed",
    "devmail.outbox": "served in development only (TITANPOST_ENV=development): a developer's tool",
    "devmail.show": "served in development only: a developer's tool",
    "devmail.raw": "served in development only: a mail's source",
    "devmail.html": "served in development only: a mail's HTML, as sent",
    "devmail.image": "served in development only: a mail's picture",
    "rematch.give_share": SCRIPT_CALL,
    "privacy.data_download": "a file (the address's data as JSON or ZIP)",
    **dict.fromkeys((
        "admin.admin_logout", "newgame.invite", "newgame.start", "newgame.abandon",
        "newgame.accept", "me.add_away", "me.cancel_away", "me.set_quiet", "me.change_settings",
        "me.test_mail", "me.issue_token", "seats.replace_seat", "play.post_chat", "play.move",
        "play.resign", "rematch.make_here", "rematch.decline_here", "rematch.settle_here",
        "rematch.make_from_mail", "rematch.decline_from_mail", "rematch.settle_from_mail",
        "clock.resume", "signin.signout", "signin.take_seat", "signin.open_seat",
        "takeback.page_ask", "takeback.page_answer", "takeback.link_answer", "webhooks.add_hook",
        "webhooks.remove_hook", "notes.add", "notes.edit", "notes.delete",
        "standings.add_member", "standings.remove_member", "standings.delete_group",
        "privacy.forget",
    ), FORM_ACTION),
}
"""Routes the walk does not open, by endpoint, with the reason (besides ``/api/``: JSON)."""


@cache
def axe() -> Any:
    """axe-core, read once (its script is half a megabyte)."""
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


def is_left_out(endpoint: str, rule: str) -> bool:
    return endpoint in LEFT_OUT or rule.startswith("/api/")


@dataclass
class Walk:
    """One walk: the server, the browser's page, the language, and what it found."""

    server: LiveServer
    page: Any
    lang: str
    tag: str
    """Which walk this is (its game, width and language), in its players' addresses."""
    problems: list[str] = field(default_factory=list)
    reached: set[str] = field(default_factory=set)
    checked: int = 0

    @property
    def svc(self) -> Any:
        return self.server.service

    def url(self, path: str) -> str:
        return path if path.startswith("http") else self.server.url + path

    def check(self, name: str) -> None:
        """axe-core's violations on the page shown, of every impact, and its language."""
        self.checked += 1
        shown = self.page.locator("html").get_attribute("lang")
        if shown != self.lang:
            self.problems.append(f"{name}: the page speaks {shown!r}, not {self.lang!r}")
        for v in axe().run(self.page).response["violations"]:
            where = "; ".join(" ".join(node["target"]) for node in v["nodes"][:4])
            self.problems.append(f"{name}: {v['id']} ({v['impact']}): {v['help']} at {where}")

    def visit(self, name: str, path: str, status: int = 200) -> None:
        response = self.page.goto(self.url(path))
        assert response is not None and response.status == status, (name, path, response.status)
        self.check(name)

    def submit(self, name: str, action: Callable[[], Any], status: int = 200) -> None:
        """Do ``action`` (a click that sends a form) and check the page it leads to."""
        with self.page.expect_navigation() as navigation:
            action()
        response = navigation.value
        assert response is not None and response.status == status, (name, response.status)
        self.check(name)

    def post(self, name: str, path: str, fields: dict[str, str], status: int) -> None:
        """Send a form to ``path`` from the page shown (a form of our own: the way to the
        pages only a wrong or stale form leads to)."""
        script = """([action, fields]) => { const f = document.createElement("form");
            f.method = "post"; f.action = action;
            for (const [k, v] of Object.entries(fields)) {
              const i = document.createElement("input");
              i.type = "hidden"; i.name = k; i.value = v; f.appendChild(i); }
            document.body.appendChild(f); f.submit(); }"""
        self.submit(name, lambda: self.page.evaluate(script, [self.url(path), fields]), status)

    def token(self) -> str:
        """This browser's form token (from a page of the walk's own, read without showing)."""
        text = self.page.request.get(self.url("/new")).text()
        found = re.search(r'name="csrf_token" value="([^"]+)"', text)
        assert found is not None
        return found.group(1)


def record_routes(walk: Walk) -> None:
    """Record the endpoint of every main-frame navigation (redirects too) in ``walk.reached``."""
    adapter = walk.server.app.url_map.bind("localhost")

    def seen(request: Any) -> None:
        if not request.is_navigation_request() or request.frame != walk.page.main_frame:
            return
        parts = urlsplit(request.url)
        if f"{parts.scheme}://{parts.netloc}" != walk.server.url:
            return
        try:
            endpoint, _ = adapter.match(parts.path, method=request.method)
        except Exception:  # (an address no route has: the 404 page)
            return
        walk.reached.add(endpoint)

    walk.page.on("request", seen)


def address(walk: Walk, name: str) -> str:
    """A player's address, this walk's own (sign-in links are limited per address)."""
    return f"{name.lower()}.{walk.tag}@example.com"


def seats(walk: Walk, *names: str) -> list[dict[str, Any]]:
    people = [{"email": address(walk, name), "language": walk.lang} for name in names]
    return [*people, *[{"bot": True}] * max(1, 3 - len(people))]


def start(walk: Walk, game: str, *names: str, name: str) -> dict[str, Any]:
    created: dict[str, Any] = walk.svc.create_game(seats=seats(walk, *names), seed=3,
                                                   rules_name=game, name=name)
    for invitation, player in zip(created["invitations"], names, strict=True):
        walk.svc.accept(invitation["invite_token"], name=player)
    walk.svc.start(created["game"], created["creator_token"])
    return created


def game_link(walk: Walk, uid: str, position: int) -> str:
    from app.web.links import game_link as link

    return str(link(walk.svc.settings, walk.svc.link_seat(uid, position).secret, uid, position))


def act(walk: Walk, uid: str) -> tuple[int, int, list[str]]:
    state = walk.svc.state(uid, None)
    acting, seq = state["game"]["to_act"][0], int(state["seq"])
    return acting, seq, walk.svc.options(uid, acting)["options"]


# ---------------------------------------------------------------------- the walk's parts


def stranger_pages(walk: Walk, game: str) -> str:
    """The home page, the new-game form (and its refusal), the set-up page of a game not
    started (to a stranger, then its owner), its invitation, errors; returns that game."""
    walk.visit("home", "/")
    walk.visit("new game", f"/new?game={game}")
    walk.post("new game: a refused form", "/new", {"csrf_token": walk.token(), "game": game},
              400)
    created = walk.svc.create_game(seats=seats(walk, "Ann", "Ben"), rules_name=game,
                                   name="Open table")
    uid = created["game"]
    walk.visit("set-up page (a stranger: the creator's token asked)", f"/games/{uid}/setup")
    walk.page.locator("input[name=creator_token]").fill(created["creator_token"])
    walk.submit("set-up page (its owner, invitations open)",
                lambda: walk.page.locator("input[name=creator_token]").press("Enter"))
    walk.visit("invitation", f"/join/{created['invitations'][0]['invite_token']}")
    walk.visit("404 (no such page)", "/no/such/page", 404)
    walk.visit("404 (no such game)", "/games/" + "0" * 32, 404)
    walk.visit("405", f"/games/{uid}/start", 405)
    walk.visit("a damaged option link", "/l/garbage", 400)
    walk.visit("a damaged game link", "/g/garbage", 400)
    return uid


def spectator_pages(walk: Walk, uid: str) -> None:
    walk.visit("game page (a spectator)", f"/games/{uid}")
    walk.visit("log (a spectator)", f"/games/{uid}/log")
    walk.post("403 (a stranger's form)", f"/games/{uid}/pause",
              {"csrf_token": walk.token(), "reason": ""}, 403)
    walk.post("400 (a form without its token)", f"/games/{uid}/pause", {"reason": ""}, 400)


def player_pages(walk: Walk, uid: str) -> None:
    """Ann (seat 1) through her mail's game link, waiting; Ben (seat 2) moves and asks to take
    it back: Ann's takeback link, her turn by its option link, the log and her settings."""
    from app.features.takeback.takebacks import install
    from app.web.links import option_link

    walk.visit("the mail's game link", game_link(walk, uid, 0))
    walk.submit("game page (a player, waiting)",
                lambda: walk.page.locator("form.open button").click())
    acting, seq, options = act(walk, uid)
    assert acting == 1, "Ben does not act first"
    walk.svc.submit(uid, 1, seq, options[0])
    takeback = install(walk.svc).ask(uid, 1)["takeback"]
    secret = walk.svc.link_seat(uid, 0).secret
    walk.visit("a takeback link", install(walk.svc).link(uid, 0, secret, takeback["id"]))
    walk.visit("game page (a player, a takeback asked)", f"/games/{uid}")
    install(walk.svc).answer(uid, 0, takeback["id"], False)
    acting, seq, options = act(walk, uid)
    for _ in range(20):  # (Ben's and the computer's turns first)
        if acting == 0:
            break
        walk.svc.submit(uid, acting, seq, options[0])
        acting, seq, options = act(walk, uid)
    assert acting == 0, "Ann's turn does not come"
    walk.visit("game page (a player, to act)", f"/games/{uid}")
    link = option_link(walk.svc.settings, secret, uid, 0, seq, options[0])
    walk.visit("an option link", link)
    walk.submit("an option link, confirmed",
                lambda: walk.page.locator("form button[type=submit]").first.click())
    walk.visit("an option link, used again", link, 409)
    walk.visit("log (a player)", f"/games/{uid}/log")
    walk.visit("settings", f"/games/{uid}/me")
    walk.visit("My games (this browser's seats)", "/games")


def owner_pages(walk: Walk, uid: str, creator_token: str) -> None:
    walk.visit("set-up page (racing, a stranger)", f"/games/{uid}/setup")
    walk.page.locator("input[name=creator_token]").fill(creator_token)
    walk.submit("set-up page (racing, its owner)",
                lambda: walk.page.locator("input[name=creator_token]").press("Enter"))
    walk.visit("game page (its owner)", f"/games/{uid}")
    walk.submit("game page (paused)", lambda: walk.page.locator(
        "form[action*='/pause'] button[type=submit]").first.click())
    walk.visit("set-up page (paused)", f"/games/{uid}/setup")


def mail_pages(walk: Walk, uid: str) -> None:
    """Unsubscribe links (a seat's and a digest's: asked and done; damaged)."""
    from app.web.linktokens import digest_unsubscribe_url, unsubscribe_url

    base, key = walk.svc.settings.base_url, walk.svc.settings.secret_key
    secret = walk.svc.link_seat(uid, 0).secret
    walk.visit("unsubscribe", unsubscribe_url(base, key, secret, uid, 0))
    walk.submit("unsubscribe, done",
                lambda: walk.page.locator("form button[type=submit]").first.click())
    walk.visit("unsubscribe from the digest",
               digest_unsubscribe_url(base, key, address(walk, "Ann"), [(uid, 0)]))
    walk.submit("unsubscribe from the digest, done",
                lambda: walk.page.locator("form button[type=submit]").first.click())
    walk.visit("a damaged unsubscribe link", "/u/garbage", 400)


def finished_pages(walk: Walk, game: str) -> None:
    created = start(walk, game, "Ann", name="Finished race")
    uid = created["game"]
    walk.svc.resign(uid, 0)
    assert walk.svc.state(uid, None)["game"]["status"] == "finished"
    link = game_link(walk, uid, 0)
    walk.visit("the mail's game link (finished)", link)
    walk.submit("game page (finished)", lambda: walk.page.locator("form.open button").click())
    walk.visit("log (finished)", f"/games/{uid}/log")
    walk.visit("the mail's rematch link", f"{link}/rematch")


def signin_pages(walk: Walk) -> None:
    walk.visit("sign in", "/signin")
    walk.page.locator("input[name=email]").fill(address(walk, "Ann"))
    walk.submit("sign in: the link sent",
                lambda: walk.page.locator("input[name=email]").press("Enter"))
    with walk.svc.session() as s:
        mail = s.exec(select(OutboxMail).where(OutboxMail.kind == "signin",
                                                  OutboxMail.recipient == address(walk, "Ann"))
                      .order_by(col(OutboxMail.id).desc())).first()
        assert mail is not None
        token = mail.payload["token"]
    walk.visit("a damaged sign-in link", "/signin/garbage", 400)
    walk.visit("a sign-in link", f"/signin/{token}")
    walk.submit("My games (signed in)",
                lambda: walk.page.locator("form button[type=submit]").first.click())
    walk.visit("my data", "/account/data")
    forget = walk.page.locator("#forget-form button")
    walk.page.locator("#forget-confirm").fill("someone@example.com")
    walk.submit("forget me: a wrong confirmation", forget.click, 400)
    walk.page.locator("#forget-confirm").fill(address(walk, "Ann"))
    walk.submit("forget me: refused while playing", forget.click, 409)
    walk.visit("forgotten", "/account/forgotten")


def standings_pages(walk: Walk) -> None:
    """The standings of the address signed in (its finished race), and a group it makes."""
    walk.visit("standings", "/standings")
    walk.page.locator("#group-name").fill("Friday")
    walk.submit("a group of the standings",
                lambda: walk.page.locator("#new-group button[type=submit]").click())


def admin_pages(walk: Walk, started: str, open_table: str) -> None:
    from tests.browser import ADMIN_TOKEN

    walk.visit("admin: sign in", "/admin/login")
    walk.page.locator("input[name=token]").fill("wrong")
    walk.submit("admin: a wrong token", lambda: walk.page.locator("input[name=token]")
                .press("Enter"), 403)
    walk.page.locator("input[name=token]").fill(ADMIN_TOKEN)
    walk.submit("admin: the games", lambda: walk.page.locator("input[name=token]")
                .press("Enter"))
    walk.visit("admin: a replay", f"/admin/replay/{started}?step=1")
    walk.visit("admin: a replay's start", f"/admin/replay/{started}?step=0")
    walk.visit("admin: a replay of a game not started", f"/admin/replay/{open_table}")


# ---------------------------------------------------------------------- the test


CASES = [(game, width, lang) for game in sorted(REGISTERED) for lang in LANGUAGES
         for width in WIDTHS]


@pytest.mark.parametrize(("game", "width", "lang"), CASES)
def test_axe_finds_nothing_on_any_page(live_server: LiveServer, browser: Any, game: str,
                                       width: str, lang: str) -> None:
    options: dict[str, Any] = {"viewport": WIDTHS[width], "locale": LANGUAGES[lang]}
    if width == "phone":
        options.update(is_mobile=True, has_touch=True)
    context = browser.new_context(**options)
    context.set_default_timeout(15_000)
    try:
        walk = Walk(live_server, context.new_page(), lang=lang, tag=f"{game}.{width}.{lang}")
        record_routes(walk)
        open_table = stranger_pages(walk, game)
        created = start(walk, game, "Ann", "Ben", name="Table of two")
        uid = created["game"]
        spectator_pages(walk, uid)
        player_pages(walk, uid)
        mail_pages(walk, uid)
        finished_pages(walk, game)
        walk.visit("standings (not signed in)", "/standings")
        signin_pages(walk)
        standings_pages(walk)
        admin_pages(walk, uid, open_table)
        owner_pages(walk, uid, created["creator_token"])
    finally:
        context.close()

    routes = {rule.endpoint: rule.rule for rule in live_server.app.url_map.iter_rules()}
    unknown = sorted(f"{rule} ({endpoint})" for endpoint, rule in routes.items()
                     if endpoint not in walk.reached and not is_left_out(endpoint, rule))
    assert not unknown, ("routes the walk never reached and LEFT_OUT does not list (a new page "
                         "joins the walk, anything else LEFT_OUT with the reason): "
                         + ", ".join(unknown))
    stale = sorted(set(LEFT_OUT) - set(routes))
    assert not stale, f"LEFT_OUT names routes the app no longer has: {stale}"
    assert walk.checked >= 40
    assert not walk.problems, "\n".join(walk.problems)
