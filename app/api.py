"""The JSON API under ``/api/`` (OpenAPI document at ``/api/openapi.json``).

Seats authenticate with their API token (``Authorization: Bearer ...``); a game's creator with
``X-Creator-Token``; the server's admin with the ``TITANPOST_ADMIN_TOKEN`` bearer token. Errors are
JSON objects ``{"error": "...", ...}`` whose message says what to do. Every POST takes an
``Idempotency-Key`` header (see :data:`DESCRIPTION` and app/idempotency.py).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from contextlib import suppress
from functools import wraps
from typing import Any

from apiflask import APIBlueprint, APIFlask, HTTPTokenAuth, Schema
from apiflask.fields import Boolean, DateTime, Dict, Integer, List, Nested, Raw, String
from apiflask.validators import Length, OneOf, Range
from flask import current_app, request
from marshmallow import INCLUDE
from sqlmodel import select

from app.games import GAMES as ALL_GAMES
from app.games import ruleset

from . import chat
from .clock import DEFAULT_REMINDERS, HANDOVERS, TIMEOUT_ACTIONS, ClockSettings
from .idempotency import HEADER, REPLAYED, Claim, Replay, check_key, current_store, fingerprint
from .mail.notify import MAIL_MODES
from .models import Game
from .service import (
    EXPORT_FORMAT,
    LANGUAGES,
    BadRequest,
    Forbidden,
    GameService,
    NotFound,
    Unauthorized,
    token_hash,
)
from .timekeeper import ABSENCE_MODES, SettingsChange, Timekeeper
from .timekeeper import install as install_timekeeper
from .webhooks import FORMATS as WEBHOOK_FORMATS
from .webhooks import add_webhook, list_webhooks, remove_webhook

DESCRIPTION = f"""The JSON API of a Titan Post server: create games, accept invitations, play.

**Authentication.** A seat's API token as `Authorization: Bearer <token>`; a game's creator
token as `X-Creator-Token`; the admin token (TITANPOST_ADMIN_TOKEN) as a bearer token. Errors
are `{{"error": "..."}}` objects whose message says what to do.

