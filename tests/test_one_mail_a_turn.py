"""One notification a turn, and none while the player is looking (issue 38), with the real
sender and a real SMTP server (aiosmtpd) on SQLite and PostgreSQL.

- A seat whose game is open on a page (its live connection, :mod:`app.features.live.presence`)
  gets no mail: its decision mail is held until it is answered (then skipped) or the page
  closes (then sent), its notices of the game are left out.
- Both games played to the end at a person's pace (the sender runs between turns, minutes apart
  in its clock's time; the steps of a turn are played on the page; now and then a player thinks
  with the page open): every player gets at most one decision mail a turn, none for a turn they
  thought about on the page, and a digest player none at all.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import timedelta
from html import unescape
from typing import Any

import pytest
from sqlmodel import select

from app.core.models import OutboxMail, Seat, utcnow
from app.features.live.presence import LEFT_OUT_WHY, Presence
from app.mail import notify
from app.mail.notify import decision_kinds
from tests.test_mail_out import ANN, BOLEK, Inbox, Post, Smtp, make_post, smtp  # noqa: F401

CLEO = "cleo@example.com"


@pytest.fixture
def any_post(migrated_database_url: str, smtp: Smtp) -> Any:  # noqa: F811
    made = make_post(migrated_database_url, smtp)
    yield made
    made.service.engine.dispose()


def seat_ids(post: Post, uid: str) -> tuple[int, dict[int, Seat]]:
    with post.service.session() as s:
        loaded = post.service.load(s, uid)
        return int(loaded.game_id), {seat.position: seat for seat in loaded.seats}


def answer(post: Post, uid: str) -> int:
    """The first seat to act answers as the easy computer would for it; return that seat."""
    position = post.to_act(uid)[0]
    seq = post.options(uid, position)["seq"]
    with post.service.session() as s:
        loaded = post.service.load(s, uid)
        option = loaded.rules.bot_move(loaded.state, position)
    post.service.submit(uid, position, seq, option)
    return int(position)


def inbox_of(post: Post) -> Inbox:
    assert post.smtp is not None
    return post.smtp.inbox


def decision_mails(post: Post, address: str) -> list[Any]:
    kinds = decision_kinds()
    return [m for m in inbox_of(post).mails(address)
            if any(f".{kind}@" in str(m["Message-ID"]) for kind in kinds)]


def test_a_watching_player_gets_no_mail_until_the_page_closes(any_post: Post) -> None:
    post = any_post
    uid = post.new_game()["game"]
    game_id, seats = seat_ids(post, uid)
    humans = {position: seat for position, seat in seats.items() if seat.email}
    acting = post.to_act(uid)[0]
    assert acting in humans
    other = next(position for position in humans if position != acting)
    presence = Presence(post.service)
    for position in humans:  # both have the game open
        presence.enter((game_id, int(humans[position].id or 0)))
    report = post.send()
    assert report.held == 1 and report.sent == 0, report
    assert inbox_of(post).mails() == []
    with post.service.session() as s:
        started = s.exec(select(OutboxMail).where(OutboxMail.seat_id == humans[other].id,
                                                  OutboxMail.kind == "started")).one()
    assert started.last_error == f"skipped: {LEFT_OUT_WHY}"
    # the page closes without an answer: the mail goes at the next round
    presence.leave((game_id, int(humans[acting].id or 0)))
    report = post.send(now=utcnow() + timedelta(minutes=12))
    assert report.sent == 1, report
    assert len(decision_mails(post, humans[acting].email)) == 1
    # answered on the page while watching: the next turn's mail is skipped, not held forever
    presence.enter((game_id, int(humans[acting].id or 0)))
    while post.to_act(uid) == [acting]:
        answer(post, uid)
    presence.leave((game_id, int(humans[acting].id or 0)))
    post.send(now=utcnow() + timedelta(minutes=24))
    assert len(decision_mails(post, humans[acting].email)) == 1


@pytest.mark.parametrize("game", ["titan-race", "great-race"])
def test_a_whole_game_at_a_persons_pace_brings_one_mail_a_turn(
        any_post: Post, game: str, monkeypatch: pytest.MonkeyPatch) -> None:
    post = any_post
    now = [utcnow()]  # the clock's time: a mail's continuation delay counts in it too
    monkeypatch.setattr(notify, "utcnow", lambda: now[0])
    seats = [{"email": ANN, "name": "Ann"}, {"email": BOLEK, "name": "Bolek", "language": "pl"},
             {"email": CLEO, "name": "Cleo", "notify": {"mail": "digest"}}]
    uid = post.new_game(seats=seats, rules_name=game)["game"]
    game_id, by_position = seat_ids(post, uid)
    addresses = {position: seat.email for position, seat in by_position.items()}
    presence = Presence(post.service)
    turns: Counter[int] = Counter()
    quiet_turns: Counter[int] = Counter()
    watching: set[int] = set()
    acting_before: set[int] = set()
    answers = 0
    decision_before, mover = -1, -1
    while post.service.state(uid, None)["game"]["status"] == "active" and answers < 1500:
        acting = set(post.to_act(uid))
        decision = int(post.service.state(uid, None)["decision_seq"])
        # a turn begins for a seat when it comes to act, or when a new decision is its after
        # someone else's move (a decision after its own move continues its turn)
        begun = acting - acting_before
        if decision != decision_before:
            begun |= acting - {mover}
        for position in sorted(begun):
            turns[position] += 1
            if turns[position] % 3 == 0:  # thinking with the page open
                watching.add(position)
                quiet_turns[position] += 1
                presence.enter((game_id, int(by_position[position].id or 0)))
        for position in sorted(acting_before - acting - {-1}):  # a turn ended
            if position in watching:
                watching.discard(position)
                presence.leave((game_id, int(by_position[position].id or 0)))
        if begun:
            now[0] += timedelta(minutes=7)  # turns minutes apart
            post.send(now=now[0])
        acting_before, decision_before = acting, decision
        mover = answer(post, uid)
        answers += 1
    for position in watching:
        presence.leave((game_id, int(by_position[position].id or 0)))
    post.send(now=now[0] + timedelta(minutes=30))
    assert post.service.state(uid, None)["game"]["status"] == "finished"
    for position, address in addresses.items():
        got = len(decision_mails(post, address))
        if position == 2:
            assert got == 0, f"the digest player got {got} turn mails"
            continue
        assert turns[position] > quiet_turns[position] > 0
        assert got <= turns[position] - quiet_turns[position], (
            f"{address}: {got} turn mails for {turns[position]} turns, "
            f"{quiet_turns[position]} of them thought about on the page")
        assert got >= 1
    ids = inbox_of(post).ids()
    assert all(count == 1 for count in ids.values()), "a mail arrived twice"


def test_the_development_outbox_shows_what_a_relay_would_do(migrated_database_url: str) -> None:
    """Without a relay nothing is sent; /dev/mail says of each row what a relay's sender would
    do now: held until when (a step of the player's own turn), held while the player has the
    game open, left out, skipped as answered, sent."""
    from app import create_app
    from tests.test_mail_out import settings_for

    app = create_app(settings_for(migrated_database_url, None))
    post = Post(app.extensions["titanpost.service"], None)
    uid = post.new_game()["game"]
    game_id, seats = seat_ids(post, uid)
    client = app.test_client()

    def plans() -> dict[tuple[str, str], str]:
        page = client.get("/dev/mail").get_data(as_text=True)
        rows = re.findall(r"<td>([a-z_]+)</td>\s*<td>([^<]*)</td>.*?"
                          r"<td class=\"plan\">([^<]*)</td>", page, re.S)
        return {(kind, to): unescape(plan) for kind, to, plan in rows}

    acting = post.to_act(uid)[0]
    first = seats[acting]
    assert plans()[("started", next(s.email for s in seats.values()
                                     if s.email and s.position != acting))] == "would be sent now"
    presence = Presence(post.service)
    presence.enter((game_id, int(first.id or 0)))
    assert "held: the player has the game open on a page" in plans().values()
    presence.leave((game_id, int(first.id or 0)))
    answer(post, uid)  # the first decision answered: its mail would be skipped
    shown = plans()
    assert any(plan.startswith("would be skipped: ") for plan in shown.values()), shown
    assert post.to_act(uid) == [acting]  # (the next step of the same turn: it waits)
    assert any(plan.startswith("held until ") and "own turn" in plan
                   for plan in shown.values()), shown
    app.extensions["titanpost.service"].engine.dispose()
