"""The pytest plugin maixemu registers (``pytest11`` entry point): the fixtures of :mod:`maixemu.testing.plugin`."""

from .testing.plugin import maixpy, maixpy_board

__all__ = ["maixpy", "maixpy_board"]
