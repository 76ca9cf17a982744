"""Safe retries: the ``Idempotency-Key`` request header (IETF draft "The Idempotency-Key HTTP
Header Field", and Stripe's practice).

A client that sent an unsafe request (``POST /api/games``, an invitation's accept...) and lost
the answer sends it again with the same key. The first request's status and JSON body are kept
with the key, scoped to who sent it, and a repeat of the same request is answered with them
(``Idempotent-Replayed: true``) without doing anything again. The same key with another request
is refused (422); a repeat while the first is still being processed gets 409. Keys live
:data:`KEEP` (24 hours).

How a request goes:

1. :meth:`IdempotencyStore.claim` writes the key's row, unanswered, in a transaction of its
   own, so that a concurrent repeat sees it (and gets 409); or finds the row and replays its
   answer (or refuses).
2. The request runs; the service writes the answer into the row (:meth:`Claim.record`) in the
   transaction of what the request changed, so that a crash cannot leave a created game
   without its stored answer. A request that fails changes nothing and gives the key back
   (:meth:`IdempotencyStore.release`): a repeat runs it again.
3. A claim whose process died before it answered stays unanswered; after :data:`LEASE` a
   repeat takes it over and runs the request (which had changed nothing: its transaction
   never committed).

Secrets. An answer may hold an API token or a creator token, which the database otherwise
keeps only as SHA-256 hashes. Answers are therefore stored encrypted (Fernet: AES-128-CBC with
HMAC-SHA256), under a key derived (HMAC-SHA256) from the server's secret key, the scope and the
Idempotency-Key itself, which is never stored (only its hash). Reading a stored token back thus
needs the database, the server's secret key and the client's Idempotency-Key: whoever holds
the first two can already sign any seat's mail links, so a token is no easier to take from
this table than a seat from the rest of the database.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from sqlalchemy import Engine, delete
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.core.db import session as open_session
from app.core.models import IdempotencyKey, utcnow
from app.service import ServiceError

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
KEEP = timedelta(hours=24)
"""How long a key's answer is kept (and the key cannot be used for another request)."""
LEASE = timedelta(minutes=2)
"""How long a claim may stay unanswered before a repeat takes it over: far longer than any
request runs (gunicorn's worker timeout is 30 seconds)."""
MAX_KEY = 255
"""The longest key taken (a UUID is 36 characters)."""


class KeyInUse(ServiceError):
    """The first request with this key is still being processed."""

    status = 409


class KeyReused(ServiceError):
    """The key was used for another request (or its answer can no longer be read)."""

    status = 422


class BadKey(ServiceError):
    status = 400


def check_key(key: str) -> str:
    """The key as sent, when it is one (printable ASCII, not empty, not too long)."""
    if not key or len(key) > MAX_KEY or not key.isascii() or not key.isprintable():
        raise BadKey(f"the {HEADER} header must be 1 to {MAX_KEY} printable ASCII characters "
                     "(a random UUID is best): nothing was done")
    return key


