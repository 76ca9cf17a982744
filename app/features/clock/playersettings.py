"""A player's own clock and settings, a part of the
:class:`~app.features.clock.timekeeper.Timekeeper` (:class:`PlayerSettings`): away dates for
every game of an address, and a seat's own settings (mail, language, quiet hours and time zone,
any-time reaction windows, the standing choice of its reactions) wherever they are changed from
(the ``/me`` page, the API, the CLI, the unsubscribe link). A change that moves a running game's
deadlines recomputes them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, col, select

from app.core.i18n import N_
from app.core.models import ACTIVE, OPEN, REACTIONS, Absence, Game, Seat, utcnow
from app.features.clock.arithmetic import aware
from app.features.clock.keeperbase import ABSENCE_MODES, KeeperBase, human_with_address, iso_or_none
from app.games import ruleset
from app.games.base import ASK
from app.mail.notify import AWAY as AWAY_NOTICE
from app.mail.notify import MAIL_MODES, enqueue_notice, mail_mode
from app.service import LANGUAGES, AnswerRecorder, BadRequest, NotFound, ServiceError, check_quiet

AWAY_MODE_REFUSED = N_("the away mode is stretch or computer, not '{mode}'")
AWAY_BACKWARDS = N_("the away dates end before they start")
AWAY_TOO_LONG = N_("away dates last at most three months")
AWAY_OVER = N_("those away dates are already over")
WINDOWS_DEALT = N_("any-time reaction windows are dealt into the game when it starts: they can "
                   "only be changed before the start")
MAIL_REFUSED = N_("mail must be one of {choices}, not '{mail}'")
LANGUAGE_REFUSED = N_("language must be one of {choices}, not '{language}'")
NOTHING_TO_CHANGE = N_("nothing to change: choose a setting to change")
REACTIONS_REFUSED = N_("reactions must be one of {choices}, not '{reactions}'")
"""Refusals a player meets on the settings page (catalogue messages; the away modes are
:data:`ABSENCE_MODES`)."""


class PlayerSettings(KeeperBase):
    """Away dates and a seat's own settings."""

    # ============================================================== away dates

    def set_absence(self, email: str, starts_at: datetime, ends_at: datetime, mode: str,
                    at: datetime | None = None, *,
                    idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """Record a player's away dates for all their games; their open deadlines are
        recomputed and the other players of their running games are told."""
        email = email.strip().lower()
        starts_at, ends_at = aware(starts_at), aware(ends_at)
        if mode not in ABSENCE_MODES:
            raise ServiceError(f"the away mode is {' or '.join(ABSENCE_MODES)}, not '{mode}'",
                               words=(AWAY_MODE_REFUSED, {"mode": mode}))
        if ends_at <= starts_at:
            raise ServiceError(AWAY_BACKWARDS, words=(AWAY_BACKWARDS, {}))
        if ends_at - starts_at > timedelta(days=92):
            raise ServiceError(AWAY_TOO_LONG, words=(AWAY_TOO_LONG, {}))
        at = at or utcnow()
        if ends_at <= at:
            raise ServiceError(AWAY_OVER, words=(AWAY_OVER, {}))
        with self.service.session(write=True) as s:
            absence = Absence(email=email, starts_at=starts_at, ends_at=ends_at, mode=mode,
                              created_at=at)
            s.add(absence)
            s.flush()
            for game, seat in self._running_seats(s, email):
                self.reschedule(s, game, seat)
                self._tell_others(s, game, seat, absence)
            added = absence_json(absence)
            if idempotency is not None:
                idempotency.record(s, added)
            s.commit()
            return added

    def cancel_absence(self, email: str, absence_id: int) -> None:
        with self.service.session(write=True) as s:
            absence = s.get(Absence, absence_id)
            if absence is None or absence.email != email.strip().lower():
                raise NotFound(f"you have no away dates {absence_id}")
            if absence.cancelled_at is not None:
                raise BadRequest(f"the away dates {absence_id} were already cancelled")
            absence.cancelled_at = utcnow()
            s.add(absence)
            s.flush()
            for game, seat in self._running_seats(s, absence.email):
                self.reschedule(s, game, seat)
            s.commit()

    def absences(self, email: str) -> list[dict[str, Any]]:
        with self.service.session() as s:
            rows = s.exec(select(Absence).where(
                Absence.email == email.strip().lower(), col(Absence.cancelled_at).is_(None),
            ).order_by(col(Absence.starts_at))).all()
            return [absence_json(row) for row in rows]

    def set_quiet_hours(self, uid: str, position: int, quiet: str | None,
                        timezone: str | None) -> dict[str, str]:
        """Set a seat's quiet hours and time zone (None/empty clears them); its open deadline
        and reminders are recomputed. Returns the preferences now stored."""
        now = self.change_settings(uid, position,
                                   SettingsChange(quiet=quiet or "", timezone=timezone or ""))
        return {key: now[key] for key in ("quiet", "timezone") if now[key]}

    def change_settings(self, uid: str, position: int, change: SettingsChange) -> dict[str, Any]:
        """Change a player's own settings of a seat (every channel comes here: the ``/me``
        page, the API, the CLI, the unsubscribe link). With ``change.everywhere`` the mail,
        language and quiet hours go to every seat of the player's address in games not over
        yet. Each changed running game's open deadlines are recomputed (quiet hours move them).
        Bad values raise BadRequest before anything is stored. Returns this seat's settings
        now in force (:func:`seat_settings`)."""
        change.check()
        with self.service.session(write=True) as s:
            game = self.service.load(s, uid).game
            seat = next((p for p in self.service.seats(s, game) if p.position == position),
                        None)
            if seat is None:
                raise NotFound(f"game {uid} has no seat {position + 1}")
            if change.anytime_windows is not None and game.status != OPEN:
                raise BadRequest(WINDOWS_DEALT, words=(WINDOWS_DEALT, {}))
            choices = ruleset(game.ruleset).standing_choices
            if change.reactions is not None and change.reactions not in choices:
                raise BadRequest(REACTIONS_REFUSED.format(choices=", ".join(choices),
                                                          reactions=change.reactions),
                                 words=(REACTIONS_REFUSED, {"choices": ", ".join(choices),
                                                            "reactions": change.reactions}))
            targets = [(game, seat)]
            if change.everywhere and seat.email:
                targets += [(other_game, other) for other_game, other
                            in self._unfinished_seats(s, seat.email) if other.id != seat.id]
            for target_game, target in targets:
                change.apply(target, this_seat=target.id == seat.id)
                s.add(target)
                s.flush()
                if target_game.status == ACTIVE and change.touches_clock():
                    self.reschedule(s, target_game, target)
            s.commit()
            changed = {target_game.uid for target_game, _ in targets}
            result = seat_settings(game, seat)
        for changed_uid in changed:
            self.service.forget_seats(changed_uid)
        return result

    def settings_of(self, uid: str, position: int) -> dict[str, Any]:
        """A seat's own settings (:func:`seat_settings`)."""
        with self.service.session() as s:
            game = self.service.load(s, uid).game
            seat = next((p for p in self.service.seats(s, game) if p.position == position),
                        None)
            if seat is None:
                raise NotFound(f"game {uid} has no seat {position + 1}")
            return seat_settings(game, seat)

    def _unfinished_seats(self, s: Session, email: str) -> list[tuple[Game, Seat]]:
        rows = s.exec(select(Game, Seat).join(Seat, col(Seat.game_id) == col(Game.id)).where(
            Seat.email == email, col(Game.status).in_((OPEN, ACTIVE)),
            col(Seat.is_bot).is_(False))).all()
        return [(game, seat) for game, seat in rows]

    def _running_seats(self, s: Session, email: str) -> list[tuple[Game, Seat]]:
        rows = s.exec(select(Game, Seat).join(Seat, col(Seat.game_id) == col(Game.id)).where(
            Seat.email == email, Game.status == ACTIVE, col(Seat.is_bot).is_(False))).all()
        return [(game, seat) for game, seat in rows]

    def _tell_others(self, s: Session, game: Game, seat: Seat, absence: Absence) -> None:
        payload = {"position": seat.position, "player": seat.player_name,
                   "from": iso_or_none(absence.starts_at), "until": iso_or_none(absence.ends_at),
                   "mode": absence.mode}
        for other in s.exec(select(Seat).where(Seat.game_id == game.id)).all():
            if other.position != seat.position and human_with_address(other):
                enqueue_notice(s, self.settings, game=game, seat=other, kind=AWAY_NOTICE,
                               seq=0, payload=payload, extra=f"a{absence.id}")


@dataclass
class SettingsChange:
    """What a player asks to change of their own settings; None leaves a setting as it is.

    ``quiet`` and ``timezone``: an empty string clears them (no quiet hours; UTC), and a
    ``quiet`` given without ``timezone`` keeps the seat's time zone. ``anytime_windows`` (a game's
    seat option, ``GameUI.seat_options``: the chance to play an any-time card as another
    player's turn starts) is part of the dealt game, so it can only change before the start, and
    only for this seat.
    ``reactions`` is the seat's standing choice for its windows (one of its game's
    :attr:`Ruleset.standing_choices`), private to the seat and changed for this seat only."""

    mail: str | None = None
    language: str | None = None
    quiet: str | None = None
    timezone: str | None = None
    anytime_windows: bool | None = None
    reactions: str | None = None
    everywhere: bool = False

    def check(self) -> None:
        if self.mail is not None and self.mail not in MAIL_MODES:
            raise BadRequest(f"mail must be one of {', '.join(MAIL_MODES)}, not '{self.mail}'",
                             words=(MAIL_REFUSED, {"choices": ", ".join(MAIL_MODES),
                                                   "mail": self.mail}))
        if self.language is not None and self.language not in LANGUAGES:
            raise BadRequest(f"language must be one of {', '.join(LANGUAGES)}, "
                             f"not '{self.language}'",
                             words=(LANGUAGE_REFUSED, {"choices": ", ".join(LANGUAGES),
                                                       "language": self.language}))
        if self.touches_clock():
            check_quiet(self.quiet or None, self.timezone or None)
        if (self.mail, self.language, self.quiet, self.timezone, self.anytime_windows,
                self.reactions) == (None, None, None, None, None, None):
            raise BadRequest("nothing to change: give mail, language, quiet hours, a time "
                             "zone, anytime_windows or reactions",
                             words=(NOTHING_TO_CHANGE, {}))

    def touches_clock(self) -> bool:
        return self.quiet is not None or self.timezone is not None

    def apply(self, seat: Seat, *, this_seat: bool) -> None:
        notify = dict(seat.notify or {})
        if self.mail is not None:
            notify.pop("digest", None)  # the older form of mail: digest
            notify["mail"] = self.mail
        if self.language is not None:
            seat.language = self.language
        if self.touches_clock():
            quiet = notify.get("quiet") if self.quiet is None else self.quiet
            zone_name = notify.get("timezone") if self.timezone is None else self.timezone
            notify = {k: v for k, v in notify.items() if k not in ("quiet", "timezone")}
            notify |= check_quiet(quiet or None, zone_name or None)
        if self.anytime_windows is not None and this_seat:
            notify["anytime_windows"] = self.anytime_windows
        if self.reactions is not None and this_seat:
            notify[REACTIONS] = self.reactions
        seat.notify = notify


def seat_settings(game: Game, seat: Seat) -> dict[str, Any]:
    """A seat's own settings as the API, the CLI and the pages show them."""
    prefs = seat.notify or {}
    return {
        "game": game.uid,
        "position": seat.position,
        "mail": mail_mode(seat),
        "language": seat.language,
        "quiet": prefs.get("quiet"),
        "timezone": prefs.get("timezone"),
        "anytime_windows": bool(prefs.get("anytime_windows", False)),
        "ruleset": game.ruleset,
        "reactions": str(prefs.get(REACTIONS, ASK)),
        "reaction_choices": list(ruleset(game.ruleset).standing_choices),
    }


def absence_json(absence: Absence) -> dict[str, Any]:
    return {"id": absence.id, "email": absence.email, "from": iso_or_none(absence.starts_at),
            "until": iso_or_none(absence.ends_at), "mode": absence.mode}

