"""Move notation: normalising what a player typed, and explaining why an input is refused.

Parsing is kept apart from applying: an input is first brought to its canonical spelling
(``Move rr`` -> ``move RR``, ``trap c3`` -> ``trap C3``), and then it is legal exactly when it
is one of the options the engine lists for the pending decision.
"""

from __future__ import annotations

from typing import Final

from app.games.errors import N_, InvalidInputError, Reason, Word

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
    return str(decision_reason(kind, titan, die))


def decision_reason(kind: str, titan: str | None, die: str | None = None) -> Reason:
    """The pending decision in words, as a :class:`Reason` (a clause of a refusal)."""
    who = Word("titan", str(titan))
    if kind == "pick":
        return Reason(N_("{titan} must pick a die"), {"titan": who})
    if kind == "start":
        return Reason(N_("{titan} must choose a start space"), {"titan": who})
    if kind == "turn":
        return Reason(N_("it is {titan}'s turn with the {die} die"),
                      {"titan": who, "die": Word("die", str(die))})
    if kind == "react":
        return Reason(N_("{titan}'s owner may react (play a card or pass)"), {"titan": who})
    if kind == "pirates":
        return Reason(N_("pirates attack {titan}: discard a Bonus card or lose a Life Point"),
                      {"titan": who})
    return Reason(N_("the game is over"))


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
) -> Reason:
    """Why a turn input that is not among the options is refused."""
    verb = words[0]
    said = {"input": " ".join(words)}
    colour = Word("die", die)
    if verb == "move":
        if moved:
            return Reason(N_("the die has already been moved this turn"))
        paths = FACE_PATHS.get(die)
        if not paths:
            return Reason(N_("the {die} die moves the path of the face it imitates"),
                          {"die": colour})
        return Reason(N_("the {die} die moves {paths}"), {"die": colour, "paths": ", ".join(paths)})
    if verb in ("trap", "hit"):
        template = (N_("'{input}' is not a legal trap target for the {die} die now")
                    if verb == "trap"
                    else N_("'{input}' is not a legal hit target for the {die} die now"))
        return Reason(template, {**said, "die": colour})
    if verb in ("ability", "play", "discard") and first_round:
        return Reason(N_("no Ability and no Bonus card may be used in the first round"))
    if verb in ("ability", "play", "discard") and rerolled:
        return Reason(N_("after a pentacle reroll no Ability or Bonus card may be used this turn"))
    if verb == "ability":
        return (Reason(N_("the Ability was already used this turn")) if ability_used
                else Reason(N_("'{input}' is not a legal use of the Ability here"), said))
    if verb in ("play", "discard"):
        return _card_reason(verb, words, card_played, hand)
    if verb == "end":
        if not moved:
            return Reason(N_("the turn cannot end before the die action is performed"))
        if part_pending:
            return Reason(N_("the trap or damage of the die must be done first (a legal target "
                             "exists)"))
    if verb == "reroll":
        return Reason(N_("a reroll needs the die movement to have ended on the pentacle, its "
                         "action done"))
    return Reason(N_("'{input}' is not legal now"), said)


def _card_reason(verb: str, words: list[str], card_played: bool, hand: list[str]) -> Reason:
    if card_played:
        return Reason(N_("only one Bonus card may be played (or discarded) per turn"))
    card = words[1] if len(words) > 1 else ""
    if card not in CARD_TIMING:
        return Reason(N_("'{input}' is not a Bonus card"), {"input": card})
    if card not in hand:
        return Reason(N_("{card} is not in the hand"), {"card": Word("card", card)})
    if verb == "play" and CARD_TIMING[card] == "reaction":
        return Reason(N_("{card} is a reaction card: it is played in another player's turn"),
                      {"card": Word("card", card)})
    return Reason(N_("'{input}' has no legal target here"), {"input": " ".join(words)})
