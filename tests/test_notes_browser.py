"""The game page's "My notes" in a real browser (chromium): a player adds a note, pins one to a
log entry from the log's own link, follows the log's marker to it, edits and deletes it; another
seat's page (in Polish) and a spectator's show nothing of it (app/features/notes/, issue 41)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]

ANNS = "Ann's plan: hold the shield until the lava"
PINNED = "Bob rolled well here"


def play(service: Any, uid: str, moves: int) -> None:
    """``moves`` decisions answered with their first option, whoever is to act."""
    for _ in range(moves):
        position = service.state(uid, None)["game"]["to_act"][0]
        options = service.options(uid, position)
        service.submit(uid, position, options["seq"], options["options"][0])


def test_a_players_notes_on_the_game_page(live_server: LiveServer, browser: Any) -> None:
    from tests.browser import join_from_invitations  # (the plugin, loaded by then)

    service = live_server.service
    created = service.create_game(seats=[
        {"email": "ann.notes@example.com", "name": "Ann"},
        {"email": "bob.notes@example.com", "name": "Bob", "language": "pl"},
        {"bot": True}], name="Notes race")
    uid = created["game"]
    ann, bob, spectator = (browser.new_context(locale="en-GB"),
                           browser.new_context(locale="pl-PL"), browser.new_context())
    try:
        ann_page, bob_page = ann.new_page(), bob.new_page()
        join_from_invitations(live_server.url, [ann_page, bob_page], created["invitations"])
        service.start(uid, created["creator_token"])
        play(service, uid, 3)
        game_url = f"{live_server.url}/games/{uid}"

        # a note on the whole game
        ann_page.goto(game_url)
        assert ann_page.inner_text("#notes h2") == "My notes"
        ann_page.fill("#note-text", ANNS)
        ann_page.click("#note-form button[type=submit]")
        ann_page.wait_for_selector("text=Your note is saved: only you can read it.")
        first = ann_page.locator("#notes li[data-note]").first
        assert ANNS in first.inner_text() and first.get_attribute("data-seq") is None

        # pinned to entry 2 from the log's own link, then found again from the log's marker
        ann_page.click("#log-2 a.note-pin")
        ann_page.wait_for_url("**pin=2**")
        assert ann_page.input_value("#note-seq") == "2"
        ann_page.fill("#note-text", PINNED)
        ann_page.click("#note-form button[type=submit]")
        ann_page.wait_for_selector("text=Your note is saved: only you can read it.")
        pinned = ann_page.locator("#notes li[data-seq='2']")
        note_id = pinned.get_attribute("data-note")
        assert PINNED in pinned.inner_text() and "On log entry 2" in pinned.inner_text()
        assert ann_page.locator("#log-1 a.note-mark").count() == 0
        ann_page.click("#log-2 a.note-mark")
        ann_page.wait_for_url(f"**#note-{note_id}")

        # edited: another text, on the whole game again
        pinned.locator("summary").click()
        pinned.locator("textarea").fill("Bob rolled well: watch him")
        pinned.locator("input[name=seq]").fill("")
        pinned.locator("button[type=submit]", has_text="Save").click()
        ann_page.wait_for_selector("text=Your note is changed.")
        edited = ann_page.locator(f"#note-{note_id}")
        assert "watch him" in edited.inner_text() and edited.get_attribute("data-seq") is None
        assert ann_page.locator("#log-2 a.note-mark").count() == 0

        # Bob's page, in Polish: his own panel, nothing of Ann's
        bob_page.goto(game_url)
        assert bob_page.inner_text("#notes h2") == "Moje notatki"
        bob_text = bob_page.inner_text("main")
        assert "Ann's plan" not in bob_text and "watch him" not in bob_text
        assert bob_page.locator(f"#note-{note_id}").count() == 0
        bob_page.fill("#note-text", "mój plan")
        bob_page.click("#note-form button[type=submit]")
        bob_page.wait_for_selector("text=Notatka zapisana: czytasz ją tylko Ty.")

        # a spectator sees no panel, no marker, no note
        watching = spectator.new_page()
        watching.goto(game_url)
        assert watching.locator("#notes, a.note-pin, a.note-mark").count() == 0
        shown = watching.content()
        assert "Ann's plan" not in shown and "mój plan" not in shown and "watch him" not in shown

        # deleted (after the browser's confirmation)
        ann_page.goto(game_url)
        assert "mój plan" not in ann_page.content()
        ann_page.once("dialog", lambda dialog: dialog.accept())
        ann_page.locator(f"#note-{note_id} .note-delete").click()
        ann_page.wait_for_selector("text=Your note is deleted.")
        assert ann_page.locator(f"#note-{note_id}").count() == 0
        assert ann_page.locator("#notes li[data-note]").count() == 1
    finally:
        for context in (ann, bob, spectator):
            context.close()
