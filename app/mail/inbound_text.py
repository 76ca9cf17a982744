"""Reading a reply: the text the player wrote, without quotes or signature, and the notation in it.

Mail clients quote in their own ways: Gmail and Thunderbird put an "On ... wrote:" line above
``>``-quoted text (Gmail's HTML wraps it in ``div.gmail_quote``), Apple Mail quotes with ``>``
in text and ``<blockquote type="cite">`` in HTML, Outlook appends the original below a
"-----Original Message-----" line or a "From: / Sent: / To: / Subject:" block. The text part is
preferred; an HTML-only reply is converted to text first, dropping quoted blocks. The reply is
then cut by mail-parser-reply and scanned for its first lines of notation, so that only what the
player wrote above the quote, before any signature, is ever read as a move.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage, Message
from html.parser import HTMLParser
from typing import Any

from mailparser_reply import EmailMessage as ParsedReply

MAX_SCAN_CHARS = 8_000
MAX_LINE_CHARS = 500
"""Only the start of a reply is read (the move is at its top), and long lines are cut: this
bounds the work of mail-parser-reply's regular expressions, which grows with the square of a
line's length (a hostile reply must not stall the worker)."""
MAX_HTML_CHARS = 500_000
MAX_PROSE_BEFORE = 3
"""Lines of prose ("Hi all,") allowed before the move; more, and the reply has no move."""
MAX_NOTATION_LINES = 20
PARSER_LANGUAGES = ("en", "pl", "de", "fr", "es", "it", "nl")
"""Languages whose "wrote:" and "From:/Sent:" headers mail-parser-reply recognises here."""

