"""One module per CLI verb: `HELP`, `add_arguments(parser)`, `main(args) -> int`."""
