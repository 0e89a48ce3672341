"""Seed-vector runners, one module per published detector (spec section 6 rules).

Each runner module exposes `run(vector: dict) -> None` that asserts the vector's expectations.
"""
