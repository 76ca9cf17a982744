"""The one build step pyproject.toml cannot declare: the wheel carries the checkout's top-level
``templates/`` and ``migrations/`` inside the package, as ``app/_data/templates`` and
``app/_data/migrations``, where ``app.data.data_folder`` finds them once installed.

The folders stay where the project keeps them; an editable install (and a checkout on
PYTHONPATH) reads them there, so this step copies nothing for one. Everything else about the
package is in pyproject.toml; MANIFEST.in puts the folders in the source distribution.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
DATA_FOLDERS = ("templates", "migrations")
PACKAGED = Path("app", "_data")
LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.py[cod]")


class BuildWithData(build_py):
    """``build_py``, then a fresh copy of each data folder into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in DATA_FOLDERS:
            target = Path(self.build_lib) / PACKAGED / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(HERE / name, target, ignore=LEFT_OUT)


setup(cmdclass={"build_py": BuildWithData})
