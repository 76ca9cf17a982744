"""A seat given to someone else: what was written for its old player stops, the new player is
invited by mail, and the old player can no longer move for the seat (real SMTP, SQLite)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.models import utcnow
from app.mail.notify import REPLACED_BEFORE_SENDING
from app.service import Forbidden
from tests.test_mail_out import ANN, BOLEK, LATER, Inbox, Post, Smtp, _start, make_post


@pytest.fixture
def post(tmp_path: Path) -> Iterator[Post]:
    inbox = Inbox()
    controller, port = _start(inbox)
    made = make_post(f"sqlite:///{tmp_path / 'replace.db'}", Smtp(inbox, port, []))
    try:
        yield made
    finally:
        made.service.engine.dispose()
        controller.stop()


def test_mail_for_the_old_player_is_withdrawn_and_the_new_one_invited(post: Post) -> None:
    assert post.smtp is not None
    game = post.new_game()
    uid = game["game"]
    bolek = post.position_of(uid, BOLEK)
    post.play_until(uid, bolek)  # Bolek's decision mail is in the outbox, not sent yet
    waiting = [r for r in post.rows(recipient=BOLEK) if r.sent_at is None]
    assert waiting, "Bolek has unsent mail"

    post.service.replace_seat(uid, game["creator_token"], bolek, "newt@example.com")

    for row in post.rows(recipient=BOLEK):
        if row.id in {w.id for w in waiting}:
            assert row.sent_at is not None and row.last_error == REPLACED_BEFORE_SENDING
    [invitation] = post.rows(recipient="newt@example.com", kind="invitation")
    report = post.sender().run_once(now=utcnow() + LATER)
    assert report.failed == 0, report
    to_bolek = post.smtp.inbox.mails(BOLEK)
    assert not any(str(m["Message-ID"]) in {w.message_id for w in waiting} for m in to_bolek)
    [mail] = post.smtp.inbox.mails("newt@example.com")
    assert str(mail["Message-ID"]) == invitation.message_id
    assert "/join/" in mail.get_body(("plain",)).get_content()  # type: ignore[union-attr]


def test_a_seat_the_computer_plays_takes_no_move_from_its_old_player(post: Post) -> None:
    game = post.new_game()
    uid = game["game"]
    ann = post.position_of(uid, ANN)
    post.play_until(uid, ann)
    options = post.options(uid, ann)
    # the owner pauses (so the computer does not answer at once), then Ann resigns
    post.service.pause(uid, game["creator_token"], reason="tea")
    post.service.resign(uid, ann)
    before = post.service.export(uid)["moves"]
    with pytest.raises(Forbidden, match="computer plays seat"):
        post.service.submit(uid, ann, options["seq"], options["options"][0])
    assert post.service.export(uid)["moves"] == before
