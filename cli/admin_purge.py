"""``titanpost admin purge``: what the server keeps no longer (app/features/retention/), as the
scheduler purges it every night; ``--dry-run`` lists it and changes nothing."""

from __future__ import annotations

import json

import click

from app.core.models import utcnow
from app.features.retention.purge import PurgeReport, find, purge
from cli.admin import database_option, one_line, open_service, read_now, status_words
from cli.speech import N_, tr


@click.command("purge", help=N_(
        "Purge what the server keeps no longer: games never started and invitations never "
        "accepted after TITANPOST_RETENTION_DAYS, mail bodies after TITANPOST_MAIL_BODY_DAYS."
        "\n\nThe scheduler runs it every night. A purged game's mails stay in the outbox as "
        "rows, emptied, for the audit of what was sent."))
@click.option("--dry-run", is_flag=True, help=N_("List what would be purged; change nothing."))
@click.option("--now", "now_text", default=None, metavar="ISO-TIME",
              help=N_("Purge as of this time (default: now). A time without a zone is UTC."))
@click.option("--json", "as_json", is_flag=True, help=N_("Print it as JSON."))
@database_option
@one_line
def purge_command(dry_run: bool, now_text: str | None, as_json: bool,
                  database_url: str | None) -> None:
    now = read_now(now_text) or utcnow()
    service = open_service(database_url)
    with service.session(write=not dry_run) as s:
        report = find(s, service.settings, now) if dry_run else purge(s, service.settings, now)
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2))
        return
    _say(report, dry_run)


def _say(report: PurgeReport, dry_run: bool) -> None:
    if report.empty:
        click.echo(tr("Nothing to purge."))
        return
    click.echo(tr("Would be purged:") if dry_run else tr("Purged:"))
    click.echo(tr("games never started: {n}", n=len(report.games)))
    for game in report.games:
        click.echo("  " + tr("{id} “{name}” ({status}), nothing since {time}",
                             id=game["game"][:8], name=game["name"],
                             status=status_words(game["status"]),
                             time=game["since"][:16].replace("T", " ")))
    click.echo(tr("invitations never accepted: {n}", n=len(report.invitations)))
    for invitation in report.invitations:
        click.echo("  " + tr("{id}, seat {number}: made {time}", id=invitation["game"][:8],
                             number=invitation["seat"],
                             time=invitation["since"][:16].replace("T", " ")))
    click.echo(tr("mail bodies: {n}", n=report.mail_bodies))