**Safe retries: `{HEADER}`.** Every POST takes an `{HEADER}` header (a random UUID is best,
one per request). When an answer is lost, send the same request with the same key again: the
first answer (status and body) comes back, with `{REPLAYED}: true`, and nothing is done twice:
no second game, and a repeated accept gets the same seat token. Keys are kept for 24 hours,
per credential (the bearer or creator token; without one, per key and path). The same key
with a different request (another body or path) is refused with 422; sent again while the
first request is still being processed, with 409 (wait, then retry). A refused request keeps
no answer: its retry runs again. The stored answers are kept encrypted.
"""

GAMES = tuple(ALL_GAMES)
GAME_VARIANTS = tuple(dict.fromkeys(v for game in GAMES for v in ruleset(game).variants))
"""Every game's variants (Titan Race's, then The Great Race's ``leaders``), from the rulesets:
the service checks that the variant belongs to the game."""

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
    uid, position, email = service().seat_for_token(token)
    return {"game": uid, "position": position, "email": email}


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


# ---------------------------------------------------------------------- schemas


class ErrorOut(Schema):
    """Every refusal: ``error`` says what is wrong and what to do; some carry more (``detail``
    per field of an invalid request, ``legal`` options of an illegal move, the ``state`` of a
    game that moved on)."""

    class Meta:
        unknown = INCLUDE

    error = String(required=True, metadata={"description": "What is wrong, in words"})
    detail = Dict(metadata={"description": "Per location and field, what is wrong with it"})


ANSWERS = {
    200: "Done",
    201: "Created",
    400: "The request is not valid (see error, and detail per field), or holds a control "
         "character, an unpaired surrogate or JSON nested more than 32 deep",
    401: "A token is missing, unknown or revoked",
    403: "The token does not allow this (another game's seat, not the creator, admin API off)",
    404: "No such game (or seat, invitation, away dates)",
    409: "The game is not in a state that takes this (not started, over, or it moved on)",
    413: "The request body is larger than TITANPOST_MAX_BODY_BYTES",
    422: "Not a legal move now (legal lists the legal options)",
    429: "Too many refused tokens or invitations from this address: wait Retry-After seconds",
}


def _answers(*codes: int) -> dict[int, str]:
    """The status codes an operation answers with, for its ``responses`` in the document."""
    return {code: ANSWERS[code] for code in codes}


def document_refusals(spec: dict[Any, Any] | str) -> dict[Any, Any] | str:
    """Spec processor: the refusals every operation may answer with (too large a body, too
    many refused tokens from one address, a control character or unpaired surrogate in its
    query or body: app/inputcheck.py), added to each operation of the document."""
    if isinstance(spec, str):
        return spec
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}
    for path, operations in spec.get("paths", {}).items():
        if not path.startswith("/api/"):
            continue
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            codes = [429, 413, 400] if "requestBody" in operation else [429, 400]
            for code in codes:
                responses.setdefault(str(code), {"description": ANSWERS[code],
                                                 "content": error})
        if "post" in operations:
            _document_key(operations["post"], error)
    return spec


KEY_PARAMETER = {
    "name": HEADER, "in": "header", "required": False,
    "schema": {"type": "string", "maxLength": 255, "example": "6f1c1c8e-3b7a-4c2e-9d0b-2a1f"},
    "description": "Makes a retry safe: the same request sent again with the same key within "
                   "24 hours gets the first answer again (header Idempotent-Replayed: true) "
                   "and nothing is done twice. A random UUID, one per request.",
}


def _document_key(operation: dict[str, Any], error: dict[str, Any]) -> None:
    """The Idempotency-Key header of a POST, and its two refusals."""
    operation.setdefault("parameters", []).append(KEY_PARAMETER)
    responses = operation.setdefault("responses", {})
    for code, words in ((400, "Or: the Idempotency-Key is not 1 to 255 printable ASCII "
                               "characters"),
                        (409, "Or: a request with this Idempotency-Key is still being "
                               "processed (send it again later)"),
                        (422, "Or: this Idempotency-Key was used for a different request")):
        if str(code) in responses:
            responses[str(code)]["description"] += f". {words}"
        else:
            responses[str(code)] = {"description": words, "content": error}


def _doc(kind: str, description: str, **more: Any) -> Raw:
    """A field checked by the game service (whose messages say what is wrong), documented in
    the OpenAPI document with its type (``nullable=True``: null is accepted too)."""
    return Raw(allow_none=bool(more.get("nullable")),
               metadata={"type": kind, "description": description, **more})


class SeatIn(Schema):
    """One seat of a new game (checked by the service)."""

    class Meta:
        unknown = INCLUDE

    email = _doc("string", "The player's address (not for computer seats)",
                 format="email", example="ann@example.com")
    name = _doc("string", "The player's name (default: the address before the @)", maxLength=100)
    titans = _doc("array", "Chosen Titan(s), or in The Great Race the crew; empty for a random "
                  "one", items={"type": "string"})
    team = _doc("integer", "The team (teams variant)")
    language = _doc("string", "Language of the player's mail and pages", enum=["en", "pl"],
                    default="en")
    bot = _doc("boolean", "A computer player's seat", default=False)
    quiet = _doc("string", "Quiet hours, e.g. 22:00-08:00: no deadline ends and no reminder "
                 "is sent in them", example="22:00-08:00", nullable=True)
    timezone = _doc("string", "The player's time zone (IANA name) for the quiet hours",
                    example="Europe/Warsaw", nullable=True)
    notify = _doc("object", "Mail preferences")


class GameSettingsIn(Schema):
    """A game's settings: its clock and who may watch (every key optional)."""

    class Meta:
        unknown = INCLUDE  # refused by the service, which lists the known settings

    deadline_hours = _doc("integer", "Hours for a decision of one's own turn; 0: no clock",
                          minimum=0, maximum=24 * 30, default=48)
    reaction_hours = _doc("integer", "Hours for an out-of-turn decision (reaction window, "
                          "pirates); at most deadline_hours", minimum=1, maximum=24 * 30,
                          default=12)
    bank_hours = _doc("integer", "A time bank per player, drawn on when a turn takes longer "
                      "than deadline_hours", minimum=0, maximum=24 * 30, default=0)
    increment_hours = _doc("integer", "Hours added to the bank after each turn", minimum=0,
                           maximum=24 * 7, default=0)
    reminders = _doc("array", "Reminder points: a share of the time ('50%') or hours before "
                     "the deadline ('2h'); at most 5", items={"type": "string"}, maxItems=5,
                     default=list(DEFAULT_REMINDERS))
    on_timeout = _doc("string", "When time runs out: the computer moves (bot), what can be "
                      "passed is passed (pass), or the game pauses (pause)",
                      enum=list(TIMEOUT_ACTIONS), default="bot")
    max_missed = _doc("integer", "Missed deadlines after which the seat is handed over; 0: "
                      "never", minimum=0, maximum=50, default=0)
    after_missed = _doc("string", "Then: the computer plays the seat (computer), or plays it "
                        "while the owner invites someone new (invite)", enum=list(HANDOVERS),
                        default="computer")
    spectators = _doc("boolean", "Whether anyone with the link may watch", default=True)


