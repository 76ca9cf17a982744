"""The translators' side of :mod:`app.core.i18n`: extracting message ids from the code and the
templates, keeping every language's catalogue in step with them, and checking a catalogue.

``babel.cfg`` (in the source checkout) says which files are read and how; :data:`KEYWORDS` says
which calls name a message. ``titanpost i18n extract|update|init|check`` runs these functions,
and the tests call :func:`problems` so that any message a catalogue lacks fails them.

This needs the source checkout (the code and templates to read); the server itself only reads
the ``.po`` files.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po, write_po

from app.core.i18n import DOMAIN, LOCALE_DIR, catalogue_path

ROOT: Final = Path(__file__).resolve().parents[2]
MAPPING: Final = ROOT / "babel.cfg"
TEMPLATE: Final = LOCALE_DIR / f"{DOMAIN}.pot"
PROJECT: Final = "Titan Post"

KEYWORDS: Final[dict[str, tuple[int | tuple[int, str], ...] | None]] = {
    "translate": (2,),               # translate(lang, "text", **values)
    "translate_plural": (2, 3),      # translate_plural(lang, "one", "many", n)
    "tr": None,                      # tr("text") in pages, templates and mail templates
    "tr_plural": (1, 2),             # tr_plural("one", "many", n)
    "N_": None,                      # N_("text"): a word in a table, translated where shown
    "NC_": ((1, "c"), 2),            # NC_("context", "text")
    "tr_context": ((1, "c"), 2),     # tr_context("context", "text") on the command line
}
"""The calls whose literal arguments are message ids, in Babel's keyword notation."""

COMMENT_TAGS: Final = ("Translators:",)


@dataclass(frozen=True)
class Problem:
    """One thing a catalogue gets wrong: ``what`` in words, of the message ``message``."""

    what: str
    message: str
    context: str | None
    where: str

    def __str__(self) -> str:
        context = f" [{self.context}]" if self.context else ""
        return f"{self.what}: {self.message!r}{context} ({self.where})"


def extract(root: Path = ROOT) -> Catalog:
    """Every message id of the code and templates under ``root``, as a catalogue template."""
    with MAPPING.open(encoding="utf-8") as mapping:
        method_map, options_map = parse_mapping_cfg(mapping, str(MAPPING))  # type: ignore[no-untyped-call]
    template = Catalog(project=PROJECT, domain=DOMAIN, charset="utf-8",
                       creation_date=datetime(2026, 1, 1, tzinfo=UTC))
    found = extract_from_dir(str(root), method_map, options_map, keywords=KEYWORDS,
                             comment_tags=COMMENT_TAGS, strip_comment_tags=True)
    for filename, lineno, message, comments, context in found:
        template.add(message, None, [(filename, lineno)], auto_comments=comments,
                     context=context)
    return template


def write(catalog: Catalog, path: Path) -> None:
    """``catalog`` as a ``.po``/``.pot`` file, wrapped at 100 columns like the code."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        write_po(out, catalog, width=100, sort_by_file=False, include_lineno=False)


def read(path: Path, lang: str) -> Catalog:
    with path.open("rb") as po:
        return read_po(po, locale=lang, domain=DOMAIN)


def update(lang: str, template: Catalog) -> Catalog:
    """The catalogue of ``lang`` brought in step with ``template``: new ids added untranslated,
    ids no longer used kept aside as obsolete (``#~``), translations kept."""
    catalog = read(catalogue_path(lang), lang)
    catalog.update(template, no_fuzzy_matching=True, update_header_comment=False)
    return catalog


def new_catalogue(lang: str, template: Catalog) -> Catalog:
    """A new language's catalogue: every id of ``template``, none translated yet, with the
    language's plural rule from Babel's locale data."""
    catalog = Catalog(locale=lang, project=PROJECT, domain=DOMAIN, charset="utf-8",
                      creation_date=template.creation_date)
    catalog.update(template, no_fuzzy_matching=True)
    return catalog


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def _texts(value: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def _where(message: Message) -> str:
    return ", ".join(f"{file}:{line}" for file, line in message.locations[:2]) or "-"


def _problems_of(message: Message, translated: Message | None) -> Iterable[Problem]:
    ids = _texts(message.id)
    name, where = ids[0], _where(message)
    if translated is None:
        yield Problem("not in the catalogue", name, message.context, where)
        return
    strings = _texts(translated.string)
    if not strings or not all(strings):
        yield Problem("not translated", name, message.context, where)
    elif translated.fuzzy:
        yield Problem("marked fuzzy (to be checked)", name, message.context, where)
    elif any(not _same_fields(text, ids) for text in strings):
        yield Problem("other {fields} than the English", name, message.context, where)


def _same_fields(text: str, ids: tuple[str, ...]) -> bool:
    """A translation names the English's fields; a plural form may leave out ``{n}`` (Polish
    "jedna karta" for "{n} card")."""
    english = set().union(*(_fields(one) for one in ids))
    mine = _fields(text)
    return mine <= english and (english - mine <= {"n"} if len(ids) > 1 else mine == english)


def problems(lang: str, template: Catalog | None = None,
             locale_dir: Path | None = None) -> list[Problem]:
    """What keeps ``lang``'s catalogue from translating every message of ``template`` (the
    extracted one by default): missing, untranslated or fuzzy entries, and ``{fields}`` that
    differ from the English."""
    template = template or extract()
    catalog = read(catalogue_path(lang, locale_dir), lang)
    found: list[Problem] = []
    for message in template:
        if message.id:
            found.extend(_problems_of(message, catalog.get(message.id, message.context)))
    return found


def unused(lang: str, template: Catalog | None = None) -> list[str]:
    """Entries of ``lang``'s catalogue that no code or template asks for any more."""
    template = template or extract()
    catalog = read(catalogue_path(lang), lang)
    return [_texts(m.id)[0] for m in catalog
            if m.id and template.get(m.id, m.context) is None]
