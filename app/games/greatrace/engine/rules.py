"""The rules of The Great Race (docs/great-race-rules.md) as pure functions on the state.

An input answers the pending decision. Top-level decisions (``take``, ``plan``, ``turn``) are
read from the phase; an action that needs more answers (a drive, a split, a discard...) stops at
an :meth:`Rules.ask` by raising :class:`Suspend`, and is run again from its starting state with
the answers given so far when the next answer comes (the Titan Race engine's model). Randomness
comes only from the state's Rng, so running an action again draws the same tiles and cards.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from app.games.logged import Suspend

from .board import (
    CITY_AT,
    NEIGHBOURS,
    Space,
    finish_of,
    progress,
)
from .notation import plan_of
from .options import (
    ASSISTANT_ACTIONS,
    Trip,
    avoid_options,
    called_off,
    can_avoid,
    can_choose_drive,
    can_meet,
    city_cards,
    damage_options,
    decision_options,
    discard_options,
    drive_options,
    entry_petrol,
    line_between,
    may_avoid,
    options_hidden,
    part_price,
    petrol_price,
    placement_spaces,
    prestige,
    repair_options,
    to_plan,
    top_decision,
    unique,
)
from .pieces import (
    BONUS,
    DANGER_DAMAGE,
    FINANCIAL_GAIN,
    FUNDING,
    MAX_CHASSIS,
    MAX_ENGINE,
    MAX_PETROL,
    REFUEL_GAIN,
    SABOTEUR_DAMAGE,
    TILE,
    TILES_DRAWN,
    TRACKER_DRAW,
    TRACKER_KEEP,
    Card,
    Crew,
    TileCode,
)
from .state import (
    BIVOUAC,
    CONVOY,
    OVER,
    PLANNING,
    PUBLIC_FLOW,
    CrewState,
    GreatRaceState,
)


class Rules:
    """Applies inputs to ``st`` in place, asking for answers from ``answers`` in order."""

    def __init__(
        self, st: GreatRaceState, answers: list[str] | None = None, author: Crew | None = None
    ) -> None:
        self.st = st
        self.answers = list(answers or [])
        self.used = 0
        self.outcomes: list[str] = []
        self.author = author
        """The crew whose input is applied (None: the set-up, a scenario)."""
        self.looks = 0
        """How often the rules met chance or what ``author`` cannot see: a tile or card drawn,
        the plans revealed, another crew's hidden cards deciding the flow (before rules version
        :data:`PUBLIC_FLOW`)."""
        self.looks_before = 0
        """:attr:`looks` when the newest answer was read: the looks of the answers before it,
        met again as the action is run again from its start."""

    @property
    def met_hidden(self) -> bool:
        """Whether the input applied (its newest answer and what followed) met chance or
        hidden information."""
        return self.looks > self.looks_before

    # ------------------------------------------------------------ decisions and chance

    def ask(self, kind: str, crew: Crew, options: list[str], **info: Any) -> str:
        """The answer to a decision: the only option, the next given answer, or a suspension."""
        assert options, f"a {kind} decision without options"
        if self.applied_unasked(kind, crew, options):
            return options[0]
        if self.replaying():
            return self.given()
        raise Suspend({"kind": kind, "crew": crew, "crews": [crew], **info, "options": options})

    def applied_unasked(self, kind: str, crew: Crew, options: list[str]) -> bool:
        """Whether ``crew``'s decision is applied without asking: it has one legal answer and,
        from rules version :data:`PUBLIC_FLOW` on, everyone can tell so (its options are not
        read from cards only the crew sees: the one answer would tell the others what the
        cards are not). Before that version one legal answer was enough, and for another crew
        than the author's, its hidden cards decided whether it was asked: a look."""
        if self.st.version >= PUBLIC_FLOW:
            return len(options) == 1 and not options_hidden(self.st, kind, crew)
        if crew != self.author and options_hidden(self.st, kind, crew):
            self.looks += 1
        return len(options) == 1

    def replaying(self) -> bool:
        """Whether answers given before are still to be read (the action is run again)."""
        return self.used < len(self.answers)

    def given(self) -> str:
        """The next answer given before."""
        answer = self.answers[self.used]
        self.used += 1
        if self.used == len(self.answers):
            self.looks_before = self.looks
        return answer

    def draw_tile(self) -> TileCode | None:
        if not self.st.bag:
            return None
        tile = self.st.bag.pop(0)
        self.outcomes.append(f"tile {tile}")
        self.looks += 1
        return tile

    def draw_card(self, deal: bool = False) -> Card | None:
        st = self.st
        if not st.deck and st.discard:
            st.deck = st.discard
            st.discard = []
            st.rng.shuffle(st.deck, "deck")
            self.outcomes.append("shuffle")
        if not st.deck:
            return None
        card = st.deck.pop(0)
        self.outcomes.append(f"{'deal' if deal else 'card'} {card}")
        self.looks += 1
        return card

    # ------------------------------------------------------------ top level

    def run(self, text: str) -> None:
        """Apply one top-level input, then move the game on to the next real decision."""
        self.apply_top(text)
        self.settle()

    def settle(self) -> None:
        """Move the game on, applying every decision that has one legal answer."""
        while True:
            self.advance()
            decision = top_decision(self.st)
            if decision is None or decision["kind"] == "plan":
                return
            options = decision_options(self.st)
            if not self.applied_unasked(decision["kind"], decision["crew"], options):
                return
            self.apply_top(options[0])

    def apply_top(self, text: str) -> None:
        st = self.st
        if st.phase == BIVOUAC:
            self.take(text.split()[1])
        elif st.phase == PLANNING:
            crew, boxes = plan_of(text)
            st.crews[crew].plan = boxes
        else:
            self.sequence(text)

    def advance(self) -> None:
        """Leave a phase that is complete."""
        st = self.st
        if st.phase == PLANNING and not to_plan(st):
            self.reveal()
        if st.phase == CONVOY:
            assert st.active is not None
            if not st.crews[st.active].active:
                self.next_sequence()

    # ------------------------------------------------------------ bivouac

    def begin_bivouac(self) -> None:
        st = self.st
        st.phase = BIVOUAC
        racing = st.racing()
        st.market = []
        for _ in range(len(racing) + 1):
            card = self.draw_card(deal=True)
            if card is None:
                break
            st.market.append(card)
        st.takers = [c.crew for c in reversed(racing)][: len(st.market)]
        if not st.takers:
            self.end_bivouac()

    def take(self, card: Card) -> None:
        st = self.st
        crew = st.crews[st.takers.pop(0)]
        st.market.remove(card)
        crew.hand.append(card)
        self.hand_limit(crew)
        if not st.takers:
            self.end_bivouac()

    def end_bivouac(self) -> None:
        st = self.st
        last = st.racing()[-1]
        while st.market:
            last.hand.append(st.market.pop(0))
            self.hand_limit(last)
        st.phase = PLANNING
        for crew in st.crews.values():
            crew.plan = None

    # ------------------------------------------------------------ planning

    def reveal(self) -> None:
        st = self.st
        self.looks += 1
        for crew in st.racing():
            assert crew.plan is not None
            crew.assistants = dict(crew.plan)
            crew.plan = None
            crew.passed = False
        st.phase = CONVOY
        st.active = st.racing()[0].crew
        st.started = False

    # ------------------------------------------------------------ convoy

    def next_sequence(self) -> None:
        """Hand the convoy to the next active crew after the current one, or end it."""
        st = self.st
        assert st.active is not None
        at = st.order.index(st.active)
        st.started = False
        for step in range(1, len(st.order) + 1):
            name = st.order[(at + step) % len(st.order)]
            if st.crews[name].active:
                st.active = name
                return
        self.maintenance()

    def sequence(self, text: str) -> None:
        st = self.st
        assert st.active is not None
        crew = st.crews[st.active]
        words = text.split()
        verb = words[0]
        if verb in ASSISTANT_ACTIONS:
            st.started = False
            self.assistant(crew, words)
            if crew.active:
                self.next_sequence()
            return
        st.started = True
        if verb == "buy":
            count = int(words[1])
            crew.money -= count * petrol_price(crew)
            crew.petrol += count
        elif verb == "leader":
            crew.leader_used = True
            if crew.crew == "french":
                self.explore(crew, *TILES_DRAWN["leader"])
            else:
                self.repair(crew)
        else:
            self.play(crew, words[1], words[2:])

    def assistant(self, crew: CrewState, words: list[str]) -> None:
        verb = words[0]
        boxes = crew.assistants
        if verb == "pass":
            crew.assistants = {box: (n if box == "S" else 0) for box, n in boxes.items()}
            crew.passed = True
        elif verb == "fund":
            crew.money += FUNDING[boxes["F"]]
            boxes["F"] = 0
        elif verb == "guard":
            boxes["S"] -= 1
            self.remove_tile(words[1])
        elif verb in ("scout", "draw"):
            boxes["P"] -= 1
            if verb == "scout":
                self.explore(crew, *TILES_DRAWN["scout"])
            else:
                self.draw_cards(crew, 1)
        else:
            boxes["M"] -= 1
            if verb == "drive":
                self.drive(crew)
            else:
                self.repair(crew)

    def play(self, crew: CrewState, card: Card, args: list[str]) -> None:
        st = self.st
        crew.hand.remove(card)
        st.discard.append(card)
        if card == "financial":
            crew.money += FINANCIAL_GAIN
        elif card == "jerrycan":
            self.add_petrol(crew, 1)
        elif card == "refueling-station":
            self.add_petrol(crew, REFUEL_GAIN)
        elif card == "driver":
            self.drive(crew)
        elif card == "repairman":
            self.repair(crew)
        elif card in ("cartographer", "topographer"):
            self.explore(crew, *TILES_DRAWN[card])
        elif card == "tracker":
            self.tracker(crew)
        elif card == "saboteur":
            target = st.crews[args[0]]
            if not self.avoid(target, "saboteur", crew.crew):
                self.damage(target, SABOTEUR_DAMAGE, chooser=crew)
        elif not self.cancelled(crew, card):
            if card == "trail-hunter":
                for space in args:
                    self.remove_tile(space)
            else:
                a, b = args
                st.tiles[a], st.tiles[b] = st.tiles[b], st.tiles[a]

    def add_petrol(self, crew: CrewState, amount: int) -> None:
        crew.petrol = min(MAX_PETROL, crew.petrol + amount)

    def remove_tile(self, space: Space) -> None:
        self.st.removed.append(self.st.tiles.pop(space))

    # ------------------------------------------------------------ cards and hands

    def draw_cards(self, crew: CrewState, count: int) -> None:
        self.draw_into_hand(crew, count)
        self.hand_limit(crew)

    def draw_into_hand(self, crew: CrewState, count: int) -> None:
        """Draw up to ``count`` cards into the hand (fewer when no card is left), no limit
        applied."""
        for _ in range(count):
            card = self.draw_card()
            if card is None:
                break
            crew.hand.append(card)

    def hand_limit(self, crew: CrewState) -> None:
        """Discard (or play a Jerrycan) until the hand fits the CHASSIS level."""
        while len(crew.hand) > crew.chassis:
            answer = self.ask(
                "discard", crew.crew, discard_options(crew), limit=crew.chassis
            )
            card = answer.split()[1]
            crew.hand.remove(card)
            self.st.discard.append(card)
            if answer.startswith("play"):
                self.add_petrol(crew, 1)

    def tracker(self, crew: CrewState) -> None:
        st = self.st
        for _ in range(TRACKER_DRAW):
            card = self.draw_card()
            if card is None:
                break
            st.tracker.append(card)
        kept = list(st.tracker)
        if len(st.tracker) > TRACKER_KEEP:
            options = unique(
                ["keep " + " ".join(sorted(pair)) for pair in combinations(st.tracker,
                                                                           TRACKER_KEEP)]
            )
            kept = self.ask("keep", crew.crew, options).split()[1:]
        for card in kept:
            st.tracker.remove(card)
            crew.hand.append(card)
        st.discard += st.tracker
        st.tracker = []
        self.hand_limit(crew)

    # ------------------------------------------------------------ dangers and damage

    def avoid(self, crew: CrewState, danger: str, source: Crew | None = None) -> bool:
        """Ask ``crew`` whether to avoid ``danger``; True when avoided."""
        if not self.asked_to_avoid(crew):
            return False
        info: dict[str, Any] = {"danger": danger}
        if source is not None:
            info["source"] = source
        answer = self.ask("avoid", crew.crew, avoid_options(crew), **info)
        if answer == "take":
            return False
        if answer == "guard":
            crew.assistants["S"] -= 1
        else:
            crew.hand.remove("militia")
            self.st.discard.append("militia")
        return True

    def asked_to_avoid(self, crew: CrewState) -> bool:
        """Whether a DANGER aimed at ``crew`` asks it: from rules version :data:`PUBLIC_FLOW`
        on, whenever it may hold a way to avoid it as everyone can tell (:func:`may_avoid`);
        before, only when it held one (for another crew than the author's, its hidden cards
        decided: a look)."""
        if self.st.version >= PUBLIC_FLOW:
            return may_avoid(crew)
        if crew.crew != self.author and crew.hand and not crew.assistants["S"]:
            self.looks += 1
        return can_avoid(crew)

    def cancelled(self, player: CrewState, card: Card) -> bool:
        """Whether another racing crew, asked in turn order from the next one, cancels ``card``."""
        order = self.st.order
        at = order.index(player.crew)
        for step in range(1, len(order)):
            crew = self.st.crews[order[(at + step) % len(order)]]
            if crew.racing and self.avoid(crew, card, player.crew):
                return True
        return False

    def damage(self, crew: CrewState, amount: int, chooser: CrewState | None = None) -> None:
        """Take ``amount`` damage (what the gauges cannot take is lost), split by ``chooser``."""
        amount = min(amount, crew.engine + crew.chassis)
        if amount == 0:
            return
        who = chooser or crew
        answer = self.ask(
            "damage", who.crew, damage_options(crew, amount), target=crew.crew, amount=amount
        )
        parts = {word[0]: int(word[1:]) for word in answer.split()[1:]}
        crew.engine -= parts.get("E", 0)
        crew.chassis -= parts.get("C", 0)
        if parts.get("C"):
            self.hand_limit(crew)

    # ------------------------------------------------------------ tiles

    def explore(self, crew: CrewState, draw: int, place: int) -> None:
        """Draw ``draw`` tiles and place ``place`` of them; the rest leave the game."""
        st = self.st
        for _ in range(draw):
            tile = self.draw_tile()
            if tile is None:
                break
            st.drawn.append(tile)
        for left in range(min(place, len(st.drawn)), 0, -1):
            spaces = placement_spaces(st, crew)
            if not spaces:
                break
            options = [f"place {t} {s}" for t in unique(st.drawn) for s in spaces]
            _, tile, space = self.ask("place", crew.crew, options, place=left).split()
            st.drawn.remove(tile)
            st.tiles[space] = tile
        st.removed += st.drawn
        st.drawn = []

    # ------------------------------------------------------------ repairs

    def repair(self, crew: CrewState) -> None:
        while True:
            answer = self.ask("repair", crew.crew, repair_options(crew))
            words = answer.split()
            if words[0] == "done":
                return
            if words[0] == "buy":
                crew.money -= part_price(crew)
                self.mend(crew, words[1], 1)
                continue
            card = words[1]
            crew.hand.remove(card)
            self.st.discard.append(card)
            if card == "jerrycan":
                self.add_petrol(crew, 1)
            elif card == "spare-parts":
                self.mend(crew, words[2], 1)
            else:
                for word in words[2:]:
                    self.mend(crew, word[0], int(word[1:]))

    def mend(self, crew: CrewState, gauge: str, amount: int) -> None:
        if gauge == "E":
            crew.engine = min(MAX_ENGINE, crew.engine + amount)
        else:
            crew.chassis = min(MAX_CHASSIS, crew.chassis + amount)

    # ------------------------------------------------------------ driving

    def drive(self, crew: CrewState) -> None:
        """A DRIVER action, one space at a time."""
        trip = Trip(allowance=crew.engine)
        while crew.racing and crew.engine > 0 and trip.entered < trip.allowance:
            if self.replaying() and self.drive_step_asked(crew, trip):
                # what ask would answer, without listing the options (a drive run again from
                # its start would list each step's again)
                answer = self.given()
            else:
                answer = self.ask(
                    "drive",
                    crew.crew,
                    drive_options(self.st, crew, trip),
                    entered=trip.entered,
                    allowance=trip.allowance,
                )
            words = answer.split()
            if words[0] == "stop":
                return
            if words[0] == "leader":
                crew.leader_used = True
                trip.english = True
            elif words[0] == "play":
                self.drive_card(crew, words[1], trip)
            elif not self.enter(crew, words[1], trip):
                return

    def drive_step_asked(self, crew: CrewState, trip: Trip) -> bool:
        """Whether :meth:`ask` would ask for this step of a drive, found without listing its
        options: when the crew holds cards (from rules version :data:`PUBLIC_FLOW` on), or
        when it has more to choose from than ``stop``."""
        if self.st.version >= PUBLIC_FLOW and crew.hand:
            return True
        return can_choose_drive(self.st, crew, trip)

    def drive_card(self, crew: CrewState, card: Card, trip: Trip) -> None:
        crew.hand.remove(card)
        self.st.discard.append(card)
        if card == "guide":
            trip.guides += 1
        elif card == "transport":
            trip.transports += 1
        else:
            self.add_petrol(crew, 1)

    def enter(self, crew: CrewState, space: Space, trip: Trip) -> bool:
        """Enter ``space``; False when the drive ends there."""
        st = self.st
        trip.entered += 1
        if space in CITY_AT:
            line = line_between(crew.space, space)
            if line is not None and space not in NEIGHBOURS[crew.space]:
                crew.money -= trip.fare(line.cost, line.kind)
            crew.petrol -= 1
            self.move(crew, space)
            self.arrive(crew, CITY_AT[space].slug)
            return False
        tile = st.tiles.get(space)
        if tile is None:
            tile = self.draw_tile()
            if tile is None:
                crew.petrol -= entry_petrol(st, space, None)
                self.move(crew, space)
                return True
            st.tiles[space] = tile
            if not can_meet(crew, entry_petrol(st, space, tile), TILE[tile].damage):
                return False
        return self.cross(crew, space, tile, trip)

    def cross(self, crew: CrewState, space: Space, tile: TileCode, trip: Trip) -> bool:
        """Pay for a tile entered, face its DANGER and STOP; False when the drive ends."""
        info = TILE[tile]
        crew.petrol -= entry_petrol(self.st, space, tile)
        self.move(crew, space)
        self.damage(crew, info.damage)
        if info.danger and not self.avoid(crew, "tile"):
            self.damage(crew, DANGER_DAMAGE)
        if crew.engine == 0:
            return False
        if info.stop:
            if trip.guides == 0:
                return False
            trip.guides -= 1
        return True

    def move(self, crew: CrewState, space: Space) -> None:
        """Put the vehicle on ``space`` and its token where its progress now is."""
        st = self.st
        crew.space = space
        value = progress(space, st.start)
        if value == crew.progress:
            return
        crew.progress = value
        st.track.remove(crew.crew)
        at = sum(1 for name in st.track if st.crews[name].progress >= value)
        st.track.insert(at, crew.crew)

    def arrive(self, crew: CrewState, city: str) -> None:
        """The city's cards are drawn on entering it, the finish city too, before the race is
        over there: the Belgian leader's two cards are drawn and at once discarded with the
        rest of the hand, the hand limit not asked for (rules 8)."""
        count = city_cards(self.st, crew, city)
        if city == finish_of(self.st.start):
            self.draw_into_hand(crew, count)
            self.finish(crew)
        elif count:
            self.draw_cards(crew, count)

    def finish(self, crew: CrewState) -> None:
        st = self.st
        st.finishers.append(crew.crew)
        crew.finished = len(st.finishers)
        st.discard += crew.hand
        crew.hand = []
        crew.assistants = dict.fromkeys(crew.assistants, 0)
        crew.passed = True

    # ------------------------------------------------------------ maintenance and the end

    def maintenance(self) -> None:
        st = self.st
        st.active = None
        if st.finishers or called_off(st):
            self.end_game()
            return
        st.order = [name for name in st.track if st.crews[name].racing]
        bonuses = BONUS[:1] if len(st.crews) == 2 else BONUS
        for name, bonus in zip(st.order, bonuses, strict=False):
            st.crews[name].money += bonus
        st.turn += 1
        for crew in st.crews.values():
            crew.leader_used = False
            crew.passed = False
            crew.assistants = dict.fromkeys(crew.assistants, 0)
        self.begin_bivouac()

    def end_game(self) -> None:
        st = self.st
        if not st.finishers:  # called off (first rules version only)
            for name in st.track:
                self.finish(st.crews[name])
        st.phase = OVER
        st.scores = {name: prestige(st.crews[name]) for name in st.finishers}
