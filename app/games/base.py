"""What the game service needs from a game's rules: the :class:`Ruleset` protocol, the errors
it raises, and :class:`LoggedRuleset`, the base of every game built on
:class:`app.games.logged.LoggedGame`.

The service stores and serves logs; it never looks inside a game state. A game is added by
writing a class with these methods in its own package and naming it in :data:`app.games.GAMES`
(docs/adding-a-game.md).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal, Protocol

from app.core.i18n import N_
from app.games.apiwords import OLDER_PIECES, OLDER_TEAM, ApiWords
from app.games.errors import InputError
from app.games.logged import LoggedGame, StopBefore
from app.games.placings import Placing, winners_first
from app.games.reasons import reason_words
from app.games.rng import Dealing, view_seed

ClockKind = Literal["turn", "continues", "quick"]
TURN: Final = "turn"
CONTINUES: Final = "continues"
QUICK: Final = "quick"

BotLevel = Literal["easy", "normal", "strong"]
EASY: Final = "easy"
"""The one-step heuristic player: instant, played inside the move that hands it the turn."""
NORMAL: Final = "normal"
"""A searching player on a small budget; also the level of a seat the computer takes over at a
timeout or while its player is away."""
STRONG: Final = "strong"
"""A searching player on its full budget (at most a second a decision on two CPUs)."""
BOT_LEVELS: Final = (EASY, NORMAL, STRONG)
ASK: Final = "ask"
"""The standing choice of a seat asked in every window (the default)."""
NEVER: Final = "never"
"""The standing choice of a seat that declines every window at once."""
BOT_LEVEL_WORDS: Final = {EASY: N_("easy"), NORMAL: N_("normal"), STRONG: N_("strong")}
"""The levels' names as people read them (message ids of the catalogue)."""


def pieces_of_older(rules: Ruleset, entry: Mapping[str, Any]) -> dict[str, Any]:
    """The pieces an older entry (an API seat, a seat set-up of a fairness record) asks for in
    :data:`OLDER_PIECES` and :data:`OLDER_TEAM` (:meth:`Ruleset.pieces_from_fields`)."""
    return rules.pieces_from_fields(list(entry.get(OLDER_PIECES) or []), entry.get(OLDER_TEAM))


class SetupError(ValueError):
    """A game cannot be set up as asked (the message says why).

    ``text`` is English; with ``fields`` it is a catalogue message they fill (``words``, for
    the new-game page in its reader's language). Without fields it is shown as it is unless
    ``worded`` says it is a catalogue message too."""

    def __init__(self, text: str, /, *, worded: bool = False, **fields: Any) -> None:
        super().__init__(text.format(**fields) if fields else text)
        self.words: tuple[str, dict[str, Any]] | None = (
            (text, fields) if fields or worded else None)


