"""The Great Race as the game service sees it (the :class:`app.games.base.Ruleset` protocol).

The planning phase is a simultaneous secret decision: every crew still racing owes a plan at
once. The service seals each seat's plan (:meth:`GreatRaceRuleset.own_input`) and applies them
all as one log entry when the last is in, so no plan reaches anyone before the reveal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from app.core.i18n import N_
from app.games.apiwords import OLDER_PIECES, OLDER_TEAM, ApiWords
from app.games.base import (
    CONTINUES,
    EASY,
    QUICK,
    TURN,
    BotLevel,
    ClockKind,
    SeatSetup,
    SetupError,
    rules_version,
)
from app.games.errors import EngineError
from app.games.greatrace.engine.board import PURPLE
from app.games.greatrace.engine.bot import choose
from app.games.greatrace.engine.game import GREAT_RACE_VERSION, GreatRace
from app.games.greatrace.engine.notation import VERBS, normalise, plan_of
from app.games.greatrace.engine.options import ranking, top_decision
from app.games.greatrace.engine.pieces import BOXES, CREWS
from app.games.greatrace.engine.search import BUDGETS, sample_world, search_move
from app.games.greatrace.engine.state import PLANNING, PUBLIC_FLOW
from app.games.placings import Placing
from app.games.rng import Dealing
from app.games.seated import PiecePool, SeatedRuleset, SecretDecision, deal_pieces

VARIANTS: tuple[str, ...] = ("standard", "leaders")
"""``leaders``: the Leader module and its two Topographer cards (docs/great-race-rules.md 8)."""

PASS_PLAN = "F5"
"""The plan given for a crew whose time ran out when the clock's action is ``pass``: every
assistant on FUNDING, the plan that moves nothing and risks nothing."""

CONVOY_KINDS = frozenset({"turn", "place", "drive", "repair", "avoid", "damage", "keep"})
"""The decisions that make up one crew's convoy sequence (a timeout plays the rest of it)."""

PASSIVE = {"turn": "pass", "drive": "stop", "repair": "done", "avoid": "take"}
"""What a ``pass`` timeout answers where the decision can be declined."""


SCORE_PARTS = ("place", "engine", "chassis", "money")
"""The parts of a finisher's prestige (docs/great-race-rules.md 9), after its total and the
place it arrived in."""
NOT_FINISHED = "not_finished"
"""Why a crew has no place: it did not finish (only finishers score)."""


CREW_POOL = PiecePool(
    CREWS, salt=0x6A7E, label="crews", unknown="unknown crew '{piece}'; the crews are {pool}",
    twice=N_("the {crew} crew is chosen by two seats"), twice_field="crew")
"""The crews a seat may choose, and the deal of those nobody chose."""


