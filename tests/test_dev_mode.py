"""Outside production (issue 36): no published key, no listening beyond this computer, and admin
sessions that end with their admin token.

The development key used to be a constant in the source, so anyone could sign a session cookie
``{"admin": true}`` for any development server and read every hand on ``/admin/replay``. Now
each installation makes its own key; ``titanpost serve`` outside production mode answers on
loopback alone; and an admin session holds a keyed hash of the admin token it signed in with,
checked on every request, so a cookie that merely says "admin", or one from before the token
changed, opens nothing.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.sessions import SecureCookieSessionInterface
from flask.testing import FlaskClient

from app.core.config import (
    PUBLISHED_SECRETS,
    SECRET_FILE,
    ConfigError,
    Settings,
    installation_secret,
)
from cli.server import is_loopback
from tests.apifixtures import ADMIN_TOKEN, Api, csrf_token, dispose, make_api, run_titanpost
from tests.netutil import free_port

pytest_plugins = ["tests.apifixtures"]


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user data folder (the installation's key, the default database) inside the test's
    folder."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "data" / "titanpost"


# ---------------------------------------------------------------- the installation's key


def test_development_mode_makes_a_key_of_its_own_and_keeps_it(data_home: Path) -> None:
    key = Settings.from_env({}).secret_key
    assert key not in PUBLISHED_SECRETS and len(key) == 64 and int(key, 16)
    kept = data_home / SECRET_FILE
    assert kept.read_text().strip() == key
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600  # its owner's alone
    # every later process of the installation signs with the same key (test mode too)
    assert Settings.from_env({"TITANPOST_ENV": "test"}).secret_key == key
    assert [p.name for p in data_home.iterdir() if p.name.startswith(".")] == []


def test_another_installation_has_another_key(tmp_path: Path) -> None:
    assert installation_secret(tmp_path / "one") != installation_secret(tmp_path / "two")


def test_processes_making_the_key_at_once_agree(tmp_path: Path) -> None:
    found: list[str] = []
    threads = [threading.Thread(target=lambda: found.append(installation_secret(tmp_path)))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 8 and len(set(found)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [SECRET_FILE]


def test_a_damaged_key_file_is_a_clear_error(data_home: Path) -> None:
    data_home.mkdir(parents=True)
    (data_home / SECRET_FILE).write_text("\n")
    with pytest.raises(ConfigError, match="damaged: delete it"):
        Settings.from_env({})


def test_a_given_key_is_used_and_nothing_is_made(data_home: Path) -> None:
    given = "a" * 40
    assert Settings.from_env({"TITANPOST_SECRET_KEY": given}).secret_key == given
    assert not (data_home / SECRET_FILE).exists()


@pytest.mark.parametrize("published", sorted(PUBLISHED_SECRETS))
def test_production_refuses_a_published_key(published: str) -> None:
    with pytest.raises(ConfigError, match="TITANPOST_SECRET_KEY"):
        Settings.from_env({"TITANPOST_ENV": "production", "TITANPOST_SECRET_KEY": published})


# ---------------------------------------------------------------- serve: loopback alone


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("LocalHost", True),
    ("0.0.0.0", False), ("::", False), ("", False), ("192.168.1.20", False),
    ("10.0.0.1", False), ("titanpost.example.org", False), ("localhost.example.org", False),
    ("::ffff:192.168.1.20", False),
])
def test_which_hosts_are_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("mode", ["development", "test"])
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "titanpost.example.org"])
def test_serve_outside_production_refuses_a_host_beyond_loopback(
    titanpost: str, tmp_path: Path, mode: str, host: str
) -> None:
    database = tmp_path / "never.db"
    result = run_titanpost(titanpost, "serve", "--host", host, "--port", str(free_port()),
                           database_url=f"sqlite:///{database}", timeout=30,
                           TITANPOST_ENV=mode, XDG_DATA_HOME=os.environ["XDG_DATA_HOME"],
                           HOME=os.environ["HOME"])
    assert result.returncode != 0
    assert f"{host} is not a loopback address" in result.stderr
    assert "TITANPOST_ENV=production" in result.stderr and "Traceback" not in result.stderr
    assert not database.exists()  # refused before anything was touched


def test_the_refusal_speaks_polish(titanpost: str, tmp_path: Path) -> None:
    result = run_titanpost(titanpost, "serve", "--host", "0.0.0.0", "--port", str(free_port()),
                           database_url=f"sqlite:///{tmp_path / 'never.db'}", timeout=30,
                           LANGUAGE="pl", XDG_DATA_HOME=os.environ["XDG_DATA_HOME"],
                           HOME=os.environ["HOME"])
    assert result.returncode != 0
    assert "0.0.0.0 nie jest adresem pętli zwrotnej" in result.stderr, result.stderr


# ---------------------------------------------------------------- admin sessions


@pytest.fixture
def site(migrated_database_url: str) -> Iterator[Api]:
    """The app in development mode, its key the installation's."""
    made = make_api(migrated_database_url, TITANPOST_ENV="development")
    yield made
    dispose(made)


