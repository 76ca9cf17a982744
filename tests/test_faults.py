"""deploy/faults.py in a short configuration: six games played through the API and the mail
links on two gunicorn instances and two workers, all reaching PostgreSQL through the script's
proxy, while a web instance and two workers (one holding claimed mail it had not sent, one
inside its SMTP conversation after the message's data) get SIGKILL and are started again, and
the database is cut away for three seconds. Every check of the script holds: nothing lost, no
mail twice, every delivered row received, every pending deadline still pending, 503 with
Retry-After while the database is away and recovery without a restart. PostgreSQL only; about
a minute.

Nothing here is timed by the clock alone: the faults start once mail flows, the play ends two
seconds after the last fault however late that is, and the outbox is drained until it has
settled (bounded only by the script's generous default, which a settled outbox never meets).
"""

from __future__ import annotations

import pytest

from tests.dbutil import fresh_postgres, pg_unavailable_reason
from tests.netutil import process_group_gone


def test_kills_restarts_and_a_database_cut_lose_and_double_nothing() -> None:
    reason = pg_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    from deploy import faults

    lines: list[str] = []

    def echo(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    # The faults start 1.8-7.2 s after the first decision mail (some seconds into the play
    # alone, far later under load), each waiting for its moment, often past the play's 12 s
    # (from that mail too): the play goes on until 2 s after the last of them.
    config = faults.FaultConfig(
        games=6, clients=3, seconds=12, tail_seconds=2, web_workers=1, mail_seconds=1, web_kills=1,
        worker_kills=2, cut_seconds=3, settle_seconds=5, aim_seconds=0.5, window=(0.15, 0.6),
        fault_seed=2)
    with fresh_postgres() as url:
        config.database_url = url
        report = faults.run(config, echo)
    faults.print_report(report, echo)
    text = "\n".join(lines)

    assert report.process_groups and all(process_group_gone(g) for g in report.process_groups), text
    assert report.ok, text
    names = [check.name for check in report.checks]
    for expected in ("every fault happened", "landed where it was aimed", "started again",
                     "answered 503 with Retry-After", "served again by itself",
                     "admin verify exits 0", "in the log, once", "none doubled",
                     "equals a replay of its log", "no mail arrived twice",
                     "arrived exactly once", "unconfirmed", "left unsent",
                     "every pending deadline is still pending", "no client error"):
        assert any(expected in name for name in names), (expected, names)
    kinds = [(fault.what, fault.how) for fault in report.faults]
    assert ("worker", "holding claimed mail") in kinds, kinds
    assert ("worker", "in SMTP after the data") in kinds, kinds
    assert [what for what, _ in kinds].count("web") == 1, kinds
    assert [what for what, _ in kinds].count("cut") == 1, kinds
    assert report.cut is not None and report.cut.during, text
    assert all(probe.startswith("503 ") for probe in report.cut.during), text
    # the kill inside SMTP left a row handed over without an answer: settled, never resent
    assert report.mail["unconfirmed"] >= 1, text
    stats = report.stats
    assert stats.moves_by["api"] > 0 and stats.moves_by["link"] > 0, text
    assert stats.errors == 0, text


def test_the_proxy_cuts_and_restores_a_database_connection() -> None:
    """Through the proxy a query works; cut, the open connection breaks and a new one is
    refused; restored, a new connection works again on the same port."""
    reason = pg_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    import psycopg

    from deploy import faults
    from tests.dbutil import PG_SERVER

    proxy = faults.DatabaseProxy()
    try:
        url = proxy.start_for(f"{PG_SERVER}/postgres").replace("postgresql+psycopg://",
                                                              "postgresql://")
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            proxy.cut()
            with pytest.raises(psycopg.OperationalError):
                conn.execute("SELECT 1")
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(url, connect_timeout=3)
        proxy.restore()
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT 2").fetchone() == (2,)
    finally:
        proxy.close()


def test_the_faults_fall_at_the_same_points_for_the_same_seed() -> None:
    from deploy import faults

    config = faults.FaultConfig(seconds=100, web_kills=2, worker_kills=4, cut_seconds=5,
                                fault_seed=9)
    first, again = faults.plan(config), faults.plan(config)
    assert [(f.what, f.how, f.at) for f in first] == [(f.what, f.how, f.at) for f in again]
    assert [f.at for f in first] == sorted(f.at for f in first)
    assert all(10 <= f.at <= 70 for f in first)
    assert sorted(f.how for f in first if f.what == "worker") == sorted(faults.WORKER_KILLS)
    assert [f.what for f in first].count("cut") == 1
    other = faults.plan(faults.FaultConfig(seconds=100, fault_seed=10))
    assert [f.at for f in other] != [f.at for f in first]


def test_a_write_cut_off_from_the_database_leaves_the_game_servable() -> None:
    """The database goes away as a move is written, in the transaction that read the game's
    seats: that request fails, and once the database is back the same process serves the game
    and takes the move (no row that the failed transaction's rollback expired is reused from
    the process's cache: that was a 500 on every request for the game until its log grew)."""
    reason = pg_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    from sqlalchemy import event
    from sqlalchemy.exc import OperationalError

    from deploy import faults
    from tests.apifixtures import make_service

    with fresh_postgres() as url:
        proxy = faults.DatabaseProxy()
        service = make_service(proxy.start_for(url))
        try:
            created = service.create_game(seats=[{"email": f"f{i}@x.org"} for i in range(3)],
                                          seed=5)
            for invitation in created["invitations"]:
                service.accept(invitation["invite_token"])
            uid = created["game"]
            service.start(uid, created["creator_token"])
            state = service.state(uid, None)
            seat = state["game"]["to_act"][0]
            option = service.options(uid, seat)["options"][0]

            def cut(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
                if statement.startswith("INSERT INTO moves"):  # the move's first write
                    proxy.cut()

            service.forget_seats(uid)  # the move reads the seats in its own transaction
            event.listen(service.engine, "before_cursor_execute", cut)
            try:
                with pytest.raises(OperationalError):
                    service.submit(uid, seat, state["seq"], option)
            finally:
                event.remove(service.engine, "before_cursor_execute", cut)
            proxy.restore()

            again = service.state(uid, seat)
            assert again["seq"] == state["seq"] and again["game"]["to_act"] == [seat]
            moved = service.submit(uid, seat, state["seq"], option)
            assert moved["applied"] and moved["seq"] == state["seq"] + 1
        finally:
            service.engine.dispose()
            proxy.close()
