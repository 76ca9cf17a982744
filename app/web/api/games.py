"""The JSON API under ``/api/`` (OpenAPI document at ``/api/openapi.json``).

Seats authenticate with their API token (``Authorization: Bearer ...``); a game's creator with
``X-Creator-Token``; the server's admin with the ``TITANPOST_ADMIN_TOKEN`` bearer token. Errors are
JSON objects ``{"error": "...", ...}`` whose message says what to do. Every POST takes an
``Idempotency-Key`` header (see app/web/idempotency.py). What the OpenAPI document says of the
requests and answers (their schemas, the API's description) is in app/web/api/schemas.py.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from contextlib import suppress
from functools import wraps
from typing import Any

from apiflask import APIBlueprint, APIFlask, HTTPError, HTTPTokenAuth
from apiflask.schema_adapters.marshmallow import parser
from flask import current_app, request
from sqlmodel import select

from app.core.integers import COLUMN_MAX
from app.core.models import Game
from app.features.chat import messages as chat
from app.features.clock.arithmetic import ClockSettings
from app.features.clock.timekeeper import SettingsChange, Timekeeper
from app.features.clock.timekeeper import install as install_timekeeper
from app.features.rematch import rematches
from app.features.webhooks.hooks import add_webhook, list_webhooks, remove_webhook
from app.service import (
    BadRequest,
    Forbidden,
    GameService,
    NotFound,
    Unauthorized,
    token_hash,
)
from app.service.moves import input_refusal
from app.web.api.schemas import (
    DESCRIPTION,
    MOVE_INPUT_MAX,
    AbsencesOut,
    AcceptIn,
    AddedAbsenceOut,
    AddedWebhookOut,
    AwayIn,
    ChatIn,
    ChatQuery,
    ContributionIn,
    CreateGameIn,
    DeadlinesOut,
    ErrorOut,
    ImportIn,
    InviteIn,
    JoinIn,
    MoveIn,
    PauseIn,
    QuietIn,
    QuietOut,
    ReplaceIn,
    SettingsIn,
    SettingsOut,
    StartIn,
    WebhookIn,
    WebhooksOut,
    answers,
    document_refusals,
)
from app.web.api.schemas import GAME_VARIANTS as GAME_VARIANTS  # (the CLI's choices)
from app.web.api.schemas import GAMES as GAMES
from app.web.idempotency import (
    HEADER,
    REPLAYED,
    Claim,
    Replay,
    check_key,
    current_store,
    fingerprint,
)

bp = APIBlueprint("api", __name__, url_prefix="/api")
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


def install_api(app: APIFlask) -> None:
    """Register the API blueprint and what its OpenAPI document needs: the error schema the
    error handlers answer with, the creator token's scheme and the refusals of every
    operation."""
    app.config.update(HTTP_ERROR_SCHEMA=ErrorOut, VALIDATION_ERROR_SCHEMA=ErrorOut,
                      SECURITY_SCHEMES=SECURITY_SCHEMES, DESCRIPTION=DESCRIPTION)
    app.register_blueprint(bp)
    app.spec_processor(document_refusals)


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
    return isinstance(body, dict) and (_plain_move(body) or not _MOVE_IN.validate(body))


_MOVE_IN = MoveIn()
"""The body's schema, made once (making it costs more than checking a body with it)."""


def _plain_move(body: Any) -> bool:
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


def _move_body(view: Callable[..., Any]) -> Callable[..., Any]:
    """The move's body for ``view``, taken as it is when :func:`_plain_move`, else loaded
    through the schema as ``bp.input`` would (the same refusals): under
    ``bp.input(..., validation=False)``, which documents the body and hands it over raw."""
    @wraps(view)
    def run(*args: Any, body: Any, **kwargs: Any) -> Any:
        if not _plain_move(body):
            try:
                body = parser.parse(_MOVE_IN, request, location="json")
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


def _from_admin() -> bool:
    """Whether the request carries the admin token (where the admin API is on)."""
    expected = service().settings.admin_token
    given = request.headers.get("Authorization", "").removeprefix("Bearer ")
    return expected is not None and secrets.compare_digest(given, expected)


def _seat_in(uid: str) -> int:
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


def _creator_token() -> str:
    token = request.headers.get("X-Creator-Token", "")
    if not token:
        raise Unauthorized("send the creator token (given when the game was created) in the "
                           "X-Creator-Token header")
    return token


# ---------------------------------------------------------------------- games


