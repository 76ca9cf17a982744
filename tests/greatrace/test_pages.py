"""The Great Race's web pages through Flask's test client, on SQLite and PostgreSQL: created on
/new, joined and started through the pages, the bivouac and a plan played with the page's forms,
the plan's secrecy before the reveal, and the Polish page."""

from __future__ import annotations

import re
from typing import Any

from flask.testing import FlaskClient

from tests.apifixtures import Api

pytest_plugins = ["tests.apifixtures", "tests.browser"]

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
SEQ = re.compile(r'name="seq" value="(\d+)"')
JOIN = re.compile(r"/join/([A-Za-z0-9_\-]+)")


def token_of(page: str) -> str:
    found = CSRF.search(page)
    assert found, "no CSRF token on the page"
    return found.group(1)


def create_on_new(api: Api, creator: FlaskClient, **extra: str) -> str:
    """A Great Race created on /new by ``creator``: Ann (French), Bob (Polish), a computer."""
    page = creator.get("/new?game=great-race")
    assert page.status_code == 200
    assert "Start city" in page.text and 'name="seat0_team"' not in page.text
    assert "Ekipa" not in page.text and "French crew" in page.text
    form = {"csrf_token": token_of(page.text), "game": "great-race", "name": "Safari",
            "circuit0": "alger", "deadline_hours": "0", "spectators": "on",
            "seat0_kind": "human", "seat0_email": "ann@example.com", "seat0_name": "Ann",
            "seat0_titan": "french",
            "seat1_kind": "human", "seat1_email": "bob@example.com", "seat1_name": "Bob",
            "seat1_lang": "pl", "seat1_titan": "belgian",
            "seat2_kind": "computer", "seat2_titan": "italian", **extra}
    created = creator.post("/new", data=form)
    assert created.status_code == 303, created.text
    return str(created.headers["Location"]).split("/games/")[1].split("/")[0]


def join_all(api: Api, creator: FlaskClient, uid: str) -> list[FlaskClient]:
    """Each invited player joins in their own browser; the creator starts the race."""
    setup = creator.get(f"/games/{uid}/setup")
    assert setup.status_code == 200
    links = list(dict.fromkeys(JOIN.findall(setup.text)))
    assert len(links) == 2
    players = []
    for token in links:
        browser = api.app.test_client()
        invitation = browser.get(f"/join/{token}")
        assert invitation.status_code == 200
        assert "French crew" in invitation.text or "Ekipa belgijska" in invitation.text
        joined = browser.post(f"/join/{token}", data={"csrf_token": token_of(invitation.text)})
        assert joined.status_code == 303
        players.append(browser)
    start = creator.post(f"/games/{uid}/start",
                         data={"csrf_token": token_of(creator.get(f"/games/{uid}/setup").text)})
    assert start.status_code == 303
    return players


def state(api: Api, uid: str, position: int | None = None) -> dict[str, Any]:
    return api.service.state(uid, position)


def play_bivouac(api: Api, uid: str, players: list[FlaskClient]) -> None:
    """Each seat takes the first card of the market with the page's option buttons."""
    for _ in range(6):
        view = state(api, uid)["view"]
        if view["phase"] != "bivouac":
            return
        acting = state(api, uid)["game"]["to_act"]
        browser = players[acting[0]]
        page = browser.get(f"/games/{uid}")
        assert "Take a card from the market" in page.text or "Weź kartę z targu" in page.text
        option = re.search(r'name="option" value="(take [a-z\-]+)"', page.text)
        assert option, page.text
        sent = browser.post(f"/games/{uid}/move", data={
            "csrf_token": token_of(page.text), "seq": SEQ.search(page.text).group(1),
            "option": option.group(1)})
        assert sent.status_code == 303, sent.text
    raise AssertionError("the bivouac did not end")


def plan_form(browser: FlaskClient, uid: str, counts: dict[str, int]) -> Any:
    page = browser.get(f"/games/{uid}")
    assert 'name="count_P"' in page.text
    return browser.post(f"/games/{uid}/move", data={
        "csrf_token": token_of(page.text), "seq": SEQ.search(page.text).group(1),
        "counts": "plan", "total": "5", **{f"count_{box}": str(n) for box, n in counts.items()}})


