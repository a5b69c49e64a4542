"""Outputs on the PC replace only what maixemu wrote itself: the check made before a run writes any.

A video (``--lcd record:out.mp4``), a WAV file (``--audio-out wav:out.wav``), a KPU log or an
evaluation report named on the command line may already exist. maixemu replaces one only when it
wrote it itself — each kind carries maixemu's mark: a ``free`` box (MP4) or ``JUNK`` chunk (AVI) at
the end of a video, an ``INFO/ISFT`` chunk in a WAV, a marker file in a report folder, its own JSON
lines in a KPU log — or when the user passed ``--overwrite``; anything else is refused with one line
naming the file and what to do. An empty file holds nothing to lose and is replaced. The target's
folder must be one the run can write into, and a folder is never taken for a file: all checked at
the start, so a run never fails half-way for a name it was given.

This module imports nothing from ``maixemu.firmware`` or ``maixemu.session``.
"""

from __future__ import annotations

import json
import os
import stat
import struct
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

#: What maixemu puts into the files it writes (and looks for before replacing one).
MARK = b"maixemu"
OVERWRITE_HINT = "choose another name, or pass --overwrite to replace it"


class OutputRefused(ValueError):
    """An output that must not be written: one line, naming the file and what to do."""


# ------------------------------------------------------------------------------------ the check
def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(path.anchor or ".")


def check_writable_folder(folder: Path, what: str, target: Path | None = None) -> None:
    """``folder`` exists (or can be created) and the run may write into it: a file is made there and
    removed again (permissions, a read-only or pseudo file system: what the OS says, not a guess)."""
    place = _nearest_existing(folder)
    shown = target if target is not None else folder
    if not place.is_dir():
        raise OutputRefused(f"{what} {shown}: {place} is a file, not a folder")
    try:
        handle, probe = tempfile.mkstemp(prefix=".maixemu-probe-", dir=place)
    except OSError as exc:
        raise OutputRefused(f"{what} {shown}: cannot write into {place} ({exc.strerror or exc})") from None
    os.close(handle)
    os.unlink(probe)


def check_file(path: Path, what: str, *, ours: Callable[[Path], bool], overwrite: bool,
               streams: bool = False) -> None:
    """May ``path`` be written as an output? ``what`` starts the one line of :class:`OutputRefused`
    (``"cannot record to"``). ``streams``: the writer only appends, so a FIFO or a character device
    (``/dev/stdout``, ``/dev/null``) is fine — writing to one replaces nothing."""
    if path.is_dir():
        raise OutputRefused(f"{what} {path}: it is a folder; give a file name")
    if path.exists() or path.is_symlink():
        mode = os.stat(path).st_mode if path.exists() else 0
        if streams and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            return
        if not path.is_file():
            raise OutputRefused(f"{what} {path}: it is not a regular file; choose another name")
        if not overwrite and path.stat().st_size and not ours(path):
            raise OutputRefused(f"{what} {path}: it exists and maixemu did not write it; {OVERWRITE_HINT}")
    check_writable_folder(path.parent, what, path)


def check_folder(folder: Path, what: str, *, marker: str, names: Iterable[str], overwrite: bool) -> None:
    """May maixemu write ``names`` into ``folder``? It may when none of them is there yet, when the
    folder carries maixemu's ``marker`` (it wrote them), or with ``--overwrite``."""
    if folder.exists() and not folder.is_dir():
        raise OutputRefused(f"{what} {folder}: it is a file, not a folder; give a folder name")
    check_writable_folder(folder, what)
    if overwrite or not folder.is_dir() or (folder / marker).is_file():
        return
    found = sorted(name for name in names if os.path.lexists(folder / name))
    if found:
        raise OutputRefused(f"{what} {folder}: it holds {', '.join(found)} that maixemu did not write; "
                            f"{OVERWRITE_HINT}")


# ------------------------------------------------------------------------------------ videos
def video_mark(suffix: str) -> bytes:
    """The chunk appended to a finished video: an MP4 ``free`` box or an AVI ``JUNK`` chunk, both
    skipped by every reader."""
    payload = MARK + b" recording\n"
    if suffix.lower() == ".avi":
        return b"JUNK" + struct.pack("<I", len(payload)) + payload + (b"\0" if len(payload) % 2 else b"")
    return struct.pack(">I", 8 + len(payload)) + b"free" + payload


def is_maixemu_video(path: Path) -> bool:
    mark = video_mark(path.suffix)
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, path.stat().st_size - len(mark)))
            return handle.read() == mark
    except OSError:
        return False


# ------------------------------------------------------------------------------------ WAV files
def wav_mark() -> bytes:
    """A ``LIST/INFO`` chunk naming maixemu as the software (``ISFT``), as WAV editors write theirs."""
    value = MARK + b"\0"
    info = b"INFO" + b"ISFT" + struct.pack("<I", len(value)) + value + (b"\0" if len(value) % 2 else b"")
    return b"LIST" + struct.pack("<I", len(info)) + info


def is_maixemu_wav(path: Path) -> bool:
    """True when the RIFF file's chunks before ``data`` include maixemu's INFO chunk."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        return False
    offset = 12
    while offset + 8 <= len(head):
        kind, size = head[offset:offset + 4], struct.unpack("<I", head[offset + 4:offset + 8])[0]
        if kind == b"data":
            return False
        if kind == b"LIST" and head[offset + 8:offset + 8 + size].startswith(b"INFOISFT"):
            return MARK in head[offset + 8:offset + 8 + size]
        offset += 8 + size + (size & 1)
    return False


# ------------------------------------------------------------------------------------ JSON lines
def is_maixemu_json_lines(path: Path, keys: Iterable[str]) -> bool:
    """True when the file's first line is a JSON object with ``keys`` (a KPU log's ``n``/``call``)."""
    try:
        with open(path, encoding="utf-8") as handle:
            first = handle.readline(65536)
        entry = json.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(entry, dict) and all(key in entry for key in keys)


__all__ = ["MARK", "OVERWRITE_HINT", "OutputRefused", "check_file", "check_folder", "check_writable_folder",
           "is_maixemu_json_lines", "is_maixemu_video", "is_maixemu_wav", "video_mark", "wav_mark"]
