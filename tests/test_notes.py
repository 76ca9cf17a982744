"""A seat's private notes (app/features/notes/): the API, the game page's panel, the player's
command, the admin's export and the personal-data functions, on SQLite and PostgreSQL.

What matters most is who reads a note: its author alone, while their address holds the seat.
Another seat, a spectator, a new player of the seat, the API state, the log, the mails: none of
them shows a note, and a note of another seat is answered exactly as one that does not exist.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from sqlmodel import select
from werkzeug.serving import make_server

from app.core.models import GameNote, OutboxMail, Seat
from app.features.notes import delete_notes_of, notes_of
from app.features.notes.records import MAX_NOTE_CHARS, MAX_NOTES_PER_SEAT
from app.web.browser_seats import store_seat
from cli.main import main
from tests.apifixtures import ADMIN_TOKEN, Api, Table, bearer, csrf_token
from tests.netutil import serve_in_thread
from tests.test_cli_player import Cli

pytest_plugins = ["tests.apifixtures"]

SECRET = "the plan: lure them onto the lava at E11"


def notes_url(table: Table, note: int | None = None) -> str:
    return f"/api/games/{table.uid}/notes" + (f"/{note}" if note is not None else "")


def write(api: Api, table: Table, position: int, text: str, seq: int | None = None,
          **headers: str) -> Any:
    return api.client.post(notes_url(table), json={"text": text, "seq": seq},
                           headers={**table.seat(position), **headers})


def listed(api: Api, table: Table, position: int) -> list[dict[str, Any]]:
    answer = api.client.get(notes_url(table), headers=table.seat(position))
    assert answer.status_code == 200, answer.get_json()
    notes: list[dict[str, Any]] = answer.get_json()["notes"]
    return notes


def test_a_player_writes_reads_changes_and_deletes_notes(api: Api, started: Table) -> None:
    api.play(started, 3)
    assert listed(api, started, 0) == []
    made = write(api, started, 0, "  Plan:\r\n\tkeep the shield\u2028for the lava  ", seq=2)
    assert made.status_code == 201, made.get_json()
    note = made.get_json()["note"]
    assert note["text"] == "Plan:\n keep the shield\nfor the lava" and note["seq"] == 2
    assert listed(api, started, 0) == [note]

    changed = api.client.patch(notes_url(started, note["id"]), json={"text": "New plan"},
                               headers=started.seat(0))
    assert changed.status_code == 200, changed.get_json()
    assert changed.get_json()["note"]["text"] == "New plan"
    assert changed.get_json()["note"]["seq"] == 2  # (left out: unchanged)
    unpinned = api.client.patch(notes_url(started, note["id"]), json={"seq": None},
                                headers=started.seat(0))
    assert unpinned.get_json()["note"]["seq"] is None
    assert unpinned.get_json()["note"]["text"] == "New plan"

    gone = api.client.delete(notes_url(started, note["id"]), headers=started.seat(0))
    assert gone.status_code == 200 and gone.get_json()["deleted"] == note["id"]
    assert listed(api, started, 0) == []
    again = api.client.delete(notes_url(started, note["id"]), headers=started.seat(0))
    assert again.status_code == 404


def test_nobody_else_learns_anything_of_a_note(api: Api, started: Table) -> None:
    api.play(started, 2)
    note = write(api, started, 0, SECRET, seq=1).get_json()["note"]
    assert listed(api, started, 1) == []
    # another seat's note is answered as one that does not exist: the same status and body
    tries = {
        "patch": lambda: api.client.patch(notes_url(started, note["id"]), json={"text": "x"},
                                          headers=started.seat(1)),
        "delete": lambda: api.client.delete(notes_url(started, note["id"]),
                                            headers=started.seat(1)),
    }
    while_there = {name: (t().status_code, t().get_json()) for name, t in tries.items()}
    assert api.client.delete(notes_url(started, note["id"]),
                             headers=started.seat(0)).status_code == 200
    once_gone = {name: (t().status_code, t().get_json()) for name, t in tries.items()}
    assert while_there == once_gone
    assert while_there["patch"][0] == 404
    note = write(api, started, 0, SECRET, seq=1).get_json()["note"]
    # no spectator, no token of another game
    assert api.client.get(notes_url(started)).status_code == 401
    other = api.new_started(3, prefix="x")
    assert api.client.get(notes_url(started), headers=other.seat(0)).status_code == 403
    # nothing the others read holds it: the state, the log, the chat, the mails
    for headers in (started.seat(1), started.seat(2), None):
        for path in ("", "/log", "/chat", "/options" if headers else "/fairness"):
            answer = api.client.get(f"/api/games/{started.uid}{path}", headers=headers)
            assert SECRET not in answer.get_data(as_text=True), path
    with api.service.session() as s:
        bodies = [json.dumps(row.payload) for row in s.exec(select(OutboxMail)).all()]
    assert bodies and not any("lure them" in body for body in bodies)
    assert SECRET not in json.dumps(api.service.fairness(started.uid, 0))


def test_notes_are_checked_and_limited(api: Api, started: Table) -> None:
    api.play(started, 1)
    polish = {"Accept-Language": "pl"}
    longest = write(api, started, 0, "x" * MAX_NOTE_CHARS)
    assert longest.status_code == 201
    too_long = write(api, started, 0, "x" * (MAX_NOTE_CHARS + 1), **polish)
    assert too_long.status_code == 400
    assert "4000" in too_long.get_json()["error"] and "4001" in too_long.get_json()["message"]
    assert too_long.get_json()["message"] != too_long.get_json()["error"]  # (said in Polish)
    for hidden in ("\u202e", "\u200b", "\u2066"):
        refused = write(api, started, 0, f"left{hidden}right")
        assert refused.status_code == 400
        assert f"U+{ord(hidden):04X}" in refused.get_json()["error"]
    assert write(api, started, 0, "hi \U0001f468\u200d\U0001f469 bye").status_code == 201
    assert write(api, started, 0, " \n\t ").status_code == 400
    assert write(api, started, 0, "late", seq=99).status_code == 400
    assert write(api, started, 0, "early", seq=0).status_code == 400
    missing = api.client.patch(notes_url(started, 2**40), json={"text": "x"},
                               headers=started.seat(0))
    assert missing.status_code == 404
    nothing = api.client.patch(notes_url(started, 1), json={}, headers=started.seat(0))
    assert nothing.status_code == 400
    # at most MAX_NOTES_PER_SEAT notes per seat: the rest written straight to the database
    with api.service.session(write=True) as s:
        seat = s.exec(select(Seat).where(Seat.position == 0, Seat.email == started.emails[0])
                      ).one()
        assert seat.id is not None
        for number in range(MAX_NOTES_PER_SEAT - 3):
            s.add(GameNote(game_id=seat.game_id, seat_id=seat.id, author=seat.email,
                           text=f"note {number}"))
        s.commit()
    assert write(api, started, 0, "the last one").status_code == 201
    refused = write(api, started, 0, "one more", **polish)
    assert refused.status_code == 400 and str(MAX_NOTES_PER_SEAT) in refused.get_json()["message"]
    assert len(listed(api, started, 0)) == MAX_NOTES_PER_SEAT
    assert write(api, started, 1, "another seat's own").status_code == 201


def test_writing_a_note_again_with_its_key_writes_it_once(api: Api, started: Table) -> None:
    key = {"Idempotency-Key": "note-key-0001"}
    first = write(api, started, 0, "only once", **key)
    second = write(api, started, 0, "only once", **key)
    assert first.status_code == second.status_code == 201
    assert first.get_json() == second.get_json()
    assert second.headers.get("Idempotent-Replayed") == "true"
    assert [n["text"] for n in listed(api, started, 0)] == ["only once"]


def test_a_seat_given_to_someone_else_shows_them_none_of_the_notes(api: Api,
                                                                   started: Table) -> None:
    old = started.emails[1]
    write(api, started, 1, SECRET)
    given = api.client.post(f"/api/games/{started.uid}/seats/1/replace",
                            json={"email": "newcomer@example.com"}, headers=started.creator)
    assert given.status_code == 200, given.get_json()
    accepted = api.client.post("/api/invitations/accept", json={
        "invite_token": given.get_json()["invite_token"], "name": "New"})
    assert accepted.status_code == 201, accepted.get_json()
    started.tokens[1] = accepted.get_json()["api_token"]
    assert listed(api, started, 1) == []
    with api.service.session() as s:  # (still the old player's: their data, not the seat's)
        assert [n["text"] for n in notes_of(s, old)] == [SECRET]
        assert notes_of(s, "newcomer@example.com") == []


def test_notes_of_and_delete_notes_of_an_address(api: Api, started: Table) -> None:
    api.play(started, 1)
    other = api.new_started(3, prefix="q", name="Other race")
    write(api, started, 0, "first", seq=1)
    write(api, other, 0, "second")
    write(api, started, 1, "not theirs")
    with api.service.session() as s:
        found = notes_of(s, "  " + started.emails[0].upper())
    assert [(n["game"], n["seat"], n["seq"], n["text"]) for n in found] == [
        (started.uid, 0, 1, "first")]
    with api.service.session() as s:
        assert [n["game_name"] for n in notes_of(s, other.emails[0])] == ["Other race"]
        assert notes_of(s, "") == []
    with api.service.session(write=True) as s:
        assert delete_notes_of(s, started.emails[0]) == 1
        assert delete_notes_of(s, "nobody@example.com") == 0
        s.commit()
    assert listed(api, started, 0) == []
    assert [n["text"] for n in listed(api, started, 1)] == ["not theirs"]
    assert [n["text"] for n in listed(api, other, 0)] == ["second"]


# ---------------------------------------------------------------------- exports


def test_the_admin_export_marks_notes_private_and_may_leave_them_out(api: Api,
                                                                     started: Table) -> None:
    api.play(started, 2)
    write(api, started, 2, SECRET, seq=2)
    export = api.service.export(started.uid)
    assert export["notes"] == [{
        "private": True, "seat": 2, "author": started.emails[2], "seq": 2, "text": SECRET,
        "created_at": export["notes"][0]["created_at"],
        "updated_at": export["notes"][0]["updated_at"]}]
    assert "notes" not in api.service.export(started.uid, notes=False)
    admin = bearer(ADMIN_TOKEN)
    over_api = api.client.get(f"/api/admin/games/{started.uid}/export", headers=admin)
    assert over_api.get_json()["notes"] == export["notes"]
    without = api.client.get(f"/api/admin/games/{started.uid}/export?notes=false",
                             headers=admin)
    assert "notes" not in without.get_json()
    # an import keeps them, on the new game's seats
    copy = api.service.import_game(json.loads(json.dumps(export)))["game"]
    assert api.service.export(copy)["notes"] == export["notes"]
    damaged = json.loads(json.dumps(export))
    damaged["notes"][0]["seq"] = 99
    assert api.client.post("/api/admin/games/import", json=damaged,
                           headers=admin).status_code == 400


def test_admin_export_without_notes_on_the_command_line(api: Api, started: Table,
                                                         tmp_path: Path) -> None:
    write(api, started, 0, SECRET)
    env = {"TITANPOST_DATABASE_URL": api.url, "TITANPOST_ENV": "test"}
    runner = CliRunner()
    full = runner.invoke(main, ["admin", "export", started.uid], env=env)
    assert full.exit_code == 0, full.output
    assert json.loads(full.stdout)["notes"][0]["private"] is True
    bare = runner.invoke(main, ["admin", "export", started.uid, "--without-notes"], env=env)
    assert bare.exit_code == 0, bare.output
    assert SECRET not in bare.stdout and "notes" not in json.loads(bare.stdout)
    folder = tmp_path / "all"
    every = runner.invoke(main, ["admin", "export", "--all", str(folder), "--without-notes"],
                          env=env)
    assert every.exit_code == 0, every.output
    assert SECRET not in (folder / f"{started.uid}.json").read_text()


# ---------------------------------------------------------------------- the game page


def browser_of(api: Api, table: Table, position: int | None) -> Any:
    client = api.app.test_client()
    if position is not None:
        with client.session_transaction() as session:
            store_seat(session, table.uid, position,
                       api.service.link_seat(table.uid, position).secret)
    return client


def test_the_game_page_panel_is_the_seats_own(api: Api, started: Table) -> None:
    api.play(started, 3)
    ann = browser_of(api, started, 0)
    page = ann.get(f"/games/{started.uid}?pin=2").get_data(as_text=True)
    assert 'id="notes"' in page and 'id="note-seq" name="seq"' in page
    assert re.search(r'id="note-seq"[^>]*value="2"', page)
    token = csrf_token(page)
    made = ann.post(f"/games/{started.uid}/notes",
                    data={"csrf_token": token, "text": SECRET, "seq": "2"})
    assert made.status_code == 303 and "#note-" in made.headers["Location"]
    page = ann.get(f"/games/{started.uid}").get_data(as_text=True)
    note_id = listed(api, started, 0)[0]["id"]
    assert SECRET.replace(":", ":") in page.replace("&#39;", "'")
    assert f'href="/games/{started.uid}#note-{note_id}"' in page  # (the log's marker)
    log_page = ann.get(f"/games/{started.uid}/log").get_data(as_text=True)
    assert f"#note-{note_id}" in log_page
    changed = ann.post(f"/games/{started.uid}/notes/{note_id}",
                       data={"csrf_token": token, "text": "swap plans at lap two", "seq": ""})
    assert changed.status_code == 303
    assert listed(api, started, 0)[0]["text"] == "swap plans at lap two"
    assert listed(api, started, 0)[0]["seq"] is None
    # another seat's browser: no panel of Ann's, and her note is not theirs to change
    ben = browser_of(api, started, 1)
    ben_page = ben.get(f"/games/{started.uid}").get_data(as_text=True)
    assert "swap plans" not in ben_page and f"note-{note_id}" not in ben_page
    ben.post(f"/games/{started.uid}/notes/{note_id}/delete",
             data={"csrf_token": csrf_token(ben_page)})
    assert len(listed(api, started, 0)) == 1
    spectator = api.app.test_client().get(f"/games/{started.uid}").get_data(as_text=True)
    assert 'id="notes"' not in spectator and 'class="note-pin"' not in spectator
    refused = api.app.test_client().post(f"/games/{started.uid}/notes",
                                         data={"text": "x"})
    assert refused.status_code in (400, 403)
    gone = ann.post(f"/games/{started.uid}/notes/{note_id}/delete",
                    data={"csrf_token": token})
    assert gone.status_code == 303 and listed(api, started, 0) == []


# ---------------------------------------------------------------------- the command line


def test_the_notes_command(api: Api, started: Table, tmp_path: Path) -> None:
    api.play(started, 2)
    server = make_server("127.0.0.1", 0, api.app, threaded=True)
    thread = serve_in_thread(server, "notes")
    try:
        cli = Cli(tmp_path)
        cli("login", f"http://127.0.0.1:{server.port}", "--token", started.tokens[0])
        game = started.uid[:8]
        assert "No notes on" in cli("notes", game).stdout
        saved = cli("notes", game, "watch", "the", "lava", "--pin", "2").stdout
        assert "saved note #" in saved and "log entry 2" in saved
        note_id = listed(api, started, 0)[0]["id"]
        cli("notes", game, "-", input="line one\nline two\n")
        listing = cli("notes", game).stdout
        assert "  watch the lava" in listing and "  line one\n  line two" in listing
        assert cli.json("notes", game)["notes"][0]["seq"] == 2
        cli("notes", game, "--edit", str(note_id), "--unpin")
        assert listed(api, started, 0)[0]["seq"] is None
        cli("notes", game, "--edit", str(note_id), "mind", "the", "gap")
        assert listed(api, started, 0)[0]["text"] == "mind the gap"
        assert "deleted note" in cli("notes", game, "--delete", str(note_id)).stdout
        missing = cli("notes", game, "--delete", str(note_id), code=1)
        assert f"no note {note_id}" in missing.stderr
        assert "Error:" in cli("notes", game, "--pin", "1", code=1).stderr
        late = cli("notes", game, "x", "--pin", "99", code=1)
        assert "entry 99" in late.stderr
        # in Polish, the seat's language
        api.client.post(f"/api/games/{started.uid}/me/settings", json={"language": "pl"},
                        headers=started.seat(0))
        polish = cli("notes", game, "plan", "--pin", "1").stdout
        assert "wpis" in polish.lower()
        assert "notatki 99999" in cli("notes", game, "--delete", "99999", code=1).stderr
    finally:
        server.shutdown()
        thread.join(timeout=10)
