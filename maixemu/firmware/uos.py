"""MaixPy ``uos``/``os``: the board's filesystem (``/flash`` and ``/sd``) on top of mapped PC folders.

Every path goes through :func:`maixemu.host.storage.current` — the board's :class:`Storage` maps
device paths (absolute, or relative to the device working directory) to the PC, keeps writes in the
run's copy-on-write layer unless a folder was mounted for writing, and refuses anything outside the
mounts (``..`` escapes, symlinks pointing out) with ``OSError(ENOENT)``. Host errors are re-raised
the way MicroPython reports them: ``OSError(errno)`` printing ``[Errno 2] ENOENT``, without the host
path.

The root ``/`` is the virtual mount table: ``listdir("/") == ['flash', 'sd']`` (``['flash']`` without
a card), ``stat("/")`` is a directory, ``statvfs("/")`` is MicroPython's mostly-empty tuple.
``statvfs`` on a mount gives the device's numbers: ``/flash`` MaixPy's SPIFFS (2 794 153 bytes of
data in 128 KiB blocks, names up to 128 bytes), ``/sd`` an 8 GB FAT32 card (32 KiB clusters); free
space shrinks with what the mount holds, and writing past it fails with ``ENOSPC``.

:func:`open_device` is what the runner installs as the script's builtin ``open`` (and ``uio.open``).
"""

from __future__ import annotations

import builtins
import errno
from collections import namedtuple
from contextlib import contextmanager
from typing import Any, Iterator

from ..host import storage as _storage
from . import notices

sep = "/"

S_IFDIR = 0x4000
S_IFREG = 0x8000
_EPOCH_2000 = 946684800  # seconds from 1970-01-01 to 2000-01-01 (FAT times are epoch 2000)

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


def _mount_root(path: Any) -> bool:
    """True if ``path`` is exactly a mount point (``/sd``)."""
    return _store().is_mount_point(path)


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
        return _store().listdir(target)


def ilistdir(path: Any = None) -> Iterator[tuple[str, int, int, int]]:
    """``(name, type, inode, size)`` per entry; type is 0x4000 for directories, 0x8000 for files."""
    target = "." if path is None else path
    if _is_root(target):
        return iter([(name, S_IFDIR, 0, 0) for name in _store().mounts()])
    with _device_errors():
        entries = []
        for name, entry in _store().scandir(target):
            try:
                size = 0 if entry.is_dir else entry.host.stat().st_size
            except OSError:  # vanished meanwhile
                continue
            entries.append((name, S_IFDIR if entry.is_dir else S_IFREG, 0, size))
    return iter(entries)


def mkdir(path: Any) -> None:
    if _is_root(path) or _mount_root(path):
        raise _error(errno.EEXIST)
    with _device_errors():
        _store().mkdir(path)


def rmdir(path: Any) -> None:
    if _is_root(path) or _mount_root(path):
        raise _error(errno.EPERM)
    with _device_errors():
        _store().rmdir(path)


def remove(path: Any) -> None:
    """Delete a file; a symlink is removed itself, its target stays."""
    if _is_root(path) or _mount_root(path):
        raise _error(errno.EISDIR)
    with _device_errors():
        _store().remove(path)


unlink = remove


def rename(old: Any, new: Any) -> None:
    """Rename within one mount (an existing file at ``new`` is replaced); across mounts: EXDEV.

    A symlink is renamed itself, never its target.
    """
    if _is_root(old) or _is_root(new) or _mount_root(old) or _mount_root(new):
        raise _error(errno.EPERM)
    with _device_errors():
        _store().rename(old, new)


def stat(path: Any) -> tuple[int, ...]:
    """``(mode, ino, dev, nlink, uid, gid, size, atime, mtime, ctime)``, times since 2000."""
    if _is_root(path):
        return (S_IFDIR, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    with _device_errors():
        entry = _store().lookup(path)
        info = entry.host.stat()
    mode = S_IFDIR if entry.is_dir else S_IFREG
    mtime = max(0, int(info.st_mtime) - _EPOCH_2000)
    size = 0 if mode == S_IFDIR else info.st_size
    return (mode, 0, 0, 0, 0, 0, size, mtime, mtime, mtime)


def statvfs(path: Any) -> tuple[int, ...]:
    """``(bsize, frsize, blocks, bfree, bavail, files, ffree, favail, flag, namemax)``."""
    if _is_root(path):
        return (0, 0, 0, 0, 0, 0, 0, 0, 1, 128)
    with _device_errors():
        return _store().statvfs(path)


# -- misc ------------------------------------------------------------------------------------------

def uname() -> uname_result:
    return _UNAME


def sync() -> None:
    return None


def urandom(n: int) -> bytes:
    import os as _os

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

    Returns an ordinary file object (writes go where the board's storage keeps them); failures are
    MicroPython-style ``OSError(errno)``. Integer file descriptors are passed through unchanged.
    """
    if isinstance(file, int) and not isinstance(file, bool):
        return builtins.open(file, mode, buffering, encoding, errors, newline, closefd, opener)
    if not isinstance(file, (str, bytes)) and not hasattr(file, "__fspath__"):
        raise TypeError(f"can't convert {type(file).__name__} to str")
    if _is_root(file) or _mount_root(file):
        raise _error(errno.EISDIR)
    with _device_errors():
        return _store().open(file, mode, buffering, encoding, errors, newline)
