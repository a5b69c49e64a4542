"""Signals, ``--timeout`` and an end the script will not take: how a run is stopped.

Every way a run is asked to end goes through the board's :class:`~maixemu.firmware.state.RunControl`:
the first request raises the end in the script (at its next firmware call, or right away from a
signal handler), every later firmware call raises it again, on every script thread. What happens
when the script swallows it (a bare ``except:``) depends on who owns the process:

* ``maixemu run`` (``owns_process=True``): SIGINT (Ctrl-C, exit 130), SIGTERM and the other
  default-fatal signals (SIGHUP, SIGQUIT, ... exit 128 + N) and ``--timeout`` (SIGALRM, exit 0)
  end the run as the frame budget does. A script that gets the end twice, a second Ctrl-C or
  SIGTERM, or a script still running :data:`END_GRACE_S` after the end was asked for is stopped
  for good: the recordings are finalised and the process leaves (``stop_now``).
* the pytest plugin and other in-process runs (``owns_process=False``): pytest stays in charge.
  No handler is installed except a Ctrl-C that chains to the one in place (the run ends, then
  pytest gets its ``KeyboardInterrupt`` as without the plugin); SIGTERM keeps its default. The
  ``timeout=`` is a watcher thread, and a script that swallows the end gets it again and again,
  also where it makes no firmware call (an asynchronous exception every :data:`INTERRUPT_EVERY_S`),
  until it leaves — so ``timeout=3`` holds against a bare ``except:``.

Handlers raise only while the script (or the board's set-up: a stuck FIFO, a webcam) runs; once
the script has returned they only record the request, so clean-up is never interrupted.
"""

from __future__ import annotations

import functools
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from ..firmware.state import RunControl, RunEnded

#: Seconds a script gets to end after it was asked to (a timeout, a signal, a spent budget).
END_GRACE_S = 2.0
#: How often a script that swallows its end gets it again (in-process runs).
INTERRUPT_EVERY_S = 0.02
#: A ``--timeout`` alarm that fires while the handlers are still being installed comes again after this.
ARMING_RETRY_S = 0.001

#: Signals whose default action ends the process (terminal closed, ``kill``, CPU limits...): each
#: ends the run like SIGTERM, so recordings are finalised; exit code 128 + the signal's number.
#: (SIGPIPE and SIGXFSZ are ignored by Python; SIGKILL cannot be caught: recordings are written
#: so that a killed run loses at most its last frame.)
FATAL_SIGNALS: tuple[str, ...] = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGXCPU",
                                  "SIGVTALRM", "SIGPROF", "SIGPWR", "SIGIO")

StopNow = Callable[[str, int], None]


