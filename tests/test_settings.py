"""Settings from TITANPOST_* variables: embedded defaults, production checks, URL spellings."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.config import PUBLISHED_SECRETS, SECRET_FILE, ConfigError, Settings
from tests.apifixtures import run_titanpost
from tests.netutil import free_port

GOOD_SECRET = "4f1c0e8a9b7d6c5e4f3a2b1c0d9e8f7a"


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep the default SQLite file (platformdirs' user data folder) inside the test's folder."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "data"


def test_defaults(data_home: Path) -> None:
    settings = Settings.from_env({})
    expected = data_home / "titanpost" / "titanpost.db"
    assert settings.database_url == f"sqlite:///{expected}"
    assert expected.parent.is_dir()  # the folder is made ready for the file
    assert settings.env == "development" and not settings.production
    assert settings.secret_key == (data_home / "titanpost" / SECRET_FILE).read_text().strip()
    assert settings.base_url == "http://127.0.0.1:5000"
    assert settings.admin_token is None
    assert settings.max_body_bytes == 64 * 1024
    assert settings.snapshot_every == 10


def test_every_setting_is_read(tmp_path: Path) -> None:
    settings = Settings.from_env({
        "TITANPOST_ENV": " Production ",
        "TITANPOST_SECRET_KEY": f"  {GOOD_SECRET}  ",
        "TITANPOST_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}",
        "TITANPOST_BASE_URL": "https://titan.example.org/",
        "TITANPOST_ADMIN_TOKEN": " admin ",
        "TITANPOST_MAX_BODY_BYTES": "1000",
        "TITANPOST_SNAPSHOT_EVERY": "3",
    })
    assert settings.production and settings.env == "production"
    assert settings.secret_key == GOOD_SECRET
    assert settings.database_url == f"sqlite:///{tmp_path / 'x.db'}"
    assert settings.base_url == "https://titan.example.org"
    assert settings.admin_token == "admin"
    assert (settings.max_body_bytes, settings.snapshot_every) == (1000, 3)
    assert Settings.from_env({"TITANPOST_ADMIN_TOKEN": "   "}).admin_token is None


def test_production_without_a_secret_key_is_a_startup_error() -> None:
    for environ in ({"TITANPOST_ENV": "production"},
                    {"TITANPOST_ENV": "production", "TITANPOST_SECRET_KEY": "   "}):
        with pytest.raises(ConfigError, match="TITANPOST_SECRET_KEY"):
            Settings.from_env(environ)


@pytest.mark.parametrize("secret", [*sorted(PUBLISHED_SECRETS), "short", "x" * 15])
def test_production_refuses_the_development_or_a_short_key(secret: str) -> None:
    with pytest.raises(ConfigError, match="TITANPOST_SECRET_KEY"):
        Settings.from_env({"TITANPOST_ENV": "production", "TITANPOST_SECRET_KEY": secret})
    # Outside production the same key is accepted.
    assert Settings.from_env({"TITANPOST_SECRET_KEY": secret}).secret_key == secret


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ConfigError, match="TITANPOST_ENV"):
        Settings.from_env({"TITANPOST_ENV": "staging"})


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("postgres://u:p@db.example.org:5433/titan", "postgresql+psycopg://u:p@db.example.org:5433/titan"),
        ("postgresql://u@localhost/titan", "postgresql+psycopg://u@localhost/titan"),
        ("postgresql+psycopg://u@localhost/titan", "postgresql+psycopg://u@localhost/titan"),
        ("  postgres://localhost/titan  ", "postgresql+psycopg://localhost/titan"),
        ("sqlite:////srv/titan.db", "sqlite:////srv/titan.db"),
    ],
)
def test_postgres_urls_are_normalised(given: str, expected: str) -> None:
    assert Settings.from_env({"TITANPOST_DATABASE_URL": given}).database_url == expected


@pytest.mark.parametrize("name", ["TITANPOST_MAX_BODY_BYTES", "TITANPOST_SNAPSHOT_EVERY"])
def test_a_number_that_is_not_one_is_a_config_error_naming_it(name: str) -> None:
    with pytest.raises(ConfigError, match=name):
        Settings.from_env({name: "64k"})


def test_serve_in_production_without_a_key_exits_with_the_message(
    titanpost: str, tmp_path: Path
) -> None:
    result = run_titanpost(
        titanpost, "serve", "--port", str(free_port()),
        database_url=f"sqlite:///{tmp_path / 'never.db'}",
        timeout=20, TITANPOST_ENV="production",
        XDG_DATA_HOME=str(tmp_path / "data"), HOME=str(tmp_path / "home"),
    )
    assert result.returncode != 0
    assert "TITANPOST_SECRET_KEY" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "never.db").exists()  # it stopped before touching the database


def test_database_pool_sizes_are_settings() -> None:
    from app.core.config import ConfigError, Settings
    from app.listeners import build_service

    env = {"TITANPOST_DATABASE_URL": "postgresql://postgres@127.0.0.1/postgres"}
    default = Settings.from_env(env)
    assert (default.db_pool_size, default.db_max_overflow) == (10, 20)
    small = Settings.from_env(env | {"TITANPOST_DB_POOL_SIZE": "3",
                                     "TITANPOST_DB_MAX_OVERFLOW": "0"})
    pool = build_service(small).engine.pool
    assert pool.size() == 3 and pool._max_overflow == 0  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="TITANPOST_DB_POOL_SIZE"):
        Settings.from_env(env | {"TITANPOST_DB_POOL_SIZE": "0"})
