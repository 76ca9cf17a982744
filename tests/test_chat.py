"""A game's chat on SQLite and PostgreSQL: the service, the API, the game page, mail replies
that are not a move, and the "chat since your last mail" part of the next mail.

(The CLI's ``titanpost chat`` is tested against a real server in tests/test_cli_player.py.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from app.core.models import OutboxMail, utcnow
from app.features.chat import messages as chat
from app.mail.inbound import process_inbound
from app.mail.inbound_queue import queue_inbound
from app.mail.render import MailRenderer
from app.service import BadRequest, Forbidden, GameService, NotFound
from tests.apifixtures import Api, Table, human_game, make_service, table_rows
from tests.test_mail_in import DOMAIN, gmail_reply, wire
from tests.test_mail_in import new_table as mail_table
from tests.test_pages import browser, csrf, give_seat, started_game

pytest_plugins = ["tests.apifixtures"]
KEY = "Idempotency-Key"


def messages(svc: GameService, uid: str, position: int | None = 0) -> list[tuple[Any, str]]:
    return [(m["seat"], m["text"]) for m in chat.read(svc, uid, position)["messages"]]


# ---------------------------------------------------------------------------- the service


def test_post_and_read_newest_last_in_pages(service: GameService) -> None:
    game = human_game(service, 3)
    uid = game["game"]
    assert chat.read(service, uid, 0) == {"game": uid, "messages": [], "more": False,
                                          "before": None}
    for n in range(5):
        posted = chat.post(service, uid, n % 3, f"  message {n}\r\nsecond line \x07 ")
        assert posted["message"]["text"] == f"message {n}\nsecond line"
    assert [seat for seat, _ in messages(service, uid)] == [0, 1, 2, 0, 1]
    page = chat.read(service, uid, None, limit=2)
    assert [m["text"].split()[1] for m in page["messages"]] == ["3", "4"]
    assert page["more"] is True
    older = chat.read(service, uid, None, before=page["before"], limit=10)
    assert [m["text"].split()[1] for m in older["messages"]] == ["0", "1", "2"]
    assert older["more"] is False
    first = older["messages"][0]
    assert first["name"] == "h0" and first["created_at"].endswith("Z")


@pytest.mark.parametrize(("text", "words"), [
    ("", "needs some text"), (" \n\t ", "needs some text"), (None, "is text"),
    ("x" * (chat.MAX_CHAT_CHARS + 1), "at most 1000 characters"),
])
def test_refused_messages_change_nothing(service: GameService, text: Any, words: str) -> None:
    uid = human_game(service, 3)["game"]
    with pytest.raises(BadRequest, match=words):
        chat.post(service, uid, 0, text)
    assert messages(service, uid) == []


def test_only_seats_post_and_private_games_hide_the_chat(service: GameService) -> None:
    uid = human_game(service, 3, settings={"spectators": False})["game"]
    with pytest.raises(Forbidden, match="only its seats"):
        chat.post(service, uid, 5, "hello")
    with pytest.raises(NotFound):
        chat.post(service, "0" * 32, 0, "hello")
    chat.post(service, uid, 1, "hello")
    with pytest.raises(Forbidden, match="no spectators"):
        chat.read(service, uid, None)
    assert messages(service, uid, 0) == [(1, "hello")]
    assert len(chat.clean_text("y" * chat.MAX_CHAT_CHARS)) == chat.MAX_CHAT_CHARS


# ---------------------------------------------------------------------------- the API


def test_api_post_and_read(api: Api, started: Table) -> None:
    url = f"/api/games/{started.uid}/chat"
    posted = api.client.post(url, json={"text": "Good luck all"}, headers=started.seat(1))
    assert posted.status_code == 201, posted.get_json()
    assert posted.get_json()["message"]["seat"] == 1
    spectator = api.client.get(url).get_json()
    assert [(m["seat"], m["name"], m["text"]) for m in spectator["messages"]] == [
        (1, "P1", "Good luck all")]
    assert api.client.get(url + "?limit=0").status_code == 400


def test_api_refusals_change_nothing(api: Api, started: Table) -> None:
    url = f"/api/games/{started.uid}/chat"
    other = api.new_started(3, prefix="q")
    before = table_rows(api, "chat_messages")
    for headers, body, status in (
        ({}, {"text": "hi"}, 401),
        (started.seat(0), {"text": "   "}, 400),
        (started.seat(0), {}, 400),
        (started.seat(0), {"text": "z" * 1001}, 400),
        (other.seat(0), {"text": "hi"}, 403),
    ):
        refused = api.client.post(url, json=body, headers=headers)
        assert refused.status_code == status, refused.get_json()
        assert refused.get_json()["error"]
    assert table_rows(api, "chat_messages") == before
    assert api.client.post("/api/games/" + "0" * 32 + "/chat", json={"text": "hi"},
                           headers=started.seat(0)).status_code == 404


def test_api_post_with_a_key_is_posted_once(api: Api, started: Table) -> None:
    url = f"/api/games/{started.uid}/chat"
    headers = {**started.seat(2), KEY: "chat-key-1"}
    first = api.client.post(url, json={"text": "once"}, headers=headers)
    again = api.client.post(url, json={"text": "once"}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert first.get_json() == again.get_json()
    assert api.scalar("SELECT count(*) FROM chat_messages") == 1


# ---------------------------------------------------------------------------- the page


def test_game_page_shows_the_chat_and_posts_with_csrf(api: Api) -> None:
    game = started_game(api)
    uid, ann = game["uid"], game["clients"][0]
    page = ann.get(f"/games/{uid}")
    assert 'id="chat"' in page.text and 'id="chat-form"' in page.text
    assert "spectators too" in page.text
    refused = ann.post(f"/games/{uid}/chat", data={"text": "no token"})
    assert refused.status_code == 400
    empty = ann.post(f"/games/{uid}/chat",
                     data={"csrf_token": csrf(ann, f"/games/{uid}"), "text": "  "})
    assert empty.status_code == 400 and "needs some text" in empty.text
    assert api.scalar("SELECT count(*) FROM chat_messages") == 0

    sent = ann.post(f"/games/{uid}/chat",
                    data={"csrf_token": csrf(ann, f"/games/{uid}"), "text": "<b>Hi</b> Ben"})
    assert sent.status_code == 303 and sent.headers["Location"].endswith("#chat")
    ben_page = game["clients"][1].get(f"/games/{uid}").text
    assert "&lt;b&gt;Hi&lt;/b&gt; Ben" in ben_page and "<b>Hi</b>" not in ben_page

    watcher = browser(api)
    watched = watcher.get(f"/games/{uid}").text
    assert "&lt;b&gt;Hi&lt;/b&gt; Ben" in watched and 'id="chat-form"' not in watched
    stranger = watcher.post(f"/games/{uid}/chat",
                            data={"csrf_token": csrf(watcher, "/new"), "text": "x"})
    assert stranger.status_code == 403
    assert api.scalar("SELECT count(*) FROM chat_messages") == 1


def test_game_page_in_polish(api: Api) -> None:
    game = started_game(api, languages=("pl", "en"))
    ann = game["clients"][0]
    give_seat(ann, game["uid"], 0)
    assert "Czat" in ann.get(f"/games/{game['uid']}").text


# ---------------------------------------------------------------------------- mail


@pytest.fixture
def mailed(migrated_database_url: str) -> Iterator[Any]:
    table = mail_table(make_service(migrated_database_url, TITANPOST_MAIL_DOMAIN=DOMAIN))
    yield table
    table.service.engine.dispose()


def _queue(table: Any, text: str, position: int | None = None) -> None:
    to = table.address(position)
    sender = f"h{table.actor if position is None else position}@example.com"
    assert queue_inbound(table.service.engine, table.settings, to, wire(gmail_reply(to, text)),
                         sender=sender) is not None


def test_a_reply_without_a_move_is_posted_as_chat(mailed: Any) -> None:
    _queue(mailed, "Sorry, I will reply tomorrow.\nBusy day!")
    [outcome] = process_inbound(mailed.service)
    assert outcome.result == "chat" and outcome.reply_kind == "reply-ok"
    assert messages(mailed.service, mailed.uid) == [
        (mailed.actor, "Sorry, I will reply tomorrow.\nBusy day!")]
    assert mailed.moves() == []
    [answer] = mailed.outbox()
    assert answer["recipient"] == mailed.player
    text = answer["payload"]["text"]
    assert "posted to the game's chat" in text and "  Busy day!" in text
    assert "If you meant a move" in text and "wrote:" not in text
    # processed once: the worker finds nothing more to do, nothing is posted twice
    assert process_inbound(mailed.service) == []
    assert len(messages(mailed.service, mailed.uid)) == 1


def test_a_reply_with_a_move_and_words_plays_the_move_only(mailed: Any) -> None:
    _queue(mailed, f"Hi all,\n{mailed.options[0]}\nGood game so far")
    [outcome] = process_inbound(mailed.service)
    assert outcome.result == "applied"
    assert len(mailed.moves()) == 1
    assert messages(mailed.service, mailed.uid) == []


def test_an_empty_reply_is_still_told_no_move_was_found(mailed: Any) -> None:
    _queue(mailed, "")
    [outcome] = process_inbound(mailed.service)
    assert outcome.result == "unparseable"
    assert messages(mailed.service, mailed.uid) == []


def test_the_next_mail_tells_the_chat_since_the_last_one(api: Api) -> None:
    table = api.new_started(3)
    svc = api.service
    renderer = MailRenderer(svc)
    chat.post(svc, table.uid, 0, "first words")
    chat.post(svc, table.uid, 1, "an answer")
    actor, opts = api.actor(table)
    status, _ = api.submit(table, actor, opts["seq"], opts["options"][0])
    assert status == 200
    with svc.session() as s:
        rows = s.exec(sa.select(OutboxMail).order_by(OutboxMail.id)).scalars().all()
        rows = [row for row in rows if row.kind not in ("invitation", "started")]
    assert rows, "the move wrote the next decision's mail"
    row = rows[-1]
    with svc.session() as s:
        seat_position = s.exec(sa.text(f"SELECT position FROM seats WHERE id = {row.seat_id}"))\
            .scalar_one()
    mail = renderer.render(row, always=True)
    expected = [text for seat, text in ((0, "first words"), (1, "an answer"))
                if seat != seat_position]
    assert "Chat since your last mail" in mail.text
    for text in expected:
        assert re.search(rf"P\d \([-0-9: ]+ UTC\): {text}", mail.text) and text in mail.html
    mine = {0: "first words", 1: "an answer"}.get(seat_position)
    if mine:
        assert mine not in mail.text  # one's own messages are not told back
    # once that mail is sent, the next one tells only what was written after it
    with svc.engine.begin() as conn:
        conn.execute(sa.update(OutboxMail).where(OutboxMail.id == row.id)
                     .values(sent_at=utcnow()))
    chat.post(svc, table.uid, 2 if seat_position != 2 else 0, "later news")
    nxt = OutboxMail(game_id=row.game_id, seq=row.seq, kind=row.kind, recipient=row.recipient,
                     seat_id=row.seat_id, message_id="<chat-test@example>", payload={})
    with svc.session(write=True) as s:
        s.add(nxt)
        s.commit()
        s.refresh(nxt)
    following = renderer.render(nxt, always=True)
    assert "later news" in following.text
    assert "first words" not in following.text and "an answer" not in following.text


def test_a_batch_reads_which_games_have_chat_at_once_and_tells_each_its_own(api: Api) -> None:
    """The sender's batch asks once which of its games have chat (``MailRenderer.prefetch``):
    a game with chat still tells it, a game without tells none, and a mail of one game never
    tells another's."""
    quiet, talking = api.new_started(3), api.new_started(3)
    svc = api.service
    chat.post(svc, talking.uid, 0, "words in one game only")
    chat.post(svc, talking.uid, 1, "and an answer there")
    with svc.session() as s:
        ids = {uid: s.exec(sa.text(f"SELECT id FROM games WHERE uid = '{uid}'")).scalar_one()
               for uid in (quiet.uid, talking.uid)}
        assert chat.games_with_messages(s, ids.values()) == {ids[talking.uid]}
        assert chat.games_with_messages(s, []) == set()
        rows = [row for row in s.exec(sa.select(OutboxMail).order_by(OutboxMail.id))
                .scalars().all() if row.kind == "started"]
    assert {row.game_id for row in rows} == set(ids.values())
    renderer = MailRenderer(svc)
    with svc.session() as s:
        renderer.prefetch(s, rows)
        mails = [(row, renderer.render(row, session=s, always=True)) for row in rows]
    for row, mail in mails:
        if row.game_id == ids[talking.uid]:
            assert "Chat since your last mail" in mail.text
            assert "words in one game only" in mail.text or "and an answer there" in mail.text
        else:
            assert "Chat since your last mail" not in mail.text
            assert "words in one game only" not in mail.text + mail.html
