"""A player's own settings of a seat (mail every/digest/none, language, quiet hours), changed
from the ``/me`` page and the API, on SQLite and PostgreSQL; the CLI's ``titanpost settings`` is
tested against a real server in tests/test_cli_player.py.

Each channel goes through :meth:`Timekeeper.change_settings`; the effect is read where a player
sees it: the outbox (which mails are written), the digest, the next mail's language, the open
deadline. Every refusal is checked to change nothing.
"""

from __future__ import annotations

import html
import re
from datetime import datetime, timedelta
from typing import Any

from flask.testing import FlaskClient
from icalendar import Calendar
from sqlmodel import col, select

from app.core.models import OutboxMail, Seat
from app.core.observability import redact_path, redact_text
from app.features.chat.messages import add_message
from app.mail.notify import (
    GAME_OVER,
    HANDOVER,
    REMINDER,
    SENT_EVEN_TO_NONE,
    decision_kinds,
    resend_current,
    wants_mail,
    write_digests,
)
from app.mail.render import MailRenderer, build_message
from app.web.browser_seats import store_seat
from tests.apifixtures import Api, Table, bearer, clock, table_rows
from tests.cases import each_case, labelled

pytest_plugins = ["tests.apifixtures"]

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
TABLES = ("games", "seats", "moves", "deadlines", "outbox")


# ---------------------------------------------------------------------- helpers


def settings_url(uid: str) -> str:
    return f"/api/games/{uid}/me/settings"


def change(api: Api, table: Table, position: int, **body: Any) -> dict[str, Any]:
    response = api.client.post(settings_url(table.uid), json=body, headers=table.seat(position))
    assert response.status_code == 200, response.get_json()
    data: dict[str, Any] = response.get_json()
    return data


def outbox(api: Api, uid: str, *, after: int = 0) -> list[tuple[str, str]]:
    """(kind, recipient) of the game's outbox rows with an id above ``after``."""
    return [(str(kind), str(to)) for kind, to in api.rows(
        "SELECT o.kind, o.recipient FROM outbox o JOIN games g ON g.id = o.game_id "
        "WHERE g.uid = :uid AND o.id > :after ORDER BY o.id", uid=uid, after=after)]


def last_outbox_id(api: Api) -> int:
    return int(api.scalar("SELECT coalesce(max(id), 0) FROM outbox"))


def browser_of(api: Api, uid: str, position: int) -> FlaskClient:
    client: FlaskClient = api.app.test_client()
    secret = api.service.link_seat(uid, position).secret
    with client.session_transaction() as sess:
        store_seat(sess, uid, position, secret)
    return client


def csrf(client: FlaskClient, url: str) -> str:
    page = client.get(url)
    assert page.status_code == 200, page.text
    found = CSRF.search(page.text)
    assert found, f"no CSRF token on {url}"
    return found.group(1)


def rows_after(api: Api, mark: int) -> list[OutboxMail]:
    with api.service.session() as s:
        return list(s.exec(select(OutboxMail).where(col(OutboxMail.id) > mark)).all())


def play_on(api: Api, table: Table, moves: int) -> None:
    """Answer ``moves`` decisions with the first legal option (any seat that is to act)."""
    for _ in range(moves):
        acting = api.to_act(table.uid, table.tokens[0])
        if not acting:
            return
        opts = api.options(table, acting[0])
        status, body = api.submit(table, acting[0], opts["seq"], opts["options"][0])
        assert status == 200, body


# ---------------------------------------------------------------------- the API


