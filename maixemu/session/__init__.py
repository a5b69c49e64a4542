"""The session layer: what boots a board and runs a script on it (see ``docs/DESIGN.md``).

* :mod:`.board` — :class:`BoardConfig` → :class:`Board`: the one place a board is built, activated
  and switched off (every host adapter closed);
* :mod:`.importer` — the ``__import__`` a script sees (device names, ``/sd`` and ``/flash``);
* :mod:`.run` — :func:`run_script` (a script on a board) and ``maixemu run``'s orchestration;
* :mod:`.budget` — ``--frames``; :mod:`.signals` — signals, ``--timeout``, ends a script swallows;
* :mod:`.outcome` — how a run ended, exit codes, the script's traceback;
* services composed onto a board: :mod:`.ide` (the IDE page), :mod:`.show_ai` (``--show-ai``).
"""

from .board import DEMO_MODEL, DEMO_MODEL_ADDRESS, Board, BoardConfig
from .budget import FrameBudget
from .outcome import Outcome, SetupError
from .run import RunOptions, run_options, run_script

__all__ = ["Board", "BoardConfig", "DEMO_MODEL", "DEMO_MODEL_ADDRESS", "FrameBudget", "Outcome", "RunOptions",
           "SetupError", "run_options", "run_script"]
