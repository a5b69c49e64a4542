"""How an image becomes the model's input: ``--input device|file`` and the script-like steps.

The steps (``--crop``, ``--resize``, ``--to-grayscale``) run in the order they are given on the
command line, as the lines of a MaixPy script would. ``device`` runs them with maixemu's firmware
image functions on the RGB565/grayscale frame the camera delivers; ``file`` applies the same
geometry to the file's own RGB888 (PIL bilinear), so comparing the two runs shows how much of the
error the device's input path causes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import EvalError

MODES = ("device", "file")
PIXFORMATS = ("rgb565", "grayscale")


@dataclass(frozen=True)
class Step:
    """One image operation: ``("crop", (x, y, w, h))``, ``("resize", (w, h))`` or ``("to_grayscale", ())``."""

    op: str
    args: tuple[int, ...] = ()

    def describe(self) -> str:
        method = {"crop": "cut", "resize": "resize", "to_grayscale": "to_grayscale"}[self.op]
        return f"{method}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True)
class InputRecipe:
    mode: str = "device"
    pixformat: str = "rgb565"
    framesize: tuple[int, int] | None = None
    steps: tuple[Step, ...] = field(default_factory=tuple)

    def describe(self) -> dict:
        return {
            "mode": self.mode,
            "pixformat": self.pixformat if self.mode == "device" else "rgb888",
            "framesize": list(self.framesize) if self.framesize else None,
            "steps": [s.describe() for s in self.steps],
        }


def parse_ints(text: str, count: int, option: str, example: str) -> tuple[int, ...]:
    parts = [p for p in re.split(r"[,x\s]+", text.strip()) if p]
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != count:
        raise EvalError(f"{option} takes {count} integers, e.g. {option} {example}; got {text!r}")
    return values


def parse_framesize(text: str) -> tuple[int, int]:
    """A ``sensor`` frame size name (QVGA, B64X64, ...) or ``WxH``."""
    from ..firmware import sensor

    name = text.strip().upper()
    value = getattr(sensor, name, None)
    if isinstance(value, int) and value in sensor.RESOLUTION and value != 0:
        return sensor.RESOLUTION[value]
    w, h = parse_ints(text, 2, "--framesize", "QVGA or 320x240")
    if w <= 0 or h <= 0:
        raise EvalError("--framesize needs a width and height > 0")
    return w, h
