"""What the JSON API's OpenAPI document says of it: its description, the schemas of its requests
and answers, and the refusals every operation may answer with (added to each operation by
:func:`document_refusals`). app/web/api/games.py has the endpoints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from apiflask import Schema
from apiflask.fields import Boolean, DateTime, Dict, Integer, List, Nested, Raw, String
from apiflask.validators import Length, OneOf, Range
from marshmallow import INCLUDE

from app.core.integers import COLUMN_MAX, COLUMN_MIN
from app.features.clock.arithmetic import DEFAULT_REMINDERS, HANDOVERS, TIMEOUT_ACTIONS
from app.features.clock.keeperbase import ABSENCE_MODES
from app.features.webhooks.hooks import FORMATS as WEBHOOK_FORMATS
from app.games import DEFAULT_GAME, ruleset
from app.games import GAMES as ALL_GAMES
from app.games.apiwords import OLDER_PIECES, OLDER_SETUP, OLDER_TEAM, joined
from app.games.base import ASK, BOT_LEVELS, EASY, NEVER
from app.mail.notify import MAIL_MODES
from app.service import EXPORT_FORMAT, LANGUAGES
from app.web.idempotency import HEADER, REPLAYED

DESCRIPTION = f"""The JSON API of a Titan Post server: create games, accept invitations, play.

**Authentication.** A seat's API token as `Authorization: Bearer <token>`; a game's creator
token as `X-Creator-Token`; the admin token (TITANPOST_ADMIN_TOKEN) as a bearer token. Errors
are `{{"error": "..."}}` objects whose message says what to do.

**Seats.** A seat's `position` counts from 0, in seating order; people read seats from 1, so
the pages, mails and error messages call position 0 "seat 1".

**Safe retries: `{HEADER}`.** Every POST takes an `{HEADER}` header (a random UUID is best,
one per request). When an answer is lost, send the same request with the same key again: the
first answer (status and body) comes back, with `{REPLAYED}: true`, and nothing is done twice:
no second game, and a repeated accept gets the same seat token. Keys are kept for 24 hours,
per credential (the bearer or creator token; without one, per key and path). The same key
with a different request (another body or path) is refused with 422; sent again while the
first request is still being processed, with 409 (wait, then retry). A refused request keeps
no answer: its retry runs again. The stored answers are kept encrypted.
"""

POSITION = ("The seat's position, counted from 0 in seating order (the pages, mails and error "
            "messages number seats from 1: position 0 is seat 1)")

GAMES = tuple(ALL_GAMES)
GAME_VARIANTS = tuple(dict.fromkeys(v for game in GAMES for v in ruleset(game).variants))
"""Every game's variants, in the registry's order, from the rulesets: the service checks that
the variant belongs to the game."""
API_WORDS = {ALL_GAMES[game].title: ruleset(game).api_words for game in GAMES}
"""What each game's ruleset says of its setup and pieces in the reference, by its title."""
FIRST_WORDS = ruleset(DEFAULT_GAME).api_words
"""The default game's: the examples."""
CARD_CHOICES = "; ".join(
    f"{ALL_GAMES[game].title}: "
    + ", ".join(c for c in ruleset(game).standing_choices if c not in (ASK, NEVER))
    for game in GAMES)
"""The cards a standing choice may name, game by game."""


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
    400: "The request is not valid (see error, and detail per field; a whole number beyond "
         f"a field's range, which is at most {COLUMN_MIN} to {COLUMN_MAX}, among them), or "
         "holds a control character, an unpaired surrogate, JSON nested more than 32 deep or "
         "a number wider than 64 bits, or its body could not be read whole",
    401: "A token is missing, unknown or revoked",
    403: "The token does not allow this (another game's seat, not the creator, admin API off)",
    404: "No such game (or seat, invitation, away dates)",
    409: "The game is not in a state that takes this (not started, over, or it moved on)",
    413: "The request body is larger than TITANPOST_MAX_BODY_BYTES",
    422: "Not a legal move now (legal lists the legal options)",
    429: "Too many refused tokens or invitations from this address: wait Retry-After seconds",
}


def answers(*codes: int) -> dict[int, str]:
    """The status codes an operation answers with, for its ``responses`` in the document."""
    return {code: ANSWERS[code] for code in codes}


def document_refusals(spec: dict[Any, Any] | str) -> dict[Any, Any] | str:
    """Spec processor: the refusals every operation may answer with (too large a body, too
    many refused tokens from one address, a control character or unpaired surrogate or a number
    too large in its query or body: app/web/inputcheck.py), added to each operation of the
    document."""
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


