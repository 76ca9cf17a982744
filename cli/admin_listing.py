"""``titanpost admin games``: the games in the database listed, each with its status,
variant, players, log length, whose turn it is and why it is paused (the shared pieces are in
cli/admin.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

import click
from sqlalchemy import func
from sqlmodel import col, select

from app.core.models import ACTIVE, GAME_STATUSES, Game, Move, Seat
from app.games import ruleset
from app.games.apiwords import OLDER_PIECES
from app.games.base import BOT_LEVEL_WORDS, EASY
from app.games.ui import DEFAULT_GAME, game_ui, winners_named
from app.service import GameService
from cli.admin import database_option, one_line, open_service, status_words
from cli.speech import N_, lang, pause_words, tr


def _game_list(service: GameService, statuses: Sequence[str]) -> list[dict[str, Any]]:
    head = (select(func.coalesce(func.max(Move.seq), 0)).where(Move.game_id == Game.id)
            .correlate(Game).scalar_subquery())
    query = select(Game, head).order_by(col(Game.created_at), col(Game.id))
    if statuses:
        query = query.where(col(Game.status).in_(list(statuses)))
    result = []
    with service.session() as s:
        rows = s.exec(query).all()
        ids = [game.id for game, _ in rows]
        seats: dict[int, list[Seat]] = {}
        for seat in s.exec(select(Seat).where(col(Seat.game_id).in_(ids))
                           .order_by(col(Seat.game_id), col(Seat.position))).all():
            seats.setdefault(seat.game_id, []).append(seat)
        for game, seq in rows:
            assert game.id is not None
            mine = seats.get(game.id, [])
            to_act: list[int] = []
            decision = None
            if game.status == ACTIVE:
                loaded = service.load(s, game.uid)
                if loaded.state is not None:
                    to_act = loaded.to_act()
                    pending = loaded.rules.pending(loaded.state) or {}
                    ui = game_ui(game.ruleset)
                    decision = {"kind": pending.get("kind"), **ui.pending_for(ui.decider(pending)),
                                "words": ui.describe_decision(pending, lang())}
            result.append({
                "game": game.uid,
                "name": game.name,
                "status": game.status,
                "ruleset": game.ruleset,
                "variant": game.variant,
                "players": [
                    {"position": seat.position, "name": seat.player_name, "email": seat.email,
                     "bot": seat.is_bot, "level": seat.bot_level if seat.is_bot else None,
                     "accepted": seat.accepted_at is not None,
                     OLDER_PIECES: ruleset(game.ruleset).piece_names(seat.pieces)}
                    for seat in mine
                ],
                "seq": int(seq),
                "to_act": to_act,
                "decision": decision,
                "paused": game.paused_at is not None,
                "pause_reason": game.pause_reason,
                "winner": game.winner,
                "created": game.created_at.strftime("%Y-%m-%d %H:%M"),
            })
    return result


def _player_words(player: dict[str, Any]) -> str:
    level = player.get("level") or EASY
    if player["bot"] and not player["email"]:
        return tr("computer ({level})", level=tr(BOT_LEVEL_WORDS[level]))
    who = player["name"] or player["email"]
    if player["bot"]:
        return tr("{name} (computer, {level})", name=who, level=tr(BOT_LEVEL_WORDS[level]))
    return who if player["accepted"] else tr("{name} (invited)", name=who)


@click.command("games", help=N_(
        "List the games: id, name, status, variant, players, log length, whose turn, "
        "paused."))
@click.option("--status", "statuses", type=click.Choice(GAME_STATUSES), multiple=True,
              help=N_("Only games of this status (repeatable)."))
@click.option("--json", "as_json", is_flag=True, help=N_("Print the list as JSON."))
@database_option
@one_line
def games(statuses: tuple[str, ...], as_json: bool, database_url: str | None) -> None:
    listed = _game_list(open_service(database_url), statuses)
    if as_json:
        click.echo(json.dumps(listed, indent=2))
        return
    if not listed:
        click.echo(tr("no games") + (" (" + ", ".join(status_words(s) for s in statuses) + ")"
                                     if statuses else ""))
        return
    for game in listed:
        _print_game(game)


GAME_FIELDS: Final = (N_("name"), N_("players"), N_("turn"), N_("paused"), N_("winner"),
                      N_("created"))
"""The lines of a game in ``admin games``: each field's name."""


def _print_game(game: dict[str, Any]) -> None:
    """One game of ``admin games``: its head line, then a line per field it has."""
    ui = game_ui(game["ruleset"])
    players = {p["position"]: p for p in game["players"]}
    kind = "" if game["ruleset"] == DEFAULT_GAME else f"{ui.title}  "
    head = (f"{game['game']}  {status_words(game['status'])}  {kind}{game['variant']}  "
            + tr("seq {number}", number=game["seq"]))
    click.echo(click.style(head, bold=True) + ("  " + tr("paused") if game["paused"] else ""))
    fields: dict[str, str] = {}
    if game["name"]:
        fields["name"] = game["name"]
    fields["players"] = ", ".join(f"{p['position'] + 1} {_player_words(p)}"
                                  for p in game["players"])
    if game["decision"] is not None and game["to_act"]:
        who = ", ".join(tr("seat {number}", number=p + 1)
                        + (f" {_player_words(players[p])}" if p in players else "")
                        for p in game["to_act"])
        fields["turn"] = f"{game['decision']['words'].rstrip('.')}: {who}"
    if game["paused"]:
        fields["paused"] = pause_words(game["pause_reason"],
                                       {p: str(s["name"]) for p, s in players.items()})
    if game["winner"]:
        fields["winner"] = winners_named(ui, game["winner"], lang())
    fields["created"] = game["created"]
    width = max(len(tr(field)) for field in GAME_FIELDS)
    for field, value in fields.items():
        click.echo(f"  {tr(field):<{width}}  {value}")
