"""``titanpost verify-fair``: check a finished game's deal from its published secret.

SOURCE is a game the player is logged in to (a prefix of its id), the game's public fairness address
(``https://server/api/games/<id>/fairness``, or its page's address; or ``--server URL`` with the
game's id): no login is needed once the game is over), or a file: that record saved earlier, or an
admin export. The check itself is :func:`app.features.fairness.records.check_record`, run here on
the player's own machine. What the record alone cannot show (that it is the record of the game this
player was shown) comes from what the CLI kept of the game while playing it
(:func:`cli.client.remember_shown`): the game's id, the commitment and the facts it covers, the
contribution it gave, and the newest log head it saw, which the record's hash chain must hold."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import click

from cli.client import Api, Config, Seat, normalise_server
from cli.player_shared import emit_json, json_option, out, seat_of
from cli.speech import N_, lang, tr

GAME_ADDRESS: Final = re.compile(r"^(?P<base>.*?)(/api)?/games/(?P<uid>[0-9a-f]{32})(/.*)?$")
GAME_ID: Final = re.compile(r"[0-9a-f]{32}")
COMPARED_FACTS: Final = ("ruleset", "variant", "scheme", "commitment_version", "seed_chosen",
                         "engine_version", "status")
"""What the CLI kept of a game's dealing (cli/client.py) that its record must say too."""


@click.command("verify-fair", help=N_(
        "Check that every random outcome of a finished game follows from its published "
        "secret, that the secret is the one committed to at the start, and that the log's "
        "hash chain is whole. SOURCE is a game you play (a prefix of its id), the game's "
        "fairness address (https://server/api/games/ID/fairness: no login needed once the "
        "game is over), or a file: a saved fairness record or an admin export. What this "
        "computer kept of a game you played is compared with the record too. Exits 1 when "
        "the check fails."))
@click.argument("source")
@click.option("--server", default=None,
              help=N_("The server to fetch the game's record from (SOURCE is then the game's "
                      "whole id): no login needed once the game is over."))
@json_option
def verify_fair(source: str, server: str | None, as_json: bool) -> None:
    from app.features.fairness.records import RECORD_FORMAT, check_record, record_of_export

    record, seat = _record(source, server, RECORD_FORMAT, record_of_export)
    report = check_record(record)
    if seat is not None:
        compare_with_seat(record, seat, report)
    if as_json:
        emit_json({"fair": report.fair, "scheme": report.scheme, "moves": report.moves,
                   "outcomes": report.outcomes, "committed": report.committed,
                   "commitment_version": report.commitment_version,
                   "seed_chosen": report.chosen_seed, "compared_with_your_seat": seat is not None,
                   "problems": report.problems})
    else:
        _print(report, str(record.get("game") or source), seat is not None)
    if not report.fair:
        raise SystemExit(1)


def _record(source: str, server: str | None, record_format: str,
            of_export: Any) -> tuple[dict[str, Any], Seat | None]:
    """The fairness record SOURCE names, and the seat this client kept of its game (None: it
    plays no such game here)."""
    if server is not None:
        if not GAME_ID.fullmatch(source.strip().lower()):
            raise click.UsageError(tr("with --server, give the game's whole id (32 hexadecimal "
                                      "digits), not '{source}'", source=source))
        return _fetched(normalise_server(server), source.strip().lower())
    address = GAME_ADDRESS.match(source.strip()) if "://" in source else None
    if address is not None:
        parts = urlsplit(address["base"])
        base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        return _fetched(normalise_server(base), address["uid"])
    path = Path(source)
    if path.is_file():
        data = _file_record(path, source, record_format, of_export)
        return data, _kept_seat(data, None)
    seat = seat_of(source)
    _, body = seat.api().get(f"/games/{seat.game}/fairness")
    return dict(body), seat


def _fetched(server: str, uid: str) -> tuple[dict[str, Any], Seat | None]:
    """The record of game ``uid`` from ``server`` with no login (a finished game's is
    public), and the seat this client kept of it on that server, if any."""
    _, body = Api(server, who=server).get(f"/games/{uid}/fairness")
    record = dict(body)
    return record, _kept_seat(record, server)


