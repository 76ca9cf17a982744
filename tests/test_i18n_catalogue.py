"""Every word a player reads comes from a gettext catalogue: the ids extracted from the code and
the templates (babel.cfg, app/core/i18n_catalogue.py) are all translated in every language, and no
template holds text of its own outside ``tr()``."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog

from app.core import i18n_catalogue as catalogues
from app.core.i18n import LANGUAGES, catalogue_path, catalogued_languages, language_name

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"

# Names and abbreviations that read the same in every language.
SAME_IN_EVERY_LANGUAGE = frozenset({
    "Titan Post", "Titan Race", "The Great Race", "API", "JSON", "ICS", "UTC", "PNG", "SVG",
    "CLI", "ntfy", "Discord", "Slack", "Matrix", "eml",
})
# The developer's outbox page exists only outside production and speaks to the developer.
NOT_FOR_PLAYERS = ("mail/dev/",)


@pytest.fixture(scope="module")
def extracted() -> Catalog:
    return catalogues.extract()


def test_the_extractor_reads_code_and_both_kinds_of_template(extracted: Catalog) -> None:
    files = {file for message in extracted for file, _ in message.locations}
    assert any(f.startswith("app/") and f.endswith(".py") for f in files)
    assert any(f.startswith("templates/pages/") for f in files)
    assert any(f.startswith("templates/mail/") and f.endswith(".txt") for f in files)
    assert any(f.startswith("templates/mail/") and f.endswith(".html") for f in files)
    assert extracted.get("blue", "die colour") is not None  # NC_ in a table of words
    assert extracted.get("{n} card") is not None or any(
        isinstance(m.id, tuple) for m in extracted)  # plurals are extracted as pairs


def test_the_extractor_skips_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    """No call is left out of the catalogue with a warning (``titanpost i18n check`` printed
    one to every translator: an f-string among a ``translate`` call's arguments)."""
    catalogues.extract()
    captured = capfd.readouterr()
    assert "warning" not in captured.err + captured.out, captured.err + captured.out


@pytest.mark.parametrize("lang", [code for code in LANGUAGES if code != "en"])
def test_every_message_is_translated(lang: str, extracted: Catalog) -> None:
    found = [str(problem) for problem in catalogues.problems(lang, extracted)]
    assert found == [], f"{len(found)} messages of {lang} to fix (titanpost i18n check {lang})"


@pytest.mark.parametrize("lang", [code for code in LANGUAGES if code != "en"])
def test_no_catalogue_keeps_words_nothing_uses(lang: str, extracted: Catalog) -> None:
    assert catalogues.unused(lang, extracted) == []


def _visible_text(source: str) -> str:
    """What a template shows of its own: the source without Jinja code, comments, tags and
    the insides of <script> and <style>."""
    source = re.sub(r"\{#.*?#\}", "", source, flags=re.S)
    source = re.sub(r"<(script|style)\b.*?</\1>", "", source, flags=re.S | re.I)
    source = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", " ", source, flags=re.S)
    source = re.sub(r"<[^>]*>", " ", source, flags=re.S)
    return re.sub(r"&#?\w+;", " ", source)


def _attributes(source: str) -> list[str]:
    """Shown attribute values (title, placeholder, alt, aria-label) written as plain text."""
    return [value for value in re.findall(
        r'\b(?:title|placeholder|alt|aria-label)="([^"{]*)"', source) if value.strip()]


def _set_literals(source: str) -> list[str]:
    """Words a template sets as a plain string (``{% set x = "Words" %}``) instead of ``tr()``."""
    return [text for tag in re.findall(r"\{%-?\s*set\b(.*?)-?%\}", source, flags=re.S)
            if "tr(" not in tag for text in re.findall(r'"([^"]*[A-Za-z][^"]*)"', tag)]


def _own_words(source: str) -> list[str]:
    text = _visible_text(source)
    for name in SAME_IN_EVERY_LANGUAGE:
        text = text.replace(name, " ")
    words = re.findall(r"[^\W\d_]{2,}", text)
    return words + _attributes(source) + _set_literals(source)


TEMPLATE_FILES = sorted(
    [*(p for p in TEMPLATES.rglob("*") if p.suffix in {".html", ".txt"}
       and not str(p.relative_to(TEMPLATES)).startswith(NOT_FOR_PLAYERS)),
     *(p for p in (ROOT / "app").glob("**/templates/**/*") if p.suffix in {".html", ".txt"})])
"""The shared templates, and the features' and games' own (app/<...>/templates/)."""


def test_the_template_check_reads_the_features_and_games_own() -> None:
    names = {str(p.relative_to(ROOT)) for p in TEMPLATE_FILES}
    assert "app/features/takeback/templates/pages/_takeback.html" in names
    assert any(name.startswith("app/games/") for name in names)


@pytest.mark.parametrize("path", TEMPLATE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_template_has_words_of_its_own(path: Path) -> None:
    assert _own_words(path.read_text(encoding="utf-8")) == []


def test_the_template_check_sees_plain_words() -> None:
    assert _own_words('<p title="Seat">{{ tr("Game") }} Your turn</p>') == [
        "Your", "turn", "Seat"]
    assert _own_words('{% set name = "Titan Race" %}{% set x = tr("y") %}') == ["Titan Race"]
    assert _own_words("<b>{{ game.label }}</b> · {{ n }} Titan Post") == []


def test_no_mail_template_is_a_copy_per_language() -> None:
    per_language = sorted(str(p.relative_to(TEMPLATES)) for p in TEMPLATES.rglob("*")
                          if p.is_dir() and p.name in LANGUAGES)
    assert per_language == []


def test_a_language_is_a_catalogue_file(tmp_path: Path, titanpost: str) -> None:
    """A translator adds a language with ``titanpost i18n init``: no Python changes."""
    done = subprocess.run([titanpost, "i18n", "init", "de", "--locale-dir", str(tmp_path)],
                          capture_output=True, text=True, check=True)
    assert "messages to translate" in done.stdout
    assert catalogued_languages(tmp_path) == ("de",)
    german = catalogues.read(catalogue_path("de", tmp_path), "de")
    assert german.num_plurals == 2
    untranslated = [m.string if isinstance(m.string, str) else "".join(m.string)
                    for m in german if m.id]  # a plural's string is a tuple of forms
    assert len(german) > 300 and not any(untranslated)
    assert language_name("pl") == "polski" and language_name("de") == "Deutsch"
    again = subprocess.run([titanpost, "i18n", "init", "pl"], capture_output=True, text=True)
    assert again.returncode != 0 and "exists" in again.stderr


def test_check_names_what_is_missing(tmp_path: Path) -> None:
    template = Catalog()
    for message, context in [("Your turn", None), (("{n} card", "{n} cards"), None),
                             ("blue", "die colour"), ("Round {round}", None),
                             ("Not in Polish", None), ("Left empty", None), ("Unsure", None)]:
        template.add(message, context=context)
    polish = Catalog(locale="pl")
    polish.add("Your turn", "Twoja tura")
    polish.add(("{n} card", "{n} cards"), ("jedna karta", "{n} karty", "{n} kart"))
    polish.add("blue", "niebieska", context="die colour")
    polish.add("Round {round}", "Runda {runda}")
    polish.add("Left empty", "")
    polish.add("Unsure", "Niepewne", flags=["fuzzy"])
    catalogues.write(polish, catalogue_path("pl", tmp_path))
    found = {(p.message, p.what) for p in catalogues.problems("pl", template, tmp_path)}
    assert found == {("Not in Polish", "not in the catalogue"),
                     ("Left empty", "not translated"),
                     ("Unsure", "marked fuzzy (to be checked)"),
                     ("Round {round}", "other {fields} than the English")}
