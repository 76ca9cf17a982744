"""Settings from the environment, with embedded defaults for a laptop.

Every setting is read from a ``TITANPOST_*`` variable. In development mode (the default) the
database is a SQLite file in the user's data folder and, without ``TITANPOST_SECRET_KEY``, the
secret key is the installation's own, made once and kept beside it; in production mode
(``TITANPOST_ENV=production``) a missing secret key is a start-up error.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_data_dir

PUBLISHED_SECRETS = frozenset({"titanpost-development-only-secret"})
"""Keys anyone can read in this project's history (the development key of older versions):
never accepted in production."""
SECRET_FILE = "secret_key"
"""The installation's own key outside production, in the user data folder."""


class ConfigError(RuntimeError):
    """The settings do not allow the server to start."""


def data_home() -> Path:
    """The user data folder (made ready): the default database and the installation's key."""
    folder = Path(user_data_dir("titanpost", appauthor=False))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def default_database_url() -> str:
    return f"sqlite:///{data_home() / 'titanpost.db'}"


def installation_secret(folder: Path | None = None) -> str:
    """The secret key of this installation outside production: 256 random bits made on first
    need and kept in ``folder`` (the user data folder) readable by its owner alone.

    Every process of the installation (``serve``, the admin commands of another shell) signs
    with it alike, and nobody else can sign a session cookie or a link for it, as anyone could
    with a key written in the source. Two processes making it at once agree: each writes a
    file of its own and links it into place, and the one linked first is the key.
    """
    path = (folder or data_home()) / SECRET_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
        with os.fdopen(os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
            out.write(secrets.token_hex(32) + "\n")
        try:
            os.link(draft, path)
        except FileExistsError:
            pass  # another process was first: its key is the installation's
        finally:
            draft.unlink()
    key = path.read_text(encoding="ascii", errors="replace").strip()
    if len(key) < 32:
        raise ConfigError(f"the secret key file {path} is damaged: delete it (a new key is made "
                          "and the sessions and links signed with the old one end)")
    return key


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not '{raw}'") from None
    if value <= 0:
        raise ConfigError(f"{name} must be more than 0")
    return value


def _not_negative(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if raw == "0":
        return 0
    return _positive(env, name, default)


def _log_format(env: Mapping[str, str], mode: str) -> str:
    value = env.get("TITANPOST_LOG_FORMAT", "").strip().lower()
    if not value:
        return "json" if mode == "production" else "text"
    if value not in ("json", "text"):
        raise ConfigError("TITANPOST_LOG_FORMAT must be json or text")
    return value


OFF = ("0", "off", "none", "no")
STORAGE_SCHEMES = ("memory://", "redis://", "rediss://", "redis+unix://", "redis+cluster://",
                   "redis+sentinel://", "memcached://", "valkey://", "valkeys://")


def _rate_limit(env: Mapping[str, str], name: str, default: str) -> str | None:
    """A rate limit such as ``30/minute`` or ``10 per minute; 100 per hour`` (None: off)."""
    from limits import parse_many

    raw = env.get(name, "").strip() or default
    if raw.lower() in OFF:
        return None
    try:
        parse_many(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a rate such as 30/minute (or off), "
                          f"not '{raw}'") from None
    return raw


def _limit_storage(env: Mapping[str, str]) -> str:
    raw = env.get("TITANPOST_RATE_LIMIT_STORAGE", "").strip() or "memory://"
    if not raw.startswith(STORAGE_SCHEMES):
        raise ConfigError("TITANPOST_RATE_LIMIT_STORAGE must be memory:// or a redis://host:port "
                          "(or memcached://) address")
    return raw


LOG_LEVELS = ("debug", "info", "warning", "error")


def _log_level(env: Mapping[str, str]) -> str:
    value = env.get("TITANPOST_LOG_LEVEL", "").strip().lower() or "info"
    if value not in LOG_LEVELS:
        raise ConfigError(f"TITANPOST_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}")
    return value


MAIL_IMAGE_MODES = ("auto", "inline", "link")


def _mail_images(env: Mapping[str, str]) -> str:
    value = env.get("TITANPOST_MAIL_IMAGES", "").strip().lower() or "auto"
    if value not in MAIL_IMAGE_MODES:
        raise ConfigError("TITANPOST_MAIL_IMAGES must be auto, inline or link")
    return value


def _switch(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "").strip().lower() or "0"
    if value not in ("0", "1", "true", "false", "yes", "no", "on", "off"):
        raise ConfigError(f"{name} must be 1 or 0")
    return value in ("1", "true", "yes", "on")


def _selector(env: Mapping[str, str], name: str, default: str) -> str:
    value = env.get(name, "").strip() or default
    if not re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*", value):
        raise ConfigError(f"{name} must be a DNS label (letters, digits and '-')")
    return value


def smtp_urls(text: str | None) -> list[str]:
    """The relay URLs of a ``TITANPOST_SMTP_URL``: one, or two (the second the fallback)
    separated by spaces or a comma. A comma inside a URL (its password, say) stays: only one
    followed by ``smtp://`` or ``smtps://`` separates."""
    return [url for url in re.split(r"\s*,\s*(?=smtps?://)|\s+", (text or "").strip()) if url]


def _smtp_url(text: str | None) -> tuple[str | None, str | None]:
    """The primary relay's URL and the fallback's (None: no relay, no fallback)."""
    urls = smtp_urls(text)
    if len(urls) > 2:
        raise ConfigError("TITANPOST_SMTP_URL names at most two relays (the second the "
                          "fallback), separated by a space or a comma")
    if any(not url.startswith(("smtp://", "smtps://")) for url in urls):
        raise ConfigError("TITANPOST_SMTP_URL must start with smtp:// or smtps:// (each of "
                          "its two URLs, when it names a fallback relay)")
    return (urls[0] if urls else None), (urls[1] if len(urls) > 1 else None)


@dataclass(frozen=True)
class Settings:
    env: str
    database_url: str
    secret_key: str
    base_url: str
    admin_token: str | None
    max_body_bytes: int
    snapshot_every: int
    smtp_url: str | None = None
    """``smtp://user:pass@host:port`` or ``smtps://...``; None keeps mail in the outbox."""
    smtp_fallback_url: str | None = None
    """The fallback relay: the second URL of ``TITANPOST_SMTP_URL`` (see
    app/features/delivery/routing.py)."""
    smtp_failover_minutes: int = 30
    """How long a relay may keep failing for an address (no connection, 4xx answers) before
    its mail goes by the other relay (TITANPOST_SMTP_FAILOVER_MINUTES)."""
    mail_from: str = "Titan Post <titanpost@localhost>"
    mail_domain: str = "localhost"
    """Domain of reply addresses and Message-IDs."""
    tick_seconds: int = 30
    """How often the scheduler processes due deadlines (TITANPOST_TICK_SECONDS)."""
    mail_seconds: int = 10
    """How often the scheduler sends the outboxes (mail, webhooks, Web Push) and applies
    queued replies (TITANPOST_MAIL_SECONDS)."""
    retention_days: int = 30
    """Days after which a game never started, and an invitation never accepted, are purged
    (TITANPOST_RETENTION_DAYS; 0: never; app/features/retention/)."""
    mail_body_days: int = 90
    """Days after which a mail's body is emptied from the outbox, its row kept for the audit
    (TITANPOST_MAIL_BODY_DAYS; 0: never)."""
    db_pool_size: int = 10
    """PostgreSQL connections each process keeps open (TITANPOST_DB_POOL_SIZE)."""
    db_max_overflow: int = 20
    """Connections a process may open beyond its pool at busy times (TITANPOST_DB_MAX_OVERFLOW)."""
    log_format: str = "text"
    """``json`` (one object per line, the default in production) or ``text``."""
    log_level: str = "info"
    """The least important records logged: debug, info, warning or error."""
    max_tick_gap_minutes: int = 60
    """A longer time without any tick is an outage: deadlines are extended by it, not fired
    (0: never)."""
    rate_limit_links: str | None = "60/minute"
    """Signed link pages (/l/, /g/) one address may open, GET and POST together (None: no
    limit)."""
    rate_limit_login: str | None = "10/minute"
    """Refused guesses per address: unknown invitations, wrong admin or creator tokens,
    refused API tokens (None: no limit)."""
    rate_limit_refusals: str | None = "30/minute"
    """Refused moves per seat of a game, whatever the channel (None: no limit)."""
    rate_limit_storage: str = "memory://"
    """Where the counters live: memory:// is per process; redis://host:port shares them."""
    trusted_proxies: int = 0
    """Reverse proxies in front (nginx: 1) whose X-Forwarded-For names the client's address."""
    max_mail_bytes: int = 10 * 1024 * 1024
    """Larger inbound mails are refused (SMTP: 552; IMAP: flagged seen, never read)."""
    mail_images: str = "auto"
    """How mails carry the board picture: ``link`` (a signed image address on this server),
    ``inline`` (a PNG part of the mail), ``auto`` (link when ``base_url`` is https on a public
    host name, else inline); see :mod:`app.mail.images`."""
    dkim_key_file: str | None = None
    """The PEM private key every outgoing mail is DKIM-signed with (TITANPOST_DKIM_KEY_FILE;
    None: unsigned): see app/mail/signing.py and ``titanpost mail dkim-key``."""
    dkim_selector: str = "default"
    """The key's selector: published at ``<selector>._domainkey.<domain>``."""
    dkim_domain: str | None = None
    """The signing domain (d=); None: the From address's domain."""
    dkim_ed25519_key_file: str | None = None
    """A second key, Ed25519, that signs beside the first (RFC 8463)."""
    dkim_ed25519_selector: str = "ed25519"
    continuation_minutes: int = 10
    """How long a decision that continues the mover's own turn waits before it is mailed or
    pushed (TITANPOST_CONTINUATION_MINUTES): a player who goes on in the browser answers it
    first, and it is skipped, so that one turn brings one mail (0: at once)."""
    webhook_allow_private: bool = False
    """Let webhooks and Web Push post to loopback, private and other non-public addresses
    (tests, a bot on the same host); off, such an address is refused when added and by the
    connection that posts to it (see app.core.outbound)."""

    @property
    def production(self) -> bool:
        return self.env == "production"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = dict(os.environ if environ is None else environ)
        mode = env.get("TITANPOST_ENV", "development").strip().lower()
        if mode not in ("development", "production", "test"):
            raise ConfigError("TITANPOST_ENV must be development, production or test")
        secret = env.get("TITANPOST_SECRET_KEY", "").strip()
        if not secret:
            if mode == "production":
                raise ConfigError(
                    "TITANPOST_SECRET_KEY is not set: production mode needs a secret key "
                    "(for example the output of: python3 -c 'import secrets; "
                    "print(secrets.token_hex(32))')"
                )
            secret = installation_secret()
        elif mode == "production" and (secret in PUBLISHED_SECRETS or len(secret) < 16):
            raise ConfigError("TITANPOST_SECRET_KEY is too short or the development default")
        url = env.get("TITANPOST_DATABASE_URL", "").strip() or default_database_url()
        if url.startswith("postgres://"):
            url = "postgresql://" + url.removeprefix("postgres://")
        if url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
        smtp_url, smtp_fallback_url = _smtp_url(env.get("TITANPOST_SMTP_URL"))
        return cls(
            env=mode,
            database_url=url,
            secret_key=secret,
            base_url=env.get("TITANPOST_BASE_URL", "http://127.0.0.1:5000").rstrip("/"),
            admin_token=env.get("TITANPOST_ADMIN_TOKEN", "").strip() or None,
            max_body_bytes=_positive(env, "TITANPOST_MAX_BODY_BYTES", 64 * 1024),
            snapshot_every=_positive(env, "TITANPOST_SNAPSHOT_EVERY", 10),
            smtp_url=smtp_url,
            smtp_fallback_url=smtp_fallback_url,
            smtp_failover_minutes=_not_negative(env, "TITANPOST_SMTP_FAILOVER_MINUTES", 30),
            mail_from=env.get("TITANPOST_MAIL_FROM", "").strip()
            or "Titan Post <titanpost@localhost>",
            mail_domain=env.get("TITANPOST_MAIL_DOMAIN", "").strip().lower() or "localhost",
            tick_seconds=_positive(env, "TITANPOST_TICK_SECONDS", 30),
            retention_days=_not_negative(env, "TITANPOST_RETENTION_DAYS", 30),
            mail_body_days=_not_negative(env, "TITANPOST_MAIL_BODY_DAYS", 90),
            mail_seconds=_positive(env, "TITANPOST_MAIL_SECONDS", 10),
            max_tick_gap_minutes=_not_negative(env, "TITANPOST_MAX_TICK_GAP_MINUTES", 60),
            log_format=_log_format(env, mode),
            log_level=_log_level(env),
            db_pool_size=_positive(env, "TITANPOST_DB_POOL_SIZE", 10),
            db_max_overflow=_not_negative(env, "TITANPOST_DB_MAX_OVERFLOW", 20),
            rate_limit_links=_rate_limit(env, "TITANPOST_RATE_LIMIT_LINKS", "60/minute"),
            rate_limit_login=_rate_limit(env, "TITANPOST_RATE_LIMIT_LOGIN", "10/minute"),
            rate_limit_refusals=_rate_limit(env, "TITANPOST_RATE_LIMIT_REFUSALS", "30/minute"),
            rate_limit_storage=_limit_storage(env),
            trusted_proxies=_not_negative(env, "TITANPOST_TRUSTED_PROXIES", 0),
            max_mail_bytes=_positive(env, "TITANPOST_MAX_MAIL_BYTES", 10 * 1024 * 1024),
            mail_images=_mail_images(env),
            webhook_allow_private=_switch(env, "TITANPOST_WEBHOOK_ALLOW_PRIVATE"),
            continuation_minutes=_not_negative(env, "TITANPOST_CONTINUATION_MINUTES", 10),
            dkim_key_file=env.get("TITANPOST_DKIM_KEY_FILE", "").strip() or None,
            dkim_selector=_selector(env, "TITANPOST_DKIM_SELECTOR", "default"),
            dkim_domain=env.get("TITANPOST_DKIM_DOMAIN", "").strip().lower() or None,
            dkim_ed25519_key_file=env.get("TITANPOST_DKIM_ED25519_KEY_FILE", "").strip()
            or None,
            dkim_ed25519_selector=_selector(env, "TITANPOST_DKIM_ED25519_SELECTOR", "ed25519"),
        )
