"""Pages that follow the game (issue 38): a live connection (Server-Sent Events) per open page
says "changed" when its game changes, on SQLite and PostgreSQL; a page that was behind is told
at once (its mark); a seat's open page counts as watching while it lasts; the stream changes
nothing of the game and is refused where the page is."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import text

from app.features.live.feed import FEED, database_key
from app.features.live.marks import marks_of
from tests.apifixtures import Api
from tests.test_pages import give_seat

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.apifixtures", "tests.browser"]


def human_pair(api: Api, **settings: Any) -> dict[str, Any]:
    """A started game of Ann and Ben and the computer."""
    svc = api.service
    created = svc.create_game(
        seats=[{"email": "ann@example.com", "name": "Ann"},
               {"email": "ben@example.com", "name": "Ben"}, {"bot": True}],
        seed=7, name="Live race", settings=settings or None)
    for invitation in created["invitations"]:
        svc.accept(invitation["invite_token"])
    svc.start(created["game"], created["creator_token"])
    return created


def play_one(api: Api, uid: str) -> int:
    """The seat to act plays its first option; return that seat."""
    svc = api.service
    position = svc.state(uid, 0)["game"]["to_act"][0]
    options = svc.options(uid, position)
    svc.submit(uid, position, options["seq"], options["options"][0]["input"]
               if isinstance(options["options"][0], dict) else options["options"][0])
    return int(position)


class Stream:
    """A live connection read line by line in a thread of its own."""

    def __init__(self, response: Any) -> None:
        self.response = response
        self.chunks: list[str] = []
        self.changed = threading.Event()
        self.stopping = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for chunk in self.response.response:
                text_ = chunk.decode() if isinstance(chunk, bytes) else chunk
                self.chunks.append(text_)
                if "event: changed" in text_:
                    self.changed.set()
                if self.stopping:
                    break
        finally:  # (the browser goes: the server's generator is closed between two lines)
            self.response.close()

    def wait_changed(self, timeout: float = 10.0) -> bool:
        found = self.changed.wait(timeout)
        self.changed.clear()
        return found

    def close(self) -> None:
        """Leave the page: the stream ends at its next line (woken here at once)."""
        self.stopping = True
        while self.thread.is_alive():
            FEED.announce_all()
            self.thread.join(0.05)


@pytest.fixture
def streams() -> Iterator[list[Stream]]:
    opened: list[Stream] = []
    yield opened
    for stream in opened:
        stream.close()


def open_stream(api: Api, streams: list[Stream], url: str, client: Any = None) -> Stream:
    client = client or api.app.test_client()
    response = client.get(url, buffered=False)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/event-stream"
    assert response.headers["X-Accel-Buffering"] == "no"
    assert response.headers["Cache-Control"] == "no-store"
    stream = Stream(response)
    streams.append(stream)
    deadline = time.monotonic() + 5
    while not stream.chunks and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stream.chunks and stream.chunks[0].startswith("retry:")
    return stream


def test_a_move_chat_and_join_reach_the_game_stream(api: Api, streams: list[Stream]) -> None:
    uid = human_pair(api)["game"]
    other = human_pair(api)["game"]  # (both set up before any stream: none hears the set-up)
    mark = marks_of(api.service, [uid])
    watching = open_stream(api, streams, f"/games/{uid}/live?mark={mark}")
    elsewhere = open_stream(api, streams, f"/games/{other}/live")
    assert not watching.wait_changed(0.3), "an unchanged game was announced"
    play_one(api, uid)
    assert watching.wait_changed(), "the move did not reach the page's stream"
    assert not elsewhere.wait_changed(0.3), "another game's stream heard this game's move"
    from app.features.chat.messages import post

    post(api.service, uid, 0, "gg")
    assert watching.wait_changed(), "a chat message did not reach the stream"
    assert marks_of(api.service, [uid]) != mark


def test_a_rolled_back_change_is_never_announced(api: Api, streams: list[Stream]) -> None:
    uid = human_pair(api)["game"]
    watching = open_stream(api, streams, f"/games/{uid}/live")
    from app.features.live.feed import game_changed

    with api.service.session(write=True) as s:
        game_changed(s, uid)
        s.rollback()
    assert not watching.wait_changed(0.5)


def test_a_page_that_is_behind_is_told_at_once(api: Api, streams: list[Stream]) -> None:
    uid = human_pair(api)["game"]
    mark = marks_of(api.service, [uid])
    play_one(api, uid)
    behind = open_stream(api, streams, f"/games/{uid}/live?mark={mark}")
    assert behind.wait_changed(2), "a page rendered before the move was not told"
    current = open_stream(api, streams,
                          f"/games/{uid}/live?mark={marks_of(api.service, [uid])}")
    assert not current.wait_changed(0.3)


def test_a_seats_open_page_counts_as_watching_while_it_lasts(api: Api,
                                                            streams: list[Stream]) -> None:
    uid = human_pair(api)["game"]
    ann = api.app.test_client()
    give_seat(ann, uid, 0)

    def watchers() -> list[tuple[Any, ...]]:
        return api.rows("SELECT seat_id, pages FROM page_watchers w JOIN games g "
                        "ON g.id = w.game_id WHERE g.uid = :uid", uid=uid)

    spectator = open_stream(api, streams, f"/games/{uid}/live")
    assert watchers() == [], "a spectator's page counted as a seat watching"
    first = open_stream(api, streams, f"/games/{uid}/live", client=ann)
    second = open_stream(api, streams, f"/games/{uid}/live", client=ann)
    seat_id = api.scalar("SELECT s.id FROM seats s JOIN games g ON g.id = s.game_id "
                         "WHERE g.uid = :uid AND s.position = 0", uid=uid)
    assert watchers() == [(seat_id, 2)]
    first.close()
    assert watchers() == [(seat_id, 1)]
    second.close()
    assert watchers() == []
    spectator.close()


def test_the_stream_is_refused_where_the_page_is(api: Api) -> None:
    uid = human_pair(api, spectators=False)["game"]
    client = api.app.test_client()
    assert client.get(f"/games/{uid}/live").status_code == 403
    assert client.get(f"/games/{'0' * 32}/live").status_code == 404
    before = api.move_count(uid)
    ann = api.app.test_client()
    give_seat(ann, uid, 0)
    response = ann.get(f"/games/{uid}/live", buffered=False)
    assert response.status_code == 200
    response.close()
    assert api.move_count(uid) == before


def test_my_games_follows_every_game_of_the_signed_in_browser(api: Api,
                                                             streams: list[Stream]) -> None:
    first = human_pair(api)["game"]
    second = human_pair(api)["game"]
    ann = api.app.test_client()
    give_seat(ann, first, 0)
    give_seat(ann, second, 0)
    page = ann.get("/games")
    assert page.status_code == 200
    assert 'id="live-config"' in page.text
    listing = open_stream(api, streams, "/live/games", client=ann)
    play_one(api, second)
    assert listing.wait_changed(), "My games did not hear a move in one of its games"


def test_the_listener_hears_changes_of_other_processes(api: Api,
                                                      streams: list[Stream]) -> None:
    """On PostgreSQL the change is a NOTIFY: one made by another connection (another process,
    say the scheduler) reaches this process's pages."""
    if api.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's NOTIFY: on SQLite one process serves the pages")
    uid = human_pair(api)["game"]
    watching = open_stream(api, streams, f"/games/{uid}/live")
    assert FEED.followed(database_key(api.engine)) == 1
    with api.engine.connect() as connection:  # a connection outside the game service
        connection.execute(text("SELECT pg_notify('titanpost_live', :uid)"), {"uid": uid})
        connection.commit()
    assert watching.wait_changed()


