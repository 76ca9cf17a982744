"""No engine id reaches a Polish reader (issue 40: "Gra się skończyła: wygrywa belgian"): every
kind of mail of both games, written by a race played to its end (the races of
:mod:`tests.test_pseudo_locale_mail`: notices, replies, a digest, the game over) for Polish
players, names every crew, Titan, die colour and card by the game's own words, never by the id
the engine keeps (``belgian``, ``grinder``, ``red``, ``jerrycan``).

What the reader typed or may type, the game's notation ("pick red", "play jerrycan"), is
quoted as it is: the options offered and the moves played are taken out of the text first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select

from app.core.models import Game, Move, OutboxMail
from app.games import GAMES
from app.games.greatrace import describe as great
from app.games.titanrace import describe as titan
from app.games.ui import game_ui, winners_named
from app.mail.render import MailRenderer
from cli.player_state import winner_text
from cli.speech import speak
from tests.dbutil import migrated_sqlite
from tests.test_mail_out import Post, make_post
from tests.test_pseudo_locale_mail import _kinds, _race, _read

ENGINE_IDS = {
    "great-race": {*great.CREW_NAMES, *great.CARD_NAMES},
    "titan-race": {*titan.TITAN_NAMES, *titan.DIE_COLOURS, *titan.CARD_NAMES},
}
"""The ids each game's engine keeps for its pieces, colours and cards."""


@pytest.fixture
def post(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Post]:
    """A service whose games seat Polish players only (the sample race's English seat too)."""
    with migrated_sqlite(tmp_path) as url:
        made = make_post(url, None, TITANPOST_MAIL_IMAGES="link")
        create = made.new_game

        def polish(seats: list[dict[str, Any]] | None = None, *args: Any,
                   **kwargs: Any) -> dict[str, Any]:
            seats = [seat if seat.get("bot") else {**seat, "language": "pl"}
                     for seat in seats or []]
            return create(seats, *args, **kwargs)

        monkeypatch.setattr(made, "new_game", polish)
        yield made
        made.service.engine.dispose()


def _typed(post: Post) -> list[str]:
    """The notation of the races: every move played (and its public form), longest first."""
    found: set[str] = set()
    with post.service.session() as s:
        for uid in s.exec(select(Game.uid)).all():
            rules = post.service.load(s, uid).rules
            inputs = s.exec(select(Move.input).join(Game, col(Game.id) == col(Move.game_id))
                            .where(Game.uid == uid)).all()
            for text in inputs:
                found |= {str(text), rules.public_input(str(text))}
    return sorted((t for t in found if t), key=len, reverse=True)


def ids_in(text: str, ids: set[str], typed: list[str]) -> set[str]:
    """The engine ids standing as words in ``text`` once the typed notation is taken out
    (an option in a list, a quoted move)."""
    text = re.sub(r"\b(?:pick|play|take|move|avoid|keep|drop|discard|place)(?: [\w-]+)+", " ", text)
    for quoted in typed:
        text = text.replace(quoted, " ")
    return {word for word in re.findall(r"[\w-]+", text) if word in ids}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_polish_mail_names_the_games_things_in_words(post: Post, game: str) -> None:
    _race(post, game)
    typed = _typed(post)
    renderer = MailRenderer(post.service)
    found: dict[str, set[str]] = {}
    seen: set[str] = set()
    with post.service.session() as s:
        for row in s.exec(select(OutboxMail).order_by(col(OutboxMail.id))).all():
            mail = renderer.render(row, always=True, session=s)
            seen.add(row.kind)
            for part, text in _read(post, row, mail).items():
                for line in text.splitlines():
                    if ids_in(line, ENGINE_IDS[game], typed):
                        found.setdefault(f"{row.kind} {part}", set()).add(line.strip()[:300])
    assert seen == _kinds(game), sorted(seen ^ _kinds(game))
    assert not found, "\n".join(f"{name}: {sorted(lines)}" for name, lines in sorted(found.items()))


def test_an_id_is_found_where_it_stands() -> None:
    """The check is not blind: a crew's id in a sentence is found, a typed move is not."""
    assert ids_in("Gra się skończyła: wygrywa belgian.", ENGINE_IDS["great-race"], []) == {
        "belgian"}
    assert not ids_in("Odpowiedz: play jerrycan", ENGINE_IDS["great-race"], [])


def test_a_shared_win_is_named_by_its_pieces_on_the_command_line() -> None:
    """``Game.winner`` joins the winning pieces' ids ("french,belgian"): the admin's commands
    and ``titanpost show`` name each of them (they named the joined ids as one unknown
    piece)."""
    ui = game_ui("great-race")
    named = winners_named(ui, "french,belgian", "pl")
    assert named == f"{ui.piece_name('french', 'pl')}, {ui.piece_name('belgian', 'pl')}"
    assert not ids_in(named, ENGINE_IDS["great-race"], [])
    state = {"game": {"ruleset": "great-race", "winner": "french,belgian", "seats": []},
             "view": {}}
    speak("pl")
    try:
        said = winner_text(state).plain
    finally:
        speak(None)
    assert ui.piece_name("french", "pl") in said and ui.piece_name("belgian", "pl") in said
    assert not ids_in(said, ENGINE_IDS["great-race"], []), said
