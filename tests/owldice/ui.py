"""Owl Dice behind the :class:`app.games.ui.GameUI` protocol, on :class:`GameUIBase`: its
words (:mod:`.describe`), its picture (a row of owls under the moon, drawn here with
:mod:`app.games.svg`), its text board and its mail parts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any, ClassVar, Final

from app.core.i18n import N_, translate
from app.games.base import SetupError
from app.games.svg import INK, svg_attr, svg_text
from app.games.uibase import FormFields, GameUIBase

from . import describe as words
from .engine.state import OWLS
from .ruleset import GLADES, VARIANTS

OWL_COLOUR: Final = {"strix": "#8a5a2b", "bubo": "#c9a227", "ninox": "#4a6d8c",
                     "tyto": "#d9d2c5"}
GREY: Final = "#868e96"


class OwlDiceUI(GameUIBase):
    """Owl Dice's words and pictures."""

    words: ClassVar[ModuleType] = words
    view_pieces = "owls"
    decider_key = "owl"
    name = "owl-dice"
    title = "Owl Dice"
    group_order: tuple[str, ...] = words.GROUP_ORDER
    variants: tuple[str, ...] = VARIANTS
    board_choices: tuple[str, ...] = GLADES
    pieces: tuple[str, ...] = OWLS
    reply_examples: tuple[str, ...] = ("roll", "hoot 2")
    notation_example = "roll"
    reply_example = "hoot 2"
    mail_kinds: tuple[str, ...] = ("roll", "hoot")
    piece_heading = N_("Owl")
    resign_words = N_("Resign: the computer plays your owl from now on.")
    resigned_words = N_("You have resigned: the computer plays your owl from now on.")
    reaction_hint = N_("Owl Dice has no out-of-turn decisions")

    # -------------------------------------------------------------- boards

    def boards(self, setup: Mapping[str, Any]) -> list[str]:
        glade = setup.get("glade")
        if glade not in GLADES:
            raise ValueError(f"Owl Dice is played in {GLADES[0]}, not {glade}")
        return [str(glade)]

    def board_titles(self, stored: Sequence[Any]) -> list[str]:
        return ["The Hollow Oak" if glade == "hollow-oak" else str(glade) for glade in stored]

    def setup_titles(self, setup: Mapping[str, Any]) -> list[str]:
        return self.board_titles([setup["glade"]] if "glade" in setup else [])

    def board_svg(self, view: Mapping[str, Any], boards: Any, *, lang: str = "en",
                  highlight: Sequence[str] = ()) -> str:
        """The owls in a row (their scores under them) and the moon die."""
        owls = self.pieces_of(view)
        width = 120 * max(len(owls), 1) + 140
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="170" '
                 f'viewBox="0 0 {width} 170" role="img">',
                 '<rect width="100%" height="100%" fill="#1d2b3a"/>',
                 '<circle cx="60" cy="60" r="34" fill="#f4e9b8"/>',
                 svg_text(60, 70, str(view.get("moon") or "-"), size=28, bold=True,
                          anchor="middle")]
        for i, (name, info) in enumerate(owls.items()):
            x = 180 + 120 * i
            parts.append(f'<ellipse cx="{x}" cy="70" rx="34" ry="44" '
                         f'fill="{svg_attr(self.piece_fill(name))}" stroke="{INK}"/>')
            parts.append(svg_text(x, 140, self.piece_name(name, lang), size=16, fill="#fff",
                                  anchor="middle"))
            parts.append(svg_text(x, 160, str(info.get("score", 0)), size=14, fill="#fff",
                                  anchor="middle"))
        parts.append("</svg>")
        return "".join(parts)

    def board_text(self, view: Mapping[str, Any], boards: Any, lang: str = "en") -> Any:
        lines = [translate(lang, "Round {round} of {rounds}; the moon shows {moon}.",
                           round=view.get("round"), rounds=view.get("rounds"),
                           moon=view.get("moon") or "-")]
        for name, info in self.pieces_of(view).items():
            lines.append(f"  {self.piece_name(name, lang)}: {info.get('score')}")
        return "\n".join(lines)

    # -------------------------------------------------------------- the new-game form

    def setup_from_form(self, variant: str, form: FormFields) -> dict[str, Any]:
        return {"glade": self.chosen_boards(form, 1)[0]}

    def pieces_from_form(self, index: int, form: FormFields) -> dict[str, Any]:
        owl = self.chosen_piece(form, index)
        if owl is not None and owl not in OWLS:
            raise SetupError(N_("choose one of the owls"))
        return {"owl": owl} if owl else {}

    # -------------------------------------------------------------- names

    def piece_name(self, piece: str | None, lang: str) -> str:
        return words.owl_name(piece, lang)

    def piece_fill(self, piece: str) -> str:
        return OWL_COLOUR.get(piece, GREY)

    def die_fill(self, die: str) -> str:
        return "#f4e9b8"

    def colour_name(self, colour: str | None, lang: str) -> str:
        return words.owl_name(colour, lang)

    def standing_choice(self, choice: str, lang: str) -> str:
        return choice

    def variant_name(self, variant: str, lang: str) -> str:
        return translate(lang, "Standard (2-4 players)")

    def rows(self, view: Mapping[str, Any], seats: Sequence[Mapping[str, Any]],
             position: int | None, sealed: Sequence[int]) -> list[dict[str, Any]]:
        """A row an owl: its player, score, pellets (a count for another's), and whether its
        hoot is in (never what it is before the reveal)."""
        owner = self.seat_of_piece(seats)
        pending = view.get("pending") or {}
        rows = []
        for name, info in self.pieces_of(view).items():
            seat = owner.get(name)
            hand = info.get("hand")
            rows.append({
                "owl": name, **self.player_fields(seat, position),
                "score": info.get("score"),
                "pellets": hand if isinstance(hand, list) else None,
                "count": len(hand) if isinstance(hand, list) else hand,
                "hoot": info.get("hoot"),
                "hooted": bool(info.get("hooted")) or (seat is not None
                                                        and seat["position"] in sealed),
                "acting": name in (pending.get("owls") or []) and not view.get("winner"),
            })
        return rows

    # -------------------------------------------------------------- decisions and options

    def describe_option(self, option: str, view: Mapping[str, Any] | None, lang: str) -> str:
        return words.describe_option(option, view, lang)

    def highlight(self, option: str, view: Mapping[str, Any], after: Mapping[str, Any] | None,
                  boards: Any) -> list[str]:
        return []

    def changes(self, before: Mapping[str, Any], after: Mapping[str, Any], boards: Any,
                lang: str) -> tuple[list[str], list[str]]:
        return words.changes(before, after, lang)

    def mail_kind(self, pending: Mapping[str, Any] | None) -> str | None:
        kind = (pending or {}).get("kind")
        return str(kind) if kind in self.mail_kinds else None

    # -------------------------------------------------------------- mail

    def mail_variant(self, variant: str, lang: str) -> str:
        return translate(lang, "standard")

    def mail_decision(self, pending: Mapping[str, Any], lang: str) -> dict[str, Any]:
        return {"owl": words.owl_name(pending.get("owl"), lang),
                "heading": words.decision_heading(pending, lang),
                "moon": pending.get("moon"), "round": pending.get("round")}

    def mail_option(self, option: str, view: Mapping[str, Any],
                    after: Any, lang: str) -> dict[str, Any]:
        parts = option.split()
        reply = f"hoot {parts[2]}" if len(parts) == 3 and parts[0] == "hoot" else option
        return {"label": words.describe_option(option, view, lang), "reply": reply,
                "dest": None, "space": None}

    def mail_situation(self, view: Mapping[str, Any], owners: Mapping[str, tuple[str, bool]],
                       lang: str) -> dict[str, Any]:
        rows = []
        for name, info in self.pieces_of(view).items():
            player, you = owners.get(name, ("?", False))
            hand = info.get("hand")
            rows.append({"name": words.owl_name(name, lang), "player": player, "you": you,
                         "score": info.get("score"), "hoot": info.get("hoot"),
                         "pellets": [str(p) for p in hand] if isinstance(hand, list) else None})
        return {"round": view.get("round"), "rounds": view.get("rounds"),
                "moon": view.get("moon"), "owls": rows,
                "winners": [words.owl_name(w, lang) for w in view.get("winners") or []]}

    def mail_outcome(self, outcome: str, lang: str) -> str:
        return words.outcome_words(outcome, lang)[0]
