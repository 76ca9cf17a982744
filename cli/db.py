"""``titanpost db``: migrate the database (Alembic, see ``migrations/``).

The database is ``TITANPOST_DATABASE_URL`` (default: a SQLite file in the user's data folder),
or the ``--database-url`` given to a command.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click
from sqlalchemy.engine import make_url

from app.core import migrate
from app.core.config import ConfigError, Settings
from cli.speech import N_, tr

F = TypeVar("F", bound=Callable[..., Any])


def _database_url_option(func: F) -> F:
    return click.option(
        "--database-url",
        default=None,
        metavar="URL",
        help=N_("Database to migrate (default: TITANPOST_DATABASE_URL, else the SQLite default)."),
    )(func)


def _resolve_url(database_url: str | None) -> str:
    """The URL as the server would see it (postgres:// spellings normalised by Settings)."""
    environ = dict(os.environ)
    if database_url:
        environ["TITANPOST_DATABASE_URL"] = database_url
    try:
        return Settings.from_env(environ).database_url
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def _shown(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


@click.group(help=N_(
        "Create and migrate the database schema."))
def db() -> None:
    pass


@db.command("upgrade", help=N_(
        "Migrate the database forward (creating it from empty when new)."))
@click.option("--revision", default="head", show_default=True, help=N_("Target revision."))
@_database_url_option
def db_upgrade(revision: str, database_url: str | None) -> None:
    url = _resolve_url(database_url)
    migrate.upgrade(url, revision)
    click.echo(tr("{database}: at revision {revision}", database=_shown(url),
                  revision=migrate.current(url) or tr("none")))


@db.command("downgrade", help=N_(
        "Migrate the database back; the default, base, drops every table and all data."))
@click.option("--revision", default="base", show_default=True, help=N_("Target revision."))
@click.option("--yes", is_flag=True, help=N_("Confirm: downgrading drops tables and their data."))
@_database_url_option
def db_downgrade(revision: str, yes: bool, database_url: str | None) -> None:
    url = _resolve_url(database_url)
    if not yes:
        raise click.UsageError(tr("downgrading {database} to {revision} can destroy data: pass "
                                  "--yes to confirm", database=_shown(url), revision=revision))
    migrate.downgrade(url, revision)
    click.echo(tr("{database}: at revision {revision}", database=_shown(url),
                  revision=migrate.current(url) or tr("none (empty)")))


@db.command("current", help=N_(
        "Print the database's revision ('none' if never migrated) and whether it is the "
        "newest."))
@_database_url_option
def db_current(database_url: str | None) -> None:
    url = _resolve_url(database_url)
    revision = migrate.current(url)
    head = migrate.head()
    if revision is None:
        click.echo(tr("none (not migrated; head is {head})", head=head))
    elif revision == head:
        click.echo(tr("{revision} (head)", revision=revision))
    else:
        click.echo(tr("{revision} (head is {head}: run {command})", revision=revision,
                      head=head, command="titanpost db upgrade"))


if __name__ == "__main__":
    db()
