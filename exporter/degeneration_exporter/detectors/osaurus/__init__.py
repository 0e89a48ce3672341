"""osaurus' live degeneration guardrail (detectors.md §4): two registry detectors and their helpers.

- `stream_ngram.py` (`osaurus_stream`): a 3-12 word unit repeated back to back in a 4096-char tail;
- `char_run.py` (`osaurus_charrun`): one character repeated, grown over several deltas;
- `_combined.py`: the published detector both use (runs, then n-grams, one latch);
- `_run_tracker.py`, `_word_tail.py`, `_swift_text.py`: run state, incremental tail, Swift text classes;
- `upstream.py`: the CLI gauntlet's canary and leak verdicts, for parity with upstream.
"""
