"""The language ``titanpost`` speaks, and its words in that language (issue 23).

A player's command on a game speaks the language of the player's seat (:func:`speak`, once the
seat is known); every other command, and the help, speaks the user's locale as gettext reads it
from the environment (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``: ``pl_PL.UTF-8`` is
Polish); a language without a catalogue is English. The words are the server's catalogue
(:mod:`app.core.i18n`): :func:`tr` and :func:`tr_plural` are the CLI's ``translate`` calls, found by
the same extractor.

English costs nothing: its text is the message id, so nothing is imported for it (``titanpost
--help`` stays as fast as a click command can be). Another language imports :mod:`app.core.i18n`
(Babel and the catalogue) on its first word.

Help texts are written where their command is, as message ids (``help=N_("...")``), and put in
the language when a command is looked up (:func:`localise`), so that one process can show them
in several languages (the tests do). Click's own words (``Usage:``, ``Options``, ``Show this
message and exit.``...) go through the catalogue too: :func:`install_click_words` hands click's
modules a ``gettext`` that asks it for the messages of :data:`CLICK_WORDS`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import click

ENGLISH: Final = "en"
LOCALE_VARIABLES: Final = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
"""Where gettext looks for the user's language, in its order (the first one set counts)."""

_spoken: list[str] = []
"""The language chosen for this command (:func:`speak`); empty: the environment's."""


def N_(text: str) -> str:
    """Marks ``text`` as a message id where it is written (a help text); it is translated
    where it is shown (the extractor knows this name, see :mod:`app.core.i18n`)."""
    return text


def NC_(context: str, text: str) -> str:
    """Marks ``text`` as a message id said in ``context`` (:func:`tr_context` shows it)."""
    return text


def _catalogued(code: str) -> bool:
    """Whether the server has a catalogue for ``code``, found without importing it."""
    if not code.isalpha():
        return False
    found = importlib.util.find_spec("app")
    if found is None or found.origin is None:
        return False
    path = Path(found.origin).parent / "locale" / code / "LC_MESSAGES" / "messages.po"
    return path.is_file()


def locale_code(value: str) -> str:
    """The language of a locale name: ``pl_PL.UTF-8`` -> ``pl``, ``C`` -> ``en``."""
    code = value.split(".", 1)[0].split("@", 1)[0].split("_", 1)[0].split("-", 1)[0]
    code = code.strip().lower()
    return ENGLISH if code in ("", "c", "posix") else code


def environment_language(environ: Any = None) -> str:
    """The user's language as gettext reads the environment (English when it names none we
    speak). ``LANGUAGE`` may list several (``pl:en``): the first one we speak counts."""
    environ = os.environ if environ is None else environ
    for variable in LOCALE_VARIABLES:
        value = str(environ.get(variable) or "").strip()
        if not value:
            continue
        for part in value.split(":") if variable == "LANGUAGE" else [value]:
            code = locale_code(part)
            if code == ENGLISH or _catalogued(code):
                return code
        if variable != "LANGUAGE":
            return ENGLISH
    return ENGLISH


def lang() -> str:
    """The language this command speaks: the seat's once :func:`speak` said it, else the
    environment's."""
    return _spoken[-1] if _spoken else environment_language()


def speak(language: str | None) -> None:
    """Speak ``language`` from now on (a seat's; English when we have no catalogue for it);
    None: the environment's again."""
    _spoken.clear()
    if language:
        _spoken.append(language if language == ENGLISH or _catalogued(language) else ENGLISH)


def translate_in(language: str, text: str, /, **values: Any) -> str:
    """``text`` in ``language``, its ``{fields}`` filled (:func:`app.core.i18n.translate`)."""
    if language == ENGLISH and "app.core.i18n" not in sys.modules:
        return text.format(**values) if values else text
    from app.core.i18n import translate

    return translate(language, text, **values)


def tr(text: str, /, **values: Any) -> str:
    """``text`` (English, the message id) in the command's language, formatted."""
    return translate_in(lang(), text, **values)


def tr_context(context: str, text: str, /, **values: Any) -> str:
    """``text`` in the command's language as said in ``context`` (a word that means two
    things: a game's "Name" is not a player's)."""
    language = lang()
    if language == ENGLISH and "app.core.i18n" not in sys.modules:
        return text.format(**values) if values else text
    from app.core.i18n import translate

    return translate(language, text, context=context, **values)


def tr_plural(singular: str, plural: str, n: int, /, **values: Any) -> str:
    """The form of ``singular``/``plural`` for ``n`` in the command's language (``{n}`` too)."""
    language = lang()
    if language == ENGLISH and "app.core.i18n" not in sys.modules:
        return (singular if n == 1 else plural).format(n=n, **values)
    from app.core.i18n import translate_plural

    return translate_plural(language, singular, plural, n, **values)


