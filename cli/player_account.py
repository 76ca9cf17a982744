"""The player's account on this computer and on the servers: ``login`` / ``logout`` (the seat
tokens kept by cli/client.py), ``settings`` (mail, language, quiet hours) and ``vacation``
(away dates)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from typing import Any, Final

import click
from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from app.core.i18n import LANGUAGES
from cli.client import (
    SERVER_ENV,
    TOKEN_ENV,
    Api,
    ClientError,
    Config,
    Seat,
    find_seat,
    normalise_server,
    seat_language,
    split_invitation,
)
from cli.completion import complete_game
from cli.player_shared import (
    emit_json,
    json_option,
    out,
    piece_text,
    seat_pieces,
    ui_named,
    ui_of,
    when_text,
)
from cli.player_state import fetch_state, situation
from cli.speech import N_, lang, speak, tr

# ---------------------------------------------------------------------- login / logout


@click.command("login", help=N_(
        "Log in to a game: URL is an invitation link (https://host/join/...), or the "
        "server's address with --token. Or sign in by mail: URL is your e-mail address, and "
        "you paste the link (or code) the server mails you; `titanpost games` then lists "
        "every game of that address. The server and the tokens are kept in a private (0600) "
        "file in your config folder (TITANPOST_CONFIG sets another). An accept whose answer "
        "is lost on the way is sent again with the same Idempotency-Key, which gets the same "
        "seat token."))
@click.argument("url", required=False, envvar=SERVER_ENV)
@click.option("--token", default=None, envvar=TOKEN_ENV,
              help=N_("An API token from joining on the web (asked for, hidden, when "
                      "missing). Default: $TITANPOST_TOKEN."))
@click.option("--name", default=None, help=N_("Your name in the game (with an invitation link)."))
@click.option("--server", default=None,
              help=N_("With an e-mail address: the server to sign in to (default: "
                      "$TITANPOST_SERVER, else the last server you logged in to)."))
def login(url: str | None, token: str | None, name: str | None, server: str | None) -> None:
    if not url:
        raise click.UsageError(tr("give an invitation link, the server's address (or set "
                                  "{variable}) or your e-mail address", variable=SERVER_ENV))
    config = Config.load()
    if "@" in url and "://" not in url:
        _login_by_mail(config, url.strip(), server)
        return
    invitation = split_invitation(url)
    if invitation is not None:
        server, invite_token = invitation
        # the seat's own randomness for the deal (see docs/fairness.md)
        body: dict[str, Any] = {"invite_token": invite_token,
                                "contribution": secrets.token_hex(32)}
        if name:
            body["name"] = name
        try:
            _, accepted = Api(server).post_safely("/invitations/accept", body)
        except ClientError as exc:
            if exc.status == 404:
                raise ClientError(tr("{problem}: if you joined already, log in with {command}",
                                     problem=exc.message,
                                     command=" ".join(("`titanpost login", server, "--token",
                                                       "<" + tr("API token") + ">`")))
                                  ) from None
            raise
        seat = Seat(server=server, game=str(accepted["game"]), token=str(accepted["api_token"]),
                    position=int(accepted["position"]), contribution=body["contribution"],
                    commitment=str(accepted.get("commitment") or ""))
        config.add(seat)  # the server shows this token once: keep it before anything else
        try:
            config.save()
        except ClientError as exc:
            raise ClientError(tr("{problem}; your seat's API token (shown once) is {token}: log "
                                 "in with it later (--token)", problem=exc.message,
                                 token=seat.token)) from None
    else:
        server = normalise_server(url)
        if not token:
            token = click.prompt(tr("API token"), hide_input=True).strip()
        try:
            seat = find_seat(server, token or "", where="")
        except ClientError as exc:
            if exc.status == 401:
                raise ClientError(tr("{server} refused this API token (unknown or revoked): "
                                     "check it, or log in with the game's invitation link",
                                     server=server)) from None
            raise
    state = fetch_state(seat)  # checks the token, and gives the game's name
    seat.name = str((state.get("game") or {}).get("name") or "")
    config.add(seat)
    config.save()
    console = out()
    speak(seat_language(seat))
    line = Text(tr("Logged in to {game} on {server} as seat {number}", game=seat.label,
                   server=seat.server, number=seat.position + 1))
    pieces = seat_pieces(state, seat.position)
    if pieces:
        ui = ui_of(state)
        line.append(" (").append_text(Text(", ").join(piece_text(ui, p) for p in pieces))
        line.append(")")
    console.print(line.append("."))
    console.print(situation(state))
    console.print(Text(tr("Token kept in {path}", path=config.path), style="dim"))


def _login_by_mail(config: Config, email: str, server: str | None) -> None:
    """Ask the server to mail a sign-in link to ``email``, read the pasted link or code, and
    keep the account token the server answers with (one per server)."""
    where = server or os.environ.get(SERVER_ENV, "").strip() or config.server
    if not where:
        raise click.UsageError(tr("say which server to sign in to: --server https://host (or "
                                  "set {variable})", variable=SERVER_ENV))
    host = normalise_server(where)
    _, asked = Api(host).post("/signin", {"email": email})
    click.echo(tr("{server}: {answer}.", server=host,
                  answer=asked.get("sent") or tr("a sign-in link is on its way")))
    pasted = click.prompt(tr("Sign-in link or code")).strip()
    _, used = Api(host).post("/signin/use", {"token": pasted})
    config.accounts[host] = {"email": str(used["email"]), "token": str(used["account_token"])}
    config.server = host
    config.save()
    click.echo(tr("Signed in as {email} on {server}: `titanpost games` lists every game of "
                  "this address.", email=used["email"], server=host))
    click.echo(click.style(tr("Token kept in {path}", path=config.path), dim=True))


@click.command("logout", help=N_(
        "Forget the token of GAME (or of every game) on this computer. The server still "
        "accepts the token: to stop it, the game's creator gives the seat to someone "
        "else. GAME may also be an e-mail address signed in by mail: it is signed out on the "
        "server too."))
@click.argument("game", required=False, shell_complete=complete_game)
@click.option("--all", "everything", is_flag=True,
              help=N_("Forget every game, and sign out every address signed in by mail."))
def logout(game: str | None, everything: bool) -> None:
    config = Config.load()
    if (game and "@" in game) or everything:
        _sign_out_accounts(config, None if everything else (game or "").strip().lower())
    if everything:
        gone = list(config.seats.values())
        config.seats.clear()
    elif game and "@" in game:
        config.save()
        return
    elif game:
        seat = config.find(game)
        if seat.from_env:
            raise ClientError(tr("{game} comes from {variable}: unset it instead",
                                 game=seat.label, variable=TOKEN_ENV))
        gone = [config.seats.pop(seat.game)]
    else:
        raise click.UsageError(tr("name the game to forget, or give --all"))
    config.save()
    for seat in gone:
        click.echo(tr("Forgot {game} on {server}.", game=seat.label, server=seat.server))



def _sign_out_accounts(config: Config, email: str | None) -> None:
    """Sign out the accounts of ``email`` (every account when None), on their servers too."""
    chosen = {server: account for server, account in config.accounts.items()
              if email is None or account["email"] == email}
    if email is not None and not chosen:
        raise ClientError(tr("{email} is not signed in here (titanpost login {email})",
                             email=email))
    for server, account in chosen.items():
        status, _ = Api(server, account["token"], who="the account token").call(
            "DELETE", "/account", allow=(401,))
        del config.accounts[server]
        click.echo(tr("Signed out {email} on {server} (the server had signed it out already).",
                      email=account["email"], server=server) if status == 401 else
                   tr("Signed out {email} on {server}.", email=account["email"], server=server))


# ---------------------------------------------------------------------- vacation


def _accounts(game: str | None) -> list[tuple[Seat, dict[str, Any]]]:
    """One seat per (server, address) with that address's away dates; just GAME's with it."""
    config = Config.load()
    seats = [config.find(game)] if game else config.all_seats()
    if not seats:
        config.find("")  # the "not logged in" error
    found: dict[tuple[str, str], tuple[Seat, dict[str, Any]]] = {}
    for seat in seats:
        _, body = seat.api().get("/away")
        key = (seat.server, str(body.get("email")))
        if key not in found:
            found[key] = (seat, body)
    return list(found.values())


def parse_when(text: str, *, end: bool = False) -> datetime:
    """``2026-07-01`` (the day's start, or the next day's start for ``end``),
    ``2026-07-01T08:00`` (your local time) or with an offset."""
    value = text.strip()
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            moment = datetime(day.year, day.month, day.day)
            if end:
                moment += timedelta(days=1)
        else:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(tr("'{text}' is not a date ({date}) or a time ({time}, or with "
                                    "an offset)", text=text, date="2026-07-01",
                                    time="2026-07-01T08:00")) from None
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return moment


@click.group("vacation", invoke_without_command=True, help=N_(
        "Your away dates: deadlines stretch over them, or the computer plays for you "
        "meanwhile. Without a subcommand: the list."))
@click.pass_context
def vacation(ctx: click.Context) -> None:
    if ctx.invoked_subcommand is None:
        ctx.invoke(vacation_list)


@vacation.command("list", help=N_(
        "Your away dates (for every game of your address)."))
@click.option("--game", default=None, shell_complete=complete_game,
              help=N_("Only the address of this game's seat."))
@json_option
def vacation_list(game: str | None = None, as_json: bool = False) -> None:
    accounts = _accounts(game)
    if as_json:
        emit_json({"accounts": [{"server": seat.server, **body} for seat, body in accounts]})
        return
    console = out()
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in (N_("Id"), N_("From"), N_("Until"), N_("Mode"), N_("Address")):
        table.add_column(column)
    count = 0
    for seat, body in accounts:
        for absence in body.get("absences") or []:
            count += 1
            table.add_row(str(absence.get("id")), when_text(absence.get("from"), relative=False),
                          when_text(absence.get("until"), relative=False),
                          tr(MODE_WORDS.get(str(absence.get("mode")), str(absence.get("mode")))),
                          escape(tr("{address} on {server}", address=body.get("email"),
                                    server=seat.server)))
    if count:
        console.print(table)
    else:
        console.print(tr("No away dates. Add some: {command}",
                         command="titanpost vacation add --from 2026-07-01 --until 2026-07-14"))


@vacation.command("add", help=N_(
        "Add away dates; the other players are told."))
@click.option("--from", "starts", required=True, help=N_("First day (2026-07-01) or a time."))
@click.option("--until", required=True, help=N_("Last day (2026-07-14, included) or a time."))
@click.option("--mode", type=click.Choice(["stretch", "computer"]), default="stretch",
              show_default=True,
              help=N_("stretch: your deadlines stretch over the absence; computer: the computer "
                   "plays for you meanwhile."))
@click.option("--game", default=None, shell_complete=complete_game,
              help=N_("Only the address of this game's seat (default: every address you use)."))
def vacation_add(starts: str, until: str, mode: str, game: str | None) -> None:
    begin, end = parse_when(starts), parse_when(until, end=True)
    if end <= begin:
        raise click.UsageError(tr("--until must be after --from"))
    for seat, body in _accounts(game):
        _, added = seat.api().post("/away", {"from": begin.isoformat(), "until": end.isoformat(),
                                             "mode": mode})
        what = (tr("your deadlines stretch over it") if mode == "stretch"
                else tr("the computer plays for you meanwhile"))
        click.echo(tr("Away {start} to {end} (id {id}, {address}): {what}.",
                      start=when_text(added.get("from"), relative=False),
                      end=when_text(added.get("until"), relative=False), id=added.get("id"),
                      address=body.get("email"), what=what))


@vacation.command("cancel", help=N_(
        "Cancel the away dates ID (see `titanpost vacation list`)."))
@click.argument("absence_id", metavar="ID", type=int)
@click.option("--game", default=None, shell_complete=complete_game,
              help=N_("The address of this game's seat (when several have an ID)."))
def vacation_cancel(absence_id: int, game: str | None) -> None:
    owners = [(seat, body) for seat, body in _accounts(game)
              if any(a.get("id") == absence_id for a in body.get("absences") or [])]
    if not owners:
        raise ClientError(tr("you have no away dates {id}: {command} shows yours",
                             id=absence_id, command="`titanpost vacation list`"))
    if len(owners) > 1:
        raise ClientError(tr("several of your addresses have away dates {id}: say which with "
                             "--game", id=absence_id))
    seat, body = owners[0]
    seat.api().delete(f"/away/{absence_id}")
    click.echo(tr("Cancelled away dates {id} ({address}).", id=absence_id,
                  address=body.get("email")))


# ---------------------------------------------------------------------- settings


def _only_seat(game: str | None) -> Seat:
    """GAME's seat; without GAME, the one game you are logged in to."""
    config = Config.load()
    if game:
        return config.find(game)
    seats = config.all_seats()
    if len(seats) == 1:
        return seats[0]
    if not seats:
        config.find("")  # the "not logged in" error
    raise click.UsageError(tr("you play several games: name one ({command})",
                              command="titanpost settings GAME ..."))


