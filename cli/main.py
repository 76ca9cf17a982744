"""The ``titanpost`` console command.

Its commands are imported only when one is run (:class:`cli.lazy.LazyGroup`): ``COMMANDS`` says
where each lives and carries its short help for ``titanpost --help``, so that listing them, or
running a player's command or ``engine run``, does not load the server (Flask, SQLAlchemy...).
"""

from __future__ import annotations

from typing import Final

import click

from app.games import GAMES
from cli.lazy import Lazy, LazyGroup
from cli.speech import N_, help_values

COMMANDS: Final[dict[str, Lazy]] = {
    # the server's processes (cli/server.py) and its admin
    "serve": Lazy("cli.server", "serve",
        N_("Run the server with the embedded defaults (SQLite file, everything in one process).")),
    "worker": Lazy("cli.server", "worker",
        N_("Run the scheduler on its own: deadlines and reminders, the outbox (with an SMTP "
        "relay), queued replies and the daily digest.")),
    "health": Lazy("cli.server", "health",
        N_("Check that the database answers (and, with --worker, that a scheduler ticks); exit 1 "
        "with one line saying what is wrong.")),
    "admin": Lazy("cli.admin", "admin",
        N_("Administer the games in the database (directly: the server need not run).")),
    "db": Lazy("cli.db", "db", N_("Create and migrate the database schema.")),
    "mail": Lazy("cli.mail", "mail",
        N_("Mail: deliver the outbox, write digests (and take in replies).")),
    "i18n": Lazy("cli.i18n", "i18n",
        N_("Keep the translations (gettext catalogues) in step with the code and templates.")),
    # the engines alone (cli/engine.py)
    "engine": Lazy("cli.engine", "engine",
        N_("Drive the rules engine directly (scenario files, demo games).")),
    # a player's commands, through a server's API (cli/player_*.py)
    "login": Lazy("cli.player_account", "login",
        N_("Log in to a game: URL is an invitation link (https://host/join/...), or the server's "
        "address with --token.")),
    "logout": Lazy("cli.player_account", "logout",
        N_("Forget the token of GAME (or of every game) on this computer.")),
    "settings": Lazy("cli.player_account", "settings",
        N_("Your own settings of GAME (mail, language, quiet hours, your standing answer to "
        "windows): changes those given, then prints the settings now in force.")),
    "vacation": Lazy("cli.player_account", "vacation",
        N_("Your away dates: deadlines stretch over them, or the computer plays for you "
           "meanwhile.")),
    "games": Lazy("cli.player_view", "games", N_("Your games: whose turn it is, your deadlines.")),
    "show": Lazy("cli.player_view", "show",
        N_("The board of GAME in colour, the players (life, laps, traps), your hand, the dice on "
        "the table, the pending decision and its deadline.")),
    "log": Lazy("cli.player_view", "log",
        N_("The move log of GAME: who played what, the dice rolled.")),
    "watch": Lazy("cli.player_view", "watch",
        N_("Show GAME and redraw it whenever something happens, until the game is over (Ctrl-C "
        "stops).")),
    "chat": Lazy("cli.player_view", "chat",
        N_("Write TEXT in GAME's chat; without TEXT, print the recent messages.")),
    "notes": Lazy("cli.player_notes", "notes",
        N_("Your private notes on GAME: without TEXT, print them; with TEXT, write one.")),
    "options": Lazy("cli.player_moves", "options",
        N_("Your legal inputs in GAME now, each with what it does.")),
    "play": Lazy("cli.player_moves", "play",
        N_("Play INPUTS in GAME: several joined with ';' are played all together or not at all.")),
    "resign": Lazy("cli.player_moves", "resign",
        N_("Leave GAME: the computer plays your seat from then on.")),
    "rematch": Lazy("cli.player_rematch", "rematch",
        N_("Play GAME (over) again, or say yes (or --no) to the rematch asked: the same "
           "players in the same seats and settings.")),
    "takeback": Lazy("cli.player_takeback", "takeback",
        N_("Ask to take back your last move in GAME; --agree or --refuse answers another's "
           "request.")),
    "standings": Lazy("cli.player_standings", "standings",
        N_("Who is ahead among the players you play with, per game and season: games, wins, "
           "average place and rating.")),
    "my-data": Lazy("cli.player_privacy", "my_data",
        N_("Download everything the server holds about the address you signed in with by "
           "mail: your seats and settings, each game and its log as your seat sees it, your "
           "notes, the mails sent to you, your sign-ins.")),
    "forget-me": Lazy("cli.player_privacy", "forget_me",
        N_("Ask the server to forget the address you signed in with by mail: its seats lose "
           "the address and are named \"a former player\", and your settings, notes, away "
           "dates, sign-ins and tokens are deleted; the games stay for the other players.")),
    "completion": Lazy("cli.completion", "completion_command",
        N_("Print the tab-completion script of SHELL (default: your $SHELL).")),
    "verify-fair": Lazy("cli.fair", "verify_fair",
        N_("Check that every random outcome of a finished game follows from its published secret, "
        "that the secret is the one committed to at the start, and that the log's hash chain is "
        "whole.")),
}
"""Every ``titanpost`` command: where it lives, and its short help (checked against the
command's own by tests/test_cli_lazy.py)."""


@click.group(cls=LazyGroup, lazy=COMMANDS,
             help=N_("Titan Post: a play-by-email server for board games: {games}."))
@click.version_option(package_name="titanpost")
def main() -> None:
    """``titanpost`` (its help is the message id above, put in the user's language)."""


help_values(main, None, games=", ".join(game.title for game in GAMES.values()))


if __name__ == "__main__":
    main()
