"""What every route of the JSON API shares: the seat, creator and admin credentials, the
running app's service and clock, a move's body taken without its schema where it can be, and
safe retries under ``Idempotency-Key`` (app/web/idempotency.py)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from contextlib import suppress
from functools import wraps
from typing import Any

from apiflask import HTTPError, HTTPTokenAuth
from apiflask.schema_adapters.marshmallow import parser
from flask import current_app, request

from app.core.integers import COLUMN_MAX
from app.features.clock.timekeeper import Timekeeper
from app.features.clock.timekeeper import install as install_timekeeper
from app.service import (
    Forbidden,
    GameService,
    Unauthorized,
    token_hash,
)
from app.service.moves import input_refusal
from app.web.api.schemas import (
    MOVE_INPUT_MAX,
    MoveIn,
)
from app.web.idempotency import (
    HEADER,
    REPLAYED,
    Replay,
    check_key,
    current_store,
    fingerprint,
)

seat_auth = HTTPTokenAuth(scheme="Bearer", name="SeatToken", description="A seat's API token")
admin_auth = HTTPTokenAuth(scheme="Bearer", name="AdminToken",
                           description="The server's admin token (TITANPOST_ADMIN_TOKEN)")
CREATOR = "CreatorToken"
SECURITY_SCHEMES = {CREATOR: {
    "type": "apiKey", "in": "header", "name": "X-Creator-Token",
    "description": "The creator token given when the game was created"}}
"""Security schemes besides the two bearer tokens (``SECURITY_SCHEMES`` of the app)."""


def service() -> GameService:
    svc: GameService = current_app.extensions["titanpost.service"]
    return svc



def keeper() -> Timekeeper:
    """The clock of the running app's service (installed once; the same instance after)."""
    return install_timekeeper(service())


def _verify_seat(token: str) -> dict[str, Any] | None:
    if _checked_with_the_move():
        return {"token": token}
    uid, position, email = service().seat_for_token(token)
    return {"game": uid, "position": position, "email": email}


def _checked_with_the_move() -> bool:
    """Whether this request is a move whose token the service checks in the move's own
    transaction (:meth:`~app.service.GameService.submit_as`) instead of now, in a transaction
    of its own: a ``POST /moves`` whose body is valid (else the token's refusal, 401, must
    come before the body's, 400) and that carries no ``Idempotency-Key`` (whose stored answer
    is given only to a token checked first)."""
    if request.endpoint != "api.submit_move" or HEADER in request.headers:
        return False
    body = request.get_json(silent=True) if request.is_json else None
    return isinstance(body, dict) and (plain_move(body) or not MOVE_IN.validate(body))


MOVE_IN = MoveIn()
"""The body's schema, made once (making it costs more than checking a body with it)."""


def plain_move(body: Any) -> bool:
    """Whether ``body`` is a move's body that :class:`MoveIn` would take as it is: exactly
    its two keys, a count and an input of the allowed length, of the very types the schema
    loads them as. Such a body, nearly every move's, is taken without the schema (whose
    load costs more than the rest of the request's checks); any other goes through it, for
    the same answer as before, a refusal with its detail included."""
    if type(body) is not dict or len(body) != 2:
        return False
    seq, text = body.get("expected_seq"), body.get("input")
    return (type(seq) is int and 0 <= seq <= COLUMN_MAX and type(text) is str
            and 1 <= len(text) <= MOVE_INPUT_MAX)


def move_body(view: Callable[..., Any]) -> Callable[..., Any]:
    """The move's body for ``view``, taken as it is when :func:`plain_move`, else loaded
    through the schema as ``bp.input`` would (the same refusals): under
    ``bp.input(..., validation=False)``, which documents the body and hands it over raw."""
    @wraps(view)
    def run(*args: Any, body: Any, **kwargs: Any) -> Any:
        if not plain_move(body):
            try:
                body = parser.parse(MOVE_IN, request, location="json")
            except HTTPError as exc:
                raise _worded(exc, body) from None
        return view(*args, body=body, **kwargs)

    return run


