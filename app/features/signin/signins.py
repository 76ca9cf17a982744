"""Sign-in by mail: a player proves they read an address's mail, and sees every game in which
that address holds a seat, on any device.

1. **Asking** (:func:`ask_link`): anyone may ask for a link for any address. A ``signins`` row is
   written either way; a mail (outbox kind ``signin``) only when the address holds a seat, and
   the asker is told the same in both cases, so nobody learns who plays. Asks are limited per
   address and per client (counted in that table, so every process sees the same counts).
2. **The link** carries the address and the row's id, signed with the server key
   (:func:`app.web.linktokens.make_signin_token`); it lives :data:`SIGNIN_LINK_MAX_AGE` seconds.
   :func:`check_link` says what is wrong with a bad one, read-only (a GET of the link page,
   which mail scanners open, changes nothing): ``malformed`` (damaged), ``forged``,
   ``expired``, ``reused`` (already used), or ``replaced``: a seat of the address was given to
   someone else, or a new one given to it, since the link was mailed (the row keeps a
   fingerprint of the address's seats and their secrets).
3. **Using it** (:func:`use_link`): one conditional UPDATE (``used_at IS NULL``) marks the row
   used, so of two requests racing with the same link, one alone signs in. The row is then the
   account session: a browser keeps its id in its session cookie, a terminal an account token
   (:data:`ACCOUNT_SALT`); :func:`account_valid` checks it on every use, and
   :func:`sign_out` revokes it.

What a signed-in browser or terminal may play is read from the seats table each time
(:func:`account_seats`): only seats the address holds now and whose invitation was accepted. A seat
given to someone else (``replace_seat``) is lost at once. A signed-in address may also say yes to a
game's rematch, taking the seat kept for it (app/features/rematch/rematches.py), and take a seat it
was invited to without the invitation's link (:func:`take_invited_seat`): :func:`account_pending`
lists both."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from sqlalchemy import func, update
from sqlmodel import Session, col, select

from app.core.i18n import N_
from app.core.models import ACTIVE, OPEN, Deadline, Game, Seat, SignIn, table_of
from app.features.clock.rows import TIMEOUT_KINDS
from app.features.rematch import rematches
from app.games.ui import game_ui
from app.mail.notify import SIGNIN, insert_rows
from app.service import BadRequest, GameService, NotFound, ServiceError
from app.service.records import AnswerRecorder, record_answer
from app.service.setup import new_api_token
from app.web.linktokens import (
    ACCOUNT_MAX_AGE,
    ACCOUNT_SALT,
    SIGNIN_LINK_MAX_AGE,
    LinkError,
    SignInLink,
    make_signin_token,
    read_signin_token,
)

ASKS_PER_ADDRESS: Final = 5
"""Sign-in links one address may be sent in :data:`ASK_WINDOW`."""
ASKS_PER_CLIENT: Final = 20
"""Sign-in links one client (IP address) may ask for in :data:`ASK_WINDOW`, any addresses."""
ASK_WINDOW: Final = timedelta(hours=1)
WEB: Final = "web"
CLI: Final = "cli"
EMAIL_SHAPE: Final = re.compile(r"[^@\s]+@[^@\s]+")

REFUSALS: Final = {
    "malformed": N_("This sign-in link is damaged (was it cut in two by the mail program?). "
                    "Copy the whole link, or ask for a new one."),
    "forged": N_("This sign-in link was not made by this server (its signature does not "
                 "match). Ask for a new one."),
    "expired": N_("This sign-in link has expired: a link works for {minutes} minutes. Ask for "
                  "a new one."),
    "reused": N_("This sign-in link was used already: a link signs in once. Ask for a new one."),
    "replaced": N_("The seats of this address changed since the link was sent (a seat was "
                   "given to someone else, or a new one to you), so it no longer works. Ask "
                   "for a new one."),
}
"""What is wrong with a bad sign-in link, per reason (English message ids, ``{minutes}``)."""


class SignInRefused(Exception):
    """A sign-in link or account that cannot be used; ``reason`` is a key of REFUSALS."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TooManyAsks(Exception):
    """Over the per-address or per-client limit; ``retry_after`` in seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"too many sign-in links asked for: try again in {retry_after} s")
        self.retry_after = retry_after


@dataclass(frozen=True)
class Account:
    """A used sign-in link: the address it signed in and its row's id (the session)."""

    email: str
    token_id: str


def normal_address(text: str) -> str:
    """The address as seats store it (trimmed, lower case); BadRequest when it is none."""
    email = (text or "").strip().lower()
    if len(email) > 254 or not EMAIL_SHAPE.fullmatch(email):
        raise BadRequest("give an e-mail address, such as ann@example.org",
                         words=(N_("give an e-mail address, such as ann@example.org"), {}))
    return email


