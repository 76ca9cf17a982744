"""The browser's seats: what every page and link blueprint shares about who this browser plays.

A browser has no account: it holds, in its signed session cookie, the seats it has opened (by
joining from an invitation, or by following a signed link from a mail). ``seat_in(uid)`` says
which seat of a game this browser plays, if any. This module imports no blueprint (they are
registered by :func:`app.web.create_app`).

With each seat the cookie keeps a fingerprint of the seat's secret (:func:`seat_key`). Giving a
seat to someone else (``replace_seat``) draws a new secret, so every browser of the old player
stops playing that seat at once, just as the old player's links and API token stop working.

A browser signed in by mail (app/features/signin/signins.py, :func:`signed_in`) also plays every
seat its address holds now and has accepted, read from the seats table on each request: a seat given
to another address is lost at once, and signing out ends it."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, MutableMapping
from typing import Any

from flask import (
    Flask,
    Request,
    Response,
    current_app,
    g,
    has_request_context,
    request,
    session,
)
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface, SessionMixin

from app.core.i18n import LANGUAGES
from app.features.signin.signins import WEB, Account, account_seat, account_seats, account_valid
from app.mail.render import MailRenderer
from app.service import GameService, NotFound

SESSION_SEATS = "seats"
SESSION_SEAT_KEYS = "seat_keys"
SESSION_ACCOUNT = "account"
SESSION_ADMIN = "admin"


def service() -> GameService:
    svc: GameService = current_app.extensions["titanpost.service"]
    return svc


def browser_language() -> str | None:
    """The language the browser prefers most (``Accept-Language``) among those we speak; None
    without a request or a header naming one (``pl-PL`` counts as ``pl``)."""
    if not has_request_context():
        return None
    for tag, quality in request.accept_languages:  # the most preferred first
        code = tag.replace("_", "-").split("-")[0].lower()
        if quality > 0 and code in LANGUAGES:
            return code
    return None


def mail_renderer() -> MailRenderer:
    """The process's mail renderer, made on first use: the board pictures it drew are kept for
    the picture addresses and the dev outbox pages alike."""
    found = current_app.extensions.get("titanpost.mail_renderer")
    if found is None:
        found = MailRenderer(service())
        current_app.extensions["titanpost.mail_renderer"] = found
    assert isinstance(found, MailRenderer)
    return found


def seat_key(seat_secret: str) -> str:
    """What a browser keeps of its seat's secret: enough to notice that the secret changed,
    nothing that could sign a link."""
    return hashlib.sha256(b"titanpost.browser-seat:" + seat_secret.encode()).hexdigest()[:32]


def admin_key() -> str | None:
    """What an admin's browser keeps: a keyed hash (HMAC-SHA256, the server's secret key) of
    the admin token as it is now; None while the admin pages are off.

    A session is the admin's only while it holds the hash of the current token, checked on
    every request (:func:`is_admin`): changing ``TITANPOST_ADMIN_TOKEN`` ends every admin
    session. The cookie is signed, not encrypted, so it keeps nothing of the token that could
    be guessed from without the secret key.
    """
    settings = service().settings
    if settings.admin_token is None:
        return None
    return hmac.new(settings.secret_key.encode(),
                    b"titanpost.admin-session:" + settings.admin_token.encode(),
                    hashlib.sha256).hexdigest()


def sign_in_admin() -> None:
    """This browser is the admin's (for the current admin token)."""
    session[SESSION_ADMIN] = admin_key()


def is_admin() -> bool:
    """Whether this browser signed in as the admin with the admin token the server has now."""
    expected, kept = admin_key(), session.get(SESSION_ADMIN)
    return expected is not None and isinstance(kept, str) and hmac.compare_digest(kept, expected)


def store_seat(store: MutableMapping[str, Any], uid: str, position: int,
               seat_secret: str) -> None:
    """Write seat ``position`` of game ``uid`` into a session mapping ``store``."""
    seats: dict[str, int] = dict(store.get(SESSION_SEATS, {}))
    keys: dict[str, str] = dict(store.get(SESSION_SEAT_KEYS, {}))
    seats[uid] = position
    keys[uid] = seat_key(seat_secret)
    store[SESSION_SEATS] = seats
    store[SESSION_SEAT_KEYS] = keys


