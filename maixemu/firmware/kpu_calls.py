"""A record of what the KPU was asked to do: which model, what input, what came out.

``maixemu run --kpu-log FILE`` writes one JSON line per ``kpu.forward``/``kpu.run_yolo2`` call, so a
user (or a test) can see what a script detected on each frame without reading pixels off the LCD.
The in-process list ``calls`` serves the same purpose for tests that import the firmware directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, Any

import numpy as np

calls: list[dict[str, Any]] = []
_log: IO[str] | None = None
_keep_in_memory = False
_count = 0


def configure(log_path: str | None = None, *, keep: bool = False) -> None:
    """Start (or stop, with no path) writing calls to ``log_path``; ``keep`` also keeps them in ``calls``."""
    global _log, _keep_in_memory, _count
    _count = 0
    if _log is not None:
        _log.close()
        _log = None
    calls.clear()
    _keep_in_memory = keep
    if log_path:
        _log = open(log_path, "w", encoding="utf-8")


def enabled() -> bool:
    return _log is not None or _keep_in_memory


def record(call: str, model: str, **data: Any) -> None:
    global _count
    if not enabled():
        return
    entry = {"n": _count, "call": call, "model": model, **data}
    _count += 1
    if _keep_in_memory:
        calls.append(entry)
    if _log is not None:
        _log.write(json.dumps(entry) + "\n")
        _log.flush()


#: Called with ``(chw_uint8, call)`` each time the KPU reads an image's AI buffer (``kpu.forward``,
#: ``kpu.run_yolo2``, ``KPU.run_with_output``): ``maixemu run --show-ai`` and ``maixemu.testing``
#: use it to show what the KPU really saw. Listeners must not keep the array (it is the image's memory).
input_listeners: list[Callable[[np.ndarray, str], None]] = []


def notify_input(ai: np.ndarray, call: str) -> None:
    """Tell the listeners which AI buffer the KPU is about to read (cheap when nobody listens)."""
    for listener in list(input_listeners):
        listener(ai, call)


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
