"""Web pages: home, create a game and invite, join, the game page with its turn composer, the
log, my games, the spectator view and the admin replay.

Every page is rendered on the server (Jinja2, ``templates/pages/``); the only script is a small
inline one on the game page that swaps the board for an option's preview while the player points
at (or focuses, or taps "preview" on) that option. Forms are POSTs carrying Flask-WTF's CSRF
token; no GET changes anything. A browser has no account: it holds its seats (``app.web``), the
creator tokens of the games it created and the admin flag in its signed session cookie.

Words on the pages are English; a seat whose language is ``pl`` (or ``?lang=pl``) reads them in
Polish where :data:`PL` has them.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache, wraps
from typing import Any, TypeVar, cast
from urllib.parse import urlencode, urlsplit
from zoneinfo import ZoneInfo, available_timezones

from flask import (
    Blueprint,
    Response,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.typing import ResponseReturnValue
from markupsafe import Markup
from sqlalchemy import func
from sqlmodel import col, select
from werkzeug.exceptions import HTTPException

from .api import keeper
from .board import COLOUR_FILL, board_svg
from .clock import (
    DEFAULT_DEADLINE_HOURS,
    DEFAULT_REACTION_HOURS,
    DEFAULT_REMINDERS,
    HANDOVERS,
    TIMEOUT_ACTIONS,
    ClockError,
    ClockSettings,
    check_reminders,
)
from .engine import VARIANTS
from .engine.cards import CARD_TIMING, TITAN_COLOUR, TITANS
from .engine.circuits import BUILT_IN, TITLES, Circuit, resolve_circuit
from .errors import too_large
from .models import ACTIVE, OPEN, Game, Move, Seat
from .service import (
    LANGUAGES,
    BadRequest,
    Forbidden,
    GameMovedOn,
    NotFound,
    ServiceError,
    check_quiet,
    pause_reason_timeout,
    token_hash,
)
from .timekeeper import ABSENCE_MODES, QUICK_TIMEOUT_KIND, TIMEOUT_KINDS
from .web import my_seats, remember_seat, seat_in, service

pages = Blueprint("pages", __name__)

SESSION_CREATED = "created"
"""Session key: {game uid: {"token": creator token, "invites": {position: invite token}}}."""
SESSION_ADMIN = "admin"
MAX_CREATED = 8
"""Games whose creator token this browser keeps (the oldest are forgotten first)."""
MAX_SEATS = 6
LOG_ON_GAME_PAGE = 12
SPACE = re.compile(r"\b([A-F](?:1[0-2]|[1-9]))\b")

F = TypeVar("F", bound=Callable[..., ResponseReturnValue])

# ---------------------------------------------------------------------------- words

PL: dict[str, str] = {
    # layout and navigation
    "New game": "Nowa gra",
    "My games": "Moje gry",
    "Admin": "Administracja",
    "Home": "Start",
    # game page
    "Game": "Gra",
    "Board": "Plansza",
    "Players": "Gracze",
    "Player": "Gracz",
    "Titan": "Tytan",
    "Space": "Pole",
    "Lap": "Okr.",
    "Life": "Życie",
    "Cards": "Karty",
    "Your hand": "Twoja ręka",
    "No cards in your hand.": "Nie masz kart na ręce.",
    "Log": "Przebieg gry",
    "Full log": "Cały przebieg gry",
    "No moves yet.": "Jeszcze nie było ruchów.",
    "Move": "Ruch",
    "Who": "Kto",
    "What": "Co",
    "Outcome": "Wynik",
    "When": "Kiedy",
    "Computer": "Komputer",
    "you": "ty",
    "to act": "kolej",
    "KO": "KO",
    "not started": "przed startem",
    "Dice on the table": "Kostki na stole",
    "none": "brak",
    "Reload": "Odśwież",
    "Back to the game": "Wróć do gry",
    "spectator": "widz",
    "You are watching as a spectator: hands and choices are hidden.":
        "Oglądasz jako widz: karty i wybory graczy są ukryte.",
    "You play seat {position}.": "Grasz na miejscu {position}.",
    "Waiting for players: {accepted} of {total} have taken their seat.":
        "Czekamy na graczy: {accepted} z {total} zajęło miejsca.",
    "The creator starts the game when everyone is in.":
        "Twórca gry rozpocznie ją, gdy wszyscy dołączą.",
    "Manage this game": "Zarządzaj grą",
    "The race is over.": "Wyścig zakończony.",
    "Winner": "Zwycięzca",
    "The game was abandoned.": "Gra została przerwana.",
    "Round {round}": "Runda {round}",
    "first round": "pierwsza runda",
    "Waiting for {who} to {what}.": "Czekamy, aż {who} {what}.",
    "pick a die": "wybierze kostkę",
    "choose a start space": "wybierze pole startowe",
    "play a turn with the {die} die": "zagra turę z kostką: {die}",
    "react (play a card or pass)": "zareaguje (zagra kartę lub spasuje)",
    "answer the pirates": "odpowie piratom",
    "decide": "zdecyduje",
    "Decisions have a deadline of {hours} hours.": "Na każdą decyzję jest {hours} godz.",
    "Leave the game": "Opuść grę",
    "Resign: the computer plays your Titans from now on.":
        "Poddaj się: od teraz twoimi Tytanami gra komputer.",
    "Resign": "Poddaj się",
    # composer
    "Your decision": "Twoja decyzja",
    "Pick a die": "Wybierz kostkę",
    "Choose your start space": "Wybierz pole startowe",
    "Your turn with the {die} die": "Twoja tura z kostką: {die}",
    "React? You may play a card, or pass": "Reakcja: możesz zagrać kartę albo spasować",
    "Pirates attack {titan}!": "Piraci atakują: {titan}!",
    "Choose": "Wybierz",
    "preview": "podgląd",
    "Point at an option (or tap its preview) to see on the board where it leads.":
        "Wskaż opcję (albo dotknij „podgląd”), by zobaczyć na planszy, dokąd prowadzi.",
    "Preview after: {option}": "Podgląd po: {option}",
    "Point at an option to see where it leads.": "Wskaż opcję, by zobaczyć, dokąd prowadzi.",
    "Swipe the board sideways for more.": "Przesuń planszę w bok, by zobaczyć więcej.",
    "Play this": "Wybierz to",
    "Close": "Zamknij",
    "chance decides: you see it after you choose": "zdecyduje los: zobaczysz po wyborze",
    "Type the notation (several inputs joined with ;)":
        "Wpisz notację (kilka ruchów rozdziel średnikiem)",
    "Send": "Wyślij",
    "Moves": "Ruchy",
    "Traps and damage": "Pułapki i obrażenia",
    "Ability": "Zdolność",
    "Other": "Inne",
    # option words
    "Take the {colour} die": "Weź kostkę: {colour}",
    "Start on {space}": "Start z pola {space}",
    "Move {steps}": "Ruch: {steps}",
    "Put a trap on {space}": "Postaw pułapkę na polu {space}",
    "Deal 1 damage on {space}": "Zadaj 1 obrażenie na polu {space}",
    "Use the Ability": "Użyj zdolności",
    "Ability: a trap on {space}": "Zdolność: pułapka na polu {space}",
    "Ability: move 1 space {direction}": "Zdolność: 1 pole {direction}",
    "Ability: swap with the Titan on {space}": "Zdolność: zamiana z Tytanem z pola {space}",
    "Ability: push the Titan on {space} 1 space {direction}":
        "Zdolność: przesuń Tytana z pola {space} o 1 pole {direction}",
    "Ability: 1 damage on each of the 3 spaces before him":
        "Zdolność: 1 obrażenie na każdym z 3 pól przed nim",
    "Ability: drain the Titan on {space}": "Zdolność: wyssij życie Tytana z pola {space}",
    "Play {card}": "Zagraj kartę {card}",
    "Discard {card}": "Odrzuć kartę {card}",
    "Give {card} to the pirates": "Oddaj piratom kartę {card}",
    "Reroll the die (pentacle)": "Przerzuć kostkę (pentagram)",
    "End the turn": "Zakończ turę",
    "Pass (play no card)": "Pas (bez karty)",
    "Lose 1 Life Point": "Strać 1 punkt życia",
    "straight": "prosto",
    "left": "w lewo",
    "right": "w prawo",
    "back": "do tyłu",
    "back left": "do tyłu w lewo",
    "back right": "do tyłu w prawo",
    # what an option changes
    "{titan} to {space}": "{titan} na pole {space}",
    "{titan}: life {before} → {after}": "{titan}: życie {before} → {after}",
    "{titan} is knocked out": "{titan}: nokaut",
    "{titan} starts lap {lap}": "{titan} zaczyna okrążenie {lap}",
    "trap on {space}": "pułapka na {space}",
    "trap gone from {space}": "znika pułapka z {space}",
    "{titan} wins!": "{titan} wygrywa!",
    "rolled": "rzut",
    "rerolled": "przerzut",
    "the deck was shuffled": "talia została potasowana",
    "a card was stolen": "skradziono kartę",
    # messages
    "That choice was already made: {label}.": "Ten wybór został już zrobiony: {label}.",
    "Done: {label}.": "Zrobione: {label}.",
    "You have taken seat {position}. Welcome to the race!":
        "Zająłeś miejsce {position}. Witaj w wyścigu!",
    "Your seat's API token, for programs (shown once): {token}":
        "Token API twojego miejsca, dla programów (pokazany tylko raz): {token}",
    "You have resigned: the computer plays your Titans from now on.":
        "Poddałeś się: od teraz twoimi Tytanami gra komputer.",
    # cards
    "your turn": "twoja tura",
    "any time": "w dowolnej chwili",
    "reaction": "reakcja",
    # the clock: the new-game form
    "The clock": "Zegar",
    "Every decision has a deadline. Nobody's deadline ends in their quiet hours, and away "
    "dates stretch it.":
        "Każda decyzja ma termin. Niczyj termin nie kończy się w godzinach ciszy, a daty "
        "nieobecności go wydłużają.",
    "Hours per decision of one's own turn": "Godziny na decyzję we własnej turze",
    "0: no clock": "0: bez zegara",
    "Hours to react out of turn": "Godziny na reakcję poza swoją turą",
    "a reaction window, pirates; at most the above": "reakcja, piraci; najwyżej tyle co wyżej",
    "Time bank per player, hours": "Zapas czasu gracza, w godzinach",
    "drawn on when a turn takes longer": "zużywany, gdy tura trwa dłużej",
    "Hours added to the bank after each turn": "Godziny dodawane do zapasu po każdej turze",
    "Reminders": "Przypomnienia",
    "a share of the time, or hours before the deadline":
        "część czasu albo godziny przed terminem",
    "When time runs out": "Gdy czas minie",
    "the computer moves for the player": "komputer wykonuje ruch za gracza",
    "pass what can be passed": "pas tam, gdzie można spasować",
    "the game pauses until the player answers": "gra czeka, aż gracz odpowie",
    "Missed deadlines before the seat is handed over":
        "Przekroczone terminy, po których miejsce przechodzi na innego",
    "0: never": "0: nigdy",
    "Then": "Wtedy",
    "the computer plays the seat from then on": "od tej chwili gra komputer",
    "the computer plays it and I invite someone new":
        "gra komputer, a ja zaproszę kogoś nowego",
    "Owner's e-mail": "E-mail właściciela gry",
    "told about pauses and handovers; default: the first seat's player":
        "dostaje wiadomości o pauzach i przekazaniu miejsc; domyślnie gracz z pierwszego "
        "miejsca",
    "the first seat": "pierwsze miejsce",
    "Time zone": "Strefa czasowa",
    "Quiet hours": "Godziny ciszy",
    "optional": "opcjonalnie",
    "reminder points: {problem}": "przypomnienia: {problem}",
    "choose one of: {choices}": "wybierz jedno z: {choices}",
    "the reaction time ({reaction} h) must not be longer than the deadline ({deadline} h): "
    "shorten it, or give more time per decision":
        "czas na reakcję ({reaction} godz.) nie może być dłuższy niż termin decyzji "
        "({deadline} godz.): skróć go albo daj więcej czasu na decyzję",
    "seat {number}: {problem}": "miejsce {number}: {problem}",
    # the clock: the game page
    "The game is paused": "Gra jest wstrzymana",
    "The clock is stopped and no moves are taken until it resumes.":
        "Zegar stoi i nie można wykonywać ruchów, dopóki gra nie zostanie wznowiona.",
    "You must act by {time}": "Masz czas do {time}",
    "{name} must act by {time}": "{name} ma czas do {time}",
    "the clock is stopped": "zegar stoi",
    "When time runs out: {what}.": "Gdy czas minie: {what}.",
    "The clock is stopped while the game is paused.": "Zegar stoi, dopóki gra jest wstrzymana.",
    "Nobody has a deadline right now.": "Teraz nikt nie ma terminu.",
    "Your time bank: {time}": "Twój zapas czasu: {time}",
    "Missed deadlines": "Przekroczone terminy",
    "This game has no deadlines.": "W tej grze nie ma terminów.",
    "Away dates and quiet hours": "Nieobecności i godziny ciszy",
    "Resume the game": "Wznów grę",
    "Pause the game": "Wstrzymaj grę",
    "why (optional)": "powód (opcjonalnie)",
    "by its owner": "przez właściciela",
    "waiting for {name}, whose time ran out": "czekamy na gracza {name}, któremu minął czas",
    "{hours} h {minutes} min": "{hours} godz. {minutes} min",
    "{hours} h": "{hours} godz.",
    "{minutes} min": "{minutes} min",
    "The game is paused: the clock stops and no moves are taken until you resume it.":
        "Gra wstrzymana: zegar stoi i nie można wykonywać ruchów, dopóki jej nie wznowisz.",
    "The game goes on: open deadlines moved on by the length of the pause.":
        "Gra toczy się dalej: otwarte terminy przesunęły się o czas pauzy.",
    # the clock: the log
    "time ran out: the computer chose": "minął czas: wybrał komputer",
    "the computer played while the player was away":
        "zagrał komputer podczas nieobecności gracza",
    "by the owner": "właściciel gry",
    "by an admin": "administrator",
    "by the clock": "zegar",
    "The game was paused: {reason}": "Gra została wstrzymana: {reason}",
    "The game was resumed": "Gra została wznowiona",
    "Resigned: the computer plays on": "Poddał się: dalej gra komputer",
    "The computer plays this seat from now on": "Od teraz na tym miejscu gra komputer",
    "The computer plays this seat until a new player joins":
        "Na tym miejscu gra komputer, dopóki nie dołączy nowy gracz",
    "A new player takes over this seat": "Nowy gracz przejmuje to miejsce",
    # the clock: replacing a player (set-up page)
    "Replace this player": "Zastąp tego gracza",
    "Invite a new player": "Zaproś nowego gracza",
    "Let the computer play": "Niech gra komputer",
    "The player's links and API token stop working; the computer plays the seat until a new "
    "player joins.":
        "Linki i token API gracza przestają działać; na jego miejscu gra komputer, dopóki nie "
        "dołączy nowy gracz.",
    "invited: {email}": "zaproszono: {email}",
    "The computer plays seat {position} from now on.":
        "Od teraz na miejscu {position} gra komputer.",
    "Seat {position} is offered to {email}: send them the invitation link below. The computer "
    "plays the seat until they join.":
        "Miejsce {position} czeka na {email}: wyślij tej osobie link z zaproszeniem poniżej. "
        "Do jej dołączenia na tym miejscu gra komputer.",
    "give the new player's e-mail address, or let the computer play the seat":
        "podaj adres e-mail nowego gracza albo pozwól grać komputerowi",
    # the clock: away dates and quiet hours
    "You play seat {position} in {game}.": "Grasz na miejscu {position} w grze {game}.",
    "No deadline of yours ends in your quiet hours (it moves to their end) and no reminder is "
    "sent in them. They apply to this game.":
        "Żaden twój termin nie kończy się w godzinach ciszy (przesuwa się na ich koniec) i nie "
        "dostajesz wtedy przypomnień. Dotyczą tej gry.",
    "empty: none": "puste: brak",
    "empty: UTC": "puste: UTC",
    "Save": "Zapisz",
    "Away dates": "Nieobecności",
    "For all your games ({email}); your co-players are told. Times are in {zone}.":
        "Dla wszystkich twoich gier ({email}); współgracze zostaną powiadomieni. Czas w strefie "
        "{zone}.",
    "From": "Od",
    "Until": "Do",
    "Meanwhile": "W tym czasie",
    "Cancel": "Odwołaj",
    "No away dates.": "Brak nieobecności.",
    "Add away dates": "Dodaj nieobecność",
    "Add": "Dodaj",
    "my deadlines stretch over the absence": "moje terminy wydłużają się o nieobecność",
    "the computer plays for me meanwhile": "w tym czasie gra za mnie komputer",
    "this browser has no seat in this game: join from your invitation or open the game from "
    "the link in your mail":
        "ta przeglądarka nie ma miejsca w tej grze: dołącz z zaproszenia albo otwórz grę z "
        "linku w wiadomości",
    "this seat has no player's address: away dates and quiet hours belong to a player":
        "to miejsce nie ma adresu gracza: nieobecności i godziny ciszy dotyczą graczy",
    "Your quiet hours are {quiet} ({zone}).": "Twoje godziny ciszy: {quiet} ({zone}).",
    "You have no quiet hours now.": "Nie masz już godzin ciszy.",
    "{label}: give a date and time such as 2025-07-01 08:00":
        "{label}: podaj datę i godzinę, np. 2025-07-01 08:00",
    "Away from {start} until {end}: your co-players are told.":
        "Nieobecność od {start} do {end}: współgracze zostaną powiadomieni.",
    "you have no such away dates (they may have been cancelled already)":
        "nie masz takiej nieobecności (może już została odwołana)",
    "The away dates are cancelled.": "Nieobecność odwołana.",
    "The race is under way: you take this seat over from the computer.":
        "Wyścig trwa: przejmujesz to miejsce od komputera.",
}

COLOUR_PL = {
    "blue": "niebieska",
    "red": "czerwona",
    "brown": "brązowa",
    "green": "zielona",
    "yellow": "żółta",
    "purple": "fioletowa",
}
DIRECTIONS = {
    "S": "straight",
    "L": "left",
    "R": "right",
    "B": "back",
    "BL": "back left",
    "BR": "back right",
}
CARD_NAMES: dict[str, tuple[str, str]] = {
    "tribal-trap": ("Tribal Trap", "Plemienna Pułapka"),
    "speed-potion": ("Speed Potion", "Eliksir Szybkości"),
    "leap": ("Leap", "Skok"),
    "blink": ("Blink", "Mgnienie"),
    "borrowed-power": ("Borrowed Power", "Pożyczona Moc"),
    "fireball": ("Fireball", "Kula Ognia"),
    "quake": ("Quake", "Wstrząs"),
    "pickpocket": ("Pickpocket", "Kieszonkowiec"),
    "thunderbolt": ("Thunderbolt", "Piorun"),
    "healing-potion": ("Healing Potion", "Eliksir Leczenia"),
    "last-shield": ("Last Shield", "Ostatnia Tarcza"),
    "repulse": ("Repulse", "Odparcie"),
    "dispel": ("Dispel", "Rozproszenie"),
}
CARD_EFFECTS: dict[str, tuple[str, str]] = {
    "tribal-trap": ("Place a trap on any adjacent space.",
                    "Postaw pułapkę na dowolnym sąsiednim polu."),
    "speed-potion": ("Move 1 space straight ahead.", "Przesuń się o 1 pole prosto."),
    "leap": ("Move 2 spaces diagonally the same way, jumping the first.",
             "Przesuń się o 2 pola na ukos w tę samą stronę, przeskakując pierwsze."),
    "blink": ("Move to any empty adjacent space (backward allowed).",
              "Przenieś się na dowolne puste sąsiednie pole (także do tyłu)."),
    "borrowed-power": ("Use the Ability of an adjacent Titan as if it were yours.",
                       "Użyj zdolności sąsiedniego Tytana, jakby była twoja."),
    "fireball": ("1 damage to one space up to 2 steps straight ahead.",
                 "1 obrażenie na jednym polu do 2 kroków prosto przed tobą."),
    "quake": ("Each adjacent Titan is pushed 1 space away and loses 1 Life Point.",
              "Każdy sąsiedni Tytan zostaje odepchnięty o 1 pole i traci 1 punkt życia."),
    "pickpocket": ("Take a random Bonus card from an adjacent Titan's owner.",
                   "Zabierz losową kartę właścicielowi sąsiedniego Tytana."),
    "thunderbolt": ("1 damage to a Titan on an adjacent space.",
                    "1 obrażenie Tytanowi na sąsiednim polu."),
    "healing-potion": ("Gain 2 Life Points (never above 6).",
                       "Odzyskaj 2 punkty życia (najwyżej 6)."),
    "last-shield": ("Prevent a loss of Life Points in another player's turn.",
                    "Zapobiegnij utracie życia w turze innego gracza."),
    "repulse": ("Another Titan's push fails: its movement ends before yours.",
                "Pchnięcie innego Tytana się nie udaje: jego ruch kończy się przed tobą."),
    "dispel": ("Cancel an Ability or card that targets your Titan.",
               "Anuluj zdolność lub kartę wymierzoną w twojego Tytana."),
}
TIMING_WORDS = {"turn": "your turn", "any": "any time", "reaction": "reaction"}
VARIANT_NAMES = {
    "standard": "Standard (3-6 players)",
    "two-player": "Two players (two Titans each)",
    "teams": "Teams (4 or 6 players)",
    "grand-slam": "Grand Slam (three circuits, one per lap)",
}
STATUS_NAMES = {
    "open": ("waiting for players", "czeka na graczy"),
    "active": ("racing", "trwa"),
    "finished": ("finished", "zakończona"),
    "abandoned": ("abandoned", "przerwana"),
}


def lang() -> str:
    value = g.get("lang")
    return value if value in LANGUAGES else "en"


def _pick_lang(seat_language: str | None = None) -> str:
    asked = request.args.get("lang")
    if asked in LANGUAGES:
        return asked
    if seat_language is not None and seat_language in LANGUAGES:
        return seat_language
    return "en"


def tr(text: str, **values: Any) -> str:
    """``text`` in the page's language (Polish where :data:`PL` has it), formatted."""
    if lang() == "pl":
        text = PL.get(text, text)
    return text.format(**values) if values else text


