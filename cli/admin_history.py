"""``titanpost admin replay`` and ``admin verify``: a game's log walked step by step, and every
game checked against its log, hash chain and snapshots (the shared pieces are in cli/admin.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from app.core.models import (
    MOVE,
    ROLLBACK,
    Game,
    Seat,
)
from app.games import piece_names
from app.games.ui import GameUI, game_ui
from cli.admin import (
    database_option,
    fail,
    fail_with,
    find_game_id,
    game_row,
    game_uids,
    one_line,
    open_service,
    track,
)
from cli.speech import N_, lang, tr, tr_plural

ACTOR_WORDS = {
    "player": N_("the player"),
    "computer": N_("the computer (a computer seat)"),
    "timeout": N_("the computer, on a missed deadline"),
    "away": N_("the computer, for a player away"),
    "owner": N_("the game's owner"),
    "admin": N_("an admin"),
    "clock": N_("the clock"),
}
KIND_WORDS = {
    "move": N_("move"),
    "resign": N_("resignation"),
    "handover": N_("handover"),
    "pause": N_("pause"),
    "resume": N_("resumption"),
    "rollback": N_("rollback"),
    "abandon": N_("abandonment"),
}
"""The kinds of log entries, in words."""
"""Who made a log entry (its ``actor``), in words."""


# ---------------------------------------------------------------------- replay


@dataclass
class _Facts:
    """What the replay shows about a game beside its views."""

    game: Game
    seats: dict[int, Seat]
    ui: GameUI
    boards: Any
    """The game's boards as its UI resolved them."""

    @property
    def label(self) -> str:
        return self.game.name or tr("game {id}", id=self.game.uid[:8])


def _entry_lines(facts: _Facts, entry: dict[str, Any] | None, last: int) -> list[str]:
    if entry is None:
        return [tr("{game}: the start (entry 0 of {last}), before any move", game=facts.label,
                   last=last)]
    seat = facts.seats.get(entry["seat"]) if entry["seat"] is not None else None
    if seat is not None:
        who = seat.player_name or seat.email or "?"
        names = [facts.ui.piece_name(name, lang())
                 for name in piece_names(facts.game.ruleset, seat.pieces)]
        pieces = f" ({', '.join(names)})" if names else ""
        where = tr("seat {number}", number=seat.position + 1) + f" · {who}{pieces}"
    else:
        where = tr("the game")
    actor = tr(ACTOR_WORDS[entry["actor"]]) if entry["actor"] in ACTOR_WORDS else entry["actor"]
    kind = tr(KIND_WORDS[entry["kind"]]) if entry["kind"] in KIND_WORDS else entry["kind"]
    lines = [tr("entry {number} of {last} · {where} · made by {actor} · {kind}",
                number=entry["seq"], last=last, where=where, actor=actor, kind=kind)]
    if entry["kind"] == MOVE:
        lines.append(tr("input: {input}", input=entry["input"]))
        outcomes = [facts.ui.outcome_words(str(o), lang())[0]
                    for part in entry["outcomes"] or [] for o in part if str(o).split()]
        lines.append(tr("outcomes: {outcomes}",
                        outcomes="; ".join(outcomes) if outcomes else tr("none")))
    elif entry["kind"] == ROLLBACK:
        target = entry["input"].split()[-1]
        lines.append(tr("{entry}: back to the state after entry {number} (the entries in "
                        "between stay in the log, no longer counting)", entry=entry["input"],
                        number=target))
    else:
        lines.append(tr("{entry} (a note in the log; the board does not change)",
                        entry=entry["input"]))
    lines.append(tr("at: {time}", time=entry["created_at"]))
    return lines


def _show_step(console: Console, facts: _Facts, steps: list[dict[str, Any]], index: int) -> None:
    step = steps[index]
    lines = _entry_lines(facts, step["move"], len(steps) - 1)
    console.rule(Text(lines[0]))
    for line in lines[1:]:
        console.print(Text(line))
    console.print(facts.ui.board_text(step["view"], facts.boards, lang()))


