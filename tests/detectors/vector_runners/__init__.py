"""Seed-vector runners, one module per published detector (spec section 6 rules).

Each runner module exposes `run(vector: dict) -> None` that asserts exactly the expectations the vector
states: a present `expected` key is checked, an absent one is never assumed, and a key the runner does
not know fails loudly (an ignored expectation would be a test that cannot fail). Each runner lists its
known keys (`KNOWN_KEYS`, `*_KEYS`) and the input fields of section 6 it interprets (`input_field`).
"""
