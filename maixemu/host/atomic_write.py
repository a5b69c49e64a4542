"""Files written whole: under a temporary name of their own next to the target, renamed into place.

Why a name of its own (``tempfile.mkstemp``): two runs writing the same file at once (two runs on
one project, two evaluations into one report) must never rename each other's half-written
temporary file — a fixed ``.name.tmp`` lost one run's data and gave the other a spurious ENOENT.
Readers, and a run killed half-way, only ever see a whole old or a whole new file.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def atomic_file(path: Path, mode: str = "w", **open_options: Any) -> Iterator[IO[Any]]:
    """A file to write ``path``'s new content into; on success it replaces ``path``, on failure it is
    removed and ``path`` stays as it was."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, mode, **open_options) as out:
            yield out
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise


def write_text_atomically(path: Path, text: str) -> None:
    """``path.write_text(text)`` (UTF-8), written whole (see the module docstring)."""
    with atomic_file(path, "w", encoding="utf-8") as out:
        out.write(text)


__all__ = ["atomic_file", "write_text_atomically"]
