"""Every word the Great Race board picture draws (:data:`WORDS`), in the picture's language."""

from __future__ import annotations

from typing import Final

from app.core.i18n import N_, NC_, translate

WORDS: Final[dict[str, tuple[str | None, str]]] = {
    # Translators: the picture's heading (the pages and mails name the game in English).
    "title": ("board picture", NC_("board picture", "The Great Race")),
    "turn": (None, N_("turn")),
    "phase.bivouac": (None, N_("bivouac")),
    "phase.planning": (None, N_("planning")),
    "phase.convoy": (None, N_("convoy")),
    "phase.over": (None, N_("game over")),
    "order": (None, N_("order")),
    "waiting": (None, N_("waiting for")),
    # Translators: the pending decision named in a word or two, after "waiting for: crews".
    "pending.take": ("pending decision", NC_("pending decision", "take a card")),
    "pending.discard": ("pending decision", NC_("pending decision", "discard")),
    "pending.plan": ("pending decision", NC_("pending decision", "plan")),
    "pending.turn": ("pending decision", NC_("pending decision", "sequence")),
    "pending.place": ("pending decision", NC_("pending decision", "place tiles")),
    "pending.drive": ("pending decision", NC_("pending decision", "drive")),
    "pending.repair": ("pending decision", NC_("pending decision", "repair")),
    "pending.avoid": ("pending decision", NC_("pending decision", "danger")),
    "pending.damage": ("pending decision", NC_("pending decision", "damage")),
    "pending.keep": ("pending decision", NC_("pending decision", "keep cards")),
    # Translators: a crew named by its nationality on the board picture ("the French").
    "crew.french": ("great race crew", NC_("great race crew", "French")),
    "crew.belgian": ("great race crew", NC_("great race crew", "Belgian")),
    "crew.italian": ("great race crew", NC_("great race crew", "Italian")),
    "crew.english": ("great race crew", NC_("great race crew", "English")),
    # Translators: one letter for each box of a crew's dashboard, before its assistants' count
    # ("P2 M1 S0 F2"), the first letter of the box's name (Pathfinder, Mechanics, Security,
    # Funding): Polish Z (zwiadowcy), M (mechanicy), O (ochrona), F (finanse).
    "box.P": ("great race box letter", NC_("great race box letter", "P")),
    "box.M": ("great race box letter", NC_("great race box letter", "M")),
    "box.S": ("great race box letter", NC_("great race box letter", "S")),
    "box.F": ("great race box letter", NC_("great race box letter", "F")),
    "petrol": (None, N_("petrol")),
    "engine": ("great race gauge", NC_("great race gauge", "engine")),
    "chassis": ("great race gauge", NC_("great race gauge", "chassis")),
    "cards": (None, N_("cards")),
    "planned": (None, N_("planned")),
    "planning": (None, N_("planning…")),
    "passed": (None, N_("passed")),
    "leader": (None, N_("leader used")),
    # Translators: a crew that has reached the finish city (followed by its place).
    "finished": ("great race crew", NC_("great race crew", "finished")),
    "track": (None, N_("progression")),
    "progress": (None, N_("prog.")),
    "bag": (None, N_("tiles in bag")),
    "deck": (None, N_("cards in deck")),
    "discard": (None, N_("discarded")),
    "market": (None, N_("market")),
    "drawn": (None, N_("to place")),
    "winner": (None, N_("winner")),
    "money": (None, N_("money")),
    # Translators: the columns of the final score table.
    "score.place": ("great race score", NC_("great race score", "place")),
    "score.engine": ("great race score", NC_("great race score", "engine")),
    "score.chassis": ("great race score", NC_("great race score", "chassis")),
    "score.money": ("great race score", NC_("great race score", "money")),
    "score.total": ("great race score", NC_("great race score", "total")),
    # Translators: the tags on the start and finish cities of the map.
    "start": ("great race city", NC_("great race city", "start")),
    "finish": ("great race city", NC_("great race city", "finish")),
    # Translators: the same tags where a terminal's map cell holds 5 letters at most.
    "start.short": ("great race city, 5 letters", NC_("great race city, 5 letters", "start")),
    "finish.short": ("great race city, 5 letters", NC_("great race city, 5 letters", "end")),
    # Translators: the heading of the map's legend (what its colours and signs mean).
    "legend": (None, N_("legend")),
    "legend.terrain": ("map legend", NC_("map legend", "terrain")),
    "legend.risk": ("map legend", NC_("map legend", "risk zone: +1 petrol")),
    "legend.tile": ("map legend", NC_("map legend", "tile: petrol, damage")),
    "legend.danger": ("map legend", NC_("map legend", "danger")),
    "legend.stop": ("map legend", NC_("map legend", "stop")),
    "legend.city": ("map legend", NC_("map legend", "city: cards drawn")),
    "legend.sea": ("map legend", NC_("map legend", "sea line")),
    "legend.air": ("map legend", NC_("map legend", "air line")),
    "card.trail-hunter": ("great race card", NC_("great race card", "Trail Hunter")),
    "card.financial": ("great race card", NC_("great race card", "Financial")),
    "card.jerrycan": ("great race card", NC_("great race card", "Jerrycan")),
    "card.refueling-station": ("great race card", NC_("great race card", "Refueling Station")),
    "card.transport": ("great race card", NC_("great race card", "Transport")),
    "card.spare-parts": ("great race card", NC_("great race card", "Spare Parts")),
    "card.toolbox": ("great race card", NC_("great race card", "Toolbox")),
    "card.guide": ("great race card", NC_("great race card", "Guide")),
    "card.militia": ("great race card", NC_("great race card", "Militia")),
    "card.driver": ("great race card", NC_("great race card", "Driver")),
    "card.cartographer": ("great race card", NC_("great race card", "Cartographer")),
    "card.saboteur": ("great race card", NC_("great race card", "Saboteur")),
    "card.tracker": ("great race card", NC_("great race card", "Tracker")),
    "card.con-artist": ("great race card", NC_("great race card", "Con Artist")),
    "card.repairman": ("great race card", NC_("great race card", "Repairman")),
    "card.topographer": ("great race card", NC_("great race card", "Topographer")),
}
"""Every word the picture (and :mod:`app.games.greatrace.textboard`) draws, by key: its gettext
context and its English message id, translated by :func:`word` through :mod:`app.core.i18n`. A
context tells apart a word the catalogue also holds with another sense ("drive" as a pending
decision, not as what a player is waited for to do); the card names are the ones the pages and
mails use."""


def word(lang: str, key: str) -> str:
    """The word ``key`` in ``lang`` (English for a language without a catalogue; the key's tail
    for an unknown key)."""
    found = WORDS.get(key)
    if found is None:
        return key.rpartition(".")[2]
    context, english = found
    return translate(lang, english, context=context)


def box_letter(lang: str, box: str) -> str:
    """A dashboard box's letter in ``lang`` (the engine's notation keeps P, M, S, F)."""
    return word(lang, f"box.{box}")


def crew_name(lang: str, crew: str) -> str:
    return word(lang, f"crew.{crew}") if f"crew.{crew}" in WORDS else crew.capitalize()
