"""The API documentation page (/api/docs) without a CDN: Swagger UI's stylesheet, scripts and
icon come from the swagger-ui-bundle package, served by this server, so that the page works
offline (apiflask's defaults load them from cdn.jsdelivr.net and apiflask.com).

The package's Swagger UI (4.x) renders OpenAPI 3.0 documents only: given apiflask's default,
3.1.0, the page says "Unable to render this definition". The document is written as 3.0.3."""

from __future__ import annotations

from typing import Final

from flask import Flask, Response, abort, send_from_directory
from swagger_ui_bundle import swagger_ui_path

PREFIX: Final = "/api/docs/assets"
ASSETS: Final = frozenset({"swagger-ui.css", "swagger-ui-bundle.js",
                           "swagger-ui-standalone-preset.js", "favicon-32x32.png"})
"""The only files served (the package holds more: source maps, its own index page)."""
MAX_AGE_SECONDS: Final = 24 * 3600
OPENAPI_VERSION: Final = "3.0.3"
"""The OpenAPI version of /api/openapi.json: the newest the bundled Swagger UI renders."""


def install_docs_assets(app: Flask) -> None:
    """Point the docs page at this server's copies of Swagger UI and serve them."""
    app.config.update(
        SWAGGER_UI_CSS=f"{PREFIX}/swagger-ui.css",
        SWAGGER_UI_BUNDLE_JS=f"{PREFIX}/swagger-ui-bundle.js",
        SWAGGER_UI_STANDALONE_PRESET_JS=f"{PREFIX}/swagger-ui-standalone-preset.js",
        DOCS_FAVICON=f"{PREFIX}/favicon-32x32.png",
        OPENAPI_VERSION=OPENAPI_VERSION,
    )
    app.add_url_rule(f"{PREFIX}/<name>", "docs_asset", _asset)


def _asset(name: str) -> Response:
    if name not in ASSETS:
        abort(404)
    return send_from_directory(str(swagger_ui_path), name, max_age=MAX_AGE_SECONDS)