@click.command("settings", help=N_(
        "Your own settings of GAME (mail, language, quiet hours, your standing answer to "
        "windows): changes those given, then prints the settings now in force. GAME may be "
        "left out when you play one game."))
@click.argument("game", required=False, shell_complete=complete_game)
@click.option("--mail", type=click.Choice(["every", "digest", "none"]), default=None,
              help=N_("every: every mail; digest: one mail a day instead of each decision's; "
                   "none: only the game's result and a handover notice."))
@click.option("--language", type=click.Choice(LANGUAGES), default=None,
              help=N_("The language of your mail and pages."))
@click.option("--quiet", default=None, metavar="HOURS",
              help=N_("Quiet hours such as 22-7 or 22:00-07:30 (no deadline ends and no reminder "
                   "comes in them); none (as printed) or '' clears them."))
@click.option("--zone", default=None, metavar="ZONE",
              help=N_("Your time zone (Europe/Warsaw) for the quiet hours; '' means UTC."))
@click.option("--reactions", default=None, metavar="CHOICE",
              help=N_("How your windows (the decisions out of your turn, such as a reaction) "
                   "are answered, seen by you alone: ask (the default), never, or a card to "
                   "play whenever it fits, by the game's name for it (a name it does not know "
                   "is refused with the list). Not changed by --everywhere."))
