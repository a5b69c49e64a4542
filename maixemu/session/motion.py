"""Scripted readings of the board's motion sensors, and sensors plugged into its I2C pins, for tests
(the pytest plugin's ``imu=`` and ``i2c=``).

``imu={0: {"accel": (0, 0, 1)}, 10: {"accel": (0.7, 0, 0.7), "gyro": (0, 0, 90)}}``: what every IMU
of the board feels from camera frame N on (frame 0: from power-on), in g, °/s and °C; the chips
turn it into the raw words their registers give at the scale the script set
(:mod:`maixemu.firmware.imu`). ``i2c={(10, 11): "MPU6050"}`` plugs a chip into those SCL/SDA pins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..firmware.state import BoardState
from .budget import FrameBudget

_READINGS = ("accel", "gyro", "temperature")


class ImuScript:
    """Motion readings at camera frames, and I2C plug-ins (see the module docstring)."""

    def __init__(self, readings: Mapping[int, Mapping[str, Any]] | None = None,
                 plugged: Mapping[tuple[int, int], str] | None = None):
        self.readings: dict[int, dict[str, Any]] = {}
        for frame, values in sorted((readings or {}).items()):
            unknown = set(values) - set(_READINGS)
            if int(frame) < 0 or unknown:
                raise ValueError(f"imu={{{frame}: {dict(values)!r}}}: frames count from 0 (power-on) and the "
                                 f"readings are {', '.join(_READINGS)}")
            self.readings[int(frame)] = dict(values)
        from ..firmware.imu import MODELS

        self.plugged = {(int(scl), int(sda)): str(model) for (scl, sda), model in (plugged or {}).items()}
        for pins, model in self.plugged.items():
            if model not in MODELS:
                raise ValueError(f"i2c={{{pins}: {model!r}}}: the chips maixemu has are {', '.join(MODELS)}")

    def attach(self, board: BoardState, budget: FrameBudget) -> None:
        """Plug the chips in and apply frame 0 now; later readings when ``budget`` counts their frame."""
        from ..firmware import imu
        from ..firmware import state as state_mod

        with state_mod.bind(board):
            sensors = imu.imus()
            for (scl, sda), model in self.plugged.items():
                sensors.attach(model, scl, sda)
            if 0 in self.readings:
                sensors.set_motion(**self.readings[0])
        board.events.snapshot.append(lambda: self.on_frame(budget.snapshots))

    def on_frame(self, frame: int) -> None:
        from ..firmware import imu

        if frame in self.readings:
            imu.imus().set_motion(**self.readings[frame])


__all__ = ["ImuScript"]
