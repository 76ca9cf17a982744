"""Start-up benchmark of the ``titanpost`` command: wall times of whole processes.

    python3 bench/cli.py [--runs 15] [--scenario tests/scenarios/ability-grinder.json]
                         [--checkout DIR]

Prints the median (and best) wall time of ``titanpost --help``, ``titanpost engine run
SCENARIO`` and ``titanpost play --help`` against ``python -c "import click, rich"`` (the floor a
click and rich command cannot go under), and their ratios to that floor. It asserts nothing (the
tests check what is imported, this measures how long it takes). Run it with the virtual
environment where titanpost is installed active. ``--checkout DIR`` times the code of another
checkout instead (``python -P -c "from cli.main import main; main()"`` with DIR first on the path),
to compare before and after a change with the same packages installed (give it an export,
``git archive COMMIT app cli | tar -x -C DIR``: the runs write bytecode caches there).
PYTHONDONTWRITEBYTECODE is dropped for the runs, so that they time compiled code as an installed
package has it rather than compiling every module each time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall_times(command: list[str], runs: int, env: dict[str, str]) -> list[float]:
    """Seconds each of ``runs`` runs of ``command`` took, from start to exit (after one run to
    warm the file cache and write the bytecode caches)."""
    subprocess.run(command, cwd=ROOT, capture_output=True, check=False, env=env)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, capture_output=True, check=False, env=env)
        times.append(time.perf_counter() - start)
    return times


def titanpost_command(checkout: Path | None) -> tuple[list[str], dict[str, str]]:
    """How to run ``titanpost``: the installed script, or ``checkout``'s code; and with what
    environment (bytecode caches written, as an installed package has them)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout.resolve())
        return [sys.executable, "-P", "-c",
                "from cli.main import main; main(prog_name='titanpost')"], env
    found = shutil.which("titanpost", path=str(Path(sys.executable).parent))
    found = found or shutil.which("titanpost")
    if found is None:
        sys.exit("titanpost is not installed here: activate its virtual environment")
    return [found], env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="Runs of each command.")
    parser.add_argument("--scenario", default="tests/scenarios/ability-grinder.json",
                        help="The scenario file engine run is timed on.")
    parser.add_argument("--checkout", type=Path, default=None,
                        help="Time this checkout's cli/ and app/ instead of the installed ones.")
    args = parser.parse_args()
    titanpost, env = titanpost_command(args.checkout)
    commands = {
        'python -c "import click, rich"': [sys.executable, "-c", "import click, rich"],
        "titanpost --help": [*titanpost, "--help"],
        f"titanpost engine run {args.scenario}": [*titanpost, "engine", "run", args.scenario],
        "titanpost play --help": [*titanpost, "play", "--help"],
    }
    floor = None
    print(f"{'command':<62} {'median':>8} {'best':>8} {'ratio':>6}   ({args.runs} runs each)")
    for label, command in commands.items():
        times = wall_times(command, args.runs, env)
        median = statistics.median(times)
        floor = floor or median
        print(f"{label:<62} {median * 1000:>6.0f}ms {min(times) * 1000:>6.0f}ms "
              f"{median / floor:>5.1f}x")


if __name__ == "__main__":
    main()