class GreatRaceRuleset(SeatedRuleset):
    """The Great Race through :mod:`app.games.greatrace.engine`."""

    normalise_input = staticmethod(normalise)
    input_words: tuple[str, ...] = VERBS

    name = "great-race"
    window_kinds = ("avoid",)
    window_decline = "take"
    standing_plays: ClassVar[Mapping[str, str]] = {"militia": "play militia", "guard": "guard"}
    version = GREAT_RACE_VERSION
    variants: tuple[str, ...] = VARIANTS
    secret = SecretDecision(kind="plan", pieces="crews", piece="crew", answered="planned")
    api_words = ApiWords(
        variants="standard, leaders (the Leader module)",
        setup='{"start": "alger"}', older_setup="the start city, alger (default) or le-cap",
        pieces='{"crew": "french"}', older_pieces="the chosen crew, alone in the list",
        setup_example={"start": "alger"}, pieces_example={"crew": "french"})
    most_seats = len(CREWS)

    def game_word(self, kind: str, value: str, lang: str) -> str:
        """A crew, a card or a dashboard box of a refusal, as the pages name them (a crew in
        the middle of a sentence: "ekipa francuska")."""
        from .describe import box_name, card_name, crew_name

        if kind == "crew":
            name = crew_name(value, lang)
            return name[:1].lower() + name[1:]
        if kind == "box":
            return box_name(value[:1], lang).upper()
        return card_name(value, lang) if kind == "card" else value

    def default_setup(self, variant: str) -> dict[str, Any]:
        """A Great Race starts in the first purple city unless the creator names another."""
        return {"start": PURPLE[0]}

    def check_setup(self, variant: str, setup: dict[str, Any]) -> None:
        """A setup is ``{"start": city}``, one of the purple cities of the Africa board."""
        self.check_variant(variant)
        self._start(setup)

    @staticmethod
    def _start(setup: dict[str, Any]) -> str:
        start = setup.get("start") if isinstance(setup, dict) else None
        if not isinstance(setup, dict) or set(setup) != {"start"} or start not in PURPLE:
            raise SetupError(
                f"a Great Race starts in one of the purple cities: {' or '.join(PURPLE)}")
        return str(start)

    def setup_from_circuits(self, circuits: list[Any]) -> dict[str, Any]:
        """The older form was the start city alone in a list, ``["alger"]``."""
        if len(circuits) != 1:
            raise SetupError(
                f"a Great Race starts in one of the purple cities: {' or '.join(PURPLE)}")
        return {"start": circuits[0]}

    def circuits_of(self, setup: dict[str, Any]) -> list[Any]:
        return [setup["start"]] if "start" in setup else []

    def pieces_from_fields(self, titans: list[str], team: int | None) -> dict[str, Any]:
        """``{"crew": name}`` (the older form held it as ``titans = [name]``); a team, or more
        than one crew, is kept for :meth:`check_seats` to refuse."""
        pieces: dict[str, Any] = {}
        if titans:
            pieces["crew"] = titans[0] if len(titans) == 1 else list(titans)
        if team is not None:
            pieces["team"] = team
        return pieces

    def fields_of(self, pieces: dict[str, Any]) -> dict[str, Any]:
        return {OLDER_PIECES: self.piece_names(pieces), OLDER_TEAM: None}

    def piece_names(self, pieces: dict[str, Any]) -> list[str]:
        crew = pieces.get("crew")
        return [crew] if isinstance(crew, str) else []

    def check_seats(self, variant: str, seats: list[SeatSetup]) -> None:
        self.check_variant(variant)
        if not 2 <= len(seats) <= len(CREWS):
            raise SetupError(f"a Great Race has 2 to {len(CREWS)} players, not {len(seats)}")
        self._crews(seats, Dealing())

    @staticmethod
    def _crews(seats: list[SeatSetup], dealing: Dealing) -> list[str]:
        """Each seat's crew: its choice, else drawn at random from those nobody chose."""
        asked: list[list[str]] = []
        for seat in seats:
            pieces = seat.pieces
            if not isinstance(pieces, dict) or not set(pieces) <= {"crew", "team"}:
                raise SetupError(f'seat {seat.position + 1}: a Great Race seat\'s pieces are '
                                 '{"crew": name}')
            if pieces.get("team") is not None:
                raise SetupError("The Great Race has no teams")
            crew = pieces.get("crew")
            if crew is not None and not isinstance(crew, str):
                raise SetupError("a seat races one crew in The Great Race")
            asked.append([crew] if crew is not None else [])
        return [pieces[0] for pieces in deal_pieces(CREW_POOL, asked, 1, dealing)]

    def start(
        self, *, variant: str, setup: dict[str, Any], seats: list[SeatSetup], dealing: Dealing,
        version: int | None = None,
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        rules = rules_version(self.name, version, self.version)
        self.check_setup(variant, setup)
        self.check_seats(variant, seats)
        chosen = self._crews(seats, dealing)
        try:
            game = GreatRace.new(chosen, start=self._start(setup),
                                 leaders=variant == "leaders", rng=dealing.source(),
                                 version=rules)
        except EngineError as exc:
            raise SetupError(str(exc)) from None
        return game.state.to_json(), [{"crew": crew} for crew in chosen]

    def load(self, state: dict[str, Any]) -> GreatRace:
        return GreatRace.from_state(state)

    def to_act(self, game: GreatRace) -> list[int]:
        return game.to_act()

    def options(self, game: GreatRace, seat: int | None = None) -> list[str]:
        return game.options(None if seat is None else game.crew_of(seat))

    def simultaneous(self, game: GreatRace) -> bool:
        pending = game.pending()
        return pending is not None and pending.get("kind") == "plan"

    def pending(self, game: GreatRace) -> dict[str, Any] | None:
        """The pending decision without options (they are asked for per seat)."""
        pending = game.pending()
        if pending is None:
            return None
        return {k: v for k, v in pending.items() if k != "options"}

    def view(self, game: GreatRace, seat: int | None, spectator: bool) -> dict[str, Any]:
        return game.view(seat=seat, spectator=spectator)

    def answer_piece(self, option: str) -> str:
        return plan_of(option)[0]

    def show_own_answer(self, pieces: dict[str, Any], own: str) -> None:
        """The viewer's own sealed plan shows as its crew's assistants."""
        crew, boxes = plan_of(own)
        if crew in pieces:
            pieces[crew]["assistants"] = {box: boxes.get(box, 0) for box in BOXES}

    def winners(self, game: GreatRace) -> list[str] | None:
        return list(game.winners) if game.is_over else None

    def placings(self, game: GreatRace, seats: Mapping[int, Sequence[str]]) -> list[Placing]:
        """The finishers by prestige, 1st, 2nd... (a tie in prestige goes to the earlier
        finisher: no place is shared), each with its prestige and its parts; then the crews
        that did not finish, without a place (``not_finished``)."""
        st = game.state
        found = []
        for crew in ranking(st):
            state = st.crews[crew]
            score = (st.scores or {}).get(crew)
            if state.finished is None or score is None:
                found.append(Placing(state.seat, None, note=NOT_FINISHED))
                continue
            found.append(Placing(state.seat, len(found) + 1, (
                ("prestige", score["total"]), ("arrived", state.finished),
                *((part, score[part]) for part in SCORE_PARTS))))
        return found

    def bot_move(self, game: GreatRace, seat: int | None = None, level: BotLevel = EASY) -> str:
        """Easy: the cost-to-go heuristic; normal and strong: its information-set search."""
        if level == EASY:
            return choose(game, None if seat is None else game.crew_of(seat))
        return search_move(game, seat, level)

    def think_seconds(self, level: BotLevel) -> float:
        budget = BUDGETS.get(level)
        return 0.0 if budget is None or budget.seconds is None else budget.seconds

    def viewer_world(self, game: GreatRace, seat: int) -> GreatRace | None:
        """The search's sampled world (:func:`.engine.search.sample_world`), dealt from the
        seat's view."""
        return sample_world(game, seat, self.viewer_random(game, seat))

    def timeout_move(self, game: GreatRace, mode: str, seat: int | None = None) -> str:
        crew = None if seat is None else game.crew_of(seat)
        pending = game.pending() or {}
        kind = pending.get("kind")
        if mode == "pass":
            if kind == "plan" and crew is not None:
                return game.own_input(game.seat_of(crew), f"plan {PASS_PLAN}")
            passive = PASSIVE.get(str(kind))
            if passive is not None and passive in game.options(crew):
                return passive
        return choose(game, crew)

    def same_turn(self, first: dict[str, Any], now: dict[str, Any]) -> bool:
        """A crew's convoy sequence is one turn for the clock: its decisions (drive, place,
        repair, damage...) go on under the deadline the sequence began with."""
        return (first.get("kind") in CONVOY_KINDS and now.get("kind") in CONVOY_KINDS
                and now.get("crew") == first.get("crew"))

    def clock_kind(self, pending: dict[str, Any]) -> ClockKind:
        """Avoiding a danger card another crew played is an out-of-turn reaction (quick); the
        steps of a convoy sequence after its first go on under the sequence's deadline."""
        kind = pending.get("kind")
        if kind == "avoid" and pending.get("crew") != pending.get("active"):
            return QUICK
        if kind in CONVOY_KINDS and (kind != "turn" or pending.get("begun")):
            return CONTINUES
        return TURN

    def redact_outcomes(self, outcomes: list[list[str]]) -> list[list[str]]:
        """Tiles drawn from the bag and cards dealt face up are public; a card drawn into a
        hand and the order of a shuffle are not."""
        hidden = {"card": "card", "shuffle": "shuffle"}
        return [[hidden.get(o.split(" ", 1)[0], o) for o in part] for part in outcomes]

    def unseen(self, game: GreatRace) -> int:
        """The inputs applied to ``game`` that met chance or hidden information (the state's
        ``looks``): a tile or a card drawn (each pile pre-shuffled: a draw takes no new
        chance but shows what lay face down), the sealed plans revealed, and, under the rules
        before version 3, another crew's decision asked or skipped because of the cards it
        held. The engine counts them as it applies inputs and never stores the count: only
        the states of one run of inputs compare, as a submission's do input by input
        (:class:`app.games.base.SendersInputs`: the inputs after such an input were sent
        without knowing what it met); :meth:`reveals_hidden` compares states built apart, so
        it does not read it."""
        return game.state.looks

    def reveals_hidden(self, before: GreatRace, after: GreatRace) -> bool:
        """The random source drawn from (a shuffle); a tile drawn from the bag or a card from
        the deck; the sealed plans revealed (the planning phase left: every crew's plan is
        public); or another crew than the one whose decision ``before`` waited for answered
        from its hidden cards since (a computer's avoid, discard or sequence tells what it
        holds): from rules version 3 on each crew counts such answers (``hand_answers``);
        under earlier rules, a card gone from another crew's hand says so."""
        was, now = before.state, after.state
        if (was.rng.to_json() != now.rng.to_json() or was.bag != now.bag
                or was.deck != now.deck or (was.phase == PLANNING and now.phase != PLANNING)):
            return True
        decision = was.window if was.window is not None else top_decision(was)
        movers = set(decision["crews"]) if decision is not None else set()
        others = [name for name in now.crews if name not in movers]
        if was.version >= PUBLIC_FLOW:
            return any(now.crews[name].hand_answers != was.crews[name].hand_answers
                       for name in others)
        return any(Counter(was.crews[name].hand) - Counter(now.crews[name].hand)
                   for name in others)

    def public_input(self, text: str) -> str:
        """An input as other players may read it: the cards kept from a Tracker stay secret."""
        parts = []
        for part in text.split(";"):
            words = part.split()
            parts.append("keep 2 cards" if words and words[0] == "keep" else part.strip())
        return "; ".join(parts)
