"""Signing in by mail from a terminal (``titanpost login EMAIL``): the JSON side of
app/features/signin/signins.py.

- ``POST /api/signin`` ``{"email": ...}``: mails a sign-in link when the address holds a seat;
  the same answer, in at least as long, either way (202);
- ``POST /api/signin/use`` ``{"token": ...}`` (the link, or the code the mail shows): uses the
  link up and answers an account token; a bad link is refused with its ``reason``
  (``malformed``, ``forged``, ``expired``, ``reused``, ``replaced``);
- ``GET /api/account/games`` with ``Authorization: Bearer <account token>``: every game of the
  address, with whose turn it is and the seat's next deadline;
- ``POST /api/account/games/<game>/rematch/join``: the address takes its own seat of the
  rematch of a game it played (app/features/rematch/rematches.py), as ``POST
  /api/games/<game>/rematch/join`` does with the old seat's token;
- ``DELETE /api/account``: signs the token out (it no longer works anywhere).
"""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint
from flask import request
from flask.typing import ResponseReturnValue
from flask_limiter.util import get_remote_address

from app.features.rematch import rematches
from app.features.signin.signins import (
    CLI,
    REFUSALS,
    REFUSED_STATUS,
    Account,
    SignInRefused,
    TooManyAsks,
    account_games,
    account_seat_token,
    account_token,
    ask_link,
    read_account_token,
    sign_out,
    use_link,
)
from app.service import Unauthorized
from app.web.api.access import idempotent
from app.web.api.schemas import JoinIn, answers
from app.web.browser_seats import browser_language, service
from app.web.idempotency import Claim
from app.web.linktokens import SIGNIN_LINK_MAX_AGE

signin_api = APIBlueprint("signin_api", __name__, url_prefix="/api", tag="Sign-in")

SENT = ("if this address holds a seat in a game here, a sign-in link is on its way to it: paste "
        "the link (or the code the mail shows) within {minutes} minutes; it works once")


def _body() -> dict[str, Any]:
    body = request.get_json(silent=True)
    return body if isinstance(body, dict) else {}


@signin_api.post("/signin")
@signin_api.doc(summary="Ask for a sign-in link by mail", description="Mails a single-use "
                "sign-in link (15 minutes) to the address when it holds a seat. The answer is "
                "the same whether or not it does. Limited per address and per client.",
                responses=answers(200, 400, 429))
def ask() -> ResponseReturnValue:
    try:
        ask_link(service(), str(_body().get("email") or ""), get_remote_address() or "",
                 browser_language() or "en")
    except TooManyAsks as exc:
        return ({"error": f"too many sign-in links asked for: try again in "
                 f"{exc.retry_after} seconds", "retry_after": exc.retry_after}, 429,
                {"Retry-After": str(exc.retry_after)})
    return {"sent": SENT.format(minutes=SIGNIN_LINK_MAX_AGE // 60)}, 200


def token_of(text: str) -> str:
    """The token of a pasted sign-in link (``https://host/signin/<token>``) or code."""
    text = text.strip().rstrip("/")
    return text.rsplit("/signin/", 1)[-1].split("?", 1)[0]


@signin_api.post("/signin/use")
@signin_api.doc(summary="Sign in with a mailed link", description="Uses the link (or its "
                "code) up and answers an account token for Authorization: Bearer.",
                responses=answers(200, 400))
def use() -> ResponseReturnValue:
    try:
        account = use_link(service(), token_of(str(_body().get("token") or "")), CLI)
    except SignInRefused as exc:
        message = REFUSALS[exc.reason].format(minutes=SIGNIN_LINK_MAX_AGE // 60)
        return {"error": message, "reason": exc.reason}, REFUSED_STATUS[exc.reason]
    return {"email": account.email, "account_token": account_token(service(), account)}, 200


def request_account() -> Account:
    """The account of the request's ``Authorization: Bearer <account token>``; Unauthorized
    without one that is still signed in."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("give the account token of `titanpost login EMAIL` "
                           "(Authorization: Bearer ...)")
    try:
        return read_account_token(service(), token.strip())
    except SignInRefused:
        raise Unauthorized("the account token is unknown, expired or signed out: sign in "
                           "again (titanpost login EMAIL)") from None


@signin_api.get("/account/games")
@signin_api.doc(summary="Every game of the signed-in address", responses=answers(200, 401))
def games() -> ResponseReturnValue:
    account = request_account()
    return {"email": account.email, "games": account_games(service(), account.email)}, 200


@signin_api.post("/account/games/<uid>/seat")
@signin_api.doc(summary="A seat token for the address's seat in a game", description="With "
                "the account token: a new API token of the seat the signed-in address holds in "
                "game uid, however it was joined (on the web, by mail, by another device), so "
                "that the command line plays it; 404 when the address holds none there.",
                responses=answers(201, 401, 404))
@idempotent(201)
def seat_token(uid: str, answer: Claim | None) -> dict[str, Any]:
    account = request_account()
    return account_seat_token(service(), account.email, uid, idempotency=answer)


@signin_api.post("/account/games/<uid>/rematch/join")
@signin_api.input(JoinIn, arg_name="body")
@signin_api.doc(summary="Take the address's own seat of a game's rematch", description="With "
                "the account token: the seat of the rematch of game uid kept for the signed-in "
                "address (one it played in that game). Answers as POST "
                "/api/games/<uid>/rematch/join: the new game's seat and its API token, and "
                "started: whether this yes, the last one, started it.",
                responses=answers(201, 400, 401, 403, 404, 409))
@idempotent(201)
def join_rematch(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    account = request_account()
    return rematches.join_as(service(), uid, account.email, contribution=body["contribution"],
                             idempotency=answer)


@signin_api.post("/account/games/<uid>/rematch/decline")
@signin_api.doc(summary="Decline the address's own seat of a game's rematch", description="With "
                "the account token: says no to the rematch of game uid for the signed-in "
                "address, as POST /api/games/<uid>/rematch/decline does with the old seat's "
                "token.", responses=answers(200, 401, 403, 404, 409))
def decline_rematch(uid: str) -> dict[str, Any]:
    account = request_account()
    return rematches.decline_as(service(), uid, account.email)


@signin_api.delete("/account")
@signin_api.doc(summary="Sign the account token out", responses=answers(200, 401))
def signout() -> ResponseReturnValue:
    account = request_account()
    sign_out(service(), account)
    return {"signed_out": account.email}, 200
