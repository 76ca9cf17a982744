"""The tables of who may act and how safely: a seat's API tokens, the sign-ins asked for by mail
(and the sessions they open), and the answers kept for requests sent with an
``Idempotency-Key``."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Column, DateTime, ForeignKey, Integer, String
from sqlalchemy import false as sa_false
from sqlmodel import Field, SQLModel

from .base import utcnow


class ApiToken(SQLModel, table=True):
    """A seat's API token for the command-line client: only its SHA-256 is stored."""

    __tablename__ = "api_tokens"

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    seat_id: int = Field(
        sa_column=Column(Integer, ForeignKey("seats.id"), nullable=False, index=True)
    )
    label: str = Field(default="", max_length=100)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    revoked_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))


class IdempotencyKey(SQLModel, table=True):
    """The answer to an unsafe request sent with an ``Idempotency-Key`` header, replayed to a
    repeat of the same request instead of doing it again (see app/web/idempotency.py).

    ``key_hash`` is the SHA-256 of the key with the scope it was sent in (the credential's hash,
    or the route when there is none), so neither the key nor the credential is stored;
    ``fingerprint`` that of the request (method, path, body), so that the key reused for
    another request is refused. While the first request runs, ``status`` is None (a repeat gets
    409); the answer is written in the transaction of what the request changed, encrypted with
    a key derived from the server's secret key and the Idempotency-Key itself. Rows live 24
    hours."""

    __tablename__ = "idempotency_keys"

    id: int | None = Field(default=None, primary_key=True)
    key_hash: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    fingerprint: str = Field(max_length=64)
    route: str = Field(default="", max_length=200)
    """The path the key was first used on (for an operator reading the table)."""
    status: int | None = None
    """The first answer's HTTP status; None while the first request is still being processed."""
    answer: str | None = None
    """The first answer's JSON body, encrypted (Fernet)."""
    created_at: datetime = Field(
        default_factory=utcnow,
        sa_column=Column(DateTime(timezone=True), nullable=False, index=True),
    )
    locked_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    """When a request last claimed the key: a claim left unanswered for longer than
    ``app.web.idempotency.LEASE`` (its process died) may be taken over."""


class SignIn(SQLModel, table=True):
    """One sign-in link asked for by mail (app/features/signin/signins.py), and, once used, the
    account session of the browser or terminal that used it.

    A row is written for every request, whether or not the address has a seat (so that the
    answer, and the per-address and per-client limits, are the same for both); neither the
    address nor the client's IP is stored, only keyed hashes of them. ``used_at`` makes the
    link single use: it is set by one conditional UPDATE (``WHERE used_at IS NULL``), which one
    request alone can win. ``seats_digest`` fingerprints the address's seats and their secrets
    when the link was mailed: a seat given to someone else since makes the link useless.
    ``revoked_at`` is set by signing out."""

    __tablename__ = "signins"

    id: int | None = Field(default=None, primary_key=True)
    token_id: str = Field(sa_column=Column(String(32), nullable=False, unique=True))
    email_digest: str = Field(sa_column=Column(String(64), nullable=False, index=True))
    client_digest: str = Field(sa_column=Column(String(64), nullable=False, index=True))
    seats_digest: str = Field(max_length=64)
    mailed: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default=sa_false())
    )
    """The address had a seat, so the link was mailed (the answer said the same either way)."""
    requested_at: datetime = Field(
        default_factory=utcnow,
        sa_column=Column(DateTime(timezone=True), nullable=False, index=True),
    )
    used_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    used_by: str | None = Field(default=None, max_length=10)
    """``web`` (a browser's session) or ``cli`` (a terminal's account token)."""
    revoked_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
