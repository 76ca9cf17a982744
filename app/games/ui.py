"""What the layers above the engine (pages, signed links, mail, the command line) need from a
game: its words and its pictures. Each game provides one :class:`GameUI`; the neutral layers
reach it with :func:`game_ui` by the game's ruleset name (``Game.ruleset``, ``"titan-race"``)
and never import the game's engine themselves.

Conventions every implementation follows:

- ``view`` is the game's JSON state view as its ruleset's ``view()`` returns it (already
  redacted for the viewer), ``pending`` its ``pending`` decision; both are plain mappings.
- ``lang`` is a language code of :mod:`app.core.i18n`; every word goes through
  :func:`app.core.i18n.translate`, so a game's Polish lives in the same catalogue.
- ``setup`` is the game row's setup as stored (``Game.setup``, the game's own JSON: Titan
  Race's circuits, names or inline definitions, or The Great Race's start city);
  :meth:`GameUI.boards` resolves its boards once, the other methods take the result.
- A *space mark* is a string the board picture outlines (Titan Race: ``C4``, or ``1:C4`` on a
  Grand Slam's second board); only the game knows their form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any, Protocol

from app.games import DEFAULT_GAME as GAMES_DEFAULT
from app.games import GAMES


class GameUI(Protocol):
    """A game's words and pictures, for pages, mails, link pages and the command line."""

    name: str
    """The ruleset name this UI belongs to (``titan-race``)."""
    title: str
    """The game's name as shown to people (``Titan Race``)."""
    variants: tuple[str, ...]
    """The variants the new-game form offers (the ruleset's)."""
    board_choices: tuple[str, ...]
    """The built-in boards the new-game form offers, the default first."""
    pieces: tuple[str, ...]
    """The pieces a seat may choose on the new-game form (Titan Race: the Titans)."""
    reply_examples: tuple[str, ...]
    """Replies that answer a decision by mail, shown to a player whose reply held no move
    (Titan Race: ``pick red``, ``move RR; end``, ``pass``)."""
    notation_example: str
    """Inputs joined with ``;`` as the game page's notation field shows an example of them
    (Titan Race: ``move RR; trap C5``): notation, the same in every language."""
    reply_example: str
    """A reply of several steps joined with ``;`` as the mails' footer shows one (Titan Race:
    ``move RR; end``): notation, the same in every language."""
    piece_heading: str
    """What a seat plays, as a column heading (catalogue message id; Titan Race: "Titan")."""
    resign_words: str
    """The game page's resign line (catalogue message id): who plays the seat's pieces."""
    resigned_words: str
    """What the game page says once the seat resigned (catalogue message id): who plays its
    pieces from now on."""
    reaction_hint: str
    """What the clock's hours to react out of turn are for in this game (catalogue message
    id), beside that field of the new-game form."""
    takeback_hint: str
    """What the game page says beside its takeback button (catalogue message id): until when a
    move can be taken back, in the game's own words (what its chance and hidden information
    are)."""
    hidden_since: str
    """What came out since a move that keeps it from being taken back (catalogue message id),
    in a takeback's refusal: the game's chance and hidden information."""

    # -------------------------------------------------------------- boards

    def boards(self, setup: Mapping[str, Any]) -> Any:
        """The game's boards resolved from its setup (``Game.setup``; raises ValueError when
        one cannot be); pass the result to ``board_svg``/``board_text``/``changes``."""

    def board_titles(self, stored: Sequence[Any]) -> list[str]:
        """The titles of boards named as :attr:`board_choices` names them (or as the API's
        ``circuits`` lists them), for a page or mail heading ("Kaldheira")."""

    def setup_titles(self, setup: Mapping[str, Any]) -> list[str]:
        """The titles of the boards of a game's setup (``Game.setup``)."""

    def board_svg(self, view: Mapping[str, Any], boards: Any, *, lang: str = "en",
                  highlight: Sequence[str] = ()) -> str:
        """The board picture of ``view`` as a self-contained SVG, ``highlight`` space marks
        outlined."""

    def panel_facts(self, view: Mapping[str, Any], boards: Any, lang: str) -> str:
        """The board picture's side panel as HTML: what it shows that the game page shows
        nowhere else, for a narrow page. There the page hides the picture's group of class
        ``side-panel`` and shows the picture's top left part only, as its root's ``style``
        gives it (``--pic-w``, ``--pic-h``, ``--main-w``, ``--main-h``); a picture without
        them is shown whole."""

    def board_png(self, svg: str, width: int) -> bytes:
        """``svg`` (from :meth:`board_svg`) as a PNG ``width`` pixels wide, for mail."""

    def board_text(self, view: Mapping[str, Any], boards: Any, lang: str = "en") -> Any:
        """The board for a terminal: a ``rich`` renderable the CLI prints, its words in
        ``lang``."""

    # -------------------------------------------------------------- the new-game form
    # The game's own fields are in its ``new_race.html`` and ``new_seat.html``
    # (``app/games/<game>/templates/pages/``); these read them back.

    def form_defaults(self) -> dict[str, str]:
        """The game's own fields, filled as a new form shows them."""

    def setup_from_form(self, variant: str, form: Mapping[str, Any]) -> dict[str, Any]:
        """The game's setup (its own JSON, ``Game.setup``) from its fields (SetupError with
        the problem in words)."""

    def pieces_from_form(self, index: int, form: Mapping[str, Any]) -> dict[str, Any]:
        """Seat ``index``'s pieces (the game's own JSON, ``Seat.pieces``) from its fields:
        what it chose, nothing for pieces dealt at random (SetupError with the problem)."""

    # -------------------------------------------------------------- pieces in a view

    def rows(self, view: Mapping[str, Any], seats: Sequence[Mapping[str, Any]],
             position: int | None, sealed: Sequence[int]) -> list[dict[str, Any]]:
        """The players' table of the game page and the admin's replay, a row a piece, as the
        game's ``players_table.html`` shows it. ``seats`` are the pages' seat rows (each with
        the names of its ``pieces``), ``position`` the reader's seat, ``sealed`` the seats
        whose secret answer is in."""

    def hands(self, view: Mapping[str, Any]) -> dict[str, list[str]]:
        """The hands ``view`` shows card by card, by piece."""

    def decider(self, pending: Mapping[str, Any] | None) -> str | None:
        """The piece that decides ``pending``, None when no one piece does."""

    def pending_for(self, piece: str | None) -> dict[str, Any]:
        """A pending decision that says only which piece decides (for words of an input)."""

    # -------------------------------------------------------------- names

    def piece_name(self, piece: str | None, lang: str) -> str:
        """A piece (Titan Race: a Titan) by name."""

    def piece_fill(self, piece: str) -> str:
        """The CSS colour of a piece's token on the pages."""

    def die_fill(self, die: str) -> str:
        """The CSS colour of a die (or other coloured chip an outcome shows)."""

    def colour_name(self, colour: str | None, lang: str) -> str:
        """A die's (or chip's) colour in words."""

    def card_name(self, card: str, lang: str) -> str:
        """A card by name."""

    def standing_choice(self, choice: str, lang: str) -> str:
        """One of the ruleset's ``standing_choices`` (a seat's answer to its windows given in
        advance), in words."""
        ...

    def card_info(self, card: str, lang: str) -> dict[str, str]:
        """A card for a hand shown on a page: ``slug``, ``name``, ``effect``, ``timing``."""

    def variant_name(self, variant: str, lang: str) -> str:
        """A variant as the new-game form lists it."""

    # -------------------------------------------------------------- decisions and options

    def describe_option(self, option: str, view: Mapping[str, Any] | None, lang: str) -> str:
        """An option (or a logged input, parts joined by ``;``) in plain words. ``view`` is
        the state before it (it tells whose piece acts); None words it without context."""

    def describe_decision(self, pending: Mapping[str, Any] | None, lang: str) -> str:
        """The pending decision in a sentence, for anyone ("It is Grinder's turn...")."""

    def decision_heading(self, pending: Mapping[str, Any], lang: str) -> str:
        """The heading over the options of the player who decides ("Pick a die")."""

    def waiting_for(self, pending: Mapping[str, Any] | None, names: Sequence[str],
                    lang: str) -> str | None:
        """For those who wait: "Waiting for Ann (Grinder) to pick a die." (None with no
        decision). ``names`` are the deciding players' names."""

    def option_group(self, option: str) -> str:
        """The heading (an English message id) an option is listed under; ``group_order``
        gives the order of the headings."""

    group_order: tuple[str, ...]

    def highlight(self, option: str, view: Mapping[str, Any], after: Mapping[str, Any] | None,
                  boards: Any) -> list[str]:
        """The space marks an option leads to or names: where the acting piece lands (when
        ``after``, the view after it, is known) and the spaces it aims at."""

    def changes(self, before: Mapping[str, Any], after: Mapping[str, Any], boards: Any,
                lang: str) -> tuple[list[str], list[str]]:
        """What differs from ``before`` to ``after``: sentences, and space marks to outline."""

    def outcome_words(self, outcome: str, lang: str) -> tuple[str, list[str]]:
        """A random outcome (already redacted) in words, and the dice colours it shows."""

    seat_options: tuple[str, ...]
    """The options a player may set for their seat before the game starts, as My settings
    offers them (``anytime_windows``: asked whether to play an any-time card as another
    player's turn starts)."""
    mail_kinds: tuple[str, ...]
    """The mails that ask a decision of this game, each a template of its own
    (``<kind>.txt`` and ``.html`` in ``app/games/<game>/templates/mail/``)."""

    def mail_kind(self, pending: Mapping[str, Any] | None) -> str | None:
        """The mail template a decision of this kind is sent with (``turn``, ``pick``,
        ``react``, ``pirates``), None for a kind that has none."""

    # -------------------------------------------------------------- mail
    # A game's mail templates live in ``app/games/<game>/templates/mail/``: a template for each
    # of its ``mail_kinds``, its ``_parts`` (a decision's sentence, the options, the situation)
    # and ``_words.txt`` (its sentences in the shared mails of ``templates/mail/``, whose files
    # it may also override by name); the members below give those templates the game's words.

    def mail_variant(self, variant: str, lang: str) -> str:
        """A variant in a mail's running text ("two players")."""

    def mail_decision(self, pending: Mapping[str, Any], lang: str) -> dict[str, Any]:
        """What the game's mail templates show of the pending decision beyond its ``kind``
        (Titan Race: ``titan``, ``die``, ``face``, ``imitating``, ``event``, ``by``)."""

    def mail_choices(self, options: Sequence[str], view: Mapping[str, Any],
                     suggest: Callable[[], str | None]) -> list[str]:
        """The options a decision mail offers as signed links, in order: all of them, or a
        few for a decision with very many (a plan); ``suggest()`` is the computer's choice
        for the reader (called only when wanted: it takes time)."""

    def mail_option(self, option: str, view: Mapping[str, Any],
                    after: Callable[[], Mapping[str, Any] | None], lang: str) -> dict[str, Any]:
        """An option as a decision mail lists it: ``label`` (its words), ``dest`` and
        ``space`` (space marks the mail's board outlines, or None). ``after()`` is the full
        view after the option, None when chance or a sealed answer is involved (call it only
        for options that may move something: it plays the option on a copy)."""

    def mail_situation(self, view: Mapping[str, Any], owners: Mapping[str, tuple[str, bool]],
                       lang: str) -> dict[str, Any]:
        """The game's state for a mail's situation section. ``view`` is the reader's view;
        ``owners`` maps each piece to its player's name and whether that is the reader."""

    def mail_outcome(self, outcome: str, lang: str) -> str:
        """A random outcome (already redacted) in a mail's list of recent moves."""

    # -------------------------------------------------------------- results

    def score_part(self, label: str, value: int, lang: str) -> str:
        """A part of a seat's score at the end (a :class:`app.games.placings.Placing`'s
        ``parts``: its label id and value) in words ("3 of 3 laps")."""

    def unplaced(self, note: str, lang: str) -> str:
        """Why a seat has no place at the end (a placing's ``note``) in words."""


