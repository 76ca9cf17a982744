"""The pages' words in Polish (to be replaced by the catalogue)."""

from __future__ import annotations

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
