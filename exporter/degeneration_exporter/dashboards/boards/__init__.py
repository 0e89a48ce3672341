"""The Grafana boards: one module per board, rendered to dashboard JSON (ecosystem.md §5).

Why lazy: grafana-foundation-sdk is the optional `[dashboards]` extra, pinned to its Grafana 11.6
flavour (tooling.md §2: an unpinned install picks the Grafana 10.1 build). It is imported only
when a board is rendered, with an install hint when missing.
"""

from __future__ import annotations

import importlib
import json

__all__ = ["BOARDS", "INSTALL_HINT", "render_board"]

# board name -> (module under boards/, builder function); the name is also the JSON file's stem
BOARDS: dict[str, tuple[str, str]] = {
    "overview": ("overview", "build_overview"),
    "rollouts": ("rollouts", "build_rollouts"),
    "exporter_health": ("exporter_health", "build_exporter_health"),
}

INSTALL_HINT = (
    "rendering dashboards needs grafana-foundation-sdk; install the extra: "
    "pip install 'degeneration-exporter[dashboards]'"
)


def render_board(name: str) -> str:
    """Board `name` as dashboard JSON text: sorted keys, panel ids 1..n, trailing newline.

    Raises ImportError with `INSTALL_HINT` when the `[dashboards]` extra is not installed.
    """
    module_name, builder_name = BOARDS[name]
    try:
        module = importlib.import_module(f"{__name__}.{module_name}")
        from grafana_foundation_sdk.cog.encoder import JSONEncoder
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("grafana_foundation_sdk"):
            raise ImportError(INSTALL_HINT) from exc
        raise
    model = getattr(module, builder_name)().build()
    for panel_id, panel in enumerate(model.panels or [], start=1):
        panel.id_val = panel_id
    return json.dumps(model, cls=JSONEncoder, indent=2, sort_keys=True) + "\n"
