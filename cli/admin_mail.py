"""``titanpost admin mail-status``: what became of the server's mail (see
app/features/delivery/standing.py): how many addresses are undeliverable, mails bounced and mails
whose hand-over to the relay was not confirmed, and every undeliverable address with since when
and why."""

from __future__ import annotations

import json
from typing import Any

import click
from sqlmodel import col, select

from app.core.models import MailAddress
from app.features.clock.keeperbase import iso_or_none
from app.features.delivery.standing import mail_counts
from app.mail.send import UNCONFIRMED
from cli.admin import database_option, one_line, open_service
from cli.speech import N_, tr


def mail_status(database_url: str | None) -> dict[str, Any]:
    """The counts and the undeliverable addresses, oldest first."""
    service = open_service(database_url)
    with service.session() as s:
        counts = mail_counts(s, UNCONFIRMED)
        rows = s.exec(select(MailAddress)
                      .where(col(MailAddress.undeliverable_since).is_not(None))
                      .order_by(col(MailAddress.undeliverable_since),
                                col(MailAddress.address))).all()
        return {
            "undeliverable_addresses": counts.undeliverable_addresses,
            "bounced_mails": counts.bounced_mails,
            "unconfirmed_mails": counts.unconfirmed_mails,
            "undeliverable": [{"address": row.address,
                               "since": iso_or_none(row.undeliverable_since),
                               "reason": row.bounce_reason,
                               "bounces": row.bounces} for row in rows],
        }


@click.command("mail-status", help=N_(
        "Count the undeliverable addresses, the bounced mails and the mails whose hand-over "
        "to the relay was not confirmed; list each undeliverable address with since when and "
        "why."))
@click.option("--json", "as_json", is_flag=True, help=N_("Print it as JSON."))
@database_option
@one_line
def mail_status_command(as_json: bool, database_url: str | None) -> None:
    status = mail_status(database_url)
    if as_json:
        click.echo(json.dumps(status, indent=2))
        return
    click.echo(tr("undeliverable addresses: {n}", n=status["undeliverable_addresses"]))
    click.echo(tr("bounced mails: {n}", n=status["bounced_mails"]))
    click.echo(tr("unconfirmed mails: {n}", n=status["unconfirmed_mails"]))
    for row in status["undeliverable"]:
        since = str(row["since"] or "?")[:16].replace("T", " ")
        reason = row["reason"] or tr("no reason given")
        click.echo(f"  {row['address']}  " + tr("since {time} UTC: {reason}", time=since,
                                                   reason=reason))
