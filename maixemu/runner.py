"""``maixemu run`` from Python: the names of the former runner module, now served by :mod:`maixemu.session`.

``run_script(RunOptions(script=...))`` runs a script as ``maixemu run`` does and returns its exit
code (with ``ide=PORT``, with the IDE page). The board, the importer, the outcome and the signal
rules live in ``maixemu.session`` (``board``, ``importer``, ``run``, ``outcome``, ``signals``).
"""

from __future__ import annotations

from typing import Any

from .firmware.state import RunEnded
from .session.board import DEMO_MODEL, DEMO_MODEL_ADDRESS, PACKAGE_DIR, Board, BoardConfig
from .session.budget import FrameBudget
from .session.importer import MICROPYTHON_ALIASES, ScriptImporter, compile_source, read_source
from .session.outcome import NOT_EMULATED_MODULES, SetupError, format_script_error
from .session.run import RunOptions, default_sample, run_options
from .session.signals import END_GRACE_S, FATAL_SIGNALS


def run_script(options: RunOptions, **kwargs: Any) -> int:
    """Run ``options.script`` as ``maixemu run`` does; returns the exit code."""
    if options.ide is not None:  # the IDE page wires itself into the run (maixemu.session.ide)
        from .session.ide import run_with_ide

        return run_with_ide(options, **kwargs)
    return run_options(options, **kwargs)


__all__ = ["Board", "BoardConfig", "DEMO_MODEL", "DEMO_MODEL_ADDRESS", "END_GRACE_S", "FATAL_SIGNALS", "FrameBudget",
           "MICROPYTHON_ALIASES", "NOT_EMULATED_MODULES", "PACKAGE_DIR", "RunEnded", "RunOptions", "ScriptImporter",
           "SetupError", "compile_source", "default_sample", "format_script_error", "read_source", "run_script"]
