"""The site as an installable web app, and Web Push per device (see
:mod:`app.features.push.notifications`).

- ``/manifest.webmanifest``: the web app manifest (name, icons, theme colour, start page);
- ``/sw.js``: the service worker, served from the site's root so that its scope is the whole
  site (``app/pwa/sw.js``: it shows pushed notifications and opens the game page on a click);
- ``/icons/<name>``: the icon, as SVG and as PNG in the sizes the manifest and phones ask for,
  drawn from ``app/pwa/icon.svg`` with resvg on first request and kept in memory;
  ``/favicon.ico`` the same at 32 pixels, for whoever asks for that address;
- ``/push/key``: the server's VAPID public key, which the page subscribes with;
- ``/games/<uid>/me/push`` (POST, JSON): store this device's subscription for the browser's
  seat; ``.../push/remove`` forgets it. Both need the page's CSRF token (``X-CSRFToken``).
"""

from __future__ import annotations

import struct
from functools import cache
from pathlib import Path
from typing import Any, Final

from flask import Response, abort, g, jsonify, request, url_for
from flask.typing import ResponseReturnValue

from app.core.data import package_folder
from app.features.push.notifications import PushRefused, subscribe, unsubscribe, vapid_keys
from app.web.browser_seats import service
from app.web.pages.common import game_titles, page_blueprint
from app.web.pages.language import lang, pick_lang, tr
from app.web.pages.me import browser_seat

bp = page_blueprint("installable")

THEME_COLOUR: Final = "#2b2f3a"
BACKGROUND_COLOUR: Final = "#f6f1e7"
PNG_SIZES: Final = (180, 192, 512)
"""180: the phone's home-screen icon (``apple-touch-icon``); 192 and 512: the manifest's."""
MAX_AGE_SECONDS: Final = 24 * 3600


def _folder() -> Path:
    return package_folder() / "pwa"


@cache
def icon_png(size: int) -> bytes:
    """The icon drawn ``size`` pixels square."""
    import resvg_py

    svg = (_folder() / "icon.svg").read_text(encoding="utf-8")
    return bytes(resvg_py.svg_to_bytes(svg_string=svg, width=size, height=size))


@bp.get("/manifest.webmanifest")
def manifest() -> ResponseReturnValue:
    chosen = g.lang = pick_lang(None)
    icons: list[dict[str, Any]] = [
        {"src": url_for("installable.icon", name=f"icon-{size}.png"), "sizes": f"{size}x{size}",
         "type": "image/png", "purpose": "any"} for size in (192, 512)]
    icons.append({"src": url_for("installable.icon", name="icon-512.png"), "sizes": "512x512",
                  "type": "image/png", "purpose": "maskable"})
    icons.append({"src": url_for("installable.icon", name="icon.svg"), "sizes": "any",
                  "type": "image/svg+xml"})
    body = {
        "id": "/", "name": "Titan Post", "short_name": "Titan Post", "lang": chosen,
        "description": tr("play {games} by e-mail", games=game_titles()),
        "start_url": url_for("home.home"), "scope": "/", "display": "standalone",
        "theme_color": THEME_COLOUR, "background_color": BACKGROUND_COLOUR, "icons": icons,
    }
    response = jsonify(body)
    response.mimetype = "application/manifest+json"
    response.vary.add("Accept-Language")
    return response


@bp.get("/sw.js")
def service_worker() -> Response:
    """The worker's script; never cached long, so that a new version reaches every browser."""
    script = (_folder() / "sw.js").read_text(encoding="utf-8")
    response = Response(script, mimetype="text/javascript")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["Service-Worker-Allowed"] = "/"
    return response


FAVICON_SIZE: Final = 32


@cache
def favicon_ico() -> bytes:
    """The icon as ``/favicon.ico``: an ICO file holding one 32-pixel PNG (the form every
    browser since 2007 reads), for the browsers, feed readers and mail clients that ask for that
    address whatever the page's ``<link rel="icon">`` says."""
    png = icon_png(FAVICON_SIZE)
    header = struct.pack("<HHH", 0, 1, 1)  # reserved, type 1 (icon), one image
    entry = struct.pack("<BBBBHHII", FAVICON_SIZE, FAVICON_SIZE, 0, 0, 1, 32, len(png),
                        len(header) + 16)
    return header + entry + png


@bp.get("/favicon.ico")
def favicon() -> Response:
    response = Response(favicon_ico(), mimetype="image/vnd.microsoft.icon")
    response.cache_control.public = True
    response.cache_control.max_age = MAX_AGE_SECONDS
    return response


@bp.get("/icons/<name>")
def icon(name: str) -> Response:
    if name == "icon.svg":
        response = Response((_folder() / "icon.svg").read_bytes(), mimetype="image/svg+xml")
    else:
        sizes = {f"icon-{size}.png": size for size in PNG_SIZES}
        if name not in sizes:
            abort(404)
        response = Response(icon_png(sizes[name]), mimetype="image/png")
    response.cache_control.public = True
    response.cache_control.max_age = MAX_AGE_SECONDS
    return response


@bp.get("/push/key")
def push_key() -> ResponseReturnValue:
    return jsonify({"public_key": vapid_keys(service().engine).public_key})


@bp.post("/games/<uid>/me/push")
def push_subscribe(uid: str) -> ResponseReturnValue:
    _, seat = browser_seat(uid)
    assert seat.id is not None
    try:
        subscribe(service(), seat.id, request.get_json(silent=True))
    except PushRefused as exc:  # (the page's script shows the words)
        return jsonify({"subscribed": False, "message": exc.say(lang())}), 400
    return jsonify({"subscribed": True,
                    "message": tr("This device will tell you when it is your turn.")})


@bp.post("/games/<uid>/me/push/remove")
def push_unsubscribe(uid: str) -> ResponseReturnValue:
    _, seat = browser_seat(uid)
    assert seat.id is not None
    data = request.get_json(silent=True)
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    removed = isinstance(endpoint, str) and unsubscribe(service(), seat.id, endpoint)
    return jsonify({"removed": removed,
                    "message": tr("This device will no longer tell you of your turns.")})
