"""The session layer: what boots a board and runs a script on it (see ``docs/DESIGN.md``).

* :mod:`.spec` — :class:`RunSpec`: every user-facing run option once (command line, project file,
  plugin keywords and the merge rule come from it); :mod:`.project` — the project file;
* :mod:`.board` — :class:`BoardConfig` → :class:`Board`: the one place a board is built, activated
  and switched off (every host adapter closed);
* :mod:`.importer` — the ``__import__`` a script sees (device names, ``/sd`` and ``/flash``);
* :mod:`.lifecycle` — :func:`execute`, THE lifecycle of a run (guard, board, script, closing line),
  used by ``maixemu run``, the IDE page, the pytest plugin, soak and eval's device path;
* :mod:`.run` — :func:`run_script` (a script on an opened board);
* :mod:`.budget` — ``--frames``; :mod:`.signals` — signals, ``--timeout``, ends a script swallows;
* :mod:`.outcome` — how a run ended, exit codes, the script's traceback;
* :mod:`.summary` — the closing line of every run (frames, fps, K210 estimate, recordings, writes);
* services composed onto a board: :mod:`.ide` (the IDE page), :mod:`.show_ai` (``--show-ai``).
"""

from .board import DEMO_MODEL, DEMO_MODEL_ADDRESS, Board, BoardConfig, Plugs
from .budget import FrameBudget
from .outcome import Outcome, SetupError
from .lifecycle import RunRecord, execute, run_command
from .run import run_script
from .spec import RunSpec
from .summary import RunSummary

__all__ = ["Board", "BoardConfig", "DEMO_MODEL", "DEMO_MODEL_ADDRESS", "FrameBudget", "Outcome", "Plugs", "RunRecord",
           "RunSpec", "RunSummary", "SetupError", "execute", "run_command", "run_script"]