def titan_name(titan: str) -> str:
    return titan[:1].upper() + titan[1:]


def colour_name(colour: str) -> str:
    return COLOUR_PL.get(colour, colour) if lang() == "pl" else colour


def card_name(card: str) -> str:
    names = CARD_NAMES.get(card)
    if names is None:
        return card
    return names[1] if lang() == "pl" else names[0]


def card_info(card: str) -> dict[str, str]:
    effect = CARD_EFFECTS.get(card, ("", ""))
    return {
        "slug": card,
        "name": card_name(card),
        "effect": effect[1] if lang() == "pl" else effect[0],
        "timing": tr(TIMING_WORDS.get(CARD_TIMING.get(card, "turn"), "")),
    }


def _direction(word: str) -> str:
    return tr(DIRECTIONS.get(word.upper(), word))


def _args_words(args: list[str]) -> str:
    out = []
    for word in args:
        if word.upper() in DIRECTIONS:
            out.append(_direction(word))
        elif word in TITANS:
            out.append(titan_name(word))
        else:
            out.append(word)
    return ", ".join(out)


def describe_input(text: str, titan: str | None = None, kind: str | None = None) -> str:
    """An input in plain words: ``move SS`` -> "Move straight, straight"."""
    parts = [p.strip() for p in text.split(";") if p.strip()]
    if len(parts) > 1:
        return "; ".join(describe_input(p, titan, kind) for p in parts)
    words = text.split()
    if not words:
        return text
    verb, args = words[0].lower(), words[1:]
    first = args[0] if args else ""
    if verb == "pick" and args:
        return tr("Take the {colour} die", colour=colour_name(first))
    if verb == "start" and args:
        return tr("Start on {space}", space=first)
    if verb == "move" and args:
        return tr("Move {steps}", steps=", ".join(_direction(c) for c in first))
    if verb == "trap" and args:
        return tr("Put a trap on {space}", space=first)
    if verb == "hit" and args:
        return tr("Deal 1 damage on {space}", space=first)
    if verb == "ability":
        return _describe_ability(titan, args)
    if verb == "play" and args:
        label = tr("Play {card}", card=card_name(first))
        return f"{label} ({_args_words(args[1:])})" if len(args) > 1 else label
    if verb == "discard" and args:
        if kind == "pirates":
            return tr("Give {card} to the pirates", card=card_name(first))
        return tr("Discard {card}", card=card_name(first))
    simple = {
        "reroll": "Reroll the die (pentacle)",
        "end": "End the turn",
        "pass": "Pass (play no card)",
        "lose": "Lose 1 Life Point",
    }
    if verb in simple and not args:
        return tr(simple[verb])
    return text