class ColumnInteger(Integer):
    """A request's whole number from ``low`` to ``high``, which are held to a column's range
    (:data:`~app.core.integers.COLUMN_MIN` to :data:`~app.core.integers.COLUMN_MAX`, the defaults):
    beyond them the request is refused with 400 naming the field, before the number reaches a
    query (app/core/integers.py). The range is shown in the OpenAPI document. A field stored in a
    wider column is a plain ``Integer`` with its own ``Range``."""

    def __init__(self, *, low: int = COLUMN_MIN, high: int = COLUMN_MAX, **kwargs: Any) -> None:
        super().__init__(validate=Range(min=max(low, COLUMN_MIN), max=min(high, COLUMN_MAX)),
                         **kwargs)


def _doc(kind: str, description: str, **more: Any) -> Raw:
    """A field checked by the game service (whose messages say what is wrong), documented in
    the OpenAPI document with its type (``nullable=True``: null is accepted too)."""
    return Raw(allow_none=bool(more.get("nullable")),
               metadata={"type": kind, "description": description, **more})


if TYPE_CHECKING:
    OlderSeatFields = Schema
else:
    OlderSeatFields = Schema.from_dict({
        OLDER_PIECES: _doc("array", "The older form of pieces: "
                           f"{joined(API_WORDS, 'older_pieces')}; empty for random ones",
                           items={"type": "string"}),
        OLDER_TEAM: _doc("integer", "The older form of the seat's team, in a variant that has "
                         "them"),
    }, name="OlderSeatFields")
"""The seat's older fields (:data:`app.games.apiwords.OLDER_PIECES`), still accepted: named by the
kit's constants, so made from a mapping (to the type checker, a plain schema)."""


class SeatIn(OlderSeatFields):
    """One seat of a new game (checked by the service). A key it does not know is refused
    by name (a mistyped ``emial`` is not an empty address)."""

    email = _doc("string", "The player's address (not for computer seats)",
                 format="email", example="ann@example.com")
    name = _doc("string", "The player's name (default: the address before the @)", maxLength=100)
    pieces = _doc("object", f"Instead of {OLDER_PIECES} and {OLDER_TEAM}: the pieces the seat "
                  "asks for, in the game's own terms. "
                  f"{joined(API_WORDS, 'pieces')}; {{}} for random ones. The game's JSON gives "
                  "each seat's pieces the same way",
                  example=FIRST_WORDS.pieces_example, nullable=True)
    language = _doc("string", "Language of the player's mail and pages", enum=["en", "pl"],
                    default="en")
    bot = _doc("boolean", "A computer player's seat", default=False)
    level = _doc("string", "A computer seat's level: easy (a quick heuristic, moving at once), "
                 "normal or strong (searching players, moved by the server's worker within "
                 "about a second, strong taking up to a second a decision). Easy when none is "
                 "given, as before levels existed; only with bot: true",
                 enum=list(BOT_LEVELS), default=EASY, nullable=True)
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


if TYPE_CHECKING:
    OlderSetupField = Schema
else:
    OlderSetupField = Schema.from_dict({
        OLDER_SETUP: List(Raw(), load_default=None, metadata={
            "description": f"The older form of setup (give one or the other): "
                           f"{joined(API_WORDS, 'older_setup')}"}),
    }, name="OlderSetupField")
"""The game's older setup field (:data:`app.games.apiwords.OLDER_SETUP`), still accepted."""


class CreateGameIn(OlderSetupField):
    name = String(load_default="", validate=Length(max=200))
    # (OneOf the registry itself: a game registered later is taken too)
    game = String(load_default=DEFAULT_GAME, validate=OneOf(ALL_GAMES), metadata={
        "description": "The game: " + ", ".join(f"{name} ({ALL_GAMES[name].title})"
                                                for name in GAMES)})
    variant = String(load_default="standard", validate=OneOf(GAME_VARIANTS),
                     metadata={"description": joined(API_WORDS, "variants")})
    setup = Raw(load_default=None, allow_none=True, metadata={
        "type": "object", "description": f"Instead of {OLDER_SETUP}: the game's setup in its "
        f"own terms. {joined(API_WORDS, 'setup')}. Default: the game's default. The game's "
        f"JSON gives it back as setup, beside {OLDER_SETUP}",
        "example": FIRST_WORDS.setup_example})
    seats = List(Nested(SeatIn), required=True, validate=Length(min=2, max=6))
    settings = Nested(GameSettingsIn, load_default=dict,
                      metadata={"description": "The clock and other options"})
    seed = Integer(load_default=None, validate=Range(min=0, max=2**62),  # (a BIGINT)
                   metadata={"description": "Admin only (the admin token as Bearer): derive "
                             "the game's secret from this seed (scrypt), so that it deals the "
                             "same in every game, for tournaments and tests; every seat is told "
                             "the seed was chosen, and it is published when the game ends. "
                             "Refused from anyone else"})
    owner_email = String(load_default=None, allow_none=True, validate=Length(max=254),
                         metadata={"description": "Who is told about the clock (a pause, a "
                                   "seat to hand over); default: the first seat's player"})
    creator_seat = ColumnInteger(load_default=None, allow_none=True, low=0, high=5, metadata={
        "description": "The position (from 0) of a player's seat the creator takes at once, "
                       "without an invitation: the answer gives its api_token. Its share of the "
                       "deal is given afterwards, once the client has read the commitment the "
                       "answer gives: POST /api/games/{id}/contribution"})