class CreateGameIn(Schema):
    name = String(load_default="", validate=Length(max=200))
    game = String(load_default="titan-race", validate=OneOf(GAMES),
                  metadata={"description": "The game: Titan Race or The Great Race"})
    variant = String(load_default="standard", validate=OneOf(GAME_VARIANTS),
                     metadata={"description": "Titan Race: standard, two-player, teams, "
                               "grand-slam; The Great Race: standard, leaders (the Leader "
                               "module)"})
    circuits = List(Raw(), load_default=None,
                    metadata={"description": "Titan Race: one circuit (three for Grand Slam), "
                              "a built-in name or a circuit object: a circuit file's content "
                              "as JSON (name, bonus, lava, pirates, ice, fire_statues, "
                              "pentacle, multi_ramps, super_ramps), default kaldheira; never "
                              "a file path. The Great Race: the start city, alger (default) "
                              "or le-cap"})
    seats = List(Nested(SeatIn), required=True, validate=Length(min=2, max=6))
    settings = Nested(GameSettingsIn, load_default=dict,
                      metadata={"description": "The clock and other options"})
    seed = Integer(load_default=None, validate=Range(min=0, max=2**62),
                   metadata={"description": "Admin only (the admin token as Bearer): deal "
                             "from this seed instead of a secret, for tournaments and tests; "
                             "every seat is told the seed was chosen. Refused from anyone else"})
    owner_email = String(load_default=None, allow_none=True, validate=Length(max=254),
                         metadata={"description": "Who is told about the clock (a pause, a "
                                   "seat to hand over); default: the first seat's player"})


class InviteIn(Schema):
    position = Integer(required=True, validate=Range(min=0, max=5))
    email = String(required=True, validate=Length(max=254))


class AcceptIn(Schema):
    invite_token = String(required=True, validate=Length(min=10, max=200))
    name = String(load_default=None, validate=Length(max=100))
    contribution = String(load_default=None, validate=Length(max=128), metadata={
        "description": "The seat's own randomness for the deal: 32 to 128 hexadecimal digits "
                       "the client drew (the server draws them when none are given)"})


class StartIn(Schema):
    fill_with_bots = Boolean(load_default=False)


class MoveIn(Schema):
    expected_seq = Integer(required=True, validate=Range(min=0),
                           metadata={"description": "Moves in the log when you saw the decision"})
    input = String(required=True, validate=Length(min=1, max=500),
                   metadata={"description": "One input, or several joined with ';'"})


class ChatIn(Schema):
    text = String(required=True, metadata={
        "description": "The message (1 to 1000 characters after trimming; line breaks kept). "
                       "Every seat and spectator of the game reads it."})


