"""The Great Race behind the :class:`app.games.ui.GameUI` protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from app.core.i18n import N_, translate
from app.core.pictures import board_png
from app.games.greatrace.engine.board import PURPLE
from app.games.greatrace.engine.pieces import CREW_COLOUR, CREWS

from . import describe as words
from .mail import GreatRaceMail
from .picture import board_svg
from .ruleset import VARIANTS
from .textboard import board_text

STANDING_WORDS: Final = {
    "ask": N_("ask me whenever a danger could be avoided"),
    "never": N_("never avoid: take every danger at once"),
    "militia": N_("play a Militia whenever I hold one, else take the danger at once"),
    "guard": N_("send a security assistant whenever I have one, else take the danger at once"),
}

GREY: Final = "#868e96"
TURN_KINDS: Final = frozenset({"turn", "place", "drive", "repair", "damage", "keep"})
"""The decisions of a crew's own convoy sequence (mailed as ``turn``)."""
REACT_KINDS: Final = frozenset({"avoid", "discard"})
"""Decisions that may come out of one's turn (mailed as ``react`` when they do)."""


def mail_kind_of(pending: Mapping[str, Any] | None) -> str | None:
    """``take`` and ``plan`` have their own mails; a decision of one's own convoy sequence is
    a ``turn``; an avoid or discard owed while another crew acts (or in the bivouac) is a
    ``react``."""
    kind = str((pending or {}).get("kind"))
    if kind in ("take", "plan"):
        return kind
    crew, active = (pending or {}).get("crew"), (pending or {}).get("active")
    if kind in REACT_KINDS:
        return "turn" if active is not None and crew == active else "react"
    if kind in TURN_KINDS:
        return "turn"
    return None


class GreatRaceUI(GreatRaceMail):
    """The Great Race's words (:mod:`.describe`) and pictures (:mod:`.picture`)."""

    name = "great-race"
    title = "The Great Race"
    group_order: tuple[str, ...] = words.GROUP_ORDER
    variants: tuple[str, ...] = VARIANTS
    board_choices: tuple[str, ...] = PURPLE
    pieces: tuple[str, ...] = CREWS
    notation_example = "buy 2; drive"
    piece_heading = N_("Crew")
    resign_words = N_("Resign: the computer plays your crew from now on.")
    reaction_hint = N_("avoiding a DANGER another crew played; at most the above")

    # -------------------------------------------------------------- boards

    def boards(self, setup: Mapping[str, Any]) -> list[str]:
        """The start city (``["alger"]``), checked."""
        found = [str(setup["start"])] if "start" in setup else []
        if len(found) != 1 or found[0] not in PURPLE:
            raise ValueError(f"a Great Race starts in one of {', '.join(PURPLE)}, not {found}")
        return found

    def board_titles(self, stored: Sequence[Any]) -> list[str]:
        return [words.city_name(str(c)) for c in stored]

    def setup_titles(self, setup: Mapping[str, Any]) -> list[str]:
        return self.board_titles([setup["start"]] if "start" in setup else [])

    def board_svg(self, view: Mapping[str, Any], boards: Any, *, lang: str = "en",
                  highlight: Sequence[str] = ()) -> str:
        return board_svg(view, lang=lang, highlight=highlight)

    def board_png(self, svg: str, width: int) -> bytes:
        return board_png(svg, width)

    def board_text(self, view: Mapping[str, Any], boards: Any, lang: str = "en") -> Any:
        return board_text(view, lang=lang)

    # -------------------------------------------------------------- names

    def piece_name(self, piece: str | None, lang: str) -> str:
        return words.crew_name(piece, lang)

    def piece_fill(self, piece: str) -> str:
        return CREW_COLOUR.get(piece, GREY)

    def die_fill(self, die: str) -> str:
        return CREW_COLOUR.get(die, GREY)

    def colour_name(self, colour: str | None, lang: str) -> str:
        return words.crew_name(colour, lang)

    def card_name(self, card: str, lang: str) -> str:
        return words.card_name(card, lang)

    def standing_choice(self, choice: str, lang: str) -> str:
        """A standing choice for the crew's avoid decisions, in words."""
        return translate(lang, STANDING_WORDS.get(choice, choice))

    def card_info(self, card: str, lang: str) -> dict[str, str]:
        return words.card_info(card, lang)

    def variant_name(self, variant: str, lang: str) -> str:
        return words.variant_name(variant, lang)

    # -------------------------------------------------------------- decisions and options

    def describe_option(self, option: str, view: Mapping[str, Any] | None, lang: str) -> str:
        return words.describe_option(option, view, lang)

    def describe_decision(self, pending: Mapping[str, Any] | None, lang: str) -> str:
        return words.describe_decision(pending, lang)

    def decision_heading(self, pending: Mapping[str, Any], lang: str) -> str:
        return words.decision_heading(pending, lang)

    def waiting_for(self, pending: Mapping[str, Any] | None, names: Sequence[str],
                    lang: str) -> str | None:
        if not pending:
            return None
        return translate(lang, "Waiting for {who} to {what}.", who=", ".join(names) or "?",
                         what=words.waiting_words(pending, lang))

    def option_group(self, option: str) -> str:
        return words.option_group(option)

    def highlight(self, option: str, view: Mapping[str, Any], after: Mapping[str, Any] | None,
                  boards: Any) -> list[str]:
        targets = words.option_targets(option, view)
        if after is None:
            return targets
        _, marks = words.changes(view, after, "en")
        return list(dict.fromkeys(marks + targets))

    def changes(self, before: Mapping[str, Any], after: Mapping[str, Any], boards: Any,
                lang: str) -> tuple[list[str], list[str]]:
        return words.changes(before, after, lang)

    def outcome_words(self, outcome: str, lang: str) -> tuple[str, list[str]]:
        return words.outcome_words(outcome, lang)

    def mail_kind(self, pending: Mapping[str, Any] | None) -> str | None:
        return mail_kind_of(pending)
