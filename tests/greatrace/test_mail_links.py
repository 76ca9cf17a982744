"""A whole Great Race played by mail links alone, on SQLite and PostgreSQL: Ann answers every
decision of hers by following a signed link in the last mail she received (the confirm page,
then its button), against a computer crew, until a winner is declared. Every decision of hers
must reach her by mail with a link for each option (three suggested plans for a plan).

On PostgreSQL the race stops once Ann has answered each kind of decision by a link: what
follows is the same mails, clicks and database work again (the end of the race, its winner
and its game-over mail are checked on SQLite)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app import create_app
from app.web.linktokens import read_option_token
from tests.greatrace.test_mail import ANN, confirm_and_post, mails
from tests.test_mail_out import Post, Smtp, links, parts, settings_for, smtp  # noqa: F401

DECISION_KINDS = frozenset({"take", "plan", "turn", "react"})


@pytest.fixture
def by_links(migrated_database_url: str, smtp: Smtp) -> Iterator[tuple[Post, Any]]:  # noqa: F811
    """A server whose link pages are not rate-limited: one player clicks hundreds of links (its
    mails name their board picture by address: an inline one is tested in test_mail.py)."""
    app = create_app(settings_for(migrated_database_url, smtp.url,
                                  TITANPOST_RATE_LIMIT_LINKS="off", TITANPOST_MAIL_IMAGES="link"))
    app.config["TESTING"] = True
    post = Post(app.extensions["titanpost.service"], smtp)
    yield post, app.test_client()
    post.service.engine.dispose()


def start(post: Post) -> str:
    game = post.service.create_game(
        seats=[{"email": ANN, "name": "Ann"}, {"bot": True}], name="By links", seed=9,
        circuits=["alger"], rules_name="great-race")
    for invitation in game["invitations"]:
        post.service.accept(invitation["invite_token"])
    post.service.start(game["game"], game["creator_token"])
    return str(game["game"])


def computer_choice(post: Post, uid: str) -> str:
    with post.service.session() as s:
        loaded = post.service.load(s, uid)
        return str(loaded.rules.bot_move(loaded.state, 0))


def links_of_decision(post: Post, uid: str, seq: int) -> dict[str, str]:
    """The option links (by option) of Ann's newest decision mail, which must be for ``seq``."""
    post.send()
    decisions = [m for m in mails(post, ANN) if m["X-Titan-Post-Kind"] in DECISION_KINDS]
    assert decisions, "no decision mail"
    secret = post.service.link_seat(uid, 0).secret
    found: dict[str, str] = {}
    for url in links(parts(decisions[-1])[0], "l"):
        link = read_option_token(url.rsplit("/", 1)[1], post.settings.secret_key, secret)
        assert link.seq == seq, (decisions[-1]["Subject"], link.seq, seq)
        found[link.option] = url
    assert found, decisions[-1]["Subject"]
    return found


def test_a_whole_race_by_mail_links(by_links: tuple[Post, Any],
                                    migrated_database_url: str) -> None:
    post, client = by_links
    uid = start(post)
    clicks, kinds = 0, set()
    every_kind = {"take", "plan", "turn", "drive"}
    to_the_end = not migrated_database_url.startswith("postgresql")
    for _ in range(2000):
        state = post.service.state(uid, 0)
        if state["game"]["status"] != "active":
            break
        assert state["game"]["to_act"] == [0], state["game"]  # the computer answers at once
        by_option = links_of_decision(post, uid, state["decision_seq"])
        choice = computer_choice(post, uid)
        url = by_option.get(choice) or next(iter(by_option.values()))
        _, action, token = confirm_and_post(client, url)
        answered = client.post(action, data={"csrf_token": token})
        assert answered.status_code in (302, 303), answered.get_data(as_text=True)[:300]
        kinds.add(str(state["view"]["pending"]["kind"]))
        clicks += 1
        if not to_the_end and every_kind <= kinds:
            assert post.service.verify(uid) == []
            return
    final = post.service.state(uid, None)
    assert final["game"]["status"] == "finished", final["game"]
    assert final["game"]["winner"] and final["view"]["winner"]
    assert every_kind <= kinds, kinds
    assert post.service.verify(uid) == []
    post.send()
    assert [m["X-Titan-Post-Kind"] for m in mails(post, ANN)][-1] == "game_over"
    assert clicks > 20
