"""A game's state as a player's commands fetch and draw it: the seat's view of the game and
its deadlines (:func:`fetch_state`, :func:`fetch_clock`), and what ``show`` and ``watch`` draw of
it (:func:`state_view`: the header, the board, the players, your hand, the situation and your
deadline); the moves' commands and ``settings`` draw the situation line too.

A game's own words and board come from its :class:`app.games.ui.GameUI`: this module knows no
game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from rich import box
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from app.games.placings import result_rows, your_place
from cli.client import Config, Seat, remember_shown
from cli.player_shared import (
    acting_piece,
    bare_name,
    command_line,
    computer_words,
    piece_names,
    piece_text,
    player_name,
    sealed_words,
    seat_name,
    seat_pieces,
    seat_rows,
    status_words,
    ui_of,
    when_text,
)
from cli.speech import lang, pause_words, tr, tr_plural

TIMEOUT_KINDS: Final = ("timeout", "timeout-quick")


# ---------------------------------------------------------------------- the game's situation


def situation(state: Mapping[str, Any]) -> Text:
    """One line: who must do what now, or how the game ended."""
    game = state.get("game") or {}
    view = state.get("view") or {}
    status = game.get("status")
    if status == "open":
        return Text(tr("Waiting for players to join; the game's creator starts it."),
                    style="dim")
    if status == "abandoned":
        return Text(tr("The game was abandoned."), style="bold")
    winner = view.get("winner") or game.get("winner")
    if status == "finished" or winner:
        return winner_text(state)
    pending = view.get("pending") if isinstance(view.get("pending"), Mapping) else None
    to_act = [p for p in game.get("to_act") or [] if isinstance(p, int)]
    line = Text()
    if game.get("paused"):
        line.append(tr("Paused"), style="bold yellow")
        names = {p: bare_name(state, p) for p in seat_rows(state)}
        line.append(" " + tr("({reason}).", reason=pause_words(game.get("pause_reason"),
                                                               names)) + " ")
    sealed = sealed_words(state)
    if sealed is not None:
        line.append(tr("Sealed"), style="bold green").append(
            tr(": your answer ({answer}) is in.", answer=sealed) + " ")
    if state.get("you") in to_act and pending is not None:
        line.append_text(your_decision(state, pending)).append(".")
    elif to_act:
        line.append(waiting_line(state, pending, to_act))
    else:
        line.append(tr("Nothing is pending."), style="dim")
    return line


def your_decision(state: Mapping[str, Any], pending: Mapping[str, Any]) -> Text:
    """``Your decision (your piece): what the decision is``."""
    line = Text(tr("Your decision"), style="bold green")
    piece = acting_piece(state, pending)
    if piece:
        line.append(" (").append_text(piece_text(ui_of(state), piece)).append(")")
    return line.append(": ", style="bold green").append(
        ui_of(state).decision_heading(pending, lang()))


def waiting_line(state: Mapping[str, Any], pending: Mapping[str, Any] | None,
                 to_act: Sequence[int]) -> str:
    """``Waiting for Ann (her piece) to ...``, as the game words it."""
    names = [bare_name(state, p) for p in to_act]
    words = ui_of(state).waiting_for(pending, names, lang())
    return words or tr("Waiting for {names}.", names=", ".join(names))


def winner_text(state: Mapping[str, Any]) -> Text:
    game = state.get("game") or {}
    view = state.get("view") or {}
    ui = ui_of(state)
    winners = [w for w in str(view.get("winner") or game.get("winner") or "").split(",")
               if w]  # (the API's: the pieces' ids, comma-joined)
    line = Text(tr("Game over:") + " ", style="bold gold1")
    if not winners:
        return line.append(tr("no winner."))
    winner, *others = winners
    line.append_text(piece_text(ui, winner))
    side = list(dict.fromkeys(str(w) for w in [*others, *(view.get("winners") or [])]
                              if w and w != winner))
    if side:
        line.append(" " + tr("with {pieces}", pieces=", ".join(ui.piece_name(str(w), lang())
                                                               for w in side)))
    line.append(" " + tr("wins"))
    owner = next((p for p, s in seat_rows(state).items() if winner in piece_names(s)), None)
    if owner is not None:  # (the player alone: the pieces were named before)
        line.append(f" ({bare_name(state, owner)})")
    return line.append(".")


def my_deadline(state: Mapping[str, Any], clock: Mapping[str, Any] | None) -> Text | None:
    """The timeout of the decision pending now: yours, or whose it is."""
    if not clock or not clock.get("deadlines"):
        return None
    you = state.get("you")
    timeouts = [d for d in clock["deadlines"] if d.get("kind") in TIMEOUT_KINDS]
    mine = [d for d in timeouts if d.get("seat") == you]
    chosen = (mine or timeouts)[:1]
    if not chosen:
        return None
    due = chosen[0]
    when = when_text(due.get("due_at"))
    return Text(tr("Your deadline: {when}", when=when) if due.get("seat") == you else
                tr("Deadline of {player}: {when}", player=player_name(state, due.get("seat")),
                   when=when),
                style="bold" if due.get("seat") == you else "")


def boards_of(state: Mapping[str, Any]) -> Any | None:
    """The game's built-in boards, resolved by its UI; None for a custom board (whose layout
    the API does not give). Only built-in names are resolved: a board name never reaches the
    file system."""
    ui = ui_of(state)
    game = state.get("game") or {}
    names = (state.get("view") or {}).get("circuits") or game.get("circuits")
    setup = game.get("setup")
    choices = {str(c).lower() for c in ui.board_choices}
    if not names or not all(isinstance(n, str) and n.lower() in choices for n in names):
        return None
    if not isinstance(setup, Mapping):
        return None
    try:
        return ui.boards(setup)
    except ValueError:
        return None


def piece_entry(view: Mapping[str, Any], piece: str) -> Mapping[str, Any]:
    """What the view says of one piece: the view keeps each piece's state in a mapping by the
    piece's name (the game's own key)."""
    for value in view.values():
        if isinstance(value, Mapping) and isinstance(value.get(piece), Mapping):
            entry: Mapping[str, Any] = value[piece]
            return entry
    return {}


def hand_lines(state: Mapping[str, Any]) -> list[Text]:
    """The cards in your pieces' hands with what each does."""
    ui = ui_of(state)
    view = state.get("view") or {}
    lines: list[Text] = []
    for piece in sorted(seat_pieces(state, state.get("you"))):
        hand = piece_entry(view, piece).get("hand")
        if not isinstance(hand, list):
            continue
        head = Text(tr("Your hand") + " (").append_text(piece_text(ui, piece)).append("): ")
        if not hand:
            lines.append(head.append(tr("no cards"), style="dim"))
            continue
        lines.append(head)
        for card in hand:
            info_of = ui.card_info(str(card), lang())
            effect, timing = info_of.get("effect"), info_of.get("timing")
            line = Text("  ").append(info_of.get("name") or str(card), style="bold cyan")
            line.append(f" ({card})", style="dim")
            if effect:
                line.append(f": {effect}")
            if timing:
                line.append(f" [{timing}]", style="dim")
            lines.append(line)
    return lines