def _walk(console: Console, facts: _Facts, steps: list[dict[str, Any]], start: int) -> None:
    last = len(steps) - 1
    index = start
    while True:
        _show_step(console, facts, steps, index)
        while True:
            try:
                answer = click.prompt(
                    tr("entry {number}/{last}: Enter or n next, p previous, q quit, a number "
                       "jumps", number=index, last=last),
                    default="", show_default=False)
            except click.Abort:  # end of input
                click.echo()
                return
            answer = answer.strip().lower()
            if answer in ("", "n", "next"):
                if index == last:
                    click.echo(tr("that was the last entry"))
                    return
                index += 1
            elif answer in ("p", "prev", "previous"):
                if index == 0:
                    click.echo(tr("this is the start: there is no previous entry"))
                    continue
                index -= 1
            elif answer in ("q", "quit", "exit"):
                return
            elif answer.isdigit() and int(answer) <= last:
                index = int(answer)
            else:
                click.echo(tr("Enter or n goes on, p goes back, q quits, and a number from 0 to "
                              "{last} jumps to that entry", last=last))
                continue
            break


@click.command("replay", help=N_(
        "Replay GAME from its log: each entry (who made it, input, outcomes) and the "
        "board after."))
@click.argument("game")
@click.option("--to", "to", type=int, default=None, metavar="N",
              help=N_("Only the state after log entry N (0: the start)."))
@click.option("--step", "walk", is_flag=True,
              help=N_("Walk through the log: Enter or n next, p previous, q quit, a number jumps "
                   "(starting at --to, or the start)."))
@database_option
@one_line
def replay(game: str, to: int | None, walk: bool, database_url: str | None) -> None:
    service = open_service(database_url)
    game = find_game_id(service, game)
    steps: list[dict[str, Any]] = service.replay(game)["steps"]
    row, seats, _ = game_row(service, game)
    if not steps:
        fail(tr("game {id} has not started: there is nothing to replay", id=game))
    last = len(steps) - 1
    if to is not None and not 0 <= to <= last:
        fail(tr("game {id} has log entries 0 to {last}: there is no entry {number}", id=game,
                last=last, number=to))
    ui = game_ui(row.ruleset)
    try:
        boards = ui.boards(row.setup)
    except ValueError as exc:
        fail(tr("game {id}: its board does not load: {problem}", id=game, problem=exc))
    facts = _Facts(row, {seat.position: seat for seat in seats}, ui, boards)
    console = Console(highlight=False)
    if walk:
        _walk(console, facts, steps, to or 0)
    elif to is not None:
        _show_step(console, facts, steps, to)
    else:
        for index in range(len(steps)):
            _show_step(console, facts, steps, index)


# ---------------------------------------------------------------------- verify


@click.command("verify", help=N_(
        "Replay every game (or GAMES) and check its hash chain and snapshots; exit 1 "
        "naming any that differ."))
@click.argument("games", nargs=-1)
@database_option
@one_line
def verify(games: tuple[str, ...], database_url: str | None) -> None:
    service = open_service(database_url)
    given = [find_game_id(service, text) for text in games]
    for uid in given:
        service.ensure_exists(uid)
    uids = given or game_uids(service, [], started=True)
    report: dict[str, list[str]] = {}
    for uid in track(uids, tr("verifying"), lambda uid: uid[:8]):
        problems = service.verify(uid)
        if problems:
            report[uid] = problems
    if not report:
        if games:
            click.echo(tr_plural("the {n} game given replays to its log, its hash chain and "
                                 "its snapshots", "the {n} games given replay to their log, "
                                 "their hash chain and their snapshots", len(uids)))
        else:
            click.echo(tr("every game replays to its log, its hash chain and its snapshots "
                          "({count} checked)", count=len(uids)))
        return
    fail_with(report, "")
