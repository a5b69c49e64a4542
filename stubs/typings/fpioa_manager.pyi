"""MaixPy ``fpioa_manager`` (frozen Python helper, MaixPy v0.6+): ``fm`` maps functions onto pins."""

from Maix import FPIOA as FPIOA
from board import board_info as board_info

class fm:
    """Used through the class itself (``fm.register(...)``); it asks the pin multiplexer."""
    fpioa: FPIOA
    @staticmethod
    def help() -> None:
        """``fm.fpioa.help()``: the table of every function."""
    @staticmethod
    def get_pin_by_function(function: int) -> int | None:
        """The pin that carries ``function`` now, or None."""
    @staticmethod
    def register(pin: int, function: int, force: bool = True) -> None:
        """Put ``function`` (``fm.fpioa.GPIOHS0`` ...) on ``pin``. When it is on another pin already, prints
        ``[Warning] function is used by fm.fpioa.GPIO0(pin:35)``; with ``force=False`` raises ``Exception``
        with that text instead and changes nothing."""
    @staticmethod
    def unregister(pin: int) -> None:
        """The pin gets ``RESV0`` (no function)."""
    @staticmethod
    def str_function(function: int) -> str:
        """``'fm.fpioa.GPIOHS3'`` / ``'fm.fpioa.GPIO0'`` for GPIO functions, else ``'unknown'``."""
    @staticmethod
    def get_gpio_used() -> list[tuple[str, int | None]]:
        """``(name, pin or None)`` for GPIOHS0..GPIOHS31 and GPIO0..GPIO7."""
