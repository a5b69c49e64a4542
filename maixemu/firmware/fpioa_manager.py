"""MaixPy ``fpioa_manager``: ``fm``, the helper that remembers which pin got which function.

Behaviour of the firmware's frozen ``fpioa_manager.py`` (re-implemented): ``register(pin,
function, force=True)`` records the pair and sets the FPIOA mux, returning 1; with ``force=False``
and the pin or the function already registered it changes nothing and returns that
``(pin, function)`` pair. ``unregister(pin=None, function=None)`` forgets a pair and returns
``(pin, function)`` — it does *not* reset the mux, as on the device. Both print the firmware's
messages when called without arguments or for an unknown pin. ``fm`` belongs to the board
(``current().pins.fm``).
"""

from __future__ import annotations

from typing import Any

from .Maix import FPIOA


class Fpioa_Manager:
    def __init__(self) -> None:
        self.board_dict: dict[int, int] = {}
        self.fpioa_dict: dict[int, int] = {}
        self.fpioa = FPIOA()
        from . import board

        self.board_info = board.board_info

    def register(self, pin: int | None = None, function: int | None = None, force: bool = True) -> Any:
        """Map ``pin`` to ``function``; 1 on success, the existing pair when refused."""
        if pin is None or function is None:
            print("Please enter Pin and function")
            return -1
        found_pin, found_func = self.find_dict(pin, function)
        if (found_pin is None and found_func is None) or force:
            self.board_dict[pin] = function
            self.fpioa_dict[function] = pin
            self.fpioa.set_function(pin, function)
            return 1
        return found_pin, found_func

    def unregister(self, pin: int | None = None, function: int | None = None) -> Any:
        """Forget a registration; returns ``(pin, function)``, 0 if nothing was registered."""
        if pin is None and function is None:
            print("Please enter Pin and function")
            return -1
        found_pin, found_func = self.find_dict(pin, function)
        if found_pin is None and found_func is None:
            print("This function and pin have not been registered yet")
            return 0
        ret_func = self.board_dict.pop(found_pin, None)
        ret_pin = self.fpioa_dict.pop(found_func, None)
        return ret_pin, ret_func

    def find_dict(self, pin: int | None, function: int | None) -> tuple[int | None, int | None]:
        """The registered pair that uses ``pin`` (first) or ``function``, else ``(None, None)``."""
        if pin is not None and pin in self.board_dict:
            return pin, self.board_dict[pin]
        if function is not None and function in self.fpioa_dict:
            return self.fpioa_dict[function], function
        return None, None

    def get_pin_by_function(self, function: int) -> int | None:
        """The pin registered for ``function``, or None."""
        return self.fpioa_dict.get(function)


__all__ = ["Fpioa_Manager", "board_info", "fm"]


def __getattr__(name: str) -> Any:
    """``fpioa_manager.fm`` is the active board's own: its registrations end with the run (and
    ``board_info``, which the frozen module imports, is the board's too)."""
    if name == "board_info":
        from . import board

        return board.board_info
    if name == "fm":
        from .state import current

        pins = current().pins
        if pins.fm is None:
            pins.fm = Fpioa_Manager()
        return pins.fm
    raise AttributeError(f"module 'fpioa_manager' has no attribute '{name}'")
