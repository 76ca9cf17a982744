"""One translation mechanism for every page, mail, link page and board picture: gettext style.

The English text is the message id. :func:`translate` looks it up in the language's catalogue,
a standard gettext ``.po`` file (``app/locale/<lang>/LC_MESSAGES/messages.po``) read with Babel,
and fills its ``{fields}`` with ``str.format``. :func:`translate_plural` picks the plural form of
the language (Polish has three: 1 karta, 2 karty, 5 kart) from the catalogue's ``Plural-Forms``;
:func:`translate` with ``context=`` tells apart one English word used two ways (``msgctxt``).

A translator adds a language by adding its ``.po`` file (and its code to :data:`LANGUAGES`):
no Python changes. Text missing from a catalogue falls back to English. Message ids are the
literal first arguments of ``translate``/``tr``/``_`` calls, so Babel's extractor can find them.
"""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path
from typing import Any, Final

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

LOCALE_DIR: Final = Path(__file__).resolve().parent / "locale"
DOMAIN: Final = "messages"
LANGUAGES: Final = ("en", "pl")
"""English (the message ids themselves) and every language with a catalogue."""


def language(lang: str | None) -> str:
    """``lang`` when it is a language we speak, else English."""
    return lang if lang in LANGUAGES else "en"


def catalogue_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


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
        text = str(found.pgettext(context, text) if context else found.gettext(text))
    return _format(text, values)


def translate_plural(lang: str | None, singular: str, plural: str, n: int, /,
                     **values: Any) -> str:
    """The form of ``singular``/``plural`` for ``n`` in ``lang`` (``{n}`` is filled too)."""
    found = _translations(language(lang))
    if found is None:
        text = singular if n == 1 else plural
    else:
        text = found.ngettext(singular, plural, n)
    return _format(text, {"n": n, **values})


def message_ids(lang: str) -> set[tuple[str, str | None]]:
    """Every (message id, context) the catalogue of ``lang`` translates (for the tests)."""
    found = catalogue(lang)
    if found is None:
        return set()
    return {(str(m.id if isinstance(m.id, str) else m.id[0]), m.context) for m in found if m.id}