class InviteIn(Schema):
    position = ColumnInteger(required=True, low=0, high=5,
                       metadata={"description": POSITION})
    email = String(required=True, validate=Length(max=254))


class AcceptIn(Schema):
    invite_token = String(required=True, validate=Length(min=10, max=200))
    name = String(load_default=None, validate=Length(max=100))
    contribution = String(load_default=None, validate=Length(max=128), metadata={
        "description": "The seat's own randomness for the deal: 32 to 128 hexadecimal digits "
                       "the client drew (the server draws them when none are given)"})


CONTRIBUTION = ("The seat's own randomness for the deal: 32 to 128 hexadecimal digits the "
                "client drew after it was shown the game's commitment")


class JoinIn(Schema):
    contribution = String(load_default=None, validate=Length(max=128), metadata={
        "description": CONTRIBUTION + " (the server draws them when none are given)"})


class ContributionIn(Schema):
    contribution = String(required=True, validate=Length(max=128),
                          metadata={"description": CONTRIBUTION})


class StartIn(Schema):
    fill_with_bots = Boolean(load_default=False)
    bot_level = String(load_default=EASY, validate=OneOf(BOT_LEVELS), metadata={
        "description": "The level of the computer players fill_with_bots seats (easy when "
                       "none is given)"})


MOVE_INPUT_MAX = 500
"""The longest input a move's body takes (characters)."""


class MoveIn(Schema):
    expected_seq = ColumnInteger(required=True, low=0,
                           metadata={"description": "Moves in the log when you saw the decision"})
    input = String(required=True, validate=Length(min=1, max=MOVE_INPUT_MAX),
                   metadata={"description": "One input, or several joined with ';'"})


class ChatIn(Schema):
    text = String(required=True, metadata={
        "description": "The message (1 to 1000 characters after trimming; line breaks kept). "
                       "Every seat and spectator of the game reads it."})


class ChatQuery(Schema):
    before = ColumnInteger(load_default=None, low=1, metadata={
        "description": "Only messages older than this message id (the page before)"})
    limit = ColumnInteger(load_default=50, low=1, high=200,
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
    position = Integer(metadata={"description": POSITION})
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
        "description": "In a game with any-time cards: be asked whether to play one as another "
                       "player's turn starts (only before the game starts)"})
    reactions = String(load_default=None, allow_none=True, validate=Length(max=40), metadata={
        "description": "Your standing choice for your windows (the decisions out of your turn, "
                       "such as a reaction), private to you: ask (the default), never, or a "
                       f"card ({CARD_CHOICES}) to play whenever it fits, else decline. It "
                       "answers at once, the same way whatever your hand holds",
        "example": "never"})
    everywhere = Boolean(load_default=False, metadata={
        "description": "Also set mail, language and quiet hours in every other unfinished "
                       "game of your address"})


class SettingsOut(Schema):
    game = String()
    position = Integer(metadata={"description": POSITION})
    mail = String()
    language = String()
    quiet = String(allow_none=True)
    timezone = String(allow_none=True)
    anytime_windows = Boolean()
    ruleset = String()
    reactions = String()
    reaction_choices = List(String())


class ReplaceIn(Schema):
    email = String(load_default=None, allow_none=True, validate=Length(max=254),
                   metadata={"description": "Invite this address to take the seat (the "
                             "computer plays it until the invitation is accepted)"})
    computer = Boolean(load_default=False,
                       metadata={"description": "The computer plays the seat from now on"})
    level = String(load_default=None, allow_none=True, validate=OneOf(BOT_LEVELS), metadata={
        "description": "The computer's level for the seat (easy, normal or strong); not given: "
                       "the seat's own, easy unless the clock handed it over at normal"})


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
    position = Integer(metadata={"description": POSITION})
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
    version = ColumnInteger(load_default=1)
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
