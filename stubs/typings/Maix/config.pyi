"""``Maix.config``: the board configuration stored in flash (``/flash/config.json``)."""

from typing import Any

def get_value(key: str, default: Any = None) -> Any:
    """A configuration value (``"type"``, ``"board_info"`` ...) or ``default``."""