def pause_words(reason: str | None, names: Mapping[int, str]) -> str:
    """Why a game is paused: the clock's own reasons in words (with the late player's name,
    ``names`` by position), any other as its owner wrote it."""
    from app.features.clock.pausewords import pause_reason_timeout

    if not reason or reason == "by its owner":
        return tr("by its owner")
    for position, name in names.items():
        if reason == pause_reason_timeout(position):
            who = tr("{name} (seat {number})", name=name, number=position + 1)
            return tr("waiting for {name}, whose time ran out", name=who)
    return reason


# ---------------------------------------------------------------------- help texts


_ENGLISH_HELP: Final = "_titanpost_english_help"
_HELP_VALUES: Final = "_titanpost_help_values"


def help_values(command: click.Command, param_name: str | None, **values: Any) -> None:
    """The values of the ``{fields}`` of the help of ``command``'s option ``param_name`` (a
    list known when the module loads, such as the built-in boards), or with None of the
    command's own help."""
    if param_name is None:
        command.__dict__[_HELP_VALUES] = values
        command.help = translate_in(ENGLISH, _english(command, "help"), **values)
        return
    for param in command.params:
        if param.name == param_name:
            param.__dict__[_HELP_VALUES] = values
            param.help = translate_in(ENGLISH, _english(param, "help"),
                                      **values)
            return
    raise KeyError(param_name)


def _english(item: Any, attribute: str) -> Any:
    """The English text of ``item``'s ``attribute`` as written (kept on first use)."""
    kept: dict[str, Any] = item.__dict__.setdefault(_ENGLISH_HELP, {})
    if attribute not in kept:
        kept[attribute] = getattr(item, attribute)
    return kept[attribute]


def localise(command: click.Command) -> click.Command:
    """``command``'s help, short help, options' help (and those of the subcommands it has
    loaded) in the command's language. Idempotent: the English is kept and translated again
    each time, so the language may change between two calls."""
    for attribute in ("help", "short_help", "epilog"):
        english = _english(command, attribute)
        if english:
            setattr(command, attribute,
                    tr(_clean(english), **command.__dict__.get(_HELP_VALUES, {})))
    for param in command.params:
        english = _english(param, "help") if isinstance(param, click.Option) else None
        if english:
            param.help = tr(_clean(english), **param.__dict__.get(_HELP_VALUES, {}))
    _localise_metavars(command)
    if getattr(command, "_help_option", None) is not None:
        command._help_option = None  # (click keeps its --help; made again in the language)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            localise(sub)
    return command


METAVARS: Final = frozenset({
    NC_("metavar", "OPTIONS"), NC_("metavar", "COMMAND"), NC_("metavar", "ARGS"),
    NC_("metavar", "ADDRESS"), NC_("metavar", "CHOICE"), NC_("metavar", "CITY"),
    NC_("metavar", "DIR"), NC_("metavar", "DIRECTORY"), NC_("metavar", "EMAIL"),
    NC_("metavar", "PIECES"), NC_("metavar", "TEAM"), NC_("metavar", "FILE"),
    NC_("metavar", "FILES"), NC_("metavar", "FLOAT"), NC_("metavar", "FLOAT RANGE"),
    NC_("metavar", "GAME"), NC_("metavar", "GAMES"), NC_("metavar", "HOURS"),
    NC_("metavar", "INPUTS"), NC_("metavar", "INTEGER"), NC_("metavar", "INTEGER RANGE"),
    NC_("metavar", "ISO-TIME"), NC_("metavar", "LANGUAGE"), NC_("metavar", "LANGUAGES"),
    NC_("metavar", "MINUTES"), NC_("metavar", "NAME"), NC_("metavar", "POINT"),
    NC_("metavar", "SEAT"), NC_("metavar", "SHELL"), NC_("metavar", "SOURCE"),
    NC_("metavar", "TEXT"), NC_("metavar", "VARIANT"), NC_("metavar", "ZONE"),
    NC_("metavar", "LEVEL"), NC_("metavar", "SEQ"),
})
"""The words of the metavariables ``titanpost`` shows (``GAME``, ``TEXT``, click's ``OPTIONS``
and ``COMMAND [ARGS]...``), said in the command's language; the help texts name them the
same way ("Napisz TEKST na czacie gry GRA"). ``N``, ``ID`` and ``URL`` are the same in every
language, and a list of choices (``[en|pl]``) is typed as it is."""
_METAVAR_WORD: Final = re.compile(r"[A-Z][A-Z-]*(?: RANGE)?")
_ENGLISH_METAVAR: Final = "_titanpost_english_metavar"


