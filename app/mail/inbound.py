"""Reply by e-mail: the worker applying the replies queued from a reply address, and answering.

Every mail of a game carries its seat's reply address (``play+<game>.<seat>.<sig>@<domain>``,
see :mod:`app.mail.addresses`). The SMTP listener (:mod:`app.mail.inbound_smtp`) refuses other
recipients at RCPT and queues each accepted message (:mod:`app.mail.inbound_queue`); the IMAP
poller (:mod:`app.mail.inbound_imap`) queues the unseen messages of a mailbox the same way. A
worker then calls :func:`process_inbound`, which

1. claims unprocessed rows atomically (:func:`~app.mail.inbound_queue.claim_inbound`: several
   workers never take the same row; a claim older than ``stale_after`` is taken over, for a
   worker that died),
2. reads the reply (:mod:`app.mail.inbound_text`): the plain part or the HTML converted, quotes
   and signature stripped, and the first lines of notation,
3. finds the decision it answers: the sequence number of the Message-ID it replies to
   (In-Reply-To, then References, in the form ``<{game}.{seq}.{seat}.{kind}@{mail domain}>``),
   else the decision pending now; both are stored in the row before the move is submitted, so a
   row processed again after a crash is recognised by the service as already applied,
4. submits the move through :meth:`GameService.submit`, and
5. answers a refused reply by mail, with the reason and what the player can do now (in the
   words of :mod:`app.mail.inbound_answers`): an :class:`~app.core.models.OutboxMail` row of
   kind ``reply-error`` (``reply-ok`` confirms a played move when asked for) whose payload is
   ``{"subject", "text", "in_reply_to", "reply_to"}``.

A first line that is no input but reads as an attempt at one (its first word one of the
notation's, ``go Z99``) is a move too, refused with the legal inputs: a mistyped move must
never reach the public chat (:meth:`app.games.base.Ruleset.attempted`).

A reply without a move is the player talking: its own text (quotes and signature stripped) is
posted to the game's chat as the seat (result ``chat``, in the transaction that marks the row
processed) and answered with a ``reply-ok`` that says so and how to send a move instead. A
reply with a move is a move: the lines around it ("Hi all," above, a remark below) are not
posted, so that greetings and signatures never fill the chat; to talk and move, send two
replies (or use the page). An empty reply, or one over the chat's length limit, is answered
as before: no move found.

Automatic mail (bounces, vacation replies, mailing-list traffic) is never answered, so that two
robots cannot mail each other forever (:mod:`app.mail.inbound_headers` tells it by its headers);
a bounce among it is applied (result ``bounce``: :func:`_automatic`).

One message is one reply: it is queued once, however many reply addresses its recipients name
and however often (for its author's seat among them, else the first:
:func:`~app.mail.inbound_queue.queue_reply`; a copy seen again by its Message-ID is not queued),
so it is played at most once and answered at most once. A mail whose From names no one address
(two, none, or a second From header) plays nothing and is answered, as a bounce is, at its
envelope sender, with nothing of the game (:func:`~app.mail.inbound_headers.sole_author`).
"""

from __future__ import annotations

import logging
import re
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from email.message import EmailMessage
from typing import Any

from sqlmodel import Session, select

from app.core.config import Settings
from app.core.i18n import language
from app.core.models import Game, InboundMail, OutboxMail, Seat, utcnow
from app.features.chat.messages import add_message, clean_text
from app.features.delivery.bounces import apply_bounce
from app.games import ruleset
from app.games.base import MoveRejected, SetupError
from app.service import (
    EMAIL,
    BadRequest,
    Forbidden,
    GameMovedOn,
    GameService,
    IllegalMove,
    NotFound,
    NotPlaying,
    ServiceError,
)

from .addresses import reply_address
from .inbound_answers import (
    ReplyContext,
    answer_subject,
    chat_posted_text,
    illegal_text,
    moved_on_text,
    not_one_author_text,
    ok_text,
    refused_text,
    stranger_text,
    unparseable_text,
)
from .inbound_headers import (
    answer_address,
    automatic_reason,
    header_text,
    parse_message,
    sole_author,
)
from .inbound_queue import STALE_CLAIM, claim_inbound
from .inbound_text import Extracted, extract
from .notify import decision_kinds

