"""Reply by e-mail: queueing the replies that reach a reply address, and the worker applying them.

Every mail of a game carries its seat's reply address (``play+<game>.<seat>.<sig>@<domain>``,
see :mod:`app.mail.addresses`). The SMTP listener (:mod:`app.mail.inbound_smtp`) refuses other
recipients at RCPT and queues each accepted message with :func:`queue_inbound`; the IMAP poller
(:mod:`app.mail.inbound_imap`) queues the unseen messages of a mailbox the same way. A worker then
calls :func:`process_inbound`, which

1. claims unprocessed rows atomically (several workers never take the same row; a claim older
   than ``stale_after`` is taken over, for a worker that died),
2. reads the reply (:mod:`app.mail.inbound_text`): the plain part or the HTML converted, quotes
   and signature stripped, and the first lines of notation,
3. finds the decision it answers: the sequence number of the Message-ID it replies to
   (In-Reply-To, then References, in the form ``<{game}.{seq}.{seat}.{kind}@{mail domain}>``),
   else the decision pending now; both are stored in the row before the move is submitted, so a
   row processed again after a crash is recognised by the service as already applied,
4. submits the move through :meth:`GameService.submit`, and
5. answers a refused reply by mail, with the reason and what the player can do now: an
   :class:`~app.core.models.OutboxMail` row of kind ``reply-error`` (``reply-ok`` confirms a played
   move when asked for) whose payload is ``{"subject", "text", "in_reply_to", "reply_to"}``.

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
robots cannot mail each other forever.

One message is one reply: it is queued once, however many reply addresses its recipients name
and however often (for its author's seat among them, else the first: :func:`queue_reply`; a
copy seen again by its Message-ID is not queued), so it is played at most once and answered at
most once. A mail whose From names no one address (two, none, or a second From header) plays
nothing and is answered, as a bounce is, at its envelope sender, with nothing of the game
(:func:`sole_author`).
"""

from __future__ import annotations

import logging
import re
import socket
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, parseaddr
from typing import Any

from sqlalchemy import Engine, and_, or_, update
from sqlmodel import Session, col, select

from app.core.config import Settings
from app.core.db import session as open_session
from app.core.i18n import language, translate
from app.core.models import Game, InboundMail, OutboxMail, Seat, utcnow
from app.features.chat.messages import add_message, clean_text
from app.games import ruleset
from app.games.base import NAMES_ITS_PART, ChainStop, MoveRejected, SetupError
from app.games.ui import game_ui
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

from .addresses import parse_reply_address, reply_address
from .inbound_text import Extracted, extract
from .notify import DECISION_KINDS

log = logging.getLogger(__name__)

REPLY_ERROR = "reply-error"
REPLY_OK = "reply-ok"
STALE_CLAIM = timedelta(minutes=10)
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
FAILED = "failed"


class NotAReplyAddress(ValueError):
    """The recipient is not a genuine reply address of this server."""


def parse_message(raw: bytes, *, headers_only: bool = False) -> EmailMessage:
    parser = BytesParser(_class=EmailMessage, policy=policy.default)
    msg = parser.parsebytes(raw, headersonly=headers_only)
    assert isinstance(msg, EmailMessage)
    return msg


def header_text(msg: EmailMessage, name: str) -> str:
    """A header's text, or "" when it is missing or too malformed to read."""
    try:
        value = msg.get(name)
    except (ValueError, TypeError, IndexError):
        return ""
    return str(value).strip() if value is not None else ""


def message_id_of(raw: bytes) -> str | None:
    value = header_text(parse_message(raw, headers_only=True), "Message-ID")
    return value[:250] or None


# --------------------------------------------------------------------------------- queueing


def queue_inbound(
    engine: Engine,
    settings: Settings,
    recipient: str,
    raw: bytes,
    *,
    sender: str = "",
    source: str = "smtp",
) -> int | None:
    """Queue ``raw`` (a whole message) for the reply address ``recipient``; the row's id, or None
    when the same message (its Message-ID) is already queued, for this reply address or any
    other: one message is handled once and answered at most once, however many of its
    copies arrive. Raises NotAReplyAddress."""
    found = parse_reply_address(settings.secret_key, settings.mail_domain, recipient)
    if found is None:
        raise NotAReplyAddress(f"{recipient} is not a reply address of this server")
    game_uid, seat = found
    recipient = recipient.strip().strip("<>").lower()
    message_id = message_id_of(raw)
    with open_session(engine, write=True) as s:
        if message_id is not None:
            seen = s.exec(
                select(InboundMail.id).where(InboundMail.message_id == message_id)
            ).first()
            if seen is not None:
                return None
        row = InboundMail(
            recipient=recipient,
            game_uid=game_uid,
            seat=seat,
            sender=sender.strip()[:254],
            message_id=message_id,
            source=source,
            raw=raw,
        )
        s.add(row)
        s.commit()
        return row.id