def _keyed(secret_key: str, kind: str, value: str) -> str:
    """A keyed hash of an address or client (nothing stored can be turned back into it)."""
    return hmac.new(secret_key.encode(), f"titanpost.signin.{kind}:{value}".encode(),
                    hashlib.sha256).hexdigest()


def address_digest(secret_key: str, email: str) -> str:
    """The keyed hash the ``signins`` rows of ``email`` carry (``email_digest``): how a player's
    own sign-ins are found for their data, and deleted when they are forgotten
    (app/features/privacy/)."""
    return _keyed(secret_key, "email", email)


def _address_seats(s: Session, email: str) -> list[tuple[Game, Seat]]:
    return list(s.exec(select(Game, Seat).join(Seat, col(Seat.game_id) == col(Game.id))
                       .where(Seat.email == email).order_by(col(Game.id), col(Seat.position)))
                .all())


def _seats_digest(secret_key: str, rows: list[tuple[Game, Seat]]) -> str:
    """A fingerprint of the address's seats and their secrets (a replaced seat changes it)."""
    listed = "\n".join(sorted(f"{game.uid}:{seat.position}:{seat.secret}" for game, seat in rows))
    return _keyed(secret_key, "seats", listed)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# ---------------------------------------------------------------------------- asking


ANSWER_FLOOR = 0.3
"""Seconds an ask for a link takes at least, known address or not (writing the mail takes a
little longer than not writing it): the page and the API answer no sooner."""
REFUSED_STATUS = {"malformed": 400, "forged": 400, "expired": 410, "reused": 410,
                  "replaced": 410}
"""The HTTP status of a link refused for each reason of :func:`check_link`."""


def ask_link(service: GameService, address: str, client: str, language: str) -> None:
    """Ask for a sign-in link for ``address`` from ``client`` (the IP address): mailed, in the
    seat's language (else ``language``), only when the address holds a seat; either way the
    caller answers the same, no sooner than :data:`ANSWER_FLOOR` seconds after the ask. Raises
    BadRequest for no address, TooManyAsks over a limit."""
    started = time.monotonic()
    _write_ask(service, normal_address(address), client, language)
    time.sleep(max(0.0, ANSWER_FLOOR - (time.monotonic() - started)))


def _write_ask(service: GameService, email: str, client: str, language: str) -> None:
    settings = service.settings
    now = datetime.now(UTC)
    email_digest = _keyed(settings.secret_key, "email", email)
    client_digest = _keyed(settings.secret_key, "client", client)
    with service.session(write=True) as s:
        _check_limits(s, now, email_digest, client_digest)
        seats = _address_seats(s, email)
        token_id = secrets.token_hex(16)
        s.add(SignIn(token_id=token_id, email_digest=email_digest, client_digest=client_digest,
                     seats_digest=_seats_digest(settings.secret_key, seats),
                     mailed=bool(seats), requested_at=now))
        if seats:
            token = make_signin_token(settings.secret_key, SignInLink(email, token_id))
            insert_rows(s, [{
                "kind": SIGNIN, "recipient": email,
                "message_id": f"<signin.{token_id}@{settings.mail_domain}>",
                "payload": {"token": token, "language": seats[-1][1].language or language},
            }])
        s.commit()


def _check_limits(s: Session, now: datetime, email_digest: str, client_digest: str) -> None:
    since = now - ASK_WINDOW
    for column, value, limit in ((SignIn.email_digest, email_digest, ASKS_PER_ADDRESS),
                                 (SignIn.client_digest, client_digest, ASKS_PER_CLIENT)):
        recent = s.exec(select(func.count(), func.min(SignIn.requested_at))
                        .where(column == value, col(SignIn.requested_at) > since)).one()
        if int(recent[0]) >= limit:
            oldest = _aware(recent[1])
            raise TooManyAsks(max(1, int((oldest + ASK_WINDOW - now).total_seconds()) + 1))


# ---------------------------------------------------------------------------- the link


def _read(service: GameService, token: str) -> SignInLink:
    try:
        return read_signin_token(token, service.settings.secret_key)
    except LinkError as exc:
        raise SignInRefused(exc.reason) from None


def _checked_row(s: Session, service: GameService, link: SignInLink) -> SignIn:
    """The link's row, checked against the address and its seats now."""
    secret_key = service.settings.secret_key
    row = s.exec(select(SignIn).where(SignIn.token_id == link.token_id)).first()
    if row is None or not row.mailed or not hmac.compare_digest(
            row.email_digest, _keyed(secret_key, "email", link.email)):
        raise SignInRefused("forged")
    if row.used_at is not None:
        raise SignInRefused("reused")
    seats = _address_seats(s, link.email)
    if not hmac.compare_digest(row.seats_digest, _seats_digest(secret_key, seats)):
        raise SignInRefused("replaced")
    return row