log = logging.getLogger(__name__)

REPLY_ERROR = "reply-error"
REPLY_OK = "reply-ok"
MAX_ATTEMPTS = 5
"""Claims of one row before it is given up (result "failed"): a message that makes the worker
fail every time must not block the queue."""

# Results stored in InboundMail.result.
APPLIED = "applied"
DUPLICATE = "duplicate"
ILLEGAL = "illegal"
MOVED_ON = "moved-on"
NOT_YOURS = "not-yours"
NOT_THE_PLAYER = "not-the-player"
NOT_ONE_AUTHOR = "not-one-author"
NOT_PLAYING = "not-playing"
UNPARSEABLE = "unparseable"
CHAT = "chat"
UNKNOWN_GAME = "unknown-game"
IGNORED = "ignored"
BOUNCE = "bounce"
FAILED = "failed"


# ------------------------------------------------------------------------------ processing


@dataclass
class Outcome:
    """What became of one queued reply."""

    inbound_id: int
    result: str
    detail: str = ""
    notation: str | None = None
    reply_kind: str | None = None


@dataclass
class _Reply:
    kind: str
    seq: int | None
    subject: str
    text: str
    stranger: bool = False
    """An answer to someone who is not the seat's player: it goes back to them and tells
    nothing of the game; every other answer goes to the seat's player only (it lists the
    seat's options, which can name the cards in its hand)."""
    bounce: bool = False
    """A stranger's answer that goes to the envelope sender alone, as a bounce does (the
    mail's own headers named no one author to answer)."""


def process_inbound(
    service: GameService,
    limit: int = 50,
    *,
    worker: str | None = None,
    confirm: bool = False,
    stale_after: timedelta = STALE_CLAIM,
) -> list[Outcome]:
    """Claim and apply up to ``limit`` queued replies; answer refused ones by mail.

    ``confirm`` also answers played moves (a ``reply-ok`` mail).
    """
    worker = worker or f"{socket.gethostname()}:{uuid.uuid4().hex[:8]}"
    token, ids = claim_inbound(service.engine, worker, limit, stale_after=stale_after)
    outcomes = []
    for row_id in ids:
        try:
            outcomes.append(_process_one(service, token, row_id, confirm))
        except Exception:
            # The row stays claimed: it is taken again after stale_after, up to MAX_ATTEMPTS.
            log.exception("inbound mail %s could not be processed", row_id)
            outcomes.append(Outcome(row_id, "error", "see the log"))
    return outcomes


