"""One-time notices: tell the user, once per run, that something a script calls is not emulated.

Inert firmware parts (``Maix.I2S``, ``machine.UART`` writes, ``machine.Timer`` callbacks, ...) must not
flood the console when a script calls them every frame, yet the user must learn that the call did
nothing on the PC. :func:`notice_once` prints ``[maixemu] <message>`` the first time a key is seen
on this board (``current().notices``), so every run shows its notices again.

Notices go to the board console's stderr as it is *at call time* (a runner or a test that
redirects stderr captures them), unless the board's ``notices.stream`` names another stream;
``notices.enabled = False`` (``--quiet``) keeps recording keys but prints nothing.

Hints are the same mechanism for device errors: the firmware's message first, then one
``[maixemu]`` line saying what to do on the PC — :func:`with_advice` inside an exception's text,
:func:`hint` after a message the firmware prints. ``--quiet`` silences both.
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
    _say(board, message)
    return True


def _say(board, message: str) -> bool:
    """``[maixemu] message`` on the notice stream, unless ``--quiet``; True if printed."""
    state = board.notices
    if not state.enabled:
        return False
    stream = state.stream if state.stream is not None else board.console.stderr
    try:
        print(PREFIX + message, file=stream, flush=True)
    except (OSError, ValueError):  # closed or broken stream: a notice must never crash a script
        pass
    return True


def hints_enabled() -> bool:
    """False under ``--quiet`` (the plugin's ``quiet=True``, the project file's ``quiet = true``)."""
    return current().notices.enabled


def with_advice(message: str, advice: str | None) -> str:
    """An exception text: the firmware's message, then ``[maixemu] advice`` on its own line (if any;
    none under ``--quiet``). The message stays first and byte for byte (scripts print and compare it)."""
    if not advice or not hints_enabled():
        return message
    separator = "" if message.endswith("\n") else "\n"
    return f"{message}{separator}{PREFIX}{advice}"


def hint(message: str, key: str | None = None) -> bool:
    """One ``[maixemu] message`` line that says what to do after a device message (``--quiet``
    silences it); with ``key``, only the first time that key is seen on this board."""
    if key is not None:
        return notice_once(f"hint:{key}", message)
    return _say(current(), message)


def not_emulated(name: str, what: str = "calls do nothing") -> bool:
    """The standard wording for inert parts: ``<name> is not emulated; <what>``."""
    return notice_once(f"not-emulated:{name}", f"{name} is not emulated; {what}")


def seen() -> frozenset[str]:
    """Keys noticed so far on this board (tests use it to check that a notice was given)."""
    return frozenset(current().notices.seen)