def test_settings_over_the_api(api: Api, started: Table) -> None:
    uid, seat = started.uid, started.seat(1)
    shown = api.client.get(settings_url(uid), headers=seat).get_json()
    assert shown == {"game": uid, "position": 1, "mail": "every", "language": "en",
                     "quiet": None, "timezone": None, "anytime_windows": False,
                     "ruleset": "titan-race", "reactions": "ask",
                     "reaction_choices": ["ask", "never", "last-shield", "repulse", "dispel"]}
    now = change(api, started, 1, mail="digest", language="pl", quiet="22-7",
                 timezone="Europe/Warsaw")
    assert now | {"quiet": None} == shown | {"mail": "digest", "language": "pl",
                                              "timezone": "Europe/Warsaw"}
    assert now["quiet"] == "22-7"
    # PATCH does the same; only what is given changes
    patched = api.client.patch(settings_url(uid), json={"mail": "none"}, headers=seat)
    assert patched.status_code == 200 and patched.get_json() == now | {"mail": "none"}
    # an empty quiet clears the quiet hours and keeps the zone
    assert change(api, started, 1, quiet="")["quiet"] is None
    assert api.client.get(settings_url(uid), headers=seat).get_json()["timezone"] == \
        "Europe/Warsaw"


BAD_SETTINGS = [
    ({"mail": "weekly"}, 400, "mail"),
    ({"language": "de"}, 400, "language"),
    ({"quiet": "late"}, 400, "22:00-08:00"),
    ({"timezone": "Mars/Base"}, 400, "not a time zone"),
    ({}, 400, "nothing to change"),
    ({"anytime_windows": True}, 400, "before the start"),
    ({"mail": 3}, 400, "mail"),
]


def test_bad_settings_are_refused_and_change_nothing(api: Api, started: Table) -> None:
    before = table_rows(api, *TABLES)

    def check(body: dict[str, Any], status: int, words: str) -> None:
        response = api.client.post(settings_url(started.uid), json=body,
                                   headers=started.seat(0))
        assert response.status_code == status, response.get_json()
        assert words in str(response.get_json()), response.get_json()
        assert table_rows(api, *TABLES) == before

    each_case(labelled(BAD_SETTINGS), check)


def test_settings_need_the_seat_token_of_that_game(api: Api, started: Table) -> None:
    other = api.new_started(3, prefix="o")
    before = table_rows(api, *TABLES)
    assert api.client.post(settings_url(started.uid), json={"mail": "none"}).status_code == 401
    refused = api.client.post(settings_url(started.uid), json={"mail": "none"},
                              headers=other.seat(0))
    assert refused.status_code == 403
    assert api.client.get(settings_url(started.uid), headers=bearer("nonsense")).status_code \
        == 401
    assert table_rows(api, *TABLES) == before


def test_anytime_windows_only_before_the_start(api: Api) -> None:
    table = api.accept_all(api.create(3, prefix="w"))
    assert change(api, table, 2, anytime_windows=True)["anytime_windows"] is True
    api.start(table)
    with api.service.session() as s:
        titans = api.service.load(s, table.uid).state.state.titans.values()
    assert {titan.seat: titan.anytime_windows for titan in titans} == {0: False, 1: False,
                                                                      2: True}


def test_everywhere_sets_every_unfinished_game_of_the_address(api: Api) -> None:
    seats = [{"email": "same@example.com"}, {"email": "b@example.com"},
             {"email": "c@example.com"}]
    first = api.accept_all(api.create(seats))
    api.start(first)
    second = api.accept_all(api.create(seats))
    api.start(second)
    change(api, first, 0, mail="digest", language="pl", everywhere=True)
    shown = api.client.get(settings_url(second.uid), headers=second.seat(0)).get_json()
    assert (shown["mail"], shown["language"]) == ("digest", "pl")
    other = api.client.get(settings_url(second.uid), headers=second.seat(1)).get_json()
    assert (other["mail"], other["language"]) == ("every", "en")


# ---------------------------------------------------------------------- the effect in the mail


def test_a_digest_seat_gets_no_decision_mail_but_the_digest(api: Api, started: Table) -> None:
    for position in started.tokens:
        change(api, started, position, mail="digest")
    mark = last_outbox_id(api)
    play_on(api, started, 4)
    assert [kind for kind, _ in outbox(api, started.uid, after=mark)
            if kind in decision_kinds()] == []
    assert write_digests(api.service) == 1
    (acting,) = api.to_act(started.uid, started.tokens[0])
    recipients = [to for (to,) in api.rows("SELECT recipient FROM outbox WHERE kind = 'digest'")]
    assert recipients == [started.emails[acting]]


