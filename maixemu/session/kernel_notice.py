"""The run's one notice that the compiled engine's kernels are being compiled in the background.

``kmodel.kpu.warmup`` says so on the ``maixemu.kernels`` logger each time it sends a kernel to the
compile worker (a logger, so that listening costs no import of the KPU package before a script
uses it); this service turns the first of those in a run into one ``[maixemu]`` notice (none under
``--quiet``: ``Board.notice``), which names ``maixemu kernels --compile``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .board import Board

#: ``kmodel.kpu.warmup.NOTICE_LOGGER`` (not imported: see the module docstring)
LOGGER_NAME = "maixemu.kernels"


class _OnceToBoard(logging.Handler):
    def __init__(self, board: "Board"):
        super().__init__(logging.INFO)
        self.board = board
        self.said = False

    def emit(self, record: logging.LogRecord) -> None:
        if self.said:
            return
        self.said = True
        self.board.notice(record.getMessage())


def kernel_notice_service(board: "Board") -> Callable[[], None]:
    """Attach the notice to ``board``'s run; the returned call detaches it when the board closes."""
    logger = logging.getLogger(LOGGER_NAME)
    logger.propagate = False
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    handler = _OnceToBoard(board)
    logger.addHandler(handler)
    return lambda: logger.removeHandler(handler)