def queue_reply(
    engine: Engine,
    settings: Settings,
    recipients: Sequence[str],
    raw: bytes,
    *,
    sender: str = "",
    source: str = "smtp",
) -> int | None:
    """Queue one message once, whichever reply addresses ``recipients`` name and however
    often: for the seat among them that its author plays (the one it can move for), else the
    first. The row's id, or None when the message is already queued. Raises
    NotAReplyAddress when no recipient is a reply address of this server."""
    seats: dict[tuple[str, int], str] = {}
    for recipient in recipients:
        seat = parse_reply_address(settings.secret_key, settings.mail_domain, recipient)
        if seat is not None:
            seats.setdefault(seat, recipient)
    if not seats:
        raise NotAReplyAddress("no recipient is a reply address of this server")
    chosen = next(iter(seats.values()))
    author = sole_author(parse_message(raw, headers_only=True)) if len(seats) > 1 else None
    if author is not None:
        with open_session(engine) as s:
            for (game_uid, position), recipient in seats.items():
                email = s.exec(select(Seat.email).join(Game).where(
                    Game.uid == game_uid, Seat.position == position)).first()
                if email is not None and email.strip().lower() == author:
                    chosen = recipient
                    break
    return queue_inbound(engine, settings, chosen, raw, sender=sender, source=source)


def reply_recipients(msg: EmailMessage, settings: Settings) -> list[str]:
    """The genuine reply addresses among a message's recipient headers, each seat once (an
    IMAP mailbox has no envelope: Delivered-To and X-Original-To are the MTA's record of it,
    and come first)."""
    values: list[str] = []
    for name in ("Delivered-To", "X-Original-To", "Envelope-To", "X-Envelope-To", "To", "Cc"):
        try:
            values.extend(str(v) for v in msg.get_all(name, []))
        except (ValueError, TypeError, IndexError):
            continue
    found: list[str] = []
    seats: set[tuple[str, int]] = set()
    for _, address in getaddresses(values):
        address = address.strip().lower()
        seat = parse_reply_address(settings.secret_key, settings.mail_domain, address)
        if seat is not None and seat not in seats:
            seats.add(seat)
            found.append(address)
    return found


def sole_author(msg: EmailMessage) -> str | None:
    """The address of the message's author (lower case) when its From names exactly one,
    else None.

    A move counts only from its seat's player, told by the From address; a From that names
    two (``From: ann@example.org, evil@example.net``), none, or one that Python's two address
    parsers read differently, names nobody in particular, and a second From header is the
    same trick. Such a mail is refused whole (:data:`NOT_ONE_AUTHOR`).
    """
    try:
        raw = [str(value) for name, value in msg.raw_items() if name.lower() == "from"]
        if len(raw) != 1:
            return None
        unfolded = re.sub(r"\r?\n(?=[ \t])", "", raw[0])
        listed = [address for _, address in getaddresses([unfolded]) if address]
        parsed = [a.addr_spec for a in getattr(msg["From"], "addresses", ())]
    except (ValueError, TypeError, IndexError, AttributeError):
        return None
    if len(listed) != 1 or [a.lower() for a in parsed] != [listed[0].lower()]:
        return None
    author = listed[0].strip().lower()
    return author if EMAIL.match(author) else None


# ----------------------------------------------------------------------------- claiming


