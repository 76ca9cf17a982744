"""Drawing a mail's board picture: the game UI's ``board_svg`` of the seat's view, as a PNG.

:class:`BoardDrawing` is the part of :class:`app.mail.render.MailRenderer` that draws the board
of a mail (once per game state, seat view, language and highlight, then reused from its
:class:`~app.mail.images.PictureCache`) and the picture a signed image address names, which the
web server answers (:mod:`app.mail.images` says when a mail carries which).
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any, Final

from app.core.config import Settings
from app.core.i18n import LANGUAGES
from app.core.models import Game
from app.games.ui import DEFAULT_GAME, game_ui
from app.mail.images import BoardPicture, PictureCache, PictureError
from app.service import GameService, Loaded, NotFound

BOARD_PNG_WIDTH: Final = 800
"""Pixels of the board picture (shown 600 wide in the mail, so it stays sharp on HiDPI)."""


@lru_cache(maxsize=64)
def _png(svg: str, width: int, game_name: str = DEFAULT_GAME) -> bytes:
    return game_ui(game_name).board_png(svg, width)


_BOARDS: dict[Any, Any] = {}


def boards_of(game: Game) -> Any:
    """The game's boards as its UI resolves them (``GameUI.boards``), once per process."""
    key = (game.ruleset, _freeze(dict(game.setup)))
    found = _BOARDS.get(key)
    if found is None:
        if len(_BOARDS) > 64:
            _BOARDS.clear()
        found = _BOARDS[key] = game_ui(game.ruleset).boards(dict(game.setup))
    return found


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


class BoardDrawing:
    """The board pictures of mails (a part of :class:`MailRenderer
    <app.mail.render.MailRenderer>`, which sets the server's service, settings and picture
    cache)."""

    service: GameService
    settings: Settings
    pictures: PictureCache

    def _board(self, loaded: Loaded, picture: BoardPicture) -> bytes:
        """The board picture of a mail, drawn once and reused (unless the view shows answers
        sealed to a simultaneous decision, which are not in the log)."""
        if loaded.sealed:
            return _draw(loaded, picture)
        return self.pictures.get(picture, partial(_draw, loaded))

    def picture_png(self, picture: BoardPicture) -> bytes:
        """The PNG a signed image address names (drawn on the first request, then kept):
        the seat's view after log entry ``picture.seq``, without sealed answers. Raises
        PictureError when there is no such game, entry or seat."""
        return self.pictures.get(picture, self._draw_from_log)

    def picture_svg(self, picture: BoardPicture) -> str:
        """The SVG of the picture a signed image address names (what :meth:`picture_png`
        renders; the hidden-information tests read its words)."""
        return _svg(self._loaded_for(picture), picture)

    def _draw_from_log(self, picture: BoardPicture) -> bytes:
        return _draw(self._loaded_for(picture), picture)

    def _loaded_for(self, picture: BoardPicture) -> Loaded:
        with self.service.session() as s:
            try:
                loaded = self.service.load(s, picture.game, upto=picture.seq)
            except NotFound:
                raise PictureError("this board picture's game does not exist (any more)") \
                    from None
        if (loaded.state is None or loaded.seq != picture.seq or picture.lang not in LANGUAGES
                or all(seat.position != picture.seat for seat in loaded.seats)):
            raise PictureError("this board picture's game has no such moment or seat")
        loaded.sealed = {}
        return loaded

    def _cid(self, uid: str, seq: int, position: int) -> str:
        return f"board.{uid}.{seq}.{position}@{self.settings.mail_domain}"


def _svg(loaded: Loaded, picture: BoardPicture) -> str:
    """The board of ``loaded`` as seat ``picture.seat`` sees it."""
    return game_ui(loaded.game.ruleset).board_svg(
        loaded.view(picture.seat), boards_of(loaded.game), highlight=list(picture.highlight),
        lang=picture.lang)


def _draw(loaded: Loaded, picture: BoardPicture) -> bytes:
    """The board of ``loaded`` as seat ``picture.seat`` sees it, as a PNG."""
    return _png(_svg(loaded, picture), BOARD_PNG_WIDTH, loaded.game.ruleset)