def _process_one(service: GameService, token: str, row_id: int, confirm: bool) -> Outcome:
    with service.session() as s:
        row = s.get(InboundMail, row_id)
        assert row is not None
    settings = service.settings
    if row.attempts > MAX_ATTEMPTS:
        detail = f"given up after {row.attempts - 1} failed attempts"
        return _finish(service, token, row, None, FAILED, detail)
    try:
        msg = parse_message(row.raw)
    except Exception as exc:  # the email package tolerates almost anything; be safe
        return _finish(service, token, row, None, IGNORED, f"unreadable message: {exc}")
    automatic = automatic_reason(msg, row.sender, settings)
    if automatic:
        return _automatic(service, token, row, automatic)
    context = _context(service, row.game_uid, row.seat)
    if context is None:
        return _finish(service, token, row, None, UNKNOWN_GAME, f"no game {row.game_uid}")
    author = sole_author(msg)
    if author is None:
        reply = _Reply(REPLY_ERROR, None, answer_subject(msg, context),
                       not_one_author_text(context), stranger=True, bounce=True)
        detail = "its From names no one address"
        return _finish(service, token, row, msg, NOT_ONE_AUTHOR, detail, reply)
    stranger = _stranger(author, context)
    if stranger is not None:
        reply = _Reply(REPLY_ERROR, None, answer_subject(msg, context),
                       stranger_text(context, stranger), stranger=True)
        detail = f"sent from {stranger}, not from the seat's player"
        return _finish(service, token, row, msg, NOT_THE_PLAYER, detail, reply)
    is_notation, is_attempt = _notation_tests(context.rules_name)
    read = extract(msg, is_notation, is_attempt)
    chat_text = _chat_text(read) if read.notation is None else None
    if chat_text is not None:
        current = _current(service, row.game_uid, row.seat)
        reply = _Reply(REPLY_OK, current.get("seq"), answer_subject(msg, context),
                       chat_posted_text(context, chat_text, current))
        return _finish(service, token, row, msg, CHAT, "posted to the game's chat", reply,
                       chat_text=chat_text)
    if read.notation is None:
        current = _current(service, row.game_uid, row.seat)
        reply = _Reply(
            REPLY_ERROR,
            current.get("seq"),
            answer_subject(msg, context),
            unparseable_text(context, read, current),
        )
        return _finish(service, token, row, msg, UNPARSEABLE, "no notation found", reply)
    notation = read.notation
    expected = row.expected_seq
    if expected is None or row.input != notation:
        expected = _replied_seq(msg, row.game_uid, row.seat, settings.mail_domain)
        if expected is None:
            expected = _current(service, row.game_uid, row.seat).get("seq", 0)
        if not _remember_attempt(service, token, row_id, expected, notation):
            return Outcome(row_id, "lost-claim")
    return _submit(service, token, row, msg, context, notation, expected, confirm)


def _submit(
    service: GameService,
    token: str,
    row: InboundMail,
    msg: EmailMessage,
    context: ReplyContext,
    notation: str,
    expected: int,
    confirm: bool,
) -> Outcome:
    uid, seat = row.game_uid, row.seat
    subject = answer_subject(msg, context)
    try:
        done = service.submit(uid, seat, expected, notation)
    except IllegalMove as exc:
        current = _current(service, uid, seat)
        legal = list(exc.extra.get("legal") or current.get("options") or [])
        text = illegal_text(context, notation, exc, legal, current)
        reply = _Reply(REPLY_ERROR, current.get("seq"), subject, text)
        return _finish(service, token, row, msg, ILLEGAL, exc.message, reply, notation)
    except GameMovedOn as exc:
        current = _current(service, uid, seat)
        text = moved_on_text(context, notation, exc, current)
        reply = _Reply(REPLY_ERROR, current.get("seq"), subject, text)
        return _finish(service, token, row, msg, MOVED_ON, exc.message, reply, notation)
    except Forbidden as exc:
        current = _current(service, uid, seat)
        text = refused_text(context, notation, exc.say(context.lang), current)
        reply = _Reply(REPLY_ERROR, current.get("seq"), subject, text)
        return _finish(service, token, row, msg, NOT_YOURS, exc.message, reply, notation)
    except NotPlaying as exc:
        current = _current(service, uid, seat)
        text = refused_text(context, notation, exc.say(context.lang), current)
        reply = _Reply(REPLY_ERROR, current.get("seq"), subject, text)
        return _finish(service, token, row, msg, NOT_PLAYING, exc.message, reply, notation)
    except NotFound as exc:
        return _finish(service, token, row, None, UNKNOWN_GAME, exc.message, None, notation)
    except (BadRequest, ServiceError) as exc:
        current = _current(service, uid, seat)
        text = refused_text(context, notation, exc.say(context.lang), current)
        reply = _Reply(REPLY_ERROR, current.get("seq"), subject, text)
        return _finish(service, token, row, msg, ILLEGAL, exc.message, reply, notation)
    if done.get("already_applied"):
        detail = f"already applied as move {done.get('applied_seq')}"
        return _finish(service, token, row, None, DUPLICATE, detail, None, notation)
    ok = None
    stopped = done.get("unplayed")
    if confirm or stopped:  # (the rest of a chain that stopped is said even unasked)
        current = _current(service, uid, seat)
        ok = _Reply(REPLY_OK, current.get("seq"), subject,
                    ok_text(context, notation, current, stopped))
    detail = f"played after move {expected}"
    return _finish(service, token, row, msg, APPLIED, detail, ok, notation)


