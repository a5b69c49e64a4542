"""Zeroed byte arenas whose untouched pages cost no memory (the KPU RAM, a model's main memory).

``np.zeros`` is ``calloc``: it gets fresh, lazily mapped zero pages only when glibc serves the
block with its own ``mmap``, and glibc stops doing that for blocks below its *dynamic* mmap
threshold, which rises to the size of any mmapped block freed before (a model loaded and dropped
earlier, a big temporary of a load). The block then comes from the heap and ``calloc`` writes
every byte of it: measured, a second 2 MiB KPU RAM had 0.35-2 MiB resident before any layer ran.
A private anonymous ``mmap`` of our own is zero pages that become resident only when written, whatever
came before; ``clear`` hands the pages back (Linux ``MADV_DONTNEED`` on a private anonymous
mapping reads as zeros again) instead of writing zeros over all of them.
"""

from __future__ import annotations

import mmap
import sys

import numpy as np

#: Arenas below this many bytes are plain ``np.zeros`` (a mapping rounds up to whole pages).
MMAP_MIN_BYTES = 64 << 10


def lazy_zeros(size: int) -> np.ndarray:
    """A writable zeroed uint8 array of ``size`` bytes; at least ``MMAP_MIN_BYTES``: backed by
    an anonymous mapping (its ``base`` chain ends at the ``mmap``), so only written pages count."""
    if size < MMAP_MIN_BYTES:
        return np.zeros(size, dtype=np.uint8)
    try:
        if hasattr(mmap, "MAP_PRIVATE") and hasattr(mmap, "MAP_ANONYMOUS"):
            # private: Python's default is a shared mapping (shmem, whose pages MADV_DONTNEED
            # does not zero)
            mapping = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        else:
            mapping = mmap.mmap(-1, size)
    except (OSError, ValueError):  # (no anonymous mappings here: the ordinary zeros)
        return np.zeros(size, dtype=np.uint8)
    return np.frombuffer(mapping, dtype=np.uint8)


def _mapping(arena: np.ndarray) -> mmap.mmap | None:
    base: object = arena
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):  # (what np.frombuffer keeps, numpy 2)
        base = base.obj
    return base if isinstance(base, mmap.mmap) else None


def lazily_mapped(arena: np.ndarray) -> bool:
    """Whether ``arena`` is a whole ``lazy_zeros`` mapping (what ``clear`` can release)."""
    mapping = _mapping(arena)
    return mapping is not None and len(mapping) == arena.nbytes


def clear(arena: np.ndarray) -> None:
    """Zero ``arena`` in place (views of it stay valid): a whole private ``lazy_zeros`` mapping
    on Linux by releasing its pages, anything else by writing zeros."""
    mapping = _mapping(arena)
    if (mapping is not None and len(mapping) == arena.nbytes and sys.platform.startswith("linux")
            and hasattr(mmap, "MADV_DONTNEED") and hasattr(mmap, "MAP_PRIVATE")):
        mapping.madvise(mmap.MADV_DONTNEED)  # (private anonymous pages read as zeros again)
        return
    arena[...] = 0
