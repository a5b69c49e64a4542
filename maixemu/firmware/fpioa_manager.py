"""MaixPy ``fpioa_manager``: ``fm``, the helper scripts map pins with (``fm.register(pin, function)``).

Behaviour of the firmware's frozen ``builtin_py/fpioa_manager.py`` since MaixPy v0.6 (its
refactor of October 2020, the same text in kendryte/canmv), re-implemented. ``fm`` is a class
used through the class itself; it keeps nothing of its own but asks the pin multiplexer
(``fm.fpioa.get_Pin_num``), so functions the firmware or the script set with
``fm.fpioa.set_function`` count as well:

* ``register(pin, function, force=True)``: nothing when ``function`` is on ``pin`` already; when it
  is on another pin, ``[Warning] function is used by fm.fpioa.GPIO0(pin:35)`` is printed (with
  ``force=False`` raised as ``Exception`` with that text, and nothing changes); then the function
  moves to ``pin`` (the SDK frees the other pin). Returns None.
* ``unregister(pin)``: the pin gets ``RESV0``. ``str_function(f)`` names GPIOHS0..GPIO7 as
  ``fm.fpioa.GPIOHS3``/``fm.fpioa.GPIO0`` and every other function ``unknown``;
  ``get_gpio_used()`` lists ``(name, pin or None)`` for those 40 functions; ``help()`` is
  ``fm.fpioa.help()``.

The module also has ``FPIOA`` (the frozen file imports it) and, as the v0.5 firmware's did,
``board_info`` (``from fpioa_manager import fm, board_info`` in scripts of that time). ``fm``
belongs to the board (``current().pins.fm``): what a script sets on it ends with the run.
"""

from __future__ import annotations

from typing import Any

from .Maix import FPIOA
from .Maix.fpioa import FUNCTIONS, RESV0

_GPIOHS0, _GPIO0, _GPIO7 = FUNCTIONS["GPIOHS0"], FUNCTIONS["GPIO0"], FUNCTIONS["GPIO7"]


def _new_fm() -> type:
    """A fresh ``fm`` class for one board (the frozen module's class, created at import there)."""

    class fm:  # noqa: N801 - the firmware's name
        fpioa = FPIOA()

        @staticmethod
        def help() -> None:
            fm.fpioa.help()

        @staticmethod
        def get_pin_by_function(function: int) -> int | None:
            return fm.fpioa.get_Pin_num(function)

        @staticmethod
        def register(pin: int, function: int, force: bool = True) -> None:
            pin_used = fm.get_pin_by_function(function)
            if pin_used == pin:
                return
            if pin_used is not None:
                info = "[Warning] function is used by %s(pin:%d)" % (fm.str_function(function), pin_used)
                if not force:
                    raise Exception(info)  # noqa: TRY002 - the firmware raises a plain Exception
                print(info)
            fm.fpioa.set_function(pin, function)

        @staticmethod
        def unregister(pin: int) -> None:
            fm.fpioa.set_function(pin, RESV0)

        @staticmethod
        def str_function(function: int) -> str:
            if _GPIOHS0 <= function <= _GPIO7:
                if _GPIO0 <= function:
                    return "fm.fpioa.GPIO%d" % (function - _GPIO0)
                return "fm.fpioa.GPIOHS%d" % (function - _GPIOHS0)
            return "unknown"

        @staticmethod
        def get_gpio_used() -> list[tuple[str, int | None]]:
            return [(fm.str_function(f), fm.get_pin_by_function(f)) for f in range(_GPIOHS0, _GPIO7 + 1)]

    return fm


__all__ = ["FPIOA", "board_info", "fm"]


def __getattr__(name: str) -> Any:
    """``fpioa_manager.fm`` is the active board's own: its registrations end with the run (and
    ``board_info``, which the v0.5 module exported, is the board's too)."""
    if name == "board_info":
        from . import board

        return board.board_info
    if name == "fm":
        from .state import current

        pins = current().pins
        if pins.fm is None:
            pins.fm = _new_fm()
        return pins.fm
    raise AttributeError(f"module 'fpioa_manager' has no attribute '{name}'")
