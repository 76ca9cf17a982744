"""Move notation: normalising what a player typed, and explaining why an input is refused.

Parsing is kept apart from applying: an input is first brought to its canonical spelling
(``Move rr`` -> ``move RR``, ``trap c3`` -> ``trap C3``), and then it is legal exactly when it
is one of the options the engine lists for the pending decision.
"""

from __future__ import annotations

from typing import Final

from app.games.errors import InvalidInputError

from .cards import CARD_TIMING, CARDS, COLOURS, FACE_PATHS, TITANS

VERBS: Final = (
    "pick",
    "start",
    "move",
    "trap",
    "hit",
    "ability",
    "play",
    "discard",
    "reroll",
    "end",
    "pass",
    "lose",
)
DECISION_VERBS: Final = {
    "pick": ("pick",),
    "start": ("start",),
    "turn": ("move", "trap", "hit", "ability", "play", "discard", "reroll", "end"),
    "react": ("play", "pass"),
    "pirates": ("discard", "lose"),
}
_LOWER_WORDS: Final = frozenset((*VERBS, *COLOURS, *TITANS, *CARDS))


def normalise(text: str, legal: list[str] | None = None) -> str:
    """Canonical spelling of one input; raise InvalidInputError for what is not notation."""
    words = text.split()
    if not words:
        raise InvalidInputError("an empty input answers nothing", legal)
    verb = words[0].lower()
    if verb not in VERBS:
        raise InvalidInputError(
            f"'{words[0]}' is not a known input; inputs start with {', '.join(VERBS)}", legal
        )
    out = [verb]
    for word in words[1:]:
        low = word.lower()
        out.append(low if low in _LOWER_WORDS else word.upper())
    return " ".join(out)


def describe_decision(kind: str, titan: str | None, die: str | None = None) -> str:
    if kind == "pick":
        return f"{titan} must pick a die"
    if kind == "start":
        return f"{titan} must choose a start space"
    if kind == "turn":
        return f"it is {titan}'s turn with the {die} die"
    if kind == "react":
        return f"{titan}'s owner may react (play a card or pass)"
    if kind == "pirates":
        return f"pirates attack {titan}: discard a Bonus card or lose a Life Point"
    return "the game is over"


def explain_turn(
    words: list[str],
    *,
    die: str,
    moved: bool,
    first_round: bool,
    ability_used: bool,
    card_played: bool,
    rerolled: bool,
    hand: list[str],
    part_pending: bool,
) -> str:
    """Why a turn input that is not among the options is refused."""
    verb = words[0]
    if verb == "move":
        if moved:
            return "the die has already been moved this turn"
        paths = FACE_PATHS.get(die)
        allowed = ", ".join(paths) if paths else "the path of the face it imitates"
        return f"the {die} die moves {allowed}"
    if verb in ("trap", "hit"):
        return f"'{' '.join(words)}' is not a legal {verb} target for the {die} die now"
    if verb in ("ability", "play", "discard") and first_round:
        return "no Ability and no Bonus card may be used in the first round"
    if verb in ("ability", "play", "discard") and rerolled:
        return "after a pentacle reroll no Ability or Bonus card may be used this turn"
    if verb == "ability":
        return (
            "the Ability was already used this turn"
            if ability_used
            else (f"'{' '.join(words)}' is not a legal use of the Ability here")
        )
    if verb in ("play", "discard"):
        if card_played:
            return "only one Bonus card may be played (or discarded) per turn"
        card = words[1] if len(words) > 1 else ""
        if card not in CARD_TIMING:
            return f"'{card}' is not a Bonus card"
        if card not in hand:
            return f"{card} is not in the hand"
        if verb == "play" and CARD_TIMING[card] == "reaction":
            return f"{card} is a reaction card: it is played in another player's turn"
        return f"'{' '.join(words)}' has no legal target here"
    if verb == "end":
        if not moved:
            return "the turn cannot end before the die action is performed"
        if part_pending:
            return "the trap or damage of the die must be done first (a legal target exists)"
    if verb == "reroll":
        return "a reroll needs the die movement to have ended on the pentacle, its action done"
    return f"'{' '.join(words)}' is not legal now"
