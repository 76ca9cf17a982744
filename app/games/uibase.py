"""What every game's :class:`~app.games.ui.GameUI` shares, so that a game states only what
differs: the forwards to its words module (``describe``), its pieces as the view holds them
(the hands, who decides), the players' waiting line and the board's PNG.

A game's UI subclasses :class:`GameUIBase` and sets :attr:`~GameUIBase.words` (its
``describe`` module), :attr:`~GameUIBase.view_pieces` (the view's key of its pieces) and
:attr:`~GameUIBase.decider_key` (the pending decision's key of the piece that decides), then
writes the members whose words or shapes are its own: the boards, the option's words, the
players' rows, the mail's parts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any, ClassVar

from app.core.i18n import N_, translate
from app.core.pictures import board_png
from app.games.base import SetupError

FormFields = Mapping[str, Any]
"""The new-game form's fields as posted (the game's own among them, named by its templates)."""


class GameUIBase:
    """Defaults of :class:`~app.games.ui.GameUI` read from a game's words module and view."""

    words: ClassVar[ModuleType]
    """The game's words (``app/games/<game>/describe.py``): ``describe_decision``,
    ``decision_heading``, ``waiting_words``, ``option_group``, ``outcome_words``,
    ``card_name`` and ``card_info``, each taking ``lang`` last."""
    view_pieces: ClassVar[str]
    """The key of the view's pieces by name (Titan Race: ``titans``), each a mapping that may
    hold its ``hand`` (a list of cards where the viewer sees them, else their count)."""
    decider_key: ClassVar[str]
    """The key of the pending decision's piece that decides (Titan Race: ``titan``)."""
    reply_examples: tuple[str, ...] = ()
    takeback_hint: str = N_("A misclick? Ask the others to take back your last move, as long as "
                            "nothing hidden has come out since.")
    hidden_since: str = N_("something hidden drawn or revealed")
    """What came out since a move that keeps it from being taken back, in the game's words (a
    takeback's refusal, app/features/takeback/)."""
    seat_options: tuple[str, ...] = ()

    # -------------------------------------------------------------- pieces in a view

    def pieces_of(self, view: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
        """The view's pieces by name."""
        pieces = view.get(self.view_pieces)
        return pieces if isinstance(pieces, Mapping) else {}

    def hands(self, view: Mapping[str, Any]) -> dict[str, list[str]]:
        """The hands the view shows card by card, by piece (the viewer's own; every hand in
        the admin's full view)."""
        return {name: list(info["hand"]) for name, info in self.pieces_of(view).items()
                if isinstance(info.get("hand"), list)}

    def decider(self, pending: Mapping[str, Any] | None) -> str | None:
        """The piece that decides the pending decision, None when no one piece does."""
        piece = (pending or {}).get(self.decider_key)
        return piece if isinstance(piece, str) else None

    def pending_for(self, piece: str | None) -> dict[str, Any]:
        """A pending decision that says only which piece decides (to word an input of the
        log whose seat plays one piece), empty for None."""
        return {self.decider_key: piece} if piece is not None else {}

    @staticmethod
    def seat_of_piece(seats: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
        """The pages' seat rows by the names of the pieces they play."""
        return {piece: seat for seat in seats for piece in seat["pieces"]}

    @staticmethod
    def player_fields(seat: Mapping[str, Any] | None, position: int | None) -> dict[str, Any]:
        """What a players' row shows of the seat playing a piece: the player, whether the
        computer plays it and at what level, whether it is the reader's."""
        return {
            "player": seat["name"] if seat else "?",
            "bot": bool(seat and seat["bot"]),
            "computer": seat.get("computer", "") if seat else "",
            "mine": seat is not None and seat["position"] == position,
        }

    # -------------------------------------------------------------- the board picture

    def panel_facts(self, view: Mapping[str, Any], boards: Any, lang: str) -> str:
        """The board picture's side panel as HTML (none by default): what it shows that the
        page shows nowhere else, for a narrow page, which hides the picture's panel."""
        return ""

    # -------------------------------------------------------------- words

    def card_name(self, card: str, lang: str) -> str:
        return str(self.words.card_name(card, lang))

    def card_info(self, card: str, lang: str) -> dict[str, str]:
        info: dict[str, str] = self.words.card_info(card, lang)
        return info

    def describe_decision(self, pending: Mapping[str, Any] | None, lang: str) -> str:
        return str(self.words.describe_decision(pending, lang))

    def decision_heading(self, pending: Mapping[str, Any], lang: str) -> str:
        return str(self.words.decision_heading(pending, lang))

    def option_group(self, option: str) -> str:
        return str(self.words.option_group(option))

    def outcome_words(self, outcome: str, lang: str) -> tuple[str, list[str]]:
        words: tuple[str, list[str]] = self.words.outcome_words(outcome, lang)
        return words

    def waiting_for(self, pending: Mapping[str, Any] | None, names: Sequence[str],
                    lang: str) -> str | None:
        if not pending:
            return None
        return translate(lang, "Waiting for {who} to {what}.", who=", ".join(names) or "?",
                         what=self.words.waiting_words(pending, lang))

    # -------------------------------------------------------------- the new-game form

    board_choices: tuple[str, ...]

    def board_titles(self, stored: Sequence[Any]) -> list[str]:
        raise NotImplementedError

    def chosen_boards(self, form: FormFields, count: int) -> list[str]:
        """The built-in boards fields ``circuit0`` to ``circuit<count - 1>`` name (the field
        names of the games' ``new_race.html``), each checked (SetupError)."""
        boards = [str(form.get(f"circuit{i}", "")) for i in range(count)]
        for board in boards:
            if board not in self.board_choices:
                raise SetupError(N_("choose one of the built-in boards: {choices}"),
                                 choices=", ".join(self.board_titles(self.board_choices)))
        return boards

    @staticmethod
    def chosen_piece(form: FormFields, index: int) -> str | None:
        """The piece seat ``index`` chose (field ``seat<index>_titan`` of the games'
        ``new_seat.html``), None for a random one."""
        return str(form.get(f"seat{index}_titan", "")).strip() or None

    def form_defaults(self) -> dict[str, str]:
        """The game's own fields of the new-game form, filled as a new form shows them."""
        return {"circuit0": self.board_choices[0]}

    # -------------------------------------------------------------- pictures and mail

    def board_png(self, svg: str, width: int) -> bytes:
        return board_png(svg, width)

    def mail_choices(self, options: Sequence[str], view: Mapping[str, Any],
                     suggest: Callable[[], str | None]) -> list[str]:
        return list(options)

    # -------------------------------------------------------------- results

    def score_part(self, label: str, value: int, lang: str) -> str:
        """A part of a score as its label id and value, for a game that words none."""
        return f"{label} {value}"

    def unplaced(self, note: str, lang: str) -> str:
        """No place, whatever the game's reason."""
        return translate(lang, "no place")
