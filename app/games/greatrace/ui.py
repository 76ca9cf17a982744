"""The Great Race behind the :class:`app.games.ui.GameUI` protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any, ClassVar, Final

from app.core.i18n import N_, translate
from app.games.greatrace.engine.board import PURPLE
from app.games.greatrace.engine.pieces import CREW_COLOUR, CREWS
from app.games.placings import ordinal
from app.games.uibase import FormFields, GameUIBase

from . import describe as words
from .mail import GreatRaceMail
from .picture import board_svg, panel_facts
from .ruleset import NOT_FINISHED, VARIANTS
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


SCORE_WORDS: Final = {
    "prestige": N_("{n} prestige"),
    "place": N_("{n} for the place"),
    "engine": N_("{n} for the engine"),
    "chassis": N_("{n} for the chassis"),
    "money": N_("{n} for the money"),
}
"""The parts of a finisher's prestige in words (English message ids)."""


class GreatRaceUI(GreatRaceMail, GameUIBase):
    """The Great Race's words (:mod:`.describe`) and pictures (:mod:`.picture`)."""

    words: ClassVar[ModuleType] = words
    view_pieces = "crews"
    decider_key = "crew"
    name = "great-race"
    title = N_("The Great Race")  # (a name; its Polish one is the rulebook's)
    group_order: tuple[str, ...] = words.GROUP_ORDER
    variants: tuple[str, ...] = VARIANTS
    board_choices: tuple[str, ...] = PURPLE
    pieces: tuple[str, ...] = CREWS
    notation_example = "buy 2; drive"
    reply_example = "plan P2 M2 S1"
    mail_kinds: tuple[str, ...] = ("take", "plan", "turn", "react")
    piece_heading = N_("Crew")
    resign_words = N_("Resign: the computer plays your crew from now on.")
    resigned_words = N_("You have resigned: the computer plays your crew from now on.")
    takeback_hint = N_("A misclick? Ask the others to take back your last move, as long as no "
                       "tile or card has been drawn, no plan revealed and no other crew has "
                       "answered from its cards since.")
    hidden_since = N_("a tile or card drawn, a plan revealed or another crew's answer from "
                      "its cards")
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

    def panel_facts(self, view: Mapping[str, Any], boards: Any, lang: str) -> str:
        return panel_facts(view, lang)

    def board_text(self, view: Mapping[str, Any], boards: Any, lang: str = "en") -> Any:
        return board_text(view, lang=lang)

    # -------------------------------------------------------------- the new-game form

    def setup_from_form(self, variant: str, form: FormFields) -> dict[str, Any]:
        """The start city (the other purple one is the finish)."""
        return {"start": self.chosen_boards(form, 1)[0]}

    def pieces_from_form(self, index: int, form: FormFields) -> dict[str, Any]:
        """The seat's crew (none: dealt at random)."""
        crew = self.chosen_piece(form, index)
        return {"crew": crew} if crew else {}

    # -------------------------------------------------------------- names

    def piece_name(self, piece: str | None, lang: str) -> str:
        return words.crew_name(piece, lang)

    def piece_fill(self, piece: str) -> str:
        return CREW_COLOUR.get(piece, GREY)

    def die_fill(self, die: str) -> str:
        return CREW_COLOUR.get(die, GREY)

    def colour_name(self, colour: str | None, lang: str) -> str:
        return words.crew_name(colour, lang)

    def standing_choice(self, choice: str, lang: str) -> str:
        """A standing choice for the crew's avoid decisions, in words."""
        return translate(lang, STANDING_WORDS.get(choice, choice))

    def variant_name(self, variant: str, lang: str) -> str:
        return words.variant_name(variant, lang)

    def rows(self, view: Mapping[str, Any], seats: Sequence[Mapping[str, Any]],
             position: int | None, sealed: Sequence[int]) -> list[dict[str, Any]]:
        """During planning a crew's assistants show only as planned or not (``sealed`` are
        the seats whose plan is in), never the plan itself."""
        owner = self.seat_of_piece(seats)
        pending = view.get("pending") or {}
        planning = view.get("phase") == "planning"
        rows = []
        for crew, info in self.pieces_of(view).items():
            seat = owner.get(crew)
            hand, city = info.get("hand"), info.get("city")
            boxes = info.get("assistants") if not planning else None
            rows.append({
                "crew": crew,
                **self.player_fields(seat, position),
                "space": info.get("space"),
                "city": self.board_titles([city])[0] if city else None,
                "money": info.get("money"),
                "petrol": info.get("petrol"),
                "engine": info.get("engine"),
                "chassis": info.get("chassis"),
                "cards": len(hand) if isinstance(hand, list) else hand,
                "assistants": boxes if isinstance(boxes, dict) else None,
                "planned": bool(info.get("planned")) or (seat is not None
                                                         and seat["position"] in sealed),
                "planning": planning and crew in (pending.get("crews") or []),
                "passed": bool(info.get("passed")),
                "finished": info.get("finished"),
                "acting": crew in (pending.get("crews") or []) and not view.get("winner"),
            })
        return rows

    # -------------------------------------------------------------- decisions and options

    def describe_option(self, option: str, view: Mapping[str, Any] | None, lang: str) -> str:
        return words.describe_option(option, view, lang)

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

    def mail_kind(self, pending: Mapping[str, Any] | None) -> str | None:
        return mail_kind_of(pending)

    # -------------------------------------------------------------- results

    def score_part(self, label: str, value: int, lang: str) -> str:
        """A finisher's prestige, the place it arrived in, and the parts of its prestige."""
        if label == "arrived":
            return translate(lang, "{place} at the finish", place=ordinal(value, lang))
        words = SCORE_WORDS.get(label)
        return translate(lang, words, n=value) if words else super().score_part(label, value,
                                                                                lang)

    def unplaced(self, note: str, lang: str) -> str:
        if note == NOT_FINISHED:
            return translate(lang, "the crew did not finish")
        return super().unplaced(note, lang)