class ChatQuery(Schema):
    before = Integer(load_default=None, validate=Range(min=1), metadata={
        "description": "Only messages older than this message id (the page before)"})
    limit = Integer(load_default=50, validate=Range(min=1, max=200),
                    metadata={"description": "How many messages (newest last)"})


class PauseIn(Schema):
    reason = String(load_default="", validate=Length(max=200),
                    metadata={"description": "Told to the players (default: by its owner)"})


class WebhookIn(Schema):
    url = String(required=True, validate=Length(min=1, max=2000),
                 metadata={"description": "An http(s) address on a public host",
                           "example": "https://discord.com/api/webhooks/<id>/<token>"})
    format = String(required=True, validate=OneOf(WEBHOOK_FORMATS),
                    metadata={"description": "The body's shape: the chat service's, or ours "
                              "(json)"})
    language = String(load_default="en", validate=OneOf(LANGUAGES), metadata={
        "description": "The language its posts are worded in: the line people read, the ntfy "
                       "title and json's text (json's event fields are the same in every "
                       "language); an unknown one is refused with 400"})


class WebhookOut(Schema):
    id = Integer()
    url = String()
    format = String(metadata={"enum": list(WEBHOOK_FORMATS)})
    language = String(metadata={"enum": list(LANGUAGES)})
    signed = Boolean(metadata={"description": "Whether its posts are signed (json webhooks "
                               "added since signing began)"})
    created_at = String()


class AddedWebhookOut(WebhookOut):
    """The webhook just added (a schema of its own: the list nests WebhookOut)."""

    secret = String(allow_none=True, metadata={
        "description": "json webhooks: the secret its posts are signed with (Standard Webhooks: "
                       "webhook-id, webhook-timestamp and webhook-signature headers, v1 HMAC-"
                       "SHA256 of id.timestamp.body). Shown this once: keep it. Null for the "
                       "chat formats.", "example": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})


class WebhooksOut(Schema):
    webhooks = List(Nested(WebhookOut))


class AwayIn(Schema):
    starts = DateTime(required=True, data_key="from",
                      metadata={"description": "When the absence begins (ISO 8601; UTC when no "
                                "offset is given)", "example": "2025-07-01T08:00:00+02:00"})
    until = DateTime(required=True, metadata={"description": "When it ends (ISO 8601)",
                                              "example": "2025-07-15T20:00:00+02:00"})
    mode = String(load_default="stretch", validate=Length(max=20), metadata={
        "enum": list(ABSENCE_MODES),
        "description": "stretch: deadlines stretch over the absence; computer: the computer "
                       "plays for you meanwhile"})


class AbsenceOut(Schema):
    id = Integer()
    email = String()
    starts = String(attribute="from", data_key="from")
    until = String()
    mode = String(metadata={"enum": list(ABSENCE_MODES)})


class AddedAbsenceOut(AbsenceOut):
    """The away dates just added (a schema of its own: the list nests AbsenceOut)."""


class AbsencesOut(Schema):
    email = String()
    absences = List(Nested(AbsenceOut))


class QuietIn(Schema):
    quiet = String(load_default=None, allow_none=True, validate=Length(max=40),
                   metadata={"description": "Quiet hours such as 22:00-08:00; null clears them",
                             "example": "22:00-08:00"})
    timezone = String(load_default=None, allow_none=True, validate=Length(max=64),
                      metadata={"description": "IANA time zone of the quiet hours (default "
                                "UTC); null clears it", "example": "Europe/Warsaw"})


class QuietOut(Schema):
    game = String()
    position = Integer()
    quiet = String(allow_none=True)
    timezone = String(allow_none=True)