def remember_seat(uid: str, position: int) -> None:
    """This browser now plays ``position`` in game ``uid`` (while that seat keeps its secret)."""
    store_seat(session, uid, position, service().link_seat(uid, position).secret)
    session.permanent = True
    _checked().pop(uid, None)


def _checked() -> dict[str, int | None]:
    """This request's answers of :func:`seat_in` (a page asks several times)."""
    if "seats_checked" not in g:
        g.seats_checked = {}
    checked: dict[str, int | None] = g.seats_checked
    return checked


def seat_in(uid: str) -> int | None:
    """The seat this browser plays in game ``uid``: None when it has none, or when the seat
    has been given to someone else since (its secret changed)."""
    checked = _checked()
    if uid not in checked:
        checked[uid] = _verified_seat(uid)
    return checked[uid]


def _verified_seat(uid: str) -> int | None:
    position = session.get(SESSION_SEATS, {}).get(uid)
    key = session.get(SESSION_SEAT_KEYS, {}).get(uid)
    if position is None or not isinstance(key, str):
        return _account_seat(uid)
    try:
        secret = service().link_seat(uid, int(position)).secret
    except (NotFound, TypeError, ValueError):
        return None
    if hmac.compare_digest(key, seat_key(secret)):
        return int(position)
    return _account_seat(uid)


def _account_seat(uid: str) -> int | None:
    account = signed_in()
    return account_seat(service(), account.email, uid) if account is not None else None


def my_seats() -> dict[str, int]:
    """Every game this browser still plays a seat in, with the seat (those of the address it
    signed in as, too)."""
    found = {uid: seat_in(uid) for uid in session.get(SESSION_SEATS, {})}
    account = signed_in()
    if account is not None:
        for uid, position in account_seats(service(), account.email):
            found.setdefault(uid, position)
    return {uid: position for uid, position in found.items() if position is not None}


def signed_in() -> Account | None:
    """The address this browser signed in as by mail, while that sign-in holds (checked
    against the database once a request: signing out anywhere ends it)."""
    if "account_checked" not in g:
        raw = session.get(SESSION_ACCOUNT)
        account = None
        if isinstance(raw, dict) and isinstance(raw.get("e"), str) \
                and isinstance(raw.get("j"), str):
            candidate = Account(raw["e"], raw["j"])
            if account_valid(service(), candidate, WEB):
                account = candidate
        g.account_checked = account
    found: Account | None = g.account_checked
    return found


def sign_in_browser(account: Account) -> None:
    """This browser is now signed in as ``account`` (a used sign-in link)."""
    session[SESSION_ACCOUNT] = {"e": account.email, "j": account.token_id}
    session.permanent = True
    g.pop("account_checked", None)
    _checked().clear()


def sign_out_browser(games: Iterable[str] = ()) -> None:
    """Forget the sign-in, and the seats of its address this browser opened while signed
    in (on a shared computer, signing out leaves none of them behind), and those of
    ``games`` (the seats an address had before it was forgotten)."""
    account = signed_in()
    session.pop(SESSION_ACCOUNT, None)
    if account is not None or games:
        mine = set(games)
        if account is not None:
            mine |= {uid for uid, _ in account_seats(service(), account.email)}
        for name in (SESSION_SEATS, SESSION_SEAT_KEYS):
            kept = {uid: v for uid, v in dict(session.get(name, {})).items() if uid not in mine}
            session[name] = kept
    g.pop("account_checked", None)
    _checked().clear()



class PageSessionInterface(SecureCookieSessionInterface):
    """The signed cookie session, refreshed only by pages.

    A remembered seat makes the session permanent, and Flask would then send the cookie again
    with every answer. A board preview the page fetched just before a move was sent can be
    answered after the move: the cookie it came with (without the move's "Done" notice) would
    replace the move's. So an answer that is no page (a preview, a picture, JSON, an error)
    sends the cookie only when it changed the session; pages keep refreshing its expiry.
    """

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        """No session for the API, which authenticates with tokens and never sets a cookie:
        a cookie a browser sends along is not even read (making the cookie's serializer and
        checking its signature is a fair part of a move's own request work)."""
        if request.path.startswith("/api/"):
            return self.make_null_session(app)
        return super().open_session(app, request)

    def save_session(self, app: Flask, session: SessionMixin,
                     response: Response) -> None:
        page = response.mimetype == "text/html" and response.status_code < 400
        if not session.modified and not page:
            return
        super().save_session(app, session, response)
