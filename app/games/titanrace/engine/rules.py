"""The rules of Titan Race as a deterministic state machine.

A :class:`Resolver` runs one input against a :class:`RaceState` copy. Resolution may need a
decision from another player in the middle (a reaction window, a pirate attack); the resolver
then raises :class:`~app.games.logged.Suspend` with that decision. The games' kit
(:func:`app.games.logged.run_input`) keeps the state as it is at that point (for display)
together with the state before the input, and resumes by running the same input again from that
base state with the answers given so far (:func:`~app.games.logged.resume`): every random draw
comes from the state's own generator, so the re-run reaches the same point and goes one decision
further.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from app.games.errors import EngineError, ScenarioError
from app.games.logged import Suspend

from .cards import (
    ALL_PATHS,
    ANY_TIME_CARDS,
    CARD_TIMING,
    COLOURS,
    FACE_PATHS,
    PATH_FACE,
    TITAN_COLOUR,
    start_life,
)
from .circuits import (
    BONUS,
    FIRE_STATUE,
    ICE,
    LAVA,
    MULTI_RAMP,
    PENTACLE,
    PIRATES,
    SUPER_RAMP,
)
from .geometry import (
    ALL_DIRECTIONS,
    BACKWARD,
    FORWARD,
    OPPOSITE,
    ROWS,
    START_SPACES,
    Pos,
    location,
    parse_space,
    pos_name,
    step,
)
from .state import OVER, PICK, START, TURN, RaceState, TitanState, TurnState

TRAP_TOKENS = 15
WINNING_Y = 3 * ROWS
PUBLIC_WINDOWS = 2
"""The first rules version whose reaction windows open on public facts alone: for a Titan whose
owner holds at least one card, whichever cards (RULINGS 6); before it, a window opened only for
the holder of a card that fits, which told everyone what the hand held."""
"""A Titan whose progress reaches this (lap counter 4) has finished its third lap."""

Decision = dict[str, Any]


class GameOver(Exception):
    """A Titan finished its third lap: the game ends at once."""


class Repulsed(Exception):
    """A push was refused with Repulse: the whole movement ends at once."""


@dataclass
class Context:
    """What one input's resolution carries besides the state."""

    answers: list[str]
    cursor: int = 0
    outcomes: list[str] = field(default_factory=list)
    """Random outcomes produced, in order (dice rolls, shuffles, stolen cards)."""
    transit: set[str] = field(default_factory=set)
    """Titans between two spaces while what stands in front of them is pushed away."""
    windows: bool = True

    def ask(self, decision: Decision) -> str:
        if self.cursor < len(self.answers):
            answer = self.answers[self.cursor]
            self.cursor += 1
            if answer not in decision["options"]:
                raise EngineError(f"recorded answer '{answer}' does not fit {decision['kind']}")
            return answer
        raise Suspend(decision)


@dataclass
class Movement:
    """Bookkeeping for one movement: who was pushed (each loses one Life Point once), who was
    already offered a window (at most once per movement) and whose push costs nothing."""

    pushed: set[str] = field(default_factory=set)
    asked: set[str] = field(default_factory=set)
    shield: set[str] = field(default_factory=set)


@dataclass
class Reactions:
    """What the targets of an Ability or card answered in their windows."""

    cancelled: bool = False
    shielded: set[str] = field(default_factory=set)
    repulsed: set[str] = field(default_factory=set)


def trap_supply(st: RaceState) -> int:
    return TRAP_TOKENS - len(st.traps)


def turn_titan(st: RaceState) -> TitanState:
    return st.titans[st.order[st.turn_index]]


