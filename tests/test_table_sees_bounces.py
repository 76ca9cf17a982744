"""The table sees a player whose mail bounces (issue 39; app/features/delivery/table.py,
app/features/clock/unreachable.py), on SQLite and PostgreSQL: the player's settings page, the
API and the test mail; the banner the others (and spectators) see on the game page; the clock,
which holds such a seat's deadline once, pushes to its devices and tells the game's owner once;
``/healthz`` and ``titanpost admin mail-status``.

The addresses' state is written as the sender and the bounce reader write it
(:func:`standing.record_delivered`, :func:`standing.record_bounce`)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from html import unescape

from click.testing import CliRunner
from sqlmodel import col, select

from app.core.models import Deadline, Game, OutboxMail, PushDelivery, PushSubscription, Seat
from app.features.clock.unreachable import HELD_KIND
from app.features.delivery import standing
from app.mail.notify import ADDRESS_TEST, UNREACHABLE
from app.mail.render import MailRenderer
from app.mail.send import UNCONFIRMED
from cli.main import main as titanpost_main
from tests.apifixtures import Api, Table, base_env, clock
from tests.test_player_settings import browser_of, csrf

pytest_plugins = ["tests.apifixtures"]

DELIVERED = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
BOUNCED = datetime(2026, 3, 2, 14, 5, tzinfo=UTC)
REASON = "550 5.1.1 <p1@example.com>: Recipient address rejected: User unknown"


def bounce(api: Api, address: str, *, at: datetime = BOUNCED, reason: str = REASON) -> None:
    with api.service.session(write=True) as s:
        standing.record_delivered(s, [(address, "primary")], DELIVERED)
        standing.record_bounce(s, address, reason, at, permanent=True)
        s.commit()


def undeliverable(api: Api, address: str) -> datetime | None:
    with api.service.session() as s:
        row = standing.state_of(s, address)
        return row.undeliverable_since if row is not None else None


def rows_of(api: Api, kind: str) -> list[OutboxMail]:
    with api.service.session() as s:
        return list(s.exec(select(OutboxMail).where(OutboxMail.kind == kind)
                           .order_by(col(OutboxMail.id))).all())


def text_of(page: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", page)).split())


# ---------------------------------------------------------------------- the player's own


def test_settings_page_shows_the_state_and_the_test_mail_tries_again(api: Api,
                                                                      started: Table) -> None:
    uid = started.uid
    browser = browser_of(api, uid, 1)
    page = text_of(browser.get(f"/games/{uid}/me").text)
    assert "none yet" in page and "bounced on" not in page  # nothing known yet
    bounce(api, "P1@example.com")  # (kept lower-cased)
    page = text_of(browser.get(f"/games/{uid}/me").text)
    assert (f"Mail to p1@example.com bounced on 2026-03-02 14:05 UTC: {REASON}. "
            "We stopped mailing you.") in page
    assert "2026-03-01 09:30 UTC" in page and "Send me a test mail" in page
    assert undeliverable(api, "p1@example.com") is not None  # (the GET changed nothing)
    # the button's POST without the page's CSRF token is refused and changes nothing
    assert browser.post(f"/games/{uid}/me/test-mail").status_code == 400
    assert undeliverable(api, "p1@example.com") is not None and not rows_of(api, ADDRESS_TEST)
    token = csrf(browser, f"/games/{uid}/me")
    answer = browser.post(f"/games/{uid}/me/test-mail", data={"csrf_token": token})
    assert answer.status_code == 303
    assert undeliverable(api, "p1@example.com") is None
    [row] = rows_of(api, ADDRESS_TEST)
    assert row.recipient == "p1@example.com" and row.sent_at is None
    page = text_of(browser.get(f"/games/{uid}/me").text)
    assert "A test mail is on its way to p1@example.com" in page
    assert "bounced on" not in page and REASON in page  # the last bounce stays on record
    # a second one within ten minutes is refused, says so, and writes nothing
    again = browser.post(f"/games/{uid}/me/test-mail", data={"csrf_token": token})
    assert again.status_code == 429
    assert "less than 10 minutes ago" in text_of(again.text)
    assert len(rows_of(api, ADDRESS_TEST)) == 1
    # the mail itself: the game's subject and its link, in the seat's language
    mail = MailRenderer(api.service).render(row)
    assert mail.skip is None and mail.subject.startswith("[Titan Post] ")
    assert "a test mail" in mail.subject and "/g/" in mail.text
    assert "Open the game" in mail.html


def test_the_api_gives_the_state_and_takes_the_test_mail(api: Api, started: Table) -> None:
    uid = started.uid
    bounce(api, "p2@example.com")
    state = api.client.get(f"/api/games/{uid}/me/mail", headers=started.seat(2)).get_json()
    assert state == {"address": "p2@example.com",
                     "last_delivered_at": DELIVERED.isoformat(),
                     "last_bounce_at": BOUNCED.isoformat(), "bounce_reason": REASON,
                     "undeliverable_since": BOUNCED.isoformat(), "test_mail_at": None}
    assert api.client.get(f"/api/games/{uid}/me/mail").status_code == 401
    asked = api.client.post(f"/api/games/{uid}/me/mail/test", headers=started.seat(2))
    assert asked.status_code == 200, asked.get_json()
    body = asked.get_json()
    assert body["cleared"] is True and body["undeliverable_since"] is None
    refused = api.client.post(f"/api/games/{uid}/me/mail/test", headers=started.seat(2))
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert [row.recipient for row in rows_of(api, ADDRESS_TEST)] == ["p2@example.com"]
    # another address has its own allowance; a seat whose address works is not "cleared"
    other = api.client.post(f"/api/games/{uid}/me/mail/test", headers=started.seat(0))
    assert other.status_code == 200 and other.get_json()["cleared"] is False


# ---------------------------------------------------------------------- the others


def test_the_game_page_shows_whose_mail_bounces(api: Api, started: Table) -> None:
    uid = started.uid
    spectator = api.app.test_client()
    assert "bouncing" not in browser_of(api, uid, 0).get(f"/games/{uid}").text
    bounce(api, "p1@example.com")
    others = text_of(browser_of(api, uid, 0).get(f"/games/{uid}").text)
    assert "P1's mail is bouncing since 2026-03-02 14:05 UTC." in others
    assert "p1@example.com" not in others and REASON not in others  # the date alone
    watched = text_of(spectator.get(f"/games/{uid}").text)
    assert "P1's mail is bouncing since 2026-03-02 14:05 UTC." in watched
    own = text_of(browser_of(api, uid, 1).get(f"/games/{uid}").text)
    assert "Mail to you is bouncing since 2026-03-02 14:05 UTC" in own
    assert "P1's mail is bouncing" not in own
    assert f'href="/games/{uid}/me#mail-state"' in browser_of(api, uid, 1).get(
        f"/games/{uid}").text
    # the API state: per seat, to players and spectators alike
    seen = api.client.get(f"/api/games/{uid}").get_json()["game"]["seats"]
    assert [seat["mail_bouncing_since"] for seat in seen] == [None, BOUNCED.isoformat(), None]
    mine = api.client.get(f"/api/games/{uid}", headers=started.seat(0)).get_json()
    assert mine["game"]["seats"][1]["mail_bouncing_since"] == BOUNCED.isoformat()


# ---------------------------------------------------------------------- the clock


def _acting(api: Api, uid: str) -> int:
    [position] = api.to_act(uid)
    return position


def _timeout(api: Api, uid: str, position: int) -> Deadline:
    with api.service.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        return s.exec(select(Deadline).where(
            Deadline.game_id == game.id, Deadline.seat == position,
            col(Deadline.kind) == "timeout").order_by(col(Deadline.seq).desc())).first()


def _subscribe(api: Api, uid: str, position: int) -> None:
    with api.service.session(write=True) as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        seat = s.exec(select(Seat).where(Seat.game_id == game.id,
                                         Seat.position == position)).one()
        assert seat.id is not None
        s.add(PushSubscription(seat_id=seat.id, endpoint="https://push.example.net/abc",
                               p256dh="key", auth="auth"))
        s.commit()


def test_a_bouncing_seat_is_held_once_and_the_owner_told_once(api: Api) -> None:
    table = api.new_started(3, prefix="own", owner_email="own2@example.com")
    uid = table.uid
    late = _acting(api, uid)
    address = f"own{late}@example.com"
    _subscribe(api, uid, late)
    bounce(api, address)
    first = _timeout(api, uid, late)
    length = timedelta(seconds=first.allowance_seconds)
    due = first.due_at
    moves = api.move_count(uid)
    report = clock(api).process_due(now=due + timedelta(minutes=1), max_gap=None)
    assert report.held == 1 and report.timeouts == 0
    assert api.move_count(uid) == moves  # not played for it
    held = _timeout(api, uid, late)
    assert held.done_at is None and held.due_at >= due + length
    assert held.extra_seconds == int(length.total_seconds())
    # the owner (seat 2's player) is told, with the date (when the owner is the late
    # player, every other player is)
    told = rows_of(api, UNREACHABLE)
    owner = 2 if late != 2 else None
    expected = ([f"own{owner}@example.com"] if owner is not None
                else [f"own{p}@example.com" for p in range(3) if p != late])
    assert sorted(row.recipient for row in told) == expected
    assert all(row.payload["position"] == late for row in told)
    mail = MailRenderer(api.service).render(told[0])
    assert "cannot be reached" in mail.subject and "/g/" in mail.text
    assert "2 March 2026, 14:05 UTC" in mail.text and address not in mail.text
    assert ("As the game's owner" in mail.text) == (owner is not None)
    # a push to the seat's device
    with api.service.session() as s:
        pushes = s.exec(select(PushDelivery)).all()
    assert [row.event_key.endswith(".unreachable") for row in pushes] == [True]
    # the next time it comes due it proceeds as usual, and nobody is told twice
    report = clock(api).process_due(now=held.due_at + timedelta(minutes=1), max_gap=None)
    assert report.held == 0 and report.timeouts == 1
    assert api.move_count(uid) > moves
    assert len(rows_of(api, UNREACHABLE)) == len(told)
    with api.service.session() as s:
        markers = s.exec(select(Deadline).where(Deadline.kind == HELD_KIND)).all()
    assert [(m.seat, m.result) for m in markers] == [(late, "extended")]


def test_a_seat_whose_mail_works_times_out_as_usual(api: Api) -> None:
    table = api.new_started(3, prefix="ok")
    late = _acting(api, table.uid)
    with api.service.session(write=True) as s:  # a bounce, but a temporary one
        standing.record_bounce(s, f"ok{late}@example.com", "451 4.2.0 try later", BOUNCED,
                               permanent=False)
        s.commit()
    due = _timeout(api, table.uid, late).due_at
    report = clock(api).process_due(now=due + timedelta(minutes=1), max_gap=None)
    assert report.held == 0 and report.timeouts == 1
    assert rows_of(api, UNREACHABLE) == []


# ---------------------------------------------------------------------- the admin


def test_healthz_and_mail_status_count_them(api: Api, started: Table) -> None:
    body = api.client.get("/healthz").get_json()
    assert body["mail"] == {"undeliverable_addresses": 0, "bounced_mails": 0,
                            "unconfirmed_mails": 0}
    bounce(api, "p1@example.com")
    bounce(api, "p2@example.com", reason="552 mailbox full", at=BOUNCED + timedelta(days=1))
    with api.service.session(write=True) as s:
        rows = s.exec(select(OutboxMail).order_by(col(OutboxMail.id))).all()
        rows[0].bounced_at, rows[0].bounce = BOUNCED, REASON
        rows[1].last_error = UNCONFIRMED + " the relay did not answer"
        s.add_all(rows[:2])
        s.commit()
    body = api.client.get("/healthz").get_json()
    assert body["mail"] == {"undeliverable_addresses": 2, "bounced_mails": 1,
                            "unconfirmed_mails": 1}
    env = base_env(api.url)
    shown = CliRunner().invoke(titanpost_main, ["admin", "mail-status", "--json"], env=env)
    assert shown.exit_code == 0, shown.output
    status = json.loads(shown.stdout)
    assert status | {"undeliverable": None} == {
        "undeliverable_addresses": 2, "bounced_mails": 1, "unconfirmed_mails": 1,
        "undeliverable": None}
    assert [(row["address"], row["reason"]) for row in status["undeliverable"]] == [
        ("p1@example.com", REASON), ("p2@example.com", "552 mailbox full")]
    words = CliRunner().invoke(titanpost_main, ["admin", "mail-status"], env=env)
    assert words.exit_code == 0, words.output
    assert "undeliverable addresses: 2" in words.stdout
    assert "p2@example.com  since 2026-03-03 14:05 UTC: 552 mailbox full" in words.stdout
    polish = CliRunner().invoke(titanpost_main, ["admin", "mail-status"],
                                env=env | {"LANG": "pl_PL.UTF-8", "LANGUAGE": "pl"})
    assert "adresy bez doręczenia: 2" in polish.stdout, polish.output