def check_link(service: GameService, token: str) -> SignInLink:
    """The address of a usable sign-in link, changing nothing; raises SignInRefused."""
    link = _read(service, token)
    with service.session() as s:
        _checked_row(s, service, link)
    return link


def use_link(service: GameService, token: str, used_by: str) -> Account:
    """Sign in with a link (``used_by``: WEB or CLI): marks it used, once; raises
    SignInRefused (``reused`` for the loser of two racing uses)."""
    link = _read(service, token)
    signins = table_of(SignIn)
    with service.session(write=True) as s:
        _checked_row(s, service, link)
        done = s.execute(update(signins)
                         .where(signins.c.token_id == link.token_id, signins.c.used_at.is_(None))
                         .values(used_at=datetime.now(UTC), used_by=used_by))
        if int(getattr(done, "rowcount", 0) or 0) != 1:
            s.rollback()
            raise SignInRefused("reused")
        s.commit()
    return Account(link.email, link.token_id)


# ---------------------------------------------------------------------------- the account


def account_token(service: GameService, account: Account) -> str:
    """A terminal's credential for ``account`` (``Authorization: Account <token>``)."""
    return make_signin_token(service.settings.secret_key,
                             SignInLink(account.email, account.token_id), ACCOUNT_SALT)


def read_account_token(service: GameService, token: str) -> Account:
    """The account of a terminal's token, if still signed in; raises SignInRefused."""
    try:
        link = read_signin_token(token, service.settings.secret_key, ACCOUNT_SALT,
                                 ACCOUNT_MAX_AGE)
    except LinkError as exc:
        raise SignInRefused(exc.reason) from None
    account = Account(link.email, link.token_id)
    if not account_valid(service, account, CLI):
        raise SignInRefused("forged")
    return account


def account_valid(service: GameService, account: Account, used_by: str) -> bool:
    """Whether ``account`` is still signed in: its link was used (by ``used_by``) for this
    address less than ACCOUNT_MAX_AGE ago, and it was not signed out."""
    with service.session() as s:
        row = s.exec(select(SignIn).where(SignIn.token_id == account.token_id)).first()
    if row is None or row.used_at is None or row.revoked_at is not None \
            or row.used_by != used_by:
        return False
    if datetime.now(UTC) - _aware(row.used_at) > timedelta(seconds=ACCOUNT_MAX_AGE):
        return False
    return hmac.compare_digest(row.email_digest, _keyed(service.settings.secret_key, "email",
                                                        account.email))


def sign_out(service: GameService, account: Account) -> None:
    """End the account session: its browser or token is signed in no more."""
    signins = table_of(SignIn)
    with service.session(write=True) as s:
        s.execute(update(signins).where(signins.c.token_id == account.token_id,
                                        signins.c.revoked_at.is_(None))
                  .values(revoked_at=datetime.now(UTC)))
        s.commit()


def account_seats(service: GameService, email: str) -> list[tuple[str, int]]:
    """(game, position) of every seat ``email`` holds now and has accepted (an invitation not
    yet taken is taken from the invitation: joining adds the seat's share of the dealing)."""
    with service.session() as s:
        return [(game.uid, seat.position) for game, seat in _address_seats(s, email)
                if seat.accepted_at is not None]


def account_seat(service: GameService, email: str, uid: str) -> int | None:
    """The seat ``email`` holds in game ``uid`` (its first, should it hold several)."""
    return next((position for game, position in account_seats(service, email) if game == uid),
                None)