# Lines after which nothing is the player's own text.
_HARD_STOP = re.compile(
    r"""^(?:
        --\s*$                                  # signature separator ("-- ")
      | -{3,}[^-].*-{3,}\s*$                    # -----Original Message----- in any language
      | _{8,}\s*$                               # Outlook's line above the original
      | \*?(?:from|von|de|od|da|van|fr[aå]n|fra|sent|gesendet|wysłano)\*?\s*:\s*\S
      | sent\ from\ my\b | get\ outlook\ for\b | wysłano\ z\b | gesendet\ von\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
# An attribution line introducing a quote ("On Sat, ... wrote:", "W dniu ... napisał(a):").
_ATTRIBUTION = re.compile(
    r"(?:wrote|writes|napisał\(a\)|napisał|napisała|schrieb|a écrit|escribió|ha scritto"
    r"|schreef|skrev)\s*:\s*$|@\S*>?\s*:\s*$",
    re.IGNORECASE,
)
_WRAPPERS = "`'\"*\u201c\u201d\u2018\u2019"


@dataclass(frozen=True)
class Extracted:
    """What was read from a reply: the player's text (quotes and signature removed, for
    messages back to them) and the notation found in it (inputs joined with ``"; "``)."""

    text: str
    notation: str | None


def message_text(msg: Message) -> str:
    """The body of ``msg`` as text: its plain part, else its HTML part converted to text."""
    plain = _body_part(msg, "plain")
    if plain is not None:
        text = _decoded(plain)
        if text.strip():
            return text
    html = _body_part(msg, "html")
    if html is not None:
        return html_to_text(_decoded(html))
    return ""


def _body_part(msg: Message, subtype: str) -> Message | None:
    if isinstance(msg, EmailMessage):
        found: Message | None = msg.get_body(preferencelist=(subtype,))
        return found
    for part in msg.walk():  # a compat32 message: the first inline part of that type
        if part.get_content_type() == f"text/{subtype}" and not part.get_filename():
            return part
    return None


def _decoded(part: Message) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return str(part.get_payload())
    charset = part.get_content_charset() or "utf-8"
    try:
        return payload.decode(charset, errors="replace")
    except LookupError:  # an unknown charset name
        return payload.decode("utf-8", errors="replace")


# ------------------------------------------------------------------------------------ HTML


class _HtmlText(HTMLParser):
    """HTML to plain text for replies: blocks become lines, quoted blocks and signatures are
    dropped, and everything after a client's "original message follows" marker is ignored."""

    BLOCKS = frozenset(
        (
            *("address", "article", "aside", "blockquote", "dd", "div", "dl", "dt", "footer"),
            *("form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "ol", "p"),
            *("pre", "section", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"),
        )
    )
    VOID = frozenset(
        (
            *("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta"),
            *("param", "source", "track", "wbr"),
        )
    )
    SKIP_TAGS = frozenset(("blockquote", "style", "script", "head", "title", "template"))
    SKIP_CLASSES = frozenset(
        ("gmail_quote", "gmail_signature", "gmail_extra", "yahoo_quoted", "moz-signature")
    )
    STOP_IDS = frozenset(
        (
            "appendonsend",
            "divrplyfwdmsg",
            "mail-editor-reference-message-container",
            "olk_src_body_section",
            "x_divrplyfwdmsg",
        )
    )
    STOP_CLASSES = frozenset(("moz-cite-prefix", "zmail_extra", "protonmail_quote"))

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip_tag: str | None = None
        self.skip_depth = 0
        self.pre = 0
        self.stopped = False
        self.line_open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.stopped:
            return
        if self.skip_tag is not None:
            if tag == self.skip_tag and tag not in self.VOID:
                self.skip_depth += 1
            return
        found = {name: (value or "") for name, value in attrs}
        classes = set(found.get("class", "").lower().split())
        ident = found.get("id", "").lower()
        if ident in self.STOP_IDS or classes & self.STOP_CLASSES:
            self.stopped = True
            return
        if tag in self.SKIP_TAGS or classes & self.SKIP_CLASSES:
            if tag not in self.VOID:
                self.skip_tag, self.skip_depth = tag, 1
            return
        if tag == "br":
            self.out.append("\n")
            self.line_open = False
        elif tag in self.BLOCKS:
            self._break()
        if tag == "pre":
            self.pre += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.stopped:
            return
        if self.skip_tag is not None:
            if tag == self.skip_tag:
                self.skip_depth -= 1
                if self.skip_depth == 0:
                    self.skip_tag = None
            return
        if tag in self.BLOCKS:
            self._break()
        if tag == "pre" and self.pre:
            self.pre -= 1

    def _break(self) -> None:
        """End the current line at a block's edge (adjacent blocks make no empty line)."""
        if self.line_open:
            self.out.append("\n")
            self.line_open = False

    def handle_data(self, data: str) -> None:
        if self.stopped or self.skip_tag is not None:
            return
        data = data.replace("\xa0", " ")
        if not self.pre:
            data = re.sub(r"[ \t\r\n\f]+", " ", data)
        self.out.append(data)
        if data.strip():
            self.line_open = not data.endswith("\n")

    def text(self) -> str:
        lines = [line.strip() for line in "".join(self.out).splitlines()]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def html_to_text(html: str) -> str:
    """The text a reader sees in ``html``, without quoted blocks, signatures or the original
    message that clients append below a reply."""
    parser = _HtmlText()
    parser.feed(html[:MAX_HTML_CHARS])
    parser.close()
    return parser.text()


# ---------------------------------------------------------------------- quotes and notation


def strip_quotes(text: str) -> str:
    """The newest reply in ``text``: the quoted original, headers and signature removed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")[:MAX_SCAN_CHARS]
    text = "\n".join(line[:MAX_LINE_CHARS] for line in text.split("\n"))
    parsed: Any = ParsedReply(text=text, languages=list(PARSER_LANGUAGES), keep_hyphen_lists=True)
    replies = parsed.read().replies
    if not replies:
        return ""
    body: str = replies[0].body
    return body


def _clean(line: str) -> str:
    line = line.strip().strip(_WRAPPERS).strip()
    line = re.sub(r"^(?:[-*•]\s+)", "", line)  # a bulleted move
    return line.rstrip(".!,").strip().strip(_WRAPPERS).strip()


def _parts(line: str, is_notation: Callable[[str], bool]) -> list[str] | None:
    parts = [part.strip() for part in _clean(line).split(";")]
    parts = [part for part in parts if part]
    if parts and all(is_notation(part) for part in parts):
        return parts
    return None


def find_notation(text: str, is_notation: Callable[[str], bool],
                  is_attempt: Callable[[str], bool] | None = None) -> str | None:
    """The first lines of ``text`` that are notation, joined with ``"; "``; None when there are
    none. A few lines of prose may come first; quoted lines (``>``) are skipped; a signature,
    an original-message header or prose after the notation ends it.

    With ``is_attempt``, a first line that is no notation but reads as an attempt at it (a
    mistyped move, ``go Z99``) is taken as notation too, to be refused with the legal inputs
    rather than posted as words to the others; after notation such a line ends it."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n")[:MAX_SCAN_CHARS].split("\n")
    collected: list[str] = []
    prose = 0
    for index, raw in enumerate(lines):
        line = raw.strip()
        if line.startswith(">"):
            if collected:
                break
            continue
        if not line:
            continue
        if _HARD_STOP.match(line):
            break
        if _ATTRIBUTION.search(line):
            if collected:
                break
            following = next((ln.strip() for ln in lines[index + 1:] if ln.strip()), "")
            if not following.startswith(">"):
                break  # an original that is not quoted with ">" follows: read no further
            continue
        parts = _parts(line, is_notation)
        if parts is None and is_attempt is not None and not collected:
            parts = _parts(line, lambda part: is_notation(part) or is_attempt(part))
        if parts is not None:
            collected.extend(parts)
            if len(collected) >= MAX_NOTATION_LINES:
                break
            continue
        if collected:
            break
        prose += 1
        if prose > MAX_PROSE_BEFORE:
            break
    return "; ".join(collected) if collected else None


def extract(msg: Message, is_notation: Callable[[str], bool],
            is_attempt: Callable[[str], bool] | None = None) -> Extracted:
    """Read a reply: its own text and the notation at its top (see :func:`find_notation`)."""
    body = message_text(msg)
    reply = strip_quotes(body)
    notation = find_notation(reply, is_notation, is_attempt)
    if notation is None and reply.strip() != body.strip():
        # mail-parser-reply may cut too much (a move below "Thanks,"): scan the whole body,
        # where the scanner's own rules stop at any quote or original-message header.
        notation = find_notation(body, is_notation, is_attempt)
    return Extracted(text=_own_text(reply), notation=notation)


def _own_text(reply: str) -> str:
    """The reply without quoted lines and the attribution lines above them."""
    kept = [
        line.rstrip()
        for line in reply.split("\n")
        if not line.lstrip().startswith(">") and not _ATTRIBUTION.search(line.strip())
    ]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
