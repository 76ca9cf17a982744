"""One translation mechanism for every page, mail, link page and board picture: gettext style.

The English text is the message id. :func:`translate` looks it up in the language's catalogue,
a standard gettext ``.po`` file (``app/locale/<lang>/LC_MESSAGES/messages.po``) read with Babel,
and fills its ``{fields}`` with ``str.format``. :func:`translate_plural` picks the plural form of
the language (Polish has three: 1 karta, 2 karty, 5 kart) from the catalogue's ``Plural-Forms``;
:func:`translate` with ``context=`` tells apart one English word used two ways (``msgctxt``).

A translator adds a language by adding its ``.po`` file (``titanpost i18n init <lang>``): the
server speaks every language that has a catalogue, with no Python changes. Text missing from a
catalogue falls back to English, and is noted in :data:`MISSED` so that the tests fail on it.

Message ids are found by Babel's extractor (``titanpost i18n extract``, see
:mod:`app.core.i18n_catalogue`): the literal message arguments of ``translate``,
``translate_plural``, ``tr`` and ``tr_plural`` calls in code and templates. A message chosen at run
time (a word from a table, a card's name) is marked where it is written with :func:`N_`, or
:func:`NC_` for a message with a context, so that the extractor finds it there."""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path
from typing import Any, Final

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

LOCALE_DIR: Final = Path(__file__).resolve().parent.parent / "locale"
DOMAIN: Final = "messages"


def catalogue_path(lang: str, locale_dir: Path | None = None) -> Path:
    return (locale_dir or LOCALE_DIR) / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def catalogued_languages(locale_dir: Path = LOCALE_DIR) -> tuple[str, ...]:
    """The languages that have a catalogue under ``locale_dir``."""
    if not locale_dir.is_dir():
        return ()
    return tuple(sorted(folder.name for folder in locale_dir.iterdir()
                        if catalogue_path(folder.name, locale_dir).is_file()))


LANGUAGES: Final = ("en", *(code for code in catalogued_languages() if code != "en"))
"""English (the message ids themselves) and every language with a catalogue."""

MISSED: Final[set[tuple[str, str | None, str]]] = set()
"""(language, context, message id) of every message asked for in a language whose catalogue
lacks it since the set was last cleared: the tests fail on any (see ``tests/conftest.py``)."""


def N_(text: str) -> str:
    """Marks ``text`` as a message id for the extractor where it is written (a table of
    words); it is translated later, where it is shown."""
    return text


def NC_(context: str, text: str) -> str:
    """:func:`N_` for a message id that is translated with ``context=context``."""
    return text


def language_name(code: str) -> str:
    """The language's own name for itself ("English", "polski"), from Babel's locale data."""
    from babel import Locale, UnknownLocaleError

    try:
        return str(Locale.parse(code).get_display_name(code) or code)
    except (ValueError, UnknownLocaleError):
        return code


def language(lang: str | None) -> str:
    """``lang`` when it is a language we speak, else English."""
    return lang if lang in LANGUAGES else "en"


@cache
def catalogue(lang: str) -> Catalog | None:
    """The ``.po`` catalogue of ``lang`` as Babel reads it (None for English or no file)."""
    path = catalogue_path(lang)
    if lang == "en" or not path.exists():
        return None
    with path.open("rb") as po:
        return read_po(po, locale=lang, domain=DOMAIN)


@cache
def _translations(lang: str) -> Translations | None:
    found = catalogue(lang)
    if found is None:
        return None
    compiled = io.BytesIO()
    write_mo(compiled, found)
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


def _format(text: str, values: dict[str, Any]) -> str:
    return text.format(**values) if values else text


def translate(lang: str | None, text: str, /, *, context: str | None = None,
              **values: Any) -> str:
    """``text`` (English, the message id) in ``lang``, its ``{fields}`` filled from ``values``."""
    found = _translations(language(lang))
    if found is not None:
        key = f"{context}\x04{text}" if context else text
        if key not in found._catalog:
            MISSED.add((str(lang), context, text))
        else:
            text = str(found._catalog[key])
    return _format(text, values)


def translate_plural(lang: str | None, singular: str, plural: str, n: int, /,
                     **values: Any) -> str:
    """The form of ``singular``/``plural`` for ``n`` in ``lang`` (``{n}`` is filled too)."""
    found = _translations(language(lang))
    if found is None:
        text = singular if n == 1 else plural
    else:
        if (singular, 0) not in found._catalog:
            MISSED.add((str(lang), None, singular))
        text = found.ngettext(singular, plural, n)
    return _format(text, {"n": n, **values})


def message_ids(lang: str) -> set[tuple[str, str | None]]:
    """Every (message id, context) the catalogue of ``lang`` translates (for the tests)."""
    found = catalogue(lang)
    if found is None:
        return set()
    return {(str(m.id if isinstance(m.id, str) else m.id[0]), m.context) for m in found if m.id}