class RunGuard:
    """Installs the stopping rules of one run (see the module docstring) and removes them again.

    ``phase`` is ``"arming"`` (inside ``__enter__``) → ``"setup"`` → ``"script"`` → ``"finishing"``;
    handlers raise only in ``"setup"`` and ``"script"``. :attr:`interrupted` tells the plugin that
    Ctrl-C was pressed.

    Why ``"arming"``: a ``--timeout`` shorter than the time it takes to install the handlers fires
    inside ``__enter__``, where an exception escapes the ``with`` statement before its body (and its
    handlers for an end during set-up) begins; the alarm then comes again a moment later instead.
    """

    def __init__(self, control: RunControl, *, timeout: float | None, owns_process: bool,
                 stop_now: StopNow | None = None, notice: Callable[[str], None] | None = None):
        self.control = control
        self.timeout = timeout
        self.owns_process = owns_process
        self.stop_now = stop_now
        self.notice = notice or (lambda text: None)
        self.phase = "arming"
        self.interrupted = False
        #: undo steps (their results, e.g. signal.signal's previous handler, are not used)
        self._restore: list[Callable[[], object]] = []
        self._watcher: threading.Thread | None = None
        self._stop_watching = threading.Event()
        self._main = threading.get_ident()
        self._fired: set[str] = set()

    # -- phases ----------------------------------------------------------------------------------
    def script_started(self) -> None:
        self.phase = "script"

    def script_returned(self) -> None:
        """The script's main code is done: from here on nothing is raised into this thread."""
        self.phase = "finishing"
        if self._alarm_armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self._alarm_armed = False

    _alarm_armed = False

    # -- install / remove ------------------------------------------------------------------------
    def __enter__(self) -> RunGuard:
        self.phase = "arming"
        on_main = threading.current_thread() is threading.main_thread()
        if self.owns_process:
            self.control.on_ignored = self._ignored
            if on_main:
                self._install_process_handlers()
        elif on_main:
            self._chain_ctrl_c()
        alarm_does_timeout = self.owns_process and on_main and hasattr(signal, "SIGALRM")
        self._watcher = threading.Thread(target=self._watch, args=(None if alarm_does_timeout else self.timeout,),
                                         name="maixemu-run-watch", daemon=True)
        self._watcher.start()
        self.phase = "setup"
        return self

    def __exit__(self, *exc: object) -> None:
        self.phase = "finishing"
        self._stop_watching.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)
        for restore in reversed(self._restore):
            restore()
        self._restore.clear()
        self.control.on_ignored = None

    def _raise_here(self) -> bool:
        return self.phase in ("setup", "script") and threading.get_ident() == self._main

    # -- maixemu run: the process's signals -------------------------------------------------------
    def _install_process_handlers(self) -> None:
        seconds = self.timeout
        if seconds and hasattr(signal, "SIGALRM"):
            reason = f"--timeout of {seconds:g} s reached"

            def on_alarm(signum: int, frame: Any) -> None:
                if self.phase == "arming":  # still inside __enter__: come again once the run's body runs
                    signal.setitimer(signal.ITIMER_REAL, ARMING_RETRY_S)
                    return
                self._request(reason, 0, RunEnded)

            previous_alarm = signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, seconds)
            self._alarm_armed = True

            def restore_alarm() -> None:
                if self._alarm_armed:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    self._alarm_armed = False
                signal.signal(signal.SIGALRM, previous_alarm)

            self._restore.append(restore_alarm)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:

            def on_int(signum: int, frame: Any) -> None:
                self.interrupted = True
                self._request("interrupted (Ctrl-C)", 130, KeyboardInterrupt)

            signal.signal(signal.SIGINT, on_int)
            self._restore.append(lambda: signal.signal(signal.SIGINT, signal.default_int_handler))
        fatal = [name for name in FATAL_SIGNALS if hasattr(signal, name)]
        if not seconds and hasattr(signal, "SIGALRM"):
            fatal.append("SIGALRM")  # without --timeout a stray alarm would kill the run unfinalised

        def on_fatal(signum: int, frame: Any) -> None:
            self._request(f"terminated ({signal.Signals(signum).name})", 128 + signum, RunEnded)

        for name in fatal:
            number = getattr(signal, name)
            current = signal.getsignal(number)
            if name != "SIGTERM" and current is not signal.SIG_DFL:
                continue  # someone else handles it (or ignores it): leave it alone
            previous = signal.signal(number, on_fatal)
            self._restore.append(functools.partial(signal.signal, number, previous))

    def _request(self, reason: str, exit_code: int, kind: type[BaseException]) -> None:
        """A signal asked the run to end: the first of each kind is raised in the script (and ends its
        threads); a second one means the first was swallowed: stop now."""
        factory = _factory(kind, reason, exit_code)
        self.control.end(reason, exit_code, exception=factory)
        if reason in self._fired and self.stop_now is not None and self.phase != "finishing":
            self.stop_now(reason, exit_code)
            return
        self._fired.add(reason)
        if self._raise_here():
            self.control.delivered()
            raise factory()

    def _ignored(self, reason: str, exit_code: int) -> None:
        """A script thread got the end a second time: it swallowed the first (command line: stop). Once
        the script's main code has returned, its threads are the run's own business (``run_script``)."""
        if self.stop_now is not None and self.phase != "finishing":
            self.stop_now(reason, exit_code)

    # -- in-process: pytest's Ctrl-C ---------------------------------------------------------------
    def _chain_ctrl_c(self) -> None:
        previous = signal.getsignal(signal.SIGINT)
        if not callable(previous):
            return  # SIG_IGN / SIG_DFL: Ctrl-C is not ours to handle

        def on_int(signum: int, frame: Any) -> None:
            self.interrupted = True
            self.control.end("interrupted (Ctrl-C)", 130, exception=KeyboardInterrupt)
            if self._raise_here():
                previous(signum, frame)  # pytest's own (KeyboardInterrupt)

        signal.signal(signal.SIGINT, on_int)
        self._restore.append(lambda: signal.signal(signal.SIGINT, previous))

    # -- the watcher: timeouts off the main thread, and ends the script will not take --------------
    def _watch(self, timeout: float | None) -> None:
        control = self.control
        started = time.monotonic()
        ended_at: float | None = None
        while not self._stop_watching.is_set():
            now = time.monotonic()
            if timeout and now - started >= timeout and not control.ending:
                control.end(f"--timeout of {timeout:g} s reached")
                control.interrupt_scripts()  # a busy loop makes no firmware call
            if control.ending and self.phase != "finishing":
                ended_at = ended_at or now
                if now - ended_at >= END_GRACE_S:
                    if self.owns_process and self.stop_now is not None:
                        self.stop_now(control.reason or "the run ended", control.exit_code)
                        return
                    control.interrupt_scripts(stubborn=True)  # again and again, until the script leaves
                    self._stop_watching.wait(INTERRUPT_EVERY_S)
                    continue
            self._stop_watching.wait(0.05)


def _factory(kind: type[BaseException], reason: str, exit_code: int) -> Callable[[], BaseException]:
    if kind is KeyboardInterrupt:
        return KeyboardInterrupt
    return lambda: RunEnded(reason, exit_code)


__all__ = ["END_GRACE_S", "FATAL_SIGNALS", "INTERRUPT_EVERY_S", "RunGuard"]
