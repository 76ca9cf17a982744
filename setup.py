"""The one build step pyproject.toml cannot declare: the wheel carries the checkout's top-level
``templates/`` and ``migrations/`` inside the package, as ``app/_data/templates`` and
``app/_data/migrations``, where ``app.core.data.data_folder`` finds them once installed.

The folders stay where the project keeps them. A wheel gets a copy; an editable install reads
them in the checkout (its "strict" mode links each file into its link tree, through the output
mapping below). Everything else about the package is in pyproject.toml; MANIFEST.in puts the
folders in the source distribution.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
DATA_FOLDERS = ("templates", "migrations")
PACKAGED = Path("app", "_data")


class BuildWithData(build_py):
    """``build_py``, then a fresh copy of each data folder into the built package."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for name in DATA_FOLDERS:
            shutil.rmtree(Path(self.build_lib, PACKAGED, name), ignore_errors=True)
        for target, source in self._data_files().items():
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), *self._data_files()]

    def get_output_mapping(self) -> dict[str, str]:
        return {**super().get_output_mapping(), **self._data_files()}

    def _data_files(self) -> dict[str, str]:
        """Each data file's place in the built package -> the file in the checkout."""
        files: dict[str, str] = {}
        for name in DATA_FOLDERS:
            for source in sorted((HERE / name).rglob("*")):
                if _shipped(source):
                    target = Path(self.build_lib, PACKAGED, source.relative_to(HERE))
                    files[str(target)] = str(source)
        return files


def _shipped(path: Path) -> bool:
    """A file of a data folder, not Python's bytecode cache of its migration scripts."""
    return path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"


setup(cmdclass={"build_py": BuildWithData})
