"""Outgoing notifications: which mails a game event causes, written to the outbox.

:class:`Notifier` is a game-service listener: it runs inside the transaction of each event and
writes small outbox rows (kind, recipient, seat, game, seq, a deterministic Message-ID and the
little the mail needs that cannot be recomputed later, such as an invitation link). Nothing is
rendered here: templates and the board picture are made at send time from the game state at the
row's ``seq`` (see :mod:`app.mail.render`), so moves stay fast.

Who gets what:

- ``created`` / ``invited``: an ``invitation`` to every invited address (payload: the link);
- ``replaced``: the seat's unsent mail is withdrawn (its links are re-keyed for the new player)
  and, when someone new is invited to the seat, their ``invitation``;
- ``started``: ``started`` to every human seat, except that the seat owning the first decision
  gets that decision's mail instead (marked as the start), so it gets one mail, not two;
- after every event that leaves a decision pending (``started``, ``moved``, ``resigned``): one
  mail to its owner, by the decision's kind (``GameUI.mail_kind``, one of the kinds the game
  declares in ``GameUI.mail_kinds``, such as ``turn`` or ``react``); a simultaneous decision
  (every seat plans at once) sends one mail to each seat that owes an answer, at once;
- when the game ends: ``game_over`` to every human seat (and to players who resigned);
  ``abandoned``: ``game_over`` marked as abandoned to those who had accepted;
- ``rolled_back`` (an admin's ``rollback N`` entry): a ``rollback`` notice to every human seat
  (payload ``to``: N, ``from``: the log's length before, ``by``: the actor), before the mail of
  the decision pending after it.

:func:`resend_current` writes the current decision's mail once more (``titanpost admin resend``).

Bots get nothing. A seat's ``notify`` ``mail`` setting (:func:`mail_mode`) thins its mail: ``every``
(the default) gets all of the above; ``digest`` (also the older ``{"digest": true}``) gets no
per-decision mail: the scheduler calls :func:`write_digests` once a day for them; ``none`` gets only
:data:`SENT_EVEN_TO_NONE`. :func:`wants_mail` decides, both here (no row is written) and at send
time (a row written before the player changed their mind is skipped). :func:`enqueue_notice` writes
the clock's mails (NOTICE_KINDS: reminder, deadline, paused, resumed, away, outage, handover; see
app.features.clock.timekeeper and docs/clock.md for their payloads).

A Message-ID is ``<{game}.{seq}.{seat}.{kind}@{mail domain}>``: one decision (the log length
when it opened) can only ever produce one row per seat and kind, since ``message_id`` is unique
and rows are inserted with ON CONFLICT DO NOTHING.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import func, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from app.core.config import Settings
from app.core.models import ACTIVE, FINISHED, Game, Move, OutboxMail, Seat, table_of, utcnow
from app.core.statements import Prepared
from app.games import GAMES
from app.games.ui import game_ui
from app.service import (
    BadRequest,
    GameEvent,
    GameService,
    NotPlaying,
    pause_reason_timeout,
    pause_said,
)
from app.service.records import Entry

INVITATION = "invitation"
STARTED = "started"
REMINDER = "reminder"
DEADLINE = "deadline"
PAUSED = "paused"
RESUMED = "resumed"
AWAY = "away"
OUTAGE = "outage"
HANDOVER = "handover"
ROLLBACK = "rollback"
TAKEBACK = "takeback"
TAKEBACK_RESULT = "takeback_result"
REMATCH = "rematch"
"""A co-player asks "play again?" (app/features/rematch/rematches.py): payload ``player`` (who
asked), ``rematch`` (the new game's id) and ``name``; about the reader's seat of the old game."""
GAME_OVER = "game_over"
DIGEST = "digest"
SIGNIN = "signin"
"""A sign-in link asked for on the sign-in page (app/features/signin/signins.py): no game, no
seat."""
ADDRESS_TEST = "address-test"
"""The test mail a player asks for on their settings page (app/features/delivery/table.py): it
goes to an address marked undeliverable too, to show it works again."""
UNREACHABLE = "unreachable"
"""To the game's owner: a seat's mail bounces and its deadline came (payload ``position``,
``player``, ``since``; written by app/features/clock/unreachable.py)."""
ADDRESS_KINDS = (ADDRESS_TEST, UNREACHABLE)
"""Mails about a player's address rather than the game's moves (notices in form)."""

REPLY_ERROR = "reply-error"
REPLY_OK = "reply-ok"
REPLY_KINDS = (REPLY_ERROR, REPLY_OK)
"""Answers to mailed-in moves, written by app.mail.inbound with their text in the payload."""

NOTICE_KINDS = (REMINDER, DEADLINE, PAUSED, RESUMED, AWAY, OUTAGE, HANDOVER, ROLLBACK, TAKEBACK,
                TAKEBACK_RESULT, REMATCH, *ADDRESS_KINDS)
"""Mails the clock writes (app.features.clock.timekeeper): a reminder, a passed deadline, the game
paused or resumed, a co-player away, a server outage that moved deadlines, a seat handed over; and
the notice of a rollback (written by :class:`Notifier`), and a takeback's request to the other
players and its refusal or expiry to its asker (app.features.takeback.takebacks); a rematch's
question to each other player (app.features.rematch.rematches); a test mail asked for and the
owner's notice of a seat that cannot be reached (:data:`ADDRESS_KINDS`). Only the reminder shows
the board."""
SHARED_KINDS = (INVITATION, STARTED, *NOTICE_KINDS, GAME_OVER, DIGEST, *REPLY_KINDS, SIGNIN)
"""The mails of every game (their templates in ``templates/mail/``)."""


def decision_kinds() -> frozenset[str]:
    """Mail kinds that ask the recipient to answer the decision pending at the row's ``seq``:
    those the registered games declare (``GameUI.mail_kinds``; a game's UI maps its decisions
    to them with ``GameUI.mail_kind``, and its mail folder has a template for each), read
    from the registry when asked (a game registered later is included)."""
    return frozenset(kind for name in GAMES for kind in game_ui(name).mail_kinds)


def known_kinds() -> frozenset[str]:
    """Every mail kind the renderer knows: the shared ones and the games' decision mails."""
    return frozenset(SHARED_KINDS) | decision_kinds()

CONTINUATION_DELAY = timedelta(minutes=10)
"""A decision that continues the mover's own turn (the step after a pick, or after a move) is
mailed only after this delay (``Settings.continuation_minutes``, 10 by default): a player who
goes on in the browser answers it first, and the mail is then skipped as answered, instead of
one mail arriving per step of their turn. While the player has the game open on a page, it
waits longer still (:mod:`app.features.live.presence`)."""


def continuation_delay(settings: Settings) -> timedelta:
    """The settings' :data:`CONTINUATION_DELAY`."""
    return timedelta(minutes=settings.continuation_minutes)

def root_message_id(game_uid: str, domain: str) -> str:
    """The id every mail of a game refers to (References / In-Reply-To): one conversation."""
    return f"<{game_uid}@{domain}>"


def message_id(game_uid: str, seq: int, position: int, kind: str, domain: str,
               extra: str = "") -> str:
    tail = f".{extra}" if extra else ""
    return f"<{game_uid}.{seq}.{position}.{kind}{tail}@{domain}>"


EVERY = "every"
NONE = "none"
MAIL_MODES = (EVERY, DIGEST, NONE)
"""A player's mail setting per seat: every mail, a daily digest instead of decision mails, or
none (see :data:`SENT_EVEN_TO_NONE`)."""
SENT_EVEN_TO_NONE = (INVITATION, HANDOVER, GAME_OVER, REMATCH, *REPLY_KINDS, SIGNIN, ADDRESS_TEST)
"""What a seat whose mail is ``none`` still gets, each at most once or only when asked for: an
invitation (someone typed the address), the notice that the seat was handed over (the player
lost it and is told how to get it back), the game's result, a co-player's question whether to
play again (as an invitation is), the answer to a mail the player
sent in themselves, and the test mail they asked for. Decision mails, reminders, the digest and
the clock's other notices are dropped."""


def mail_mode(seat: Seat) -> str:
    """The seat's mail setting, one of MAIL_MODES (``notify`` ``mail``; before that setting
    existed a seat asked for the digest with ``digest: true``)."""
    prefs = seat.notify or {}
    mode = prefs.get("mail")
    if mode in MAIL_MODES:
        return str(mode)
    return DIGEST if prefs.get("digest") else EVERY


def wants_digest(seat: Seat) -> bool:
    return mail_mode(seat) == DIGEST


def wants_mail(seat: Seat, kind: str) -> bool:
    """Whether the seat's mail setting lets a mail of ``kind`` go to it."""
    mode = mail_mode(seat)
    if mode == NONE:
        return kind in SENT_EVEN_TO_NONE
    if mode == DIGEST:
        return kind not in decision_kinds()
    return True


def is_human(seat: Seat) -> bool:
    """A seat a person plays (bots, including seats filled by bots at the start, get no mail)."""
    return not seat.is_bot and bool(seat.email)


def was_human(seat: Seat) -> bool:
    """A person plays it, or played it until they resigned (they still hear how it ended)."""
    return bool(seat.email) and (not seat.is_bot or seat.resigned_at is not None)


def insert_rows(s: Session, rows: Iterable[dict[str, Any]]) -> None:
    """Insert outbox rows, silently leaving out those whose Message-ID is already there."""
    values = [
        {"created_at": utcnow(), "attempts": 0, "payload": {}, "seq": None, "seat_id": None,
         "game_id": None, "next_attempt_at": None} | row
        for row in rows
    ]
    if not values:
        return
    keys = tuple(sorted(values[0]))
    if any(len(row) != len(keys) or any(key not in row for key in keys) for row in values):
        keys = tuple(sorted({key for row in values for key in row}))
        values = [{key: row.get(key) for key in keys} for row in values]
    _outbox_insert(keys).execute_many(s.connection(), values)


_TABLE = table_of(OutboxMail)
_INSERTS: dict[tuple[str, ...], Prepared] = {}


def _outbox_insert(keys: tuple[str, ...]) -> Prepared:
    """The outbox's INSERT of rows with the columns ``keys``, leaving out a Message-ID already
    there (one statement per dialect, prepared once per set of columns)."""
    prepared = _INSERTS.get(keys)
    if prepared is None:
        prepared = _INSERTS[keys] = Prepared({
            "postgresql": postgresql.insert(_TABLE).on_conflict_do_nothing(
                index_elements=["message_id"]),
            "sqlite": sqlite.insert(_TABLE).on_conflict_do_nothing(
                index_elements=["message_id"]),
        }, keys)
    return prepared


REPLACED_BEFORE_SENDING = ("skipped: the seat was given to someone else before the mail went "
                           "out")


def withdraw_unsent(s: Session, event: GameEvent) -> None:
    """A seat given to someone else gets a new secret: mail written for its old player and not
    sent yet must not go out any more, since rendered now its links would carry the new secret
    to the old address. (A sender holding such a row finds it settled and does not send it.)"""
    seat = next((seat for seat in event.seats if seat.position == event.position), None)
    if seat is None or seat.id is None:
        return
    table = _TABLE
    s.execute(update(table)
              .where(table.c.game_id == event.game.id,  # (indexed; seat_id is not)
                     table.c.seat_id == seat.id, table.c.sent_at.is_(None))
              .values(sent_at=utcnow(), next_attempt_at=None,
                      last_error=REPLACED_BEFORE_SENDING))


class Notifier:
    """The game-service listener that fills the outbox (see the module documentation)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def __call__(self, s: Session, event: GameEvent) -> None:
        if event.kind == "replaced":
            withdraw_unsent(s, event)
        head = None
        if event.kind == "abandoned":  # the event carries no move count: the log's length
            head = int(s.exec(select(func.coalesce(func.max(Move.seq), 0))
                              .where(Move.game_id == event.game.id)).one())
        rows = list(self.rows_for(event, head))
        if event.kind in ("moved", "resigned") and event.seq_after > 0:
            last = self._entry(s, event, event.seq_after)
            for row in rows:
                if (row["kind"] in decision_kinds() and last is not None
                        and row.get("position") == last.seat):
                    row["next_attempt_at"] = utcnow() + continuation_delay(self.settings)
        for row in rows:
            row.pop("position", None)
        seats = {seat.id: seat for seat in event.seats}
        insert_rows(s, [row for row in rows if self._wanted(seats, row)])

    @staticmethod
    def _wanted(seats: dict[int | None, Seat], row: dict[str, Any]) -> bool:
        seat = seats.get(row.get("seat_id"))
        return seat is None or wants_mail(seat, str(row["kind"]))

    @staticmethod
    def _entry(s: Session, event: GameEvent, seq: int) -> Entry | Move | None:
        """Log entry ``seq``: the one the event's command just appended, else read."""
        loaded = event.loaded
        appended = [m for m in loaded.appended if m.seq == seq] if loaded is not None else []
        return appended[-1] if appended else s.get(Move, (event.game.id, seq))

    # -------------------------------------------------------------- what an event causes

    def rows_for(self, event: GameEvent, head: int | None = None) -> Iterable[dict[str, Any]]:
        """The outbox rows ``event`` causes (``head``: the log's length, for "abandoned")."""
        if event.kind in ("created", "invited"):
            yield from self._invitations(event)
            return
        if event.kind == "abandoned":
            yield from self._game_over(event, abandoned=True, seq=head or 0)
            return
        if event.kind not in ("started", "moved", "resigned", "timed_out", "replaced", "joined",
                              "resumed", "rolled_back"):
            return
        if event.kind == "replaced":  # a new player invited to the seat: their invitation
            yield from self._invitations(event)
        if event.kind == "rolled_back":
            yield from self._rolled_back(event)
        deciders = list(self._decisions(event))
        yield from deciders
        if event.kind == "started":
            asked = {row["seat_id"] for row in deciders}
            for seat in event.seats:
                if is_human(seat) and seat.id not in asked:
                    yield self._row(event.game, seat, STARTED, event.seq_after, {})
        if event.game.status == FINISHED:
            yield from self._game_over(event, abandoned=False, seq=event.seq_after)

    def _invitations(self, event: GameEvent) -> Iterable[dict[str, Any]]:
        by_position = {seat.position: seat for seat in event.seats}
        for invitation in event.invitations:
            seat = by_position.get(int(invitation["position"]))
            token = str(invitation["invite_token"])
            digest = hashlib.sha256(token.encode()).hexdigest()
            payload = {
                "link": f"{self.settings.base_url}/join/{token}",
                "invite_hash": digest,
            }
            yield {
                "game_id": event.game.id,
                "seq": 0,
                "kind": INVITATION,
                "recipient": str(invitation["email"]),
                "seat_id": seat.id if seat is not None else None,
                # each (re)issued invitation is its own mail: the token tells them apart
                "message_id": message_id(event.game.uid, 0, int(invitation["position"]),
                                         INVITATION, self.settings.mail_domain, digest[:10]),
                "payload": payload,
            }

    def _decisions(self, event: GameEvent) -> Iterable[dict[str, Any]]:
        loaded = event.loaded
        if loaded is None or loaded.state is None or event.game.status != ACTIVE:
            return
        pending = loaded.rules.pending(loaded.state)
        if pending is None:
            return
        kind = game_ui(event.game.ruleset).mail_kind(pending)
        if kind is None:
            return
        for position in loaded.to_act():
            seat = loaded.seat(position)
            if not is_human(seat) or wants_digest(seat):
                continue
            payload: dict[str, Any] = {"seq_before": event.seq_before}
            if event.kind == "started":
                payload["started"] = True
            yield self._row(event.game, seat, kind, loaded.decision_seq, payload) | {
                "position": seat.position}

    def _rolled_back(self, event: GameEvent) -> Iterable[dict[str, Any]]:
        """The notice of a rollback to every human seat, about the rollback entry itself (the
        one after ``seq_before``: the computer may have moved after it)."""
        seq = event.seq_before + 1
        payload = {"to": event.detail.get("to"), "from": event.seq_before, "by": event.actor}
        if event.detail.get("takeback") is not None:  # a takeback all agreed to
            asker = next((s for s in event.seats if s.position == event.detail["takeback"]),
                         None)
            payload["takeback"] = asker.player_name if asker is not None else ""
        for seat in event.seats:
            if is_human(seat):
                yield self._row(event.game, seat, ROLLBACK, seq, dict(payload))

    def _game_over(self, event: GameEvent, *, abandoned: bool,
                   seq: int) -> Iterable[dict[str, Any]]:
        for seat in event.seats:
            if abandoned:
                if not seat.email or seat.accepted_at is None or seat.is_bot:
                    continue
            elif not was_human(seat):
                continue
            payload: dict[str, Any] = {"seq_before": event.seq_before}
            if abandoned:
                payload["abandoned"] = True
            yield self._row(event.game, seat, GAME_OVER, seq, payload)

    def _row(self, game: Game, seat: Seat, kind: str, seq: int,
             payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "game_id": game.id,
            "seq": seq,
            "kind": kind,
            "recipient": seat.email,
            "seat_id": seat.id,
            "message_id": message_id(game.uid, seq, seat.position, kind,
                                     self.settings.mail_domain),
            "payload": payload,
        }


def install(service: GameService) -> Notifier:
    """Add the notifier to ``service``'s listeners (once) and return it."""
    return service.listener(Notifier, lambda: Notifier(service.settings))


# ------------------------------------------------------------------ for the scheduler


def enqueue_notice(
    s: Session,
    settings: Settings,
    *,
    game: Game,
    seat: Seat,
    kind: str,
    seq: int,
    payload: dict[str, Any] | None = None,
    extra: str = "",
) -> None:
    """Write one of the clock's mails (NOTICE_KINDS) to ``seat`` about the log entry ``seq``,
    in the caller's transaction (at most once per seat, entry, kind and ``extra``: the
    Message-ID is deterministic; ``extra`` tells apart e.g. the reminder points).

    ``payload`` carries what the mail reports (docs/clock.md lists it per kind), e.g.
    ``{"due_at": ..., "action": "bot"}`` for a reminder, or ``{"action": "pass", "inputs":
    ["pass"], "handover": None, "missed": 1}`` for a passed deadline. A reminder is not sent
    if the decision was answered in the meantime. Seats without an address are
    skipped; bots are the caller's to leave out (a seat the computer took over on timeout
    should still hear about it).
    """
    if kind not in NOTICE_KINDS:
        raise ValueError(f"a notice is one of {', '.join(NOTICE_KINDS)}, not '{kind}'")
    if not seat.email or not wants_mail(seat, kind):
        return
    insert_rows(s, [{
        "game_id": game.id,
        "seq": seq,
        "kind": kind,
        "recipient": seat.email,
        "seat_id": seat.id,
        "message_id": message_id(game.uid, seq, seat.position, kind, settings.mail_domain,
                                 extra),
        "payload": dict(payload or {}),
    }])


def resend_current(service: GameService, uid: str) -> list[str]:
    """Write the mail of the decision pending in game ``uid`` once more to each person who is to
    answer it (``titanpost admin resend``), in a fresh outbox row: its Message-ID has the extra
    part ``resend<n>`` (n counting this decision's resends for the seat), so the first mail's
    row does not stop it, and a reply to it still answers that decision. Returns the recipients.

    Raises NotPlaying for a game that is not running, or is paused (except for the seat whose
    missed deadline paused it: its answer resumes the game), and BadRequest when no person has
    a decision pending (only the computer's, or a game over)."""
    domain = service.settings.mail_domain
    with service.session(write=True) as s:
        loaded = service.load(s, uid)
        game = loaded.game
        if game.status != ACTIVE or loaded.state is None:
            raise NotPlaying(f"game {uid} is {game.status}: no decision is pending")
        rules = loaded.rules
        pending = rules.pending(loaded.state) or {}
        kind = game_ui(game.ruleset).mail_kind(pending)
        to_act = loaded.to_act()
        if game.paused_at is not None:
            to_act = [p for p in to_act if game.pause_reason == pause_reason_timeout(p)]
            if not to_act:
                names = {seat.position: seat.player_name for seat in loaded.seats}
                raise NotPlaying(f"game {uid} is paused ({pause_said(game.pause_reason, names)}):"
                                 " no decision can be answered until it is resumed")
        people = [seat for seat in (loaded.seat(p) for p in to_act) if is_human(seat)]
        if kind is None or not people:
            waiting = "the computer" if to_act else "nobody"
            raise BadRequest(f"no player has a decision pending in game {uid} (waiting for "
                             f"{waiting}): there is no mail to send again")
        rows = []
        for seat in people:
            first = message_id(game.uid, loaded.decision_seq, seat.position, kind, domain)
            prefix = first.removesuffix(f"@{domain}>") + ".resend"
            earlier = s.exec(select(func.count()).select_from(OutboxMail).where(
                col(OutboxMail.message_id).startswith(prefix, autoescape=True))).one()
            rows.append({
                "game_id": game.id,
                "seq": loaded.decision_seq,
                "kind": kind,
                "recipient": seat.email,
                "seat_id": seat.id,
                "message_id": message_id(game.uid, loaded.decision_seq, seat.position, kind,
                                         domain, f"resend{int(earlier) + 1}"),
                "payload": {"resent": True},
            })
        insert_rows(s, rows)
        s.commit()
    return [str(row["recipient"]) for row in rows]


def digest_message_id(email: str, day: date, domain: str) -> str:
    who = hashlib.sha256(email.lower().encode()).hexdigest()[:16]
    return f"<digest.{day.isoformat()}.{who}@{domain}>"


def write_digests(service: GameService, now: datetime | None = None) -> int:
    """Write today's digest for every address that asked for one and has games waiting for it:
    one mail listing those games. Returns how many digests were written (a second call on the
    same day writes none: the Message-ID holds the date)."""
    now = now or datetime.now(UTC)
    day = now.astimezone(UTC).date()
    domain = service.settings.mail_domain
    waiting: dict[str, list[dict[str, Any]]] = {}
    with service.session() as s:
        rows = s.exec(
            select(Seat, Game)
            .join(Game, col(Game.id) == col(Seat.game_id))
            .where(Game.status == ACTIVE, col(Seat.is_bot).is_(False))
            .order_by(col(Game.id), col(Seat.position))
        ).all()
        candidates = [(seat, game) for seat, game in rows if seat.email and wants_digest(seat)]
    states: dict[str, tuple[int, list[int]]] = {}
    for seat, game in candidates:
        if game.uid not in states:
            with service.session() as s:
                loaded = service.load(s, game.uid)
                to_act = (loaded.to_act()
                          if loaded.state is not None else [])
                states[game.uid] = (loaded.seq, to_act)
        seq, to_act = states[game.uid]
        if seat.position in to_act:
            waiting.setdefault(seat.email, []).append(
                {"game_id": game.id, "uid": game.uid, "position": seat.position, "seq": seq,
                 "language": seat.language}
            )
    if not waiting:
        return 0
    rows_out: list[dict[str, Any]] = [
        {
            "kind": DIGEST,
            "recipient": email,
            "message_id": digest_message_id(email, day, domain),
            "payload": {"date": day.isoformat(), "games": games,
                        "language": games[0]["language"]},
        }
        for email, games in sorted(waiting.items())
    ]
    with service.session(write=True) as s:
        ids = [r["message_id"] for r in rows_out]
        before = _count_ids(s, ids)
        insert_rows(s, rows_out)
        written = _count_ids(s, ids) - before
        s.commit()
    return written


def _count_ids(s: Session, ids: list[str]) -> int:
    return len(s.exec(select(OutboxMail.id).where(col(OutboxMail.message_id).in_(ids))).all())


__all__ = [
    "ADDRESS_KINDS",
    "ADDRESS_TEST",
    "MAIL_MODES",
    "SHARED_KINDS",
    "SIGNIN",
    "UNREACHABLE",
    "Notifier",
    "decision_kinds",
    "enqueue_notice",
    "install",
    "known_kinds",
    "message_id",
    "resend_current",
    "root_message_id",
    "wants_mail",
    "write_digests",
]
