"""MicroPython's ``micropython`` module: compiler hints that mean nothing on CPython, and memory info.

``const(x)`` returns ``x``; ``native``/``viper`` decorators return the function unchanged (viper's
``ptr8``-style annotations are not provided); ``schedule(f, arg)`` queues ``f(arg)`` on the board's scheduler
(it runs at the next soft-IRQ point, where timer and GPIO callbacks run too). ``mem_info`` prints
the device-like figures of :mod:`maixemu.firmware.mgc`.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, TypeVar

from . import mgc
from .chip.soft_irq import SoftIrq as _SoftIrq
from .state import current as _current

_F = TypeVar("_F", bound=Callable[..., Any])


def const(value: Any) -> Any:
    return value


def native(func: _F) -> _F:
    return func


def viper(func: _F) -> _F:
    return func


def asm_thumb(func: _F) -> _F:
    return func


def opt_level(level: int | None = None) -> int | None:
    system = _current().system
    if level is None:
        return system.opt_level
    system.opt_level = int(level)
    return None


def alloc_emergency_exception_buf(size: int) -> None:
    return None


def mem_info(verbose: Any = None) -> None:
    """Print heap figures in MicroPython's layout (device-like numbers, not the PC's)."""
    out = sys.stdout
    print("stack: 736 out of 15360", file=out)
    print(f"GC: total: {mgc.HEAP_SIZE}, used: {mgc.mem_alloc()}, free: {mgc.mem_free()}", file=out)
    print(" No. of 1-blocks: 1432, 2-blocks: 308, max blk sz: 264, max free sz: 21489", file=out)


def qstr_info(verbose: Any = None) -> None:
    print("qstr pool: n_pool=1, n_qstr=37, n_str_data_bytes=368, n_total_bytes=1840", file=sys.stdout)


def stack_use() -> int:
    return 736


def heap_lock() -> int:
    system = _current().system
    system.heap_locked += 1
    return system.heap_locked - 1


def heap_unlock() -> int:
    system = _current().system
    system.heap_locked = max(0, system.heap_locked - 1)
    return system.heap_locked


def kbd_intr(chr: int) -> None:  # noqa: A002 - MicroPython's parameter name
    return None


def schedule(func: Callable[[Any], Any], arg: Any) -> None:
    """``micropython.schedule``: queue ``func(arg)`` for the next soft-IRQ point (the board's
    scheduler, :mod:`~maixemu.firmware.chip.soft_irq`); called from script code it runs at once there."""
    board = _current()
    if not board.part(_SoftIrq).schedule(func, arg):
        raise RuntimeError("schedule queue full")
    if board.run.in_script():
        board.part(_SoftIrq).run_pending()