class SettingsIn(Schema):
    mail = String(load_default=None, allow_none=True, validate=OneOf(MAIL_MODES),
                  metadata={"description": "every: every mail; digest: one mail a day instead "
                            "of each decision's; none: only the game's result, a handover "
                            "notice and answers to mail you sent"})
    language = String(load_default=None, allow_none=True, validate=OneOf(LANGUAGES),
                      metadata={"description": "The language of your mail and pages"})
    quiet = String(load_default=None, allow_none=True, validate=Length(max=40),
                   metadata={"description": "Quiet hours such as 22:00-08:00; an empty string "
                             "clears them", "example": "22:00-08:00"})
    timezone = String(load_default=None, allow_none=True, validate=Length(max=64),
                      metadata={"description": "IANA time zone of the quiet hours; an empty "
                                "string means UTC", "example": "Europe/Warsaw"})
    anytime_windows = Boolean(load_default=None, allow_none=True, metadata={
        "description": "Titan Race: be asked whether to play an any-time card as another "
                       "player's turn starts (only before the game starts)"})
    everywhere = Boolean(load_default=False, metadata={
        "description": "Also set mail, language and quiet hours in every other unfinished "
                       "game of your address"})


class SettingsOut(Schema):
    game = String()
    position = Integer()
    mail = String()
    language = String()
    quiet = String(allow_none=True)
    timezone = String(allow_none=True)
    anytime_windows = Boolean()


class ReplaceIn(Schema):
    email = String(load_default=None, allow_none=True, validate=Length(max=254),
                   metadata={"description": "Invite this address to take the seat (the "
                             "computer plays it until the invitation is accepted)"})
    computer = Boolean(load_default=False,
                       metadata={"description": "The computer plays the seat from now on"})


class ClockOut(Schema):
    running = Boolean()
    deadline_hours = Integer()
    reaction_hours = Integer()
    bank_hours = Integer()
    increment_hours = Integer()
    reminders = List(String())
    on_timeout = String(metadata={"enum": list(TIMEOUT_ACTIONS)})
    max_missed = Integer()
    after_missed = String(metadata={"enum": list(HANDOVERS)})


class DeadlineOut(Schema):
    seat = Integer()
    seq = Integer(metadata={"description": "The log entry after which the decision opened"})
    kind = String(metadata={"description": "timeout, timeout-quick or reminder-N"})
    due_at = String(metadata={"format": "date-time"})


class SeatClockOut(Schema):
    position = Integer()
    name = String()
    bot = Boolean()
    bank_seconds = Integer(allow_none=True, metadata={"description": "Time bank left"})
    missed_deadlines = Integer()


class ImportIn(Schema):
    """A game as ``GET /api/admin/games/<uid>/export`` wrote it (the service checks every
    field of game, seats and moves, and replays the moves)."""

    class Meta:
        unknown = INCLUDE

    format = String(required=True, validate=OneOf([EXPORT_FORMAT]))
    version = Integer(load_default=1)
    game = Dict(required=True, metadata={"description": "The game's settings, status and "
                                         "initial state"})
    seats = List(Dict(), required=True, validate=Length(max=6))
    moves = List(Dict(), required=True)
    owner_email = String(load_default=None, allow_none=True, validate=Length(max=254))
    chat = List(Dict(), load_default=list, metadata={
        "description": "The game's chat, oldest first: each message's seat (null: the "
        "system's), created_at and text (older exports have none)"})


class DeadlinesOut(Schema):
    game = String()
    status = String()
    paused = Boolean()
    pause_reason = String(allow_none=True)
    decision_seq = Integer()
    to_act = List(Integer())
    clock = Nested(ClockOut)
    deadlines = List(Nested(DeadlineOut))
    seats = List(Nested(SeatClockOut))


# ---------------------------------------------------------------------- games


@bp.get("/")
@bp.doc(summary="Where things are", responses=_answers(200))
def index() -> dict[str, Any]:
    return {"service": "Titan Post", "openapi": "/api/openapi.json", "docs": "/api/docs"}


@bp.post("/games")
@bp.input(CreateGameIn, arg_name="body")
@bp.output({}, status_code=201)
@bp.doc(summary="Create a game", description="Returns the creator token (keep it: it starts, "
        "invites and abandons) and one invitation token per human seat.",
        responses=_answers(201, 400))
