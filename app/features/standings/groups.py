"""Named groups of friends whose standings are kept together (:class:`PlayerGroup`).

The owner is the signed-in address that made the group; it alone sees the group, adds and
removes members, and deletes it: for any other address a group's id is one that does
not exist (NotFound, the same answer), so that nobody learns another's groups. The owner is a
member from the start (and may remove itself).

An address may be added only when it has shared a game with the owner (both held a person's
seat of one game that started): the owner already knows it plays here, by the name it used. A
stranger's address cannot be added, so that a group never becomes a way to look up who plays
with whom among people the owner does not know. The refusal depends on the owner's own games
alone.

Which games a group's table counts: app/features/standings/tables.py (:func:`group_table`).
"""

from __future__ import annotations

import uuid
from typing import Any, Final

from sqlalchemy import delete, func
from sqlmodel import Session, col, select

from app.core.i18n import N_
from app.core.models import OPEN, Game, PlayerGroup, PlayerGroupMember, Seat
from app.service import BadRequest, GameService, NotFound
from app.service.errors import LineRule, checked_line, is_address, refuse_unseen_in_address
from app.service.records import AnswerRecorder, record_answer

from .tables import person_seat

GROUPS_PER_OWNER: Final = 50
MEMBERS_PER_GROUP: Final = 100

GROUP_NAME: Final = LineRule(
    100,
    N_("a group's name is one line of characters that can be seen: no control, invisible or "
       "unassigned character, line break or text-direction mark (it holds {character})"),
    N_("a group's name is at most {limit} characters (this one has {length})"))
NO_NAME: Final = N_("give the group a name")
NO_GROUP: Final = N_("you have no group '{group}'")
NOT_ADDRESS: Final = N_("'{email}' is not an e-mail address")
NEVER_PLAYED: Final = N_("you have played no game with {email}: a group holds the addresses "
                         "of those you play with")
TOO_MANY_GROUPS: Final = N_("you have {limit} groups already: delete one first")
TOO_MANY_MEMBERS: Final = N_("a group holds {limit} addresses at most")
NOT_MEMBER: Final = N_("{email} is not in this group")


def _refuse(message: str, **fields: Any) -> BadRequest:
    return BadRequest(message.format(**fields), words=(message, fields))


def _missing(uid: str) -> NotFound:
    fields = {"group": str(uid)[:40]}
    return NotFound(NO_GROUP.format(**fields), words=(NO_GROUP, fields))


def owned(s: Session, owner: str, uid: str) -> PlayerGroup:
    """``owner``'s group ``uid``; NotFound when there is none, or it is another's."""
    if not isinstance(uid, str) or len(uid) > 32:
        raise _missing(str(uid))
    group = s.exec(select(PlayerGroup).where(PlayerGroup.uid == uid)).first()
    if group is None or group.owner_email != owner:
        raise _missing(uid)
    return group


def _members(s: Session, group: PlayerGroup) -> list[str]:
    return list(s.exec(select(PlayerGroupMember.email)
                       .where(PlayerGroupMember.group_id == group.id)
                       .order_by(col(PlayerGroupMember.email))).all())


def _json(s: Session, group: PlayerGroup) -> dict[str, Any]:
    return {"group": group.uid, "name": group.name, "members": _members(s, group)}


def groups_of(service: GameService, owner: str) -> list[dict[str, Any]]:
    """``owner``'s groups (id, name and members' addresses), by name."""
    with service.session() as s:
        found = s.exec(select(PlayerGroup).where(PlayerGroup.owner_email == owner)
                       .order_by(col(PlayerGroup.name), col(PlayerGroup.id))).all()
        return [_json(s, group) for group in found]


def group(service: GameService, owner: str, uid: str) -> dict[str, Any]:
    """``owner``'s group ``uid`` (NotFound for another's)."""
    with service.session() as s:
        return _json(s, owned(s, owner, uid))


def make(service: GameService, owner: str, name: str, *,
         idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """A new group of ``owner`` named ``name``, the owner its first member."""
    name = checked_line(str(name or ""), GROUP_NAME)
    if not name:
        raise _refuse(NO_NAME)
    with service.session(write=True) as s:
        had = s.exec(select(func.count()).select_from(PlayerGroup)
                     .where(PlayerGroup.owner_email == owner)).one()
        if int(had) >= GROUPS_PER_OWNER:
            raise _refuse(TOO_MANY_GROUPS, limit=GROUPS_PER_OWNER)
        made = PlayerGroup(uid=uuid.uuid4().hex, name=name, owner_email=owner)
        s.add(made)
        s.flush()
        assert made.id is not None
        s.add(PlayerGroupMember(group_id=made.id, email=owner))
        answer = {"group": made.uid, "name": made.name, "members": [owner]}
        record_answer(s, idempotency, answer)
        s.commit()
        return answer


def shared_a_game(s: Session, owner: str, email: str) -> bool:
    """Whether ``email`` and ``owner`` held a person's seat of one game that started."""
    if email == owner:
        return True
    mine = select(Seat.game_id).where(person_seat(), Seat.email == owner)
    found = s.exec(select(func.count()).select_from(Seat)
                   .join(Game, col(Game.id) == col(Seat.game_id))
                   .where(person_seat(), Seat.email == email, Game.status != OPEN,
                          col(Seat.game_id).in_(mine))).one()
    return int(found) > 0


def _address(text: str) -> str:
    email = str(text or "").strip().lower()
    refuse_unseen_in_address(email)
    if not is_address(email):
        raise _refuse(NOT_ADDRESS, email=email[:254])
    return email


def add(service: GameService, owner: str, uid: str, text: str) -> dict[str, Any]:
    """Add address ``text`` to ``owner``'s group ``uid`` (nothing changes when it is in)."""
    email = _address(text)
    with service.session(write=True) as s:
        found = owned(s, owner, uid)
        members = _members(s, found)
        if email not in members:
            if len(members) >= MEMBERS_PER_GROUP:
                raise _refuse(TOO_MANY_MEMBERS, limit=MEMBERS_PER_GROUP)
            if not shared_a_game(s, owner, email):
                raise _refuse(NEVER_PLAYED, email=email)
            assert found.id is not None
            s.add(PlayerGroupMember(group_id=found.id, email=email))
            s.commit()
        return _json(s, found)


def remove(service: GameService, owner: str, uid: str, text: str) -> dict[str, Any]:
    """Take address ``text`` out of ``owner``'s group ``uid``."""
    email = str(text or "").strip().lower()
    with service.session(write=True) as s:
        found = owned(s, owner, uid)
        if email not in _members(s, found):
            raise _refuse(NOT_MEMBER, email=email[:254])
        s.execute(delete(PlayerGroupMember).where(
            col(PlayerGroupMember.group_id) == found.id, col(PlayerGroupMember.email) == email))
        s.commit()
        return _json(s, found)


def drop(service: GameService, owner: str, uid: str) -> None:
    """Delete ``owner``'s group ``uid`` with its members."""
    with service.session(write=True) as s:
        found = owned(s, owner, uid)
        s.execute(delete(PlayerGroupMember).where(col(PlayerGroupMember.group_id) == found.id))
        s.delete(found)
        s.commit()


def members_of(service: GameService, owner: str, uid: str) -> tuple[str, list[str]]:
    """(name, members) of ``owner``'s group ``uid``."""
    with service.session() as s:
        found = owned(s, owner, uid)
        return found.name, _members(s, found)