class MoveRejected(ValueError):
    """An input was refused; ``legal`` lists what was legal, ``index`` which part failed.

    ``words``, when given, is the refusal as a catalogue message and its fields (for pages and
    mails in the player's language); ``message`` is then that message in English."""

    def __init__(self, message: str, legal: list[str], index: int = 0,
                 words: tuple[str, dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.legal = legal
        self.index = index
        self.words = words


CHANCE: Final = "chance"
TURN_ENDS: Final = "turn"
SECRET: Final = "secret"
CHAIN_STOPPED: Final = {
    CHANCE: N_("'{after}' met chance or what the others keep hidden, so your inputs stopped "
               "there; not played: '{rest}'. Send it again once you have seen the game, if you "
               "still want it"),
    TURN_ENDS: N_("after '{after}' the decision is another player's, so your inputs stopped "
                  "there; not played: '{rest}'"),
    SECRET: N_("after '{after}' every player answers at once and in secret, so your inputs "
               "stopped there; not played: '{rest}': send your answer on its own"),
}
"""Why a seat's chain stopped before its end (:class:`ChainStop`), said to the seat."""
SECRET_ALONE: Final = N_(
    "a secret answer is sent on its own: part {number} ('{input}') cannot be joined to it with "
    "';'. Nothing was sealed")
NOT_YOURS_NOW: Final = N_("'{input}' does not answer a decision of yours now")
NAMES_ITS_PART: Final = frozenset((SECRET_ALONE, NOT_YOURS_NOW))
"""The refusals of a submission that name the part they refuse (an engine's reason does not:
an answer says which part it was)."""


@dataclass(frozen=True)
class ChainStop:
    """Where and why a seat's chain of inputs stopped before its end: ``played`` are the inputs
    applied (up to and including the one that met chance or handed the decision on), ``rest``
    those left unplayed, ``reason`` one of :data:`CHAIN_STOPPED`'s keys."""

    played: str
    rest: str
    reason: str

    @property
    def words(self) -> tuple[str, dict[str, Any]]:
        """The stop said to the seat: a catalogue message and its fields."""
        after = self.played.split(";")[-1].strip()
        return CHAIN_STOPPED[self.reason], {"after": after, "rest": self.rest}

    def to_json(self) -> dict[str, Any]:
        text, fields = self.words
        return {"played": self.played, "rest": self.rest, "reason": self.reason,
                "note": text.format(**fields)}

    @staticmethod
    def from_json(data: dict[str, Any]) -> ChainStop:
        """A stop as :meth:`to_json` wrote it (an answer's ``unplayed``)."""
        return ChainStop(str(data["played"]), str(data["rest"]), str(data["reason"]))


@dataclass
class SeatSetup:
    """What one seat asks for at the start, in its game's own terms."""

    position: int
    pieces: dict[str, Any] = field(default_factory=dict)
    """The pieces the seat asked for, as the game's own JSON (empty: drawn at random)."""
    options: dict[str, Any] = field(default_factory=dict)
    """The seat's own choices that the rules read (Titan Race: ``anytime_windows``)."""


class Ruleset(Protocol):
    """The rules of one game, as the service sees them. States are opaque JSON-able values."""

    name: str
    version: int
    variants: tuple[str, ...]
    most_seats: int
    """The most players any variant of the game seats (the new-game form's seat rows)."""
    api_words: ApiWords
    """What the API's reference says of the game's setup, pieces and variants."""

    def default_setup(self, variant: str) -> dict[str, Any]:
        """The game's setup (its board, start, modules: the game's own JSON, stored as
        ``Game.setup``) when the creator names none."""

    def check_setup(self, variant: str, setup: dict[str, Any]) -> None:
        """Raise SetupError unless a game of ``variant`` may be played with ``setup``."""

    def check_seats(self, variant: str, seats: list[SeatSetup]) -> None:
        """Raise SetupError unless a game of ``variant`` may be set up with these seats."""

    def start(
        self, *, variant: str, setup: dict[str, Any], seats: list[SeatSetup], dealing: Dealing,
        version: int | None = None,
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The initial state, and the pieces given to each seat (the game's own JSON, stored
        as ``Seat.pieces``); every random outcome (the deal, the first player, pieces drawn for
        seats that chose none) comes from ``dealing``. ``version`` is the rules version to set
        the game up under (None: the newest, :attr:`version`; an older one deals a game again
        as it was dealt, to check it): see :func:`rules_version`."""

    def piece_names(self, pieces: dict[str, Any]) -> list[str]:
        """The names of the pieces a seat plays (Titan Race: its Titans), from its
        ``Seat.pieces``: what pages, mails and the command line show."""

    # The fields the API, the export format and the fairness records had before setups and
    # pieces were the game's own JSON, and still accept and give (:data:`OLDER_SETUP`,
    # :data:`OLDER_PIECES`, :data:`OLDER_TEAM`):

    def setup_from_circuits(self, circuits: list[Any]) -> dict[str, Any]:
        """The setup a list of ``circuits`` (the older field) stands for."""

    def circuits_of(self, setup: dict[str, Any]) -> list[Any]:
        """``setup`` as the older ``circuits`` list."""

    def pieces_from_fields(self, titans: list[str], team: int | None) -> dict[str, Any]:
        """The pieces a seat's older ``titans`` and ``team`` fields stand for (kept as given:
        :meth:`check_seats` says what is wrong with them)."""

    def fields_of(self, pieces: dict[str, Any]) -> dict[str, Any]:
        """``pieces`` as the older fields: ``{OLDER_PIECES: [...], OLDER_TEAM: int | None}``."""

    def load(self, state: dict[str, Any]) -> Any: ...

    def dump(self, game: Any) -> dict[str, Any]: ...

    def copy(self, game: Any) -> Any:
        """A game that shares nothing with ``game`` (the same as ``load(dump(game))``, for
        less than the JSON's round trip): what a process keeps between commands is copied
        for each command, which may change its copy and then fail."""

    def apply(self, game: Any, text: str, seat: int | None = None) -> list[list[str]]:
        """Apply a submission in place; return the random outcomes of each input.

        ``seat`` is the seat that sent it: every input must then answer a decision of that seat
        alone (not another seat's, nor a simultaneous one, whose answers are sealed), else the
        whole submission is refused (MoveRejected) and nothing changes. A refusal tells only
        what the sender could know before: the legal options at the first input, and for a
        later input a reason that names nothing chance gave to the inputs before it. None:
        the submission has no single author (the reveal of sealed answers, a replay of the
        log, the computer's own answers)."""

    def apply_chain(self, game: Any, text: str,
                    seat: int) -> tuple[list[list[str]], ChainStop | None]:
        """:meth:`apply` of a seat's submission that may stop before its end: at the first
        input whose result met chance or what is hidden (a roll, a drawn tile or card, a
        shuffle: played, and the rest left unplayed whatever came out, so that whether the
        rest would have been accepted tells nothing), and where the decision becomes another
        seat's or a secret one. The outcomes of the inputs applied, and the stop (None when
        every input was played)."""

    def normalise(self, text: str) -> str: ...

    def attempted(self, text: str) -> bool:
        """Whether ``text``, no input as spelled, still reads as an attempt at one (``go Z99``:
        a mistyped move), which a reply must have refused with the options, not taken for
        words to the others."""

    def to_act(self, game: Any) -> list[int]:
        """The seats who may answer the pending decision (empty once the game is over)."""

    def options(self, game: Any, seat: int | None = None) -> list[str]:
        """The legal answers to the pending decision (of ``seat`` only, when several owe one)."""

    def simultaneous(self, game: Any) -> bool:
        """Whether every seat in ``to_act`` answers the pending decision at once and in secret:
        the service seals each answer until all are in, then applies them as one entry."""

    def own_input(self, game: Any, seat: int, text: str) -> str:
        """``text`` as seat ``seat``'s answer to a simultaneous decision, in the notation the
        reveal applies; raises MoveRejected when it is not that seat's to give."""

    def pending(self, game: Any) -> dict[str, Any] | None: ...

    def view(self, game: Any, seat: int | None, spectator: bool) -> dict[str, Any]: ...

    def mark_sealed(self, view: dict[str, Any], seats: list[int],
                    own: str | None = None) -> dict[str, Any]:
        """``view`` with ``seats`` shown as having answered the pending simultaneous decision
        (that they answered, never what), and ``own``, the viewer's own sealed answer, shown
        as given: the engine knows of a sealed answer only once all are in and revealed."""

    def winners(self, game: Any) -> list[str] | None:
        """None while the game runs; then the winning pieces."""

    def placings(self, game: Any, seats: Mapping[int, Sequence[str]]) -> list[Placing]:
        """Every seat's place and score once the game is over, best first (empty while it
        runs): seats the rules leave tied share a place. ``seats`` are the names of each
        seat's pieces, by position."""

    def bot_move(self, game: Any, seat: int | None = None, level: BotLevel = EASY) -> str:
        """The computer's answer (for ``seat``, when several owe the decision) at ``level``.

        It reads only what the seat may see: every level that looks ahead samples every hidden
        part of ``game`` (other hands, sealed plans, the deck, the bag, future dice) afresh,
        from a generator seeded by the seat's view, and never reads it, so two games the seat
        cannot tell apart get the same answer (a time cap aside: it may stop a search sooner
        on a busy machine)."""

    def think_seconds(self, level: BotLevel) -> float:
        """How long a computer decision at ``level`` always takes when the worker plays it
        (its search's time budget; 0 for easy): the worker waits out what the search left, so
        that how long a computer seat takes tells nothing of its options (a search with one
        option to look at ends at once)."""

    def timeout_move(self, game: Any, mode: str, seat: int | None = None) -> str:
        """The input made for a seat whose time ran out: the computer's choice (``bot``), or
        with ``pass`` the answer that does the least (passing a reaction window, taking the
        pirates' loss, ending a turn), the computer choosing only what cannot be passed."""
        ...

    def same_turn(self, first: dict[str, Any], now: dict[str, Any]) -> bool:
        """Whether pending decision ``now`` continues the turn that pending decision ``first``
        was part of (a timeout plays the rest of a turn under one deadline)."""

    def clock_kind(self, pending: dict[str, Any]) -> ClockKind:
        """How the clock times a pending decision: ``quick`` (an out-of-turn reaction, with the
        shorter reaction time), ``continues`` (a further step of the turn its seat has just
        played, under that turn's deadline) or ``turn``."""

    def redact_outcomes(self, outcomes: list[list[str]]) -> list[list[str]]:
        """The random outcomes as players may see them (no hidden cards)."""

    def public_input(self, text: str) -> str:
        """A logged input as players other than its author may read it."""

    def reveals_hidden(self, before: Any, after: Any) -> bool:
        """Whether going from state ``before`` to the later state ``after`` met chance or
        showed what was hidden (a die rolled, a tile or card drawn, a shuffle, a secret plan
        revealed): a move whose state went so far can no longer be taken back, or its player
        would learn what chance dealt and choose again."""

    @property
    def standing_choices(self) -> tuple[str, ...]:
        """What a seat may answer every window with in advance (its private setting): ``ask``
        (the default), ``never``, or a card (or the game's like of it) to play whenever it
        fits."""

    def is_window(self, pending: dict[str, Any]) -> bool:
        """Whether a pending decision is a window: asked on public facts alone, its answers
        depending on what its seat hides (Titan Race's reactions, The Great Race's avoid
        decisions). A seat's standing choice answers it at once; the computer answers it at
        once, at any level, so that how long it stays open tells nothing of the hand."""

    def standing_answer(self, game: Any, seat: int, choice: str) -> str | None:
        """The answer seat ``seat``'s standing ``choice`` gives to the window pending in
        ``game`` (None: no window of the seat's is pending, or ``ask``)."""

    def cards_shown(self, before: Any, after: Any) -> bool:
        """Whether a card that a hand hid came out face up between state ``before`` and the
        later state ``after`` (played, discarded, given up): after another seat's card has
        been shown, even the computer's in its window, no move before it can be taken back."""

    def viewer_world(self, game: Any, seat: int) -> Any | None:
        """``game`` as seat ``seat`` could know it: every part the seat cannot see (other
        hands, the deck, the bag, sealed plans, the random source) dealt again from a generator
        seeded by the seat's own view alone. Two games the seat cannot tell apart give the same
        world, so whatever is computed on it (a preview) tells nothing hidden. None when no
        world consistent with the view was found."""

    def preview(self, world: Any, seat: int, option: str) -> dict[str, Any] | None:
        """The spectator view after ``seat`` answers ``option`` in ``world`` (a world of
        :meth:`viewer_world`, changed in place), or None when chance is involved (a roll, a
        shuffle, a stolen card) or the answer is sealed until all are in. Raises
        MoveRejected when the option is not legal for the seat."""


def rules_version(game: str, version: int | None, newest: int) -> int:
    """The rules version a game of ``game`` is set up under: ``version``, None meaning
    ``newest``; SetupError unless it is one of 1 to ``newest``."""
    if version is None:
        return newest
    if not 1 <= version <= newest:
        raise SetupError(f"{game} has rules versions 1 to {newest}, not {version}")
    return version


MAX_ATTEMPT_WORDS: Final = 6
"""The most words of an input (``plan french P1 M1 S1 F2``): a longer line is prose."""
NOTATION_WORD: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
SPACE_OR_COUNT: Final = re.compile(r"[A-Za-z]{1,2}[0-9]{1,2}")
"""A board space or a count of the notation (``C5``, ``E4``, ``P2``)."""


class LoggedRuleset:
    """What the rulesets of games built on :class:`app.games.logged.LoggedGame` share: a
    submission applied and normalised part by part, the engine's refusals turned into
    :class:`MoveRejected`. A subclass names its notation's ``normalise_input``."""

    normalise_input: Callable[[str], str]
    """The game's notation: one input in its canonical form (raises InputError)."""
    input_words: tuple[str, ...]
    """The words the notation's inputs begin with (``go``, ``move``...)."""
    def game_word(self, kind: str, value: str, lang: str) -> str:
        """A game word of the engine's refusals (``die``, ``card``...) in ``lang``, named as
        the game's pages name it; as the engine wrote it unless a game says otherwise."""
        return value

    def refusal(self, exc: InputError, legal: list[str] | None = None,
                index: int | None = None) -> MoveRejected:
        """The engine's refusal ``exc``, its reason worded for other languages when it has
        one (``legal`` and ``index`` instead of the refusal's own when given)."""
        words = None if exc.reason is None else reason_words(exc.reason, self.game_word)
        return MoveRejected(exc.message, exc.legal if legal is None else legal,
                            exc.index if index is None else index, words)

    def apply(self, game: LoggedGame[Any], text: str, seat: int | None = None) -> list[list[str]]:
        if seat is not None:
            return self.apply_chain(game, text, seat)[0]
        try:
            return game.apply_each(text)
        except InputError as exc:
            raise self.refusal(exc) from None

    def apply_chain(self, game: LoggedGame[Any], text: str,
                    seat: int) -> tuple[list[list[str]], ChainStop | None]:
        sender = SendersInputs(self, game, seat)
        try:
            produced = game.apply_each(text, sender)
        except InputError as exc:
            raise sender.rejected(exc) from None
        return produced, sender.stop(text, len(produced))

    # (what a seat's submission is checked against, input by input: each game's, see Ruleset)
    def to_act(self, game: Any) -> list[int]:
        raise NotImplementedError

    def options(self, game: Any, seat: int | None = None) -> list[str]:
        raise NotImplementedError

    def simultaneous(self, game: Any) -> bool:
        raise NotImplementedError

    def unseen(self, game: Any) -> int:
        """How many hidden things chance may hand out without an outcome saying so (Titan
        Race's face-down deck: a drawn card is in its drawer's hand, in no outcome): when this
        changes, an input met chance as surely as when it produced an outcome."""
        return 0

    def reveals_hidden(self, before: Any, after: Any) -> bool:
        """The game-neutral test (see :meth:`Ruleset.reveals_hidden`): the state's random
        source was drawn from (its position moved: dice, shuffles, draws by chance), or the
        count of what chance hands out unseen changed (:meth:`unseen`). A game adds what else
        of its own is hidden."""
        drawn = self.dump(before).get("rng") != self.dump(after).get("rng")
        return drawn or self.unseen(before) != self.unseen(after)

    def dump(self, game: Any) -> dict[str, Any]:
        raise NotImplementedError

    def winners(self, game: Any) -> list[str] | None:
        raise NotImplementedError

    def placings(self, game: Any, seats: Mapping[int, Sequence[str]]) -> list[Placing]:
        """By default the rules name only the winners: their seats share the first place, the
        others the next (:func:`app.games.placings.winners_first`)."""
        return winners_first(self.winners(game), seats)

    def view(self, game: Any, seat: int | None, spectator: bool) -> dict[str, Any]:
        raise NotImplementedError

    window_kinds: tuple[str, ...] = ()
    """The kinds of pending decision that are windows (:meth:`Ruleset.is_window`)."""
    window_decline: str = "pass"
    """The input that declines a window."""
    standing_plays: ClassVar[Mapping[str, str]] = {}
    """A standing choice's input, by choice (besides ``ask`` and ``never``)."""

    @property
    def standing_choices(self) -> tuple[str, ...]:
        return (ASK, NEVER, *self.standing_plays)

    def pending(self, game: Any) -> dict[str, Any] | None:
        raise NotImplementedError

    def is_window(self, pending: dict[str, Any]) -> bool:
        return pending.get("kind") in self.window_kinds

    def standing_answer(self, game: Any, seat: int, choice: str) -> str | None:
        """``never`` declines; a card's choice plays it when it is among the options, else
        declines: the same input at the same moment whichever cards the hand holds."""
        pending = self.pending(game)
        if (choice == ASK or choice not in self.standing_choices or pending is None
                or not self.is_window(pending) or self.to_act(game) != [seat]):
            return None
        wanted = self.standing_plays.get(choice)
        return wanted if wanted in self.options(game, seat) else self.window_decline

    def cards_shown(self, before: Any, after: Any) -> bool:
        """The face-up discard pile changed (both games keep their hands' cards there once
        shown)."""
        return bool(self.dump(before).get("discard") != self.dump(after).get("discard"))

    def viewer_random(self, game: Any, seat: int) -> random.Random:
        """A generator seeded by what ``seat`` sees of ``game`` and nothing else (for
        :meth:`Ruleset.viewer_world`): equal views, equal draws."""
        return random.Random(view_seed(self.view(game, seat, False)))

    def preview(self, world: Any, seat: int, option: str) -> dict[str, Any] | None:
        if self.simultaneous(world):
            return None  # (an answer sealed until all are in shows nothing beforehand)
        outcomes = self.apply(world, option, seat)
        if any(outcomes):
            return None
        return self.view(world, None, True)

    def copy(self, game: LoggedGame[Any]) -> LoggedGame[Any]:
        return game.copy()

    def normalise(self, text: str) -> str:
        try:
            return "; ".join(self.normalise_input(part) for part in text.split(";"))
        except InputError as exc:
            raise MoveRejected(exc.message, exc.legal) from None

    def attempted(self, text: str) -> bool:
        """An input word and then a few words of notation's shape (letters, digits, hyphens:
        ``go Z99``, ``take gide``), or a few spaces or counts alone (``E4``, ``P2 M2 S1``); a
        sentence (``Go team, you can do it``) is none."""
        words = text.split()
        if not 0 < len(words) <= MAX_ATTEMPT_WORDS:
            return False
        if words[0].lower() in self.input_words:
            return all(NOTATION_WORD.fullmatch(word) for word in words[1:])
        return all(SPACE_OR_COUNT.fullmatch(word) for word in words)


class ChainRefused(InputError):
    """An input of a seat's submission refused before the engine saw it (see
    :class:`SendersInputs`): ``words`` is the refusal as a catalogue message."""

    def __init__(self, text: str, fields: dict[str, Any], index: int) -> None:
        super().__init__(text.format(**fields), [], index)
        self.words = (text, fields)


class SendersInputs:
    """A seat's submission applied input by input (the :data:`app.games.logged.Check` of
    :meth:`LoggedRuleset.apply_chain`): each input must answer a decision of that seat alone.

    The submission stops (:class:`~app.games.logged.StopBefore`) after the first input that met
    chance or what is hidden (a roll, a drawn tile or card, a shuffle: :meth:`reveals_hidden`):
    that input is played and the rest is not, whatever chance gave, so that the rest's being
    legal or not can never tell the sender what it was (the rest of a chain was an oracle:
    ``move X; play <card>`` accepted only when the card drawn was that one). It stops too where
    the decision becomes another seat's, or one every seat answers in secret. A refusal can
    then only come from inputs before any chance: it carries the legal options at the first
    input, which the sender could see."""

    def __init__(self, rules: LoggedRuleset, game: LoggedGame[Any], seat: int) -> None:
        self.rules = rules
        self.game = game
        """The game as the submission found it (it changes only once every input is in)."""
        self.seat = seat
        self.previous: LoggedGame[Any] = game
        """The game as the input before the current one found it."""
        self.unseen = rules.unseen(game)
        self.parts: list[str] = []
        self.reason: str | None = None

    def __call__(self, game: LoggedGame[Any], index: int, part: str,
                 produced: list[list[str]]) -> None:
        self.parts.append(part.strip())
        if index == 0:
            if self.seat not in self.rules.to_act(game):
                raise ChainRefused(NOT_YOURS_NOW, {"input": part.strip()}, index)
            return
        before, self.previous = self.previous, game
        unseen, self.unseen = self.unseen, self.rules.unseen(game)
        if produced[-1] or unseen != self.unseen or self.rules.reveals_hidden(before, game):
            self.reason = CHANCE
        elif self.seat not in self.rules.to_act(game):
            self.reason = TURN_ENDS
        elif self.rules.simultaneous(game):
            self.reason = SECRET
        else:
            return
        raise StopBefore(index, self.reason)

    def stop(self, text: str, played: int) -> ChainStop | None:
        """Where submission ``text`` stopped once ``played`` of its inputs were applied (None:
        it was played to its end)."""
        if self.reason is None:
            return None
        parts = [part.strip() for part in text.split(";")]
        return ChainStop("; ".join(parts[:played]), "; ".join(parts[played:]), self.reason)

    def rejected(self, exc: InputError) -> MoveRejected:
        """The refusal of the submission, from what refused its input ``exc.index``."""
        if isinstance(exc, ChainRefused):
            return MoveRejected(exc.message, self._legal(), exc.index, exc.words)
        if exc.index == 0:
            return self.rules.refusal(exc)
        return self.rules.refusal(exc, self._legal())

    def _legal(self) -> list[str]:
        """The sender's legal options at the first input."""
        return self.rules.options(self.game, self.seat)


PASSIVE_INPUTS = ("pass", "lose", "end")
"""Inputs that decline what a decision offers, in the order a timeout prefers them."""
