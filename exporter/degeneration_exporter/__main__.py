"""`python -m degeneration_exporter`: the same CLI as the console script."""

from .cli import main

raise SystemExit(main())
