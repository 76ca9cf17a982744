"""``titanpost standings``: who is ahead among the players you play with, per game and season,
through a server's API (``GET /api/standings``, app/features/standings/api.py).

The standings are an address's, not a seat's: the command uses the account token that
``titanpost login EMAIL`` keeps for each server it signed in to by mail (a seat's token
cannot ask for them). ``--group NAME`` names one of the address's groups (made on the page
/standings or with ``POST /api/groups``), found by name in ``GET /api/groups``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import click
from babel.numbers import format_decimal
from rich import box
from rich.markup import escape
from rich.table import Table

from app.games import GAMES
from app.games.base import BOT_LEVEL_WORDS
from cli.client import Api, ClientError, Config
from cli.player_shared import emit_json, json_option, out
from cli.speech import N_, lang, tr


def _decimal(value: Any, places: int = 2) -> str:
    if value is None:
        return "-"
    return format_decimal(float(value), format="0." + "0" * places, locale=lang())


def _accounts() -> list[tuple[str, dict[str, str]]]:
    accounts = sorted(Config.load().accounts.items())
    if not accounts:
        raise ClientError(tr("the standings are those of an address: sign in by mail first "
                             "({command})", command="titanpost login EMAIL --server URL"))
    return accounts


def _group_id(api: Api, name: str) -> str:
    _, listed = api.get("/groups")
    wanted = name.strip().casefold()
    for found in listed.get("groups") or []:
        if str(found.get("name", "")).casefold() == wanted:
            return str(found["group"])
    raise ClientError(tr("you have no group named {name} on {server}", name=name,
                         server=api.server))


def _rating(line: dict[str, Any]) -> str:
    rating = line.get("rating")
    if not rating:
        return "-"
    return (f"{_decimal(rating['ordinal'], 1)} "
            f"({_decimal(rating['mu'], 1)} ± {_decimal(rating['sigma'], 1)})")


def _print(server: str, email: str, found: dict[str, Any]) -> None:
    console = out()
    title = GAMES[found["game"]].title if found["game"] in GAMES else found["game"]
    where = (tr("group {name}", name=found["name"]) if found.get("group")
             else tr("the players of your games"))
    season = (tr("from {start} to {end}", start=found.get("from") or "…",
                 end=found.get("to") or "…") if found.get("from") or found.get("to")
              else tr("all time"))
    console.print(escape(tr("{game}, {where}, {season} ({email} on {server}); finished "
                            "games: {count}.", game=title, where=where, season=season,
                            email=email, server=server, count=found["finished_games"])))
    if not found["finished_games"]:
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in (N_("Player"), N_("Games"), N_("Wins"), N_("Average place"),
                   N_("Rating (mu ± sigma)")):
        table.add_column(tr(column))
    rows = [(str(line["name"]) + (" " + tr("(you)") if line.get("you") else ""), line)
            for line in found["players"]]
    rows += [(tr("the computer ({level})", level=tr(BOT_LEVEL_WORDS.get(line["level"],
                                                                        line["level"]))), line)
             for line in found["computers"]]
    if found.get("former"):
        rows.append((tr("a former player"), found["former"]))
    for name, line in rows:
        table.add_row(escape(name), str(line["games"]), str(line["wins"]),
                      _decimal(line["average_place"]), _rating(line))
    console.print(table)


@click.command("standings", help=N_(
        "Who is ahead among the players you play with, per game and season: games, wins, "
        "average place and rating. The rating is openskill's Weng-Lin model, shown as mu - 3 "
        "sigma with mu ± sigma; the computer is listed apart, one line per level. Needs an "
        "address signed in by mail (titanpost login EMAIL): the finished games it played, or "
        "those of one of its groups (--group)."))
@click.option("--game", type=click.Choice(list(GAMES)), default=None,
              help=N_("The game (default: the first)."))
@click.option("--from", "start", default=None, metavar="DATE",
              help=N_("The season's first day (2026-09-01)."))
@click.option("--to", "end", default=None, metavar="DATE",
              help=N_("The season's last day (included)."))
@click.option("--group", default=None, metavar="NAME",
              help=N_("One of your groups, by its name."))
@json_option
def standings(game: str | None, start: str | None, end: str | None, group: str | None,
              as_json: bool) -> None:
    answers = []
    for server, account in _accounts():
        api = Api(server, account["token"], who="the account token")
        query = {"game": game or "", "from": start or "", "to": end or "",
                 "group": _group_id(api, group) if group else ""}
        _, found = api.get("/standings?" + urlencode({k: v for k, v in query.items() if v}))
        answers.append((server, account["email"], found))
    if as_json:
        emit_json({"standings": [{"server": server, "email": email, **found}
                                 for server, email, found in answers]})
        return
    for server, email, found in answers:
        _print(server, email, found)
