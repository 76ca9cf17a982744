"""Rate limits (Flask-Limiter) on the endpoints that take secrets, per client address.

- **Links** (``TITANPOST_RATE_LIMIT_LINKS``): the signed link pages of the mails, ``/l/<token>``,
  ``/g/<token>``, ``/u/<token>`` (unsubscribe), ``/signin/<token>`` and the deadlines calendar
  feed, GET and POST together. Every request counts: a link page checks a signature and draws
  a board, and a person clicks a few a day.
- **Login** (``TITANPOST_RATE_LIMIT_LOGIN``): what guesses a secret. Only refusals count, so
  that playing never comes near the limit: an invitation that is unknown or used
  (``POST /api/invitations/accept``, ``/join/<token>``), a wrong creator token typed on a game's
  set-up page, a wrong admin token (``POST /admin/login``), and any API request whose bearer or
  creator token is refused (401, or 403 for a wrong creator token; not a valid token's other
  refusals, such as a move out of turn). Requests that carry no credential are not limited
  there. Once an address is over the limit, every such request from it is refused until the
  window passes, a valid token too: otherwise a guesser would still learn which guess was
  right.

An answer over the limit is 429 with ``Retry-After`` (seconds), JSON on the API and a page
elsewhere, and nothing is done. The client's address is the peer's, or with
``TITANPOST_TRUSTED_PROXIES`` = N the N-th from the right of ``X-Forwarded-For`` (werkzeug's
ProxyFix); a header from a client that is not behind a trusted proxy is ignored. The counters
live in ``TITANPOST_RATE_LIMIT_STORAGE``: ``memory://`` (the default) is per process, so each
gunicorn worker counts alone; ``redis://host:port`` shares them between processes and machines.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from flask import Blueprint, Flask, Response, g, make_response, render_template, request
from flask.typing import ResponseReturnValue
from flask_limiter import Limiter, RateLimitExceeded, RouteLimit
from flask_limiter.util import get_remote_address
from limits import parse_many
from werkzeug.middleware.proxy_fix import ProxyFix

from app.core.config import Settings

LINK_ENDPOINTS = ("links.option_page", "links.option_apply", "links.game_page",
                  "links.game_open", "unsubscribe.confirm", "unsubscribe.apply",
                  "calendar.deadlines_ics", "takeback.link_page", "takeback.link_answer",
                  "signin.confirm", "signin.apply", "signin_api.use")
LOGIN_ENDPOINTS = ("api.accept", "newgame.join", "newgame.accept", "newgame.claim_creator",
                   "admin.admin_login_post")
CREDENTIAL_HEADERS = ("Authorization", "X-Creator-Token")
LIMIT_PREFIX = "titanpost"
"""The prefix of the rate limits' keys in their storage."""
REFUSED_LOGIN = (401, 403, 404)
"""Answers of the login endpoints that mean a guess was wrong (404: no such invitation)."""


def install_limits(app: Flask, settings: Settings, token_apis: Sequence[Blueprint]) -> Limiter:
    """Trust the configured proxies, and limit the link, login and API endpoints (already
    registered on ``app``) by client address. ``token_apis`` are the blueprints that
    authenticate with bearer or creator tokens: their one limit is :class:`ApiLogin`'s."""
    api_names = frozenset(blueprint.name for blueprint in token_apis)
    if settings.trusted_proxies:
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=settings.trusted_proxies, x_proto=0, x_host=0, x_port=0,
            x_prefix=0)
    limiter = Limiter(get_remote_address, app=app, storage_uri=settings.rate_limit_storage,
                      strategy="fixed-window", key_prefix=LIMIT_PREFIX)
    if settings.rate_limit_links:
        links = limiter.shared_limit(settings.rate_limit_links, scope="links")
        _wrap(app, LINK_ENDPOINTS, links)
    if settings.rate_limit_login:
        login = limiter.shared_limit(settings.rate_limit_login, scope="login",
                                     deduct_when=_wrong_guess)
        _wrap(app, LOGIN_ENDPOINTS, login)
        ApiLogin(limiter, settings.rate_limit_login, api_names).install(app)
    for blueprint in token_apis:
        limiter.exempt(blueprint)  # (the API's one limit is ApiLogin's)
    _skip_for_the_api(app, limiter, api_names)
    app.register_error_handler(RateLimitExceeded, _too_many(limiter))
    app.register_error_handler(ApiLoginLimited, _too_many(limiter))
    return limiter


