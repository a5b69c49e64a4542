"""Progress bars for the long commands (``trace``, ``eval``, ``bench``, the fuzz campaign): tqdm on stderr.

On a terminal: a live bar with the rate and the time left. When stderr is not a terminal (a CI log,
a pipe, a test capturing output) a live bar would fill the log with carriage returns, so the bar is
either off or, for runs that take minutes, printed as one plain line every ``log_every`` seconds.
"""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm

#: Seconds between two progress lines in a log, for callers that want them.
LOG_EVERY_S = 30.0


class LogLines:
    """A log's view of a bar: tqdm redraws its line with a carriage return, which a log shows as one
    ever longer line; here each redraw is a line of its own."""

    def __init__(self, stream: Any):
        self._stream = stream

    def write(self, text: str) -> int:
        line = text.replace("\r", "").rstrip("\n")
        if line.strip():
            self._stream.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        getattr(self._stream, "flush", lambda: None)()


def progress_bar(total: int | None, desc: str, unit: str, *, log_every: float | None = None,
                 disable: bool = False, stream=None, initial: int = 0) -> tqdm:
    """A tqdm bar on ``stream`` (stderr); off in a log unless ``log_every`` seconds are given."""
    stream = stream if stream is not None else sys.stderr
    interactive = bool(getattr(stream, "isatty", lambda: False)())
    if not interactive and log_every is None:
        disable = True
    if not interactive:
        stream = LogLines(stream)
    return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=stream, disable=disable, dynamic_ncols=interactive,
                mininterval=0.1 if interactive or log_every is None else log_every, maxinterval=max(10.0, log_every or 0.0),
                ascii=not interactive, smoothing=0.1)
