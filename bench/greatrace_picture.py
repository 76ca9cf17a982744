"""The Great Race board picture: time to draw the SVG and to render it to PNG for mail.

    python3 bench/greatrace_picture.py [--games 4] [--moves 260] [--repeat 7] [--width 800]

Draws a new game, ``--games`` seeded four-crew races (the leaders module on) ``--moves`` decisions
in with a simple forward-driving player, a tile placing decision with its options highlighted and a
finished race, and for each times :func:`board_svg` and :func:`app.core.pictures.board_png` at
``--width`` pixels, best of ``--repeat`` runs in wall-clock and in CPU time (other load on the
machine only ever adds time; CPU time moves less). For comparison it times Titan Race's board the
same way. Prints figures; asserts nothing."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.pictures import board_png
from app.games.greatrace.engine import GreatRace
from app.games.greatrace.picture import board_svg
from app.games.titanrace.engine import built_in_circuit, run_scenario
from app.games.titanrace.picture import board_svg as titan_board_svg
from tests.greatrace.seeded import CREWS, play


def where_options_lead(view: dict[str, Any]) -> list[str]:
    """The spaces the pending options name (what the mail highlights)."""
    options = (view.get("pending") or {}).get("options") or []
    return sorted({o.split()[-1] for o in options if o.startswith(("go ", "place ", "guard "))})


def best_ms(action: Callable[[], object], repeat: int, clock: Callable[[], float]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        action()
        best = min(best, clock() - start)
    return best * 1000


def wall_and_cpu(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best wall-clock and best CPU time in ms (CPU time moves less with the machine's load)."""
    return best_ms(action, repeat, time.perf_counter), best_ms(action, repeat, time.process_time)


def titan_race_svg() -> str:
    code, view = run_scenario(
        {
            "circuit": "kaldheira",
            "titans": [
                {"titan": "grinder", "space": "C3", "life": 4, "hand": ["leap"]},
                {"titan": "rassik", "space": "F10", "lap": 2, "life": 2},
                {"titan": "craken", "space": "A7", "hand": ["dispel", "quake"]},
            ],
            "traps": ["B2", "E7"],
        }
    )
    assert code == 0, view
    return titan_board_svg(view, [built_in_circuit("kaldheira")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--moves", type=int, default=260)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--width", type=int, default=800)
    args = parser.parse_args()

    cases: list[tuple[str, dict[str, Any]]] = [
        ("new game", GreatRace.new(CREWS, seed=1, leaders=True).view())
    ]
    cases += [(f"mid-race {seed}", play(seed, args.moves).view()) for seed in range(args.games)]
    cases.append(("placing tiles", play(2, 400, stop_at="place", after=150).view()))
    cases.append(("finished", play(1, 5000).view()))
    totals: list[tuple[float, float]] = []
    for label, view in cases:
        marks = where_options_lead(view)
        svg = board_svg(view, highlight=marks)
        svg_wall, svg_cpu = wall_and_cpu(
            lambda view=view, marks=marks: board_svg(view, highlight=marks), args.repeat
        )
        png_wall, png_cpu = wall_and_cpu(lambda svg=svg: board_png(svg, args.width), args.repeat)
        size = len(board_png(svg, args.width))
        totals.append((svg_wall + png_wall, svg_cpu + png_cpu))
        print(
            f"{label}: turn {view['turn']}, {len(view['tiles'])} tiles, {len(marks)} highlighted: "
            f"board_svg {svg_wall:.1f} ms + board_png {png_wall:.1f} ms wall "
            f"({svg_cpu:.1f} + {png_cpu:.1f} ms CPU), {size / 1024:.0f} KiB"
        )
    print(
        f"The Great Race at {args.width} px, board_svg + board_png: median "
        f"{statistics.median(t[0] for t in totals):.1f} ms wall, "
        f"{statistics.median(t[1] for t in totals):.1f} ms CPU"
    )
    titan = titan_race_svg()
    titan_wall, titan_cpu = wall_and_cpu(lambda: board_png(titan, args.width), args.repeat)
    titan_kib = len(board_png(titan, args.width)) / 1024
    print(
        f"Titan Race board_png at {args.width} px for comparison: {titan_wall:.1f} ms wall, "
        f"{titan_cpu:.1f} ms CPU; PNG {titan_kib:.0f} KiB"
    )


if __name__ == "__main__":
    main()
