"""``titanpost mail``: deliver the outbox (and write the daily digests); the DKIM key and DNS
records of the sending domain (cli/maildns.py).

``mail send`` delivers due mail through ``TITANPOST_SMTP_URL`` until stopped (``--once``: what
is due now, then stop, as a cron job would). Without an SMTP URL mail stays in the outbox and is
read on the development page ``/dev/mail``.
"""

from __future__ import annotations

import signal
import threading
from typing import Any, Final

import click

from app.core.config import ConfigError, Settings
from cli.lazy import Lazy, LazyGroup
from cli.speech import N_, tr


def _service() -> Any:
    from app.core.observability import configure_logging, log_secrets
    from app.listeners import build_service

    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    # the sender's warnings (a relay refusing, giving up) as the server's: formatted, redacted
    configure_logging(settings.log_format, settings.log_level.upper(),
                      secrets=log_secrets(settings))
    return build_service(settings)


INBOUND: Final[dict[str, Lazy]] = {
    "listen": Lazy("cli.mailin", "listen",
        N_("Receive replies over SMTP: refuse unknown recipients at RCPT, queue the rest, apply "
        "them.")),
    "poll": Lazy("cli.mailin", "poll",
        N_("Fetch UNSEEN messages over IMAP, queue the replies among them, flag them seen, "
           "apply.")),
    "bounce": Lazy("cli.mailin", "bounce",
        N_("Apply a bounce (a delivery status notification) read from FILE, - for standard "
           "input.")),
    "dkim-key": Lazy("cli.maildns", "dkim_key",
        N_("Make a DKIM key pair for signing outgoing mail: the private key in FILE, the DNS "
           "record to publish printed.")),
    "dns": Lazy("cli.maildns", "dns",
        N_("Print the SPF, DKIM and DMARC records the From domain needs, and check those "
           "published.")),
}
"""The commands taking in replies (cli/mailin.py) and those of the sending domain's key and
records (cli/maildns.py), imported when run."""


@click.group(cls=LazyGroup, lazy=INBOUND, help=N_(
        "Mail: deliver the outbox, write digests (and take in replies)."))
def mail() -> None:
    pass


@mail.command("send", help=N_(
        "Deliver due mail from the outbox, with retries and backoff.\n"
        "\n"
        "Several senders may run at once (they never send one mail twice)."))
@click.option("--once", is_flag=True, help=N_("Send what is due now, then stop (for cron)."))
@click.option("--interval", type=float, default=10.0, show_default=True,
              help=N_("Seconds between looks at the outbox when it has nothing due."))
@click.option("--batch", type=click.IntRange(1, 1000), default=50, show_default=True,
              help=N_("Mails claimed (and sent over one connection) at a time."))
def send(once: bool, interval: float, batch: int) -> None:
    from app.mail.relay import SmtpUrlError
    from app.mail.send import Sender
    from app.mail.send_report import SendReport
    from app.mail.signing import DkimError

    service = _service()
    if not service.settings.smtp_url:
        click.echo(tr("{variable} is not set: nothing is sent, mail stays in the outbox (see "
                      "{page} on a development server)", variable="TITANPOST_SMTP_URL",
                      page="/dev/mail"))
        return
    try:
        sender = Sender(service, batch=batch)
    except SmtpUrlError as exc:
        raise click.ClickException(f"TITANPOST_SMTP_URL: {exc}") from None
    except DkimError as exc:
        raise click.ClickException(f"TITANPOST_DKIM_KEY_FILE: {exc}") from None
    assert sender.relays is not None
    if once:
        total = SendReport()
        while True:
            report = sender.run_once()
            for name in ("claimed", "sent", "skipped", "failed", "gave_up"):
                setattr(total, name, getattr(total, name) + getattr(report, name))
            total.errors += report.errors
            if report.claimed < batch:
                break
        click.echo(str(total))
        return
    stop = threading.Event()

    def _stop(_signum: int, _frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    click.echo(tr("sending the outbox through {relay} (every {seconds} s; Ctrl-C stops)",
                  relay=sender.relays.describe(), seconds=format(interval, "g")))
    sender.run(interval=interval, stop=stop, echo=click.echo)


@mail.command("digest", help=N_(
        "Write today's digest for the players who asked for one (once a day: a second run "
        "on the same day writes nothing)."))
def digest() -> None:
    from app.mail.notify import write_digests

    click.echo(tr("{count} digest(s) written", count=write_digests(_service())))