def test_a_none_seat_gets_nothing_it_dropped(api: Api, started: Table) -> None:
    for position in started.tokens:
        change(api, started, position, mail="none")
    mark = last_outbox_id(api)
    play_on(api, started, 3)
    # reminders, then the deadlines: the computer moves for the players
    run_clock(api)
    assert write_digests(api.service) == 0
    kinds = [kind for kind, _ in outbox(api, started.uid, after=mark)]
    assert [k for k in kinds if k not in SENT_EVEN_TO_NONE] == []
    assert api.move_count(started.uid) > 3  # the clock did act: there was mail to drop
    # the control: a game whose players kept every mail gets reminders and decision mails
    kept = api.new_started(3, prefix="kept")
    play_on(api, kept, 3)
    run_clock(api)
    kept_kinds = {kind for kind, _ in outbox(api, kept.uid)}
    assert REMINDER in kept_kinds and kept_kinds & decision_kinds()


def run_clock(api: Api) -> None:
    """The clock a day and more on: the first reminder (halfway), then every deadline."""
    now = datetime.now().astimezone()
    for hours in (30, 24 * 30):
        clock(api).process_due(now=now + timedelta(hours=hours), max_gap=None)


def test_what_none_still_lets_through() -> None:
    seat = Seat(position=0, email="a@example.com", secret="s", notify={"mail": "none"})
    assert wants_mail(seat, GAME_OVER) and wants_mail(seat, HANDOVER)
    assert not any(wants_mail(seat, kind) for kind in (*decision_kinds(), REMINDER, "digest"))
    older = Seat(position=0, email="a@example.com", secret="s", notify={"digest": True})
    assert not wants_mail(older, "turn") and wants_mail(older, REMINDER)


def test_a_mail_queued_before_unsubscribing_is_not_sent(api: Api, started: Table) -> None:
    position, _ = api.actor(started)
    mark = last_outbox_id(api)
    resend_current(api.service, started.uid)
    change(api, started, position, mail="none")
    (row,) = rows_after(api, mark)
    assert "mail setting is now none" in str(MailRenderer(api.service).render(row).skip)


# ---------------------------------------------------------------------- the /me page


def test_the_me_page_changes_mail_and_language(api: Api, started: Table) -> None:
    position, _ = api.actor(started)
    client = browser_of(api, started.uid, position)
    url = f"/games/{started.uid}/me"
    page = client.get(url)
    assert page.status_code == 200
    assert 'name="mail" value="every" checked' in page.text
    before = table_rows(api, *TABLES)
    # a GET of the form's address changes nothing; no CSRF token: refused
    assert client.get(f"{url}/settings").status_code in (404, 405)
    assert client.post(f"{url}/settings", data={"language": "pl"}).status_code == 400
    token = csrf(client, url)
    refused = client.post(f"{url}/settings", data={"csrf_token": token, "mail": "weekly"})
    assert refused.status_code == 400 and "mail must be one of" in refused.text
    assert table_rows(api, *TABLES) == before

    saved = client.post(f"{url}/settings",
                        data={"csrf_token": token, "mail": "every", "language": "pl"})
    assert saved.status_code == 303
    page = client.get(url)
    assert "Twoje ustawienia są zapisane." in page.text and 'lang="pl"' in page.text
    # the next mail is in Polish
    mark = last_outbox_id(api)
    resend_current(api.service, started.uid)
    (row,) = rows_after(api, mark)
    rendered = MailRenderer(api.service).render(row)
    message = build_message(api.service.settings, row, rendered)
    assert rendered.lang == "pl" and message["Content-Language"] == "pl"


def test_the_me_page_sets_the_standing_answer_to_windows(api: Api, started: Table) -> None:
    position, _ = api.actor(started)
    client = browser_of(api, started.uid, position)
    url = f"/games/{started.uid}/me"
    page = client.get(url).text
    assert 'name="reactions" value="ask" checked' in page
    assert "play Dispel whenever it fits, else pass at once" in page
    token = csrf(client, url)
    refused = client.post(f"{url}/settings", data={"csrf_token": token, "reactions": "quake"})
    assert refused.status_code == 400 and "reactions must be one of" in refused.text
    saved = client.post(f"{url}/settings", data={"csrf_token": token, "reactions": "dispel"})
    assert saved.status_code == 303
    assert 'name="reactions" value="dispel" checked' in client.get(url).text
    assert api.client.get(settings_url(started.uid),
                          headers=started.seat(position)).get_json()["reactions"] == "dispel"
    other = next(p for p in started.tokens if p != position)
    assert api.client.get(settings_url(started.uid),
                          headers=started.seat(other)).get_json()["reactions"] == "ask"


