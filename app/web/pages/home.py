"""Home and my games."""

from __future__ import annotations

from typing import Any

from flask import (
    g,
    render_template,
    url_for,
)
from flask.typing import ResponseReturnValue

from app.core.models import ACTIVE
from app.features.live.marks import marks_of
from app.features.live.pages import my_game_uids
from app.games import ruleset
from app.games.ui import DEFAULT_GAME, game_ui
from app.service import (
    Forbidden,
    ServiceError,
)
from app.web.browser_seats import my_seats, service
from app.web.pages.common import (
    created_games,
    game_rows,
    page_blueprint,
)
from app.web.pages.language import (
    lang,
    pick_lang,
    tr,
)
from app.web.pages.me import account_listing, finished_words

bp = page_blueprint("home")


# ---------------------------------------------------------------------------- home, my games


def _seats_language() -> str | None:
    """The language of this browser's seats when they share one (else None: the browser's
    ``Accept-Language`` decides), so that a Polish player's list of games is Polish."""
    found: set[str] = set()
    for uid, position in my_seats().items():
        try:
            found.add(service().link_seat(uid, position).language)
        except ServiceError:
            continue
    return found.pop() if len(found) == 1 else None


@bp.get("/")
def home() -> ResponseReturnValue:
    g.lang = pick_lang(_seats_language())
    games = _my_games()[:5]
    return render_template("pages/home.html", games=games, piece_heading=_piece_heading(games))


def _my_games() -> list[dict[str, Any]]:
    """The games this browser has seats in, or created, newest activity first."""
    rows: list[dict[str, Any]] = []
    seats = my_seats()
    created = created_games()
    for uid in list(dict.fromkeys([*seats, *created])):
        position = seats.get(uid)
        result: dict[str, Any] | None = None
        try:
            state = service().state(uid, position)
            summary, result = state["game"], state.get("result")
        except Forbidden:  # a private game this browser created without taking a seat
            game_row, _ = game_rows(uid)
            summary = {"name": game_row.name, "ruleset": game_row.ruleset,
                       "variant": game_row.variant, "seats": [],
                       "setup": game_row.setup,
                       "status": game_row.status, "seq": 0, "to_act": [],
                       "winner": game_row.winner}
        except ServiceError:
            continue
        mine = next((s for s in summary["seats"] if s["position"] == position), None)
        words = game_ui(summary["ruleset"])
        rows.append(
            {
                "uid": uid,
                "name": summary["name"] or f"{tr('Game')} {uid[:8]}",
                "variant": game_ui(summary["ruleset"]).variant_name(summary["variant"], lang()),
                "boards": words.setup_titles(summary["setup"]),
                "status": summary["status"],
                "seq": summary["seq"],
                "position": position,
                "pieces": [(words.piece_name(piece, lang()), words.piece_fill(piece))
                           for piece in (ruleset(summary["ruleset"]).piece_names(mine["pieces"])
                                         if mine else [])],
                "piece_heading": words.piece_heading,
                "your_turn": position is not None and position in summary["to_act"]
                and summary["status"] == ACTIVE,
                "creator": uid in created,
                **finished_words(summary["ruleset"], summary["winner"],
                                 result["you"] if result else None),
            }
        )
    rows.sort(key=lambda r: (not r["your_turn"], r["status"] != ACTIVE, -r["seq"]))
    return rows


@bp.get("/games")
def my_games() -> ResponseReturnValue:
    g.lang = pick_lang(_seats_language())
    listing = account_listing()
    signed = {row["game"] for row in listing["account_games"]}
    games = [row for row in _my_games() if row["uid"] not in signed or row["creator"]]
    return render_template("pages/my_games.html", games=games,
                           piece_heading=_piece_heading(games),
                           live_stream=url_for("live.my_games_stream"),
                           live_mark=marks_of(service(), my_game_uids()), **listing)


def _piece_heading(rows: list[dict[str, Any]]) -> str:
    """The heading of the column of what one plays: each listed game's word for it (one word
    where all listed games are of one kind, "A / B" for two)."""
    words = dict.fromkeys(tr(row["piece_heading"]) for row in rows)
    return " / ".join(words) or tr(game_ui(DEFAULT_GAME).piece_heading)
