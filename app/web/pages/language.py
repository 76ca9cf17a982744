"""The language of a page: the one its view chose, else ``?lang=``, else the browser's
``Accept-Language``, else English; and its words in that language (through the catalogue of
:mod:`app.core.i18n`). What every page module and the game's words on pages (:mod:`.gamewords`)
share."""

from __future__ import annotations

from typing import Any

from flask import g, has_app_context, has_request_context, request

from app.core.i18n import LANGUAGES, translate, translate_plural
from app.web.browser_seats import browser_language


def lang() -> str:
    """The page's language: the one the view chose (``g.lang``), else ``?lang=``, else the
    browser's ``Accept-Language``, else English (so that an error raised before the view chose
    still speaks the asked language)."""
    if not has_app_context():
        return "en"
    value = g.get("lang")
    if value is None and has_request_context():
        value = request.args.get("lang")
        if value not in LANGUAGES:
            value = browser_language()
    return value if value in LANGUAGES else "en"


def pick_lang(seat_language: str | None = None) -> str:
    """A page's language: ``?lang=`` (a choice made on the site), else the seat's, else the
    browser's ``Accept-Language``, else English."""
    asked = request.args.get("lang")
    if asked in LANGUAGES:
        return asked
    if seat_language is not None and seat_language in LANGUAGES:
        return seat_language
    return browser_language() or "en"


def keep_lang() -> dict[str, Any]:
    """``?lang=`` for an address this page links, posts or redirects to, so that the next
    page speaks the same language (nothing for English, the default)."""
    chosen = lang()
    return {"lang": chosen} if chosen != "en" else {}


def tr(text: str, **values: Any) -> str:
    """``text`` in the page's language (through the catalogue of :mod:`app.core.i18n`),
    formatted."""
    return translate(lang(), text, **values)


def tr_plural(singular: str, plural: str, n: int, **values: Any) -> str:
    """The form of ``singular``/``plural`` for ``n`` in the page's language, formatted."""
    return translate_plural(lang(), singular, plural, n, **values)

