"""bench/load.py in a tiny configuration: six games at once on two gunicorn instances and two
workers on PostgreSQL, some seats played through the API, the others through the links in the
mails the SMTP sink received (confirm page, form POST, then the game page); every check of the
script holds: ``admin verify``, each game's served state equals a replay of its log, no client
error. PostgreSQL only (several processes on one database); about 35 seconds.

The play lasts 8 seconds once mail flows: the first decision mail comes some seconds into the
play alone and far later on a loaded machine, and a play timed from its start could end before
any mail player had a mail to play.
"""

from __future__ import annotations

import pytest

from tests.dbutil import fresh_postgres, pg_unavailable_reason
from tests.netutil import process_group_gone


def test_games_played_through_the_api_and_the_mail_links_replay_to_their_state() -> None:
    reason = pg_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    from bench import load

    lines: list[str] = []

    def echo(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    config = load.LoadConfig(games=6, clients=3, seconds=8, link_share=1 / 3, web_workers=1,
                             mail_seconds=1, seed=5)
    with fresh_postgres() as url:
        config.database_url = url
        report = load.run(config, echo)
    load.print_report(report, echo)
    text = "\n".join(lines)

    assert report.process_groups and all(process_group_gone(g) for g in report.process_groups), text
    assert report.ok, text
    names = [check.name for check in report.checks]
    for expected in ("admin verify exits 0", "equals a replay of its log", "no client error"):
        assert any(expected in name for name in names), (expected, names)
    stats = report.stats
    assert stats.games_started == 6 and stats.errors == 0, text
    # both ways of playing were used, and each link came from a mail the sink received
    assert stats.moves_by["api"] > 0, text
    assert stats.moves_by["link"] > 0, text
    assert report.decision_mails >= stats.moves_by["link"], text
    assert stats.moves == sum(stats.moves_by.values()) == len(stats.applied), text
    for kind in ("GET /l/<token> (confirm page)", "POST /l/<token>", "mail wait"):
        assert len(stats.timings[kind]) == stats.moves_by["link"], (kind, text)
    assert stats.post_ms and len(stats.post_ms) == stats.moves_by["api"], text


def test_a_mail_is_read_as_its_player_reads_it() -> None:
    """The mailbox keeps a decision mail's option links by game, seat and log length; other
    mails and older decisions do not answer."""
    from email.message import EmailMessage

    from bench import load
    from deploy import scaleout

    game = "ab" * 16
    message = EmailMessage()
    message["Message-ID"] = f"<{game}.7.2.pick@example.org>"
    message.set_content("YOUR OPTIONS:\r\n\r\n1. Take the red die\r\n\r\n   reply: pick red\r\n"
                        "   link:  http://127.0.0.1:8000/l/abc.def\r\n\r\n2. Take the blue die\r\n"
                        "   reply: pick blue\r\n   link:  http://127.0.0.1:8000/l/ghi.jkl\r\n")
    message.add_alternative("<p>html</p>", subtype="html")
    mailbox = load.Mailbox()
    mailbox.deliver(scaleout.Received(message["Message-ID"], ("p@example.org",), 0),
                    bytes(message))
    notice = EmailMessage()
    notice["Message-ID"] = f"<{game}.9.2.game_over@example.org>"
    notice.set_content("reply: pick green\n   link: http://x/l/nope\n")
    mailbox.deliver(scaleout.Received(notice["Message-ID"], ("p@example.org",), 0),
                    bytes(notice))

    assert mailbox.latest(game, 2, 7, 9) == (7, {
        "pick red": "http://127.0.0.1:8000/l/abc.def",
        "pick blue": "http://127.0.0.1:8000/l/ghi.jkl",
    })
    assert mailbox.latest(game, 2, 8, 9) is None  # a later decision: that mail is stale
    assert mailbox.latest(game, 1, 0, 9) is None  # another seat's
    assert mailbox.decision_mails == 1


def test_the_game_page_form_and_a_refusal_are_read() -> None:
    from bench import load

    page = ('<form method="post" action="/games/x/resign"><input type="hidden" '
            'name="csrf_token" value="t"></form>'
            '<form method="post" action="/games/x/move" id="composer">'
            '<input type="hidden" name="csrf_token" value="tok">'
            '<input type="hidden" name="seq" value="12">'
            '<button type="submit" name="option" value="move LL">Move</button>'
            '<button type="submit" name="option" value="trap &#39;C5&#39;">Trap</button>'
            '</form>')
    form = load.composer(page)
    assert form is not None
    assert form.action == "/games/x/move"
    assert form.fields == {"csrf_token": "tok", "seq": "12"}
    assert form.choices == ["move LL", "trap 'C5'"]
    assert load.composer(page.replace('id="composer"', "")) is None


def test_link_seats_are_the_asked_share_of_all_seats() -> None:
    import random

    from bench import load

    rnd = random.Random(1)
    for share, expected in ((0.0, 0), (1 / 3, 20), (0.5, 30), (1.0, 60)):
        seats = [load.link_seats(n, share, rnd) for n in range(20)]
        assert sum(len(s) for s in seats) == expected, share
        assert all(s <= {0, 1, 2} for s in seats)
