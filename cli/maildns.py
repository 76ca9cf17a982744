"""``titanpost mail dkim-key`` and ``titanpost mail dns``: the signing key of outgoing mail and
the DNS records its From domain needs (app/mail/signing.py, app/mail/dnsrecords.py)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from app.core.config import ConfigError, Settings
from cli.speech import N_, tr


def _settings() -> Settings:
    try:
        return Settings.from_env()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


@click.command("dkim-key", help=N_(
        "Make a DKIM key pair for signing outgoing mail: the private key in FILE, the DNS record "
        "to publish printed.\n"
        "\n"
        "RSA of 2048 bits, or Ed25519 with --ed25519 (a second key beside an RSA one). FILE is "
        "written readable by its owner alone and never overwritten."))
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--ed25519", "ed", is_flag=True, help=N_("An Ed25519 key instead of RSA."))
@click.option("--selector", default=None,
              help=N_("The key's selector (default: the one set in the settings)."))
def dkim_key(file: Path, ed: bool, selector: str | None) -> None:
    from app.mail.signing import ED25519, RSA, new_private_key, public_record, signing_domain

    settings = _settings()
    pem = new_private_key(ED25519 if ed else RSA)
    try:
        descriptor = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise click.ClickException(tr("{file} exists already: not overwritten",
                                      file=str(file))) from None
    except OSError as exc:
        raise click.ClickException(f"{file}: {exc.strerror or exc}") from None
    with os.fdopen(descriptor, "wb") as out:
        out.write(pem)
    chosen = selector or (settings.dkim_ed25519_selector if ed else settings.dkim_selector)
    variable = "TITANPOST_DKIM_ED25519_KEY_FILE" if ed else "TITANPOST_DKIM_KEY_FILE"
    click.echo(tr("Private key written to {file}. Set:", file=str(file)))
    click.echo(f"  {variable}={file.resolve()}")
    if selector:
        click.echo(f"  {'TITANPOST_DKIM_ED25519_SELECTOR' if ed else 'TITANPOST_DKIM_SELECTOR'}"
                   f"={selector}")
    click.echo(tr("and publish this TXT record:"))
    click.echo(f"  {chosen}._domainkey.{signing_domain(settings)}  TXT  "
               f"\"{public_record(pem)}\"")


@click.command("dns", help=N_(
        "Print the SPF, DKIM and DMARC records the From domain needs, and check those "
        "published.\n"
        "\n"
        "Where the machine cannot reach DNS (or with --no-check) the records are printed "
        "unchecked. Exits with 1 when a record is missing or does not match."))
@click.option("--check/--no-check", default=True, show_default=True,
              help=N_("Ask DNS for the published records."))
def dns(check: bool) -> None:
    from app.mail.dnsrecords import check as check_records
    from app.mail.dnsrecords import dns_lookup, needed_records

    settings = _settings()
    records = needed_records(settings)
    if not any(record.kind == "DKIM" for record in records):
        click.echo(tr("No DKIM key is set (TITANPOST_DKIM_KEY_FILE): mail goes unsigned; "
                      "make one with: titanpost mail dkim-key FILE"))
    checked = None
    if check:
        try:
            checked = check_records(records, dns_lookup())
        except LookupError as exc:
            click.echo(tr("DNS cannot be reached from here ({why}): the records are not "
                          "checked.", why=str(exc)))
    missing = 0
    for index, record in enumerate(records):
        state = ""
        if checked is not None:
            found = checked[index]
            state = tr("published") if found.ok else (
                tr("missing") if not found.found else tr("different: {found}",
                                                         found=" | ".join(found.found)))
            missing += 0 if found.ok else 1
        click.echo(f"{record.kind:6} {record.name}  TXT  \"{record.value}\""
                   + (f"\n       {state}" if state else ""))
    click.echo(tr("Replies and bounces come back to the mail domain {domain}: its MX must reach "
                  "the reply listener (titanpost mail listen) or the mailbox the IMAP poller "
                  "reads.", domain=settings.mail_domain))
    if missing:
        raise click.exceptions.Exit(1)
