"""Where the server's own files are: the page and mail templates and the database migrations.

A checkout keeps them at its top, next to ``app/`` (``templates/``, ``migrations/``). An
installed wheel cannot reach outside its package, so the wheel carries them inside it, as
``app/_data/templates`` and ``app/_data/migrations`` (``setup.py``'s build step copies them
there). Everything that reads them asks :func:`data_folder`, which finds them either way:
installed from a wheel, editable, or imported straight from a checkout.

(The built-in circuits and the translation catalogues live inside the package already and are
package data as they are.)
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Final, Literal

DataName = Literal["templates", "migrations"]
PACKAGED: Final = "_data"
"""The folder inside the package where a wheel carries the data folders."""


@cache
def data_folder(name: DataName) -> Path:
    """The folder ``name`` (``templates`` or ``migrations``): the one a wheel carries inside
    the package when there is one, else the checkout's top-level folder.

    Raises FileNotFoundError naming both places when neither is there (a package installed
    without its data)."""
    package = package_folder()
    places = (package / PACKAGED / name, package.parent / name)
    for folder in places:
        if folder.is_dir():
            return folder
    raise FileNotFoundError(
        f"Titan Post's {name} folder is missing (looked in {places[0]} and {places[1]}): "
        "reinstall the package, e.g. python3 -m pip install ."
    )


@cache
def package_folder() -> Path:
    """The folder of the ``app`` package on disk (templates and migrations are read by Jinja
    and Alembic from real folders, so an import from a zip file is refused)."""
    root = resources.files("app")
    if not isinstance(root, Path):
        raise RuntimeError(f"Titan Post must be installed as files, not imported from {root}")
    return root