def _skip_for_the_api(app: Flask, limiter: Limiter, api_names: frozenset[str]) -> None:
    """Flask-Limiter's check is not run at all for the API's requests, which it exempts
    anyway: it would work out that they have no limits anew for each (the filtering of every
    limit it knows), a few percent of a move. Left as it is if its hook is not found."""
    hooks = app.before_request_funcs.get(None, [])
    for index, hook in enumerate(hooks):
        if getattr(hook, "__self__", None) is limiter and getattr(
                hook, "__name__", "") == "_check_request_limit":
            check = hook

            def unless_api(check: Callable[[], Any] = check) -> None:
                if request.blueprint not in api_names:
                    check()

            hooks[index] = unless_api
            return


class ApiLoginLimited(Exception):
    """An API request with a credential, from an address over the login limit."""

    def __init__(self, reset_at: float) -> None:
        super().__init__("too many refused credentials")
        self.reset_at = reset_at


class ApiLogin:
    """The login limit on the API's requests that carry a credential (the module's
    docstring says which count), on Flask-Limiter's counters: its storage and strategy, the
    keys of its shared limit ``login`` (which the pages' login endpoints count on too).

    Checked here rather than by Flask-Limiter, which works out every request's limits anew
    (its decorators, defaults, exemptions and meta limits): about 5% of a move's CPU, for one
    limit known beforehand."""

    def __init__(self, limiter: Limiter, text: str, api_names: frozenset[str]) -> None:
        self.limiter = limiter
        self.items = sorted(parse_many(text))
        self.api_names = api_names

    def install(self, app: Flask) -> None:
        app.before_request(self.check)
        app.after_request(self.deduct)

    def check(self) -> None:
        """Refuse an API request with a credential from an address over the limit (before
        anything else looks at the request, its body checked for unusable text aside)."""
        if (request.blueprint not in self.api_names or request.endpoint in LOGIN_ENDPOINTS
                or _no_credentials()):  # (accepting an invitation: the pages' limit)
            return
        key = (LIMIT_PREFIX, get_remote_address(), "login")
        g.titanpost_login = key
        strategy = self.limiter.limiter
        for item in self.items:
            if not strategy.test(item, *key):
                raise ApiLoginLimited(strategy.get_window_stats(item, *key).reset_time)

    def deduct(self, response: Response) -> Response:
        """Count the request's credential when it was refused."""
        key = g.pop("titanpost_login", None)
        if key is not None and _wrong_token(response):
            for item in self.items:
                self.limiter.limiter.hit(item, *key)
        return response


def _wrap(app: Flask, endpoints: tuple[str, ...], limit: RouteLimit) -> None:
    for endpoint in endpoints:
        limited: Any = limit(app.view_functions[endpoint])
        app.view_functions[endpoint] = limited


def _wrong_guess(response: Response) -> bool:
    return response.status_code in REFUSED_LOGIN


def _wrong_token(response: Response) -> bool:
    """A bearer token missing, unknown, revoked or wrong (401), or a wrong creator token; not
    other refusals of a valid token (a move out of turn, another game's seat)."""
    return response.status_code == 401 or bool(g.get("refused_credential"))


def _no_credentials() -> bool:
    return not any(request.headers.get(name) for name in CREDENTIAL_HEADERS)


TOO_MANY_LINKS = ("Too many link pages were opened from your address in a short time, so this "
                  "one was not: nothing was changed. Try again in {seconds} seconds.")
TOO_MANY_REFUSED = ("Too many refused tokens or invitations came from your address in a short "
                    "time, so this request was not looked at: nothing was changed. Try again "
                    "in {seconds} seconds.")


def _too_many(
        limiter: Limiter) -> Callable[[RateLimitExceeded | ApiLoginLimited], ResponseReturnValue]:
    def too_many(exc: RateLimitExceeded | ApiLoginLimited) -> ResponseReturnValue:
        seconds = (_seconds_to(exc.reset_at) if isinstance(exc, ApiLoginLimited)
                   else _retry_after(limiter))
        endpoint = request.endpoint or ""
        words = TOO_MANY_LINKS if endpoint in LINK_ENDPOINTS else TOO_MANY_REFUSED
        message = words.format(seconds=seconds)
        if request.path.startswith("/api/"):
            response = make_response({"error": message, "retry_after": seconds}, 429)
        else:
            response = make_response(render_template(
                "pages/error.html", status=429, title="Too many requests", message=message,
                back=None), 429)
        response.headers["Retry-After"] = str(seconds)
        if endpoint in LINK_ENDPOINTS:
            response.headers["Cache-Control"] = "no-store"
            response.headers["Referrer-Policy"] = "no-referrer"
        return response

    return too_many


def _retry_after(limiter: Limiter) -> int:
    """Seconds until the breached limit's window resets (at least 1)."""
    breached = limiter.current_limit
    if breached is None:
        return 60
    return _seconds_to(breached.reset_at)


def _seconds_to(reset_at: float) -> int:
    return max(1, math.ceil(reset_at - time.time()))
