"""Titan Race as the game service sees it (the :class:`app.games.base.Ruleset` protocol)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from app.core.i18n import N_
from app.games.apiwords import OLDER_PIECES, OLDER_TEAM, ApiWords
from app.games.base import (
    CONTINUES,
    EASY,
    PASSIVE_INPUTS,
    QUICK,
    TURN,
    BotLevel,
    ClockKind,
    SeatSetup,
    SetupError,
    rules_version,
)
from app.games.errors import EngineError
from app.games.placings import Placing, in_order, shared_places
from app.games.rng import Dealing
from app.games.seated import PiecePool, SeatedRuleset, deal_pieces

from .engine import ENGINE_VERSION, VARIANTS, Race, new_game
from .engine.bot import choose
from .engine.cards import TITANS
from .engine.circuits import resolve_circuit
from .engine.notation import VERBS, normalise
from .engine.race import check_teams
from .engine.search import BUDGETS, bot_answer
from .engine.standings import standings
from .engine.state import RaceState
from .engine.worlds import sample_world

SEAT_COUNTS: Final = {
    "standard": N_("a standard game has 3 to 6 players, not {seats}"),
    "two-player": N_("a two-player game has 2 players, not {seats}"),
    "teams": N_("a teams game has 4 or 6 players, not {seats}"),
    "grand-slam": N_("a grand-slam game has 3 to 6 players, not {seats}"),
}
"""The refusal of a wrong number of seats, by variant (the counts said as a person says them)."""


TITAN_POOL = PiecePool(
    TITANS, salt=0x7171, label="titans", unknown="unknown Titan '{piece}'; the Titans are {pool}",
    twice=N_("{titan} is chosen by two seats"), twice_field="titan",
    too_many=N_("a seat races {n} Titan(s) in this variant"))
"""The Titans a seat may choose, and the deal of those nobody chose."""


class TitanRaceRuleset(SeatedRuleset):
    """Titan Race through :mod:`app.games.titanrace.engine`."""

    normalise_input = staticmethod(normalise)
    input_words: tuple[str, ...] = VERBS

    name = "titan-race"
    version = ENGINE_VERSION
    window_kinds = ("react",)
    window_decline = "pass"
    standing_plays: ClassVar[Mapping[str, str]] = {
        card: f"play {card}" for card in ("last-shield", "repulse", "dispel")}
    variants: tuple[str, ...] = tuple(VARIANTS)
    api_words = ApiWords(
        variants="standard, two-player, teams, grand-slam",
        setup='{"circuits": [...]} (the circuits as in the older form)',
        older_setup="one circuit (three for Grand Slam), a built-in name or a circuit object: a "
        "circuit file's content as JSON (name, bonus, lava, pirates, ice, fire_statues, "
        "pentacle, multi_ramps, super_ramps), default kaldheira; never a file path",
        pieces='{"titans": [...], "team": n} (team only in a teams game)',
        older_pieces="the chosen Titan(s), and the team in a teams game",
        setup_example={"circuits": ["kaldheira"]}, pieces_example={"titans": ["rassik"]})
    default_circuits: tuple[str, ...] = ("kaldheira",)
    """The circuit a game is raced on when the creator names none."""
    most_seats = 6

    def game_word(self, kind: str, value: str, lang: str) -> str:
        """A die colour, a Titan or a Bonus card of a refusal, as the pages name them."""
        from .describe import card_name, colour_name, titan_name

        namer = {"die": colour_name, "titan": titan_name, "card": card_name}.get(kind)
        return namer(value, lang) if namer else value

    def default_setup(self, variant: str) -> dict[str, Any]:
        return {"circuits": list(self.default_circuits)}

    def check_setup(self, variant: str, setup: dict[str, Any]) -> None:
        """A setup is ``{"circuits": [...]}``: one circuit (a built-in name or an inline
        definition), or three for Grand Slam."""
        circuits = self._circuits(setup)
        if variant == "grand-slam" and len(circuits) != 3:
            raise SetupError("Grand Slam is raced over three circuits, one per lap")
        if len(circuits) not in (1, 3):
            raise SetupError("a game uses one circuit, or three for Grand Slam")
        for circuit in circuits:
            try:
                resolve_circuit(circuit)
            except EngineError as exc:
                raise SetupError(str(exc)) from None

    @staticmethod
    def _circuits(setup: dict[str, Any]) -> list[Any]:
        if not isinstance(setup, dict) or set(setup) != {"circuits"}:
            raise SetupError('a Titan Race setup is {"circuits": [...]}')
        circuits = setup["circuits"]
        if not isinstance(circuits, list):
            raise SetupError("a Titan Race setup's circuits are a list")
        return circuits

    def setup_from_circuits(self, circuits: list[Any]) -> dict[str, Any]:
        return {"circuits": list(circuits)}

    def circuits_of(self, setup: dict[str, Any]) -> list[Any]:
        return list(setup.get("circuits") or [])

    def pieces_from_fields(self, titans: list[str], team: int | None) -> dict[str, Any]:
        """``{"titans": [...]}``, with ``"team"`` only when the seat has one."""
        pieces: dict[str, Any] = {"titans": list(titans)}
        if team is not None:
            pieces["team"] = team
        return pieces

    def fields_of(self, pieces: dict[str, Any]) -> dict[str, Any]:
        return {OLDER_PIECES: list(pieces.get("titans") or []), OLDER_TEAM: pieces.get("team")}

    def piece_names(self, pieces: dict[str, Any]) -> list[str]:
        return list(pieces.get("titans") or [])

    @staticmethod
    def _asked(seat: SeatSetup) -> tuple[list[str], int | None]:
        """The Titans and team seat ``seat`` asked for (SetupError when its pieces are not a
        Titan Race seat's)."""
        pieces = seat.pieces
        if not isinstance(pieces, dict) or not set(pieces) <= {"titans", "team"}:
            raise SetupError(f'seat {seat.position + 1}: a Titan Race seat\'s pieces are '
                             '{"titans": [...], "team": n}')
        titans = pieces.get("titans") or []
        team = pieces.get("team")
        if not isinstance(titans, list) or not all(isinstance(t, str) for t in titans):
            raise SetupError(f"seat {seat.position + 1}: titans must be a list of Titan names")
        if team is not None and not isinstance(team, int):
            raise SetupError(f"seat {seat.position + 1}: team must be a number")
        return titans, team

    def seat_count(self, variant: str, seats: int) -> None:
        self.check_variant(variant)
        allowed = {"two-player": (2,), "teams": (4, 6)}.get(variant, (3, 4, 5, 6))
        if seats not in allowed:
            raise SetupError(SEAT_COUNTS[variant], seats=seats)

    def check_seats(self, variant: str, seats: list[SeatSetup]) -> None:
        self.seat_count(variant, len(seats))
        self._titans(seats, 2 if variant == "two-player" else 1, Dealing())
        if variant != "teams":
            return
        teams = [self._asked(s)[1] for s in seats]
        if any(team is None for team in teams):
            raise SetupError(N_("in a teams game every seat needs a team"), worded=True)
        sizes = {teams.count(team) for team in set(teams)}
        if len(sizes) != 1 or (len(seats), len(set(teams))) not in ((4, 2), (6, 2), (6, 3)):
            raise SetupError(N_("teams are 2 teams of 2 (4 players), or 2 of 3 or 3 of 2 (6 "
                                "players)"), worded=True)
        for i, team in enumerate(teams):
            if team == teams[(i + 1) % len(teams)]:
                raise SetupError(
                    N_("seats {first} and {second} are teammates: teammates may not sit next "
                       "to each other"), first=i + 1, second=(i + 1) % len(teams) + 1)

    def start(
        self, *, variant: str, setup: dict[str, Any], seats: list[SeatSetup], dealing: Dealing,
        version: int | None = None,
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        played_by = rules_version(self.name, version, self.version)
        circuits = self._circuits(setup)
        self.check_seats(variant, seats)
        asked = [self._asked(s) for s in seats]
        per_seat = 2 if variant == "two-player" else 1
        chosen = self._titans(seats, per_seat, dealing)
        if variant == "two-player":
            order = [chosen[0][0], chosen[1][0], chosen[0][1], chosen[1][1]]
        else:
            order = [titans[0] for titans in chosen]
        seat_teams = [team for _, team in asked]
        teams = None
        if variant == "teams":
            team_ids = sorted({team for team in seat_teams if team is not None})
            if len(team_ids) < 2 or any(team is None for team in seat_teams):
                raise SetupError(N_("in a teams game every seat needs a team"), worded=True)
            teams = [[chosen[i][0] for i, team in enumerate(seat_teams) if team == t]
                     for t in team_ids]
        anytime = [
            chosen[i][k] for i, s in enumerate(seats) if s.options.get("anytime_windows")
            for k in range(per_seat)
        ]
        try:
            boards = [resolve_circuit(c) for c in circuits]
            if teams is not None:
                check_teams(order, teams)
            race = new_game(
                order,
                circuits=boards,
                variant=variant,
                teams=teams,
                rng=dealing.source(),
                anytime_windows=anytime,
                version=played_by,
            )
        except EngineError as exc:
            raise SetupError(str(exc)) from None
        given = [self.pieces_from_fields(titans, team)
                 for titans, team in zip(chosen, seat_teams, strict=True)]
        return race.state.to_json(), given

    @classmethod
    def _titans(cls, seats: list[SeatSetup], per_seat: int, dealing: Dealing) -> list[list[str]]:
        """Each seat's Titans: its choice, else drawn at random from those nobody chose."""
        return deal_pieces(TITAN_POOL, [cls._asked(seat)[0] for seat in seats], per_seat,
                           dealing)

    def load(self, state: dict[str, Any]) -> Race:
        return Race(RaceState.from_json(state), initial={})

    def to_act(self, game: Race) -> list[int]:
        seat = game.seat_to_act()
        return [] if seat is None else [seat]

    def unseen(self, game: Race) -> int:
        """The face-down deck: a card drawn from it is in no outcome."""
        return len(game.state.deck)

    def options(self, game: Race, seat: int | None = None) -> list[str]:
        return game.options()

    def simultaneous(self, game: Race) -> bool:
        return False

    def pending(self, game: Race) -> dict[str, Any] | None:
        return game.pending()

    def view(self, game: Race, seat: int | None, spectator: bool) -> dict[str, Any]:
        if seat is None and not spectator:
            return game.view()
        return game.view(seat=seat, spectator=spectator)

    def winners(self, game: Race) -> list[str] | None:
        return list(game.state.winners) if game.is_over else None

    def placings(self, game: Race, seats: Mapping[int, Sequence[str]]) -> list[Placing]:
        """The winner's seat (or team) first, then the others by their rows to the finish,
        equal ones sharing a place (:mod:`.engine.standings`); each with its leading Titan's
        lap, rows to go and Life Points."""
        found = standings(game.state)
        places = shared_places({s.seat: s.key for s in found})
        return in_order([Placing(s.seat, places[s.seat],
                                 (("lap", s.lap), ("to_go", s.to_go), ("life", s.life)))
                         for s in found])

    def bot_move(self, game: Race, seat: int | None = None, level: BotLevel = EASY) -> str:
        """``easy``: the one-step heuristic; ``normal`` and ``strong``: the information-set
        search of :mod:`.engine.search` on their budgets. Each looks ahead in worlds sampled
        from the seat's view (:mod:`.engine.worlds`), never on the true state."""
        if level == EASY:
            return choose(game)
        return bot_answer(game, seat, level)

    def think_seconds(self, level: BotLevel) -> float:
        budget = BUDGETS.get(level)
        return 0.0 if budget is None or budget.seconds is None else budget.seconds

    def viewer_world(self, game: Race, seat: int) -> Race | None:
        """The computer players' sampled world (:func:`.engine.worlds.sample_world`), dealt
        from the seat's view."""
        world = sample_world(game.state, seat, self.viewer_random(game, seat))
        return None if world is None else Race(world, initial={})

    def timeout_move(self, game: Race, mode: str, seat: int | None = None) -> str:
        if mode == "pass":
            options = game.options()
            for passive in PASSIVE_INPUTS:
                if passive in options:
                    return passive
        return choose(game)

    def same_turn(self, first: dict[str, Any], now: dict[str, Any]) -> bool:
        """A Titan's turn is the pick of its die, the first round's start, its moves and its
        end."""
        return (now.get("kind") in ("start", "turn")
                and first.get("kind") in ("pick", "start", "turn")
                and now.get("titan") == first.get("titan"))

    def clock_kind(self, pending: dict[str, Any]) -> ClockKind:
        """Reactions and pirates are quick; a turn's start and moves go on after its pick."""
        kind = pending.get("kind")
        if kind in ("react", "pirates"):
            return QUICK
        return CONTINUES if kind in ("start", "turn") else TURN

    def redact_outcomes(self, outcomes: list[list[str]]) -> list[list[str]]:
        """Dice are public once rolled; a shuffled deck's order and a stolen card are not."""
        hidden = {"shuffle": "shuffle", "steal": "steal a card"}
        return [[hidden.get(o.split(" ", 1)[0], o) for o in part] for part in outcomes]

    def reveals_hidden(self, before: Race, after: Race) -> bool:
        """Besides the dice and shuffles of the random source: the face-down deck, whose
        drawn cards (in their drawer's hand) and reshuffles show in no outcome."""
        return (super().reveals_hidden(before, after)
                or before.state.deck != after.state.deck)

    def public_input(self, text: str) -> str:
        """Every Titan Race input is public."""
        return text
