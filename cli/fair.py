"""``titanpost verify-fair``: check a finished game's deal from its published secret.

A player names a game they are logged in to (the server's ``/api/games/<id>/fairness`` record),
or a file: that record saved earlier, or an admin export. The check itself is
:func:`app.fairness.check_record`, run here on the player's own machine: it trusts nothing the
server says but the log it showed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cli.client import Seat
from cli.player_view import emit_json, json_option, out, seat_of
from cli.speech import N_, lang, tr


@click.command("verify-fair", help=N_(
        "Check that every random outcome of a finished game follows from its published "
        "secret, and that the secret is the one committed to at the start. SOURCE is a "
        "game you play (a prefix of its id), or a file: a saved fairness record or an "
        "admin export. Exits 1 when the check fails."))
@click.argument("source")
@json_option
def verify_fair(source: str, as_json: bool) -> None:
    from app.fairness import RECORD_FORMAT, check_record, record_of_export

    record, seat = _record(source, RECORD_FORMAT, record_of_export)
    report = check_record(record)
    if seat is not None:
        _what_this_seat_saw(record, seat, report)
    if as_json:
        emit_json({"fair": report.fair, "scheme": report.scheme, "moves": report.moves,
                   "outcomes": report.outcomes, "committed": report.committed,
                   "seed_chosen": report.chosen_seed, "problems": report.problems})
    else:
        _print(report, str(record.get("game") or source))
    if not report.fair:
        raise SystemExit(1)


def _record(source: str, record_format: str,
            of_export: Any) -> tuple[dict[str, Any], Seat | None]:
    """The fairness record SOURCE names, and the seat it was fetched for (None: a file)."""
    path = Path(source)
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise click.ClickException(tr("{path} is not a JSON file: {problem}", path=source,
                                          problem=exc)) from None
        if not isinstance(data, dict):
            raise click.ClickException(tr("{path} holds no game", path=source))
        if data.get("format") == record_format:
            return data, None
        try:
            return dict(of_export(data)), None
        except (KeyError, TypeError, AttributeError) as exc:
            raise click.ClickException(tr("{path} is neither a fairness record nor a game export "
                                          "(missing {field})", path=source, field=exc)) from None
    seat = seat_of(source)
    _, body = seat.api().get(f"/games/{seat.game}/fairness")
    return dict(body), seat


def _what_this_seat_saw(record: dict[str, Any], seat: Seat, report: Any) -> None:
    """What this client kept when it took the seat must be what the record says: the
    commitment it was shown, and its own contribution mixed into the deal."""
    if seat.commitment and record.get("commitment") != seat.commitment:
        report.add(N_("the commitment shown when you took the seat was {shown}, not {now}"),
                   shown=seat.commitment, now=str(record.get("commitment")))
    contributions = record.get("contributions")
    if not record.get("published") or not isinstance(contributions, list):
        return  # (the contributions come out with the secret, when the game ends)
    if seat.contribution and (len(contributions) <= seat.position
                              or contributions[seat.position] != seat.contribution):
        report.add(N_("the deal does not use the contribution you gave when you took the seat"))


def _print(report: Any, game: str) -> None:
    console = out()
    if report.fair:
        how = (tr("from a seed the admin chose") if report.chosen_seed
               else tr("from the secret committed to at the start") if report.committed
               else tr("from its seed (a game created before fair dealing: no commitment)"))
        fair = tr("fair")  # (no call inside an f-string: the extractor would not see it)
        console.print(f"[green]{fair}[/green]: " + tr(
            "game {id} was dealt {how}; {moves} log entries and {outcomes} random outcomes "
            "recomputed, all as logged", id=game, how=how, moves=report.moves,
            outcomes=report.outcomes))
        return
    unfair = tr("NOT fair")
    console.print(f"[red]{unfair}[/red]: " + tr("game {id}", id=game))
    for template, fields in report.words:
        said = {key: value.say(lang()) if hasattr(value, "say") else value
                for key, value in fields.items()}  # (an engine's refusal, in words)
        console.print(f"  - {tr(template, **said)}", markup=False, highlight=False)
