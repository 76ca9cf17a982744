"""The mail templates' Jinja environment (one per template folders and process), with the
filters and globals the templates use (``tr``, ``tr_plural``, ``when``, ``day``, ``duration``,
``clock``, ``and_list``), and the tidying of a rendered text part."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_context, select_autoescape
from jinja2.runtime import Context

from app.core.i18n import translate, translate_plural
from app.core.readertime import reader_time
from app.mail.wording import and_list, format_day, format_duration, format_time


@pass_context
def _and_filter(context: Context, items: Any) -> str:
    return and_list(items, str(context.get("lang", "en")))


@pass_context
def _when_filter(context: Context, value: Any) -> str:
    return format_time(value, str(context.get("lang", "en")), context.get("timezone"))


@pass_context
def _day_filter(context: Context, value: Any) -> str:
    return format_day(value, str(context.get("lang", "en")), context.get("timezone"))


@pass_context
def _clock_filter(context: Context, value: Any) -> str:
    """A chat or log time on the reader's clock, its zone named (app/core/readertime.py)."""
    zone = context.get("timezone")
    return reader_time(value, zone if isinstance(zone, str) else None)


@pass_context
def _duration_filter(context: Context, value: Any) -> str:
    return format_duration(value, str(context.get("lang", "en")))


class Loose(dict[str, Any]):
    """A free-form mapping (a row's payload, a game's settings) whose missing keys read as
    None in templates (which otherwise refuse undefined names)."""

    def __getattr__(self, name: str) -> Any:
        return self.get(name)


@pass_context
def _tr_global(context: Context, text: str, /, **values: Any) -> str:
    """``{{ tr("English {field}", field=...) }}`` in a mail template: the text in the mail's
    language (its context's ``lang``)."""
    return translate(str(context.get("lang", "en")), text, **values)


@pass_context
def _tr_plural_global(context: Context, singular: str, plural: str, n: int, /,
                      **values: Any) -> str:
    """``{{ tr_plural("{n} card", "{n} cards", n) }}`` in a mail template."""
    return translate_plural(str(context.get("lang", "en")), singular, plural, n, **values)


@lru_cache(maxsize=16)
def template_environment(folders: tuple[Path, ...], *, reload: bool = True) -> Environment:
    """The Jinja environment of template folders, one per process: its compiled templates are
    shared by every renderer (each sender, the dev page, the picture page) instead of being
    compiled again by each. With ``reload`` a template is looked at on disk each time it is
    used, and compiled again when it changed (in development); without, once (a mail uses a
    dozen templates: as many file system calls a mail saved)."""
    env = Environment(
        auto_reload=reload,
        loader=FileSystemLoader([str(folder) for folder in folders]),
        autoescape=select_autoescape(enabled_extensions=("html",), default_for_string=False),
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["and_list"] = _and_filter
    env.filters["when"] = _when_filter
    env.filters["day"] = _day_filter
    env.filters["duration"] = _duration_filter
    env.filters["clock"] = _clock_filter
    env.globals["tr"] = _tr_global
    env.globals["tr_plural"] = _tr_plural_global
    return env


def tidy_text(text: str) -> str:
    """No trailing spaces (but the signature separator's) and at most one empty line in a row."""
    lines = [line if line == "-- " else line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if not line and out and not out[-1]:
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    while out and not out[0]:
        out.pop(0)
    return "\n".join(out) + "\n"
