"""A finished game's ranking, every seat's place and score, as each game's rules give it
(:meth:`app.games.base.Ruleset.placings`) and as every channel words it: the game page, the
game-over mail, the command line and the API show the same numbers.

A :class:`Placing` is neutral: a seat, its place (seats the rules leave tied share one: 1st,
2nd, 2nd, 4th), the parts of its score as (label id, value) pairs that the game's UI words
(:meth:`app.games.ui.GameUI.score_part`), and for a seat the rules give no place, the label id
of why (:meth:`app.games.ui.GameUI.unplaced`). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar

from app.core.i18n import NC_, translate

K = TypeVar("K", bound=Hashable)

ORDINAL: Final = "ordinal"
"""The catalogue context of a place in words."""
ORDINALS: Final = (NC_("ordinal", "{n}st"), NC_("ordinal", "{n}nd"), NC_("ordinal", "{n}rd"),
                   NC_("ordinal", "{n}th"))
"""A place in words, by English's rule (1st, 2nd, 3rd, 4th... 11th, 12th, 13th, 21st); the
catalogue of another language gives each its own form (Polish: "{n}.")."""


class GameUI(Protocol):
    """What the results need of a game's :class:`app.games.ui.GameUI` (named here, not
    imported: the UI's module reads the registry, which reads the ruleset protocol)."""

    def piece_name(self, piece: str | None, lang: str) -> str: ...

    def score_part(self, label: str, value: int, lang: str) -> str: ...

    def unplaced(self, note: str, lang: str) -> str: ...


@dataclass(frozen=True)
class Placing:
    """Seat ``position``'s result: ``place`` (1 for the first; None when the rules give it
    none, ``note`` saying why), and its score's ``parts`` as (label id, value) pairs."""

    position: int
    place: int | None
    parts: tuple[tuple[str, int], ...] = ()
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"position": self.position, "place": self.place,
                "parts": [{"id": label, "value": value} for label, value in self.parts],
                "note": self.note}


def shared_places(keys: Mapping[int, K]) -> dict[int, int]:
    """Each seat's place by its key (the lower, the better; comparable keys): one more than
    the number of seats with a lower key, so equal keys share a place (1, 2, 2, 4)."""
    ordered: list[Any] = sorted(keys.values())
    return {position: 1 + sum(1 for other in ordered if other < key)
            for position, key in keys.items()}


def in_order(placings: Sequence[Placing]) -> list[Placing]:
    """Placings by place, then by seat; those without a place last."""
    return sorted(placings, key=lambda p: (p.place is None, p.place or 0, p.position))


def winners_first(winners: Sequence[str] | None,
                  seats: Mapping[int, Sequence[str]]) -> list[Placing]:
    """The ranking of rules that name only the winners (``winners``, their pieces): the seats
    playing one share the first place, the others share the next. Empty while the game runs."""
    if winners is None:
        return []
    won = set(winners)
    places = shared_places({position: 0 if won & set(pieces) else 1
                            for position, pieces in seats.items()})
    return in_order([Placing(position, place) for position, place in places.items()])


def ordinal(place: int, lang: str) -> str:
    """``place`` in words: "2nd" (Polish "2.")."""
    if 11 <= place % 100 <= 13 or not 1 <= place % 10 <= 3:
        form = ORDINALS[3]
    else:
        form = ORDINALS[place % 10 - 1]
    return translate(lang, form, context=ORDINAL, n=place)


def result_rows(places: Sequence[Mapping[str, Any]], ui: GameUI, names: Mapping[int, str],
                pieces: Mapping[int, Sequence[str]], you: int | None,
                lang: str) -> list[dict[str, Any]]:
    """The rows of a results table from the API's ``result.places``: ``place`` (a number or
    None), ``ordinal`` (its words, or the game's words for why it has none), ``name``,
    ``pieces`` (their names), ``score`` (the parts in words, joined), ``mine``."""
    rows = []
    for entry in places:
        position = int(entry["position"])
        place = entry.get("place")
        rows.append({
            "position": position,
            "place": place,
            "ordinal": place_words(entry, ui, lang),
            "name": names.get(position, "?"),
            "pieces": [ui.piece_name(piece, lang) for piece in pieces.get(position, ())],
            "score": ", ".join(ui.score_part(str(part["id"]), int(part["value"]), lang)
                               for part in entry.get("parts") or []),
            "mine": position == you,
        })
    return rows


def place_words(entry: Mapping[str, Any], ui: GameUI, lang: str) -> str:
    """A seat's place (an entry of the API's ``result.places``) in words: "2nd", or why it has
    none."""
    place = entry.get("place")
    if place is None:
        return ui.unplaced(str(entry.get("note") or ""), lang)
    return ordinal(int(place), lang)


def your_place(places: Sequence[Mapping[str, Any]], you: int | None, ui: GameUI,
               lang: str) -> str | None:
    """The reader's result in a sentence ("You placed 2nd."); None for a reader without a
    seat, or before the end."""
    entry = next((e for e in places if e.get("position") == you), None)
    if entry is None:
        return None
    if entry.get("place") is None:
        return translate(lang, "You have no place: {why}.",
                         why=ui.unplaced(str(entry.get("note") or ""), lang))
    return translate(lang, "You placed {place}.", place=ordinal(int(entry["place"]), lang))