@bp.get("/")
@bp.doc(summary="Where things are", responses=answers(200))
def index() -> dict[str, Any]:
    return {"service": "Titan Post", "openapi": "/api/openapi.json", "docs": "/api/docs"}


@bp.post("/games")
@bp.input(CreateGameIn, arg_name="body")
@bp.output({}, status_code=201)
@bp.doc(summary="Create a game", description="Returns the creator token (keep it: it starts, "
        "invites and abandons) and one invitation token per human seat. A computer seat "
        "({\"bot\": true}) plays at its level: easy unless the seat names normal or strong "
        "({\"bot\": true, \"level\": \"strong\"}); normal and strong seats are moved by the "
        "server's worker shortly after their turn comes, never inside the request that gave "
        "it to them.",
        responses=answers(201, 400))
@idempotent(201, shape=lambda created: _with_links(created, created["invitations"]))
def create_game(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    if body["seed"] is not None and not _from_admin():
        raise BadRequest("a game's seed cannot be chosen: every game is dealt from a secret "
                         "that the server and the players draw together (only the admin may "
                         "deal from a chosen seed, and every seat is then told)")
    return service().create_game(
        seats=body["seats"], variant=body["variant"], circuits=body["circuits"],
        setup=body["setup"],
        rules_name=body["game"],
        name=body["name"], settings=body["settings"], seed=body["seed"],
        owner_email=body["owner_email"], idempotency=answer,
    )


def _with_links(result: dict[str, Any], invitations: list[dict[str, Any]]) -> dict[str, Any]:
    """``result`` with each invitation's join link beside its token."""
    base = service().settings.base_url
    for invitation in invitations:
        invitation["link"] = f"{base}/join/{invitation['invite_token']}"
    return result


def _with_link(result: dict[str, Any]) -> dict[str, Any]:
    """An invitation (or a replaced seat's answer) with its join link, when it has one."""
    return _with_links(result, [result] if "invite_token" in result else [])


@bp.get("/games")
@bp.auth_required(seat_auth)
@bp.doc(summary="List my games", description="Every game with a seat for the token's address.",
        responses=answers(200, 401))
def my_games() -> dict[str, Any]:
    seat = seat_auth.current_user
    assert seat is not None
    return {"games": service().my_games(seat["email"])}


@bp.get("/me")
@bp.auth_required(seat_auth)
@bp.doc(summary="Who am I", description="The game, seat and address the API token belongs to.",
        responses=answers(200, 401))
def whoami() -> dict[str, Any]:
    seat = seat_auth.current_user
    assert seat is not None
    return {"game": seat["game"], "position": seat["position"], "email": seat["email"]}


@bp.get("/games/<uid>")
@bp.doc(summary="Game state", description="Your view with a seat token; without one, the "
        "spectator view (no hidden information). The game's setup is given twice: as circuits "
        "(Titan Race's circuits by name, The Great Race's start city) and as setup (the "
        "game's own JSON); each seat's pieces as titans and team, and as pieces.",
        security=[{}, {"SeatToken": []}],
        responses=answers(200, 401, 403, 404))
def game_state(uid: str) -> dict[str, Any]:
    return service().state(uid, _optional_seat(uid))


def _optional_seat(uid: str) -> int | None:
    """The caller's seat in game ``uid`` when it sent a valid token for one, else None."""
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        seat_uid, seat_position, _ = service().seat_for_token(header.removeprefix("Bearer "))
        if seat_uid == uid:
            return seat_position
    return None


@bp.get("/games/<uid>/options")
@bp.auth_required(seat_auth)
@bp.doc(summary="Legal options", description="The pending decision and, when it is yours, "
        "every legal input in the notation.", responses=answers(200, 401, 403, 404))
def game_options(uid: str) -> dict[str, Any]:
    return service().options(uid, _seat_in(uid))


@bp.post("/games/<uid>/moves")
@bp.auth_required(seat_auth)
@bp.input(_MOVE_IN, arg_name="body", validation=False)
@_move_body
@bp.doc(summary="Submit inputs", description="409 with the current state when the game moved "
        "on; 422 with the legal options (at the first input) and the index of the part refused "
        "when an input is illegal or, in a chain joined with ';', answers a decision not yours; "
        "a repeated identical submission is answered as already applied.",
        responses=answers(200, 400, 401, 403, 404, 409, 422))
@replayable()
def submit_move(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    seat = seat_auth.current_user
    assert seat is not None
    if "token" in seat:
        return service().submit_as(uid, seat["token"], body["expected_seq"], body["input"])
    return service().submit(uid, _seat_in(uid), body["expected_seq"], body["input"])


@bp.get("/games/<uid>/log")
@bp.doc(summary="Move log", security=[{}, {"SeatToken": []}],
        responses=answers(200, 401, 403, 404))
def game_log(uid: str) -> dict[str, Any]:
    return service().log(uid, _optional_seat(uid))


@bp.post("/games/<uid>/invitations")
@bp.input(InviteIn, arg_name="body")
@bp.doc(summary="Invite a player to a seat", description="Creator only (X-Creator-Token).",
        security=CREATOR, responses=answers(201, 400, 401, 403, 404, 409))
@idempotent(201, shape=_with_link)
def invite(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().invite(uid, _creator_token(), body["position"], body["email"],
                            idempotency=answer)


@bp.get("/games/<uid>/fairness")
@bp.doc(summary="Fair dealing", description="The game's fairness record (docs/fairness.md): "
        "while it runs, the commitment (version 2: SHA-256 of the secret with the game's id, "
        "ruleset, variant, scheme and chosen-seed flag) and the facts it covers; once it is "
        "over, to anyone (no token, spectators or not), the secret (and a chosen seed), the "
        "seats' contributions and set-up, the genesis hash and the whole log with its hash "
        "chain, its length and head, the status and the winner, to recompute every random "
        "outcome (`titanpost verify-fair`).", security=[{}, {"SeatToken": []}],
        responses=answers(200, 401, 403, 404))
def game_fairness(uid: str) -> dict[str, Any]:
    return service().fairness(uid, _optional_seat(uid))


@bp.post("/invitations/accept")
@bp.input(AcceptIn, arg_name="body")
@bp.doc(summary="Accept an invitation", description="Returns the seat's API token, once: the "
        "invitation is used up. Send an Idempotency-Key to be able to ask again for the same "
        "token should the answer be lost.",
        responses=answers(201, 400, 404, 409))
@idempotent(201)
def accept(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().accept(body["invite_token"], name=body["name"],
                            contribution=body["contribution"], idempotency=answer)


@bp.post("/games/<uid>/start")
@bp.input(StartIn, arg_name="body")
@bp.doc(summary="Start the game", description="Creator only. Seats not yet accepted may be "
        "given to computer players with fill_with_bots, at bot_level (easy when not given).",
        security=CREATOR, responses=answers(200, 400, 401, 403, 404, 409))
@idempotent()
def start(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().start(uid, _creator_token(), fill_with_bots=body["fill_with_bots"],
                           bot_level=body["bot_level"], idempotency=answer)


@bp.post("/games/<uid>/resign")
@bp.auth_required(seat_auth)
@bp.doc(summary="Resign", description="A computer player takes over the seat.",
        responses=answers(200, 400, 401, 403, 404, 409))
@replayable()
def resign(uid: str) -> dict[str, Any]:
    return service().resign(uid, _seat_in(uid))


@bp.post("/games/<uid>/abandon")
@bp.doc(summary="Abandon the game", description="Creator only.", security=CREATOR,
        responses=answers(200, 401, 403, 404, 409))
@replayable()
def abandon(uid: str) -> dict[str, Any]:
    return service().abandon(uid, _creator_token())


# ---------------------------------------------------------------------- chat


@bp.get("/games/<uid>/chat")
@bp.input(ChatQuery, location="query", arg_name="query")
@bp.doc(summary="The game's chat", description="A page of messages, newest last (more: older "
        "ones exist; ask again with before). The chat is public: every seat reads it, and "
        "spectators too when the game allows them.", security=[{}, {"SeatToken": []}],
        responses=answers(200, 400, 401, 403, 404))
def read_chat(uid: str, query: dict[str, Any]) -> dict[str, Any]:
    return chat.read(service(), uid, _optional_seat(uid), before=query["before"],
                     limit=query["limit"])


@bp.post("/games/<uid>/chat")
@bp.auth_required(seat_auth)
@bp.input(ChatIn, arg_name="body")
@bp.doc(summary="Post to the game's chat", description="As the token's seat. The other seats "
        "read it on the game page and in their next mail; never write hidden information "
        "here (the whole table reads it).", responses=answers(201, 400, 401, 403, 404))
@idempotent(201)
def post_chat(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return chat.post(service(), uid, _seat_in(uid), body["text"], idempotency=answer)


# ---------------------------------------------------------------------- rematch


@bp.get("/games/<uid>/rematch")
@bp.doc(summary="The game's rematch", description="follows: the game this one is the rematch "
        "of; rematch: the rematch made of it (each a game id, or null). With a seat token of "
        "this game, join: whether the seat's own seat of the rematch waits for it (POST "
        ".../rematch/join takes it).",
        security=[{}, {"SeatToken": []}], responses=answers(200, 401, 403, 404))
def read_rematch(uid: str) -> dict[str, Any]:
    links: dict[str, Any] = rematches.links_of(service(), uid)
    position = _optional_seat(uid)
    if position is not None:
        links["join"] = rematches.waiting_seat(service(), uid, position) is not None
    return links


@bp.post("/games/<uid>/rematch")
@bp.auth_required(seat_auth)
@bp.doc(summary="Make the rematch of a finished game", description="As the token's seat (a "
        "player's, not the computer's). A new game with the same seats, settings and setup, "
        "each seat kept for its own player: computer seats kept, every other player invited "
        "by mail to their own address (invited: their positions; nobody is given their "
        "invitations). made: true for the one who makes it, whose own seat is taken at once: "
        "its position, api_token (shown once) and the game's commitment, and the creator token "
        "(it starts the game); the client then gives its seat's share of the deal (POST "
        "/games/<new>/contribution). A game has one rematch, and anyone asking again is "
        "answered with it (made: false): they take their seat with POST .../rematch/join.",
        responses=answers(201, 401, 403, 404, 409))
@idempotent(201)
def post_rematch(uid: str, answer: Claim | None) -> dict[str, Any]:
    return rematches.rematch(service(), uid, _seat_in(uid), idempotency=answer)


@bp.post("/games/<uid>/rematch/join")
@bp.auth_required(seat_auth)
@bp.input(JoinIn, arg_name="body")
@bp.doc(summary="Take one's own seat of the rematch", description="As the token's seat of "
        "this finished game: its player takes their seat of the game's rematch, kept for their "
        "address, without the invitation mailed to them (which is then used up). Answers as an "
        "accepted invitation does: the new game, the position, its API token (shown once) and "
        "the commitment; send the contribution drawn after reading the commitment (GET "
        "/games/<rematch>).", responses=answers(201, 400, 401, 403, 404, 409))
@idempotent(201)
def join_rematch(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return rematches.join(service(), uid, _seat_in(uid), contribution=body["contribution"],
                          idempotency=answer)


@bp.post("/games/<uid>/contribution")
@bp.auth_required(seat_auth)
@bp.input(ContributionIn, arg_name="body")
@bp.doc(summary="Give the seat's share of the deal", description="For a seat taken without "
        "giving one (a rematch's maker, whose seat was taken before the game's commitment "
        "existed), while the game has not started, once: the randomness its client drew "
        "after reading the commitment (see docs/fairness.md).",
        responses=answers(200, 400, 401, 403, 404, 409))
@idempotent()
def contribute(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().contribute(uid, _seat_in(uid), body["contribution"], idempotency=answer)


# ---------------------------------------------------------------------- webhooks


@bp.get("/games/<uid>/webhooks")
@bp.output(WebhooksOut)
@bp.doc(summary="The game's webhooks", description="Creator only.", security=CREATOR,
        responses=answers(200, 401, 403, 404))
def read_webhooks(uid: str) -> dict[str, Any]:
    return {"webhooks": list_webhooks(service(), uid, _creator_token())}


@bp.post("/games/<uid>/webhooks")
@bp.input(WebhookIn, arg_name="body")
@bp.output(AddedWebhookOut, status_code=201)
@bp.doc(summary="Add a webhook", description="Creator only. The address is told of every turn "
        "to play (whose, which game, its link) and of the game's end (the winner, or that it "
        "was abandoned), in the format of Discord, Slack, a Matrix hookshot generic webhook, "
        "ntfy, or our own JSON, worded in its language (English unless given). "
        "Sent by the worker, retried with backoff; http(s) addresses on public hosts only. "
        "Posts mention nobody (no @everyone, @here, <!channel> or user pings). json posts are "
        "signed (Standard Webhooks) with the secret this answer shows, once.",
        security=CREATOR, responses=answers(201, 400, 401, 403, 404))
@idempotent(201)
def post_webhook(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return add_webhook(service(), uid, _creator_token(), body["url"], body["format"],
                       language=body["language"], idempotency=answer)


@bp.delete("/games/<uid>/webhooks/<int:webhook_id>")
@bp.doc(summary="Remove a webhook", description="Creator only. Its unsent posts go too.",
        security=CREATOR, responses=answers(200, 401, 403, 404))
def delete_webhook(uid: str, webhook_id: int) -> dict[str, Any]:
    return remove_webhook(service(), uid, _creator_token(), webhook_id)


# ---------------------------------------------------------------------- the clock


@bp.post("/games/<uid>/pause")
@bp.input(PauseIn, arg_name="body")
@bp.doc(summary="Pause the game", description="Creator only (X-Creator-Token). The clock "
        "stops and no moves are taken until the game is resumed; the players are told.",
        security=CREATOR, responses=answers(200, 400, 401, 403, 404, 409))
@replayable()
def pause(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    return service().pause(uid, _creator_token(), reason=body["reason"].strip())


@bp.post("/games/<uid>/resume")
@bp.doc(summary="Resume a paused game", description="Creator only. Open deadlines move on by "
        "the length of the pause.", security=CREATOR,
        responses=answers(200, 400, 401, 403, 404, 409))
@replayable()
def resume(uid: str) -> dict[str, Any]:
    return service().resume(uid, _creator_token())


@bp.get("/games/<uid>/deadlines")
@bp.output(DeadlinesOut)
@bp.doc(summary="The clock", description="The open deadlines (timeouts and reminders, due "
        "times in UTC), the clock settings in effect, whether the game is paused, and each "
        "seat's time bank and missed deadlines. For the game's seats (Bearer token) and, when "
        "the game allows them, spectators.", security=[{}, {"SeatToken": []}],
        responses=answers(200, 401, 403, 404))
def deadlines(uid: str) -> dict[str, Any]:
    summary = service().state(uid, _optional_seat(uid))["game"]
    with service().session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        settings = dict(game.settings)
        # the seat rows as they are now (banks and missed deadlines change with the clock)
        seats = {seat.position: seat for seat in service().seats(s, game)}
    for row in summary["seats"]:
        seat = seats[row["position"]]
        row["bank_seconds"], row["missed_deadlines"] = seat.bank_seconds, seat.missed_deadlines
    return {
        **summary,
        "clock": ClockSettings.of(settings).in_effect(),
        "deadlines": keeper().deadlines_of(uid) if summary["status"] == "active" else [],
    }


@bp.put("/games/<uid>/me/quiet")
@bp.auth_required(seat_auth)
@bp.input(QuietIn, arg_name="body")
@bp.output(QuietOut)
@bp.doc(summary="Set my quiet hours", description="Quiet hours and time zone of the token's "
        "seat (both replaced; null clears). A deadline that would end in them moves to their "
        "end, and no reminder is sent in them.",
        responses=answers(200, 400, 401, 403, 404, 409))
def set_quiet(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    position = _seat_in(uid)
    prefs = keeper().set_quiet_hours(uid, position, body["quiet"], body["timezone"])
    return {"game": uid, "position": position, "quiet": prefs.get("quiet"),
            "timezone": prefs.get("timezone")}


@bp.get("/games/<uid>/me/settings")
@bp.auth_required(seat_auth)
@bp.output(SettingsOut)
@bp.doc(summary="My settings", description="The token's seat's own settings: mail, language, "
        "quiet hours and time zone.", responses=answers(200, 401, 403, 404))
def my_settings(uid: str) -> dict[str, Any]:
    return keeper().settings_of(uid, _seat_in(uid))


SETTINGS_DOC = ("Change the token's seat's own settings (only those given). Bad values are "
                "refused with 400 and change nothing. Answers the settings now in force.")


@bp.post("/games/<uid>/me/settings")
@bp.auth_required(seat_auth)
@bp.input(SettingsIn, arg_name="body")
@bp.output(SettingsOut)
@bp.doc(summary="Change my settings", description=SETTINGS_DOC,
        responses=answers(200, 400, 401, 403, 404))
@replayable()
def change_settings(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    return keeper().change_settings(uid, _seat_in(uid), SettingsChange(**body))


@bp.patch("/games/<uid>/me/settings")
@bp.auth_required(seat_auth)
@bp.input(SettingsIn, arg_name="body")
@bp.output(SettingsOut)
@bp.doc(summary="Change my settings (PATCH)", description=SETTINGS_DOC,
        responses=answers(200, 400, 401, 403, 404))
def patch_settings(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    return keeper().change_settings(uid, _seat_in(uid), SettingsChange(**body))


def _my_email() -> str:
    seat = seat_auth.current_user
    assert seat is not None
    email = str(seat["email"])
    if not email:
        raise Forbidden("this seat has no e-mail address: away dates belong to a player's address")
    return email


@bp.get("/away")
@bp.auth_required(seat_auth)
@bp.output(AbsencesOut)
@bp.doc(summary="My away dates", description="The away dates of the token's address, for all "
        "its games (cancelled ones are not listed).", responses=answers(200, 401, 403))
def list_away() -> dict[str, Any]:
    email = _my_email()
    return {"email": email, "absences": keeper().absences(email)}


@bp.post("/away")
@bp.auth_required(seat_auth)
@bp.input(AwayIn, arg_name="body")
@bp.output(AddedAbsenceOut, status_code=201)
@bp.doc(summary="Add away dates", description="For every game of the token's address: in "
        "stretch mode the deadlines stretch over the absence; in computer mode the computer "
        "plays for you meanwhile. The other players are told.",
        responses=answers(201, 400, 401, 403))
@idempotent(201)
def add_away(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return keeper().set_absence(_my_email(), body["starts"], body["until"], body["mode"],
                                idempotency=answer)


@bp.delete("/away/<int:absence_id>")
@bp.auth_required(seat_auth)
@bp.doc(summary="Cancel away dates", description="Your deadlines are computed without them "
        "again.", responses=answers(200, 400, 401, 403, 404))
def cancel_away(absence_id: int) -> dict[str, Any]:
    email = _my_email()
    if absence_id not in {a["id"] for a in keeper().absences(email)}:
        raise NotFound(f"you have no away dates {absence_id} (GET /api/away lists yours)")
    keeper().cancel_absence(email, absence_id)
    return {"id": absence_id, "cancelled": True}


@bp.post("/games/<uid>/seats/<int:position>/replace")
@bp.input(ReplaceIn, arg_name="body")
@bp.doc(summary="Give a seat of a running game to someone else", description="Creator only. "
        "With email: an invitation for a new player (the computer plays the seat until it is "
        "accepted); with computer: true, the computer plays the seat from now on. The old "
        "player's token and links stop working. position counts from 0 (seat 1 is 0).",
        security=CREATOR,
        responses=answers(200, 400, 401, 403, 404, 409))
@idempotent(shape=_with_link)
def replace_seat(uid: str, position: int, body: dict[str, Any],
                 answer: Claim | None) -> dict[str, Any]:
    email = (body["email"] or "").strip() or None
    if email is not None and body["computer"]:
        raise BadRequest("give either an email (a new player is invited) or computer: true "
                         "(the computer plays the seat), not both")
    if email is None and not body["computer"]:
        raise BadRequest("give the new player's email, or computer: true to let the computer "
                         "play the seat")
    return service().replace_seat(uid, _creator_token(), position, email, level=body["level"],
                                  idempotency=answer)


# ---------------------------------------------------------------------- admin


@bp.get("/admin/games/<uid>/states/<int:seq>")
@bp.auth_required(admin_auth)
@bp.doc(summary="The full state after a given move (admin)",
        responses=answers(200, 401, 403, 404))
def admin_state_at(uid: str, seq: int) -> dict[str, Any]:
    return service().state_at(uid, seq)


@bp.get("/admin/games/<uid>/replay")
@bp.auth_required(admin_auth)
@bp.doc(summary="Every move with the board after it (admin)",
        responses=answers(200, 401, 403, 404))
def admin_replay(uid: str) -> dict[str, Any]:
    return service().replay(uid)


@bp.get("/admin/games/<uid>/export")
@bp.auth_required(admin_auth)
@bp.doc(summary="Export a game as JSON (admin)", responses=answers(200, 401, 403, 404))
def admin_export(uid: str) -> dict[str, Any]:
    return service().export(uid)


@bp.post("/admin/games/import")
@bp.auth_required(admin_auth)
@bp.input(ImportIn, arg_name="body")
@bp.doc(summary="Import an exported game (admin)", responses=answers(201, 400, 401, 403))
@idempotent(201)
def admin_import(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().import_game(body, idempotency=answer)


@bp.get("/admin/verify")
@bp.auth_required(admin_auth)
@bp.doc(summary="Replay every game and check hashes and snapshots (admin)",
        responses=answers(200, 401, 403))
def admin_verify() -> dict[str, Any]:
    report = service().verify_all()
    return {"ok": not report, "games": report}
