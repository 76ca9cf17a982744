"""Titan Post: a play-by-email turn server for Titan Race.

``create_app`` builds the web application (the JSON API now; pages and mail later) around one
:class:`~app.service.GameService` shared by every entry point. Imports stay inside the factory
so that ``app.games.titanrace.engine`` can be used without loading Flask or a database driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apiflask import APIFlask

    from app.core.config import Settings


def create_app(settings: Settings | None = None) -> APIFlask:
    from flask_wtf import CSRFProtect

    from app.core.config import Settings
    from app.core.data import data_folder, package_folder
    from app.core.observability import configure_logging, install_request_logging, log_secrets
    from app.features.calendar.feed import calendar_feed
    from app.features.signin.api import signin_api
    from app.features.takeback.web import install_takeback_web
    from app.features.unsubscribe.links import unsubscribe
    from app.web.api.games import bp, install_api
    from app.web.apidocs import install_docs_assets
    from app.web.browser_seats import PageSessionInterface
    from app.web.errors import register_json_errors
    from app.web.health import health
    from app.web.limits import install_limits
    from app.web.routing import TitanPostFlask

    from .views import register_web
    from .wiring import build_service

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
    app.session_interface = PageSessionInterface()
    app.extensions["titanpost.settings"] = settings
    # one service per process; its listeners write the outbox mails and the deadline rows
    app.extensions["titanpost.service"] = build_service(settings)
    csrf = CSRFProtect(app)
    csrf.exempt(bp)  # the JSON API authenticates with tokens, not cookies
    install_api(app)
    install_docs_assets(app)
    register_json_errors(app)
    register_web(app)
    install_takeback_web(app)
    app.register_blueprint(health)
    csrf.exempt(health)
    app.register_blueprint(unsubscribe)
    csrf.exempt(unsubscribe)  # mail providers POST the one-click unsubscribe blind (RFC 8058)
    app.register_blueprint(calendar_feed)
    app.register_blueprint(signin_api)
    csrf.exempt(signin_api)  # a terminal's JSON, authenticated by the mailed link or a token
    install_limits(app, settings)
    configure_logging(settings.log_format, settings.log_level.upper(),
                      secrets=log_secrets(settings))
    install_request_logging(app)
    return app
