"""Untranslated text cannot hide in a board picture (issue 23): the words an SVG picture of
either game draws (its texts, its title, the labels a reader hears) are catalogue text, in the
pseudo-locale of :mod:`tests.test_pseudo_locale` as the race goes on; and the two letters on a
Titan's token come from the language's name of the Titan (Polish: "Ma" for Masakrator, "Kr"
for Kraken, docs/glossary-pl.md), not from the English one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.i18n import translate
from app.games import GAMES
from app.games.titanrace.describe import TITAN_NAMES
from app.mail.images import BoardPicture
from app.mail.render import MailRenderer
from tests.dbutil import migrated_sqlite
from tests.test_mail_out import Post, make_post
from tests.test_pseudo_locale import _unmarked
from tests.test_pseudo_locale import pseudo as pseudo  # the fixture
from tests.test_pseudo_locale_mail import _answer, race_setup

SEATS = [{"email": "ann@example.com", "name": "Ann"},
         {"email": "bolek@example.com", "name": "Bolek", "language": "pl"}, {"bot": True}]
TOKEN_MARK = re.compile(r'<g class="(?:titan|chip)[^"]*" data-titan="(\w+)"[^>]*>.*?'
                        r'<text[^>]*font-weight="bold"[^>]*>([^<]*)</text>', re.DOTALL)


@pytest.fixture
def post(tmp_path: Path) -> Iterator[Post]:
    with migrated_sqlite(tmp_path) as url:
        made = make_post(url, None, TITANPOST_MAIL_IMAGES="link")
        yield made
        made.service.engine.dispose()


def _pictures(post: Post, game: str, lang: str, moments: int = 4,
              steps: int = 15) -> list[str]:
    """The SVG pictures of a race of ``game`` every ``steps`` decisions, as seat 0 sees them."""
    created = post.new_game(seats=SEATS, name="Wyścig", **race_setup(game))
    uid = str(created["game"])
    renderer = MailRenderer(post.service)
    pictures = []
    for _ in range(moments):
        seq = int(post.service.state(uid, None)["seq"])
        pictures.append(renderer.picture_svg(BoardPicture(uid, seq, 0, lang)))
        for _ in range(steps):
            if not _answer(post, uid):
                return pictures
    return pictures


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_board_picture_draws_no_words_outside_the_catalogue(
        post: Post, pseudo: None, game: str) -> None:
    data = {"Ann", "Bolek", "Wyścig"}
    found = {index: _unmarked(svg, data)
             for index, svg in enumerate(_pictures(post, game, "en"))}
    assert not {index: words for index, words in found.items() if words}, found


def test_the_marks_on_the_tokens_come_from_the_languages_names(post: Post) -> None:
    english = _pictures(post, "titan-race", "en", moments=1)[0]
    polish = _pictures(post, "titan-race", "pl", moments=1)[0]
    for svg, lang in ((english, "en"), (polish, "pl")):
        marks = dict(TOKEN_MARK.findall(svg))
        assert marks, "no token in the picture"
        for titan, mark in marks.items():
            name = translate(lang, TITAN_NAMES[titan])
            assert len(mark) == 2 and name.startswith(mark[0]), (lang, titan, name, mark)
    polish_marks = dict(TOKEN_MARK.findall(polish))
    assert polish_marks.get("grinder", "Ma") == "Ma" and polish_marks.get("craken", "Kr") == "Kr"
    assert {"Ma", "Kr"} & set(polish_marks.values()), polish_marks
