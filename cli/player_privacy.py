"""A signed-in address's own data and leaving, through the server's API with the account token
of ``titanpost login EMAIL``: ``titanpost my-data [--zip] [-o FILE]`` downloads everything the
server holds about the address; ``titanpost forget-me`` asks the server to forget it
(app/features/privacy/)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cli.client import Api, ClientError, Config
from cli.player_shared import emit_json, json_option
from cli.speech import N_, tr


def _account(config: Config, email: str | None) -> tuple[str, dict[str, str]]:
    """(server, account) of the address signed in by mail (``email`` when several are)."""
    chosen = {server: account for server, account in config.accounts.items()
              if email is None or account["email"] == email.strip().lower()}
    if not chosen:
        raise ClientError(tr("no address is signed in here by mail: run {command} first",
                             command="`titanpost login EMAIL`") if email is None else
                          tr("{email} is not signed in here (titanpost login {email})",
                             email=email))
    if len(chosen) > 1:
        raise ClientError(tr("several addresses are signed in here: say which with --email "
                             "({addresses})", addresses=", ".join(
                                 a["email"] for a in chosen.values())))
    return next(iter(chosen.items()))


EMAIL_OPTION = click.option("--email", default=None, help=N_(
    "The address signed in by mail to use, when several are (titanpost login EMAIL)."))


@click.command("my-data", help=N_(
        "Download everything the server holds about the address you signed in with by mail: "
        "your seats and settings, each game and its log as your seat sees it, your notes, the "
        "mails sent to you, your sign-ins. As one JSON file, or with --zip a ZIP with one file "
        "per game and a README."))
@click.option("--zip", "as_zip", is_flag=True, help=N_("A ZIP file instead of one JSON file."))
@click.option("-o", "--output", default=None, metavar="FILE",
              help=N_("Where to write it (default: the name the server gives, in this folder; "
                      "- writes to the standard output)."))
@EMAIL_OPTION
def my_data(as_zip: bool, output: str | None, email: str | None) -> None:
    server, account = _account(Config.load(), email)
    api = Api(server, account["token"], who=tr("the account token"))
    response = api.download(f"/account/data?format={'zip' if as_zip else 'json'}")
    if output == "-":
        sys.stdout.buffer.write(response.content)
        sys.stdout.flush()
        return
    given = response.headers.get("Content-Disposition", "").partition('filename="')[2]
    path = Path(output or given.rstrip('"') or ("titanpost-data." + ("zip" if as_zip
                                                                     else "json")))
    try:
        path.write_bytes(response.content)
    except OSError as exc:
        raise ClientError(tr("cannot write {path}: {problem}", path=path,
                             problem=exc.strerror)) from None
    click.echo(tr("Your data on {server} ({email}) is in {path}.", server=server,
                  email=account["email"], path=path))


@click.command("forget-me", help=N_(
        "Ask the server to forget the address you signed in with by mail: its seats lose the "
        "address and are named \"a former player\", and your settings, notes, away dates, "
        "sign-ins and tokens are deleted; the games stay for the other players. Refused while "
        "you hold a seat in a game that is not over: resign first. Asks you to type the "
        "address unless --yes."))
@click.option("--yes", is_flag=True, help=N_("Do not ask to type the address."))
@EMAIL_OPTION
@json_option
def forget_me(yes: bool, email: str | None, as_json: bool) -> None:
    config = Config.load()
    server, account = _account(config, email)
    address = account["email"]
    typed = address if yes else click.prompt(
        tr("Forgetting cannot be undone. Type your address ({email}) to confirm",
           email=address), default="", show_default=False)
    api = Api(server, account["token"], who=tr("the account token"))
    _, done = api.post("/account/forget", {"confirm": typed})
    del config.accounts[server]
    kept = {str(game.get("game")) for game in done.get("games_kept") or []}
    for uid in [uid for uid, seat in config.seats.items()
                if seat.server == server and uid in kept]:
        del config.seats[uid]  # (its token was deleted with the address)
    config.save()
    if as_json:
        emit_json(done)
        return
    click.echo(tr("{email} is forgotten on {server}: its seats, settings, notes, away dates, "
                  "sign-ins and tokens are gone.", email=address, server=server))
    if kept:
        click.echo(tr("The games stay for the other players, your seats named \"a former "
                      "player\": {count}.", count=len(kept)))