def test_a_great_race_from_new_to_a_sealed_plan(api: Api) -> None:
    creator = api.app.test_client()
    uid = create_on_new(api, creator)
    ann, bob = join_all(api, creator, uid)
    game = ann.get(f"/games/{uid}")
    assert game.status_code == 200
    assert "<svg" in game.text and 'id="crews"' in game.text
    assert "Turn 1" in game.text
    play_bivouac(api, uid, [ann, bob])
    assert state(api, uid)["view"]["phase"] == "planning"

    before = state(api, uid, 0)
    for counts in ({"P": 1, "M": 2, "S": 0, "F": 1}, {"P": 2, "M": 2, "S": 1, "F": 1}):
        refused = plan_form(ann, uid, counts)
        assert refused.status_code == 422
        assert "Place all 5 assistants" in refused.text
        assert state(api, uid, 0) == before

    sealed = plan_form(ann, uid, {"P": 1, "M": 2, "S": 0, "F": 2})
    assert sealed.status_code == 303
    page = ann.get(f"/games/{uid}")
    assert "Your answer is sealed: Plan: 1 pathfinder, 2 mechanics, 2 funding" in page.text
    assert "Waiting for Bob to plan their assistants." in page.text
    assert 'name="count_P"' not in page.text

    # Ann's cards that Bob and a spectator have no other way to see (not in Bob's own hand).
    # The deal is the server's and unseeded: it may give both the same kinds of card, and then
    # there is none to look for here (tests/greatrace/test_hidden.py tries seeded deals).
    ann_hand = set(state(api, uid, 0)["view"]["crews"]["french"]["hand"])
    ann_hand -= set(state(api, uid, 1)["view"]["crews"]["belgian"]["hand"])
    hidden = ["pathfinder, 2 mechanics", "P1 M2 F2", "plan french"]
    for other in (bob.get(f"/games/{uid}?lang=en"), api.app.test_client().get(f"/games/{uid}")):
        assert other.status_code == 200
        for words in hidden:
            assert words not in other.text
        assert "planned" in other.text
        for card in ann_hand:
            assert f'data-card="{card}"' not in other.text
    bob_page = bob.get(f"/games/{uid}")
    assert "Rozstaw swoich 5 asystentów" in bob_page.text
    revealed = plan_form(bob, uid, {"F": 5})
    assert revealed.status_code == 303
    after = state(api, uid, 0)["view"]
    assert after["phase"] == "convoy"
    assert after["crews"]["french"]["assistants"] == {"P": 1, "M": 2, "S": 0, "F": 2}
    convoy = ann.get(f"/games/{uid}")
    assert "Plan: 1 pathfinder, 2 mechanics, 2 funding" in convoy.text  # the log's reveal
    assert "P1" in convoy.text and "F2" in convoy.text


def test_the_polish_page_and_the_convoy_composer(api: Api) -> None:
    creator = api.app.test_client()
    uid = create_on_new(api, creator, variant="leaders")
    ann, bob = join_all(api, creator, uid)
    play_bivouac(api, uid, [ann, bob])
    assert plan_form(ann, uid, {"M": 3, "F": 2}).status_code == 303
    assert plan_form(bob, uid, {"M": 2, "S": 1, "F": 2}).status_code == 303
    polish = bob.get(f"/games/{uid}")
    assert 'lang="pl"' in polish.text or "Ekipa belgijska" in polish.text
    assert "Ekipa francuska" in polish.text and "Tura 1" in polish.text
    acting = state(api, uid)["game"]["to_act"]
    assert acting
    browser = {0: ann, 1: bob}.get(acting[0])
    if browser is not None:
        page = browser.get(f"/games/{uid}?lang=pl")
        assert "Mechanik: jazda" in page.text or "Twoja sekwencja konwoju" in page.text
        english = browser.get(f"/games/{uid}?lang=en")
        assert "Mechanic: drive (up to 5 spaces)" in english.text
    spectator = api.app.test_client().get(f"/games/{uid}?lang=pl")
    assert spectator.status_code == 200 and "Ekipy" not in spectator.text.split("<main")[0]
    assert "konwój" in spectator.text


def test_the_log_and_replay_pages(api: Api) -> None:
    creator = api.app.test_client()
    uid = create_on_new(api, creator)
    ann, bob = join_all(api, creator, uid)
    play_bivouac(api, uid, [ann, bob])
    log = ann.get(f"/games/{uid}/log")
    assert log.status_code == 200
    assert "Take the " in log.text  # the game's words
    assert re.search(r"take [a-z\-]+", log.text)  # beside the notation


