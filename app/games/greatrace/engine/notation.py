"""The Great Race move notation (docs/great-race-engine.md): parse and normalise inputs.

Nothing here needs a state: :func:`normalise` checks the form of one input and writes it the one
canonical way, so two spellings of the same answer compare equal.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

from app.games.errors import N_, InvalidInputError

from .board import CITY, SPACES, Space, parse_space
from .pieces import ALL_CARDS, ASSISTANTS, BOXES, CREWS, TILES, TOOLBOX_GAIN, Box, Card

SIMPLE: Final = ("leader", "scout", "draw", "repair", "drive", "fund", "pass", "stop", "done")
VERBS: Final = (
    "take",
    "discard",
    "plan",
    "buy",
    "play",
    "guard",
    "place",
    "go",
    "damage",
    "keep",
    *SIMPLE,
)
DECISION_VERBS: Final[dict[str, tuple[str, ...]]] = {
    "take": ("take",),
    "discard": ("discard", "play"),
    "plan": ("plan",),
    "turn": ("buy", "play", "leader", "scout", "draw", "repair", "drive", "guard", "fund", "pass"),
    "place": ("place",),
    "drive": ("go", "play", "leader", "stop"),
    "repair": ("play", "buy", "done"),
    "avoid": ("play", "guard", "take"),
    "damage": ("damage",),
    "keep": ("keep",),
}
DECISION_TEXT: Final[dict[str, str]] = {
    "take": N_("take a card from the market (take <card>)"),
    "discard": N_("discard down to the hand limit (discard <card>, or play jerrycan)"),
    "plan": N_("place its 5 assistants (plan <crew> P<n> M<n> S<n> F<n>)"),
    "turn": N_("play its convoy sequence (buy petrol, play cards, then an assistant action or "
               "pass)"),
    "place": N_("place the drawn terrain tiles (place <tile> <space>)"),
    "drive": N_("go on driving (go <space>, play guide/transport/jerrycan, leader, or stop)"),
    "repair": N_("go on repairing (play spare-parts/toolbox/jerrycan, buy E/C, or done)"),
    "avoid": N_("avoid a DANGER (play militia, guard) or take it"),
    "damage": N_("split the damage between ENGINE and CHASSIS (damage E<n> C<n>)"),
    "keep": N_("keep two of the Tracker's cards (keep <card> <card>)"),
}

_BOX = re.compile(r"([pmsf])(\d+)")
_PART = re.compile(r"([ec])(\d+)")
_ORDER: Final = {space: i for i, space in enumerate(SPACES)}


def _bad(message: str) -> InvalidInputError:
    return InvalidInputError(message)


def _card(word: str) -> Card:
    if word not in ALL_CARDS:
        raise _bad(f"'{word}' is not a resource card; the cards are {', '.join(ALL_CARDS)}")
    return word


def _space(word: str) -> Space:
    space = parse_space(word)
    if space is None:
        raise _bad(f"'{word}' is not a space of the board (A1 to K15, sea excluded)")
    return space


def _crew(word: str) -> str:
    if word not in CREWS:
        raise _bad(f"'{word}' is not a crew; the crews are {', '.join(CREWS)}")
    return word


def _count(word: str, what: str) -> int:
    if not word.isdigit():
        raise _bad(f"'{word}' is not a number of {what}")
    return int(word)


def _spaces_in_order(words: list[str]) -> list[Space]:
    spaces = [_space(w) for w in words]
    if len(set(spaces)) != len(spaces):
        raise _bad("name two different spaces")
    return sorted(spaces, key=_ORDER.__getitem__)


def split_text(parts: dict[str, int], letters: str) -> str:
    """``E1 C2`` style text, zero parts left out (``C2``)."""
    return " ".join(f"{letter}{parts[letter]}" for letter in letters if parts.get(letter))


def parse_parts(words: list[str], letters: str, what: str) -> dict[str, int]:
    """Parse ``E1 C2`` (or ``P1 M2 ...``) words into counts per letter; ValueError-free: raises
    :class:`InvalidInputError` with a message naming ``what``."""
    pattern = _PART if letters == "EC" else _BOX
    parts = dict.fromkeys(letters, 0)
    seen: set[str] = set()
    for word in words:
        match = pattern.fullmatch(word)
        if match is None:
            allowed = " ".join(f"{letter}<n>" for letter in letters)
            raise _bad(f"'{word}' is not part of {what} (write {allowed})")
        letter = match.group(1).upper()
        if letter in seen:
            raise _bad(f"{letter} is given twice in {what}")
        seen.add(letter)
        parts[letter] = int(match.group(2))
    return parts


def plan_boxes(words: list[str]) -> dict[Box, int]:
    """The box counts of a plan's words (``P1 M2 F2``): they must add up to 5."""
    boxes = parse_parts(words, "".join(BOXES), "a plan")
    if sum(boxes.values()) != ASSISTANTS:
        raise _bad(
            f"a plan places exactly {ASSISTANTS} assistants (P, M, S and F add up to "
            f"{ASSISTANTS}); this one places {sum(boxes.values())}"
        )
    return boxes


def plan_text(crew: str, boxes: dict[Box, int]) -> str:
    return f"plan {crew} {split_text(boxes, ''.join(BOXES))}"


