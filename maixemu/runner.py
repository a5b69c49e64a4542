"""``maixemu run`` from Python: the names of the former runner module, now served by :mod:`maixemu.session`.

``run_script(RunSpec(lcd="none"), script)`` runs a script as ``maixemu run`` does and returns its
exit code (with ``ide=PORT``, with the IDE page). The board, the importer, the outcome and the signal
rules live in ``maixemu.session`` (``board``, ``importer``, ``run``, ``outcome``, ``signals``).
"""

from __future__ import annotations

from .firmware.state import RunEnded
from .session.board import DEMO_MODEL, DEMO_MODEL_ADDRESS, PACKAGE_DIR, Board, BoardConfig
from .session.budget import FrameBudget
from .session.importer import MICROPYTHON_ALIASES, ScriptImporter, compile_source, read_source
from .session.outcome import NOT_EMULATED_MODULES, SetupError, format_script_error
from .session.lifecycle import run_command as run_script
from .session.run import default_sample
from .session.spec import RunSpec
from .session.signals import END_GRACE_S, FATAL_SIGNALS


__all__ = ["Board", "BoardConfig", "DEMO_MODEL", "DEMO_MODEL_ADDRESS", "END_GRACE_S", "FATAL_SIGNALS", "FrameBudget",
           "MICROPYTHON_ALIASES", "NOT_EMULATED_MODULES", "PACKAGE_DIR", "RunEnded", "RunSpec", "ScriptImporter",
           "SetupError", "compile_source", "default_sample", "format_script_error", "read_source", "run_script"]
