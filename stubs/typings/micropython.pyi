"""MicroPython's ``micropython`` module: compiler hints and memory information."""

from typing import Any, Callable, TypeVar

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])

def const(value: _T, /) -> _T:
    """A compile-time constant (returns its argument)."""
def native(func: _F, /) -> _F:
    """Compile to native code (decorator)."""
def viper(func: _F, /) -> _F:
    """Compile with the viper emitter (decorator)."""
def asm_thumb(func: _F, /) -> _F:
    """Inline Thumb assembler (decorator; not for the K210's RISC-V)."""
def opt_level(level: int | None = None, /) -> int | None:
    """Get or set the compiler optimisation level."""
def alloc_emergency_exception_buf(size: int, /) -> None:
    """Reserve memory for exceptions raised in interrupt handlers."""
def mem_info(verbose: Any = None, /) -> None:
    """Print heap/stack usage."""
def qstr_info(verbose: Any = None, /) -> None:
    """Print interned-string statistics."""
def stack_use() -> int:
    """Bytes of stack in use."""
def heap_lock() -> int:
    """Forbid heap allocation (MemoryError on allocation)."""
def heap_unlock() -> int:
    """Allow heap allocation again."""
def kbd_intr(chr: int, /) -> None:
    """Character that raises KeyboardInterrupt (-1 disables)."""
def schedule(func: Callable[[Any], Any], arg: Any, /) -> None:
    """Run ``func(arg)`` soon from the main thread (e.g. from an IRQ handler)."""
