"""``titanpost serve``, ``worker`` and ``health``: the server's processes (everything is imported
when the command runs)."""

from __future__ import annotations

import dataclasses
import ipaddress
import os
from typing import TYPE_CHECKING

import click

from cli.speech import N_, tr

if TYPE_CHECKING:
    from app.core.config import Settings


@click.command("serve", help=N_(
        "Run the server with the embedded defaults (SQLite file, everything in one "
        "process).\n"
        "\n"
        "The database is upgraded to the latest schema first, and the scheduler "
        "(deadlines, reminders, the outbox when an SMTP relay is set, replies) runs in "
        "this process. For several workers use gunicorn with ``app.wsgi:app`` and one "
        "``titanpost worker`` (see deploy/)."))
@click.option("--host", default="127.0.0.1", show_default=True,
              help=N_("The address to listen on: outside production mode a loopback "
                      "address (127.0.0.1, ::1, localhost)."))
@click.option("--port", default=5000, show_default=True, type=int)
@click.option("--no-migrate", is_flag=True, help=N_("Do not upgrade the database first."))
@click.option("--no-scheduler", is_flag=True,
              help=N_("Do not run the clock and mail jobs here (a separate `titanpost worker` "
                   "runs them)."))
def serve(host: str, port: int, no_migrate: bool, no_scheduler: bool) -> None:
    from app import create_app

    settings = _settings(migrate=False)
    if not settings.production and not is_loopback(host):
        raise click.ClickException(tr(
            "{host} is not a loopback address: outside production mode the server answers "
            "this computer alone (its mail is shown on /dev/mail); to serve others, run it in "
            "production mode (TITANPOST_ENV=production, see deploy/README.md)", host=host))
    if not no_migrate:
        from app.core.migrate import upgrade

        upgrade(settings.database_url)
    followed = not os.environ.get("TITANPOST_BASE_URL", "").strip()
    if followed:  # the links in pages and mails lead to where this server answers
        settings = dataclasses.replace(settings, base_url=served_base_url(host, port))
    app = create_app(settings)
    from sqlalchemy.engine import make_url

    database = make_url(settings.database_url).render_as_string(hide_password=True)
    click.echo(tr("Titan Post on {address} (database {database})",
                  address="http://" + _url_host(host) + ":" + str(port) + "/",
                  database=database))
    if followed:
        click.echo(tr("links lead to {address}; for the commands of another shell (titanpost "
                      "admin ...): {command}", address=settings.base_url,
                      command="export TITANPOST_BASE_URL=" + settings.base_url))
    if not no_scheduler:
        from app.features.clock.scheduler import start_in_background

        start_in_background(app.extensions["titanpost.service"])
        click.echo(tr("scheduler: the clock ticks every {seconds} s in this process",
                      seconds=settings.tick_seconds))
    app.run(host=host, port=port, threaded=True)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a --host value) is an address of this computer alone: ``localhost``
    or a loopback address (127.0.0.0/8, ::1); every other name or address (0.0.0.0, a LAN
    address, a host name that may resolve to one) is not."""
    name = host.strip().removeprefix("[").removesuffix("]")
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _url_host(host: str) -> str:
    """``host`` as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def served_base_url(host: str, port: int) -> str:
    """The base of the links of a server on ``host``:``port`` when no TITANPOST_BASE_URL is
    set (one listening on every address is reached on this computer as 127.0.0.1)."""
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = "127.0.0.1"
    return f"http://{_url_host(host)}:{port}"


@click.command("worker", help=N_(
        "Run the scheduler on its own: deadlines and reminders, the outbox (with an SMTP "
        "relay), queued replies and the daily digest. Several may run at once; web "
        "workers never schedule."))
@click.option("--no-migrate", is_flag=True, help=N_("Do not upgrade the database first."))
def worker(no_migrate: bool) -> None:

    from app.core.observability import configure_logging, log_secrets
    from app.features.clock.scheduler import run_blocking
    from app.listeners import build_service

    settings = _settings(migrate=not no_migrate)
    configure_logging(settings.log_format, settings.log_level.upper(),
                      secrets=log_secrets(settings))
    click.echo(tr("Titan Post worker: the clock ticks every {seconds} s",
                  seconds=settings.tick_seconds))
    run_blocking(build_service(settings))


@click.command("health", help=N_(
        "Check that the database answers (and, with --worker, that a scheduler ticks); "
        "exit 1 with one line saying what is wrong. For container and monitoring "
        "healthchecks."))
@click.option("--worker", "need_worker", is_flag=True,
              help=N_("Also fail when no scheduler ticked within three tick intervals."))
def health(need_worker: bool) -> None:
    from datetime import UTC, datetime

    from app.features.clock.timekeeper import Timekeeper
    from app.listeners import build_service
    from app.web.health import STALE_TICKS

    settings = _settings(migrate=False)
    try:
        last = Timekeeper(build_service(settings)).last_tick()
    except Exception as exc:  # the database does not answer
        raise click.ClickException(tr("the database does not answer: {problem}",
                                      problem=type(exc).__name__)) from None
    age = (datetime.now(UTC) - last).total_seconds() if last is not None else None
    ticked = "never" if age is None else f"{age:.0f}s ago"
    if need_worker and (age is None or age > STALE_TICKS * settings.tick_seconds):
        raise click.ClickException(tr("the scheduler is stale: its last tick was {time}",
                                      time=ticked))
    click.echo(tr("ok: the database answers; the scheduler last ticked {time}", time=ticked))


def _settings(*, migrate: bool) -> Settings:
    """The settings from the environment (a clear error if they are wrong), with the database
    upgraded to the latest schema first unless ``migrate`` is false."""
    from app.core.config import ConfigError, Settings
    from app.core.migrate import upgrade

    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if migrate:
        upgrade(settings.database_url)
    return settings