def _describe_ability(titan: str | None, args: list[str]) -> str:
    space = next((a for a in args if SPACE.fullmatch(a)), None)
    direction = next((a for a in args if a.upper() in DIRECTIONS), None)
    label: str | None = None
    if titan == "grinder" and space:
        label = tr("Ability: a trap on {space}", space=space)
    elif titan == "rassik" and direction:
        label = tr("Ability: move 1 space {direction}", direction=_direction(direction))
    elif titan == "craken" and space:
        label = tr("Ability: swap with the Titan on {space}", space=space)
    elif titan == "ragnarok" and space and direction:
        label = tr("Ability: push the Titan on {space} 1 space {direction}", space=space,
                   direction=_direction(direction))
    elif titan == "slaugg":
        label = tr("Ability: 1 damage on each of the 3 spaces before him")
    elif titan == "chtoolhoo" and space:
        label = tr("Ability: drain the Titan on {space}", space=space)
    if label is not None:
        return f"{titan_name(titan or '')} · {label}"
    base = tr("Use the Ability")
    return f"{base} ({_args_words(args)})" if args else base


def decision_heading(pending: dict[str, Any]) -> str:
    kind = pending.get("kind")
    titan = titan_name(str(pending.get("titan") or ""))
    if kind == "pick":
        return tr("Pick a die")
    if kind == "start":
        return tr("Choose your start space")
    if kind == "turn":
        return tr("Your turn with the {die} die", die=colour_name(str(pending.get("die", ""))))
    if kind == "react":
        return tr("React? You may play a card, or pass")
    if kind == "pirates":
        return tr("Pirates attack {titan}!", titan=titan)
    return tr("Your decision")


def waiting_for(pending: dict[str, Any] | None, seats: list[dict[str, Any]],
                to_act: list[int]) -> str | None:
    if not pending:
        return None
    kind = pending.get("kind")
    what = {
        "pick": tr("pick a die"),
        "start": tr("choose a start space"),
        "turn": tr("play a turn with the {die} die",
                   die=colour_name(str(pending.get("die", "")))),
        "react": tr("react (play a card or pass)"),
        "pirates": tr("answer the pirates"),
    }.get(str(kind), tr("decide"))
    names = [
        f"{s['name']} ({titan_name(str(pending.get('titan') or ''))})"
        if pending.get("titan") else s["name"]
        for s in seats
        if s["position"] in to_act
    ]
    return tr("Waiting for {who} to {what}.", who=", ".join(names) or "?", what=what)


@pages.app_template_global("tr")
def _tr_global(text: str, **values: Any) -> str:
    return tr(text, **values)


@pages.context_processor
def _page_helpers() -> dict[str, Any]:
    return {
        "lang": lang(),
        "titan_name": titan_name,
        "colour_name": colour_name,
        "colour_fill": COLOUR_FILL,
        "titan_fill": {t: COLOUR_FILL.get(c, "#868e96") for t, c in TITAN_COLOUR.items()},
        "status_name": lambda status: STATUS_NAMES.get(status, (status, status))[
            1 if lang() == "pl" else 0],
        "circuit_title": lambda name: TITLES.get(str(name), str(name)),
        "is_admin": bool(session.get(SESSION_ADMIN)),
    }


