"""MaixPy ``sys``/``usys`` (MicroPython's): ``print_exception`` and the firmware identity."""

from typing import Any, NamedTuple, NoReturn, TextIO

class _Implementation(NamedTuple):
    name: str
    version: tuple[int, int, int]

implementation: _Implementation
"""``name == 'micropython'``, ``version`` the MaixPy version, e.g. ``(0, 6, 2)``."""
platform: str
"""``'MaixPy'``"""
version: str
"""Python language version implemented (``'3.4.0'``)."""
version_info: tuple[int, int, int]
argv: list[str]
path: list[str]
modules: dict[str, Any]
byteorder: str
maxsize: int
stdin: TextIO
stdout: TextIO
stderr: TextIO

def print_exception(exc: BaseException, file: TextIO | None = None, /) -> None:
    """Print a MicroPython-style traceback to ``file`` (default stdout), e.g. inside ``except``."""
def exit(retval: object = 0, /) -> NoReturn:
    """Raise SystemExit."""
