"""``python -m maixpy_stubs``: print the stub directory to use as MYPYPATH or pyright's stubPath.

``--mypy-config`` prints a ``[mypy]`` section with that directory as ``mypy_path`` instead
(``python -m maixpy_stubs --mypy-config > mypy.ini``).
"""

import argparse
import sys

from . import mypy_config, typings_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maixpy_stubs", description=__doc__.splitlines()[0].strip("`: "))
    parser.add_argument("--mypy-config", action="store_true", help="print a [mypy] section for mypy.ini")
    args = parser.parse_args(argv)
    try:
        print(mypy_config() if args.mypy_config else typings_dir(), end="" if args.mypy_config else "\n")
    except FileNotFoundError as exc:
        print(f"maixpy_stubs: {exc}", file=sys.stderr)
        return 1
    return 0


sys.exit(main())
