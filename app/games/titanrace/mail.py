"""Titan Race in its mails: what the mail templates (``templates/mail/``) show of a
decision, an option, the race and a random outcome. The words come from :mod:`.describe` (the
one wording of the game); what is here is only the shape the mail templates read.

:class:`app.games.titanrace.ui.TitanRaceUI` exposes these as the ``mail_*`` members of
:class:`app.games.ui.GameUI`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from app.core.i18n import translate

from . import describe as words

LAPS: Final = 3
PREVIEWED_VERBS: Final = ("move", "start", "ability", "play")
"""Options after which the acting Titan may stand elsewhere (worth a trial to show where)."""
NAMED_SPACE_VERBS: Final = ("trap", "hit")
"""Options whose first argument is a space they act on (outlined on the mail's board)."""
REPLY_EXAMPLES: Final = ("pick red", "move RR; end", "pass")


def mail_variant(variant: str, lang: str) -> str:
    """A variant as a mail's running text names it ("two players")."""
    english = words.MAIL_VARIANTS.get(variant)
    return translate(lang, english, context="variant") if english else variant


def mail_decision(pending: Mapping[str, Any], lang: str) -> dict[str, Any]:
    """The details of the pending decision the templates word themselves: the acting Titan,
    the die and its face, the die it imitates, a reaction's event and whose it is."""
    die = pending.get("die")
    by = pending.get("by")
    imitating = pending.get("imitating")
    return {
        "titan": words.titan_name(pending.get("titan"), lang),
        "die": words.colour_name(str(die), lang) if die else None,
        "face": words.face_words(str(die or ""), lang),
        "imitating": words.colour_name(str(imitating), lang) if imitating else None,
        "event": pending.get("event"),
        "by": words.titan_name(str(by), lang) if by else None,
    }


def mail_option(option: str, view: Mapping[str, Any],
                after: Callable[[], Mapping[str, Any] | None], lang: str) -> dict[str, Any]:
    """An option as a decision mail lists it: its words (a pick also says what the die's face
    does, since the mail shows no dice), where the acting Titan lands when that is certain
    (``dest``) and the space a trap or a hit names (``space``)."""
    pending = view.get("pending") or {}
    titan = pending.get("titan")
    verb, _, rest = option.partition(" ")
    args = rest.split()
    label = words.describe_option(option, lang, titan, pending.get("kind"))
    if verb == "pick" and args:
        face = words.face_words(args[0].lower(), lang)
        label = f"{label}: {face}" if face else label
    dest = _destination(view, after, titan) if verb in PREVIEWED_VERBS else None
    space = args[0].upper() if verb in NAMED_SPACE_VERBS and args else None
    return {"label": label, "dest": dest, "space": space}


def _destination(view: Mapping[str, Any], after: Callable[[], Mapping[str, Any] | None],
                 titan: Any) -> str | None:
    """Where the acting Titan ends up, when certain: ``after`` is None when chance is
    involved, and another player's window opening on the way leaves it open."""
    later = after()
    if later is None:
        return None
    pending = later.get("pending")
    if pending and pending.get("titan") != titan:
        return None
    before = ((view.get("titans") or {}).get(titan) or {}).get("space")
    space = ((later.get("titans") or {}).get(titan) or {}).get("space")
    return str(space) if space and space != before else None


def mail_situation(view: Mapping[str, Any], owners: Mapping[str, tuple[str, bool]],
                   lang: str) -> dict[str, Any]:
    """The race for the templates' situation section: the round, the dice on the table, each
    Titan's space, lap, life and cards (a hand is listed only where the view shows it)."""
    order = view.get("order") or list(view.get("titans", {}))
    titans = []
    for name in order:
        info = (view.get("titans") or {}).get(name)
        if info is None:
            continue
        player, you = owners.get(name, ("?", False))
        hand = info.get("hand")
        english = words.titan_name(name, "en")
        local = words.titan_name(name, lang)
        titans.append({
            "name": local,
            "alias": english if english != local else None,  # the picture names Titans in English
            "player": player,
            "you": you,
            "space": info.get("space"),
            "lap": min(int(info.get("lap") or 1), LAPS),
            "life": info.get("life"),
            "ko": bool(info.get("ko")),
            "cards": [words.card_name(c, lang) for c in hand] if isinstance(hand, list) else None,
            "card_count": len(hand) if isinstance(hand, list) else int(hand or 0),
        })
    winner = view.get("winner")
    return {
        "round": view.get("round"),
        "first_round": bool(view.get("first_round")),
        "dice": [words.colour_name(d, lang) for d in view.get("dice") or []],
        "titans": titans,
        "traps": len(view.get("traps") or []),
        "trap_supply": view.get("trap_supply"),
        "laps": LAPS,
        "winner": words.titan_name(str(winner), lang) if winner else None,
    }


OUTCOME_WORDS: Final = {"steal": "a card was stolen", "shuffle": "the deck was shuffled"}


def mail_outcome(outcome: str, lang: str) -> str:
    """A random outcome in a mail's list of recent moves ("dice: blue, red")."""
    head, _, rest = outcome.partition(" ")
    if head in ("roll", "reroll", "pentacle"):
        faces = ", ".join(words.colour_name(w, lang) for w in rest.split())
        return f"{translate(lang, 'dice')}: {faces}"
    if head in OUTCOME_WORDS:
        return translate(lang, OUTCOME_WORDS[head])
    return outcome
