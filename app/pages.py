"""Web pages: home, my games, create, join, the game page (more in later steps)."""

from __future__ import annotations

from flask import Blueprint, render_template

from .web import my_seats

pages = Blueprint("pages", __name__)


@pages.get("/")
def home() -> str:
    return render_template("pages/home.html", seats=my_seats())