@click.option("--everywhere", is_flag=True,
              help=N_("Set them in every unfinished game of your address on that server."))
@click.option("--test-mail", is_flag=True,
              help=N_("Ask for a test mail: mail to your address is tried again (also after "
                      "it bounced), one test mail every ten minutes."))
@json_option
def settings(game: str | None, mail: str | None, language: str | None, quiet: str | None,
             zone: str | None, reactions: str | None, everywhere: bool, test_mail: bool,
             as_json: bool) -> None:
    seat = _only_seat(game)
    if quiet is not None and quiet.strip().lower() == "none":
        quiet = ""  # what the settings print for no quiet hours
    change = {key: value for key, value in (("mail", mail), ("language", language),
                                            ("quiet", quiet), ("timezone", zone),
                                            ("reactions", reactions))
              if value is not None}
    path = f"/games/{seat.game}/me/settings"
    if change:
        _, now = seat.api().post(path, change | {"everywhere": everywhere})
    elif everywhere:
        raise click.UsageError(tr("--everywhere sets what you give: add --mail, --language, "
                                  "--quiet or --zone"))
    else:
        _, now = seat.api().get(path)
    mail_path = f"/games/{seat.game}/me/mail"
    _, address = (seat.api().post(mail_path + "/test", {}) if test_mail
                  else seat.api().get(mail_path))
    if as_json:
        emit_json(now | {"address": address})
        return
    speak(str(now.get("language") or "") or None)
    _print_settings(seat, now, everywhere=everywhere and bool(change))
    _print_address(address, asked=test_mail)


