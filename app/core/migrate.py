"""Database migrations (Alembic) driven from Python: the schema lives in ``migrations/``.

There is no alembic.ini: :func:`alembic_config` builds the configuration in code, with the
database URL set programmatically, so the same migrations serve the CLI, the tests and the
server.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from app.core.data import data_folder
from app.core.db import make_engine


def migrations_folder() -> Path:
    """The Alembic scripts: ``migrations/`` of the checkout, or the copy a wheel carries."""
    folder = data_folder("migrations")
    if not (folder / "env.py").is_file():
        raise FileNotFoundError(f"the migrations folder has no env.py: {folder}")
    return folder


def _scripts_config() -> Config:
    """An Alembic configuration that knows only where the scripts are."""
    config = Config()
    config.set_main_option("script_location", str(migrations_folder()))
    config.set_main_option("path_separator", "os")
    return config


def scripts() -> ScriptDirectory:
    """The migration scripts, to walk their revisions."""
    return ScriptDirectory.from_config(_scripts_config())


def alembic_config(url: str) -> Config:
    """An Alembic configuration for the database at ``url``."""
    config = _scripts_config()
    # Config values go through ConfigParser interpolation: escape '%' (percent-encoded
    # passwords in URLs).
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Migrate the database at ``url`` forward to ``revision`` (a no-op when already there)."""
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    """Migrate the database at ``url`` back to ``revision``; ``base`` drops every table."""
    command.downgrade(alembic_config(url), revision)


def current(url: str) -> str | None:
    """The revision the database at ``url`` is at, or None when it has never been migrated."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def head() -> str | None:
    """The newest revision in the migrations folder."""
    return scripts().get_current_head()