def _automatic(service: GameService, token: str, row: InboundMail, why: str) -> Outcome:
    """A robot's mail is never answered; a bounce among them (a server that sent the report
    of a mail to the seat's player to its Reply-To, this reply address, rather than to its
    envelope sender) is applied as one: for the seat's own address alone, since the reply
    address went to that player only, while anyone could write a bounce naming another."""
    context = _context(service, row.game_uid, row.seat)
    own = frozenset({context.seat_email} if context is not None and context.seat_email else ())
    applied = apply_bounce(service.engine, service.settings.mail_domain, row.raw, allowed=own)
    if applied.marked:
        return _finish(service, token, row, None, BOUNCE, str(applied))
    return _finish(service, token, row, None, IGNORED, why)


def _remember_attempt(
    service: GameService, token: str, row_id: int, expected: int, notation: str
) -> bool:
    """Store the decision and input of a row before submitting them (False: claim lost)."""
    with service.session(write=True) as s:
        row = _own_row(s, token, row_id)
        if row is None:
            return False
        row.expected_seq = expected
        row.input = notation[:500]
        s.add(row)
        s.commit()
    return True


def _own_row(s: Session, token: str, row_id: int) -> InboundMail | None:
    query = select(InboundMail).where(InboundMail.id == row_id)
    if s.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()
    row = s.exec(query).first()
    if row is None or row.claimed_by != token or row.processed_at is not None:
        return None
    return row


def _finish(
    service: GameService,
    token: str,
    row: InboundMail,
    msg: EmailMessage | None,
    result: str,
    detail: str,
    reply: _Reply | None = None,
    notation: str | None = None,
    *,
    chat_text: str | None = None,
) -> Outcome:
    """Mark the row processed and write the answering mail (and ``chat_text`` to the game's
    chat), in one transaction: a row processed again after a crash posts nothing twice."""
    assert row.id is not None
    settings = service.settings
    with service.session(write=True) as s:
        own = _own_row(s, token, row.id)
        if own is None:
            return Outcome(row.id, "lost-claim", notation=notation)
        context = _context_in(s, row.game_uid, row.seat)
        to = _answer_to(msg, row.sender, settings, reply, context)
        kind = reply.kind if reply is not None and to is not None else None
        if reply is not None and to is not None and msg is not None:
            seq = reply.seq if reply.seq is not None else 0
            s.add(
                OutboxMail(
                    game_id=context.game_id if context else None,
                    seq=reply.seq,
                    kind=reply.kind,
                    recipient=to,
                    seat_id=context.seat_id if context else None,
                    message_id=(
                        f"<{row.game_uid}.{seq}.{row.seat}.{reply.kind}.{row.id}"
                        f"@{settings.mail_domain}>"
                    ),
                    payload={
                        "subject": reply.subject,
                        "text": reply.text,
                        "in_reply_to": header_text(msg, "Message-ID") or None,
                        "reply_to": reply_address(
                            settings.secret_key, settings.mail_domain, row.game_uid, row.seat
                        ),
                    },
                )
            )
        game = s.get(Game, context.game_id) if context is not None else None
        if chat_text is not None and game is not None:
            add_message(s, game, row.seat, chat_text)
        own.processed_at = utcnow()
        own.result = result
        own.detail = detail[:2000]
        if notation is not None:
            own.input = notation[:500]
        s.add(own)
        s.commit()
    return Outcome(row.id, result, detail, notation, kind)


# ------------------------------------------------------------------------------- reading


def _notation_tests(rules_name: str) -> tuple[Callable[[str], bool], Callable[[str], bool]]:
    """Whether a part of a reply is an input of the game's notation, and whether it reads as
    an attempt at one (a mistyped move: refused with the options, never posted as chat)."""
    try:
        rules = ruleset(rules_name)
    except SetupError:  # a game of a ruleset this server no longer has: nothing is a move
        return (lambda part: False), (lambda part: False)

    def is_notation(part: str) -> bool:
        try:
            rules.normalise(part)
        except MoveRejected:
            return False
        return True

    return is_notation, rules.attempted


