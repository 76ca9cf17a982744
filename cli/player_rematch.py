"""``titanpost rematch GAME``: the next game at the same table, once GAME is over.

The server makes one rematch per finished game (app/features/rematch/rematches.py), each seat kept
for its own player, and starts it by itself once every player has said yes. The first player to
ask makes it (their yes is implied) and takes their own seat at once: the command keeps the new
seat's token, as ``titanpost login`` does, then gives the seat's share of the deal (drawn here,
after the server showed the game's commitment). Every other player is asked by mail; the same
command says their yes, taking their own seat the same way: proved by GAME's seat token, or by the
address signed in by mail (``titanpost login EMAIL``). ``--no`` declines. Nobody is given another
player's seat."""

from __future__ import annotations

import secrets
from typing import Any

import click
from rich.markup import escape

from cli.client import Api, ClientError, Config, Seat, match_games, seat_language
from cli.player_shared import emit_json, game_argument, json_option, out
from cli.speech import N_, speak, tr

REFUSED_JOIN = (403, 404, 409)
"""The refusals of a join that leave the rematch as it is (no seat waits for you in it)."""


@click.command("rematch", help=N_(
        "Play GAME (over) again, or say yes (or --no) to the rematch asked: the same players "
        "in the same seats and settings. The first to ask makes the rematch and takes their "
        "seat at once; every other player is asked by mail and says yes with this command (or "
        "no, with --no). It starts by itself once every player has said yes. The new seat's "
        "token is kept as `titanpost login` keeps it. GAME is a game you are logged in to, or "
        "a game of the address you signed in with by mail (titanpost login EMAIL)."))
@game_argument
@click.option("--no", "decline", is_flag=True, help=N_("Decline the rematch."))
@json_option
def rematch(game: str, decline: bool, as_json: bool) -> None:
    config = Config.load()
    if not match_games(config.all_seats(), game) and config.accounts:
        _join_as_account(config, game, as_json, decline)
        return
    seat = config.find(game)
    speak(seat_language(seat))
    if decline:
        _, said = seat.api().post_safely(f"/games/{seat.game}/rematch/decline", {})
        _declined(said, as_json)
        return
    _, made = seat.api().post_safely(f"/games/{seat.game}/rematch", {})
    if made.get("made"):
        _made(config, seat, made, as_json)
        return
    joined = _join(seat.api(), f"/games/{seat.game}/rematch/join")
    if joined is not None:
        _keep(config, seat.server, joined, seat.name)
    _tell(seat.server, seat.label, made, joined, as_json)


def _made(config: Config, seat: Seat, made: dict[str, Any], as_json: bool) -> None:
    """Keep the maker's seat of the new game, give its share of the deal, and say so."""
    mine = _keep(config, seat.server, made, seat.name)
    contribution = secrets.token_hex(32)  # drawn once the commitment is known (in ``made``)
    _, given = mine.api().post_safely(f"/games/{mine.game}/contribution",
                                      {"contribution": contribution})
    mine.contribution = contribution
    config.add(mine)
    config.save()
    started = bool(given.get("started"))
    if as_json:
        emit_json({**_shown(made), "started": started})
        return
    page = f"{seat.server.rstrip('/')}/games/{mine.game}"
    console = out()
    console.print(tr("Rematch of {game} made: {page}", game=escape(seat.label), page=page))
    console.print(tr("You have your seat in it (seat {number}).", number=mine.position + 1))
    if started:
        console.print(tr("Everyone has said yes: the rematch has started."))
    else:
        console.print(tr("The other players are asked by mail; it starts by itself once every "
                         "player has said yes."))


def _declined(said: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(said)
        return
    out().print(tr("You have declined the rematch: the others may play it with the computer "
                   "in your seat, or cancel it."))


def _join(api: Api, path: str) -> dict[str, Any] | None:
    """Take this player's seat of the rematch (``path``: the join of the seat or of the
    account), with a share of the deal drawn here; None when no seat waits for them."""
    try:
        return _joined(api, path)
    except ClientError as exc:
        if exc.status in REFUSED_JOIN:
            return None
        raise


def _joined(api: Api, path: str) -> dict[str, Any]:
    """The seat the join ``path`` takes, with the share of the deal drawn here for it (kept
    with the seat, for ``titanpost verify-fair``)."""
    contribution = secrets.token_hex(32)
    _, joined = api.post_safely(path, {"contribution": contribution})
    return {**joined, "contribution": contribution}


def _keep(config: Config, server: str, taken: dict[str, Any], name: str) -> Seat:
    """Keep the seat the server gave (its token is shown once: kept before anything else)."""
    seat = Seat(server=server, game=str(taken["game"]), token=str(taken["api_token"]),
                position=int(taken["position"]), name=name,
                contribution=str(taken.get("contribution") or ""),
                commitment=str(taken.get("commitment") or ""))
    config.add(seat)
    try:
        config.save()
    except ClientError as exc:
        raise ClientError(tr("{problem}; your seat's API token (shown once) is {token}: log "
                             "in with it later (--token)", problem=exc.message,
                             token=seat.token)) from None
    return seat


def _tell(server: str, label: str, made: dict[str, Any], joined: dict[str, Any] | None,
          as_json: bool) -> None:
    """Say which rematch was made before, and whether this player took their seat in it."""
    if as_json:
        emit_json(made if joined is None else {**made, "joined": _shown(joined)})
        return
    page = f"{server.rstrip('/')}/games/{made['game']}"
    console = out()
    if joined is None:
        console.print(tr("The rematch of {game} was made already: {page}", game=escape(label),
                         page=page))
        return
    console.print(tr("You have taken your seat in the rematch of {game} (seat {number}): "
                     "{page}", game=escape(label), number=int(joined["position"]) + 1,
                     page=page))
    if joined.get("started"):
        console.print(tr("Everyone has said yes: the rematch has started."))
    else:
        console.print(tr("You have said yes: the rematch starts once every player has."))


def _shown(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer as ``--json`` prints it: the seat's API token is kept, not printed."""
    return {key: value for key, value in answer.items()
            if key not in ("api_token", "contribution")}


def _join_as_account(config: Config, text: str, as_json: bool, decline: bool = False) -> None:
    """Take the seat of the rematch of the game ``text`` names among the games of the
    addresses signed in by mail (a refusal says why: no rematch yet, your seat taken)."""
    found: list[tuple[Api, Seat]] = []
    for server, account in sorted(config.accounts.items()):
        api = Api(server, account["token"], who="the account token")
        _, body = api.get("/account/games")
        seats = [Seat(server=server, game=str(row.get("game")), token="",
                      position=int(row.get("position") or 0), name=str(row.get("name") or ""))
                 for row in body.get("games") or [] if isinstance(row, dict)]
        found += [(api, seat) for seat in match_games(seats, text)]
    if not found:
        raise ClientError(tr("no game of yours matches '{text}' (yours: {known})", text=text,
                             known=", ".join(seat.short for seat in config.all_seats())
                             or "-"))
    if len(found) > 1:
        raise ClientError(tr("'{text}' matches several games ({games}): give more of the id",
                             text=text, games=", ".join(seat.label for _, seat in found)))
    api, old = found[0]
    if decline:
        _, said = api.post_safely(f"/account/games/{old.game}/rematch/decline", {})
        _declined(said, as_json)
        return
    joined = _joined(api, f"/account/games/{old.game}/rematch/join")
    speak(seat_language(_keep(config, old.server, joined, old.name)))
    _tell(old.server, old.label, {"game": joined["game"], "rematch_of": old.game,
                                  "made": False}, joined, as_json)
