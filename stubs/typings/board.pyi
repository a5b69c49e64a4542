"""MaixPy ``board``: ``board_info``, the pin names of the board (from ``/flash/config.json``)."""

from typing import Any

class _BoardInfoMeta(type):
    def __getattr__(cls, name: str) -> int:
        """Other boards' pin names (``I2C_SDA``, ``CONNEXT_A`` ...) depend on the board config."""

class board_info(metaclass=_BoardInfoMeta):
    """Pin numbers by name (class attributes): ``fm.register(board_info.LED_R, fm.fpioa.GPIO0)``.

    The set depends on the board; the names here are a Maix Bit/Dock-style board plus common extras.
    """
    BOOT_KEY: int
    LED_R: int
    LED_G: int
    LED_B: int
    LED_W: int
    BUTTON_A: int
    BUTTON_B: int
    ENTER: int
    BACK: int
    NEXT: int
    MIC0_WS: int
    MIC0_DATA: int
    MIC0_BCK: int
    WIFI_TX: int
    WIFI_RX: int
    WIFI_EN: int
    PIN0: int
    PIN1: int
    PIN2: int
    PIN3: int
    PIN4: int
    PIN5: int
    PIN6: int
    PIN7: int
    PIN8: int
    PIN9: int
    PIN10: int
    PIN11: int
    PIN12: int
    PIN13: int
    PIN14: int
    PIN15: int
    PIN16: int
    PIN17: int
    PIN18: int
    PIN19: int
    PIN20: int
    PIN21: int
    PIN22: int
    PIN23: int
    PIN24: int
    PIN25: int
    PIN26: int
    PIN27: int
    PIN28: int
    PIN29: int
    PIN30: int
    PIN31: int
    PIN32: int
    PIN33: int
    PIN34: int
    PIN35: int
    PIN36: int
    PIN37: int
    PIN38: int
    PIN39: int
    PIN40: int
    PIN41: int
    PIN42: int
    PIN43: int
    PIN44: int
    PIN45: int
    PIN46: int
    PIN47: int
    @staticmethod
    def set(key: str, value: Any = None) -> None:
        """Add or change a pin name."""
    @staticmethod
    def get(key: str) -> Any:
        """A pin number by name."""
    @staticmethod
    def all() -> list[str]:
        """All pin names."""
    @staticmethod
    def load(mapping: dict[str, Any] | None = None) -> None:
        """Replace the pin names with a mapping (as read from the board config)."""