def _game(site: Api) -> str:
    created = site.service.create_game(seats=[{"email": "ann@example.com"}, {"bot": True},
                                              {"bot": True}], seed=5)
    site.service.accept(created["invitations"][0]["invite_token"])
    site.service.start(created["game"], created["creator_token"])
    return str(created["game"])


def _signed_in(app: Flask, token: str = ADMIN_TOKEN) -> FlaskClient:
    client = app.test_client()
    page = client.get("/admin/login")
    answer = client.post("/admin/login", data={"csrf_token": csrf_token(page.text),
                                               "token": token, "next": "/admin"})
    assert answer.status_code == 303, answer.text
    return client


def _is_admin(client: FlaskClient, uid: str) -> bool:
    answer = client.get(f"/admin/replay/{uid}")
    assert answer.status_code in (200, 302)
    return answer.status_code == 200 and "/admin/login" not in answer.headers.get("Location", "")


def _cookie(secret: str, data: dict[str, object]) -> str:
    """A session cookie holding ``data``, signed with ``secret`` as Flask signs it."""
    forger = Flask("forger")
    forger.secret_key = secret
    serializer = SecureCookieSessionInterface().get_signing_serializer(forger)
    assert serializer is not None
    return str(serializer.dumps(data))


def test_a_cookie_signed_with_the_published_key_opens_nothing(site: Api) -> None:
    uid = _game(site)
    for published in PUBLISHED_SECRETS:
        client = site.app.test_client()
        client.set_cookie("session", _cookie(published, {"admin": True}))
        assert not _is_admin(client, uid)


def test_a_session_that_merely_says_admin_opens_nothing(site: Api) -> None:
    """Even signed with the server's own key (a cookie made before admin sessions held the
    token's hash): only the hash of the current token counts."""
    uid = _game(site)
    for claim in (True, "1", "admin", ADMIN_TOKEN, None):
        client = site.app.test_client()
        client.set_cookie("session", _cookie(site.app.secret_key or "", {"admin": claim}))
        assert not _is_admin(client, uid)


def test_an_admin_session_keeps_no_token_and_ends_when_the_token_changes(site: Api) -> None:
    uid = _game(site)
    client = _signed_in(site.app)
    assert _is_admin(client, uid)
    cookie = client.get_cookie("session")
    assert cookie is not None
    session = SecureCookieSessionInterface().get_signing_serializer(site.app)
    assert session is not None
    kept = session.loads(cookie.value)["admin"]
    assert ADMIN_TOKEN not in cookie.value and ADMIN_TOKEN not in str(kept)
    # the server restarted with the same token: the session goes on
    again = make_api(site.url, TITANPOST_ENV="development")
    try:
        same = again.app.test_client()
        same.set_cookie("session", cookie.value)
        assert _is_admin(same, uid)
    finally:
        dispose(again)
    # the server restarted with another token: the session is over, the new token signs in
    changed = make_api(site.url, TITANPOST_ENV="development", TITANPOST_ADMIN_TOKEN="t" * 40)
    try:
        old = changed.app.test_client()
        old.set_cookie("session", cookie.value)
        assert not _is_admin(old, uid)
        assert _is_admin(_signed_in(changed.app, "t" * 40), uid)
    finally:
        dispose(changed)
    # the admin pages turned off: no session is the admin's
    off = make_api(site.url, TITANPOST_ENV="development", TITANPOST_ADMIN_TOKEN="")
    try:
        closed = off.app.test_client()
        closed.set_cookie("session", cookie.value)
        assert not _is_admin(closed, uid)
    finally:
        dispose(off)