DEFAULT_GAME = GAMES_DEFAULT
"""The game a page about no one game (a list of games) words its rows with: the registry's
first (:data:`app.games.DEFAULT_GAME`)."""


_UIS: dict[str, GameUI] = {}


def winners_named(ui: GameUI, winner: str | None, lang: str) -> str:
    """A finished game's winners (``Game.winner``: the winning pieces' ids, comma-joined, as
    the API's ``winner`` gives them) by the pieces' names in ``lang``, never by their ids."""
    return ", ".join(ui.piece_name(piece, lang) for piece in str(winner or "").split(",")
                     if piece)


def game_ui(game_name: str) -> GameUI:
    """The UI of the game whose ruleset is named ``game_name`` (KeyError when unknown): the
    registry (:data:`app.games.GAMES`) says where it is; it is imported when first asked for."""
    try:
        return _UIS[game_name]
    except KeyError:
        pass
    game = GAMES.get(game_name)
    if game is None:
        raise KeyError(f"no UI for the game '{game_name}'")
    ui: GameUI = getattr(import_module(f"{game.package}.ui"), game.ui)()
    _UIS[game_name] = ui
    return ui


def forget_ui(game_name: str) -> None:
    """Drop the UI loaded for game ``game_name``, whose entry has left the registry (see
    :func:`app.games.forget`)."""
    _UIS.pop(game_name, None)