def test_the_me_page_sets_quiet_hours_through_the_same_method(api: Api,
                                                              started: Table) -> None:
    position, _ = api.actor(started)
    client = browser_of(api, started.uid, position)
    url = f"/games/{started.uid}/me"
    token = csrf(client, url)
    response = client.post(f"{url}/quiet", data={"csrf_token": token, "quiet": "1-3",
                                                  "timezone": "Europe/Warsaw"})
    assert response.status_code == 303
    shown = api.client.get(settings_url(started.uid), headers=started.seat(position)).get_json()
    assert (shown["quiet"], shown["timezone"]) == ("1-3", "Europe/Warsaw")


# ---------------------------------------------------------------------- one-click unsubscribe


def decision_mail(api: Api, table: Table) -> tuple[int, Any]:
    """The acting seat and the mail of its decision, rendered and wrapped as the sender does."""
    position, _ = api.actor(table)
    mark = last_outbox_id(api)
    resend_current(api.service, table.uid)
    (row,) = rows_after(api, mark)
    rendered = MailRenderer(api.service).render(row)
    return position, build_message(api.service.settings, row, rendered)


def unsubscribe_path(api: Api, message: Any) -> str:
    """The path of the mail's List-Unsubscribe address (an https one in production)."""
    header = str(message["List-Unsubscribe"])
    assert header.startswith("<") and header.endswith(">"), header
    url, base = header[1:-1], api.service.settings.base_url
    assert url.startswith(f"{base}/u/"), (url, base)
    return url.removeprefix(base)


def buttons(page: str) -> dict[str, str]:
    """The unsubscribe page's buttons: their value and the words on them."""
    return {value: html.unescape(words).strip() for value, words in re.findall(
        r'<button type="submit" name="mail" value="(\w+)"[^>]*>([^<]*)</button>', page)}


def mail_setting(api: Api, table: Table, position: int) -> str:
    shown = api.client.get(settings_url(table.uid), headers=table.seat(position)).get_json()
    return str(shown["mail"])


def test_one_click_unsubscribe_from_a_real_mail(api: Api, started: Table) -> None:
    position, message = decision_mail(api, started)
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    path = unsubscribe_path(api, message)
    blind: FlaskClient = api.app.test_client()  # a mail provider: no cookie, no CSRF token
    before = table_rows(api, *TABLES)
    # a GET (a person, or a scanner opening every link) shows the choice and changes nothing
    page = blind.get(path)
    assert page.status_code == 200 and 'value="digest"' in page.text
    assert page.headers["Cache-Control"] == "no-store"
    assert buttons(page.text) == {"none": "No more mail from this game",
                                  "digest": "A daily digest instead"}
    assert table_rows(api, *TABLES) == before
    # the provider's one-click POST
    done = blind.post(path, data={"List-Unsubscribe": "One-Click"})
    assert done.status_code == 200, done.text
    assert mail_setting(api, started, position) == "none"
    # the other seats keep theirs
    assert {mail_setting(api, started, p) for p in started.tokens if p != position} == {"every"}
    # and the next decision mail of that seat is not written
    assert not wants_mail(seat_row(api, started.uid, position), "turn")


