"""What numba's disk cache holds of maixemu's compiled kernels, and the record of what runs asked for.

``maixemu kernels`` reports and fills the cache folder (``fast.cache_dir()``) that the background
compile worker (``compile_worker``) fills a kernel at a time. It asks numba's own cache index for
the answer, never a list of its own: a kernel's index file holds one entry per compiled
specialisation, keyed by its argument types, the CPU it was compiled for (``codegen.magic_tuple()``:
target triple, CPU name and features) and a hash of the function's bytecode (so a different
maixemu version's entry does not count), and numba drops a whole index whose source file changed.

Which specialisations a run needs is decided by the engine at run time (each layer's warm-up on
zeros, each image kernel's call), so the record is made there: every request the compile worker
is sent (``warmup._Worker.submit``) is appended to ``REQUESTS_NAME`` in the cache folder, and
``maixemu kernels --compile`` compiles every recorded request that is missing, beside the warm-ups
of the models it loads itself.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

#: the requests runs sent to the compile worker, one JSON line each (``compile_worker.request_line``)
REQUESTS_NAME = "requests.jsonl"
#: the files of the cache folder that are maixemu's or numba's (``clear`` removes only these)
OWN_FILES = ("compile.log", "compile.lock", REQUESTS_NAME)
NUMBA_SUFFIXES = (".nbi", ".nbc")
#: at most this many lines are kept in the record (a bound on a file no one may need to clear)
MAX_REQUESTS = 4096

_RECORD_LOCK = threading.Lock()


@dataclass(frozen=True)
class Request:
    """One kernel specialisation: ``module.name`` compiled for ``argtypes`` (numba types)."""

    module: str
    name: str
    argtypes: tuple

    def line(self) -> str:
        """The worker's own request line (``compile_worker.request_line``; the id is unused here)."""
        from .compile_worker import request_line

        return request_line(0, self.module, self.name, self.argtypes)


def record(folder: Path, module: str, name: str, argtypes: tuple) -> None:
    """Append one request to ``folder/REQUESTS_NAME`` unless it is there (a run must never fail
    on its record: an unwritable folder only loses the entry)."""
    req = Request(module, name, tuple(argtypes))
    try:
        line = req.line()
        with _RECORD_LOCK:
            folder.mkdir(parents=True, exist_ok=True)  # (a first request can come before any compile)
            path = folder / REQUESTS_NAME
            known = path.read_text(encoding="utf-8").splitlines(keepends=True) if path.exists() else []
            if line in known or len(known) >= MAX_REQUESTS:
                return
            with open(path, "a", encoding="utf-8") as f:
                f.write(line)
    except Exception:
        pass


def recorded(folder: Path) -> list[Request]:
    """The requests recorded in ``folder`` that still name an importable kernel's types (a line of
    another numba version or a removed kernel is skipped)."""
    path = folder / REQUESTS_NAME
    out: list[Request] = []
    seen: set[str] = set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines:
        if line in seen:
            continue
        seen.add(line)
        try:
            entry = json.loads(line)
            argtypes = pickle.loads(base64.b64decode(entry["sig"]))
            out.append(Request(str(entry["module"]), str(entry["name"]), tuple(argtypes)))
        except Exception:
            continue
    return out


def kpu_dispatchers() -> dict[str, Any]:
    """Every numba kernel of ``kpu.kernels`` by name (the module's dispatchers, found by asking
    the module: a kernel added there counts without an edit here)."""
    from numba.core.registry import CPUDispatcher

    from .fast import numba_cache_in

    with numba_cache_in():
        from . import kernels as module
    return {name: obj for name, obj in vars(module).items()
            if isinstance(obj, CPUDispatcher) and getattr(obj.py_func, "__module__", None) == module.__name__}


def compiled_signatures(dispatcher: Any) -> list[tuple]:
    """The argument types ``dispatcher`` has in its disk cache for this CPU and this bytecode."""
    cache = getattr(dispatcher, "_cache", None)
    impl_file = getattr(cache, "_cache_file", None)
    if cache is None or impl_file is None:  # (a dispatcher without cache=True)
        return []
    try:
        index = impl_file._load_index()
        codegen = dispatcher.targetctx.codegen()
        here = cache._index_key((), codegen)
    except Exception:
        return []
    return [key[0] for key in index if isinstance(key, tuple) and len(key) == 3 and key[1:] == here[1:]]


def is_compiled(dispatcher: Any, argtypes: tuple) -> bool:
    """Whether ``dispatcher`` has ``argtypes`` compiled in the disk cache for this CPU."""
    wanted = tuple(argtypes)
    return any(tuple(s) == wanted for s in compiled_signatures(dispatcher))


def numba_files(folder: Path) -> Iterator[Path]:
    """numba's cache files under ``folder`` (index and data files)."""
    if not folder.is_dir():
        return
    for root, _dirs, files in os.walk(folder):
        for name in files:
            if name.endswith(NUMBA_SUFFIXES):
                yield Path(root) / name


def size_on_disk(folder: Path) -> int:
    """Bytes of numba's cache files and maixemu's own files in ``folder``."""
    total = 0
    for path in list(numba_files(folder)) + [folder / n for n in OWN_FILES]:
        try:
            total += path.stat().st_size
        except OSError:
            pass
    return total


def clear(folder: Path) -> tuple[int, int]:
    """Remove numba's cache files and maixemu's own files from ``folder`` — nothing else (a file
    someone else put there stays, and so does the folder then): ``(files removed, bytes)``."""
    removed, freed = 0, 0
    paths: Iterable[Path] = list(numba_files(folder)) + [folder / n for n in OWN_FILES]
    for path in paths:
        try:
            size = path.stat().st_size
            path.unlink()
        except OSError:
            continue
        removed += 1
        freed += size
    if folder.is_dir():  # empty sub-folders numba made (one per source folder), then the folder
        for root, dirs, _files in sorted(os.walk(folder), key=lambda t: -len(t[0])):
            for d in dirs:
                try:
                    (Path(root) / d).rmdir()
                except OSError:
                    pass
        try:
            folder.rmdir()
        except OSError:
            pass
    return removed, freed
