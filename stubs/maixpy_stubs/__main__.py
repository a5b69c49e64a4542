"""``python -m maixpy_stubs``: print the stub directory to use as MYPYPATH or pyright's stubPath."""

from . import TYPINGS

print(TYPINGS)
