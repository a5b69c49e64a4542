"""What the board's I2C chips (power chip, motion sensor) share: a register file behind a pointer,
and one set of chips per board profile.

On these chips a write's first byte sets the register pointer and the bytes after it are stored
from there on, a read returns bytes from the pointer on; both auto-increment it (wrapping at 256).
``machine.I2C.readfrom_mem(addr, reg, n)`` is a one-byte write of ``reg`` and a read of ``n``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar


class RegisterFile:
    """256 registers behind an auto-incrementing pointer; subclasses decide what storing and loading a
    register does (:meth:`store`, :meth:`load`)."""

    def __init__(self) -> None:
        self.registers = bytearray(256)
        self.pointer = 0

    def write(self, data: bytes) -> None:
        if not data:
            return
        self.pointer = data[0]
        for value in data[1:]:
            self.store(self.pointer, value & 0xFF)
            self.pointer = (self.pointer + 1) & 0xFF

    def read(self, count: int) -> bytes:
        out = bytearray()
        for _ in range(max(0, int(count))):
            out.append(self.load(self.pointer))
            self.pointer = (self.pointer + 1) & 0xFF
        return bytes(out)

    def store(self, register: int, value: int) -> None:
        self.registers[register] = value

    def load(self, register: int) -> int:
        return self.registers[register]


_P = TypeVar("_P")


def for_profile(slot: str, make: Callable[[str], _P]) -> _P:
    """The current board's chips in ``BoardState.<slot>``, made by ``make(profile)`` at first use after
    power-on and again when a script switches the board profile (``board.use_profile``)."""
    from . import board
    from .state import current

    state = current()
    profile = board.current_profile()
    part: Any = getattr(state, slot)
    if part is None or part.profile != profile:
        part = make(profile)
        setattr(state, slot, part)
    return part


__all__ = ["RegisterFile", "for_profile"]
