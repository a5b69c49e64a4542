"""pytest plugin: test MaixPy device code on the PC with scripted camera frames.

Registered through the ``pytest11`` entry point, so any project that has maixemu installed gets two
fixtures (see ``docs/testing.md`` for a worked example):

* ``maixpy`` — a :class:`MaixPyRunner`: ``maixpy.run("main.py", camera=[...], flash={0x300000: m})``
  runs a whole script in-process (fast: no subprocess, models stay cached) and returns a
  :class:`RunResult` with the exit code, printed text, LCD frames as numpy arrays and every KPU call.
* ``maixpy_board`` — a :class:`Board`: the firmware modules (``sensor``, ``image``, ``lcd``, ``KPU``,
  ``time``, ...) on a freshly booted board, for testing functions of your own that take them; while
  it is active ``import sensor`` etc. work in the test module too.

Every run and every ``maixpy_board`` is a board of its own (:class:`maixemu.session.Board`): a
power-on reset, so tests cannot see each other. Modules: :mod:`.run` (scripts), :mod:`.board_fixture`
(import mode), :mod:`.plugin` (the fixtures). Names are loaded on first use, so that importing the
plugin costs pytest's start-up nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

_NAMES = {
    "ArraySource": ".run", "CameraSpec": ".run", "DEFAULT_TIMEOUT_S": ".run", "KeyPresses": ".run",
    "KeySpec": ".run", "MaixPyRunner": ".run", "MemoryAudioSink": ".run", "MemorySink": ".run", "RunResult": ".run",
    "Board": ".board_fixture", "board": ".board_fixture",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'maixemu.testing' has no attribute '{name}'")
    return getattr(importlib.import_module(module, __name__), name)
