"""Owl Dice's notation: ``roll`` (the round's lead owl rolls the moon die) and ``hoot <owl> <n>``
(an owl's secret call of 1 to 3, sealed until every owl has hooted; a seat sends ``hoot <n>``,
which the ruleset names its owl in)."""

from __future__ import annotations

from typing import Final

from app.games.errors import N_, InvalidInputError, Reason

from .state import OWLS

VERBS: Final = ("roll", "hoot")
HOOTS: Final = (1, 2, 3)


def normalise(text: str) -> str:
    """One input in its canonical form (lower case, single spaces); InvalidInputError for
    anything that is not an input of the notation."""
    words = text.strip().lower().split()
    if words == ["roll"]:
        return "roll"
    if (2 <= len(words) <= 3 and words[0] == "hoot" and words[-1] in {str(n) for n in HOOTS}
            and (len(words) == 2 or words[1] in OWLS)):
        return " ".join(words)
    raise InvalidInputError(Reason(N_("'{input}' is not an input of this game"),
                                   {"input": text.strip()}))
