"""Imports flow downstream only (style.md section 2): the folders are the pipeline.

sources know nothing about JSON formats or detectors, formats know only Record, detectors see text
or token ids and never a Record, and only sinks import the metrics libraries.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "exporter" / "degeneration_exporter"

FORBIDDEN = {
    "detectors": {
        "sources",
        "formats",
        "classification",
        "sinks",
        "pipeline",
        "daemon",
        "config",
        "web",
        "commands",
    },
    "formats": {
        "sources",
        "detectors",
        "classification",
        "sinks",
        "pipeline",
        "daemon",
        "config",
        "web",
        "commands",
    },
    "sources": {"formats", "detectors", "classification", "sinks", "pipeline", "daemon", "web", "commands"},
    "classification": {"sources", "formats", "sinks", "pipeline", "daemon", "config", "web", "commands"},
    # sinks read SourceStats (sources/base.py) at scrape time, by design (style.md section 5)
    "sinks": {"formats", "detectors", "pipeline", "daemon", "web", "commands"},
}
METRIC_LIBRARIES = ("prometheus_client", "opentelemetry")
# OTLP's protobuf message classes are a wire codec, not a metrics library: the otlp receiver source
# decodes requests with them (sources/otlp_receiver.py).
WIRE_CODECS = {"sources/otlp_receiver.py": ("opentelemetry.proto.",)}


def _imports(path: Path) -> set[str]:
    """Package-relative top-level modules imported by `path` (relative and absolute forms)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel_parts = path.relative_to(PKG).parts
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel_parts[:-1])[: len(rel_parts) - node.level]
                target = [*base, *(node.module.split(".") if node.module else [])]
                if target:
                    found.add(target[0])
                else:  # `from .. import x`
                    found.update(alias.name for alias in node.names)
            elif node.module and node.module.startswith("degeneration_exporter."):
                found.add(node.module.split(".")[1])
            elif node.module:
                found.add("ext:" + node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                found.add(
                    parts[1] if parts[0] == "degeneration_exporter" and len(parts) > 1 else "ext:" + parts[0]
                )
    return found


def _codec_imports(path: Path) -> bool:
    """Does `path` import the metrics libraries only through its allowed wire codec modules?"""
    allowed = WIRE_CODECS.get(str(path.relative_to(PKG)))
    if allowed is None:
        return False
    modules: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.append(node.module)
        elif isinstance(node, ast.Import):
            modules.extend(alias.name for alias in node.names)
    metric_modules = [name for name in modules if name.split(".")[0] in METRIC_LIBRARIES]
    return all(name.startswith(allowed) for name in metric_modules)


def _imported_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}


MODULES = sorted(p for p in PKG.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PKG)) for p in MODULES])
def test_imports_flow_downstream(path: Path) -> None:
    layer = path.relative_to(PKG).parts[0]
    imported = _imports(path)
    bad = imported & FORBIDDEN.get(layer, set())
    assert not bad, f"{path.relative_to(PKG)} (layer {layer}) imports {sorted(bad)}"
    if layer == "detectors":  # the ceiling rule reads FinishReason; no detector takes a whole Record
        assert "Record" not in _imported_names(path), f"{path.relative_to(PKG)} takes a Record"
    if layer != "sinks":
        libs = {name for name in imported if name.removeprefix("ext:") in METRIC_LIBRARIES}
        assert not libs or _codec_imports(path), (
            f"{path.relative_to(PKG)} imports metrics libraries {sorted(libs)} outside sinks/"
        )
