"""Subcommands of the `maixemu` CLI: each module has add_arguments(parser) and run(args) -> int."""
