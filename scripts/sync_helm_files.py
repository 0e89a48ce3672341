"""Copy the generated rules and dashboards into the Helm chart's files/ (helm can only read its own folder).

Run after `degeneration-exporter render` changes dashboards/generated/; tests/e2e/test_helm.py fails
while the chart's copies differ.
"""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GENERATED = REPO / "dashboards" / "generated"
FILES = REPO / "helm" / "degeneration-exporter" / "files"


def main() -> None:
    shutil.copyfile(GENERATED / "rules.yml", FILES / "rules.yml")
    boards = FILES / "dashboards"
    boards.mkdir(parents=True, exist_ok=True)
    for stale in boards.glob("*.json"):
        stale.unlink()
    for board in sorted(GENERATED.glob("*.json")):
        shutil.copyfile(board, boards / board.name)
        print(f"copied {board.relative_to(REPO)}")


if __name__ == "__main__":
    main()