def test_a_plan_sealed_in_chromium(live_server: Any, browser: Any) -> None:
    """A player fills in the plan form in a real browser and sees the sealed page; the game
    page in planning, sealed and in the convoy is saved as screenshots in /tmp."""
    svc = live_server.service
    created = svc.create_game(
        rules_name="great-race", name="Chromium safari", seed=5,
        seats=[{"email": "ann@example.com", "name": "Ann", "titans": ["french"]},
               {"email": "bob@example.com", "name": "Bob", "titans": ["english"]},
               {"bot": True, "titans": ["italian"]}])
    uid = created["game"]
    ann_invite, bob_invite = (i["invite_token"] for i in created["invitations"])
    svc.accept(bob_invite)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/join/{ann_invite}")
        page.click("form[method=post] button[type=submit]")
        page.wait_for_url(f"**/games/{uid}")
        svc.start(uid, created["creator_token"])
        for _ in range(6):  # the bivouac, answered through the service
            body = svc.state(uid, None)
            if body["view"]["phase"] != "bivouac":
                break
            seat = body["game"]["to_act"][0]
            options = svc.options(uid, seat)
            svc.submit(uid, seat, options["seq"], options["options"][0])
        page.goto(f"{live_server.url}/games/{uid}")
        page.fill("input[name=count_P]", "1")
        page.fill("input[name=count_M]", "2")
        page.fill("input[name=count_F]", "2")
        assert page.locator("#plan-sum").inner_text() == "5 of 5 assistants placed"
        page.screenshot(path="/tmp/greatrace-planning.png", full_page=True)
        page.click("#plan-send")
        page.wait_for_selector("#sealed")
        assert "Plan: 1 pathfinder, 2 mechanics, 2 funding" in page.locator("#sealed").inner_text()
        assert "Waiting for Bob to plan their assistants." in page.content()
        assert page.locator("input[name=count_P]").count() == 0
        page.screenshot(path="/tmp/greatrace-sealed.png", full_page=True)
        options = svc.options(uid, 1)
        svc.submit(uid, 1, options["seq"], "plan M3 F2")
        page.goto(f"{live_server.url}/games/{uid}")
        assert page.locator("#crews .assistants").first.inner_text().strip() != ""
        page.screenshot(path="/tmp/greatrace-convoy.png", full_page=True)
    finally:
        context.close()


def heading_row(page: str) -> list[str]:
    """The headings of the page's games table."""
    head = re.search(r'<table class="games">\s*<thead><tr>(.*?)</tr></thead>', page, re.S)
    assert head, page
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in head.group(1).split("</th>")]


def test_the_pages_of_a_great_race_speak_of_crews(api: Api) -> None:
    """No Titan Race words on a Great Race's pages: the resign line, My games, and the clock's
    out-of-turn hours on /new speak of crews and dangers, in English and Polish."""
    new_page = api.app.test_client().get("/new?game=great-race").text
    assert "pirates" not in new_page and "a reaction window" not in new_page
    assert "avoiding a DANGER another crew played" in new_page
    assert "a reaction window, pirates" in api.app.test_client().get("/new?game=titan-race").text
    creator = api.app.test_client()
    uid = create_on_new(api, creator)
    ann, bob = join_all(api, creator, uid)
    english = ann.get(f"/games/{uid}").text
    assert "Resign: the computer plays your crew from now on." in english
    assert "Titans" not in english
    polish = bob.get(f"/games/{uid}").text
    assert "Poddaj się: od teraz twoją ekipą gra komputer." in polish
    assert "Tytan" not in polish
    games = ann.get("/games").text
    assert "Crew" in heading_row(games) and "Titan" not in heading_row(games)
    assert "French crew" in games
    assert "Ekipa" in heading_row(bob.get("/games?lang=pl").text)


def test_new_says_the_great_races_own_seat_range(api: Api) -> None:
    creator = api.app.test_client()
    page = creator.get("/new?game=great-race")
    form = {"csrf_token": token_of(page.text), "game": "great-race", "circuit0": "alger",
            "deadline_hours": "0", **{f"seat{i}_kind": "computer" for i in range(5)}}
    refused = creator.post("/new", data=form)
    assert refused.status_code == 400
    assert "a game has 2 to 4 seats" in refused.text
    assert "2 to 6" not in refused.text