def test_a_digest_unsubscribes_every_seat_it_covers(api: Api) -> None:
    """A digest lists the games of one address: its List-Unsubscribe address covers each of
    those seats, and the one-click POST stops the mail of all of them (and of no other
    seat); its GET changes nothing. The digest also shows the chat since the seat's last
    mail, per game."""
    first, second = api.new_started(3, prefix="d"), api.new_started(3, prefix="d")
    for table in (first, second):
        for position in table.tokens:
            change(api, table, position, mail="digest")
    # the same address is to act in both games: the one acting in the first
    (acting,) = api.to_act(first.uid, first.tokens[0])
    address = first.emails[acting]
    while api.to_act(second.uid, second.tokens[0]) != [acting]:
        play_on(api, second, 1)
    talker = next(p for p in first.tokens if p != acting)
    with api.service.session(write=True) as s:
        add_message(s, api.service.load(s, first.uid).game, talker, "Good luck, all!")
        s.commit()
    assert write_digests(api.service) >= 1
    with api.service.session() as s:
        row = s.exec(select(OutboxMail).where(OutboxMail.kind == "digest",
                                              OutboxMail.recipient == address)).one()
    covered = {(item["uid"], item["position"]) for item in row.payload["games"]}
    assert covered == {(first.uid, acting), (second.uid, acting)}
    message = build_message(api.service.settings, row, MailRenderer(api.service).render(row))
    text = message.get_body(("plain",)).get_content()
    assert "Chat since your last mail" in text and "Good luck, all!" in text
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    path = unsubscribe_path(api, message)
    assert path.startswith("/u/digest/")
    blind: FlaskClient = api.app.test_client()
    before = table_rows(api, *TABLES)
    page = blind.get(path)
    assert page.status_code == 200 and 'value="digest"' in page.text
    assert buttons(page.text) == {"none": "No more mail from these games",
                                  "digest": "Keep the daily digest"}
    assert table_rows(api, *TABLES) == before
    forged = blind.post(path[:-3] + "abc", data={"List-Unsubscribe": "One-Click"})
    assert forged.status_code == 404 and table_rows(api, *TABLES) == before
    done = blind.post(path, data={"List-Unsubscribe": "One-Click"})
    assert done.status_code == 200, done.text
    for table in (first, second):
        assert mail_setting(api, table, acting) == "none"
        assert {mail_setting(api, table, p) for p in table.tokens if p != acting} == {"digest"}


def seat_row(api: Api, uid: str, position: int) -> Seat:
    with api.service.session() as s:
        game = api.service.load(s, uid).game
        return next(seat for seat in api.service.seats(s, game) if seat.position == position)


def test_the_confirm_page_offers_the_digest_instead(api: Api, started: Table) -> None:
    position, message = decision_mail(api, started)
    chose = api.app.test_client().post(unsubscribe_path(api, message), data={"mail": "digest"})
    assert chose.status_code == 200 and "daily digest" in chose.text
    assert mail_setting(api, started, position) == "digest"


def test_a_forged_or_altered_unsubscribe_link_changes_nothing(api: Api, started: Table) -> None:
    _, message = decision_mail(api, started)
    path = unsubscribe_path(api, message)
    token = path.removeprefix("/u/")
    other = api.new_started(3, prefix="x")
    _, other_message = decision_mail(api, other)
    other_token = unsubscribe_path(api, other_message).removeprefix("/u/")
    payload, signature = token.rsplit(".", 1)
    altered = payload + "." + ("A" if signature[0] != "A" else "B") + signature[1:]
    # the other game's signature on this game's payload
    swapped = payload + "." + other_token.rsplit(".", 1)[1]
    before = table_rows(api, *TABLES)
    client = api.app.test_client()
    for bad in (altered, swapped, "garbage", token[:-3]):
        for method in (client.get, client.post):
            refused = method(f"/u/{bad}", data={"List-Unsubscribe": "One-Click"})
            assert refused.status_code in (400, 404), (bad, refused.status_code)
            assert "signature" in refused.text or "damaged" in refused.text or \
                "not made by this server" in refused.text or refused.status_code == 404
    # a one-click POST whose body is not the RFC 8058 one is refused too
    assert client.post(path, data={"List-Unsubscribe": "Maybe"}).status_code == 400
    assert table_rows(api, *TABLES) == before


