"""``titanpost i18n``: the translators' commands (extract, update, init, check).

They read the source checkout's code and templates (``babel.cfg``) and write the catalogues
under ``app/locale``; see :mod:`app.core.i18n_catalogue`.
"""

from __future__ import annotations

from pathlib import Path

import click

from app.core import i18n_catalogue as catalogues
from app.core.i18n import LANGUAGES, catalogue_path
from cli.speech import N_, tr


def _languages(given: tuple[str, ...]) -> list[str]:
    return list(given) or [code for code in LANGUAGES if code != "en"]


@click.group(help=N_(
        "Keep the translations (gettext catalogues) in step with the code and templates."))
def i18n() -> None:
    if not catalogues.MAPPING.is_file():
        raise click.ClickException(tr(
            "{path} is missing: the translators' commands read the code and templates of a "
            "source checkout (git clone), not of an installed package", path=catalogues.MAPPING))


@i18n.command("extract", help=N_(
        "Write every message id of the code and templates to the catalogue template "
        "(.pot)."))
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path),
              default=catalogues.TEMPLATE, show_default=True, help=N_("Where to write the .pot."))
def extract(output: Path) -> None:
    template = catalogues.extract()
    catalogues.write(template, output)
    click.echo(tr("{count} messages written to {path}", count=len(template), path=output))


@i18n.command("update", help=N_(
        "Add new message ids to each language's catalogue (all by default), untranslated."))
@click.argument("languages", nargs=-1)
def update(languages: tuple[str, ...]) -> None:
    template = catalogues.extract()
    for lang in _languages(languages):
        catalogue = catalogues.update(lang, template)
        catalogues.write(catalogue, catalogue_path(lang))
        left = len(catalogues.problems(lang, template))
        click.echo(tr("{language}: {path} updated, {count} messages to translate",
                      language=lang, path=catalogue_path(lang), count=left))


@i18n.command("init", help=N_(
        "Start the catalogue of a new language; the server speaks it once it is "
        "translated."))
@click.argument("language")
@click.option("--locale-dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help=N_("Write it under this folder instead of app/locale."))
def init(language: str, locale_dir: Path | None) -> None:
    path = catalogue_path(language, locale_dir)
    if path.exists():
        raise click.ClickException(tr("{path} exists: use {command}", path=path,
                                      command=repr("titanpost i18n update " + language)))
    try:
        catalogue = catalogues.new_catalogue(language, catalogues.extract())
    except ValueError as exc:
        raise click.ClickException(tr("{language} is not a language Babel knows: {problem}",
                                      language=repr(language), problem=exc)) from None
    catalogues.write(catalogue, path)
    click.echo(tr("{path} written: {count} messages to translate", path=path,
                  count=len(catalogue)))


@i18n.command("check", help=N_(
        "List every message a catalogue does not translate; exit 1 if there is one."))
@click.argument("languages", nargs=-1)
def check(languages: tuple[str, ...]) -> None:
    template = catalogues.extract()
    failed = False
    for lang in _languages(languages):
        found = catalogues.problems(lang, template)
        for problem in found:
            click.echo(f"{lang}: {problem}")
        failed = failed or bool(found)
        click.echo(tr("{language}: {count} of {total} messages translated", language=lang,
                      count=len(template) - len(found), total=len(template)))
    if failed:
        raise SystemExit(1)
