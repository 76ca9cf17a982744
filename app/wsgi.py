"""WSGI entry point for gunicorn: ``gunicorn app.wsgi:app`` (settings from the environment)."""

from app import create_app

app = create_app()