def test_a_replaced_seats_old_link_no_longer_unsubscribes(api: Api, started: Table) -> None:
    position, message = decision_mail(api, started)
    path = unsubscribe_path(api, message)
    replaced = api.client.post(f"/api/games/{started.uid}/seats/{position}/replace",
                               json={"email": "new@example.com"}, headers=started.creator)
    assert replaced.status_code == 200, replaced.get_json()
    before = table_rows(api, *TABLES)
    assert api.app.test_client().post(
        path, data={"List-Unsubscribe": "One-Click"}).status_code == 400
    assert table_rows(api, *TABLES) == before


def test_unsubscribe_tokens_are_kept_out_of_the_logs() -> None:
    assert redact_path("/u/eyJnIjoiYWJjIn0.aBc.dEf") == "/u/…"
    assert redact_text("POST http://x.example/u/eyJnIjoiYWJjIn0.aBc.dEf 200") == \
        "POST http://x.example/u/… 200"


# ---------------------------------------------------------------------- the deadlines calendar


def calendar_path(api: Api, client: FlaskClient, uid: str) -> str:
    """The feed's address as the seat's settings page links it."""
    page = client.get(f"/games/{uid}/me")
    found = re.search(r'id="calendar-link" rel="nofollow" href="([^"]+)"|'
                      r'href="([^"]+)" id="calendar-link"', page.text)
    assert found, page.text
    url = html.unescape(found.group(1) or found.group(2))
    return url.removeprefix(api.service.settings.base_url)


def events_of(response: Any) -> list[Any]:
    assert response.status_code == 200, response.text
    assert response.mimetype == "text/calendar"
    calendar = Calendar.from_ical(response.data)
    return list(calendar.walk("VEVENT"))


def test_the_calendar_lists_the_seats_open_deadlines(api: Api, started: Table) -> None:
    position, _ = api.actor(started)
    client = browser_of(api, started.uid, position)
    path = calendar_path(api, client, started.uid)
    due = [datetime.fromisoformat(d["due_at"]) for d in
           api.client.get(f"/api/games/{started.uid}/deadlines").get_json()["deadlines"]
           if d["seat"] == position and d["kind"].startswith("timeout")]
    assert len(due) == 1
    before = table_rows(api, *TABLES)
    feed = api.app.test_client()  # a calendar app: no cookie
    (event,) = events_of(feed.get(path))
    assert event.decoded("dtstart") == due[0].replace(microsecond=0)  # iCalendar: seconds
    assert str(event["url"]) == f"{api.service.settings.base_url}/games/{started.uid}"
    assert str(event["summary"]).startswith(f"#{started.uid[:8]} \u2013 your deadline: ")
    uid = str(event["uid"])
    assert table_rows(api, *TABLES) == before  # a GET changes nothing
    # quiet hours around the deadline move it: the same event (UID), a later start
    start, end = (due[0] - timedelta(hours=1)).hour, (due[0] + timedelta(hours=2)).hour
    change(api, started, position, quiet=f"{start:02d}:00-{end:02d}:00", timezone="UTC")
    (moved,) = events_of(feed.get(path))
    assert str(moved["uid"]) == uid and moved.decoded("dtstart") > due[0]
    # the other seats have no open deadline now: an empty calendar
    others = [p for p in started.tokens if p != position]
    other_path = calendar_path(api, browser_of(api, started.uid, others[0]), started.uid)
    assert events_of(feed.get(other_path)) == []


def test_a_forged_calendar_token_is_refused(api: Api, started: Table) -> None:
    position, _ = api.actor(started)
    path = calendar_path(api, browser_of(api, started.uid, position), started.uid)
    token = path.split("token=", 1)[1]
    payload, signature = token.rsplit(".", 1)
    altered = payload + "." + ("A" if signature[0] != "A" else "B") + signature[1:]
    other = api.new_started(3, prefix="cal")
    feed = api.app.test_client()
    for bad in (f"/games/{started.uid}/me/deadlines.ics?token={altered}",
                f"/games/{started.uid}/me/deadlines.ics?token=garbage",
                f"/games/{started.uid}/me/deadlines.ics",
                f"/games/{other.uid}/me/deadlines.ics?token={token}"):
        refused = feed.get(bad)
        assert refused.status_code == 400, (bad, refused.status_code)
        assert refused.mimetype == "text/html"
