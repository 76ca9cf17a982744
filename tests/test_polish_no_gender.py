"""The Polish catalogue speaks to its reader without a grammatical gender (issue 40: "Zająłeś
miejsce 3" went to Ewa): no second-person past form (``-łeś``, ``-łaś``, ``-łbyś``,
``-liście``...), no ``(-aś)`` half-measure, no adjective or participle said of the reader
("jesteś zalogowany", "gotowy", "zaproszony", "sam"). Where such a word is said of something
else (a browser, an address, a rematch), its message is on the allow-list with the reason.

Nor does it give another player a gender: no past form after a person's name ("{player}
odmówił", "{by} zagrała") and no "(a)" half-measure ("zagrał(a)"); a present form or an
impersonal one needs none ("{player} nie zgadza się", "po nim był już ruch ({player})")."""

from __future__ import annotations

import re

import pytest

from app.core.i18n import translate
from tests.test_glossary_pl import polish_messages

SECOND_PERSON_PAST = re.compile(
    r"\b\w+(?:łeś|łaś|łbyś|łabyś|liście|łyście|łybyście|libyście)\b|\(-?a[śs]\)", re.IGNORECASE)
"""A verb in the second person of the past tense or the conditional, masculine or feminine
(or both, "zgodziłeś(-aś)"): always said of the reader."""

SAID_OF_THE_READER = re.compile(
    r"\b(?:jesteś|byłeś|byłaś|będziesz|bądź|zostaniesz)\s+(?:już\s+|tu\s+|teraz\s+|nie\s+)?"
    r"\w+(?:ny|na|ty|ta|wy|wa|ien)\b"
    r"|\b(?:zalogowan[ya]|gotow[ya]|zaproszon[ya]|pewien|pewna|sam|sama)\b",
    re.IGNORECASE)
"""An adjective or participle of the kind a sentence says of its reader."""

OF_SOMETHING_ELSE = re.compile(
    r"\bsam (?:sekret|scenariusz|harmonogram|token)"  # the secret itself, the scheduler alone
    r"|(?:zacznie|zaczyna) się sama?\b"  # a game, a rematch, that starts by itself
    r"|plan gotowy|^gotowa$|jest gotowe"  # a plan, a team (ekipa), an invitation: ready
    r"|(?:przeglądarka|adres(?: \S*)?) (?:jest |nie jest tu )?zalogowan[ya]",  # a browser, address
    re.IGNORECASE)
"""Where the word is said of a thing: the secret itself, the scheduler alone, a rematch that
starts by itself, a plan or a team that is ready."""


OTHER_PLAYER_PAST = re.compile(
    r"\{(?:player|players|by|inviter|who|asker|owner|winner|mover|name)\}\s+(?:\w+\s+){0,2}?"
    r"\w+(?:ł|ła|ło|li|ły)\b(?!\s+komputer)|\w\(a\)", re.IGNORECASE)
"""A past form said of a person the message names (or "zagrał(a)"): it gives them a gender.
(Not one whose subject follows it: "miejsce gracza {player} przejął komputer", the computer
took it.)"""


def test_no_message_gives_another_player_a_gender() -> None:
    found = [m for m in polish_messages() if OTHER_PLAYER_PAST.search(m)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("text", ["{player} zagrał(a) po nim", "{player} odmówił cofnięcia",
                                  "{by} już zagrała kartę", "{inviter} Cię zaprosił"])
def test_the_pattern_finds_a_gender_given_to_another_player(text: str) -> None:
    assert OTHER_PLAYER_PAST.search(text)


def test_no_message_speaks_to_its_reader_in_a_gender() -> None:
    found = [m for m in polish_messages() if SECOND_PERSON_PAST.search(m)]
    assert not found, "\n".join(found)


def test_no_message_says_an_adjective_of_its_reader() -> None:
    found = [m for m in polish_messages()
             if SAID_OF_THE_READER.search(OF_SOMETHING_ELSE.sub(" ", m))]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("text", ["Zająłeś miejsce 3.", "Odmówiłeś(-aś) cofnięcia ruchu.",
                                  "Zgodziłaś się.", "Nie jesteś zalogowany do żadnej gry.",
                                  "Jesteś gotowa?", "Zagraj sam."])
def test_the_patterns_find_a_gendered_form(text: str) -> None:
    """The patterns above are not blind: each of these gendered sentences is found."""
    assert SECOND_PERSON_PAST.search(text) or SAID_OF_THE_READER.search(
        OF_SOMETHING_ELSE.sub(" ", text))


def test_the_seat_taken_and_the_you_marker_need_no_gender() -> None:
    assert translate("pl", "You have taken seat {position}. Welcome to the race!",
                     position=3) == "Twoje miejsce: 3. Witaj w wyścigu!"
    assert translate("pl", "{player} (you)", player="Ewa") == "Ewa (ty)"
    assert translate("pl", "you") == "ty"
