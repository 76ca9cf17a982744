"""``titanpost mail listen`` and ``titanpost mail poll``: replies by e-mail coming in;
``titanpost mail bounce``: a bounce handed over by the MTA.

The ``mail`` group of cli/mail.py lists them and imports this module when one is run.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import threading
import time
from typing import Any

import click

from app.core.config import ConfigError, Settings
from app.service import GameService
from cli.speech import N_, tr

database_option = click.option(
    "--database-url", default=None, help=N_("Overrides TITANPOST_DATABASE_URL.")
)


def _settings(database_url: str | None) -> Settings:
    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if database_url:
        settings = dataclasses.replace(settings, database_url=database_url)
    return settings


def _service(settings: Settings) -> GameService:
    """The service as the web app builds it, so that moves made by mail notify the other players
    exactly as moves made on the web do."""
    from app import create_app

    service: GameService = create_app(settings).extensions["titanpost.service"]
    return service


def _process(service: GameService, confirm: bool) -> int:
    from app.mail.inbound import process_inbound

    total = 0
    while True:
        outcomes = process_inbound(service, 50, confirm=confirm)
        for outcome in outcomes:
            click.echo(
                tr("reply {id}: {result}", id=outcome.inbound_id, result=outcome.result)
                + (f" ({outcome.notation})" if outcome.notation else "")
                + (tr(", answered with {kind}", kind=outcome.reply_kind) if outcome.reply_kind
                   else "")
            )
        total += len(outcomes)
        if len(outcomes) < 50:
            return total


confirm_option = click.option(
    "--confirm", is_flag=True, help=N_("Also answer played moves by mail (reply-ok).")
)
queue_only_option = click.option(
    "--queue-only", is_flag=True, help=N_("Only queue replies; another worker applies them.")
)


@click.command("listen", help=N_(
        "Receive replies over SMTP: refuse unknown recipients at RCPT, queue the rest, "
        "apply them.\n"
        "\n"
        "Point the reply domain's MX (or the MTA's transport for it) at HOST:PORT."))
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8025, show_default=True, type=int)
@click.option(
    "--interval", default=30.0, show_default=True, type=float,
    help=N_("Seconds between passes over the queue (a queued reply also starts one at once)."),
)
@queue_only_option
@confirm_option
@database_option
def listen(
    host: str,
    port: int,
    interval: float,
    queue_only: bool,
    confirm: bool,
    database_url: str | None,
) -> None:
    from app.core.observability import configure_logging, log_secrets
    from app.mail.inbound_smtp import make_controller

    settings = _settings(database_url)
    configure_logging(settings.log_format, settings.log_level.upper(),
                      secrets=log_secrets(settings))
    # aiosmtpd logs each SMTP command, reply addresses (with their signature) included
    logging.getLogger("mail.log").setLevel(logging.WARNING)
    service = _service(settings)
    wake = threading.Event()
    controller = make_controller(
        service.engine, settings, host, port, on_queued=lambda ids: wake.set()
    )
    controller.start()
    click.echo(tr("Titan Post replies: SMTP on {address} for {domain}",
                  address=host + ":" + str(port), domain="@" + settings.mail_domain))
    stopping = threading.Event()

    def _stop(_signum: int, _frame: Any) -> None:  # SIGTERM (systemd, containers) as Ctrl-C
        stopping.set()
        wake.set()

    signal.signal(signal.SIGTERM, _stop)
    try:
        while not stopping.is_set():
            if not queue_only:
                try:
                    _process(service, confirm)
                except Exception:  # the database is away: the replies wait in the queue
                    logging.exception("processing the queued replies failed; trying again")
            wake.wait(interval)
            wake.clear()
    except KeyboardInterrupt:
        pass
    finally:
        controller.stop()


@click.command("poll", help=N_(
        "Fetch UNSEEN messages over IMAP, queue the replies among them, flag them seen, "
        "apply."))
@click.option(
    "--url", default=None,
    help=N_("imap[s]://user:pass@host[:port]/MAILBOX (default: TITANPOST_IMAP_URL)."),
)
@click.option(
    "--every", default=None, type=float,
    help=N_("Poll again after this many seconds, until stopped (default: poll once)."),
)
@click.option("--limit", default=100, show_default=True, type=int, help=N_("Messages per poll."))
@queue_only_option
@confirm_option
@database_option
def poll(
    url: str | None,
    every: float | None,
    limit: int,
    queue_only: bool,
    confirm: bool,
    database_url: str | None,
) -> None:
    from app.core.observability import log_secrets, remember_secrets
    from app.mail.inbound_imap import ImapUrlError, parse_imap_url, poll_imap

    url = url or os.environ.get("TITANPOST_IMAP_URL", "").strip()
    if not url:
        raise click.UsageError(tr("give --url or set {variable} ({example})",
                                  variable="TITANPOST_IMAP_URL",
                                  example="imaps://user:pass@host/"))
    try:
        where = parse_imap_url(url)
    except ImapUrlError as exc:
        raise click.UsageError(str(exc)) from None
    settings = _settings(database_url)
    remember_secrets(log_secrets(settings, url))  # the mailbox's password too
    service = _service(settings)
    while True:
        try:
            report = poll_imap(service.engine, settings, where, limit=limit)
        except Exception as exc:  # OSError, imaplib.IMAP4.error and the like
            problem = f"IMAP {where.host}:{where.port}: {exc}"
            if every is None:
                raise click.ClickException(problem) from None
            click.echo(problem, err=True)  # polling on: try again next time
        else:
            click.echo(
                tr("fetched {fetched}, queued {queued}, not for a reply address {ignored}",
                   fetched=report.fetched, queued=len(report.queued), ignored=report.ignored)
                + (tr(", too large {count}", count=report.too_large) if report.too_large
                   else "")
                + (tr(", bounces {count}", count=report.bounces) if report.bounces else "")
            )
        if not queue_only:
            _process(service, confirm)
        if every is None:
            return
        time.sleep(every)


@click.command("bounce", help=N_(
        "Apply a bounce (a delivery status notification) read from FILE, - for standard "
        "input.\n"
        "\n"
        "For an MTA that hands bounces to a command (a pipe transport for the bounces+ "
        "addresses), or an operator with a bounce saved from a mailbox. The mail it is about "
        "is found by the token of the bounce address it names (--to, or its own headers); a "
        "bounce without one marks the addresses it names that were sent mail in the last 7 "
        "days, for permanent failures only."))
@click.argument("file", type=click.File("rb"), default="-")
@click.option("--to", "recipient", default=None, help=N_(
    "The bounce address it was delivered to (the MTA's recipient), when its headers do not "
    "say."))
@database_option
def bounce(file: Any, recipient: str | None, database_url: str | None) -> None:
    from app.core.db import make_engine
    from app.features.delivery.bounces import apply_bounce
    from app.features.delivery.verp import parse_bounce_address

    settings = _settings(database_url)
    tokens = []
    if recipient:
        token = parse_bounce_address(settings.mail_domain, recipient)
        if token is None:
            raise click.UsageError(tr("{address} is not a bounce address of {domain}",
                                      address=recipient, domain=settings.mail_domain))
        tokens.append(token)
    raw = file.read(settings.max_mail_bytes + 1)
    if len(raw) > settings.max_mail_bytes:
        raise click.ClickException(tr("the message is over {limit} bytes: not read",
                                      limit=settings.max_mail_bytes))
    engine = make_engine(settings.database_url)
    try:
        applied = apply_bounce(engine, settings.mail_domain, raw, tokens=tokens, allowed=None)
    finally:
        engine.dispose()
    for address, permanent in applied.marked:
        click.echo(tr("{address}: undeliverable", address=address) if permanent
                   else tr("{address}: a temporary failure, recorded", address=address))
    if not applied.marked:
        click.echo(tr("nothing marked ({why})", why="; ".join(applied.notes) or applied.how))
