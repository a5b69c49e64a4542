"""MaixPy ``uos``/``os``: the board's filesystem (``/flash`` and ``/sd``) on top of mapped PC folders.

Every path goes through :func:`maixemu.host.storage.current` — ``Storage.resolve`` maps device paths
(absolute, or relative to the device working directory) to host paths and refuses anything outside
the mapped folders (``..`` escapes, symlinks pointing out) with ``OSError(ENOENT)``. Host errors are
re-raised the way MicroPython reports them: ``OSError(errno)`` printing ``[Errno 2] ENOENT``, without
the host path.

The root ``/`` is the virtual mount table: ``listdir("/") == ['flash', 'sd']`` (``['flash']`` without
a card), ``stat("/")`` is a directory, ``statvfs("/")`` is MicroPython's mostly-empty tuple.
``statvfs`` on a mount gives device-like sizes: ``/flash`` a 3 MiB SPIFFS (4 KiB blocks), ``/sd`` an
8 GB FAT32 card (32 KiB clusters); free blocks shrink with what the mapped folder holds.

:func:`open_device` is what the runner installs as the script's builtin ``open``.
"""

from __future__ import annotations

import builtins
import errno
import os as _os
import stat as _stat
from collections import namedtuple
from contextlib import contextmanager
from typing import Any, Iterator

from ..host import storage as _storage
from . import notices

sep = "/"

S_IFDIR = 0x4000
S_IFREG = 0x8000
_EPOCH_2000 = 946684800  # seconds from 1970-01-01 to 2000-01-01 (FAT times are epoch 2000)
_WALK_LIMIT = 20000  # entries counted at most when estimating used space

#: (block size, total blocks, name max) of the emulated filesystems.
FS_GEOMETRY = {
    "flash": (4096, 768, 32),  # SPIFFS, 3 MiB
    "sd": (32768, 242304, 255),  # FAT32, ~7.4 GiB (an "8 GB" card)
}

uname_result = namedtuple("uname_result", ["sysname", "nodename", "release", "version", "machine"])
_UNAME = uname_result(
    "MaixPy", "MaixPy", "0.6.2", "v0.6.2 on maixemu; Sipeed_M1 with kendryte-k210", "Sipeed_M1 with kendryte-k210"
)


def _error(code: int) -> OSError:
    return OSError(code, errno.errorcode.get(code, str(code)))


@contextmanager
def _device_errors() -> Iterator[None]:
    """Turn host OSErrors into MicroPython-style ``OSError(errno)`` (no host path in the message)."""
    try:
        yield
    except OSError as exc:
        if exc.errno is None:
            raise
        raise _error(exc.errno) from None


def _store() -> _storage.Storage:
    return _storage.current()


def _is_root(path: Any) -> bool:
    return _store().device_path(path) == "/"


def _mount_root(path: Any) -> str | None:
    """The mount name if ``path`` is exactly a mount point (``/sd``), else None."""
    device = _store().device_path(path)
    name = device.lstrip("/")
    return name if name in _store().roots() and device == "/" + name else None


# -- directory functions -------------------------------------------------------------------------

def getcwd() -> str:
    return _store().cwd


def chdir(path: Any) -> None:
    with _device_errors():
        _store().chdir(path)


def listdir(path: Any = None) -> list[str]:
    """Names in ``path`` (default: the working directory); ``/`` lists the mount points."""
    target = "." if path is None else path
    if _is_root(target):
        return _store().mounts()
    with _device_errors():
        return [name for name, _ in _store().visible_entries(target)]


def ilistdir(path: Any = None) -> Iterator[tuple[str, int, int, int]]:
    """``(name, type, inode, size)`` per entry; type is 0x4000 for directories, 0x8000 for files."""
    target = "." if path is None else path
    if _is_root(target):
        return iter([(name, S_IFDIR, 0, 0) for name in _store().mounts()])
    with _device_errors():
        entries = []
        for name, real in _store().visible_entries(target):
            try:
                info = real.stat()
            except OSError:  # vanished meanwhile
                continue
            is_dir = _stat.S_ISDIR(info.st_mode)
            entries.append((name, S_IFDIR if is_dir else S_IFREG, 0, 0 if is_dir else info.st_size))
    return iter(entries)


