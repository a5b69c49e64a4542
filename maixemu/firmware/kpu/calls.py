"""A record of what the KPU was asked to do: which model, what input, what came out.

``maixemu run --kpu-log FILE`` writes one JSON line per ``kpu.forward``/``kpu.run_yolo2`` call, so a
user (or a test) can see what a script detected on each frame without reading pixels off the LCD.
The board's :class:`KpuCallLog` (``current().kpu.log``) also keeps them in memory when asked
(``keep=True``: the pytest plugin's ``result.kpu_calls``).
"""

from __future__ import annotations

import json
from typing import IO, Any

import numpy as np


class KpuCallLog:
    """The calls of one board: written to ``path`` (one JSON line each) and/or kept in :attr:`calls`."""

    def __init__(self, path: str | None = None, *, keep: bool = False):
        self.calls: list[dict[str, Any]] = []
        self.keep = keep
        self.count = 0
        self._file: IO[str] | None = open(path, "w", encoding="utf-8") if path else None

    @property
    def enabled(self) -> bool:
        return self._file is not None or self.keep

    def record(self, call: str, model: str, **data: Any) -> None:
        if not self.enabled:
            return
        entry = {"n": self.count, "call": call, "model": model, **data}
        self.count += 1
        if self.keep:
            self.calls.append(entry)
        if self._file is not None:
            self._file.write(json.dumps(entry) + "\n")
            self._file.flush()

    def close(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            file.close()


def _board():
    from ..state import current

    return current()


def enabled() -> bool:
    return _board().kpu.log.enabled


def record(call: str, model: str, **data: Any) -> None:
    _board().kpu.log.record(call, model, **data)


def notify_input(ai: np.ndarray, call: str) -> None:
    """Tell the board's ``kpu_input`` listeners which AI buffer the KPU is about to read (``--show-ai``,
    the plugin's ``keep_ai``); cheap when nobody listens. Listeners must not keep the array."""
    events = _board().events
    if events.kpu_input:
        events.fire(events.kpu_input, ai, call)


def summarize(values: Any, top: int = 5) -> dict[str, Any]:
    """A JSON-friendly summary of an output buffer: size, min, max, argmax and the ``top`` largest.

    Why: a log line or a test wants "which class won" without the whole buffer (MobileNet: 1000 floats).
    """
    flat = np.asarray(values).reshape(-1)
    if flat.size == 0:
        return {"size": 0}
    as_float = flat.astype(np.float64)
    order = np.argsort(-as_float, kind="stable")[: max(0, int(top))]
    cast = float if flat.dtype.kind == "f" else int
    return {
        "size": int(flat.size),
        "min": cast(flat.min()),
        "max": cast(flat.max()),
        "argmax": int(order[0]),
        "top": [[int(i), cast(flat[i])] for i in order],
    }