def players_table(state: Mapping[str, Any]) -> Table:
    ui = ui_of(state)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, title_justify="left")
    table.add_column(tr("Seat"), justify="right")
    table.add_column(tr("Player"))
    table.add_column(tr("Plays"))
    table.add_column("")
    sealed = set((state.get("game") or {}).get("sealed") or [])
    for position, seat in sorted(seat_rows(state).items()):
        notes = []
        if position == state.get("you"):
            notes.append(tr("you"))
        if seat.get("resigned"):
            notes.append(tr("resigned"))
        if seat.get("bot"):
            notes.append(computer_words(seat))
        if not seat.get("accepted"):
            notes.append(tr("not joined yet"))
        if position in sealed:
            notes.append(tr("answer sealed"))
        if seat.get("missed_deadlines"):
            notes.append(tr_plural("{n} missed deadline", "{n} missed deadlines",
                                   int(seat["missed_deadlines"])))
        if isinstance(seat.get("bank_seconds"), int):
            notes.append(tr("bank {hours} h", hours=seat["bank_seconds"] // 3600))
        pieces = Text(", ").join(piece_text(ui, p) for p in piece_names(seat))
        table.add_row(str(position + 1), escape(seat_name(seat)), pieces,
                      ", ".join(notes))
    return table


def results_view(state: Mapping[str, Any]) -> list[RenderableType]:
    """A finished game's results as the API gives them (``result``): your place in a sentence,
    then every seat's place and score."""
    result = state.get("result")
    if not isinstance(result, Mapping) or not result.get("places"):
        return []
    ui = ui_of(state)
    seats = seat_rows(state)
    names = {position: bare_name(state, position) for position in seats}
    pieces = {position: piece_names(seat) for position, seat in seats.items()}
    you = state.get("you") if isinstance(state.get("you"), int) else None
    rows = result_rows(result["places"], ui, names, pieces, you, lang())
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, title_justify="left",
                  title=tr("Results"))
    table.add_column(tr("Place"))
    table.add_column(tr("Player"))
    table.add_column(tr("Plays"))
    table.add_column(tr("Score"))
    for row in rows:
        style = "bold" if row["mine"] else ""
        table.add_row(Text(row["ordinal"], style=style if row["place"] is not None else "dim"),
                      Text(row["name"], style=style),
                      Text(", ").join(piece_text(ui, p) for p in pieces.get(row["position"], [])),
                      Text(row["score"], style=style))
    found: list[RenderableType] = [Text(), table]
    mine = your_place(result["places"], you, ui, lang())
    if mine:
        found.append(Text(mine, style="bold gold1"))
    return found


def state_view(seat: Seat, state: Mapping[str, Any],
               clock: Mapping[str, Any] | None) -> RenderableType:
    """Everything ``show`` draws: header, board, players, hand, decision, deadline."""
    ui = ui_of(state)
    game = state.get("game") or {}
    view = state.get("view")
    parts: list[RenderableType] = []
    title = f"{game.get('name') or ui.title} · {seat.short} · "
    title += status_words(game.get("status"))
    if isinstance(view, Mapping) and view.get("round"):
        title += " · " + tr("round {number}", number=view["round"])
    title += " · " + tr("move {number}", number=game.get("seq", state.get("seq", "?")))
    parts.append(Text(title, style="bold"))
    parts.append(Text())
    if isinstance(view, Mapping):
        boards = boards_of(state)
        if boards is not None:
            parts += [ui.board_text(view, boards, lang()), Text()]
        else:
            parts.append(Text(tr("(A custom board: it is drawn on the game's web page.)"),
                              style="dim"))
    parts.append(players_table(state))
    hand = hand_lines(state)
    if hand:
        parts += [Text(), *hand]
    parts += [Text(), situation(state)]
    parts += results_view(state)
    deadline = my_deadline(state, clock)
    if deadline is not None:
        parts.append(deadline)
    if state.get("you") in (game.get("to_act") or []):
        parts.append(Text(tr("Your options: {command}",
                             command=command_line("options", seat.short)), style="dim"))
    return Group(*parts)


def fetch_state(seat: Seat) -> dict[str, Any]:
    """The game's state as the seat sees it; what it shows of the dealing is kept in the
    seat's file entry for ``verify-fair`` (:func:`cli.client.remember_shown`)."""
    state = seat.api().get(f"/games/{seat.game}")[1]
    if remember_shown(seat, state) and not seat.from_env:
        Config.load().keep_shown(seat)
    return state


def fetch_clock(seat: Seat, state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The game's deadlines while it runs (None otherwise, or when they cannot be read)."""
    if (state.get("game") or {}).get("status") != "active":
        return None
    status, clock = seat.api().get(f"/games/{seat.game}/deadlines", allow=(403, 404))
    return clock if status == 200 else None