class Resolver:
    """Applies inputs to a state it owns; see the module docstring for suspension."""

    def __init__(self, st: RaceState, answers: list[str] | None = None) -> None:
        self.st = st
        self.ctx = Context(list(answers or []))
        self.scope: set[str] = set()
        """Titans already offered a window in the event or movement being resolved."""
        self.shields: set[str] = set()
        """Titans whose Last Shield, played in this event's window, keeps every Life Point the
        event would cost them (rules version 2: a targeting Ability or card is one event with
        what it does)."""

    @property
    def public_windows(self) -> bool:
        """Whether windows open on public facts alone (rules version 2 on)."""
        return self.st.version >= PUBLIC_WINDOWS

    @contextmanager
    def scoped(self, asked: set[str] | None = None) -> Iterator[set[str]]:
        """Resolve a new event (or movement): each Titan may be offered one window in it."""
        saved, saved_shields = self.scope, self.shields
        if asked is None or asked is not saved:
            self.scope = asked if asked is not None else set()
            self.shields = set()
        try:
            yield self.scope
        finally:
            self.scope, self.shields = saved, saved_shields

    # ------------------------------------------------------------------ board queries

    def titan_at(self, pos: Pos) -> TitanState | None:
        rows = self.st.cycle_rows
        loc = location(pos, rows)
        for t in self.st.titans.values():
            if t.pos is not None and location(t.pos, rows) == loc:
                return t
        return None

    def occupant(self, pos: Pos) -> TitanState | None:
        """The Titan a mover entering ``pos`` must push: Titans still waiting for the spaces in
        front of them to clear are not in the way (a chain can wrap round a whole column)."""
        rows = self.st.cycle_rows
        loc = location(pos, rows)
        transit = self.ctx.transit
        for t in self.st.titans.values():
            if t.pos is not None and location(t.pos, rows) == loc and t.name not in transit:
                return t
        return None

    def feature(self, pos: Pos) -> str | None:
        st = self.st
        board = st.circuits[(pos[1] // ROWS) % len(st.circuits)]
        return board.by_index[(pos[1] % ROWS) * 6 + pos[0]]

    def ramp_dir(self, pos: Pos) -> str | None:
        st = self.st
        board = st.circuits[(pos[1] // ROWS) % len(st.circuits)]
        return board.ramp_dir[(pos[1] % ROWS) * 6 + pos[0]]

    def has_trap(self, pos: Pos) -> bool:
        return location(pos, self.st.cycle_rows) in self.st.traps

    def near(self, t: TitanState, directions: Iterable[str]) -> list[tuple[str, Pos]]:
        assert t.pos is not None
        return [(d, step(t.pos, d)) for d in directions]

    def find(self, t: TitanState, directions: Iterable[str], name: str) -> tuple[str, Pos]:
        """The space called ``name`` among those of a zone around ``t`` (names are unique there)."""
        for d, pos in self.near(t, directions):
            if pos_name(pos) == name:
                return d, pos
        raise EngineError(f"{name} is not next to {t.name}")

    def damageable(self, pos: Pos) -> bool:
        """A space a hit can affect: a Titan that is not KO, or a trap."""
        x = self.titan_at(pos)
        return (x is not None and not x.ko) or self.has_trap(pos)

    # ------------------------------------------------------------------ life

    def can_react(self, x: TitanState) -> bool:
        """Whether ``x``'s owner may still be offered a window in the current event."""
        st = self.st
        if not self.ctx.windows or st.round <= 1 or x.pos is None or st.phase == OVER:
            return False
        return x.name not in self.scope

    def asks(self, x: TitanState, fitting: list[str]) -> bool:
        """Whether ``x``'s owner is offered a window for an event that ``fitting`` cards would
        answer: from rules version 2 whenever the hand holds any card (its size is public, its
        cards are not), before that only when a fitting card is in it."""
        if self.public_windows:
            return bool(x.hand)
        return any(card in x.hand for card in fitting)

    def out_of_turn(self, x: TitanState) -> bool:
        """Last Shield and Repulse answer what happens in another player's turn."""
        return x.seat != turn_titan(self.st).seat

    def lose(self, x: TitanState, *, window: bool = True) -> None:
        """``x`` loses one Life Point unless KO (immune); Last Shield may prevent it."""
        if x.ko or x.name in self.shields:
            return
        if window and self.can_react(x) and self.out_of_turn(x) and self.asks(x, ["last-shield"]):
            fits = [c for c in ("last-shield",) if c in x.hand]
            if self.offer(x, fits, "damage", None) == "last-shield":
                return
            if x.ko:
                return
        x.life -= 1
        if x.life <= 0:
            x.life = 0
            x.ko = True
            x.ko_passed = False

    def gain(self, x: TitanState, amount: int) -> None:
        if not x.ko:
            x.life = min(6, x.life + amount)

    # ------------------------------------------------------------------ reactions

    def any_time_options(self, x: TitanState) -> list[str]:
        options: list[str] = []
        for card in ANY_TIME_CARDS:
            if card in x.hand:
                options += [f"play {card} {a}".rstrip() for a in self.card_args(x, card)]
        return options

    def offer(self, x: TitanState, matches: list[str], event: str, by: str | None) -> str | None:
        """Open a reaction window for ``x``; return the card its owner played, if any."""
        self.scope.add(x.name)
        options = [f"play {card}" for card in matches] + self.any_time_options(x) + ["pass"]
        decision = {"kind": "react", "titan": x.name, "event": event, "by": by, "options": options}
        answer = self.ctx.ask(decision)
        if answer == "pass":
            return None
        words = answer.split()
        card = words[1]
        x.hand.remove(card)
        self.st.discard.append(card)
        if card in ANY_TIME_CARDS:
            self.play_card(x, card, words[2:])
        return card

    def target_windows(
        self,
        actor: TitanState,
        targets: Iterable[TitanState | None],
        *,
        lossy: bool = False,
        pushes: bool = False,
        moves: bool = False,
    ) -> Reactions:
        """Offer windows to the owners of Titans another player's Ability or card targets.

        Dispel always fits; Last Shield when the effect costs the target Life Points (``lossy``)
        in another player's turn, and from rules version 2 also when it moves the target
        (``moves``: the spaces it enters may cost some), keeping every point the event would
        cost; Repulse when it pushes the target (``pushes``).
        """
        reactions = Reactions()
        for x in targets:
            if x is None or x.seat == actor.seat or not self.can_react(x):
                continue
            fitting = self.target_fits(x, lossy=lossy, pushes=pushes, moves=moves)
            if not self.asks(x, fitting):
                continue
            card = self.offer(x, [c for c in fitting if c in x.hand], "target", actor.name)
            if card == "dispel":
                reactions.cancelled = True
                return reactions
            if card == "last-shield":
                reactions.shielded.add(x.name)
                if self.public_windows:
                    self.shields.add(x.name)
            elif card == "repulse":
                reactions.repulsed.add(x.name)
        return reactions

    def target_fits(self, x: TitanState, *, lossy: bool, pushes: bool,
                    moves: bool) -> list[str]:
        """The reaction cards that would answer an effect targeting ``x`` (held or not)."""
        away = self.out_of_turn(x)
        costly = lossy or (moves and self.public_windows)
        fitting = ["dispel"]
        if costly and away and not x.ko:
            fitting.append("last-shield")
        if pushes and away:
            fitting.append("repulse")
        return fitting

    def strike(self, x: TitanState | None, reactions: Reactions) -> None:
        """The direct Life Point an Ability or card costs a target already offered its window."""
        if x is not None and x.name not in reactions.shielded:
            self.lose(x, window=False)

    def turn_start_windows(self, t: TitanState) -> None:
        """RULINGS 6b: players who asked may play an any-time card as another turn starts."""
        st = self.st
        names = list(st.titans)
        start = names.index(t.name)
        for name in names[start + 1 :] + names[:start]:
            x = st.titans[name]
            if not x.anytime_windows or x.pos is None or x.seat == t.seat:
                continue
            options = self.any_time_options(x)
            if not (x.hand if self.public_windows else options):
                continue
            decision = {
                "kind": "react",
                "titan": x.name,
                "event": "turn-start",
                "by": t.name,
                "options": [*options, "pass"],
            }
            answer = self.ctx.ask(decision)
            if answer != "pass":
                words = answer.split()
                x.hand.remove(words[1])
                st.discard.append(words[1])
                self.play_card(x, words[1], words[2:])

    # ------------------------------------------------------------------ movement

    def move(self, t: TitanState, steps: list[str], *, own_power: bool, length: int = 1,
             event: bool = False) -> None:
        """Move ``t`` step by step; stops early on a KO, ice or a Repulse.

        ``event``: the movement is what an Ability or card targeting ``t`` does, one event with
        its targeting from rules version 2 (whoever was offered a window for it is not asked
        again on the way)."""
        mv = Movement(asked=self.scope if event and self.public_windows else set())
        was_ko = t.ko
        with self.scoped(mv.asked), suppress(Repulsed):
            for d in steps:
                if t.ko != was_ko or not self.step(mv, t, d, own_power=own_power, length=length):
                    break

    def step(self, mv: Movement, t: TitanState, d: str, *, own_power: bool, length: int) -> bool:
        assert t.pos is not None
        if own_power:
            feature = self.feature(t.pos)
            if feature == SUPER_RAMP and self.ramp_dir(t.pos) == d:
                length += 2
            elif feature == MULTI_RAMP and d in FORWARD:
                length += 1
        return self.arrive(mv, t, step(t.pos, d, length), d)

    def arrive(self, mv: Movement, t: TitanState, dest: Pos, d: str) -> bool:
        """``t`` enters ``dest`` heading ``d``: push, effects, ice slide.

        Returns False when ``t``'s displacement must stop: it was knocked out on the way (a Titan
        already KO is still pushed and slides), or an ice slide ended.
        """
        slid = False
        was_ko = t.ko
        while True:
            other = self.occupant(dest)
            if other is not None and other is not t:
                self.ctx.transit.add(t.name)
                try:
                    self.push(mv, t, other, d)
                finally:
                    self.ctx.transit.discard(t.name)
                if t.ko != was_ko:
                    return False
            t.pos = dest
            if dest[1] >= WINNING_Y:
                self.win(t)
            self.spring_trap(t)
            feature = self.feature(dest)
            if feature == ICE:
                if t.ko != was_ko:
                    return False
                dest = step(dest, d)
                slid = True
                continue
            if feature is not None:
                self.space_effect(t, feature)
            return not (slid or t.ko != was_ko)

    def push(self, mv: Movement, pusher: TitanState, x: TitanState, d: str) -> None:
        first = x.name not in mv.pushed
        if self.can_react(x) and self.out_of_turn(x):
            fitting = ["repulse", "last-shield"] if first and not x.ko else ["repulse"]
            if self.asks(x, fitting):
                card = self.offer(x, [c for c in fitting if c in x.hand], "push", pusher.name)
                if card == "repulse":
                    raise Repulsed
                if card == "last-shield":
                    mv.shield.add(x.name)
        mv.pushed.add(x.name)
        assert x.pos is not None
        self.arrive(mv, x, step(x.pos, d), d)
        if first and x.name not in mv.shield:
            self.lose(x, window=False)

    def spring_trap(self, t: TitanState) -> None:
        assert t.pos is not None
        loc = location(t.pos, self.st.cycle_rows)
        if loc in self.st.traps:
            self.st.traps.discard(loc)
            self.lose(t)

    def space_effect(self, t: TitanState, feature: str) -> None:
        if feature == LAVA:
            self.lose(t)
        elif feature == PIRATES:
            self.pirates(t)
        elif feature == FIRE_STATUE:
            self.blast(t)
        elif feature == BONUS:
            self.draw(t)

    def swap(self, a: TitanState, x: TitanState, d: str) -> None:
        """Craken's swap: not a movement (no push, no slide) but both enter their new spaces."""
        assert a.pos is not None and x.pos is not None
        a.pos = step(a.pos, d)
        x.pos = step(x.pos, OPPOSITE[d])
        for t in (a, x):
            assert t.pos is not None
            if t.pos[1] >= WINNING_Y:
                self.win(t)
        for t in (a, x):
            assert t.pos is not None
            self.spring_trap(t)
            feature = self.feature(t.pos)
            if feature is not None and feature != ICE:
                self.space_effect(t, feature)

    def win(self, t: TitanState) -> None:
        """``t`` finished: the race ends at once (a trap token a Titan stands on is cleared)."""
        st = self.st
        for x in st.titans.values():
            if x.pos is not None:
                st.traps.discard(location(x.pos, st.cycle_rows))
        st.winner = t.name
        if st.teams is not None:
            team = next(team for team in st.teams if t.name in team)
            st.winners = [name for name in st.titans if name in team]
        else:
            st.winners = [name for name, x in st.titans.items() if x.seat == t.seat]
        st.phase = OVER
        st.window = None
        raise GameOver

    # ------------------------------------------------------------------ circuit effects

    def pirates(self, x: TitanState) -> None:
        """Discard a card or lose a Life Point, as the Titan's owner chooses (RULINGS 5)."""
        if x.ko:
            return
        if not x.hand:
            self.lose(x, window=False)
            return
        options = [f"discard {card}" for card in x.hand] + ["lose"]
        answer = self.ctx.ask({"kind": "pirates", "titan": x.name, "options": options})
        if answer == "lose":
            self.lose(x, window=False)
        else:
            card = answer.split()[1]
            x.hand.remove(card)
            self.st.discard.append(card)

    def blast(self, t: TitanState) -> None:
        for _, pos in self.near(t, ALL_DIRECTIONS):
            self.st.traps.discard(location(pos, self.st.cycle_rows))
            x = self.titan_at(pos)
            if x is not None and x is not t:
                self.lose(x)

    def draw(self, t: TitanState) -> None:
        st = self.st
        if len(t.hand) >= 2:
            return
        if not st.deck:
            if not st.discard:
                return
            st.deck = st.discard
            st.discard = []
            st.rng.shuffle(st.deck, "deck")
            self.ctx.outcomes.append("shuffle " + " ".join(st.deck))
        t.hand.append(st.deck.pop(0))

    def place_trap(self, pos: Pos, reactions: Reactions | None = None) -> None:
        """A trap token on ``pos``: it springs at once on a Titan, and is lost on lava.

        ``reactions`` is given when the target's window was already offered (Ability, card).
        """
        x = self.titan_at(pos)
        if x is not None:
            if reactions is None:
                self.lose(x)
            else:
                self.strike(x, reactions)
        elif self.feature(pos) != LAVA:
            self.st.traps.add(location(pos, self.st.cycle_rows))

    def damage_space(self, pos: Pos, reactions: Reactions | None = None) -> None:
        """One damage on a space: a trap there is destroyed, a Titan there loses a point."""
        self.st.traps.discard(location(pos, self.st.cycle_rows))
        x = self.titan_at(pos)
        if x is not None:
            if reactions is None:
                self.lose(x)
            else:
                self.strike(x, reactions)

    # ------------------------------------------------------------------ dice

    def roll(self, dice: int, label: str) -> list[str]:
        st = self.st
        if st.forced_rolls:
            faces = st.forced_rolls.pop(0)
            if len(faces) != dice:
                raise ScenarioError(
                    f"a scripted roll lists {len(faces)} dice where {dice} are rolled"
                )
        else:
            faces = [COLOURS[st.rng.below(6, "dice")] for _ in range(dice)]
        self.ctx.outcomes.append(f"{label} {' '.join(faces)}")
        return list(faces)

    # ------------------------------------------------------------------ Abilities and cards

    def ability_args(self, a: TitanState, kind: str) -> list[str]:
        """Every argument string with which ``a`` may use ``kind``'s Ability now."""
        if kind == "grinder":
            if trap_supply(self.st) == 0:
                return []
            return [pos_name(p) for _, p in self.near(a, ALL_DIRECTIONS) if not self.has_trap(p)]
        if kind == "rassik":
            behind = any(self.titan_at(p) for _, p in self.near(a, BACKWARD))
            return list(FORWARD) if behind else []
        if kind == "craken":
            return [pos_name(p) for _, p in self.near(a, ALL_DIRECTIONS) if self.titan_at(p)]
        if kind == "ragnarok":
            return [
                f"{pos_name(p)} {d}"
                for _, p in self.near(a, ALL_DIRECTIONS)
                if self.titan_at(p)
                for d in ALL_DIRECTIONS
            ]
        if kind == "slaugg":
            return [""] if any(self.damageable(p) for _, p in self.near(a, FORWARD)) else []
        if kind == "chtoolhoo":
            if a.life >= 6:
                return []
            return [
                pos_name(p)
                for _, p in self.near(a, ALL_DIRECTIONS)
                if (x := self.titan_at(p)) is not None and not x.ko and x.life > 0
            ]
        raise EngineError(f"unknown Ability {kind}")

    def use_ability(self, a: TitanState, kind: str, args: list[str]) -> None:
        """``a`` uses ``kind``'s Ability (its own, or one lent by Borrowed Power)."""
        with self.scoped():
            if kind == "grinder":
                _, pos = self.find(a, ALL_DIRECTIONS, args[0])
                reactions = self.target_windows(a, [self.titan_at(pos)], lossy=True)
                if not reactions.cancelled:
                    self.place_trap(pos, reactions)
            elif kind == "rassik":
                self.move(a, [args[0]], own_power=True)
            elif kind == "craken":
                d, pos = self.find(a, ALL_DIRECTIONS, args[0])
                x = self.titan_at(pos)
                assert x is not None
                if not self.target_windows(a, [x], moves=True).cancelled:
                    self.swap(a, x, d)
            elif kind == "ragnarok":
                _, pos = self.find(a, ALL_DIRECTIONS, args[0])
                x = self.titan_at(pos)
                assert x is not None
                if not self.target_windows(a, [x], moves=True).cancelled:
                    self.move(x, [args[1]], own_power=False, event=True)
            elif kind == "slaugg":
                spaces = [p for _, p in self.near(a, FORWARD)]
                reactions = self.target_windows(a, [self.titan_at(p) for p in spaces], lossy=True)
                if not reactions.cancelled:
                    for pos in spaces:
                        self.damage_space(pos, reactions)
            elif kind == "chtoolhoo":
                _, pos = self.find(a, ALL_DIRECTIONS, args[0])
                x = self.titan_at(pos)
                assert x is not None
                reactions = self.target_windows(a, [x], lossy=True)
                if not reactions.cancelled:
                    before = x.life
                    self.strike(x, reactions)
                    if x.life < before:
                        self.gain(a, 1)

    def card_args(self, a: TitanState, card: str) -> list[str]:
        """Every argument string with which ``a`` may play ``card`` now."""
        adjacent = self.near(a, ALL_DIRECTIONS)
        if card == "tribal-trap":
            if trap_supply(self.st) == 0:
                return []
            return [pos_name(p) for _, p in adjacent if not self.has_trap(p)]
        if card == "speed-potion":
            return [""]
        if card == "leap":
            return ["L", "R"]
        if card == "blink":
            return [
                pos_name(p) for _, p in adjacent if not self.titan_at(p) and not self.has_trap(p)
            ]
        if card == "borrowed-power":
            options: list[str] = []
            for _, p in adjacent:
                lender = self.titan_at(p)
                if lender is not None and lender is not a:
                    args = self.ability_args(a, lender.name)
                    options += [f"{lender.name} {arg}".rstrip() for arg in args]
            return options
        if card == "fireball":
            assert a.pos is not None
            return [
                pos_name(p) for p in (step(a.pos, "S"), step(a.pos, "S", 2)) if self.damageable(p)
            ]
        if card == "quake":
            return [""] if any(self.titan_at(p) for _, p in adjacent) else []
        if card == "pickpocket":
            return [x.name for _, p in adjacent if (x := self.titan_at(p)) is not None and x.hand]
        if card == "thunderbolt":
            return [
                pos_name(p) for _, p in adjacent if (x := self.titan_at(p)) is not None and not x.ko
            ]
        if card == "healing-potion":
            return [] if a.ko else [""]
        return []

    def play_card(self, a: TitanState, card: str, args: list[str]) -> None:
        """Resolve ``card`` played by ``a`` (the caller has already put it on the discard pile)."""
        with self.scoped():
            if card in ("tribal-trap", "thunderbolt"):
                _, pos = self.find(a, ALL_DIRECTIONS, args[0])
                target = self.titan_at(pos)
                reactions = self.target_windows(a, [target], lossy=True)
                if reactions.cancelled:
                    return
                if card == "tribal-trap":
                    self.place_trap(pos, reactions)
                else:
                    self.strike(target, reactions)
            elif card == "speed-potion":
                self.move(a, ["S"], own_power=True)
            elif card == "leap":
                self.move(a, [args[0]], own_power=True, length=2)
            elif card == "blink":
                d, pos = self.find(a, ALL_DIRECTIONS, args[0])
                mv = Movement()
                # an ice slide after the blink may push a Titan that repulses
                with self.scoped(mv.asked), suppress(Repulsed):
                    self.arrive(mv, a, pos, d)
            elif card == "borrowed-power":
                self.use_ability(a, args[0], args[1:])
            elif card == "fireball":
                assert a.pos is not None
                ahead = (step(a.pos, "S"), step(a.pos, "S", 2))
                pos = next(p for p in ahead if pos_name(p) == args[0])
                reactions = self.target_windows(a, [self.titan_at(pos)], lossy=True)
                if not reactions.cancelled:
                    self.damage_space(pos, reactions)
            elif card == "quake":
                self.quake(a)
            elif card == "pickpocket":
                x = self.st.titans[args[0]]
                if not self.target_windows(a, [x]).cancelled and x.hand:
                    stolen = x.hand.pop(self.st.rng.below(len(x.hand), "steal"))
                    self.ctx.outcomes.append(f"steal {stolen}")
                    a.hand.append(stolen)
            elif card == "healing-potion":
                self.gain(a, 2)

    def quake(self, a: TitanState) -> None:
        """Push every adjacent Titan one space away; each loses the push's Life Point."""
        victims = [(d, x) for d, p in self.near(a, ALL_DIRECTIONS) if (x := self.titan_at(p))]
        reactions = self.target_windows(a, [x for _, x in victims], lossy=True, pushes=True)
        if reactions.cancelled:
            return
        mv = Movement(asked=self.scope, shield=reactions.shielded)
        with self.scoped(mv.asked):
            for d, x in victims:
                if x.name not in reactions.repulsed:
                    with suppress(Repulsed):
                        self.push(mv, a, x, d)

    # ------------------------------------------------------------------ turn flow

    def begin_turn(self) -> None:
        """Open the next Titan's turn: recovery, windows, the round's roll, its pick."""
        st = self.st
        st.phase = PICK
        st.turn = TurnState()
        t = turn_titan(st)
        t.ability_used = False
        if t.ko and t.ko_passed:
            t.ko = False
            t.ko_passed = False
            t.life = start_life(t.name)
        if st.round > 1 and self.ctx.windows:
            self.turn_start_windows(t)
        count = len(st.order)
        if st.turn_index == 0:
            st.dice = self.roll(count, "roll")
        elif st.turn_index == count - 1:
            st.dice = self.roll(count, "reroll")

    def advance(self) -> None:
        st = self.st
        st.turn_index += 1
        if st.turn_index >= len(st.order):
            st.turn_index = 0
            st.round += 1
        self.begin_turn()

    @property
    def outcomes(self) -> list[str]:
        """The random outcomes this input has produced so far, in order."""
        return self.ctx.outcomes

    def run(self, text: str) -> None:
        """Apply one legal, normalised input (the caller checked it against the options); a
        Titan's win ends it at once."""
        with suppress(GameOver):
            self._run(text)

    def _run(self, text: str) -> None:
        st = self.st
        words = text.split()
        verb, args = words[0], words[1:]
        t = turn_titan(st)
        if st.phase == PICK:
            self.pick(t, args[0])
        elif st.phase == START:
            self.start(t, args[0])
        else:
            self.turn_input(t, verb, args)
        if st.phase in (START, TURN) and turn_titan(st).ko:
            self.advance()

    def pick(self, t: TitanState, colour: str) -> None:
        st = self.st
        st.dice.remove(colour)
        st.turn.die = st.turn.face = colour
        if t.ko:
            t.ko_passed = True
            self.advance()
            return
        if colour == TITAN_COLOUR[t.name] and t.name != "chtoolhoo":
            self.gain(t, 1)
        st.phase = START if t.pos is None else TURN

    def start(self, t: TitanState, space: str) -> None:
        col, _ = parse_space(space)
        self.ctx.windows = False
        try:
            self.arrive(Movement(), t, (col, 0), "S")
        finally:
            self.ctx.windows = True
        self.st.phase = TURN

    def turn_input(self, t: TitanState, verb: str, args: list[str]) -> None:
        ts = self.st.turn
        if verb == "move":
            self.die_move(t, args[0])
        elif verb == "trap":
            if ts.face == "purple" and ts.imitated is None:
                ts.imitated = "red"
            _, pos = self.find(t, BACKWARD, args[0])
            ts.part_done = True
            with self.scoped():
                self.place_trap(pos)
        elif verb == "hit":
            if ts.face == "purple" and ts.imitated is None:
                ts.imitated = "green"
            _, pos = self.find(t, FORWARD, args[0])
            ts.part_done = True
            with self.scoped():
                self.damage_space(pos)
        elif verb == "ability":
            t.ability_used = True
            self.use_ability(t, t.name, args)
        elif verb == "play":
            t.hand.remove(args[0])
            ts.card_played = True
            self.st.discard.append(args[0])
            self.play_card(t, args[0], args[1:])
        elif verb == "discard":
            t.hand.remove(args[0])
            ts.card_played = True
            self.st.discard.append(args[0])
        elif verb == "reroll":
            self.reroll(t)
        elif verb == "end":
            self.advance()

    def die_move(self, t: TitanState, path: str) -> None:
        ts = self.st.turn
        if ts.face == "purple":
            ts.imitated = PATH_FACE[path]
        ts.moved = True
        self.move(t, list(path), own_power=True)
        if ts.face == "purple" and t.name != "chtoolhoo":
            self.lose(t)
        if not t.ko and t.pos is not None and self.feature(t.pos) == PENTACLE:
            ts.reroll_pos = t.pos

    def reroll(self, t: TitanState) -> None:
        ts = self.st.turn
        ts.rerolled = True
        ts.reroll_pos = None
        self.lose(t)
        if t.ko:
            return
        face = self.roll(1, "pentacle")[0]
        if face == TITAN_COLOUR[t.name] and t.name != "chtoolhoo":
            self.gain(t, 1)
        ts.face = face
        ts.imitated = None
        ts.moved = False
        ts.part_done = False

    # ------------------------------------------------------------------ options

    def options(self) -> list[str]:
        """Every legal input for the pending top-level decision, in notation."""
        st = self.st
        if st.window is not None:
            return list(st.window["options"])
        if st.phase == OVER:
            return []
        if st.phase == PICK:
            return [f"pick {c}" for c in COLOURS if c in st.dice]
        if st.phase == START:
            return [f"start {s}" for s in self.start_spaces()]
        return self.turn_options()

    def start_spaces(self) -> list[str]:
        free = [s for s in START_SPACES if not self.titan_at((parse_space(s)[0], 0))]
        return free or list(START_SPACES)

    def part_targets(self, t: TitanState) -> list[str]:
        """Trap/hit inputs the face still allows (the trap or damage not yet done)."""
        ts = self.st.turn
        if ts.part_done:
            return []
        face = ts.effective_face
        kinds = (
            ("red", "green") if ts.face == "purple" and face is None and not ts.moved else (face,)
        )
        options: list[str] = []
        if "red" in kinds and trap_supply(self.st) > 0:
            options += [
                f"trap {pos_name(p)}" for _, p in self.near(t, BACKWARD) if not self.has_trap(p)
            ]
        if "green" in kinds:
            options += [
                f"hit {pos_name(p)}" for _, p in self.near(t, FORWARD) if self.damageable(p)
            ]
        return options

    def turn_options(self) -> list[str]:
        st = self.st
        t = turn_titan(st)
        ts = st.turn
        options: list[str] = []
        if not ts.moved:
            if ts.face == "purple":
                paths = FACE_PATHS[ts.imitated] if ts.imitated else ALL_PATHS
            else:
                paths = FACE_PATHS[ts.face or "blue"]
            options += [f"move {p}" for p in paths]
        part = self.part_targets(t)
        options += part
        if st.round > 1 and not ts.rerolled:
            if not t.ability_used:
                options += [f"ability {a}".rstrip() for a in self.ability_args(t, t.name)]
            if not ts.card_played:
                for card in t.hand:
                    if CARD_TIMING[card] != "reaction":
                        options += [f"play {card} {a}".rstrip() for a in self.card_args(t, card)]
                options += [f"discard {card}" for card in t.hand]
        done = ts.moved and not part
        if done and ts.reroll_pos is not None and ts.reroll_pos == t.pos:
            options.append("reroll")
        if done:
            options.append("end")
        return options
