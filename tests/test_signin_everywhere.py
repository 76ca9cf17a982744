"""One player per address, on every device (issue 38): signed in by mail on the command line
(``titanpost login EMAIL``), a player plays every seat of that address, however it was joined
(here on the web): ``show``, ``options`` and ``play`` find the game by its id or name, the client
fetching a seat token of its own (POST /api/account/games/<id>/seat); another address's game
stays out of reach, with the same answer as a game that does not exist."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli_player import Cli
from tests.test_signin import ANN, BASE, Site, _games, served, site

__all__ = ["served", "site"]  # (the fixtures, used by name)
pytest_plugins = ["tests.apifixtures"]


def signed_in(site: Site, url: str, tmp_path: Path) -> Cli:
    """Ann's command line signed in by mail (the link asked for, then pasted)."""
    cli = Cli(tmp_path)
    cli("login", ANN, "--server", url, input="\n", code=None)
    cli("login", ANN, "--server", url, input=f"{BASE}/signin/{site.mailed_token(ANN)}\n")
    return cli


def test_a_player_signed_in_by_mail_plays_their_seats_from_the_command_line(
        served: tuple[Site, str], tmp_path: Path) -> None:
    site, url = served
    games = _games(site)
    cli = signed_in(site, url, tmp_path)
    assert not json.loads(cli.config.read_text())["games"]  # (signed in: no seat kept yet)
    shown = cli.json("show", games["titan"][:8])["state"]
    assert shown["game"]["game"] == games["titan"] and shown["you"] is not None
    assert cli.json("show", "around the world")["state"]["game"]["game"] == games["great"]
    kept = json.loads(cli.config.read_text())["games"]
    assert set(kept) == {games["titan"], games["great"]}
    service = site.app.extensions["titanpost.service"]
    position = kept[games["titan"]]["position"]
    state = service.state(games["titan"], None)
    if position in state["game"]["to_act"]:
        option = service.options(games["titan"], position)["options"][0]
        played = cli("play", games["titan"][:8], option)
        assert played.exit_code == 0, played.output
        assert service.state(games["titan"], None)["seq"] > state["seq"]
    else:
        assert cli("options", games["titan"][:8]).exit_code == 0
    refused = cli("show", games["other"][:8], code=1)
    assert "no game of yours matches" in refused.output


def test_the_seat_token_is_given_only_for_the_addresss_own_seat(served: tuple[Site, str],
                                                                 tmp_path: Path) -> None:
    site, url = served
    games = _games(site)
    cli = signed_in(site, url, tmp_path)
    token = json.loads(cli.config.read_text())["accounts"][url]["token"]
    client = site.client()
    auth = {"Authorization": f"Bearer {token}"}
    own = client.post(f"/api/account/games/{games['titan']}/seat", headers=auth)
    assert own.status_code == 201 and own.get_json()["api_token"]
    me = client.get("/api/me", headers={"Authorization": f"Bearer {own.get_json()['api_token']}"})
    assert me.get_json()["game"] == games["titan"]
    other = client.post(f"/api/account/games/{games['other']}/seat", headers=auth)
    missing = client.post(f"/api/account/games/{'0' * 32}/seat", headers=auth)
    assert other.status_code == missing.status_code == 404
    assert client.post(f"/api/account/games/{games['titan']}/seat").status_code == 401
