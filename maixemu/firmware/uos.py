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

import errno
from collections import namedtuple
from contextlib import contextmanager
from typing import Any, Iterator

from ..host import storage as _storage
from . import notices
from .vfs_spiffs import VfsSpiffs  # SPIFFS on the script's flash device object

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
    user = _user_vfs(target)
    if user is not None:
        return [entry[0] for entry in user[0].ilistdir(user[1])]
    if _is_root(target):
        return _store().mounts() + [point[1:] for point in _user_mounts()]
    with _device_errors():
        return _store().listdir(target)


def ilistdir(path: Any = None) -> Iterator[tuple[str, int, int, int]]:
    """``(name, type, inode, size)`` per entry; type is 0x4000 for directories, 0x8000 for files."""
    target = "." if path is None else path
    user = _user_vfs(target)
    if user is not None:
        return iter(user[0].ilistdir(user[1]))
    if _is_root(target):
        return iter([(name, S_IFDIR, 0, 0) for name in _store().mounts()])
    with _device_errors():
        entries = []
        for name, entry in _store().scandir(target):
            try:
                size = 0 if entry.is_dir else entry.found.stat().st_size
            except OSError:  # vanished meanwhile
                continue
            entries.append((name, S_IFDIR if entry.is_dir else S_IFREG, 0, size))
    return iter(entries)


def mkdir(path: Any) -> None:
    user = _user_vfs(path)
    if user is not None:
        return user[0].mkdir(user[1])
    if _is_root(path) or _mount_root(path):
        raise _error(errno.EEXIST)
    with _device_errors():
        _store().mkdir(path)


def rmdir(path: Any) -> None:
    user = _user_vfs(path)
    if user is not None:
        return user[0].rmdir(user[1])
    if _is_root(path) or _mount_root(path):
        raise _error(errno.EPERM)
    with _device_errors():
        _store().rmdir(path)


def remove(path: Any) -> None:
    """Delete a file; a symlink is removed itself, its target stays."""
    user = _user_vfs(path)
    if user is not None:
        return user[0].remove(user[1])
    if _is_root(path) or _mount_root(path):
        raise _error(errno.EISDIR)
    with _device_errors():
        _store().remove(path)


unlink = remove


def rename(old: Any, new: Any) -> None:
    """Rename within one mount (an existing file at ``new`` is replaced); across mounts: EXDEV.

    A symlink is renamed itself, never its target.
    """
    source, target = _user_vfs(old), _user_vfs(new)
    if source is not None or target is not None:
        if source is None or target is None or source[0] is not target[0]:
            raise _error(errno.EXDEV)
        return source[0].rename(source[1], target[1])
    if _is_root(old) or _is_root(new) or _mount_root(old) or _mount_root(new):
        raise _error(errno.EPERM)
    with _device_errors():
        _store().rename(old, new)