def fingerprint(method: str, path: str, body: Any) -> str:
    """The hash of a request as far as a repeat must match it: its method, path and (parsed)
    body, keys sorted, so that the same JSON spelled differently is the same request."""
    text = json.dumps([method.upper(), path, body], sort_keys=True, separators=(",", ":"),
                      default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Replay:
    """A stored answer, to send again as it was."""

    status: int
    body: dict[str, Any]


@dataclass
class Claim:
    """A key claimed for one request: :meth:`record` writes its answer in the caller's
    transaction. ``shape`` turns what the service returns into the body the client gets."""

    row_id: int
    locked_at: datetime
    cipher: Fernet
    status: int
    shape: Callable[[dict[str, Any]], dict[str, Any]] = field(default=dict)
    body: dict[str, Any] | None = None

    def record(self, s: Session, result: dict[str, Any]) -> None:
        """Write the answer to ``result`` into the key's row, in session ``s`` (committed with
        what the request changed)."""
        row = s.get(IdempotencyKey, self.row_id, with_for_update=True)
        if row is None or row.status is not None or not _same_moment(row.locked_at,
                                                                      self.locked_at):
            raise KeyInUse("another request has taken this Idempotency-Key over: nothing was "
                           "done; send the request again to get its answer")
        body = self.shape(result)
        row.status = self.status
        row.answer = self.cipher.encrypt(json.dumps(body).encode()).decode()
        s.add(row)
        self.body = body


class IdempotencyStore:
    """The ``idempotency_keys`` table of one database."""

    def __init__(self, engine: Engine, secret_key: str) -> None:
        self.engine = engine
        self.secret_key = secret_key.encode()

    def claim(self, scope: str, key: str, request: str, *, route: str = "", status: int = 200,
              now: datetime | None = None) -> Claim | Replay:
        """Claim ``key`` in ``scope`` for the request whose :func:`fingerprint` is
        ``request``: a :class:`Claim` to run it (and answer with ``status``), or the stored
        :class:`Replay`. Raises :class:`KeyInUse` while the first request runs,
        :class:`KeyReused` when the key was used for another request."""
        now = now or utcnow()
        cipher = self._cipher(scope, key)
        key_hash = _digest(scope, key)
        for _attempt in range(3):
            try:
                return self._claim_once(key_hash, request, route[:200], status, cipher, now)
            except IntegrityError:
                continue  # a concurrent request inserted the key first: read its row
        raise KeyInUse(f"the {HEADER} is being used by concurrent requests: send it again")

    def _claim_once(self, key_hash: str, request: str, route: str, status: int,
                    cipher: Fernet, now: datetime) -> Claim | Replay:
        with open_session(self.engine, write=True) as s:
            row = s.exec(select(IdempotencyKey).where(IdempotencyKey.key_hash == key_hash)
                         ).first()
            if row is not None and _aware(row.created_at) <= now - KEEP:
                s.delete(row)  # expired: the key is free again
                s.flush()
                row = None
            if row is None:
                row = IdempotencyKey(key_hash=key_hash, fingerprint=request, route=route,
                                     created_at=now, locked_at=now)
            elif row.fingerprint != request:
                raise KeyReused(f"this {HEADER} was used for a different request (another "
                                "body or path) in the last 24 hours: use a new key for a "
                                "new request; nothing was done")
            elif row.status is not None:
                return Replay(row.status, _decrypt(cipher, row.answer))
            elif _aware(row.locked_at) > now - LEASE:
                raise KeyInUse(f"a request with this {HEADER} is still being processed: wait "
                               "for it, then send this one again to get its answer")
            else:
                row.locked_at = now  # its first request died unanswered: run it again
            s.add(row)
            s.commit()
            assert row.id is not None
            return Claim(row.id, now, cipher, status)

    def release(self, claim: Claim) -> None:
        """Give the key back after its request failed (having changed nothing): a repeat runs
        the request again. An answered key is kept."""
        with open_session(self.engine, write=True) as s:
            s.execute(delete(IdempotencyKey).where(
                col(IdempotencyKey.id) == claim.row_id, col(IdempotencyKey.status).is_(None)))
            s.commit()

    def finish(self, claim: Claim, result: dict[str, Any]) -> dict[str, Any]:
        """Record the answer in a transaction of its own (requests whose service does not take
        the claim: those that are harmless to run twice)."""
        if claim.body is None:
            with open_session(self.engine, write=True) as s:
                claim.record(s, result)
                s.commit()
        assert claim.body is not None
        return claim.body

    def find(self, scope: str, key: str, request: str,
             now: datetime | None = None) -> Replay | None:
        """The stored answer of ``key``, if it has one for this request (a read: nothing is
        claimed)."""
        now = now or utcnow()
        with open_session(self.engine) as s:
            row = s.exec(select(IdempotencyKey).where(
                IdempotencyKey.key_hash == _digest(scope, key))).first()
            if (row is None or row.status is None or row.fingerprint != request
                    or _aware(row.created_at) <= now - KEEP):
                return None
            try:
                return Replay(row.status, _decrypt(self._cipher(scope, key), row.answer))
            except KeyReused:
                return None

    def purge(self, now: datetime | None = None) -> int:
        """Delete the keys older than :data:`KEEP`; how many were deleted."""
        cutoff = (now or utcnow()) - KEEP
        with open_session(self.engine, write=True) as s:
            result = s.execute(delete(IdempotencyKey).where(
                col(IdempotencyKey.created_at) <= cutoff))
            s.commit()
            return int(getattr(result, "rowcount", 0) or 0)

    def _cipher(self, scope: str, key: str) -> Fernet:
        derived = hmac.new(self.secret_key, f"idempotency\0{scope}\0{key}".encode(),
                           hashlib.sha256).digest()
        return Fernet(base64.urlsafe_b64encode(derived))


def _digest(scope: str, key: str) -> str:
    return hashlib.sha256(f"{scope}\0{key}".encode()).hexdigest()


def _decrypt(cipher: Fernet, answer: str | None) -> dict[str, Any]:
    try:
        body = json.loads(cipher.decrypt((answer or "").encode()))
    except (InvalidToken, ValueError):
        raise KeyReused(f"the answer stored for this {HEADER} cannot be read (the server's "
                        "secret key changed): use a new key") from None
    if not isinstance(body, dict):
        raise KeyReused(f"the answer stored for this {HEADER} cannot be read: use a new key")
    return body


def _aware(moment: datetime) -> datetime:
    """SQLite gives naive datetimes back: they are UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _same_moment(a: datetime, b: datetime) -> bool:
    return _aware(a) == _aware(b)


def current_store() -> IdempotencyStore:
    """The keys of the running app's database (made once per app)."""
    from flask import current_app

    store: IdempotencyStore | None = current_app.extensions.get("titanpost.idempotency")
    if store is None:
        service = current_app.extensions["titanpost.service"]
        store = IdempotencyStore(service.engine, service.settings.secret_key)
        current_app.extensions["titanpost.idempotency"] = store
    return store
