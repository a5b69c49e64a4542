"""MaixPy ``fpioa_manager`` (frozen Python helper): ``fm`` remembers which pin got which function."""

from typing import Any

from Maix import FPIOA as FPIOA
from board import board_info as board_info

class Fpioa_Manager:
    """The class of ``fm``; ``fm.fpioa`` is an ``FPIOA()`` with the function constants."""
    board_dict: dict[int, int]
    fpioa_dict: dict[int, int]
    fpioa: FPIOA
    board_info: type[board_info]
    def __init__(self) -> None: ...
    def register(self, pin: int | None = None, function: int | None = None, force: bool = True) -> Any:
        """Map ``pin`` to ``function`` (``fm.fpioa.GPIOHS0`` ...); returns 1, or the existing pair when refused."""
    def unregister(self, pin: int | None = None, function: int | None = None) -> Any:
        """Forget a mapping (the mux is not reset); returns ``(pin, function)``."""
    def find_dict(self, pin: int | None, function: int | None) -> tuple[int | None, int | None]:
        """The registered pair using ``pin`` or ``function``, else ``(None, None)``."""
    def get_pin_by_function(self, function: int) -> int | None:
        """The pin registered for ``function``, or None."""

fm: Fpioa_Manager
"""The shared manager: ``from fpioa_manager import fm``."""
