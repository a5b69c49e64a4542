"""A record of what the KPU was asked to do: which model, what input, what came out.

``maixemu run --kpu-log FILE`` writes one JSON line per ``kpu.forward``/``kpu.run_yolo2`` call, so a
user (or a test) can see what a script detected on each frame without reading pixels off the LCD.
The in-process list ``calls`` serves the same purpose for tests that import the firmware directly.
"""

from __future__ import annotations

import json
from typing import IO, Any

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
