"""Catch rate of every loop family and flag rate of every exemption of the verdict's definition.

Why: the goals (docs/detectors.md) name rates over the property tests' generators
(tests/detectors/loop_families.py): every family caught at least 98% of the time, every exemption
flagged at most 2%, the onset within one copy of the true start. The property tests assert each
example; this prints the rates over many more, seeded so a run is repeatable:

    .venv/bin/python bench/families.py [--n 300] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from degeneration_exporter.detectors.base import DetectorInput
from degeneration_exporter.detectors.tandem import TandemRepeatParams, detect_tandem_repeat

from tests.detectors.loop_families import EXEMPTIONS, FAMILIES


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="cases per family")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", action="store_true", help="print the first miss of each family")
    args = parser.parse_args(argv)
    params = TandemRepeatParams()
    print("| family | caught | onset within one copy |\n|---|---|---|")
    for name, make in FAMILIES.items():
        rng = random.Random(f"{args.seed}-{name}")
        caught = onset_ok = 0
        shown = False
        for _ in range(args.n):
            case = make(rng)
            f = detect_tandem_repeat(DetectorInput(case.text), params)
            caught += f.flagged
            ok = f.flagged and f.onset is not None and abs(f.onset - case.onset) <= case.period
            onset_ok += ok
            if args.show and not ok and not shown:
                shown = True
                at = case.text[case.onset :][:160]
                print(f"  {name}: {f.evidence} onset {f.onset} vs {case.onset}: {at!r}")
        print(f"| {name} | {caught / args.n:.3f} | {onset_ok / max(caught, 1):.3f} |")
    print("\n| exemption | flagged |\n|---|---|")
    for name, make in EXEMPTIONS.items():
        rng = random.Random(f"{args.seed}-{name}")
        flagged = 0
        for _ in range(args.n):
            case = make(rng)
            f = detect_tandem_repeat(DetectorInput(case.text), params)
            flagged += f.flagged
            if args.show and f.flagged and flagged == 1:
                print(f"  {name}: {f.evidence}")
        print(f"| {name} | {flagged / args.n:.3f} |")


if __name__ == "__main__":
    main()