def account_seat_token(service: GameService, email: str, uid: str, *,
                       idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """A new API token of the seat ``email`` holds in game ``uid``, however it was joined: a
    player signed in by mail plays it from the command line as from any browser. NotFound
    when the address holds no seat there (the same answer as for a game that does not
    exist, so that it tells nothing of others' games)."""
    position = account_seat(service, email, uid)
    if position is None:
        raise NotFound(f"{email} holds no seat in game '{uid}'")
    with service.session(write=True) as s:
        seat = s.exec(select(Seat).join(Game, col(Game.id) == Seat.game_id)
                      .where(Game.uid == uid, Seat.position == position)).one()
        answer = {"game": uid, "position": position,
                  "api_token": new_api_token(s, seat, "account")}
        record_answer(s, idempotency, answer)
        s.commit()
    return answer


def account_games(service: GameService, email: str) -> list[dict[str, Any]]:
    """Every game in which ``email`` holds an accepted seat, of both games, with whose turn it
    is, whether it is the seat's, and the seat's next deadline; its turns first."""
    rows = []
    for uid, position in account_seats(service, email):
        try:
            rows.append(_game_row(service, uid, position))
        except ServiceError:
            continue
    rows.sort(key=lambda r: (not r["your_turn"], r["status"] != ACTIVE, r["deadline"] or "~",
                             -r["seq"]))
    return rows


def account_pending(service: GameService, email: str) -> dict[str, list[dict[str, Any]]]:
    """The games not started that wait for ``email`` or count it in: ``invitations`` (a seat
    of a game being set up, invited to this address and not taken yet: the signed-in address
    may take it, as its invitation would) and ``rematches`` (each rematch it has a seat of:
    its ``answer``, yes, waiting or declined, the old game it ``follows`` and the names
    ``waiting`` for and ``declined``; app/features/rematch/rematches.py)."""
    with service.session() as s:
        rows = [(game, seat) for game, seat in _address_seats(s, email)
                if game.status == OPEN and not seat.is_bot]
        follows = {game.id: s.get(Game, game.rematch_of) for game, _ in rows
                   if game.rematch_of is not None}
    invitations: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []
    for game, seat in rows:
        ui = game_ui(game.ruleset)
        row = {"game": game.uid, "name": game.name, "ruleset": game.ruleset, "title": ui.title,
               "variant": game.variant, "position": seat.position,
               "commitment": game.dealing_commitment}
        old = follows.get(game.id)
        if old is None:
            if seat.accepted_at is None and seat.invite_token_hash is not None:
                invitations.append(row)
            continue
        found = rematches.status(service, old.uid)
        if found is None:
            continue
        answer = next((r["answer"] for r in found["seats"] if r["position"] == seat.position),
                      rematches.WAITING)
        waiting.append(row | {"follows": old.uid, "answer": answer,
                              "waiting": found["waiting"], "declined": found["declined"]})
    return {"invitations": invitations, "rematches": waiting}


def take_invited_seat(service: GameService, email: str, uid: str, position: int, *,
                      contribution: str | None = None) -> dict[str, Any]:
    """The signed-in address takes seat ``position`` of game ``uid`` it was invited to (its
    mailed invitation is used up): reading the address's mail proved as much as the
    invitation's link does. A rematch's seat is answered on the rematch's own pages."""
    pending = account_pending(service, email)["invitations"]
    if not any(row["game"] == uid and row["position"] == position for row in pending):
        raise NotFound(f"{email} has no invitation to seat {position + 1} of game '{uid}'")
    return service.take_reserved_seat(uid, position, email, contribution=contribution)


def _game_row(service: GameService, uid: str, position: int) -> dict[str, Any]:
    with service.session() as s:
        loaded = service.load(s, uid)
        game = loaded.game
        to_act = loaded.to_act() if loaded.state is not None else []
        names = {seat.position: seat.player_name for seat in loaded.seats}
        result = loaded.result(position)
        zone = next(((seat.notify or {}).get("timezone") for seat in loaded.seats
                     if seat.position == position), None)
        due = s.exec(select(func.min(Deadline.due_at)).where(
            Deadline.game_id == game.id, Deadline.seat == position,
            col(Deadline.kind).in_(TIMEOUT_KINDS), col(Deadline.done_at).is_(None))).one()
    active = game.status == ACTIVE
    return {
        "game": uid, "name": game.name, "ruleset": game.ruleset,
        "title": game_ui(game.ruleset).title, "variant": game.variant,
        "status": game.status, "paused": game.paused_at is not None, "seq": loaded.seq,
        "position": position,
        "to_act": to_act if active else [],
        "to_act_names": [names.get(p) or f"#{p + 1}" for p in to_act] if active else [],
        "your_turn": active and position in to_act,
        "deadline": _aware(due).isoformat() if due is not None else None,
        "timezone": zone or "UTC",
        "winner": game.winner,
        "place": result["you"] if result else None,
    }


__all__ = [
    "ACCOUNT_MAX_AGE",
    "CLI",
    "REFUSALS",
    "SIGNIN_LINK_MAX_AGE",
    "WEB",
    "Account",
    "SignInRefused",
    "TooManyAsks",
    "account_games",
    "account_pending",
    "account_seat",
    "account_seats",
    "account_token",
    "account_valid",
    "address_digest",
    "ask_link",
    "check_link",
    "normal_address",
    "read_account_token",
    "sign_out",
    "take_invited_seat",
    "use_link",
]
