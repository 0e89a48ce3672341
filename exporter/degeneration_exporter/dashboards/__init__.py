"""Prebuilt Grafana boards and Prometheus alert rules, built as code from `catalog.py`.

Why inside the package (not only in the repo's top-level `dashboards/`): `degeneration-exporter
render` must work from an installed wheel, with no checkout. The repo's `dashboards/` folder holds
what `render` writes (`dashboards/generated/`) and the promtool rule tests (`dashboards/rules/tests/`).
`boards/` needs the optional `[dashboards]` extra (grafana-foundation-sdk, imported lazily);
`rules/` needs only PyYAML. Both take every metric name from the catalogue through `promql.py`.
"""