def mkdir(path: Any) -> None:
    if _is_root(path) or _mount_root(path):
        raise _error(errno.EEXIST)
    with _device_errors():
        _os.mkdir(_store().resolve(path))


def rmdir(path: Any) -> None:
    if _is_root(path) or _mount_root(path):
        raise _error(errno.EPERM)
    with _device_errors():
        _os.rmdir(_store().resolve(path))


def remove(path: Any) -> None:
    if _is_root(path) or _mount_root(path):
        raise _error(errno.EISDIR)
    with _device_errors():
        _os.remove(_store().resolve(path))


unlink = remove


def rename(old: Any, new: Any) -> None:
    """Rename within one mount (an existing file at ``new`` is replaced); across mounts: EXDEV."""
    store = _store()
    with _device_errors():
        old_mount, _ = store.split(old)
        new_mount, _ = store.split(new)
        if old_mount is None or new_mount is None or _mount_root(old) or _mount_root(new):
            raise _error(errno.EPERM)
        if old_mount != new_mount:
            raise _error(errno.EXDEV)
        _os.replace(store.resolve(old), store.resolve(new))


def stat(path: Any) -> tuple[int, ...]:
    """``(mode, ino, dev, nlink, uid, gid, size, atime, mtime, ctime)``, times since 2000."""
    if _is_root(path):
        return (S_IFDIR, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    with _device_errors():
        info = _store().resolve(path).stat()
    mode = S_IFDIR if _stat.S_ISDIR(info.st_mode) else S_IFREG
    mtime = max(0, int(info.st_mtime) - _EPOCH_2000)
    size = 0 if mode == S_IFDIR else info.st_size
    return (mode, 0, 0, 0, 0, 0, size, mtime, mtime, mtime)


def _used_bytes(root: Any) -> int:
    total = 0
    seen = 0
    for folder, dirs, files in _os.walk(root):
        for name in files:
            try:
                total += _os.lstat(_os.path.join(folder, name)).st_size
            except OSError:
                pass
            seen += 1
            if seen >= _WALK_LIMIT:
                return total
        seen += len(dirs)
        if seen >= _WALK_LIMIT:
            return total
    return total


def statvfs(path: Any) -> tuple[int, ...]:
    """``(bsize, frsize, blocks, bfree, bavail, files, ffree, favail, flag, namemax)``."""
    store = _store()
    if _is_root(path):
        return (0, 0, 0, 0, 0, 0, 0, 0, 1, 128)
    with _device_errors():
        mount, _ = store.split(path)
        store.resolve(path)
    assert mount is not None
    block, blocks, namemax = FS_GEOMETRY[mount]
    used_blocks = -(-_used_bytes(store.roots()[mount]) // block)
    free = max(0, blocks - used_blocks)
    return (block, block, blocks, free, free, 0, 0, 0, 0, namemax)


# -- misc ------------------------------------------------------------------------------------------

def uname() -> uname_result:
    return _UNAME


def sync() -> None:
    return None


def urandom(n: int) -> bytes:
    return _os.urandom(int(n))


def dupterm(stream: Any = None, index: int = 0) -> None:
    return None


def mount(*args: Any, **kwargs: Any) -> None:
    notices.not_emulated("uos.mount", "the mounts are /flash and /sd as mapped by maixemu")


def umount(*args: Any, **kwargs: Any) -> None:
    notices.not_emulated("uos.umount", "the mounts are /flash and /sd as mapped by maixemu")


# -- the script's open() ---------------------------------------------------------------------------

def open_device(file: Any, mode: str = "r", buffering: int = -1, encoding: str | None = None,
                errors: str | None = None, newline: str | None = None, closefd: bool = True,
                opener: Any = None) -> Any:
    """The builtin ``open`` a script sees: device paths (``/sd/x``, or relative to the device cwd).

    Returns an ordinary CPython file object; failures are MicroPython-style ``OSError(errno)``.
    Integer file descriptors are passed through unchanged.
    """
    if isinstance(file, int):
        return builtins.open(file, mode, buffering, encoding, errors, newline, closefd, opener)
    if _is_root(file) or _mount_root(file):
        raise _error(errno.EISDIR)
    with _device_errors():
        host = _store().resolve(file)
        return builtins.open(host, mode, buffering, encoding, errors, newline, closefd, opener)


def _reset_state() -> None:
    return None
