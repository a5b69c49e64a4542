"""One-time notices: tell the user, once per run, that something a script calls is not emulated.

Inert firmware parts (``Maix.I2S``, ``machine.UART`` writes, ``machine.Timer`` callbacks, ...) must not
flood the console when a script calls them every frame, yet the user must learn that the call did
nothing on the PC. :func:`notice_once` prints ``[maixemu] <message>`` the first time a key is seen
on this board (``current().notices``), so every run shows its notices again.

Notices go to the board console's stderr as it is *at call time* (a runner or a test that
redirects stderr captures them), unless the board's ``notices.stream`` names another stream;
``notices.enabled = False`` (``--quiet``) keeps recording keys but prints nothing.
"""

from __future__ import annotations

from .state import current

PREFIX = "[maixemu] "


def notice_once(key: str, message: str) -> bool:
    """Print ``[maixemu] message`` unless ``key`` was already noticed; True if it was printed."""
    board = current()
    state = board.notices
    if key in state.seen:
        return False
    state.seen.add(key)
    if state.enabled:
        stream = state.stream if state.stream is not None else board.console.stderr
        try:
            print(PREFIX + message, file=stream, flush=True)
        except (OSError, ValueError):  # closed or broken stream: a notice must never crash a script
            pass
    return True


def not_emulated(name: str, what: str = "calls do nothing") -> bool:
    """The standard wording for inert parts: ``<name> is not emulated; <what>``."""
    return notice_once(f"not-emulated:{name}", f"{name} is not emulated; {what}")


def seen() -> frozenset[str]:
    """Keys noticed so far on this board (tests use it to check that a notice was given)."""
    return frozenset(current().notices.seen)