def damage_text(engine: int, chassis: int) -> str:
    return f"damage {split_text({'E': engine, 'C': chassis}, 'EC')}"


def toolbox_text(engine: int, chassis: int) -> str:
    return f"play toolbox {split_text({'E': engine, 'C': chassis}, 'EC')}"


def _play(words: list[str]) -> str:
    if not words:
        raise _bad("play what? Name a card (play <card>)")
    card, args = _card(words[0]), words[1:]
    if card == "saboteur":
        if len(args) != 1:
            raise _bad("name the Saboteur's target crew (play saboteur <crew>)")
        return f"play saboteur {_crew(args[0])}"
    if card in ("trail-hunter", "con-artist"):
        wanted = "1 or 2" if card == "trail-hunter" else "2"
        if len(args) not in ((1, 2) if card == "trail-hunter" else (2,)):
            raise _bad(f"name {wanted} tile spaces (play {card} <space> <space>)")
        return f"play {card} {' '.join(_spaces_in_order(args))}"
    if card == "spare-parts":
        if len(args) != 1 or args[0] not in ("e", "c"):
            raise _bad("name the gauge the Spare Parts repairs (play spare-parts E or C)")
        return f"play spare-parts {args[0].upper()}"
    if card == "toolbox":
        parts = parse_parts(args, "EC", "a toolbox split")
        if parts["E"] + parts["C"] != TOOLBOX_GAIN:
            raise _bad(f"a Toolbox adds {TOOLBOX_GAIN} levels: E and C add up to {TOOLBOX_GAIN}")
        return toolbox_text(parts["E"], parts["C"])
    if args:
        raise _bad(f"play {card} takes no argument")
    return f"play {card}"


def _damage(words: list[str]) -> str:
    parts = parse_parts(words, "EC", "a damage split")
    if parts["E"] + parts["C"] == 0:
        raise _bad("say where the damage goes (damage E<n> C<n>)")
    return damage_text(parts["E"], parts["C"])


def _go(words: list[str]) -> str:
    if len(words) != 1:
        raise _bad("go where? Name one space (go <space>)")
    city = CITY.get(words[0])
    return f"go {city.space if city else _space(words[0])}"


def _one(verb: str, words: list[str], what: str) -> str:
    if len(words) != 1:
        raise _bad(f"{verb} takes one {what}")
    return words[0]


def normalise(text: str) -> str:
    """The canonical form of one input; :class:`InvalidInputError` when it is not notation."""
    words = text.strip().lower().split()
    if not words:
        raise _bad("empty input")
    verb, args = words[0], words[1:]
    if verb in SIMPLE:
        if args:
            raise _bad(f"'{verb}' takes no argument")
        return verb
    if verb == "take":
        return "take" if not args else f"take {_card(_one('take', args, 'card'))}"
    if verb == "discard":
        return f"discard {_card(_one('discard', args, 'card'))}"
    if verb == "plan":
        if not args:
            raise _bad("plan <crew> P<n> M<n> S<n> F<n>")
        if _BOX.fullmatch(args[0]):
            return f"plan {split_text(plan_boxes(args), ''.join(BOXES))}"
        return plan_text(_crew(args[0]), plan_boxes(args[1:]))
    if verb == "buy":
        what = _one("buy", args, "number of petrol levels, or E or C")
        if what in ("e", "c"):
            return f"buy {what.upper()}"
        count = _count(what, "petrol levels")
        if count < 1:
            raise _bad("buy at least 1 petrol level")
        return f"buy {count}"
    if verb == "play":
        return _play(args)
    if verb == "guard":
        return "guard" if not args else f"guard {_space(_one('guard', args, 'space'))}"
    if verb == "place":
        if len(args) != 2:
            raise _bad("place <tile> <space>")
        if args[0] not in TILES:
            raise _bad(f"'{args[0]}' is not a terrain tile; the tiles are {', '.join(TILES)}")
        return f"place {args[0]} {_space(args[1])}"
    if verb == "go":
        return _go(args)
    if verb == "damage":
        return _damage(args)
    if verb == "keep":
        if not 1 <= len(args) <= 2:
            raise _bad("keep <card> <card>")
        return "keep " + " ".join(sorted(_card(w) for w in args))
    raise _bad(f"'{verb}' is not an input; the inputs begin with {', '.join(VERBS)}")


def plan_of(text: str) -> tuple[str, dict[Box, int]]:
    """The crew and boxes of a canonical ``plan`` input."""
    words = text.split()
    return words[1], plan_boxes([w.lower() for w in words[2:]])


def all_plans(crew: str) -> list[str]:
    """The 56 ways to place 5 assistants in the 4 boxes, as canonical inputs (a fresh list of
    texts worked out once per crew: the searching players ask for them very often)."""
    return list(_all_plans(crew))


@cache
def _all_plans(crew: str) -> tuple[str, ...]:
    plans = []
    for p in range(ASSISTANTS + 1):
        for m in range(ASSISTANTS + 1 - p):
            for s in range(ASSISTANTS + 1 - p - m):
                f = ASSISTANTS - p - m - s
                plans.append(plan_text(crew, {"P": p, "M": m, "S": s, "F": f}))
    return tuple(plans)