# ---------------------------------------------------------------------------- errors


def _error_page(status: int, message: str, title: str | None = None) -> ResponseReturnValue:
    titles = {
        400: "This request cannot be used",
        403: "Not allowed",
        404: "Not found",
        409: "The game moved on",
        422: "Not a legal choice",
    }
    return (
        render_template(
            "pages/error.html",
            status=status,
            title=title or titles.get(status, "Something went wrong"),
            message=message,
            back=_safe_next(request.referrer),
        ),
        status,
    )


@pages.errorhandler(ServiceError)
def _service_error(exc: ServiceError) -> ResponseReturnValue:
    return _error_page(exc.status, exc.message)


@pages.errorhandler(HTTPException)
def _http_error(exc: HTTPException) -> ResponseReturnValue:
    code = exc.code or 500
    if code == 400 and "CSRF" in (exc.description or ""):
        return _error_page(
            400,
            "This form is missing its security token or the token has expired (the page was "
            "open for a long time). Nothing was changed: reload the page and try again.",
            title="The form has expired",
        )
    if code < 400:
        return exc.get_response()
    if code == 413:
        return _error_page(413, too_large(current_app.config.get("MAX_CONTENT_LENGTH")),
                           title="Too much data")
    return _error_page(code, exc.description or exc.name)


def _safe_next(target: str | None) -> str | None:
    """A local path to go back to (never another site)."""
    if not target:
        return None
    parts = urlsplit(target)
    if parts.netloc and parts.netloc != request.host:
        return None
    path = parts.path or "/"
    if not path.startswith("/") or path.startswith("//"):
        return None
    return path + (f"?{parts.query}" if parts.query else "")


# ---------------------------------------------------------------------------- reading rows


def _game_rows(uid: str) -> tuple[Game, list[Seat]]:
    """The game's row and its seats (404 for an unknown game)."""
    if not re.fullmatch(r"[0-9a-f]{32}", uid or ""):
        raise NotFound(f"there is no game '{uid}'")
    with service().session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).first()
        if game is None:
            raise NotFound(f"there is no game '{uid}'")
        seats = list(
            s.exec(select(Seat).where(Seat.game_id == game.id).order_by(col(Seat.position)))
        )
        return game, seats


_CIRCUITS: dict[str, list[Circuit]] = {}


def _circuits(game: Game) -> list[Circuit]:
    """The game's boards (a game's circuits never change, so they are kept per game)."""
    found = _CIRCUITS.get(game.uid)
    if found is None:
        found = [resolve_circuit(c) for c in game.circuits]
        if len(_CIRCUITS) > 500:
            _CIRCUITS.clear()
        _CIRCUITS[game.uid] = found
    return found


