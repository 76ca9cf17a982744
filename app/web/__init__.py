"""The web application: what a browser and an API client meet.

:func:`create_app` builds it around one game service (:mod:`app.listeners`) and registers every
blueprint, the pages' (:mod:`app.web.pages`, and the features' under app/features/) and the JSON
API's (:mod:`app.web.api`), in one place. Beside it: the browser's seats in its session cookie
(:mod:`.browser_seats`), the signed links (:mod:`.links`, :mod:`.linktokens`), the pages' templates
with every game's own (:mod:`.templates`), rate limits (:mod:`.limits`), safe retries
(:mod:`.idempotency`), the checks on a request's input (:mod:`.inputcheck`), the error answers
(:mod:`.errors`), the health checks (:mod:`.health`), the API documentation's assets
(:mod:`.apidocs`) and the URL rules (:mod:`.routing`).

Imports stay inside the factory, so that a game's engine can be used without loading Flask or
a database driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apiflask import APIFlask
    from flask import Blueprint
    from flask_wtf import CSRFProtect

    from app.core.config import Settings


def create_app(settings: Settings | None = None) -> APIFlask:
    """The web application on ``settings`` (default: read from the environment)."""
    from flask_wtf import CSRFProtect

    from app.core.config import Settings
    from app.core.data import data_folder, package_folder
    from app.core.observability import configure_logging, install_request_logging, log_secrets
    from app.listeners import build_service
    from app.web.api import install_api
    from app.web.browser_seats import PageSessionInterface
    from app.web.errors import register_json_errors
    from app.web.limits import install_limits
    from app.web.routing import TitanPostFlask
    from app.web.templates import page_loader

    settings = settings or Settings.from_env()
    app = TitanPostFlask(
        "titanpost",
        title="Titan Post API",
        version="1.0",
        spec_path="/api/openapi.json",
        docs_path="/api/docs",
        template_folder=str(data_folder("templates")),
        # The package's folder: the import name is no module, and Flask would otherwise take
        # the working directory for its root and serve its ./static/ at /static/.
        root_path=str(package_folder()),
    )
    app.config.update(
        SECRET_KEY=settings.secret_key,
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        VALIDATION_ERROR_STATUS_CODE=400,
        # A game page may stay open for days between moves: the CSRF token lives as long as
        # the browser's session instead of expiring after an hour.
        WTF_CSRF_TIME_LIMIT=None,
        AUTH_ERROR_STATUS_CODE=401,
    )
    app.jinja_loader = page_loader(data_folder("templates"))
    app.session_interface = PageSessionInterface()
    app.extensions["titanpost.settings"] = settings
    # one service per process; its listeners write the outbox mails and the deadline rows
    app.extensions["titanpost.service"] = build_service(settings)
    csrf = CSRFProtect(app)
    install_api(app)
    register_json_errors(app)
    token_apis = _register_blueprints(app, csrf, production=settings.production)
    install_limits(app, settings, token_apis)
    configure_logging(settings.log_format, settings.log_level.upper(),
                      secrets=log_secrets(settings))
    install_request_logging(app)
    return app


def _register_blueprints(app: APIFlask, csrf: CSRFProtect, *, production: bool) -> list[Blueprint]:
    """Register every blueprint of the server; return those of the JSON API that authenticate
    with tokens (exempt from CSRF, limited by the API's login limit)."""
    from app.features.calendar.feed import calendar_feed
    from app.features.chat.api import bp as chat_api
    from app.features.clock.api import bp as clock_api
    from app.features.clock.pages import bp as clock_pages
    from app.features.delivery.api import bp as delivery_api
    from app.features.live.pages import install_presence, live
    from app.features.notes.api import bp as notes_api
    from app.features.notes.pages import bp as notes_pages
    from app.features.notes.pages import install_notes_context
    from app.features.privacy.api import bp as privacy_api
    from app.features.privacy.pages import bp as privacy_pages
    from app.features.push.pages import bp as push_pages
    from app.features.rematch.api import bp as rematch_api
    from app.features.rematch.pages import bp as rematch_pages
    from app.features.signin.api import signin_api
    from app.features.signin.pages import bp as signin_pages
    from app.features.standings.api import bp as standings_api
    from app.features.standings.pages import bp as standings_pages
    from app.features.takeback.web import api as takeback_api
    from app.features.takeback.web import install_page_context
    from app.features.takeback.web import pages as takeback_pages
    from app.features.unsubscribe.links import unsubscribe
    from app.features.webhooks.api import bp as webhooks_api
    from app.features.webhooks.pages import bp as webhooks_pages
    from app.web.api.admin import bp as admin_api
    from app.web.api.games import bp as games_api
    from app.web.apidocs import install_docs_assets
    from app.web.health import health
    from app.web.links import links
    from app.web.pages import install_page_hooks
    from app.web.pages.admin import bp as admin_pages
    from app.web.pages.home import bp as home
    from app.web.pages.me import bp as me
    from app.web.pages.newgame import bp as newgame
    from app.web.pages.pictures import bp as pictures
    from app.web.pages.play import bp as play
    from app.web.pages.seats import bp as seats

    token_apis: list[Blueprint] = [games_api, chat_api, rematch_api, webhooks_api, clock_api,
                                   admin_api, takeback_api, delivery_api, notes_api,
                                   standings_api, privacy_api]
    pages: list[Blueprint] = [home, newgame, play, me, seats, admin_pages, links, pictures,
                              rematch_pages, push_pages, signin_pages, takeback_pages,
                              calendar_feed, clock_pages, webhooks_pages, live, notes_pages,
                              standings_pages, privacy_pages]
    # Answered without the browser's CSRF token: the JSON API authenticates with tokens, the
    # health checks are read by machines, mail providers POST the one-click unsubscribe blind
    # (RFC 8058), and a terminal's sign-in is authenticated by the mailed link or a token.
    without_csrf = [*token_apis, health, unsubscribe, signin_api]
    if not production:  # the outbox page (mail kept, not sent)
        from app.mail.devmail import devmail

        pages.append(devmail)
    for blueprint in [*token_apis, *pages, health, unsubscribe, signin_api]:
        app.register_blueprint(blueprint)
    for blueprint in without_csrf:
        csrf.exempt(blueprint)
    install_docs_assets(app)
    install_page_hooks(app)
    install_page_context(app)
    install_notes_context(app)
    install_presence(app)
    return token_apis