def metavar_words(english: str) -> str:
    """A metavariable as click writes it (``[GAME]...``, ``NAME|FILE.toml``) with each of its
    words in the command's language."""
    return _METAVAR_WORD.sub(lambda m: tr_context("metavar", m[0]) if m[0] in METAVARS
                             else m[0], english)


def _localise_metavars(command: click.Command) -> None:
    """``command``'s usage line and its parameters' metavariables in the command's language
    (the English, as click makes it, kept on first use)."""
    context = click.Context(command)
    for param in command.params:
        if isinstance(param, click.Option) and (param.is_flag or param.count):
            continue
        if _ENGLISH_METAVAR not in param.__dict__:
            param.__dict__[_ENGLISH_METAVAR] = param.make_metavar(context)
        param.metavar = metavar_words(param.__dict__[_ENGLISH_METAVAR])
    for attribute in ("options_metavar", "subcommand_metavar"):
        english = _english(command, attribute) if hasattr(command, attribute) else None
        if english:
            setattr(command, attribute, metavar_words(english))


def _clean(text: str) -> str:
    """A help text as its message id: a docstring's indentation removed."""
    import inspect

    return inspect.cleandoc(text)


# ---------------------------------------------------------------------- click's own words

CLICK_WORDS: Final = frozenset({
    N_("Usage:"),
    N_("Options"),
    N_("Commands"),
    N_("Show this message and exit."),
    N_("Show the version and exit."),
    N_("%(prog)s, version %(version)s"),
    N_("Error: {message}"),
    N_("default: {default}"),
    N_("required"),
    N_("env var: {var}"),
    N_("Try '{command} {option}' for help."),
    N_("Aborted!"),
    N_("Missing command."),
    N_("Missing argument"),
    N_("Missing option"),
    N_("Missing parameter"),
    N_("Missing parameter: {param_name}"),
    N_("Missing {param_type}"),
    N_("No such command {name!r}."),
    N_("No such option {name!r}."),
    N_("Did you mean {possibility}?"),
    N_("(Did you mean one of: {possibilities}?)"),
    N_("Invalid value for {param_hint}: {message}"),
    N_("Invalid value: {message}"),
    N_("Got unexpected extra argument ({args})"),
    N_("Got unexpected extra arguments ({args})"),
    N_("Option {name!r} requires an argument."),
    N_("Option {name!r} requires {nargs} arguments."),
    N_("Option {name!r} does not take a value."),
    N_("{value!r} is not {choice}."),
    N_("{value!r} is not one of {choices}."),
    N_("{value} is not in the range {range}."),
    N_("{value!r} is not a valid {number_type}."),
    N_("{name} {filename!r} does not exist."),
    N_("{name} {filename!r} is a directory."),
    N_("{name} {filename!r} is a file."),
    N_("{name} {filename!r} is not readable."),
    N_("{name} {filename!r} is not writable."),
    N_("file"),
    N_("directory"),
    N_("path"),
    N_("Could not open file {filename!r}: {message}"),
    N_("Repeat for confirmation"),
    N_("Error: The two entered values do not match."),
    N_("Error: invalid input"),
})
"""Click's messages that ``titanpost`` may show (its headings, its refusals of a command line),
as click words them; they are in the catalogue like ours, their fields left for click."""


def click_gettext(message: str) -> str:
    """Click's ``gettext``: one of :data:`CLICK_WORDS` in the command's language (its
    ``{fields}`` left for click to fill), any other message as click wrote it."""
    language = lang()
    if message not in CLICK_WORDS or (language == ENGLISH and "app.core.i18n" not in sys.modules):
        return message
    from app.core.i18n import translate

    return translate(language, message)  # (given no values, it fills no field)


def click_ngettext(singular: str, plural: str, n: int) -> str:
    """Click's ``ngettext``: each form is a message of its own in the catalogue."""
    return click_gettext(singular if n == 1 else plural)


CLICK_MODULES: Final = ("core", "decorators", "exceptions", "formatting", "parser", "types",
                        "termui", "utils", "shell_completion")


def install_click_words() -> None:
    """Hand click's modules :func:`click_gettext` and :func:`click_ngettext` for their own."""
    for name in CLICK_MODULES:
        module = sys.modules.get(f"click.{name}")
        if module is None:
            continue
        names = vars(module)
        if "_" in names:
            names["_"] = click_gettext
        if "ngettext" in names:
            names["ngettext"] = click_ngettext
