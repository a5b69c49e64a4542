"""The IDE page's terminal on the PC side: ``sys.stdout``/``sys.stderr`` copied to it, ``sys.stdin`` fed from it.

During an IDE run the script's streams are these objects (``maixemu.session.ide`` installs them):

* :class:`TerminalTee` writes to the real stream as before and appends the same text to the page's
  terminal (maixemu's own ``[maixemu] ...`` lines as notices, shown apart from the board's output);
* :class:`ChannelInput` gives the script the lines typed in the page and, through a
  :class:`ConsoleReader`, the ones typed in maixemu's own terminal.

Both call an ``on_io()`` hook at every write and while input is awaited: the run side uses it as a
safe point to deliver the page's Stop and button interrupts on the script's thread.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Callable
from typing import Any

from .channel import IdeChannel

#: Seconds between looks at the page's input while a read waits (also how often ``on_io`` runs).
INPUT_POLL_S = 0.05


class TerminalTee(io.TextIOBase):
    """The real ``inner`` stream, plus the page's terminal (while ``is_open()``)."""

    def __init__(self, inner: Any, channel: IdeChannel, stream: str, *, on_io: Callable[[], None],
                 is_open: Callable[[], bool] = lambda: True):
        super().__init__()
        self._inner = inner
        self._channel = channel
        self._stream = stream
        self._on_io = on_io
        self._is_open = is_open

    def write(self, text: str) -> int:
        count = self._inner.write(text)
        if self._is_open():
            self._channel.write(text, "notice" if text.startswith("[maixemu]") else self._stream)
        self._on_io()
        return len(text) if count is None else count

    def flush(self) -> None:
        self._inner.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._inner, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:  # ``buffer``, ``errors``, ...: the real stream's
        return getattr(self._inner, name)


class ConsoleReader:
    """maixemu's own stdin, read into the channel by a helper thread started at the first read.

    Why lazily: a script that never reads must leave the user's terminal alone. The thread stays for
    the process (a blocked read cannot be cancelled); ``ended`` tells that the real stdin is at its end.
    """

    def __init__(self, channel: IdeChannel):
        self._channel = channel
        self._thread: threading.Thread | None = None
        self.ended = False

    def start(self) -> None:
        if self._thread is not None or self.ended:
            return
        real = sys.__stdin__
        if real is None or real.closed:
            self.ended = True
            return

        def pump() -> None:
            try:
                for line in real:
                    self._channel.send_input(line)
            except (OSError, ValueError):
                pass
            self.ended = True

        self._thread = threading.Thread(target=pump, name="maixemu-ide-stdin", daemon=True)
        self._thread.start()


class ChannelInput(io.TextIOBase):
    """``sys.stdin`` of an IDE run: lines from the page (and from maixemu's own terminal).

    End of input is reported only when maixemu's stdin has ended *and* no page is open (a page
    could still type a line).
    """

    def __init__(self, channel: IdeChannel, console: ConsoleReader, *, on_io: Callable[[], None]):
        super().__init__()
        self._channel = channel
        self._console = console
        self._on_io = on_io
        self._buffer = ""

    def readable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def _fill(self) -> bool:
        """Wait for one more line; False at the end of input."""
        self._console.start()
        while True:
            line = self._channel.read_input(timeout=INPUT_POLL_S)
            if line is not None:
                self._buffer += line
                return True
            self._on_io()
            if self._console.ended and self._channel.viewers == 0:
                return False

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        while "\n" not in self._buffer and (size is None or size < 0 or len(self._buffer) < size):
            if not self._fill():
                break
        cut = self._buffer.find("\n") + 1 or len(self._buffer)
        if size is not None and size >= 0:
            cut = min(cut, size)
        text, self._buffer = self._buffer[:cut], self._buffer[cut:]
        return text

    def read(self, size: int | None = -1) -> str:
        while (size is None or size < 0 or len(self._buffer) < size) and self._fill():
            pass
        cut = len(self._buffer) if size is None or size < 0 else size
        text, self._buffer = self._buffer[:cut], self._buffer[cut:]
        return text