def _seat_rows(seats: list[Seat], summary: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    by_position = {s["position"]: s for s in (summary or {}).get("seats", [])}
    rows = []
    for seat in seats:
        summed = by_position.get(seat.position, {})
        rows.append(
            {
                "position": seat.position,
                "name": summed.get("name", seat.player_name),
                "titans": summed.get("titans", seat.titans),
                "team": seat.team,
                "bot": summed.get("bot", seat.is_bot),
                "accepted": seat.accepted_at is not None,
                "resigned": seat.resigned_at is not None,
                "language": seat.language,
                "email": seat.email,
            }
        )
    return rows


def _board_index(lap: Any, boards: int) -> int:
    try:
        lap_number = int(lap)
    except (TypeError, ValueError):
        lap_number = 1
    return (lap_number - 1) % boards if boards > 1 else 0


def _on_board(space: str, lap: Any, boards: int) -> str:
    return f"{_board_index(lap, boards)}:{space}" if boards > 1 else space


def _trap_name(trap: str) -> str:
    return trap.split(":", 1)[1] if ":" in trap else trap


# ---------------------------------------------------------------------------- where options lead


def changes(before: dict[str, Any], after: dict[str, Any], boards: int) -> tuple[list[str],
                                                                                 list[str]]:
    """What differs on the board from ``before`` to ``after``: words, and spaces to outline."""
    words: list[str] = []
    marks: list[str] = []
    old_titans = before.get("titans") or {}
    for titan, info in (after.get("titans") or {}).items():
        old = old_titans.get(titan) or {}
        name = titan_name(titan)
        space, lap = info.get("space"), info.get("lap")
        if space and (space != old.get("space") or lap != old.get("lap")):
            words.append(tr("{titan} to {space}", titan=name, space=space))
            marks.append(_on_board(str(space), lap, boards))
        if lap != old.get("lap") and lap is not None and old.get("lap") is not None:
            words.append(tr("{titan} starts lap {lap}", titan=name, lap=lap))
        if info.get("ko") and not old.get("ko"):
            words.append(tr("{titan} is knocked out", titan=name))
        elif info.get("life") != old.get("life") and old.get("life") is not None:
            words.append(tr("{titan}: life {before} → {after}", titan=name,
                            before=old.get("life"), after=info.get("life")))
    old_traps = set(before.get("traps") or [])
    new_traps = set(after.get("traps") or [])
    for trap in sorted(new_traps - old_traps):
        words.append(tr("trap on {space}", space=_trap_name(trap)))
        marks.append(trap)
    for trap in sorted(old_traps - new_traps):
        words.append(tr("trap gone from {space}", space=_trap_name(trap)))
        marks.append(trap)
    if after.get("winner") and not before.get("winner"):
        words.append(tr("{titan} wins!", titan=titan_name(str(after["winner"]))))
    return words, marks


def _targets(option: str, view: dict[str, Any], titan: str | None, boards: int) -> list[str]:
    """Spaces an option names, on the acting Titan's board."""
    lap = ((view.get("titans") or {}).get(titan or "") or {}).get("lap", 1)
    return [_on_board(space, lap, boards) for space in SPACE.findall(option.split(" ", 1)[-1])
            if " " in option]


def option_entries(uid: str, position: int, options: list[str], view: dict[str, Any],
                   circuits: list[Circuit], seq: int) -> list[dict[str, Any]]:
    """Each legal option with its words, group, preview summary and highlighted spaces."""
    pending = view.get("pending") or {}
    titan = pending.get("titan")
    kind = pending.get("kind")
    boards = max(len(circuits), 1)
    entries = []
    for option in options:
        try:
            after = service().preview(uid, position, option)
        except ServiceError:
            after = None
        targets = _targets(option, view, titan, boards)
        words: list[str] = []
        if after is None:
            marks, chance = targets, True
        else:
            words, marks = changes(view, after, boards)
            marks = list(dict.fromkeys(marks + targets))
            chance = False
        verb = option.split(" ", 1)[0]
        group = {
            "move": "Moves",
            "trap": "Traps and damage", "hit": "Traps and damage",
            "ability": "Ability", "play": "Cards", "discard": "Cards",
        }.get(verb, "Other")
        entries.append(
            {
                "value": option,
                "label": describe_input(option, titan, kind),
                "group": group,
                "changes": words,
                "chance": chance,
                "highlight": marks,
                "preview_url": url_for("pages.preview", uid=uid, option=option, seq=seq),
            }
        )
    return entries


def _grouped(entries: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    order = ["Moves", "Traps and damage", "Ability", "Cards", "Other"]
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        groups.setdefault(entry["group"], []).append(entry)
    if len(groups) == 1:  # one kind of answer (a pick, a start...): the heading says it all
        return [("", entries)]
    return [(tr(name), groups[name]) for name in order if name in groups]


# ---------------------------------------------------------------------------- log


def outcome_items(outcomes: list[Any]) -> list[dict[str, Any]]:
    """A move's random outcomes for display: dice rolls as colours, the rest as words."""
    items: list[dict[str, Any]] = []
    for part in outcomes or []:
        for outcome in part if isinstance(part, list) else [part]:
            words = str(outcome).split()
            if not words:
                continue
            head = words[0]
            if head in ("roll", "reroll"):
                items.append({"label": tr("rolled" if head == "roll" else "rerolled"),
                              "dice": words[1:]})
            elif head == "shuffle" and len(words) == 1:
                items.append({"label": tr("the deck was shuffled"), "dice": []})
            elif head == "steal" and words[1:] == ["a", "card"]:
                items.append({"label": tr("a card was stolen"), "dice": []})
            else:
                items.append({"label": str(outcome), "dice": []})
    return items


ACTOR_WORDS = {
    "timeout": "time ran out: the computer chose",
    "away": "the computer played while the player was away",
    "owner": "by the owner",
    "admin": "by an admin",
    "clock": "by the clock",
}
"""How a log entry not made by its seat's player (nor by a computer seat) is marked."""
HANDOVER_WORDS = {
    "computer": "The computer plays this seat from now on",
    "invite": "The computer plays this seat until a new player joins",
    "player": "A new player takes over this seat",
}


def note_label(kind: str, text: str, seats: list[dict[str, Any]]) -> str:
    """A note in the log (a pause, a resignation, a handover) in plain words."""
    rest = text.split(" ", 1)[1] if " " in text else ""
    if kind == "pause":
        return tr("The game was paused: {reason}", reason=pause_words(rest, seats))
    if kind == "resume":
        return tr("The game was resumed")
    if kind == "resign":
        return tr("Resigned: the computer plays on")
    if kind == "handover":
        return tr(HANDOVER_WORDS.get(rest, "The seat was handed over"))
    return text


def log_rows(moves: list[dict[str, Any]], seats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names = {s["position"]: s["name"] for s in seats}
    only_titan = {s["position"]: s["titans"][0] for s in seats if len(s["titans"]) == 1}
    rows = []
    for move in moves:
        seat = move.get("seat")
        kind = str(move.get("kind") or "move")
        actor = str(move.get("actor") or "player")
        rows.append(
            {
                "seq": move["seq"],
                "who": names.get(seat, "—") if seat is not None else "—",
                "titan": only_titan.get(seat),
                "seat": seat,
                "input": move["input"],
                "kind": kind,
                "actor": actor,
                "by": tr(ACTOR_WORDS[actor]) if actor in ACTOR_WORDS else None,
                "label": describe_input(move["input"], only_titan.get(seat)) if kind == "move"
                else note_label(kind, move["input"], seats),
                "outcomes": outcome_items(move.get("outcomes") or []),
                "at": _when(move.get("created_at")),
            }
        )
    return rows


def _when(stamp: Any) -> str:
    if not isinstance(stamp, str):
        return ""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def local_time(stamp: Any, zone_name: str | None) -> str | None:
    """An ISO time as the wall clock of ``zone_name`` shows it (None without a valid zone)."""
    if not isinstance(stamp, str) or not zone_name:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        local = moment.astimezone(ZoneInfo(zone_name))
    except (ValueError, KeyError):
        return None
    return f"{local:%Y-%m-%d %H:%M} {zone_name}"


def duration(seconds: int) -> str:
    """A span of time in hours and minutes, e.g. "5 h 30 min"."""
    minutes = max(0, int(seconds)) // 60
    hours, minutes = divmod(minutes, 60)
    if hours and minutes:
        return tr("{hours} h {minutes} min", hours=hours, minutes=minutes)
    if hours:
        return tr("{hours} h", hours=hours)
    return tr("{minutes} min", minutes=minutes)


@cache
def time_zones() -> tuple[str, ...]:
    """IANA time zone names for the forms' suggestions."""
    return tuple(sorted(z for z in available_timezones()
                        if ("/" in z and not z.startswith(("posix/", "right/", "Etc/")))
                        or z == "UTC"))


def pause_words(reason: str | None, seats: list[dict[str, Any]]) -> str:
    """Why a game is paused, in the page's language where the reason is the clock's own."""
    if not reason or reason == "by its owner":
        return tr("by its owner")
    for seat in seats:
        if reason == pause_reason_timeout(seat["position"]):
            return tr("waiting for {name}, whose time ran out", name=seat["name"])
    return reason


# ---------------------------------------------------------------------------- home, my games


@pages.get("/")
def home() -> ResponseReturnValue:
    g.lang = _pick_lang()
    return render_template("pages/home.html", games=_my_games()[:5])


def _my_games() -> list[dict[str, Any]]:
    """The games this browser has seats in, or created, newest activity first."""
    rows: list[dict[str, Any]] = []
    seats = my_seats()
    created = _created()
    for uid in list(dict.fromkeys([*seats, *created])):
        position = seats.get(uid)
        try:
            summary = service().state(uid, position)["game"]
        except Forbidden:  # a private game this browser created without taking a seat
            game_row, _ = _game_rows(uid)
            summary = {"name": game_row.name, "variant": game_row.variant, "seats": [],
                       "circuits": [c if isinstance(c, str) else c.get("name", "?")
                                    for c in game_row.circuits],
                       "status": game_row.status, "seq": 0, "to_act": [],
                       "winner": game_row.winner}
        except ServiceError:
            continue
        mine = next((s for s in summary["seats"] if s["position"] == position), None)
        rows.append(
            {
                "uid": uid,
                "name": summary["name"] or f"Game {uid[:8]}",
                "variant": summary["variant"],
                "circuits": summary["circuits"],
                "status": summary["status"],
                "seq": summary["seq"],
                "position": position,
                "titans": mine["titans"] if mine else [],
                "your_turn": position is not None and position in summary["to_act"]
                and summary["status"] == ACTIVE,
                "creator": uid in created,
                "winner": summary["winner"],
            }
        )
    rows.sort(key=lambda r: (not r["your_turn"], r["status"] != ACTIVE, -r["seq"]))
    return rows


@pages.get("/games")
def my_games() -> ResponseReturnValue:
    g.lang = _pick_lang()
    return render_template("pages/my_games.html", games=_my_games())


# ---------------------------------------------------------------------------- create and invite


def _created() -> dict[str, dict[str, Any]]:
    data = session.get(SESSION_CREATED, {})
    return dict(data) if isinstance(data, dict) else {}


def _keep_created(uid: str, entry: dict[str, Any]) -> None:
    created = _created()
    created.pop(uid, None)
    created[uid] = entry
    while len(created) > MAX_CREATED:
        created.pop(next(iter(created)))
    session[SESSION_CREATED] = created
    session.permanent = True


def _creator_token(uid: str) -> str | None:
    entry = _created().get(uid)
    token = entry.get("token") if isinstance(entry, dict) else None
    return token if isinstance(token, str) else None


def _new_game_defaults() -> dict[str, Any]:
    return {
        "name": "",
        "variant": "standard",
        "circuit0": BUILT_IN[0],
        "circuit1": BUILT_IN[1],
        "circuit2": BUILT_IN[2],
        "spectators": "on",
        "deadline_hours": str(DEFAULT_DEADLINE_HOURS),
        "reaction_hours": str(DEFAULT_REACTION_HOURS),
        "bank_hours": "0",
        "increment_hours": "0",
        "reminders": ", ".join(DEFAULT_REMINDERS),
        "on_timeout": "bot",
        "max_missed": "0",
        "after_missed": "computer",
        "owner_email": "",
        **{f"seat{i}_kind": ("human" if i < 3 else "none") for i in range(MAX_SEATS)},
    }


def _form_context(values: dict[str, Any]) -> dict[str, Any]:
    return {
        "form": values,
        "variants": [(v, VARIANT_NAMES.get(v, v)) for v in VARIANTS],
        "circuits": [(c, TITLES.get(c, c)) for c in BUILT_IN],
        "titans": TITANS,
        "languages": LANGUAGES,
        "max_seats": MAX_SEATS,
        "timeout_actions": [(a, TIMEOUT_ACTION_WORDS.get(a, a)) for a in TIMEOUT_ACTIONS],
        "handovers": [(h, HANDOVER_CHOICE_WORDS.get(h, h)) for h in HANDOVERS],
        "zones": time_zones(),
    }


TIMEOUT_ACTION_WORDS = {
    "bot": "the computer moves for the player",
    "pass": "pass what can be passed",
    "pause": "the game pauses until the player answers",
}
HANDOVER_CHOICE_WORDS = {
    "computer": "the computer plays the seat from then on",
    "invite": "the computer plays it and I invite someone new",
}
CLOCK_FIELDS = (
    ("deadline_hours", "the deadline"),
    ("reaction_hours", "the reaction time"),
    ("bank_hours", "the time bank"),
    ("increment_hours", "the increment"),
    ("max_missed", "the missed deadlines before a handover"),
)


@pages.get("/new")
def new_game() -> ResponseReturnValue:
    g.lang = _pick_lang()
    return render_template("pages/new.html", **_form_context(_new_game_defaults()))


class FormProblem(ValueError):
    pass


def _int_field(form: dict[str, Any], key: str, label: str) -> int | None:
    raw = str(form.get(key, "")).strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise FormProblem(f"{label} must be a whole number, not '{raw}'") from None


def parse_new_game(form: dict[str, Any]) -> dict[str, Any]:
    """The create_game arguments from the new-game form (raises FormProblem)."""
    variant = str(form.get("variant", "standard"))
    if variant not in VARIANTS:
        raise FormProblem(f"choose a variant: {', '.join(VARIANTS)}")
    count = 3 if variant == "grand-slam" else 1
    circuits = [str(form.get(f"circuit{i}", "")) for i in range(count)]
    for circuit in circuits:
        if circuit not in BUILT_IN:
            raise FormProblem("choose the circuit(s) from the six built-in circuits")
    seats: list[dict[str, Any]] = []
    for i in range(MAX_SEATS):
        kind = str(form.get(f"seat{i}_kind", "none"))
        if kind not in ("human", "computer"):
            continue
        spec: dict[str, Any] = {}
        name = str(form.get(f"seat{i}_name", "")).strip()
        if name:
            spec["name"] = name[:100]
        titan = str(form.get(f"seat{i}_titan", "")).strip()
        if titan:
            spec["titans"] = [titan]
        team = _int_field(form, f"seat{i}_team", f"the team of seat {i + 1}")
        if team is not None:
            spec["team"] = team
        if kind == "computer":
            spec["bot"] = True
        else:
            spec["email"] = str(form.get(f"seat{i}_email", "")).strip()
            if not spec["email"]:
                raise FormProblem(f"seat {i + 1}: give the player's e-mail address "
                                  "(or make it a computer player)")
            spec["language"] = str(form.get(f"seat{i}_lang", "en"))
            spec.update(_seat_clock(form, i))
        seats.append(spec)
    if not 2 <= len(seats) <= MAX_SEATS:
        raise FormProblem("a game has 2 to 6 seats: choose a player or the computer for each")
    settings: dict[str, Any] = {"spectators": bool(form.get("spectators")), **_clock_form(form)}
    seed = _int_field(form, "seed", "the seed")
    if seed is not None and not 0 <= seed < 2**62:
        raise FormProblem("the seed must be between 0 and 2^62")
    owner = str(form.get("owner_email", "")).strip()
    return {
        "name": str(form.get("name", "")).strip()[:200],
        "variant": variant,
        "circuits": circuits,
        "seats": seats,
        "settings": settings,
        "seed": seed,
        "owner_email": owner or None,
    }


def _seat_clock(form: dict[str, Any], index: int) -> dict[str, str]:
    """A human seat's quiet hours and time zone from the form (both optional), checked."""
    quiet = str(form.get(f"seat{index}_quiet", "")).strip()
    zone_name = str(form.get(f"seat{index}_timezone", "")).strip()
    try:
        return check_quiet(quiet or None, zone_name or None)
    except BadRequest as exc:
        raise FormProblem(tr("seat {number}: {problem}", number=index + 1,
                             problem=exc.message)) from None


def _clock_form(form: dict[str, Any]) -> dict[str, Any]:
    """The clock settings the form gives (a field left out of the form is left to the
    defaults; the service checks the ranges)."""
    settings: dict[str, Any] = {}
    for key, label in CLOCK_FIELDS:
        value = _int_field(form, key, label)
        if value is not None:
            settings[key] = value
    if "reminders" in form:
        points = [p.strip() for p in re.split(r"[,;\s]+", str(form["reminders"])) if p.strip()]
        try:
            settings["reminders"] = check_reminders(points)
        except ClockError as exc:
            raise FormProblem(tr("reminder points: {problem}", problem=exc)) from None
    for key, allowed in (("on_timeout", TIMEOUT_ACTIONS), ("after_missed", HANDOVERS)):
        choice = str(form.get(key, "")).strip()
        if choice and choice not in allowed:
            raise FormProblem(tr("choose one of: {choices}", choices=", ".join(allowed)))
        if choice:
            settings[key] = choice
    deadline = settings.get("deadline_hours", DEFAULT_DEADLINE_HOURS)
    reaction = settings.get("reaction_hours")
    if deadline and reaction is not None and reaction > deadline:
        raise FormProblem(tr("the reaction time ({reaction} h) must not be longer than the "
                             "deadline ({deadline} h): shorten it, or give more time per "
                             "decision", reaction=reaction, deadline=deadline))
    return settings


@pages.post("/new")
def create_game() -> ResponseReturnValue:
    g.lang = _pick_lang()
    form = request.form.to_dict()
    try:
        created = service().create_game(**parse_new_game(form))
    except (FormProblem, ServiceError) as exc:
        message = exc.message if isinstance(exc, ServiceError) else str(exc)
        return (
            render_template("pages/new.html", error=message, **_form_context(form)),
            exc.status if isinstance(exc, ServiceError) else 400,
        )
    uid = created["game"]
    _keep_created(
        uid,
        {
            "token": created["creator_token"],
            "invites": {str(i["position"]): i["invite_token"] for i in created["invitations"]},
        },
    )
    flash("The game is created. Send each player their invitation link.", "ok")
    return redirect(url_for("pages.setup", uid=uid), 303)


def _join_link(token: str) -> str:
    return f"{service().settings.base_url}{url_for('pages.join', token=token)}"


@pages.get("/games/<uid>/setup")
def setup(uid: str) -> ResponseReturnValue:
    game, seats = _game_rows(uid)
    g.lang = _pick_lang()
    token = _creator_token(uid)
    entry = _created().get(uid) or {}
    invites = entry.get("invites") or {}
    rows = _seat_rows(seats)
    pending = {seat.position: seat.invite_token_hash for seat in seats}
    for row in rows:
        invite = invites.get(str(row["position"]))
        row["invited"] = pending[row["position"]] is not None
        if game.status == ACTIVE:  # a seat given to someone new while the game runs
            valid = isinstance(invite, str) and pending[row["position"]] == token_hash(invite)
            row["link"] = _join_link(str(invite)) if valid else None
        else:
            row["link"] = _join_link(invite) if invite and not row["accepted"] else None
    return render_template(
        "pages/setup.html",
        game=game,
        seats=rows,
        creator_token=token,
        circuits=[TITLES.get(c, c) if isinstance(c, str) else c.get("name", "?")
                  for c in game.circuits],
        waiting=[r["position"] for r in rows if not r["accepted"]],
        seated=seat_in(uid),
    )


@pages.post("/games/<uid>/setup")
def claim_creator(uid: str) -> ResponseReturnValue:
    """Keep a creator token typed in this browser (e.g. on another device)."""
    game, _ = _game_rows(uid)
    token = request.form.get("creator_token", "").strip()
    if not token or not secrets.compare_digest(game.creator_token_hash, token_hash(token)):
        raise Forbidden("that is not this game's creator token")
    _keep_created(uid, {"token": token, "invites": {}})
    flash("This browser now manages the game.", "ok")
    return redirect(url_for("pages.setup", uid=uid), 303)


def _require_creator(uid: str) -> str:
    token = _creator_token(uid)
    if token is None:
        raise Forbidden("only the game's creator may do this: this browser does not hold its "
                        "creator token (enter it on the game's set-up page)")
    return token


@pages.post("/games/<uid>/invite")
def invite(uid: str) -> ResponseReturnValue:
    token = _require_creator(uid)
    try:
        position = int(request.form.get("position", ""))
    except ValueError:
        raise ServiceError("choose a seat to invite") from None
    result = service().invite(uid, token, position, request.form.get("email", ""))
    entry = _created()[uid]
    invites = dict(entry.get("invites") or {})
    invites[str(position)] = result["invite_token"]
    _keep_created(uid, {**entry, "invites": invites})
    flash(f"A new invitation for seat {position + 1} ({result['email']}) is ready.", "ok")
    return redirect(url_for("pages.setup", uid=uid), 303)


@pages.post("/games/<uid>/start")
def start(uid: str) -> ResponseReturnValue:
    token = _require_creator(uid)
    service().start(uid, token, fill_with_bots=bool(request.form.get("fill_with_bots")))
    _keep_created(uid, {"token": token, "invites": {}})
    flash("The race has started.", "ok")
    return redirect(url_for("pages.game", uid=uid), 303)


@pages.post("/games/<uid>/abandon")
def abandon(uid: str) -> ResponseReturnValue:
    token = _require_creator(uid)
    service().abandon(uid, token)
    flash("The game is abandoned.", "ok")
    return redirect(url_for("pages.game", uid=uid), 303)


def _seat_lang(uid: str) -> None:
    """The page language of this browser's seat in game ``uid`` (or ?lang=, or English)."""
    position = seat_in(uid)
    _, seat_list = _game_rows(uid)
    g.lang = _pick_lang(next((s.language for s in seat_list if s.position == position), None))


@pages.post("/games/<uid>/pause")
def pause(uid: str) -> ResponseReturnValue:
    token = _require_creator(uid)
    _seat_lang(uid)
    reason = request.form.get("reason", "").strip()[:200]
    service().pause(uid, token, reason=reason)
    flash(tr("The game is paused: the clock stops and no moves are taken until you resume it."),
          "ok")
    return redirect(url_for("pages.game", uid=uid), 303)


@pages.post("/games/<uid>/resume")
def resume(uid: str) -> ResponseReturnValue:
    token = _require_creator(uid)
    _seat_lang(uid)
    service().resume(uid, token)
    flash(tr("The game goes on: open deadlines moved on by the length of the pause."), "ok")
    return redirect(url_for("pages.game", uid=uid), 303)


@pages.post("/games/<uid>/seats/<int:position>/replace")
def replace_seat(uid: str, position: int) -> ResponseReturnValue:
    """The creator gives a seat of a running game to a new player (an invitation) or to the
    computer."""
    token = _require_creator(uid)
    g.lang = _pick_lang()
    if request.form.get("to") == "computer":
        service().replace_seat(uid, token, position, None)
        flash(tr("The computer plays seat {position} from now on.", position=position + 1), "ok")
        return redirect(url_for("pages.setup", uid=uid), 303)
    email = request.form.get("email", "").strip()
    if not email:
        raise BadRequest(tr("give the new player's e-mail address, or let the computer play "
                            "the seat"))
    result = service().replace_seat(uid, token, position, email)
    entry = _created().get(uid) or {"token": token}
    invites = dict(entry.get("invites") or {})
    invites[str(position)] = result["invite_token"]
    _keep_created(uid, {**entry, "invites": invites})
    flash(tr("Seat {position} is offered to {email}: send them the invitation link below. The "
             "computer plays the seat until they join.", position=position + 1,
             email=result["email"]), "ok")
    return redirect(url_for("pages.setup", uid=uid), 303)


# ---------------------------------------------------------------------------- join


def _invitation(token: str) -> tuple[Game, Seat, list[Seat]] | None:
    if not token or len(token) > 200:
        return None
    with service().session() as s:
        seat = s.exec(select(Seat).where(Seat.invite_token_hash == token_hash(token))).first()
        if seat is None:
            return None
        game = s.get(Game, seat.game_id)
        if game is None:
            return None
        seats = list(
            s.exec(select(Seat).where(Seat.game_id == game.id).order_by(col(Seat.position)))
        )
        return game, seat, seats


@pages.get("/join/<token>")
def join(token: str) -> ResponseReturnValue:
    found = _invitation(token)
    if found is None:
        g.lang = _pick_lang()
        raise NotFound("this invitation is unknown or was already used (a used invitation "
                       "cannot be used twice: open the game from the browser that joined, or "
                       "from the link in your mail)")
    game, seat, seats = found
    g.lang = _pick_lang(seat.language)
    return render_template(
        "pages/join.html",
        game=game,
        seat=seat,
        seats=_seat_rows(seats),
        token=token,
        circuits=[TITLES.get(c, c) if isinstance(c, str) else c.get("name", "?")
                  for c in game.circuits],
        open=game.status == OPEN or (game.status == ACTIVE and seat.is_bot),
        running=game.status == ACTIVE,
        already=seat_in(game.uid),
    )


@pages.post("/join/<token>")
def accept(token: str) -> ResponseReturnValue:
    name = request.form.get("name", "").strip() or None
    result = service().accept(token, name=name)
    remember_seat(result["game"], result["position"])
    found = _game_rows(result["game"])[1]
    g.lang = _pick_lang(next((s.language for s in found if s.position == result["position"]),
                             None))
    flash(tr("You have taken seat {position}. Welcome to the race!",
             position=result["position"] + 1), "ok")
    flash(tr("Your seat's API token, for programs (shown once): {token}",
             token=result["api_token"]), "token")
    return redirect(url_for("pages.game", uid=result["game"]), 303)


# ---------------------------------------------------------------------------- the game page


def _game_context(uid: str) -> dict[str, Any]:
    game, seat_rows = _game_rows(uid)
    position = seat_in(uid)
    if position is not None and position not in {s.position for s in seat_rows}:
        position = None
    language = next((s.language for s in seat_rows if s.position == position), None)
    g.lang = _pick_lang(language)
    svc = service()
    state = svc.state(uid, position)
    summary = state["game"]
    seats = _seat_rows(seat_rows, summary)
    view: dict[str, Any] | None = state.get("view")
    circuits = _circuits(game)
    to_act = summary["to_act"] if summary["status"] == ACTIVE else []
    context: dict[str, Any] = {
        "game": game,
        "summary": summary,
        "seats": seats,
        "position": position,
        "view": view,
        "to_act": to_act,
        "creator": _creator_token(uid) is not None,
        "seq": summary["seq"],
        "settings": game.settings,
        "composer": None,
        "hand": [],
        "titan_rows": [],
        "board": None,
        "waiting": None,
        **_clock_context(game, seat_rows, summary, seats, position),
    }
    if view is None:
        return context
    context["board"] = Markup(board_svg(view, circuits, lang=lang()))
    context["titan_rows"] = _titan_rows(view, seats, position)
    if position is not None:
        mine = next((s for s in seats if s["position"] == position), None)
        for titan in mine["titans"] if mine else []:
            hand = ((view.get("titans") or {}).get(titan) or {}).get("hand")
            if isinstance(hand, list):
                context["hand"].extend({**card_info(c), "titan": titan} for c in hand)
    pending = view.get("pending")
    # a paused game takes no moves, except the answer of the seat whose timeout paused it
    held = summary.get("paused") and (
        position is None or summary.get("pause_reason") != pause_reason_timeout(position))
    if position is not None and position in to_act and isinstance(pending, dict) and not held:
        opts = svc.options(uid, position)
        context["composer"] = {
            "heading": decision_heading(opts["pending"] or pending),
            "titan": (opts["pending"] or {}).get("titan"),
            "seq": opts["seq"],
            "groups": _grouped(
                option_entries(uid, position, opts["options"], view, circuits, opts["seq"])
            ),
        }
    else:
        context["waiting"] = waiting_for(pending, seats, to_act)
    moves = svc.log(uid, position)["moves"]
    context["log"] = list(reversed(log_rows(moves[-LOG_ON_GAME_PAGE:], seats)))
    context["log_more"] = len(moves) > LOG_ON_GAME_PAGE
    return context


def _clock_context(game: Game, seat_rows: list[Seat], summary: dict[str, Any],
                   seats: list[dict[str, Any]], position: int | None) -> dict[str, Any]:
    """The clock as the game page shows it: who must act by when (in UTC, and in the viewing
    seat's time zone), the viewer's time bank, the pause and the missed deadlines."""
    clock = ClockSettings.of(game.settings).in_effect()
    viewer = next((s for s in seat_rows if s.position == position), None)
    zone_name = (viewer.notify or {}).get("timezone") if viewer is not None else None
    names = {s["position"]: s["name"] for s in seats}
    active = summary["status"] == ACTIVE
    due: list[dict[str, Any]] = []
    if active and clock["running"]:
        for row in keeper().deadlines_of(game.uid):
            if row["kind"] not in TIMEOUT_KINDS or row["seq"] != summary["decision_seq"]:
                continue
            due.append({
                "position": row["seat"],
                "name": names.get(row["seat"], "?"),
                "mine": row["seat"] == position,
                "iso": row["due_at"],
                "utc": _when(row["due_at"]),
                "local": local_time(row["due_at"], zone_name),
                "quick": row["kind"] == QUICK_TIMEOUT_KIND,
            })
    # the seat rows read for this page (the service's summary may hold an older copy)
    rows = {s.position: s for s in seat_rows}
    bank = viewer.bank_seconds if viewer is not None else None
    missed = [
        {"position": s["position"], "name": s["name"],
         "missed": rows[s["position"]].missed_deadlines}
        for s in seats if not s["bot"] or rows[s["position"]].missed_deadlines
    ]
    return {
        "clock": clock,
        "deadlines": due,
        "paused": bool(summary.get("paused")),
        "pause_reason": pause_words(summary.get("pause_reason"), seats),
        "bank": duration(bank) if bank is not None and active else None,
        "missed": missed,
        "zone": zone_name,
        "on_timeout_words": tr(TIMEOUT_ACTION_WORDS.get(clock["on_timeout"], "")),
    }


def _titan_rows(view: dict[str, Any], seats: list[dict[str, Any]],
                position: int | None) -> list[dict[str, Any]]:
    owner = {t: s for s in seats for t in s["titans"]}
    pending = view.get("pending") or {}
    rows = []
    for titan, info in (view.get("titans") or {}).items():
        seat = owner.get(titan)
        hand = info.get("hand")
        rows.append(
            {
                "titan": titan,
                "player": seat["name"] if seat else "?",
                "bot": bool(seat and seat["bot"]),
                "mine": seat is not None and seat["position"] == position,
                "space": info.get("space"),
                "lap": info.get("lap"),
                "life": info.get("life"),
                "ko": info.get("ko"),
                "cards": len(hand) if isinstance(hand, list) else hand,
                "acting": pending.get("titan") == titan and not view.get("winner"),
            }
        )
    return rows


@pages.get("/games/<uid>")
def game(uid: str) -> ResponseReturnValue:
    return render_template("pages/game.html", **_game_context(uid))


@pages.post("/games/<uid>/move")
def move(uid: str) -> ResponseReturnValue:
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden("this browser has no seat in this game: join from your invitation or "
                        "open the game from the link in your mail")
    option = (request.form.get("option") or request.form.get("text") or "").strip()
    try:
        seq = int(request.form.get("seq", ""))
    except ValueError:
        seq = -1
    try:
        result = service().submit(uid, position, seq, option)
    except ServiceError as exc:
        context = _game_context(uid)
        if exc.status == 409:
            message = ("The game moved on before your choice arrived: here is the game as it "
                       f"is now. ({exc.message})")
        else:
            message = exc.message
        return render_template("pages/game.html", error=message, error_status=exc.status,
                               **context), exc.status
    _, seat_list = _game_rows(uid)
    g.lang = _pick_lang(next((s.language for s in seat_list if s.position == position), None))
    label = describe_input(option)
    if result.get("already_applied"):
        flash(tr("That choice was already made: {label}.", label=label), "ok")
    else:
        flash(tr("Done: {label}.", label=label), "ok")
    return redirect(url_for("pages.game", uid=uid) + "#board", 303)


@pages.get("/games/<uid>/preview")
def preview(uid: str) -> ResponseReturnValue:
    """The board after one option of this browser's pending decision, as SVG (changes nothing).

    Options that involve chance (a roll, a shuffle) show the current board with the spaces the
    option names outlined: their result is not known before the choice is made.
    """
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden("only the seat whose decision it is may preview its options")
    option = request.args.get("option", "").strip()
    svc = service()
    state = svc.state(uid, position)
    seq = request.args.get("seq")
    if seq is not None and seq != str(state["seq"]):
        raise GameMovedOn("the game moved on: reload the page")
    view = state.get("view")
    if view is None:
        raise NotFound("the game has not started")
    game_row, _ = _game_rows(uid)
    circuits = _circuits(game_row)
    boards = max(len(circuits), 1)
    after = svc.preview(uid, position, option)
    pending = view.get("pending") or {}
    targets = _targets(option, view, pending.get("titan"), boards)
    g.lang = _pick_lang()
    if after is None:
        shown, marks = view, targets
    else:
        _, marks = changes(view, after, boards)
        shown, marks = after, list(dict.fromkeys(marks + targets))
    svg = board_svg(shown, circuits, highlight=marks, lang=lang())
    response = Response(svg, mimetype="image/svg+xml")
    # with the decision's number in the address a preview never goes stale
    response.headers["Cache-Control"] = "private, max-age=600" if seq else "no-store"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


@pages.get("/games/<uid>/log")
def game_log(uid: str) -> ResponseReturnValue:
    game_row, seat_list = _game_rows(uid)
    position = seat_in(uid)
    language = next((s.language for s in seat_list if s.position == position), None)
    g.lang = _pick_lang(language)
    moves = service().log(uid, position)["moves"]
    seats = _seat_rows(seat_list)
    return render_template("pages/log.html", game=game_row, rows=log_rows(moves, seats),
                           position=position)


@pages.post("/games/<uid>/resign")
def resign(uid: str) -> ResponseReturnValue:
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden("this browser has no seat in this game")
    service().resign(uid, position)
    flash(tr("You have resigned: the computer plays your Titans from now on."), "ok")
    return redirect(url_for("pages.game", uid=uid), 303)


# ---------------------------------------------------------------------------- away and quiet


def _my_seat(uid: str) -> tuple[Game, Seat]:
    """This browser's seat in game ``uid`` (403 without one); sets the page language."""
    game_row, seat_list = _game_rows(uid)
    position = seat_in(uid)
    seat = next((s for s in seat_list if s.position == position), None)
    g.lang = _pick_lang(seat.language if seat is not None else None)
    if seat is None:
        raise Forbidden(tr("this browser has no seat in this game: join from your invitation "
                           "or open the game from the link in your mail"))
    if not seat.email:
        raise Forbidden(tr("this seat has no player's address: away dates and quiet hours "
                           "belong to a player"))
    return game_row, seat


def _me_context(game_row: Game, seat: Seat) -> dict[str, Any]:
    prefs = seat.notify or {}
    zone_name = prefs.get("timezone") or None
    shown_zone = zone_name or "UTC"
    absences = []
    for absence in keeper().absences(seat.email):
        absences.append({
            **absence,
            "from_text": local_time(absence["from"], shown_zone),
            "until_text": local_time(absence["until"], shown_zone),
            "mode_words": tr(AWAY_MODE_WORDS.get(absence["mode"], absence["mode"])),
        })
    return {
        "game": game_row,
        "seat": seat,
        "quiet": prefs.get("quiet") or "",
        "timezone": zone_name or "",
        "shown_zone": shown_zone,
        "absences": absences,
        "modes": [(m, tr(AWAY_MODE_WORDS.get(m, m))) for m in ABSENCE_MODES],
        "zones": time_zones(),
        "form": {},
    }


AWAY_MODE_WORDS = {
    "stretch": "my deadlines stretch over the absence",
    "computer": "the computer plays for me meanwhile",
}


def _me_refused(game_row: Game, seat: Seat, exc: ServiceError | FormProblem,
                form: dict[str, Any]) -> ResponseReturnValue:
    message = exc.message if isinstance(exc, ServiceError) else str(exc)
    status = exc.status if isinstance(exc, ServiceError) else 400
    context = _me_context(game_row, seat)
    context["form"] = form
    return render_template("pages/me.html", error=message, **context), status


@pages.get("/games/<uid>/me")
def me(uid: str) -> ResponseReturnValue:
    game_row, seat = _my_seat(uid)
    return render_template("pages/me.html", **_me_context(game_row, seat))


@pages.post("/games/<uid>/me/quiet")
def set_quiet(uid: str) -> ResponseReturnValue:
    game_row, seat = _my_seat(uid)
    quiet = request.form.get("quiet", "").strip()
    zone_name = request.form.get("timezone", "").strip()
    try:
        keeper().set_quiet_hours(uid, seat.position, quiet or None, zone_name or None)
    except ServiceError as exc:
        return _me_refused(game_row, seat, exc, request.form.to_dict())
    if quiet:
        flash(tr("Your quiet hours are {quiet} ({zone}).", quiet=quiet.replace(" ", ""),
                 zone=zone_name or "UTC"), "ok")
    else:
        flash(tr("You have no quiet hours now."), "ok")
    return redirect(url_for("pages.me", uid=uid), 303)


def _form_time(value: str, zone_name: str, label: str) -> datetime:
    """A date-time field (``2025-07-01T08:00``) read in the seat's time zone."""
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise FormProblem(tr("{label}: give a date and time such as 2025-07-01 08:00",
                             label=tr(label))) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=ZoneInfo(zone_name))
    return moment


@pages.post("/games/<uid>/me/away")
def add_away(uid: str) -> ResponseReturnValue:
    game_row, seat = _my_seat(uid)
    zone_name = (seat.notify or {}).get("timezone") or "UTC"
    form = request.form.to_dict()
    try:
        starts = _form_time(form.get("from", ""), zone_name, "From")
        ends = _form_time(form.get("until", ""), zone_name, "Until")
        absence = keeper().set_absence(seat.email, starts, ends, form.get("mode", ""))
    except (ServiceError, FormProblem) as exc:
        return _me_refused(game_row, seat, exc, form)
    flash(tr("Away from {start} until {end}: your co-players are told.",
             start=local_time(absence["from"], zone_name),
             end=local_time(absence["until"], zone_name)), "ok")
    return redirect(url_for("pages.me", uid=uid), 303)


@pages.post("/games/<uid>/me/away/<int:absence_id>/cancel")
def cancel_away(uid: str, absence_id: int) -> ResponseReturnValue:
    _, seat = _my_seat(uid)
    if absence_id not in {a["id"] for a in keeper().absences(seat.email)}:
        raise NotFound(tr("you have no such away dates (they may have been cancelled already)"))
    keeper().cancel_absence(seat.email, absence_id)
    flash(tr("The away dates are cancelled."), "ok")
    return redirect(url_for("pages.me", uid=uid), 303)


# ---------------------------------------------------------------------------- admin


def admin_required(view: F) -> F:
    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> ResponseReturnValue:
        if not session.get(SESSION_ADMIN):
            target = request.full_path.rstrip("?")
            return redirect(url_for("pages.admin_login") + "?" + urlencode({"next": target}))
        return view(*args, **kwargs)

    return cast(F, wrapped)


@pages.get("/admin/login")
def admin_login() -> ResponseReturnValue:
    enabled = service().settings.admin_token is not None
    return render_template("pages/admin_login.html", enabled=enabled,
                           next=_safe_next(request.args.get("next")) or ""), (
        200 if enabled else 403)


@pages.post("/admin/login")
def admin_login_post() -> ResponseReturnValue:
    expected = service().settings.admin_token
    if expected is None:
        raise Forbidden("the admin pages are off: set TITANPOST_ADMIN_TOKEN on the server")
    given = request.form.get("token", "")
    if not secrets.compare_digest(given.encode(), expected.encode()):
        return render_template("pages/admin_login.html", enabled=True, error="wrong admin token",
                               next=_safe_next(request.form.get("next")) or ""), 403
    session[SESSION_ADMIN] = True
    flash("Signed in as the admin.", "ok")
    return redirect(_safe_next(request.form.get("next")) or url_for("pages.admin_index"), 303)


@pages.post("/admin/logout")
def admin_logout() -> ResponseReturnValue:
    session.pop(SESSION_ADMIN, None)
    flash("Signed out.", "ok")
    return redirect(url_for("pages.home"), 303)


@pages.get("/admin")
@admin_required
def admin_index() -> ResponseReturnValue:
    uid = request.args.get("game", "").strip()
    if uid:
        return redirect(url_for("pages.admin_replay", uid=uid))
    with service().session() as s:
        moves = (
            select(func.count()).select_from(Move).where(Move.game_id == Game.id)
            .correlate(Game).scalar_subquery()
        )
        rows = s.exec(
            select(Game, moves).order_by(col(Game.created_at).desc()).limit(100)
        ).all()
        games = [
            {"uid": row[0].uid, "name": row[0].name, "status": row[0].status,
             "variant": row[0].variant, "moves": int(row[1]),
             "created": row[0].created_at.strftime("%Y-%m-%d %H:%M")}
            for row in rows
        ]
    return render_template("pages/admin_index.html", games=games)


@pages.get("/admin/replay/<uid>")
@admin_required
def admin_replay(uid: str) -> ResponseReturnValue:
    game_row, seat_list = _game_rows(uid)
    steps = service().replay(uid)["steps"]
    seats = _seat_rows(seat_list)
    if not steps:
        return render_template("pages/admin_replay.html", game=game_row, seats=seats, step=None,
                               last=0)
    last = len(steps) - 1
    try:
        number = int(request.args.get("step", last))
    except ValueError:
        number = last
    number = max(0, min(last, number))
    current = steps[number]
    view = current["view"]
    circuits = _circuits(game_row)
    marks: list[str] = []
    words: list[str] = []
    if number > 0:
        words, marks = changes(steps[number - 1]["view"], view, max(len(circuits), 1))
    move_row = current["move"]
    move_info = None
    if move_row is not None:
        who = next((s for s in seats if s["position"] == move_row["seat"]), None)
        before_pending = steps[number - 1]["view"].get("pending") or {}
        move_info = {
            **move_row,
            "who": who["name"] if who else "—",
            "label": describe_input(move_row["input"], before_pending.get("titan"),
                                    before_pending.get("kind")),
            "titan": before_pending.get("titan"),
            "items": outcome_items(move_row["outcomes"]),
            "at": _when(move_row["created_at"]),
        }
    return render_template(
        "pages/admin_replay.html",
        game=game_row,
        seats=seats,
        step=number,
        last=last,
        move=move_info,
        changes=words,
        board=Markup(board_svg(view, circuits, highlight=marks)),
        titan_rows=_titan_rows(view, seats, None),
        hands={t: [card_info(c) for c in (i.get("hand") or [])]
               for t, i in (view.get("titans") or {}).items() if isinstance(i.get("hand"), list)},
        view_json=json.dumps(view, indent=2, sort_keys=True),
    )