def claim_inbound(
    engine: Engine, worker: str, limit: int, *, stale_after: timedelta = STALE_CLAIM
) -> tuple[str, list[int]]:
    """Claim up to ``limit`` unprocessed rows for ``worker``: ``(claim token, row ids)``.

    One UPDATE takes the rows; its WHERE repeats the availability test, so on PostgreSQL a row
    taken by a concurrent claim is re-checked and skipped (and ``FOR UPDATE SKIP LOCKED`` keeps
    claims from waiting on each other); on SQLite the write transaction (``BEGIN IMMEDIATE``)
    serialises claims.
    """
    token = f"{worker[:60]}:{uuid.uuid4().hex[:16]}"
    now = utcnow()
    available = and_(
        col(InboundMail.processed_at).is_(None),
        or_(
            col(InboundMail.claimed_at).is_(None),
            col(InboundMail.claimed_at) < now - stale_after,
        ),
    )
    with open_session(engine, write=True) as s:
        pick = select(InboundMail.id).where(available).order_by(col(InboundMail.id)).limit(limit)
        if engine.dialect.name == "postgresql":
            pick = pick.with_for_update(skip_locked=True)
        s.execute(
            update(InboundMail)
            .where(col(InboundMail.id).in_(pick.scalar_subquery()), available)
            .values(claimed_by=token, claimed_at=now, attempts=col(InboundMail.attempts) + 1)
            .execution_options(synchronize_session=False)
        )
        ids = s.exec(
            select(InboundMail.id)
            .where(InboundMail.claimed_by == token, col(InboundMail.processed_at).is_(None))
            .order_by(col(InboundMail.id))
        ).all()
        s.commit()
    return token, [i for i in ids if i is not None]


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
class _Context:
    game_id: int
    game_name: str
    seat_id: int | None
    seat_email: str
    rules_name: str
    lang: str = "en"
    """The seat's language: the answers to its replies speak it."""


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
    automatic = _automatic(msg, row.sender, settings)
    if automatic:
        return _finish(service, token, row, None, IGNORED, automatic)
    context = _context(service, row.game_uid, row.seat)
    if context is None:
        return _finish(service, token, row, None, UNKNOWN_GAME, f"no game {row.game_uid}")
    author = sole_author(msg)
    if author is None:
        reply = _Reply(REPLY_ERROR, None, _subject(msg, context), _not_one_author_text(context),
                       stranger=True, bounce=True)
        detail = "its From names no one address"
        return _finish(service, token, row, msg, NOT_ONE_AUTHOR, detail, reply)
    stranger = _stranger(author, context)
    if stranger is not None:
        reply = _Reply(REPLY_ERROR, None, _subject(msg, context), _stranger_text(context, stranger),
                       stranger=True)
        detail = f"sent from {stranger}, not from the seat's player"
        return _finish(service, token, row, msg, NOT_THE_PLAYER, detail, reply)
    is_notation, is_attempt = _notation_tests(context.rules_name)
    read = extract(msg, is_notation, is_attempt)
    chat_text = _chat_text(read) if read.notation is None else None
    if chat_text is not None:
        current = _current(service, row.game_uid, row.seat)
        reply = _Reply(REPLY_OK, current.get("seq"), _subject(msg, context),
                       _chat_posted_text(context, chat_text, current))
        return _finish(service, token, row, msg, CHAT, "posted to the game's chat", reply,
                       chat_text=chat_text)
    if read.notation is None:
        current = _current(service, row.game_uid, row.seat)
        reply = _Reply(
            REPLY_ERROR,
            current.get("seq"),
            _subject(msg, context),
            _unparseable_text(context, read, current),
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
    context: _Context,
    notation: str,
    expected: int,
    confirm: bool,
) -> Outcome:
    uid, seat = row.game_uid, row.seat
    subject = _subject(msg, context)
    try:
        done = service.submit(uid, seat, expected, notation)
    except IllegalMove as exc:
        current = _current(service, uid, seat)
        legal = list(exc.extra.get("legal") or current.get("options") or [])
        text = _illegal_text(context, notation, exc, legal, current)
        reply = _Reply(REPLY_ERROR, current.get("seq"), subject, text)
        return _finish(service, token, row, msg, ILLEGAL, exc.message, reply, notation)
    except GameMovedOn as exc:
        current = _current(service, uid, seat)
        text = _moved_on_text(context, notation, exc, current)
        reply = _Reply(REPLY_ERROR, current.get("seq"), subject, text)
        return _finish(service, token, row, msg, MOVED_ON, exc.message, reply, notation)
    except Forbidden as exc:
        current = _current(service, uid, seat)
        text = _refused_text(context, notation, exc.say(context.lang), current)
        reply = _Reply(REPLY_ERROR, current.get("seq"), subject, text)
        return _finish(service, token, row, msg, NOT_YOURS, exc.message, reply, notation)
    except NotPlaying as exc:
        current = _current(service, uid, seat)
        text = _refused_text(context, notation, exc.say(context.lang), current)
        reply = _Reply(REPLY_ERROR, current.get("seq"), subject, text)
        return _finish(service, token, row, msg, NOT_PLAYING, exc.message, reply, notation)
    except NotFound as exc:
        return _finish(service, token, row, None, UNKNOWN_GAME, exc.message, None, notation)
    except (BadRequest, ServiceError) as exc:
        current = _current(service, uid, seat)
        text = _refused_text(context, notation, exc.say(context.lang), current)
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
                    _ok_text(context, notation, current, stopped))
    detail = f"played after move {expected}"
    return _finish(service, token, row, msg, APPLIED, detail, ok, notation)


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
DECISION_MAIL_KINDS = frozenset((*DECISION_KINDS, "reminder", REPLY_ERROR, REPLY_OK))
"""Mails that ask their recipient for the decision pending at their ``seq`` (the decision kinds,
the reminder, and the answers written here). A reply to another mail of the game (an
invitation, "the game started", a passed deadline, a pause, "game over") answers whatever is
pending now."""


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
            and match["kind"] in DECISION_MAIL_KINDS
        ):
            return int(match["seq"])
    return None


