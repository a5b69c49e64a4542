"""One-time notices: tell the user, once, that something a script calls is not emulated.

Inert firmware parts (``Maix.I2S``, ``machine.UART`` writes, ``machine.Timer`` callbacks, ...) must not
flood the console when a script calls them every frame, yet the user must learn that the call did
nothing on the PC. :func:`notice_once` prints ``[maixemu] <message>`` the first time a key is seen.

Notices go to ``sys.stderr`` as it is *at call time*, so a runner or a test that redirects stderr
captures them; :func:`set_stream` pins another stream and :func:`reset` forgets what was shown
(a new run should show its notices again).
"""

from __future__ import annotations

import sys
from typing import TextIO

PREFIX = "[maixemu] "

_seen: set[str] = set()
_stream: TextIO | None = None
_enabled = True


def notice_once(key: str, message: str) -> bool:
    """Print ``[maixemu] message`` unless ``key`` was already noticed; True if it was printed."""
    if key in _seen:
        return False
    _seen.add(key)
    if _enabled:
        stream = _stream if _stream is not None else sys.stderr
        try:
            print(PREFIX + message, file=stream, flush=True)
        except (OSError, ValueError):  # closed or broken stream: a notice must never crash a script
            pass
    return True


def not_emulated(name: str, what: str = "calls do nothing") -> bool:
    """The standard wording for inert parts: ``<name> is not emulated; <what>``."""
    return notice_once(f"not-emulated:{name}", f"{name} is not emulated; {what}")


def seen() -> frozenset[str]:
    """Keys noticed so far (tests use it to check that a notice was given)."""
    return frozenset(_seen)


def reset() -> None:
    """Forget every key, so the next run shows its notices again."""
    _seen.clear()


def set_stream(stream: TextIO | None) -> None:
    """Send notices to ``stream`` (None: back to ``sys.stderr`` at call time)."""
    global _stream
    _stream = stream


def set_enabled(enabled: bool) -> None:
    """``--quiet``: keep recording keys but print nothing."""
    global _enabled
    _enabled = bool(enabled)