@idempotent(201, shape=lambda created: _with_links(created, created["invitations"]))
def create_game(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    if body["seed"] is not None and not _from_admin():
        raise BadRequest("a game's seed cannot be chosen: every game is dealt from a secret "
                         "that the server and the players draw together (only the admin may "
                         "deal from a chosen seed, and every seat is then told)")
    return service().create_game(
        seats=body["seats"], variant=body["variant"], circuits=body["circuits"],
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
        responses=_answers(200, 401))
def my_games() -> dict[str, Any]:
    seat = seat_auth.current_user
    assert seat is not None
    return {"games": service().my_games(seat["email"])}


@bp.get("/me")
@bp.auth_required(seat_auth)
@bp.doc(summary="Who am I", description="The game, seat and address the API token belongs to.",
        responses=_answers(200, 401))
def whoami() -> dict[str, Any]:
    seat = seat_auth.current_user
    assert seat is not None
    return {"game": seat["game"], "position": seat["position"], "email": seat["email"]}


@bp.get("/games/<uid>")
@bp.doc(summary="Game state", description="Your view with a seat token; without one, the "
        "spectator view (no hidden information).", security=[{}, {"SeatToken": []}],
        responses=_answers(200, 401, 403, 404))
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
        "every legal input in the notation.", responses=_answers(200, 401, 403, 404))
def game_options(uid: str) -> dict[str, Any]:
    return service().options(uid, _seat_in(uid))


@bp.post("/games/<uid>/moves")
@bp.auth_required(seat_auth)
@bp.input(MoveIn, arg_name="body")
@bp.doc(summary="Submit inputs", description="409 with the current state when the game moved "
        "on; 422 with the legal options (at the first input) and the index of the part refused "
        "when an input is illegal or, in a chain joined with ';', answers a decision not yours; "
        "a repeated identical submission is answered as already applied.",
        responses=_answers(200, 400, 401, 403, 404, 409, 422))
