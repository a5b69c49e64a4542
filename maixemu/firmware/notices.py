"""One-time notices: tell the user, once per run, that something a script calls is not emulated.

Inert firmware parts (``Maix.I2S``, ``machine.UART`` writes, ``machine.Timer`` callbacks, ...) must not
flood the console when a script calls them every frame, yet the user must learn that the call did
nothing on the PC. :func:`notice_once` prints ``[maixemu] <message>`` the first time a key is seen
on this board (``current().notices``), so every run shows its notices again.

Notices go to the board console's stderr as it is *at call time* (a runner or a test that
redirects stderr captures them), unless the board's ``notices.stream`` names another stream;
``notices.enabled = False`` (``--quiet``) keeps recording keys but prints nothing.

Hints are the same mechanism for device errors: the firmware's message first, then one
``[maixemu]`` line saying what to do on the PC. A message the firmware prints gets :func:`hint`
after it. An exception the firmware raises keeps the firmware's text byte for byte in its ``args``
and ``str()`` (scripts print and compare them): :func:`advised` keeps the advice *beside* the
exception, where :func:`advice_of` (``maixemu.advice(exc)``) reads it, and whoever reports the
exception when it ends the run (the runner, a thread's or a callback's report, the IDE page)
prints it on its own ``[maixemu]`` line after the device's traceback (:func:`advice_line`).
``--quiet`` silences both.
"""

from __future__ import annotations

from typing import TypeVar

from .state import BoardState, current

PREFIX = "[maixemu] "
#: Where :func:`advised` keeps an exception's advice (an attribute of the exception object, so it
#: travels with it through re-raises and threads; never part of ``args``).
ADVICE_ATTRIBUTE = "_maixemu_advice"  # (maixemu.advice reads the same name: the package root imports no layer)

ExcT = TypeVar("ExcT", bound=BaseException)


def notice_once(key: str, message: str) -> bool:
    """Print ``[maixemu] message`` unless ``key`` was already noticed; True if it was printed."""
    board = current()
    state = board.notices
    if key in state.seen:
        return False
    state.seen.add(key)
    _say(board, message)
    return True


def _say(board: BoardState, message: str) -> bool:
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


def advised(exc: ExcT, advice: str | None) -> ExcT:
    """``exc`` (the firmware's exception, its text untouched) with maixemu's ``advice`` kept beside it:
    ``raise advised(ValueError("[MAIXPY]kpu: check img format err!"), "call img.pix_to_ai() first")``."""
    if advice:
        setattr(exc, ADVICE_ATTRIBUTE, advice)
    return exc


def advice_of(exc: BaseException | None) -> str | None:
    """What maixemu advises about ``exc`` (see :func:`advised`), or None; never part of ``str(exc)``."""
    value = getattr(exc, ADVICE_ATTRIBUTE, None) if exc is not None else None
    return value if isinstance(value, str) and value else None


def advice_line(exc: BaseException | None, enabled: bool = True) -> str:
    """``[maixemu] advice`` and a newline for a report of ``exc`` (after its traceback), or "" when
    it has none or hints are off (``enabled=False``: ``--quiet``)."""
    advice = advice_of(exc) if enabled else None
    return f"{PREFIX}{advice}\n" if advice else ""


def report_advice(board: BoardState, exc: BaseException) -> None:
    """After the device's report of an exception that ended a thread or a callback: the advice on its
    own ``[maixemu]`` line on the board's notice stream (unless ``--quiet``)."""
    advice = advice_of(exc)
    if advice:
        _say(board, advice)


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