def _automatic(msg: EmailMessage, sender: str, settings: Settings) -> str:
    """Why ``msg`` is a robot's mail that must not be answered, or "" for a person's reply."""
    auto = header_text(msg, "Auto-Submitted").lower()
    if auto and auto != "no":
        return f"Auto-Submitted: {auto}"
    precedence = header_text(msg, "Precedence").lower()
    if precedence in ("bulk", "junk", "list", "auto_reply"):
        return f"Precedence: {precedence}"
    for name in ("X-Autoreply", "X-Autorespond", "X-Auto-Response", "List-Id"):
        if header_text(msg, name):
            return f"{name} header"
    if msg.get_content_type() == "multipart/report":
        return "a delivery report"
    _, author = parseaddr(header_text(msg, "From"))
    local = author.split("@")[0].lower()
    if local in ("mailer-daemon", "postmaster") or local.startswith(("noreply", "no-reply")):
        return f"sent by {author}"
    if sender.strip() in ("", "<>"):
        return "null sender (a bounce or an automatic reply)"
    _, ours = parseaddr(settings.mail_from)
    if author and (
        author.lower() == ours.lower()
        or parse_reply_address(settings.secret_key, settings.mail_domain, author) is not None
    ):
        return "sent by this server"
    return ""


def _stranger(author: str, context: _Context) -> str | None:
    """The From address of a reply that its seat's player did not send (None: the player's).

    A reply address only names a game and a seat: anyone who has seen it (a forwarded mail, a
    co-player's mail program) could write to it. So a move counts only when the mail comes
    from the address the seat's mails go to."""
    player = context.seat_email.strip().lower()
    if player and EMAIL.match(author) and author == player:
        return None
    return author


def _answer_to(msg: EmailMessage | None, sender: str, settings: Settings,
               reply: _Reply | None, context: _Context | None) -> str | None:
    """Where the answer goes: a stranger is answered at their own address (with nothing of
    the game); any other answer goes to the seat's player, never to a Reply-To of the
    incoming mail (which would send the seat's options to whoever wrote that header)."""
    if msg is None or reply is None:
        return None
    if reply.bounce:
        return _answer_address(None, sender, settings)
    if reply.stranger:
        return _answer_address(msg, sender, settings)
    player = context.seat_email.strip().lower() if context is not None else ""
    return player if EMAIL.match(player) else None


def _answer_address(msg: EmailMessage | None, sender: str, settings: Settings) -> str | None:
    """Where an answer goes: Reply-To, else From, else the envelope sender (without ``msg``:
    the envelope sender alone)."""
    found = (header_text(msg, "Reply-To"), header_text(msg, "From")) if msg is not None else ()
    for value in (*found, sender):
        _, address = parseaddr(value)
        address = address.strip().lower()
        if (
            EMAIL.match(address)
            and parse_reply_address(settings.secret_key, settings.mail_domain, address) is None
        ):
            return address
    return None


def _context(service: GameService, uid: str, seat: int) -> _Context | None:
    with service.session() as s:
        return _context_in(s, uid, seat)


