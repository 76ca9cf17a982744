"""The Polish catalogue keeps to one word per concept (docs/glossary-pl.md): no message uses a
word the glossary sets aside, and the Repairman card is named apart from the mechanic
assistant."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.core.i18n import translate

CATALOGUE = Path(__file__).resolve().parent.parent / "app/locale/pl/LC_MESSAGES/messages.po"
SET_ASIDE = {
    "kostka (a die is a kość, as in the rulebook)": r"\bkost(?:ka|ki|kę|ką|ce|ek|kom|kami|kach)\b",
    "paliwo (petrol is benzyna)": r"\bpaliw",
    "płytka (a tile is a kafelek)": r"\bpłyt(?:ka|ki|kę|ką|ce|ek)\b",
    "rynek (the market is the targ)": r"\bryn(?:ek|ku|kiem)\b",
    "Tytan (a Titan is a tytan, lower case, within a sentence)":
        r"(?-i:(?<=[a-ząćęłńóśźż,:] )Tytan)",
}


def polish_messages() -> list[str]:
    """Every msgstr of the catalogue, its continuation lines joined."""
    messages: list[str] = []
    current: list[str] | None = None
    for line in CATALOGUE.read_text(encoding="utf-8").splitlines():
        if line.startswith("msgstr"):
            current = [line.partition(" ")[2].strip().strip('"')]
            messages.append("")
        elif line.startswith('"') and current is not None:
            current.append(line.strip().strip('"'))
        else:
            if current is not None:
                messages[-1] = "".join(current)
            current = None
    if current is not None:
        messages[-1] = "".join(current)
    return messages


def test_the_catalogue_is_read_whole() -> None:
    messages = polish_messages()
    assert len(messages) > 1000
    assert any("benzyna" in m for m in messages)


@pytest.mark.parametrize("word", sorted(SET_ASIDE))
def test_no_polish_message_uses_a_word_set_aside(word: str) -> None:
    pattern = re.compile(SET_ASIDE[word], re.IGNORECASE)
    found = [m for m in polish_messages() if pattern.search(m)]
    assert not found, f"{word}: {found}"


ROOT = CATALOGUE.parents[4]


def polish_files() -> list[Path]:
    """The Polish texts beside the catalogue: docs and templates written in Polish (a name
    ending ``-pl``, ``.pl`` or ``_pl``), the glossary itself left out (its "not" column names
    the words set aside)."""
    found = [path for folder in ("docs", "templates", "app")
             for path in (ROOT / folder).rglob("*")
             if path.is_file() and path.suffix in (".md", ".html", ".txt")
             and re.search(r"[-_.]pl$", path.stem)]
    return [path for path in found if path.name != "glossary-pl.md"]


def test_the_glossary_lists_every_word_set_aside() -> None:
    """Each word the test refuses is in the glossary's "not" column, so a translator finds the
    rule where the words are."""
    glossary = (ROOT / "docs/glossary-pl.md").read_text(encoding="utf-8")
    column = " ".join(line.rsplit("|", 2)[-2] for line in glossary.splitlines()
                      if line.startswith("|") and line.count("|") >= 5)
    for word in SET_ASIDE:
        assert word.split()[0] in column, word


@pytest.mark.parametrize("word", sorted(SET_ASIDE))
def test_no_polish_doc_or_template_uses_a_word_set_aside(word: str) -> None:
    pattern = re.compile(SET_ASIDE[word], re.IGNORECASE)
    found = [str(path.relative_to(ROOT)) for path in polish_files()
             if pattern.search(path.read_text(encoding="utf-8"))]
    assert not found, f"{word}: {found}"


def test_the_repairman_card_and_the_mechanic_are_named_apart() -> None:
    card = translate("pl", "Repairman", context="great race card")
    mechanic = translate("pl", "Mechanic: repair the vehicle")
    assert card == "Złota rączka"
    assert not mechanic.startswith(card)
