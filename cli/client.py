"""The player's side of the JSON API: the seat tokens kept in a private config file, the HTTP
calls, and finding a game from what a player types.

The config file (``client.json`` in the platform's config folder, or ``TITANPOST_CONFIG``) holds
one entry per game: the server, the seat's API token, its position and the game's name. It is
written with mode 0600 (a new file each time, moved into place) and never loosened.
``TITANPOST_SERVER`` with ``TITANPOST_TOKEN`` adds a seat without any file.

Every failure is a :class:`ClientError`: one line that says what to do, exit code 1.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import click
import requests

from cli.speech import ENGLISH, lang, tr

CONFIG_ENV: Final = "TITANPOST_CONFIG"
SERVER_ENV: Final = "TITANPOST_SERVER"
TOKEN_ENV: Final = "TITANPOST_TOKEN"
TIMEOUT: Final = 15.0
FORMAT: Final = 1
USER_AGENT: Final = "titanpost-cli"
SHORT_ID: Final = 8
IDEMPOTENCY_KEY: Final = "Idempotency-Key"
RETRIES: Final = 3
"""Tries of a request sent with an Idempotency-Key whose answer is lost (one second more
between each)."""


class ClientError(click.ClickException):
    """A refusal or failure shown as one line on standard error (exit code 1)."""

    exit_code = 1

    def __init__(self, message: str, *, status: int | None = None,
                 body: Mapping[str, Any] | None = None) -> None:
        super().__init__(" ".join(message.split()))
        self.status = status
        self.body: dict[str, Any] = dict(body or {})


class Unreachable(ClientError):
    """The server did not answer (refused, timed out, not HTTP)."""


@dataclass
class Seat:
    """One seat's API token for one game on one server."""

    server: str
    game: str
    token: str = field(repr=False)
    position: int
    name: str = ""
    from_env: bool = False
    contribution: str = ""
    """The randomness this client gave the deal when it took the seat (see docs/fairness.md)."""
    commitment: str = ""
    """The commitment to the game's secret the server showed when the seat was taken (or, for
    a seat logged in with its token, first fetched)."""
    seen: dict[str, Any] = field(default_factory=dict)
    """What this client was shown of the game's dealing, kept each time it fetches the game
    (:func:`remember_shown`): the facts the commitment covers as first shown, the rules
    version once the game started, and the newest log head (its length and digest), which
    ``verify-fair`` finds again in the published record."""

    @property
    def short(self) -> str:
        return self.game[:SHORT_ID]

    @property
    def label(self) -> str:
        """How the game is named in messages: ``Sunday race (3f2a9c1d)``."""
        return f"{self.name} ({self.short})" if self.name else tr("game {id}", id=self.short)

    def api(self) -> Api:
        return Api(self.server, self.token, who=self.label)

    def stored(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("from_env")
        data["label"] = self.label
        return data


# ---------------------------------------------------------------------- the server's address


def normalise_server(url: str) -> str:
    """``host:5000``, ``http://host/``, ``http://host/api`` -> ``http://host:5000`` form."""
    text = url.strip()
    if not text:
        raise click.UsageError(tr("give the server's address, e.g. {example}",
                                  example="https://play.example.org"))
    if "://" not in text:
        text = ("http://" if text.startswith(("localhost", "127.", "[::1]")) else "https://") + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise click.UsageError(tr("'{url}' is not a server address (http:// or https://)",
                                  url=url))
    path = parts.path.rstrip("/")
    if path.endswith("/api"):
        path = path[: -len("/api")]
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def split_invitation(url: str) -> tuple[str, str] | None:
    """(server, invitation token) of an invitation link ``https://host/join/<token>``."""
    if "/join/" not in url:
        return None
    parts = urlsplit(url.strip() if "://" in url else "https://" + url.strip())
    head, _, token = parts.path.rpartition("/join/")
    token = token.strip("/")
    if not token or "/" in token:
        return None
    base = urlunsplit((parts.scheme, parts.netloc, head, "", ""))
    return normalise_server(base), token


# ---------------------------------------------------------------------- HTTP


class Api:
    """JSON calls to one server, with one seat's token (or none)."""

    def __init__(self, server: str, token: str | None = None, *, who: str = "",
                 timeout: float = TIMEOUT) -> None:
        self.server = server
        self.token = token
        self.who = who
        self.timeout = timeout

    def get(self, path: str, *, allow: Iterable[int] = ()) -> tuple[int, dict[str, Any]]:
        return self.call("GET", path, allow=allow)

    def post(self, path: str, body: Mapping[str, Any] | None = None, *,
             allow: Iterable[int] = ()) -> tuple[int, dict[str, Any]]:
        return self.call("POST", path, body=dict(body or {}), allow=allow)

    def post_safely(self, path: str, body: Mapping[str, Any],
                    tries: int = RETRIES) -> tuple[int, dict[str, Any]]:
        """POST a request that must not be done twice (an invitation's accept: its token is
        shown once) with an ``Idempotency-Key``, sent again with the same key when its answer
        is lost (no answer, or a server or gateway failure) or the first try is still being
        processed: the server then answers with the first answer."""
        key = str(uuid.uuid4())
        for attempt in range(1, tries + 1):
            try:
                return self.call("POST", path, body=dict(body), key=key)
            except ClientError as exc:
                if attempt == tries or not _worth_again(exc):
                    raise
                time.sleep(attempt)
        raise AssertionError("unreachable")

    def delete(self, path: str) -> tuple[int, dict[str, Any]]:
        return self.call("DELETE", path)

    def patch(self, path: str, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        return self.call("PATCH", path, body=dict(body))

    def download(self, path: str) -> requests.Response:
        """A GET whose answer is a file (not JSON): the response of a 2xx; else ClientError,
        as :meth:`call` says it."""
        try:
            response = requests.get(f"{self.server}/api{path}", timeout=self.timeout * 4,
                                    allow_redirects=False, headers={
                                        "User-Agent": USER_AGENT, "Accept-Language": lang(),
                                        "Authorization": f"Bearer {self.token}"})
        except requests.exceptions.RequestException as exc:
            raise Unreachable(tr("cannot talk to {server}: {problem}", server=self.server,
                                 problem=_first_line(exc))) from None
        if 200 <= response.status_code < 300:
            return response
        raise self.refusal(response.status_code, _json_object(response) or {})

    def call(self, method: str, path: str, *, body: dict[str, Any] | None = None,
             allow: Iterable[int] = (), key: str | None = None) -> tuple[int, dict[str, Any]]:
        """(status, JSON body) of a 2xx answer or of a status in ``allow``; else ClientError.
        ``key``: the request's Idempotency-Key."""
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if lang() != ENGLISH:  # a refusal's reason in the command's language
            headers["Accept-Language"] = lang()
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if key:
            headers[IDEMPOTENCY_KEY] = key
        url = f"{self.server}/api{path}"
        try:
            response = requests.request(method, url, json=body, headers=headers,
                                        timeout=self.timeout, allow_redirects=False)
        except requests.exceptions.ConnectionError as exc:
            reason = (tr("connection refused") if "refused" in str(exc).lower()
                      else tr("no connection"))
            raise Unreachable(tr("cannot reach {server} ({reason}): is the server running and "
                                 "the address right?", server=self.server, reason=reason)
                              ) from None
        except requests.exceptions.Timeout:
            raise Unreachable(tr("{server} did not answer within {seconds} s: try again later",
                                 server=self.server, seconds=format(self.timeout, "g"))) from None
        except requests.exceptions.RequestException as exc:
            raise Unreachable(tr("cannot talk to {server}: {problem}", server=self.server,
                                 problem=_first_line(exc))) from None
        status = response.status_code
        data = _json_object(response)
        if data is None:
            if status >= 500:
                raise ClientError(tr("the server failed ({status} {reason}): try again later",
                                     status=status, reason=response.reason), status=status)
            raise Unreachable(tr("{server} answered {status} without JSON: is it a Titan Post "
                                 "server?", server=self.server, status=status), status=status)
        if 200 <= status < 300 or status in set(allow):
            return status, data
        raise self.refusal(status, data)

    def refusal(self, status: int, data: Mapping[str, Any]) -> ClientError:
        message = _first_line(said(data) or f"HTTP {status}")
        if data.get("detail") and (lang() == ENGLISH or not data.get("message")):
            # (the field by field detail is English: the message in words says it)
            message += ": " + _details(data["detail"])
        if status == 401 and self.who.startswith("TITANPOST_"):
            return ClientError(tr("the server refused {what} ({message}): check it",
                                  what=self.who, message=message), status=status, body=data)
        if status == 401:
            whose = (tr("the API token of {game}", game=self.who) if self.who
                     else tr("the API token"))
            return ClientError(tr("the server refused {what} ({message}): log in again with "
                                  "{command}", what=whose, message=message,
                                  command=tr("`titanpost login <invitation link or server> "
                                             "--token ...`")),
                               status=status, body=data)
        if status >= 500:
            return ClientError(tr("the server failed ({status}): {message}; try again later",
                                  status=status, message=message), status=status, body=data)
        return ClientError(message, status=status, body=data)


def said(data: Mapping[str, Any]) -> str:
    """A refusal's reason for the reader: ``error`` (the server's English, the most exact)
    in English, else ``message``, the reason in the language the request asked for."""
    reason = data.get("message") if lang() != ENGLISH else None
    return str(reason or data.get("error") or "")


def _worth_again(exc: ClientError) -> bool:
    """Whether a request refused with ``exc`` may succeed when sent again with its key: no
    answer came, a gateway or the server failed, or the first try is still being processed."""
    if isinstance(exc, Unreachable) or (exc.status or 0) >= 500:
        return True
    return exc.status == 409 and IDEMPOTENCY_KEY in exc.message


def _json_object(response: requests.Response) -> dict[str, Any] | None:
    try:
        data = response.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _first_line(value: Any) -> str:
    lines = str(value).strip().splitlines()
    return lines[0] if lines else str(value)


def _details(detail: Any) -> str:
    """apiflask's field errors ``{"json": {"from": ["Not a valid datetime."]}}`` in a line."""
    found: list[str] = []

    def walk(node: Any, name: str) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                walk(value, str(key) if key not in ("json", "query") else name)
        elif isinstance(node, list):
            found.append(f"{name}: {' '.join(str(item) for item in node)}")
        else:
            found.append(f"{name}: {node}")

    walk(detail, "request")
    return "; ".join(found)


# ---------------------------------------------------------------------- the config file


def config_path() -> Path:
    override = os.environ.get(CONFIG_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("titanpost")) / "client.json"


@dataclass
class Config:
    """The seats this person has logged in with, by game id; and the addresses signed in by
    mail (``titanpost login EMAIL``), by server: ``{"email": ..., "token": account token}``."""

    path: Path
    seats: dict[str, Seat] = field(default_factory=dict)
    server: str | None = None  # the last server logged in to
    accounts: dict[str, dict[str, str]] = field(default_factory=dict)
    _env: list[Seat] | None = field(default=None, repr=False)

    @classmethod
    def load(cls, path: Path | None = None) -> Config:
        path = path or config_path()
        config = cls(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return config
        except OSError as exc:
            raise ClientError(tr("cannot read {path}: {problem}", path=path,
                                 problem=exc.strerror)) from None
        try:
            data = json.loads(text)
            config.server = data.get("server")
            for server, entry in (data.get("accounts") or {}).items():
                config.accounts[str(server)] = {"email": str(entry["email"]),
                                                "token": str(entry["token"])}
            for uid, entry in (data.get("games") or {}).items():
                config.seats[uid] = Seat(
                    server=str(entry["server"]), game=str(uid), token=str(entry["token"]),
                    position=int(entry.get("position", 0)), name=str(entry.get("name") or ""),
                    contribution=str(entry.get("contribution") or ""),
                    commitment=str(entry.get("commitment") or ""),
                    seen=dict(entry.get("seen") or {}),
                )
        except (ValueError, KeyError, TypeError, AttributeError):
            raise ClientError(tr("{path} is not a Titan Post client file: fix it, or remove it "
                                 "and log in again", path=path)) from None
        return config

    def save(self) -> None:
        """Write the file with mode 0600: a new private file replaces the old one."""
        data = {
            "format": FORMAT,
            "server": self.server,
            "games": {uid: seat.stored() for uid, seat in sorted(self.seats.items())},
        }
        if self.accounts:
            data["accounts"] = dict(sorted(self.accounts.items()))
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle, temp = tempfile.mkstemp(prefix=".client-", suffix=".json", dir=folder)
            try:
                if hasattr(os, "fchmod"):  # mkstemp made it 0600 already; say so anyway
                    os.fchmod(handle, 0o600)
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    json.dump(data, out, indent=2, sort_keys=True)
                    out.write("\n")
                os.replace(temp, self.path)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise ClientError(tr("cannot write {path}: {problem}", path=self.path,
                                 problem=exc.strerror)) from None

    def add(self, seat: Seat) -> None:
        self.seats[seat.game] = seat
        self.server = seat.server

    def keep_shown(self, seat: Seat) -> None:
        """Write what ``seat`` was shown of its game's dealing (:func:`remember_shown`) into
        the file, if the file holds the seat (a seat of the environment is not kept)."""
        kept = self.seats.get(seat.game)
        if kept is None or kept.server != seat.server or kept.token != seat.token:
            return
        kept.commitment, kept.seen = seat.commitment, dict(seat.seen)
        self.save()

    def account_seat(self, text: str) -> Seat | None:
        """The seat an address signed in by mail holds in the one game ``text`` names among
        its games (GET /api/account/games), however it was joined: a seat token of its own is
        fetched for this client (POST /api/account/games/<id>/seat) and kept, as a login
        would keep it. None when no such game is the address's."""
        for server, account in sorted(self.accounts.items()):
            api = Api(server, account["token"], who=tr("the account token"))
            _, body = api.get("/account/games")
            rows = [row for row in body.get("games") or []
                    if isinstance(row, dict) and row.get("game")]
            games = [Seat(server=server, game=str(row["game"]), token="",
                          position=int(row.get("position") or 0), name=str(row.get("name") or ""))
                     for row in rows]
            matches = match_games(games, text)
            if len(matches) != 1:
                continue
            _, given = api.post(f"/account/games/{matches[0].game}/seat")
            seat = Seat(server=server, game=str(given["game"]), token=str(given["api_token"]),
                        position=int(given["position"]), name=matches[0].name)
            self.add(seat)
            self.save()
            return seat
        return None

    # --- every known seat, with the environment's ------------------------------------------

    def all_seats(self) -> list[Seat]:
        """The file's seats and the one of TITANPOST_SERVER + TITANPOST_TOKEN (found on the
        server on first use), most recent server first."""
        seats = dict(self.seats)
        for seat in self.env_seats():
            seats[seat.game] = seat
        return list(seats.values())

    def env_seats(self) -> list[Seat]:
        if self._env is None:
            self._env = []
            token = os.environ.get(TOKEN_ENV, "").strip()
            if token:
                server = os.environ.get(SERVER_ENV, "").strip() or self.server
                if not server:
                    raise ClientError(tr("{token} is set but not {server}: set it to the "
                                         "server's address", token=TOKEN_ENV,
                                         server=SERVER_ENV))
                seat = find_seat(normalise_server(server), token, where=TOKEN_ENV)
                seat.from_env = True
                self._env.append(seat)
        return self._env

    def find(self, text: str) -> Seat:
        """The seat of the game named by ``text``: its id, a unique prefix of it, its name or
        a unique prefix of its name (case does not matter); among the seats logged in with,
        then among the games of the addresses signed in by mail (:meth:`account_seat`)."""
        seats = self.all_seats()
        if not match_games(seats, text) and self.accounts:
            found = self.account_seat(text)
            if found is not None:
                return found
        if not seats:
            raise ClientError(tr("you are not logged in to any game: run {command} (or set "
                                 "{server} and {token})",
                                 command=tr("`titanpost login <invitation link>`"),
                                 server=SERVER_ENV, token=TOKEN_ENV))
        matches = match_games(seats, text)
        if len(matches) == 1:
            return matches[0]
        known = ", ".join(f"{s.short} {s.name!r}" if s.name else s.short for s in seats)
        if not matches:
            raise ClientError(tr("no game of yours matches '{text}' (yours: {known})",
                                 text=text, known=known))
        both = ", ".join(s.label for s in matches)
        raise ClientError(tr("'{text}' matches several games ({games}): give more of the id",
                             text=text, games=both))


def match_games(seats: list[Seat], text: str) -> list[Seat]:
    wanted = text.strip().lower()
    if not wanted:
        return []
    tests: list[Callable[[Seat], bool]] = [
        lambda s: s.game.lower() == wanted,
        lambda s: s.name.lower() == wanted,
        lambda s: s.game.lower().startswith(wanted),
        lambda s: s.name.lower().startswith(wanted),
    ]
    for test in tests:
        found = [seat for seat in seats if test(seat)]
        if found:
            return found
    return []


def find_seat(server: str, token: str, *, where: str = "the token") -> Seat:
    """The seat an API token belongs to (GET /api/me), with its game's name."""
    api = Api(server, token, who=where)
    _, me = api.get("/me")
    if not isinstance(me.get("game"), str) or not isinstance(me.get("position"), int):
        raise ClientError(tr("{server} did not say which seat {what} is: log in with the "
                             "game's invitation link", server=server,
                             what=where or tr("the API token")))
    _, state = api.get(f"/games/{me['game']}")
    name = str((state.get("game") or {}).get("name") or "")
    return Seat(server=server, game=me["game"], token=token, position=int(me["position"]),
                name=name)


def seat_language(seat: Seat) -> str | None:
    """The language of ``seat`` (its player's setting on the server); None where the server
    does not say (one from before the setting, or a seat it does not know: the command that
    follows says so)."""
    status, settings = seat.api().get(f"/games/{seat.game}/me/settings",
                                      allow=(401, 403, 404))
    found = settings.get("language") if status == 200 else None
    return found if isinstance(found, str) else None


# ---------------------------------------------------------------------- what the game showed

SHOWN_FACTS: Final = ("game", "ruleset", "variant", "scheme", "commitment_version",
                      "seed_chosen")
"""The facts of a game's dealing a client keeps as first shown: those its commitment covers."""


def remember_shown(seat: Seat, state: Mapping[str, Any]) -> bool:
    """Keep in ``seat`` what the game's answer ``state`` (``GET /api/games/<id>``) shows of its
    dealing: the commitment and the facts it covers as first shown (a later answer showing
    others does not replace them: ``verify-fair`` says so), the rules version once the game
    started, and the log's head when newer. Whether anything new was kept."""
    game = state.get("game") if isinstance(state, Mapping) else None
    if not isinstance(game, Mapping) or game.get("game") != seat.game:
        return False
    fair = game.get("fairness")
    if not isinstance(fair, Mapping):
        return False
    before = (seat.commitment, dict(seat.seen))
    if not seat.commitment and fair.get("commitment"):
        seat.commitment = str(fair["commitment"])
    shown = {"game": game.get("game"), "ruleset": game.get("ruleset"),
             "variant": game.get("variant"), "scheme": fair.get("scheme"),
             "commitment_version": fair.get("commitment_version"),
             "seed_chosen": fair.get("seed_chosen")}
    if fair.get("engine_version") is not None:
        shown["engine_version"] = fair["engine_version"]
    for name, value in shown.items():
        seat.seen.setdefault(name, value)
    head = fair.get("log_head")
    if isinstance(head, Mapping) and isinstance(head.get("seq"), int):
        kept = seat.seen.get("head")
        if not isinstance(kept, Mapping) or int(kept.get("seq", -1)) < head["seq"]:
            seat.seen["head"] = {"seq": head["seq"], "digest": str(head.get("digest"))}
    if game.get("status") in ("finished", "abandoned"):
        seat.seen.setdefault("status", game.get("status"))
    return (seat.commitment, seat.seen) != before
