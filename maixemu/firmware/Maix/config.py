"""``Maix.config``: the board configuration the firmware reads from ``/flash/config.json``.

Only ``get_value(key, default)`` is provided; it answers from the emulated board profile (the
``board_info`` pin names of :mod:`maixemu.firmware.board`, the board ``type``), which is what the
firmware's ``board.py`` asks for.
"""

from __future__ import annotations

from typing import Any


def get_value(key: str, default: Any = None) -> Any:
    from .. import board

    values: dict[str, Any] = {"type": board.current_profile(), "board_info": board.profile_pins()}
    return values.get(key, default)
