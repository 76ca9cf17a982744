"""Owl Dice in words: its owls, pellets, decisions, options and outcomes. Every English
string is a message id (the game is the tests' own, so it has no Polish: it is shown in
English)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from app.core.i18n import N_, translate

OWL_NAMES: Final = {"strix": N_("Strix"), "bubo": N_("Bubo"), "ninox": N_("Ninox"),
                    "tyto": N_("Tyto")}
GROUP_ORDER: Final = (N_("Moon"), N_("Hoots"))


def owl_name(owl: str | None, lang: str) -> str:
    return translate(lang, OWL_NAMES[owl]) if owl in OWL_NAMES else (owl or "?")


def card_name(card: str, lang: str) -> str:
    return translate(lang, "Pellet {n}", n=card)


def card_info(card: str, lang: str) -> dict[str, str]:
    return {"slug": f"pellet-{card}", "name": card_name(card, lang),
            "effect": translate(lang, "Worth {n} to its owl's sight.", n=card), "timing": ""}


def describe_option(option: str, view: Mapping[str, Any] | None, lang: str) -> str:
    """``roll`` and ``hoot <owl> <n>`` in words (several joined with ``;``)."""
    said = []
    for part in option.split(";"):
        words = part.split()
        if words == ["roll"]:
            said.append(translate(lang, "Roll the moon die"))
        elif len(words) == 3 and words[0] == "hoot":
            said.append(translate(lang, "{owl} hoots {n}", owl=owl_name(words[1], lang),
                                  n=words[2]))
        elif len(words) == 2 and words[0] == "hoot":
            said.append(translate(lang, "Hoot {n}", n=words[1]))
        else:
            said.append(part.strip())
    return "; ".join(said)


def option_group(option: str) -> str:
    return GROUP_ORDER[0] if option.startswith("roll") else GROUP_ORDER[1]


def decision_heading(pending: Mapping[str, Any], lang: str) -> str:
    if pending.get("kind") == "roll":
        return translate(lang, "Roll the moon")
    return translate(lang, "Hoot in secret")


def waiting_words(pending: Mapping[str, Any], lang: str) -> str:
    if pending.get("kind") == "roll":
        return translate(lang, "roll the moon")
    return translate(lang, "hoot")


def describe_decision(pending: Mapping[str, Any] | None, lang: str) -> str:
    if not pending:
        return translate(lang, "The game is over.")
    if pending.get("kind") == "roll":
        return translate(lang, "Round {round}: {owl} rolls the moon.",
                         round=pending.get("round"), owl=owl_name(pending.get("owl"), lang))
    return translate(lang, "Round {round}: the moon shows {moon}; every owl hoots 1 to 3 in "
                     "secret.", round=pending.get("round"), moon=pending.get("moon"))


def outcome_words(outcome: str, lang: str) -> tuple[str, list[str]]:
    words = outcome.split()
    if len(words) == 2 and words[0] == "moon":
        return translate(lang, "The moon shows {n}", n=words[1]), []
    return outcome, []


def changes(before: Mapping[str, Any], after: Mapping[str, Any],
            lang: str) -> tuple[list[str], list[str]]:
    """The scores that changed, in words (Owl Dice has no spaces to outline)."""
    said = []
    old = before.get("owls") or {}
    for name, owl in (after.get("owls") or {}).items():
        was = (old.get(name) or {}).get("score")
        if was is not None and owl.get("score") != was:
            said.append(translate(lang, "{owl}: score {before} → {after}",
                                  owl=owl_name(name, lang), before=was, after=owl.get("score")))
    return said, []