# ------------------------------------------------------------------ in chromium


def test_two_browsers_see_each_others_moves_without_reloading(live_server: LiveServer,
                                                             browser: Any) -> None:
    """Ann and Ben, each in a browser of their own, and a spectator: the one to act plays on
    the page; the others' pages and Ann's My games show it within seconds, without loading
    again (a mark set on the window survives), and no request is made while nothing happens."""
    svc = live_server.service
    created = svc.create_game(seats=[{"email": "ann@example.com", "name": "Ann"},
                                     {"email": "ben@example.com", "name": "Ben"},
                                     {"bot": True}], seed=5)
    uid = created["game"]
    contexts = [browser.new_context() for _ in range(3)]
    from tests.browser import join_from_invitations  # (the plugin, loaded by then)

    try:
        pages = [context.new_page() for context in contexts]
        join_from_invitations(live_server.url, pages, created["invitations"])  # (not the third)
        svc.start(uid, created["creator_token"])
        for page in pages:
            page.goto(f"{live_server.url}/games/{uid}")
            page.wait_for_function("document.documentElement.classList.contains('live-on')")
            page.evaluate("window.stayed = true")
        listing = contexts[0].new_page()  # Ann's My games, beside her game page
        listing.goto(f"{live_server.url}/games")
        listing.wait_for_function("document.documentElement.classList.contains('live-on')")
        listing_before = listing.inner_html("main")
        requests: list[str] = []
        for page in pages:
            page.on("request", lambda request: requests.append(request.url))
        pages[2].wait_for_timeout(1500)
        assert requests == [], "a page asked the server while nothing happened"
        while (acting := svc.state(uid, None)["game"]["to_act"][0]) not in (0, 1):
            time.sleep(0.05)  # (the computer's turn: played inside the move before it)
        mover, watcher, spectator = pages[acting], pages[1 - acting], pages[2]
        before = watcher.inner_html("main")
        seq = svc.state(uid, None)["seq"]
        mover.locator(".opt button").first.click()
        mover.wait_for_load_state()
        deadline = time.monotonic() + 10
        while svc.state(uid, None)["seq"] == seq and time.monotonic() < deadline:
            time.sleep(0.05)
        assert svc.state(uid, None)["seq"] > seq, "the move was not played"
        watcher.wait_for_function("(b) => document.querySelector('main').innerHTML !== b",
                                  arg=before, timeout=5000)
        spectator.wait_for_function("(b) => document.querySelector('main').innerHTML !== b",
                                    arg=before, timeout=5000)
        for page in (watcher, spectator):
            assert page.evaluate("window.stayed === true"), "the page was loaded again"
        listing.wait_for_function("(b) => document.querySelector('main').innerHTML !== b",
                                  arg=listing_before, timeout=5000)
        assert any("/live" not in url for url in requests)
    finally:
        for context in contexts:
            context.close()
