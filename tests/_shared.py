"""Import-friendly access to ../shared for test modules that build parameter lists at collection time."""

from conftest import REPO_ROOT, SHARED_DIR, shared_path  # noqa: F401


def snapshot(folder):
    """Every file and folder under ``folder`` with its bytes (what a run must leave as it was), leaving
    out maixemu's own ``.maixemu`` copy-on-write folder."""
    from pathlib import Path

    folder = Path(folder)
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*")) if ".maixemu" not in p.relative_to(folder).parts}


def make_kfpkg(path, model=None, address=0x300000, name="m.kmodel"):
    """A minimal kflash package mapping ``model`` (default: maixemu's demo model) at ``address``."""
    import json
    import zipfile

    model = model or REPO_ROOT / "maixemu" / "data" / "edge_filters.kmodel"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("flash-list.json", json.dumps(
            {"version": "0.1.0", "files": [{"address": address, "bin": name, "sha256Prefix": False}]}))
        archive.writestr(name, model.read_bytes())
    return path


def split_summary(stderr: str) -> tuple[str, str]:
    """(what a run printed before its closing line, how the closing line says it ended).

    Every ``maixemu run`` ends with one summary line (``[maixemu] <how it ended>: N frames in S s ...``);
    this checks it is there, last and only once, and hands back the rest for exact comparisons.
    """
    import re

    pattern = re.compile(r"^\[maixemu\] (.*?): \d+ frames? in \d+\.\d s")
    lines = stderr.splitlines(keepends=True)
    assert lines, "no closing line"
    found = pattern.match(lines[-1])
    assert found, f"the last line is not the closing line: {lines[-1]!r}"
    assert not any(pattern.match(line) for line in lines[:-1]), stderr
    return "".join(lines[:-1]), found.group(1)


def video_frame_count(path) -> int:
    """How many frames OpenCV reads back from a video (the reader every user's player resembles)."""
    import cv2

    capture = cv2.VideoCapture(str(path))
    assert capture.isOpened(), f"cannot read back {path}"
    count = 0
    while capture.read()[0]:
        count += 1
    capture.release()
    return count


def write_wav(path, samples, rate: int, channels: int = 1):
    """A 16-bit PCM WAV file of ``samples`` (int16, interleaved when ``channels`` > 1); returns ``path``."""
    import wave

    import numpy as np

    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(np.asarray(samples, dtype="<i2").tobytes())
    return path


#: --timeout budgets tried in turn by :func:`with_growing_timeout` (seconds).
GROWING_TIMEOUTS = (4.0, 16.0, 64.0)


def with_growing_timeout(attempt, reached, timeouts=GROWING_TIMEOUTS):
    """``attempt(timeout)`` with the first budget in which the script reached what the test is about.

    A ``--timeout`` counts from before set-up, so on a loaded machine a small one can end the run
    before the script gets to the point under test (its loop, its fifth frame). Instead of asserting
    that the machine is fast enough, such a test retries with a longer budget; ``reached(result)``
    says whether the script got there (e.g. it printed "ready"). Returns the last attempt's result.
    """
    result = None
    for timeout in timeouts:
        result = attempt(timeout)
        if reached(result):
            return result
    return result


def read_line(proc, timeout: float = 120.0) -> str:
    """The next line a child prints on stdout; a hang guard kills the child when none comes within
    ``timeout`` (its stdout then ends, and the test fails saying so instead of hanging)."""
    import threading

    import pytest

    guard = threading.Timer(timeout, proc.kill)
    guard.start()
    try:
        line = proc.stdout.readline()
    finally:
        guard.cancel()
    if not line:  # (its stdout ended: it exited, or the guard killed it)
        _, err = proc.communicate()
        pytest.fail(f"no line from the child within {timeout:g} s (exit code {proc.returncode}): {err}")
    return line