@replayable()
def submit_move(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    return service().submit(uid, _seat_in(uid), body["expected_seq"], body["input"])


@bp.get("/games/<uid>/log")
@bp.doc(summary="Move log", security=[{}, {"SeatToken": []}],
        responses=_answers(200, 401, 403, 404))
def game_log(uid: str) -> dict[str, Any]:
    return service().log(uid, _optional_seat(uid))


@bp.post("/games/<uid>/invitations")
@bp.input(InviteIn, arg_name="body")
@bp.doc(summary="Invite a player to a seat", description="Creator only (X-Creator-Token).",
        security=CREATOR, responses=_answers(201, 400, 401, 403, 404, 409))
@idempotent(201, shape=_with_link)
def invite(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().invite(uid, _creator_token(), body["position"], body["email"],
                            idempotency=answer)


@bp.get("/games/<uid>/fairness")
@bp.doc(summary="Fair dealing", description="The commitment to the game's secret (its SHA-256) "
        "and whether the admin chose the seed; once the game is over, the secret, the seats' "
        "contributions and set-up and the whole log, to recompute every random outcome "
        "(`titanpost verify-fair`).", security=[{}, {"SeatToken": []}],
        responses=_answers(200, 401, 403, 404))
def game_fairness(uid: str) -> dict[str, Any]:
    return service().fairness(uid, _optional_seat(uid))


@bp.post("/invitations/accept")
@bp.input(AcceptIn, arg_name="body")
@bp.doc(summary="Accept an invitation", description="Returns the seat's API token, once: the "
        "invitation is used up. Send an Idempotency-Key to be able to ask again for the same "
        "token should the answer be lost.",
        responses=_answers(201, 400, 404, 409))
@idempotent(201)
def accept(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().accept(body["invite_token"], name=body["name"],
                            contribution=body["contribution"], idempotency=answer)


@bp.post("/games/<uid>/start")
@bp.input(StartIn, arg_name="body")
@bp.doc(summary="Start the game", description="Creator only. Seats not yet accepted may be "
        "given to computer players with fill_with_bots.", security=CREATOR,
        responses=_answers(200, 400, 401, 403, 404, 409))
@idempotent()
def start(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().start(uid, _creator_token(), fill_with_bots=body["fill_with_bots"],
                           idempotency=answer)


@bp.post("/games/<uid>/resign")
@bp.auth_required(seat_auth)
@bp.doc(summary="Resign", description="A computer player takes over the seat.",
        responses=_answers(200, 400, 401, 403, 404, 409))
@replayable()
def resign(uid: str) -> dict[str, Any]:
    return service().resign(uid, _seat_in(uid))


@bp.post("/games/<uid>/abandon")
@bp.doc(summary="Abandon the game", description="Creator only.", security=CREATOR,
        responses=_answers(200, 401, 403, 404, 409))
@replayable()
def abandon(uid: str) -> dict[str, Any]:
    return service().abandon(uid, _creator_token())


# ---------------------------------------------------------------------- chat


@bp.get("/games/<uid>/chat")
@bp.input(ChatQuery, location="query", arg_name="query")
@bp.doc(summary="The game's chat", description="A page of messages, newest last (more: older "
        "ones exist; ask again with before). The chat is public: every seat reads it, and "
        "spectators too when the game allows them.", security=[{}, {"SeatToken": []}],
        responses=_answers(200, 400, 401, 403, 404))
def read_chat(uid: str, query: dict[str, Any]) -> dict[str, Any]:
    return chat.read(service(), uid, _optional_seat(uid), before=query["before"],
                     limit=query["limit"])


@bp.post("/games/<uid>/chat")
@bp.auth_required(seat_auth)
@bp.input(ChatIn, arg_name="body")
@bp.doc(summary="Post to the game's chat", description="As the token's seat. The other seats "
        "read it on the game page and in their next mail; never write hidden information "
        "here (the whole table reads it).", responses=_answers(201, 400, 401, 403, 404))
@idempotent(201)
def post_chat(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return chat.post(service(), uid, _seat_in(uid), body["text"], idempotency=answer)


# ---------------------------------------------------------------------- webhooks


@bp.get("/games/<uid>/webhooks")
@bp.output(WebhooksOut)
@bp.doc(summary="The game's webhooks", description="Creator only.", security=CREATOR,
        responses=_answers(200, 401, 403, 404))
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
        security=CREATOR, responses=_answers(201, 400, 401, 403, 404))
@idempotent(201)
def post_webhook(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return add_webhook(service(), uid, _creator_token(), body["url"], body["format"],
                       language=body["language"], idempotency=answer)


@bp.delete("/games/<uid>/webhooks/<int:webhook_id>")
@bp.doc(summary="Remove a webhook", description="Creator only. Its unsent posts go too.",
        security=CREATOR, responses=_answers(200, 401, 403, 404))
def delete_webhook(uid: str, webhook_id: int) -> dict[str, Any]:
    return remove_webhook(service(), uid, _creator_token(), webhook_id)


# ---------------------------------------------------------------------- the clock


@bp.post("/games/<uid>/pause")
@bp.input(PauseIn, arg_name="body")
@bp.doc(summary="Pause the game", description="Creator only (X-Creator-Token). The clock "
        "stops and no moves are taken until the game is resumed; the players are told.",
        security=CREATOR, responses=_answers(200, 400, 401, 403, 404, 409))
@replayable()
def pause(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    return service().pause(uid, _creator_token(), reason=body["reason"].strip())


@bp.post("/games/<uid>/resume")
@bp.doc(summary="Resume a paused game", description="Creator only. Open deadlines move on by "
        "the length of the pause.", security=CREATOR,
        responses=_answers(200, 400, 401, 403, 404, 409))
@replayable()
def resume(uid: str) -> dict[str, Any]:
    return service().resume(uid, _creator_token())


@bp.get("/games/<uid>/deadlines")
@bp.output(DeadlinesOut)
@bp.doc(summary="The clock", description="The open deadlines (timeouts and reminders, due "
        "times in UTC), the clock settings in effect, whether the game is paused, and each "
        "seat's time bank and missed deadlines. For the game's seats (Bearer token) and, when "
        "the game allows them, spectators.", security=[{}, {"SeatToken": []}],
        responses=_answers(200, 401, 403, 404))
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
        responses=_answers(200, 400, 401, 403, 404, 409))
def set_quiet(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    position = _seat_in(uid)
    prefs = keeper().set_quiet_hours(uid, position, body["quiet"], body["timezone"])
    return {"game": uid, "position": position, "quiet": prefs.get("quiet"),
            "timezone": prefs.get("timezone")}


@bp.get("/games/<uid>/me/settings")
@bp.auth_required(seat_auth)
@bp.output(SettingsOut)
@bp.doc(summary="My settings", description="The token's seat's own settings: mail, language, "
        "quiet hours and time zone.", responses=_answers(200, 401, 403, 404))
def my_settings(uid: str) -> dict[str, Any]:
    return keeper().settings_of(uid, _seat_in(uid))


SETTINGS_DOC = ("Change the token's seat's own settings (only those given). Bad values are "
                "refused with 400 and change nothing. Answers the settings now in force.")


@bp.post("/games/<uid>/me/settings")
@bp.auth_required(seat_auth)
@bp.input(SettingsIn, arg_name="body")
@bp.output(SettingsOut)
@bp.doc(summary="Change my settings", description=SETTINGS_DOC,
        responses=_answers(200, 400, 401, 403, 404))
@replayable()
def change_settings(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    return keeper().change_settings(uid, _seat_in(uid), SettingsChange(**body))


@bp.patch("/games/<uid>/me/settings")
@bp.auth_required(seat_auth)
@bp.input(SettingsIn, arg_name="body")
@bp.output(SettingsOut)
@bp.doc(summary="Change my settings (PATCH)", description=SETTINGS_DOC,
        responses=_answers(200, 400, 401, 403, 404))
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
        "its games (cancelled ones are not listed).", responses=_answers(200, 401, 403))
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
        responses=_answers(201, 400, 401, 403))
@idempotent(201)
def add_away(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return keeper().set_absence(_my_email(), body["starts"], body["until"], body["mode"],
                                idempotency=answer)


@bp.delete("/away/<int:absence_id>")
@bp.auth_required(seat_auth)
@bp.doc(summary="Cancel away dates", description="Your deadlines are computed without them "
        "again.", responses=_answers(200, 400, 401, 403, 404))
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
        "player's token and links stop working.", security=CREATOR,
        responses=_answers(200, 400, 401, 403, 404, 409))
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
    return service().replace_seat(uid, _creator_token(), position, email, idempotency=answer)


# ---------------------------------------------------------------------- admin


@bp.get("/admin/games/<uid>/states/<int:seq>")
@bp.auth_required(admin_auth)
@bp.doc(summary="The full state after a given move (admin)",
        responses=_answers(200, 401, 403, 404))
def admin_state_at(uid: str, seq: int) -> dict[str, Any]:
    return service().state_at(uid, seq)


@bp.get("/admin/games/<uid>/replay")
@bp.auth_required(admin_auth)
@bp.doc(summary="Every move with the board after it (admin)",
        responses=_answers(200, 401, 403, 404))
def admin_replay(uid: str) -> dict[str, Any]:
    return service().replay(uid)


@bp.get("/admin/games/<uid>/export")
@bp.auth_required(admin_auth)
@bp.doc(summary="Export a game as JSON (admin)", responses=_answers(200, 401, 403, 404))
def admin_export(uid: str) -> dict[str, Any]:
    return service().export(uid)


@bp.post("/admin/games/import")
@bp.auth_required(admin_auth)
@bp.input(ImportIn, arg_name="body")
@bp.doc(summary="Import an exported game (admin)", responses=_answers(201, 400, 401, 403))
@idempotent(201)
def admin_import(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().import_game(body, idempotency=answer)


@bp.get("/admin/verify")
@bp.auth_required(admin_auth)
@bp.doc(summary="Replay every game and check hashes and snapshots (admin)",
        responses=_answers(200, 401, 403))
def admin_verify() -> dict[str, Any]:
    report = service().verify_all()
    return {"ok": not report, "games": report}