def _context_in(s: Session, uid: str, seat: int) -> _Context | None:
    game = s.exec(select(Game).where(Game.uid == uid)).first()
    if game is None or game.id is None:
        return None
    row = s.exec(select(Seat).where(Seat.game_id == game.id, Seat.position == seat)).first()
    return _Context(
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


# ------------------------------------------------------------------------------- writing


def _subject(msg: EmailMessage, context: _Context) -> str:
    original = " ".join(header_text(msg, "Subject").split())
    if original:
        return original if original.lower().startswith("re:") else f"Re: {original}"
    return f"Re: {_game_title(context)}"


def _game_title(context: _Context) -> str:
    if context.game_name:
        return translate(context.lang, "Titan Post game “{game}”", game=context.game_name)
    return translate(context.lang, "your Titan Post game")


def _describe(context: _Context, pending: dict[str, Any] | None) -> str:
    """The pending decision in a sentence, in the seat's language, without its period."""
    try:
        ui = game_ui(context.rules_name)
    except KeyError:
        return str((pending or {}).get("kind", "")) or translate(context.lang,
                                                                  "no decision is pending")
    return ui.describe_decision(pending, context.lang).rstrip(".")


def _indented(lines: Any) -> str:
    return "\n".join(f"  {line}" for line in lines)


def _winner_words(context: _Context, winner: str) -> str:
    """The winning pieces (``Game.winner``: their ids, comma-joined) by their names."""
    try:
        ui = game_ui(context.rules_name)
    except KeyError:
        return winner
    return ", ".join(ui.piece_name(piece, context.lang) for piece in winner.split(","))


def _now_text(context: _Context, current: dict[str, Any]) -> str:
    """What the player can do now, for the end of an answer."""
    lang = context.lang
    if not current:
        return ""
    status = current.get("status")
    if status == "finished":
        winner = current.get("winner")
        if winner:
            return translate(lang, "The game is over: {winner} won.",
                             winner=_winner_words(context, str(winner)))
        return translate(lang, "The game is over.")
    if status == "open":
        return translate(lang, "The game has not started yet: it takes no moves.")
    if status == "abandoned":
        return translate(lang, "The game was abandoned: it takes no moves.")
    if current.get("yours"):
        return "\n".join([
            translate(lang, "Your decision now (after move {seq}): {decision}.",
                      seq=current.get("seq"),
                      decision=_describe(context, current.get("pending"))),
            translate(lang, "Reply to this mail with your move on the first line; your "
                      "options are:"),
            "",
            _indented(current.get("options", [])),
            "",
            translate(lang, "Several inputs can go on one line joined with “;”, or on "
                      "separate lines."),
        ])
    waiting = ", ".join(
        translate(lang, "seat {seat} ({name})", seat=p + 1, name=name) if name
        else translate(lang, "seat {seat}", seat=p + 1)
        for p, name in current.get("to_act", [])
    )
    if not waiting:
        return translate(lang, "It is not your decision now (after move {seq}). You will get "
                         "a mail when it is your turn.", seq=current.get("seq"))
    return translate(lang, "It is not your decision now (after move {seq}): waiting for "
                     "{players}. You will get a mail when it is your turn.",
                     seq=current.get("seq"), players=waiting)


def _not_played(context: _Context, reason: str) -> str:
    return translate(context.lang, "Your reply to {game} was not played: {reason}.",
                     game=_game_title(context), reason=reason)


def _you_wrote(context: _Context, notation: str) -> str:
    return translate(context.lang, "You wrote: {notation}", notation=notation)


def _illegal_text(
    context: _Context,
    notation: str,
    exc: IllegalMove,
    legal: list[str],
    current: dict[str, Any],
) -> str:
    lang = context.lang
    parts = [p.strip() for p in notation.split(";")]
    index = exc.extra.get("index")
    reason = exc.say(lang)
    names_part = exc.words is not None and exc.words[0] in NAMES_ITS_PART
    if (not names_part and isinstance(index, int) and len(parts) > 1
            and 0 <= index < len(parts)):
        reason = translate(lang, "{reason} (input {number}, “{input}”; nothing of the reply "
                           "was played)", reason=reason, number=index + 1,
                           input=parts[index])
    lines = [_not_played(context, reason), "", _you_wrote(context, notation), ""]
    if legal and legal != current.get("options"):
        # The game moved on meanwhile: list what was legal when the reply arrived.
        lines += [translate(lang, "At that point the legal inputs were:"), "",
                  _indented(legal), ""]
    now = _now_text(context, current)
    if now:
        lines.append(now)
    return "\n".join(lines).rstrip() + "\n"


def _moved_on_text(
    context: _Context, notation: str, exc: GameMovedOn, current: dict[str, Any]
) -> str:
    lines = [
        _not_played(context, exc.say(context.lang)),
        "",
        _you_wrote(context, notation),
        "",
        translate(context.lang, "The decision you answered is no longer pending."),
    ]
    now = _now_text(context, current)
    if now:
        lines += ["", now]
    return "\n".join(lines).rstrip() + "\n"


def _refused_text(
    context: _Context, notation: str, reason: str, current: dict[str, Any]
) -> str:
    lines = [_not_played(context, reason), "", _you_wrote(context, notation)]
    now = _now_text(context, current)
    if now:
        lines += ["", now]
    return "\n".join(lines).rstrip() + "\n"


def _examples(context: _Context) -> str:
    try:
        return _indented(game_ui(context.rules_name).reply_examples)
    except KeyError:
        return ""


def _unparseable_text(context: _Context, read: Extracted, current: dict[str, Any]) -> str:
    lang = context.lang
    lines = [
        translate(lang, "We could not find a move in your reply to {game}.",
                  game=_game_title(context)),
        "",
        translate(lang, "Write your move on the first line of the reply, in the game's "
                  "notation, for example:"),
        "",
        _examples(context),
        "",
        translate(lang, "Several inputs can go on one line joined with “;”, or on separate "
                  "lines. Quoted text and your signature below the move are ignored."),
    ]
    if read.text:
        first = read.text.strip().splitlines()[0][:200]
        lines += ["", translate(lang, "Your reply began: {text}", text=first)]
    now = _now_text(context, current)
    if now:
        lines += ["", now]
    return "\n".join(lines).rstrip() + "\n"


def _chat_text(read: Extracted) -> str | None:
    """The reply's own text as a chat message, None when there is none (or it is too long
    for the chat: then it is answered as a reply without a move)."""
    try:
        return clean_text(read.text)
    except BadRequest:
        return None


def _chat_posted_text(context: _Context, text: str, current: dict[str, Any]) -> str:
    lang = context.lang
    lines = [
        translate(lang, "Your reply to {game} had no move in it, so it was posted to the "
                  "game's chat, where every player (and spectator) reads it:",
                  game=_game_title(context)),
        "",
        _indented(text.splitlines()),
        "",
        translate(lang, "The other players see it on the game page and in their next mail. "
                  "If you meant a move, reply with it on the first line, in the game's "
                  "notation, for example:"),
        "",
        _examples(context),
    ]
    now = _now_text(context, current)
    if now:
        lines += ["", now]
    return "\n".join(lines).rstrip() + "\n"


def _stranger_text(context: _Context, author: str) -> str:
    """The answer to a reply from another address than the seat's (in the seat's language:
    the game's best guess; it tells nothing of the game)."""
    return translate(context.lang, "Your mail was not played: it came from {address}, and "
                     "the address you wrote to belongs to a seat that is played from "
                     "another address. A move counts only when it comes from the address "
                     "the game's mails are sent to: reply from there.",
                     address=author) + "\n"


def _not_one_author_text(context: _Context) -> str:
    """The answer to a mail whose From names no one address (it tells nothing of the game)."""
    return translate(context.lang, "Your mail was not played: its From line does not name "
                     "exactly one address. A move counts only when it comes from one address, "
                     "the one the game's mails are sent to: reply from there, with that "
                     "address alone as the sender.") + "\n"


def _ok_text(context: _Context, notation: str, current: dict[str, Any],
             stopped: dict[str, Any] | None = None) -> str:
    played = stopped["played"] if stopped else notation
    lines = [translate(context.lang, "Played in {game}: {notation}", game=_game_title(context),
                       notation=played)]
    if stopped:
        text, fields = ChainStop.from_json(stopped).words
        lines += ["", translate(context.lang, text, **fields)]
    now = _now_text(context, current)
    if now:
        lines += ["", now]
    return "\n".join(lines).rstrip() + "\n"
