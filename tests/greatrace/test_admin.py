"""The admin's replay of a Great Race, on SQLite and PostgreSQL: the replay page steps through
a computer race with its board picture at every step (the admin may see everything), and the
admin API's replay and state-at answers hold every step; players cannot reach either."""

from __future__ import annotations

import re

from tests.apifixtures import ADMIN_TOKEN, Api, bearer

pytest_plugins = ["tests.apifixtures"]


def computer_race(api: Api) -> str:
    created = api.create([{"bot": True}, {"bot": True}, {"bot": True}], game="great-race",
                         seed=3)
    table = api.accept_all(created)
    api.start(table)
    assert api.state(table.uid)["game"]["status"] == "finished"
    return table.uid


def csrf(api: Api, path: str) -> str:
    page = api.client.get(path).get_data(as_text=True)
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found is not None
    return found.group(1)


def test_the_admin_replays_a_great_race(api: Api) -> None:
    uid = computer_race(api)
    assert api.client.get(f"/admin/replay/{uid}").status_code == 302  # not signed in
    signed = api.client.post("/admin/login", data={
        "csrf_token": csrf(api, "/admin/login"), "token": ADMIN_TOKEN})
    assert signed.status_code == 303
    steps = api.client.get(f"/api/admin/games/{uid}/replay", headers=bearer(ADMIN_TOKEN))
    assert steps.status_code == 200
    count = len(steps.get_json()["steps"])
    assert count > 20
    for step in (0, count // 2, count - 1):
        page = api.client.get(f"/admin/replay/{uid}?step={step}")
        assert page.status_code == 200
        html = page.get_data(as_text=True)
        assert "<svg" in html and "Alger" in html
    last = api.client.get(f"/api/admin/games/{uid}/states/{count - 1}",
                          headers=bearer(ADMIN_TOKEN)).get_json()
    assert last["view"]["phase"] == "over" and last["view"]["winner"]
    assert all(isinstance(c["hand"], list) for c in last["view"]["crews"].values())
    # a player's or nobody's token reaches neither
    assert api.client.get(f"/api/admin/games/{uid}/replay").status_code == 401
