"""Offline scanning at scale: the work plan, per-piece scanning, aggregates and the engines that run it.

Why a package of its own: `scan` splits dumps into pieces (whole files, or line-aligned byte ranges of
a large plain file), classifies each piece through the shared `LinePipeline` in worker processes or
Ray tasks, and merges the results in input order so the report does not depend on how it was run.
Only aggregates (`Tally`) and the samples the report lists travel back; nothing here is a label.
"""
