"""Titan Race behind the :class:`app.games.ui.GameUI` protocol."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any, ClassVar, Final

from app.core.i18n import N_, translate, translate_plural
from app.core.integers import read_whole
from app.games.base import SetupError
from app.games.titanrace.engine import VARIANTS
from app.games.titanrace.engine.cards import TITAN_COLOUR, TITANS
from app.games.titanrace.engine.circuits import BUILT_IN, TITLES, Circuit, resolve_circuit
from app.games.uibase import FormFields, GameUIBase

from . import describe as words
from . import mail
from .picture import board_svg, panel_facts
from .picture.layout import COLOUR_FILL

MAIL_KIND_OF_DECISION: Final = {"pick": "pick", "start": "turn", "turn": "turn",
                                "react": "react", "pirates": "pirates"}
GREY: Final = "#868e96"
STANDING_WORDS: Final = {
    "ask": N_("ask me in every reaction window"),
    "never": N_("never react: pass at once"),
}
PLAY_WHEN_IT_FITS: Final = N_("play {card} whenever it fits, else pass at once")


class TitanRaceUI(GameUIBase):
    """Titan Race's words (:mod:`.describe`) and pictures (:mod:`.picture`)."""

    words: ClassVar[ModuleType] = words
    view_pieces = "titans"
    decider_key = "titan"
    name = "titan-race"
    title = "Titan Race"
    group_order: tuple[str, ...] = words.GROUP_ORDER
    variants: tuple[str, ...] = tuple(VARIANTS)
    board_choices: tuple[str, ...] = tuple(BUILT_IN)
    pieces: tuple[str, ...] = tuple(TITANS)
    reply_examples: tuple[str, ...] = mail.REPLY_EXAMPLES
    notation_example = "move RR; trap C5"
    reply_example = "move RR; end"
    seat_options: tuple[str, ...] = ("anytime_windows",)
    mail_kinds: tuple[str, ...] = tuple(dict.fromkeys(MAIL_KIND_OF_DECISION.values()))
    takeback_hint = N_("A misclick? Ask the others to take back your last move, as long as no "
                       "die has been rolled and no card drawn since.")
    hidden_since = N_("a die rolled or a card drawn")
    piece_heading = N_("Titan")
    resign_words = N_("Resign: the computer plays your Titans from now on.")
    resigned_words = N_("You have resigned: the computer plays your Titans from now on.")
    reaction_hint = N_("a reaction window, pirates; at most the above")

    # -------------------------------------------------------------- boards

    def boards(self, setup: Mapping[str, Any]) -> list[Circuit]:
        return [resolve_circuit(c) for c in setup.get("circuits") or []]

    def board_titles(self, stored: Sequence[Any]) -> list[str]:
        return [TITLES.get(c, c) if isinstance(c, str) else str(c.get("name", "?"))
                for c in stored]

    def setup_titles(self, setup: Mapping[str, Any]) -> list[str]:
        return self.board_titles(setup.get("circuits") or [])

    def board_svg(self, view: Mapping[str, Any], boards: Any, *, lang: str = "en",
                  highlight: Sequence[str] = ()) -> str:
        return board_svg(dict(view), boards, highlight=list(highlight), lang=lang)

    def panel_facts(self, view: Mapping[str, Any], boards: Any, lang: str) -> str:
        return panel_facts(boards, view, lang)

    def board_text(self, view: Mapping[str, Any], boards: Any, lang: str = "en") -> Any:
        from app.games.titanrace.textboard import render_board

        return render_board(view, boards, lang)

    # -------------------------------------------------------------- the new-game form

    def form_defaults(self) -> dict[str, str]:
        boards = self.board_choices
        return {f"circuit{i}": boards[min(i, len(boards) - 1)] for i in range(3)}

    def setup_from_form(self, variant: str, form: FormFields) -> dict[str, Any]:
        """A circuit, or one a lap in Grand Slam."""
        return {"circuits": self.chosen_boards(form, 3 if variant == "grand-slam" else 1)}

    def pieces_from_form(self, index: int, form: FormFields) -> dict[str, Any]:
        """The seat's Titan (none: dealt at random) and its team in the teams variant."""
        titan = self.chosen_piece(form, index)
        pieces: dict[str, Any] = {"titans": [titan] if titan else []}
        raw = str(form.get(f"seat{index}_team", "")).strip()
        if raw:
            team = read_whole(raw)
            if team is None:
                raise SetupError(N_("the team of seat {number} must be a whole number, not "
                                    "'{value}'"), number=index + 1, value=raw)
            pieces["team"] = team
        return pieces

    # -------------------------------------------------------------- names

    def piece_name(self, piece: str | None, lang: str) -> str:
        return words.titan_name(piece, lang)

    def piece_fill(self, piece: str) -> str:
        return COLOUR_FILL.get(TITAN_COLOUR.get(piece, ""), GREY)

    def die_fill(self, die: str) -> str:
        return COLOUR_FILL.get(die, "#adb5bd")

    def colour_name(self, colour: str | None, lang: str) -> str:
        return words.colour_name(colour, lang)

    def standing_choice(self, choice: str, lang: str) -> str:
        """A standing choice for the seat's reaction windows, in words."""
        if choice in STANDING_WORDS:
            return translate(lang, STANDING_WORDS[choice])
        return translate(lang, PLAY_WHEN_IT_FITS, card=self.card_name(choice, lang))

    def variant_name(self, variant: str, lang: str) -> str:
        english = words.VARIANT_NAMES.get(variant)
        return translate(lang, english) if english else variant

    def board_title(self, name: str) -> str:
        return TITLES.get(name, name)

    @staticmethod
    def lap_shown(lap: Any) -> Any:
        """The lap a Titan is on as people count it: a Titan past the finish line is on the
        last lap (the engine counts on, to 4; the mail says "3 of 3" too)."""
        return min(int(lap), mail.LAPS) if isinstance(lap, int) else lap

    def rows(self, view: Mapping[str, Any], seats: Sequence[Mapping[str, Any]],
             position: int | None, sealed: Sequence[int]) -> list[dict[str, Any]]:
        owner = self.seat_of_piece(seats)
        pending = view.get("pending") or {}
        rows = []
        for titan, info in self.pieces_of(view).items():
            hand = info.get("hand")
            rows.append({
                "titan": titan,
                **self.player_fields(owner.get(titan), position),
                "space": info.get("space"),
                "lap": self.lap_shown(info.get("lap")),
                "life": info.get("life"),
                "ko": info.get("ko"),
                "cards": len(hand) if isinstance(hand, list) else hand,
                "acting": pending.get("titan") == titan and not view.get("winner"),
            })
        return rows

    # -------------------------------------------------------------- decisions and options

    def describe_option(self, option: str, view: Mapping[str, Any] | None, lang: str) -> str:
        pending = (view or {}).get("pending") or {}
        return words.describe_option(option, lang, pending.get("titan"), pending.get("kind"))

    def waiting_for(self, pending: Mapping[str, Any] | None, names: Sequence[str],
                    lang: str) -> str | None:
        if not pending:
            return None
        titan = pending.get("titan")
        who = [f"{n} ({words.titan_name(str(titan), lang)})" if titan else n for n in names]
        return translate(lang, "Waiting for {who} to {what}.", who=", ".join(who) or "?",
                         what=words.waiting_words(pending, lang))

    def highlight(self, option: str, view: Mapping[str, Any], after: Mapping[str, Any] | None,
                  boards: Any) -> list[str]:
        count = max(len(boards), 1)
        titan = ((view.get("pending") or {}).get("titan"))
        targets = words.option_targets(option, view, titan, count)
        if after is None:
            return targets
        _, marks = words.changes(view, after, count, "en")
        return list(dict.fromkeys(marks + targets))

    def changes(self, before: Mapping[str, Any], after: Mapping[str, Any], boards: Any,
                lang: str) -> tuple[list[str], list[str]]:
        return words.changes(before, after, max(len(boards), 1), lang)

    def mail_kind(self, pending: Mapping[str, Any] | None) -> str | None:
        return MAIL_KIND_OF_DECISION.get(str((pending or {}).get("kind")))

    # -------------------------------------------------------------- mail

    def mail_variant(self, variant: str, lang: str) -> str:
        return mail.mail_variant(variant, lang)

    def mail_decision(self, pending: Mapping[str, Any], lang: str) -> dict[str, Any]:
        return mail.mail_decision(pending, lang)

    def mail_option(self, option: str, view: Mapping[str, Any],
                    after: Callable[[], Mapping[str, Any] | None], lang: str) -> dict[str, Any]:
        return mail.mail_option(option, view, after, lang)

    def mail_situation(self, view: Mapping[str, Any], owners: Mapping[str, tuple[str, bool]],
                       lang: str) -> dict[str, Any]:
        return mail.mail_situation(view, owners, lang)

    def mail_outcome(self, outcome: str, lang: str) -> str:
        return mail.mail_outcome(outcome, lang)

    # -------------------------------------------------------------- results

    def score_part(self, label: str, value: int, lang: str) -> str:
        """The lap a seat's leading Titan is on (as the mail counts it: "lap 3 of 3"), its
        rows to the finish (what orders the seats after the winner's) and its Life Points
        (KO at none)."""
        if label == "lap":
            return translate(lang, "lap {lap} of {laps}", lap=value, laps=mail.LAPS)
        if label == "to_go":
            return translate_plural(lang, "{n} row to the finish", "{n} rows to the finish",
                                    value)
        if label == "life":
            return (translate_plural(lang, "{n} Life Point", "{n} Life Points", value) if value
                    else translate(lang, "KO"))
        return super().score_part(label, value, lang)