def _worded(exc: HTTPError, body: Any) -> Exception:
    """A body refused for its input alone (empty, overlong): the same answer, its English
    ``error`` and ``detail``, with the ``message`` the service gives such an input in the asked
    language (the CLI shows it); any other refusal as it is."""
    detail = exc.detail if isinstance(exc.detail, dict) else {}
    text = body.get("input") if isinstance(body, dict) else None
    if list(detail) != ["json"] or list(detail["json"]) != ["input"]:
        return exc
    if not isinstance(text, str):
        return exc
    return input_refusal(text, detail=detail) or exc


def _verify_admin(token: str) -> bool | None:
    expected = service().settings.admin_token
    if expected is None:
        raise Forbidden("the admin API is off: set TITANPOST_ADMIN_TOKEN on the server")
    if not secrets.compare_digest(token, expected):
        raise Unauthorized("the admin token is wrong")
    return True


seat_auth.verify_token(_verify_seat)
admin_auth.verify_token(_verify_admin)


def from_admin() -> bool:
    """Whether the request carries the admin token (where the admin API is on)."""
    expected = service().settings.admin_token
    given = request.headers.get("Authorization", "").removeprefix("Bearer ")
    return expected is not None and secrets.compare_digest(given, expected)


def seat_in(uid: str) -> int:
    """The authenticated seat's position, which must be in game ``uid``."""
    seat = seat_auth.current_user
    assert seat is not None
    if seat["game"] != uid:
        service().ensure_exists(uid)
        raise Forbidden("this API token belongs to a seat in another game")
    return int(seat["position"])


# ---------------------------------------------------------------------- safe retries

Result = dict[str, Any]
Shape = Callable[[Result], Result]


def idempotent(status: int = 200, shape: Shape = dict) -> Callable[..., Any]:
    """Honour ``Idempotency-Key`` on an operation whose service writes the answer in its own
    transaction: the view gets the key's :class:`Claim` (or None) as ``answer`` and hands it
    to the service; it returns the service's result, which ``shape`` turns into the body."""
    return lambda view: _keyed(view, status, shape, in_transaction=True)


def replayable(status: int = 200) -> Callable[..., Any]:
    """Honour ``Idempotency-Key`` on an operation that is harmless to run twice (a move
    carries expected_seq; a resign, pause, resume or abandon done already is refused): its
    answer is stored after its own transaction. Should the process die between the two, the
    key is taken over after the lease and the request runs again, to that harmless answer."""
    return lambda view: _keyed(view, status, dict, in_transaction=False)


def _keyed(view: Callable[..., Result], status: int, shape: Shape, *,
           in_transaction: bool) -> Callable[..., Any]:
    @wraps(view)
    def run(*args: Any, **kwargs: Any) -> Any:
        raw = request.headers.get(HEADER)
        extra = {"answer": None} if in_transaction else {}
        if raw is None:
            return shape(view(*args, **kwargs, **extra)), status
        store = current_store()
        claim = store.claim(_key_scope(), check_key(raw.strip()), _request_print(),
                            route=request.path, status=status)
        if isinstance(claim, Replay):
            return claim.body, claim.status, {REPLAYED: "true"}
        claim.shape = shape
        try:
            result = view(*args, **kwargs, **({"answer": claim} if in_transaction else {}))
        except BaseException:
            with suppress(Exception):  # else the key is free again after the lease
                store.release(claim)
            raise
        return store.finish(claim, result), status

    return run


def _key_scope() -> str:
    """Whose keys a request's key is among: the credential's (its hash), or with none the
    path's (so that keys of different operations never meet)."""
    credentials = [request.headers.get(name, "") for name in ("Authorization", "X-Creator-Token")]
    if any(credentials):
        return "credential:" + token_hash("\0".join(credentials))
    return "route:" + request.path


def _request_print() -> str:
    body = request.get_json(silent=True) if request.is_json else request.get_data(as_text=True)
    return fingerprint(request.method, request.full_path.rstrip("?"), body)


def creator_token() -> str:
    token = request.headers.get("X-Creator-Token", "")
    if not token:
        raise Unauthorized("send the creator token (given when the game was created) in the "
                           "X-Creator-Token header")
    return token



def optional_seat(uid: str) -> int | None:
    """The caller's seat in game ``uid`` when it sent a valid token for one, else None."""
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        seat_uid, seat_position, _ = service().seat_for_token(header.removeprefix("Bearer "))
        if seat_uid == uid:
            return seat_position
    return None