_OUR_MESSAGE_ID = re.compile(
    r"<?(?P<game>[0-9a-f]{32})\.(?P<seq>\d{1,9})\.(?P<seat>\d{1,2})\.(?P<kind>[A-Za-z0-9_-]+)"
    r"(?:\.[A-Za-z0-9_.-]+)?@(?P<domain>[^<>\s]+)>?"
)
ASKING_NOTICES = frozenset(("reminder", REPLY_ERROR, REPLY_OK))
"""Mails besides the games' decision mails that ask their recipient for the decision pending at
their ``seq`` (the reminder, and the answers written here). A reply to another mail of the game
(an invitation, "the game started", a passed deadline, a pause, "game over") answers whatever
is pending now."""


def _replied_seq(msg: EmailMessage, game_uid: str, seat: int, domain: str) -> int | None:
    """The decision (move count) of the mail of this game and seat that ``msg`` answers."""
    candidates = header_text(msg, "In-Reply-To").split()
    candidates += list(reversed(header_text(msg, "References").split()))
    for candidate in candidates:
        match = _OUR_MESSAGE_ID.fullmatch(candidate.strip())
        if (
            match is not None
            and match["game"] == game_uid
            and int(match["seat"]) == seat
            and match["domain"].lower() == domain.lower()
            and (match["kind"] in ASKING_NOTICES or match["kind"] in decision_kinds())
        ):
            return int(match["seq"])
    return None


def _stranger(author: str, context: ReplyContext) -> str | None:
    """The From address of a reply that its seat's player did not send (None: the player's).

    A reply address only names a game and a seat: anyone who has seen it (a forwarded mail, a
    co-player's mail program) could write to it. So a move counts only when the mail comes
    from the address the seat's mails go to."""
    player = context.seat_email.strip().lower()
    if player and EMAIL.match(author) and author == player:
        return None
    return author


def _answer_to(msg: EmailMessage | None, sender: str, settings: Settings,
               reply: _Reply | None, context: ReplyContext | None) -> str | None:
    """Where the answer goes: a stranger is answered at their own address (with nothing of
    the game); any other answer goes to the seat's player, never to a Reply-To of the
    incoming mail (which would send the seat's options to whoever wrote that header)."""
    if msg is None or reply is None:
        return None
    if reply.bounce:
        return answer_address(None, sender, settings)
    if reply.stranger:
        return answer_address(msg, sender, settings)
    player = context.seat_email.strip().lower() if context is not None else ""
    return player if EMAIL.match(player) else None


def _context(service: GameService, uid: str, seat: int) -> ReplyContext | None:
    with service.session() as s:
        return _context_in(s, uid, seat)


def _context_in(s: Session, uid: str, seat: int) -> ReplyContext | None:
    game = s.exec(select(Game).where(Game.uid == uid)).first()
    if game is None or game.id is None:
        return None
    row = s.exec(select(Seat).where(Seat.game_id == game.id, Seat.position == seat)).first()
    return ReplyContext(
        game_id=game.id,
        game_name=game.name,
        seat_id=row.id if row is not None else None,
        seat_email=row.email if row is not None else "",
        rules_name=game.ruleset,
        lang=language(row.language if row is not None else None),
    )


def _current(service: GameService, uid: str, seat: int) -> dict[str, Any]:
    """The decision pending now for ``seat``: options(), plus who acts and the game status."""
    try:
        current = dict(service.options(uid, seat))
        state = service.state(uid, seat)
    except ServiceError:
        return {}
    summary = state.get("game", {})
    names = {s["position"]: s.get("name", "") for s in summary.get("seats", [])}
    current["to_act"] = [(p, names.get(p, "")) for p in summary.get("to_act", [])]
    current["status"] = summary.get("status")
    current["winner"] = summary.get("winner")
    return current


def _chat_text(read: Extracted) -> str | None:
    """The reply's own text as a chat message, None when there is none (or it is too long
    for the chat: then it is answered as a reply without a move)."""
    try:
        return clean_text(read.text)
    except BadRequest:
        return None
