"""The Great Race in its mails: the ``mail_*`` members of :class:`app.games.ui.GameUI`, as a
mixin of :class:`app.games.greatrace.ui.GreatRaceUI`. The words come from :mod:`.describe` (the one
wording of the game); this module gives them the shape the Great Race's mail templates
(``app/games/greatrace/templates/mail/``, one set for every language: their own words go through
``tr()``) read.

A plan mail offers a few plans as one-click links, not the 56 legal splits: the computer's plan
for the reader's crew and two balanced ones (:func:`plan_choices`); any other split is a reply
(``plan P2 M2 S1``) or the game page away.

Nothing here reads anything the reader's view does not show: another crew's hand is a count
there and its plan is not in it before the reveal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from app.core.i18n import NC_, translate

from . import describe as words

REPLY_EXAMPLES: Final = ("plan P2 M2 S1", "take guide", "drive", "go E4", "pass")
BALANCED_PLANS: Final = ("P1 M2 S1 F1", "P2 M1 S1 F1", "P1 M1 S1 F2")
"""Plans a plan mail suggests besides the computer's (the first two not already offered)."""
PLAN_LINKS: Final = 3
MAIL_VARIANTS: Final = {"standard": NC_("variant", "standard"),
                        "leaders": NC_("variant", "with the Leader module")}
"""The variant's words in a mail ("a game of The Great Race, standard"), translated where shown."""
SPACE_VERBS: Final = ("go", "guard", "place")
"""Options whose spaces the mail's board outlines."""
GAUGE_KEYS: Final = ("money", "petrol", "engine", "chassis")


def plan_of(option: str) -> str:
    """A plan option without its crew, as a player replies it: ``plan P1 M2 S1 F1``."""
    parts = option.split()
    if len(parts) > 1 and parts[0] == "plan" and parts[1] in words.CREW_NAMES:
        return " ".join([parts[0], *parts[2:]])
    return option


def _split(plan: str) -> str:
    """A plan in the engine's spelling (``P M S F``, zeros left out)."""
    return " ".join(part for part in plan.split() if not part.endswith("0"))


def plan_choices(options: Sequence[str], suggested: str | None) -> list[str]:
    """The plans a plan mail offers: the computer's, then balanced ones, each once and legal."""
    by_split = {plan_of(o).removeprefix("plan ").strip(): o for o in options}
    chosen: list[str] = []
    if suggested and suggested in options:
        chosen.append(suggested)
    for split in BALANCED_PLANS:
        option = by_split.get(_split(split))
        if option is not None and option not in chosen and len(chosen) < PLAN_LINKS:
            chosen.append(option)
    return chosen


class GreatRaceMail:
    """The Great Race's ``mail_*`` members of :class:`app.games.ui.GameUI`."""

    reply_examples: tuple[str, ...] = REPLY_EXAMPLES

    def mail_variant(self, variant: str, lang: str) -> str:
        english = MAIL_VARIANTS.get(variant)
        return translate(lang, english, context="variant") if english else variant

    def mail_decision(self, pending: Mapping[str, Any], lang: str) -> dict[str, Any]:
        """The deciding crew, the question's heading, the DANGER of an avoid decision and
        whether the crew's sequence has begun."""
        crew = pending.get("crew")
        kind = pending.get("kind")
        return {
            "crew": words.crew_name(str(crew) if crew else None, lang),
            "heading": words.decision_heading(pending, lang),
            "danger": words.danger_words(pending, lang) if kind == "avoid" else None,
            "begun": bool(pending.get("begun")),
            "limit": pending.get("limit"),
            "amount": pending.get("amount"),
        }

    def mail_choices(self, options: Sequence[str], view: Mapping[str, Any],
                     suggest: Callable[[], str | None]) -> list[str]:
        if str((view.get("pending") or {}).get("kind")) == "plan":
            return plan_choices(options, suggest())
        return list(options)

    def mail_option(self, option: str, view: Mapping[str, Any],
                    after: Callable[[], Mapping[str, Any] | None], lang: str) -> dict[str, Any]:
        """Its words, the reply that plays it (a plan without its crew) and the space it names
        (outlined on the board); where a drive ends is the space it names, so the engine is
        not asked (a drive may draw tiles)."""
        verb = option.split(" ", 1)[0].lower()
        spaces = words.option_targets(option, view) if verb in SPACE_VERBS else []
        return {
            "label": words.describe_option(option, view, lang),
            "reply": plan_of(option),
            "dest": None,
            "space": spaces[-1] if spaces else None,
        }

    def mail_situation(self, view: Mapping[str, Any], owners: Mapping[str, tuple[str, bool]],
                       lang: str) -> dict[str, Any]:
        """The race as the reader sees it: each crew's place and gauges, the reader's own
        hand (another's is a count), the dashboards once revealed, the market and, at the
        end, the prestige scores."""
        crews = view.get("crews") or {}
        order = list(view.get("track") or []) + [c for c in crews if c not in
                                                   (view.get("track") or [])]
        rows = [self._crew_row(crew, crews[crew], owners, lang) for crew in order
                if isinstance(crews.get(crew), Mapping)]
        winners = view.get("winners") or ([view["winner"]] if view.get("winner") else [])
        return {
            "turn": view.get("turn"),
            "phase": view.get("phase"),
            "start": words.city_name(str(view.get("start") or "")),
            "finish": words.city_name(str(view.get("finish") or "")),
            "crews": rows,
            "market": [words.card_name(str(c), lang) for c in view.get("market") or []],
            "bag": view.get("bag"),
            "deck": view.get("deck"),
            "scores": self._scores(view, owners, lang),
            "winners": [words.crew_name(str(w), lang) for w in winners],
        }

    @staticmethod
    def _crew_row(crew: str, info: Mapping[str, Any], owners: Mapping[str, tuple[str, bool]],
                  lang: str) -> dict[str, Any]:
        player, you = owners.get(crew, ("?", False))
        hand = info.get("hand")
        assistants = info.get("assistants")
        boxes = ([words.box_count(box, int(n), lang) for box, n in assistants.items() if n]
                 if isinstance(assistants, Mapping) else None)
        return {
            "name": words.crew_name(crew, lang),
            "player": player,
            "you": you,
            "place": words.place_name(str(info["space"])) if info.get("space") else None,
            **{key: info.get(key) for key in GAUGE_KEYS},
            "cards": ([words.card_name(str(c), lang) for c in hand]
                      if isinstance(hand, list) else None),
            "card_count": len(hand) if isinstance(hand, list) else int(hand or 0),
            "assistants": boxes,
            "planned": bool(info.get("planned")),
            "passed": bool(info.get("passed")),
            "finished": info.get("finished"),
        }

    @staticmethod
    def _scores(view: Mapping[str, Any], owners: Mapping[str, tuple[str, bool]],
                lang: str) -> list[dict[str, Any]] | None:
        scores = view.get("scores")
        if not isinstance(scores, Mapping):
            return None
        rows = []
        for crew, parts in scores.items():
            if not isinstance(parts, Mapping):
                continue
            player, you = owners.get(str(crew), ("?", False))
            info = (view.get("crews") or {}).get(crew)
            arrived = info.get("finished") if isinstance(info, Mapping) else None
            rows.append({"name": words.crew_name(str(crew), lang), "player": player,
                         "you": you, "arrived": arrived} | {
                             key: parts.get(key) for key in
                             ("place", "engine", "chassis", "money", "total")})
        return sorted(rows, key=lambda row: -int(row.get("total") or 0))

    def mail_outcome(self, outcome: str, lang: str) -> str:
        return words.outcome_words(outcome, lang)[0]