def stat(path: Any) -> tuple[int, ...]:
    """``(mode, ino, dev, nlink, uid, gid, size, atime, mtime, ctime)``, times since 2000."""
    user = _user_vfs(path)
    if user is not None:
        return user[0].stat(user[1])
    if _is_root(path):
        return (S_IFDIR, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    with _device_errors():
        entry = _store().lookup(path)
        info = entry.found.stat()
    mode = S_IFDIR if entry.is_dir else S_IFREG
    mtime = max(0, int(info.st_mtime) - _EPOCH_2000)
    size = 0 if mode == S_IFDIR else info.st_size
    return (mode, 0, 0, 0, 0, 0, size, mtime, mtime, mtime)


def statvfs(path: Any) -> tuple[int, ...]:
    """``(bsize, frsize, blocks, bfree, bavail, files, ffree, favail, flag, namemax)``."""
    user = _user_vfs(path)
    if user is not None:
        return user[0].statvfs(user[1])
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


# -- user mounts (MicroPython's Python VFS protocol) -------------------------------------------------

def _user_mounts() -> dict[str, Any]:
    from .state import current

    return current().system.vfs_mounts


def _user_vfs(path: Any) -> tuple[Any, str] | None:
    """(VFS object, path inside it) when ``path`` lies in a mount the script made, else None."""
    mounts = _user_mounts()
    if not mounts or isinstance(path, int):
        return None
    device = _store().device_path(path)
    for point in sorted(mounts, key=len, reverse=True):
        if device == point or device.startswith(point + "/"):
            return mounts[point], device[len(point):] or "/"
    return None


def mount(vfs: Any, mount_point: Any, *, readonly: bool = False, mkfs: bool = False) -> None:
    """``uos.mount(vfs, "/point", readonly=False, mkfs=False)`` (MicroPython ``mp_vfs_mount``).

    ``vfs`` is an object with MicroPython's VFS methods (``open``, ``ilistdir``, ``stat``, ``mkdir``,
    ``remove``, ``rename``, ``rmdir``, ``statvfs``; ``mount(readonly, mkfs)`` and ``umount()`` are
    called when present): the script's own file system, in memory, never on the PC's disk. A point
    that is already mounted (``/flash``, ``/sd``, an earlier mount) is ``OSError(EPERM)``.
    ``uos.VfsSpiffs(dev)`` is SPIFFS on the script's flash device (:mod:`.vfs_spiffs`); FAT on a block
    device (``uos.VfsFat(bdev)``) is not emulated.
    """
    point = _store().device_path(mount_point).rstrip("/") or "/"
    if point == "/" or "/" in point[1:]:
        raise NotImplementedError(f"uos.mount at {point!r}: maixemu mounts file systems at /NAME only")
    mounts = _user_mounts()
    if point in mounts or point[1:] in _store().mounts():
        raise _error(errno.EPERM)
    if callable(getattr(vfs, "mount", None)):
        vfs.mount(bool(readonly), bool(mkfs))
    mounts[point] = vfs


def umount(mnt: Any) -> None:
    """``uos.umount("/point")`` or ``umount(vfs)``: the VFS's ``umount()`` runs; unknown: OSError(EINVAL)."""
    mounts = _user_mounts()
    if isinstance(mnt, (str, bytes)):
        point = _store().device_path(mnt).rstrip("/") or "/"
        found = point if point in mounts else None
    else:
        found = next((p for p, v in mounts.items() if v is mnt), None)
    if found is None:
        if isinstance(mnt, str) and (_store().device_path(mnt).strip("/") in _store().mounts()):
            raise NotImplementedError(f"uos.umount({mnt!r}): the board's own /flash and /sd stay mounted in maixemu")
        raise _error(errno.EINVAL)
    vfs = mounts.pop(found)
    if callable(getattr(vfs, "umount", None)):
        vfs.umount()


class _BlockDeviceFs:
    """``uos.VfsFat(bdev)``: the firmware's FAT file system on a block device object.

    The constructor reads the device's protocol as the firmware's ``make_new`` does, so a device
    missing a part gets MicroPython's AttributeError naming it; a complete one then gets
    NotImplementedError (the on-disk formats are not emulated).
    """

    _kind = "VfsFat"

    def __init__(self, bdev: Any, *args: Any, **kwargs: Any):
        missing = self._missing(bdev)
        if missing is not None:
            raise AttributeError(f"'{type(bdev).__name__}' object has no attribute '{missing}'")
        raise NotImplementedError(
            f"uos.{self._kind} on a block device is not emulated (its on-disk format); mount an object with "
            "open/ilistdir/stat methods instead (uos.mount(vfs, '/ram'))")

    @staticmethod
    def _missing(bdev: Any) -> str | None:
        """extmod/vfs_fat.c: ``readblocks`` always; ``count`` when there is no ``ioctl``."""
        if not hasattr(bdev, "readblocks"):
            return "readblocks"
        if not hasattr(bdev, "ioctl") and not hasattr(bdev, "count"):
            return "count"
        return None

    @staticmethod
    def mkfs(bdev: Any) -> None:
        raise NotImplementedError("uos.VfsFat.mkfs on a block device is not emulated")


class VfsFat(_BlockDeviceFs):
    _kind = "VfsFat"




def flash_format() -> bool:
    """``uos.flash_format()``: empty ``/flash`` (through the board's storage: with the default
    copy-on-write mount the PC's files stay, only the run's view of /flash becomes empty)."""
    print("[MAIXPY]:Spiffs Unmount.")
    print("[MAIXPY]:Spiffs Formating...")
    with _device_errors():
        store = _store()
        for name in store.listdir("/flash"):
            _remove_tree(f"/flash/{name}")
    print("[MAIXPY]:Spiffs Format successful ")
    print("[MAIXPY]:Spiffs Mount successful ")
    return True


def _remove_tree(path: str) -> None:
    store = _store()
    if store.lookup(path).is_dir:
        for name in store.listdir(path):
            _remove_tree(f"{path}/{name}")
        store.rmdir(path)
    else:
        store.remove(path)


# -- the script's open() ---------------------------------------------------------------------------

def open_device(file: Any, mode: str = "r", buffering: int = -1, encoding: str | None = None,
                errors: str | None = None, newline: str | None = None, closefd: bool = True,
                opener: Any = None) -> Any:
    """The builtin ``open`` a script sees: device paths (``/sd/x``, or relative to the device cwd).

    Returns an ordinary file object (writes go where the board's storage keeps them); failures are
    MicroPython-style ``OSError(errno)``. A file is a path, never a descriptor: ``mp_vfs_open`` takes
    the path with ``mp_obj_str_get_str`` (MaixPy has no ``MICROPY_VFS_POSIX``), so ``open(3)`` is the
    firmware's TypeError — and the PC's descriptors (maixemu's own recordings, past the medium's
    capacity) stay out of reach.
    """
    if not isinstance(file, (str, bytes)) and not hasattr(file, "__fspath__"):
        raise TypeError(f"can't convert '{type(file).__name__}' object to str implicitly")
    user = _user_vfs(file)
    if user is not None:
        return user[0].open(user[1], mode)
    if _is_root(file) or _mount_root(file):
        raise _error(errno.EISDIR)
    try:
        with _device_errors():
            return _store().open(file, mode, buffering, encoding, errors, newline)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            _hint_outside_mounts(file)
        raise


def _hint_outside_mounts(path: Any) -> None:
    """A PC path in a script (``/home/me/x.txt``, ``C:/...``) is the pitfall: say once where files live."""
    store = _store()
    try:
        device = store.device_path(path)
    except Exception:  # noqa: BLE001 - a hint must never replace the device's error
        return
    top = device.strip("/").split("/", 1)[0]
    if top in store.mounts():
        return
    where = ", ".join(f"/{name} = {store.mount(name).root}" for name in store.mounts())
    notices.hint(f"{device!r} is not on the device: MaixPy sees only /sd and /flash ({where}); "
                 "use a path like '/sd/name.txt'", key="outside-mounts")