def _when(stamp: Any) -> str:
    return str(stamp)[:16].replace("T", " ") + " UTC"


def _print_address(state: Mapping[str, Any], *, asked: bool) -> None:
    """The state of the seat's address (app/features/delivery/table.py), after the settings."""
    console = out()
    address = escape(str(state.get("address")))
    if state.get("undeliverable_since"):
        console.print("[bold red]" + escape(tr(
            "Mail to {address} bounced on {date}: {reason}. We stopped mailing you.",
            address=state.get("address"), date=_when(state["undeliverable_since"]),
            reason=state.get("bounce_reason") or tr("no reason given"))) + "[/]")
        console.print(tr("Ask for a test mail once it is fixed: {command}",
                         command="titanpost settings --test-mail"))
    console.print(tr("Your address: {address}", address=address))
    delivered = state.get("last_delivered_at")
    console.print("  " + tr("last mail taken by the relay: {time}",
                            time=_when(delivered) if delivered else tr("none yet")))
    if state.get("last_bounce_at"):
        console.print("  " + escape(tr("last bounce: {time}: {reason}",
                                       time=_when(state["last_bounce_at"]),
                                       reason=state.get("bounce_reason") or "?")))
    if asked:
        console.print(tr("A test mail is on its way to {address}. Mail to your address is tried "
                         "again.", address=address))


MAIL_WORDS: Final = {
    "every": N_("every mail"),
    "digest": N_("a daily digest instead of a mail per decision"),
    "none": N_("none (only the game's result and a handover notice)"),
}
MODE_WORDS: Final = {
    "stretch": N_("deadlines stretch"),
    "computer": N_("the computer plays"),
}
"""The two kinds of away dates, in words."""


def _language_words(code: Any) -> str:
    """A seat's language by its own name ("polski"), not its code."""
    from app.core.i18n import language_name

    return language_name(str(code)) if code else "?"


def _print_settings(seat: Seat, now: Mapping[str, Any], *, everywhere: bool) -> None:
    console = out()
    where = tr("all your unfinished games") if everywhere else escape(seat.label)
    console.print(tr("Your settings in {where}:", where=where))
    quiet = now.get("quiet")
    zone = now.get("timezone") or "UTC"
    mail = str(now.get("mail"))
    rows = [(tr("mail:"), tr(MAIL_WORDS[mail]) if mail in MAIL_WORDS else mail),
            (tr("language:"), _language_words(now.get("language"))),
            (tr("quiet hours:"), f"{quiet} ({zone})" if quiet
             else tr("none (time zone {zone})", zone=zone))]
    if now.get("reactions"):
        words = ui_named(now.get("ruleset")).standing_choice(str(now["reactions"]), lang())
        rows.append((tr("windows:"), words))
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        console.print(f"  {label:<{width}} {value}")