def _file_record(path: Path, source: str, record_format: str, of_export: Any) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise click.ClickException(tr("{path} is not a JSON file: {problem}", path=source,
                                      problem=exc)) from None
    if not isinstance(data, dict):
        raise click.ClickException(tr("{path} holds no game", path=source))
    if data.get("format") == record_format:
        return data
    try:
        return dict(of_export(data))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise click.ClickException(tr("{path} is neither a fairness record nor a game export "
                                      "(missing {field})", path=source, field=exc)) from None


def _kept_seat(record: Mapping[str, Any], server: str | None) -> Seat | None:
    """The seat this client kept of the record's game (on ``server`` when given)."""
    wanted = {str(record.get("game")), str(record.get("imported_as"))}
    for seat in Config.load().seats.values():
        if seat.game in wanted and (server is None or seat.server == server):
            return seat
    return None


def compare_with_seat(record: Mapping[str, Any], seat: Seat, report: Any) -> None:
    """What this client kept of the game must be in the record: its id, the commitment it was
    shown and the facts it covers, the rules version, its own contribution in the deal, and
    the newest log entry it saw, in the record's hash chain."""
    named = {record.get("game"), record.get("imported_as")}
    if seat.game not in named:
        report.add(N_("the record is of game {record}, not of your game {game}"),
                   record=str(record.get("game")), game=seat.game)
    if seat.commitment and record.get("commitment") != seat.commitment:
        report.add(N_("the commitment shown when you took the seat was {shown}, not {now}"),
                   shown=seat.commitment, now=str(record.get("commitment")))
    _compare_facts(record, seat, report)
    contributions = record.get("contributions")
    if not record.get("published") or not isinstance(contributions, list):
        return  # (the contributions and the log come out with the secret, when the game ends)
    if seat.contribution and (len(contributions) <= seat.position
                              or contributions[seat.position] != seat.contribution):
        report.add(N_("the deal does not use the contribution you gave when you took the seat"))
    _compare_head(record, seat, report)


def _compare_facts(record: Mapping[str, Any], seat: Seat, report: Any) -> None:
    """The facts this client was shown (as first shown; the status once over) are the
    record's."""
    for name in COMPARED_FACTS:
        shown = seat.seen.get(name)
        if shown is not None and record.get(name) != shown:
            report.add(N_("the record says its {field} is {value}, but this computer was shown "
                          "{seen}"), field=name, value=json.dumps(record.get(name)),
                       seen=json.dumps(shown))


def _compare_head(record: Mapping[str, Any], seat: Seat, report: Any) -> None:
    """The newest log head this client saw (its length and digest) is in the record's
    chain: the log was not cut nor rewritten behind it."""
    from app.core.logchain import head_digest

    head = seat.seen.get("head")
    moves = record.get("moves")
    if not isinstance(head, Mapping) or not isinstance(moves, list):
        return
    seq = int(head.get("seq", 0))
    if seq > len(moves):
        report.add(N_("this computer saw the log reach entry {seq}, but the record's log stops "
                      "at entry {length}"), seq=seq, length=len(moves))
        return
    hashed = str(record.get("genesis_hash")) if seq == 0 else str(moves[seq - 1].get("hash"))
    if head_digest(hashed) != head.get("digest"):
        report.add(N_("entry {seq} of the record's log is not the one this computer was shown: "
                      "the log was rewritten"), seq=seq)


def _print(report: Any, game: str, compared: bool) -> None:
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
        if compared:
            console.print(tr("What this computer kept of your seat (the commitment, your "
                             "contribution, the newest log entry you saw) is in the record."))
        return
    unfair = tr("NOT fair")
    console.print(f"[red]{unfair}[/red]: " + tr("game {id}", id=game))
    for template, fields in report.words:
        said = {key: value.say(lang()) if hasattr(value, "say") else value
                for key, value in fields.items()}  # (an engine's refusal, in words)
        console.print(f"  - {tr(template, **said)}", markup=False, highlight=False)
