"""The board's storage media: how much they hold, what is in use, and the files a script writes.

A mount point's medium (:class:`Medium`) is MaixPy's SPIFFS for ``/flash`` or an 8 GB FAT32 card
for ``/sd``. What a mount holds is counted once (:class:`MediumUsage`: one walk, no entry limit) and
then kept up to date by every change of size — a write, ``truncate``, a copy into the layer, a
deletion or a rename — so that neither a big folder nor many opens cost a walk each, and nothing
grows past the medium by a side door.

:class:`DeviceFile` is the file a write-mode ``open`` gives: unbuffered, as MicroPython's file
objects are, so a write that does not fit fails at the write as on the board (never later, where a
CPython buffer would flush it, or never at all when the file object is dropped):

* FAT (``/sd``, FatFs ``f_write`` + MicroPython's ``vfs_fat_file.c``): what fits is written (whole
  clusters, at most 4 GiB - 1 per file), then ``OSError: [Errno 28] ENOSPC``.
* SPIFFS (``/flash``, ``vfs_spiffs_file.c`` over SPIFFS ``ec68ba8``): ``SPIFFS_write`` reserves
  the pages of the whole write plus one (``spiffs_gc_check(len + page)``) or writes nothing; MaixPy
  maps its error to ``OSError: [Errno 5] EIO``. A write smaller than a logical page (4096 bytes) goes
  to SPIFFS's write cache and returns its length; the cache reaches the flash when a write leaves
  its page, at ``flush()`` and ``close()`` (which then raise EIO) and at ``seek()`` (whose SPIFFS
  ignores the error). Creating a file needs a free page (``SPIFFS_open`` fails: ``ENOENT``).

When data is lost where the board says nothing (a dropped file object, a seek), or the PC's own disk
is full first, one notice says so. This module imports nothing from ``maixemu.firmware``.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

#: The host's "no room" errors: the PC's disk (or the user's quota) is full before the medium.
HOST_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def device_error(code: int, path: str | None = None) -> OSError:
    """``OSError(code, 'ENAME')`` as MicroPython prints it (``[Errno 2] ENOENT``), optionally naming
    the device path the script gave (never a host path)."""
    name = errno.errorcode.get(code, str(code))
    return OSError(code, name) if path is None else OSError(code, name, path)


# ---------------------------------------------------------------------------------------- media
@dataclass(frozen=True)
class Medium:
    """What a mount's ``statvfs`` reports, where it is full, and how a write that does not fit fails.

    ``unit`` is the allocation unit (a SPIFFS data page, a FAT cluster); a file of ``size`` bytes
    takes ``overhead_units + ceil(size / unit)`` units. ``kind`` chooses the write rule (see the
    module docstring).
    """

    kind: str
    block_size: int  # f_bsize / f_frsize of statvfs
    capacity: int  # bytes of file data the medium holds
    unit: int
    overhead_units: int
    namemax: int
    #: the largest file the file system can describe (FAT32: a 32-bit size)
    max_file: int | None = None
    #: writes smaller than this go to a write cache first (SPIFFS's logical page); 0: none
    write_cache: int = 0

    @property
    def full_errno(self) -> int:
        """What a write that does not fit raises on the board."""
        return errno.EIO if self.kind == "spiffs" else errno.ENOSPC

    def cost(self, size: int | None) -> int:
        """Bytes of the medium a file of ``size`` bytes takes (None: no file)."""
        if size is None:
            return 0
        return (self.overhead_units + -(-max(size, 0) // self.unit)) * self.unit

    def largest_file(self, free: int) -> int:
        """The biggest file that fits into ``free`` bytes of the medium."""
        largest = max(0, (free // self.unit - self.overhead_units) * self.unit)
        return largest if self.max_file is None else min(largest, self.max_file)

    def statvfs(self, used: int) -> tuple[int, ...]:
        """``(bsize, frsize, blocks, bfree, bavail, files, ffree, favail, flag, namemax)``."""
        free = max(0, self.capacity - used) // self.block_size
        return (self.block_size, self.block_size, self.capacity // self.block_size, free, free, 0, 0, 0, 0,
                self.namemax)


#: MaixPy's ``/flash``: SPIFFS over 3 MiB of the SPI flash from 0xD00000 (``CONFIG_SPIFFS_SIZE=0x300000``,
#: logical block 128 KiB, page 4 KiB, names up to 128 bytes: ``projects/maixpy_k210/config_defaults.mk``).
#: ``SPIFFS_info`` counts ``(blocks - 2) * (pages_per_block - lookup_pages) + 1`` data pages of
#: ``page - 5`` bytes: (24 - 2) * (32 - 1) + 1 = 683 pages of 4091 bytes = 2 794 153 bytes, which
#: ``statvfs`` reports in 128 KiB blocks (21). A file takes an index header page plus its data pages.
SPIFFS_FLASH = Medium("spiffs", block_size=0x20000, capacity=683 * 4091, unit=4091, overhead_units=1, namemax=128,
                      write_cache=0x1000)

#: ``/sd``: an "8 GB" FAT32 card, 242 304 clusters of 32 KiB; FatFs stops a file at 0xFFFFFFFF bytes.
FAT32_CARD = Medium("fat32", block_size=32768, capacity=242304 * 32768, unit=32768, overhead_units=0, namemax=255,
                    max_file=0xFFFFFFFF)

MEDIA = {"flash": SPIFFS_FLASH, "sd": FAT32_CARD}


# ---------------------------------------------------------------------------------------- usage
class MediumUsage:
    """Bytes of a medium in use by the files under ``base()`` (the layer, or a writable folder).

    Counted by one walk the first time it is needed, then changed by :meth:`resize` for every file
    whose size changes — what the board's own file system knows without looking. ``hidden`` names
    at the top of the folder are not on the device (the ``.maixemu`` folder). Thread-safe.
    """

    def __init__(self, medium: Medium, base: Callable[[], Path | None], hidden: frozenset[str] = frozenset(),
                 on_full: Callable[[str], None] | None = None):
        self.medium = medium
        self._base = base
        self._hidden = hidden
        self.on_full = on_full
        self._used: int | None = None
        self._sizes: dict[str, int | None] = {}
        self._lock = threading.RLock()

    def used(self) -> int:
        with self._lock:
            if self._used is None:
                self._used = self._walk()
            return self._used

    def free(self) -> int:
        return max(0, self.medium.capacity - self.used())

    def _walk(self) -> int:
        base = self._base()
        if base is None or not base.is_dir():
            return 0
        total = 0
        for folder, dirs, files in os.walk(base):
            if folder == str(base):
                dirs[:] = [d for d in dirs if d not in self._hidden]
            for name in files:
                try:
                    total += self.medium.cost(os.lstat(os.path.join(folder, name)).st_size)
                except OSError:
                    pass
        return total

    def size(self, host: str | os.PathLike) -> int | None:
        """The size this count has for a file (None: no file)."""
        key = os.fspath(host)
        with self._lock:
            if key in self._sizes:
                return self._sizes[key]
            try:
                return os.lstat(key).st_size
            except OSError:
                return None

    def remember(self, host: str | os.PathLike) -> None:
        """Note a file's size as counted now, before it is created or truncated behind the count's back
        (an open for writing)."""
        key = os.fspath(host)
        with self._lock:
            self.used()
            self._sizes.setdefault(key, self.size(key))

    @contextmanager
    def changing(self, host: str | os.PathLike) -> Iterator[None]:
        """Around a change of a file made by other means (unlink, copy, rename): counted from its size
        before to its size after."""
        self.remember(host)
        try:
            yield
        finally:
            try:
                after: int | None = os.lstat(host).st_size
            except OSError:
                after = None
            self.resize(host, after)

    def resize(self, host: str | os.PathLike, new_size: int | None) -> None:
        """A file's size changed (or it was created, None: removed): update the count. Its size before
        must be known (:meth:`remember`) or still be on disk."""
        key = os.fspath(host)
        with self._lock:
            used = self.used()
            self._used = used + self.medium.cost(new_size) - self.medium.cost(self.size(key))
            self._sizes[key] = new_size

    def moved(self, old: str | os.PathLike, new: str | os.PathLike) -> None:
        """A file or folder was renamed inside the count: the sizes known for it follow it."""
        old_key, new_key = os.fspath(old), os.fspath(new)
        prefix = old_key.rstrip(os.sep) + os.sep
        new_prefix = new_key.rstrip(os.sep) + os.sep
        with self._lock:
            for key in [k for k in self._sizes if k == new_key or k.startswith(new_prefix)]:
                del self._sizes[key]  # what was there is gone (counted out by the caller)
            for key in [k for k in self._sizes if k == old_key or k.startswith(prefix)]:
                self._sizes[new_key + key[len(old_key):]] = self._sizes.pop(key)

    def forget_tree(self, folder: str | os.PathLike) -> None:
        """Everything under ``folder`` is about to go (a folder removed or moved out of the count)."""
        for root, _, files in os.walk(os.fspath(folder)):
            for name in files:
                self.resize(os.path.join(root, name), None)

    def room_for(self, host: str | os.PathLike, new_size: int) -> bool:
        """True when the file can grow (or shrink) to ``new_size`` on this medium."""
        if self.medium.max_file is not None and new_size > self.medium.max_file:
            return False
        with self._lock:
            grow = self.medium.cost(new_size) - self.medium.cost(self.size(host))
            return grow <= 0 or grow <= self.free()

    def fitting_size(self, host: str | os.PathLike, wanted: int) -> int:
        """The largest size up to ``wanted`` the file can have (FatFs fills the last free cluster)."""
        with self._lock:
            current = self.size(host) or 0
            room = self.free() + self.medium.cost(current)
            return max(current if wanted > current else wanted, min(wanted, self.medium.largest_file(room)))

    def pages_free(self) -> int:
        return self.free() // self.medium.unit

    def told_full(self, what: str) -> None:
        if self.on_full is not None:
            self.on_full(what)


def copy_counted(source: Path, target: Path, usage: MediumUsage, shown: str) -> None:
    """Copy ``source`` to ``target`` (a layer's copy of a project file) as one more file of the medium:
    refused with the medium's full error when it does not fit, and written under a temporary name so
    that a full PC disk never leaves half a copy in place of the whole file."""
    size = source.stat().st_size
    if not usage.room_for(target, size):
        usage.told_full(f"no room to copy {shown} into the run's layer")
        raise device_error(usage.medium.full_errno, shown)
    with usage.changing(target):
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".copy", dir=target.parent)
        os.close(handle)
        try:
            shutil.copyfile(source, temporary)
            os.replace(temporary, target)
        except OSError as exc:
            if os.path.lexists(temporary):
                os.unlink(temporary)
            if exc.errno in HOST_FULL_ERRNOS:
                usage.told_full(f"{shown} (the PC's disk is full)")
                raise device_error(usage.medium.full_errno, shown) from None
            raise


# ---------------------------------------------------------------------------------------- files
class DeviceFile(io.FileIO):
    """A file opened for writing on the device: every write and size change goes through the medium's
    :class:`MediumUsage` and fails as the board's file system does (see the module docstring).

    ``name`` is the device path the script gave (``print(f)`` never shows a PC path).
    """

    def __init__(self, host: Path, mode: str, *, usage: MediumUsage, shown: str):
        usage.remember(host)
        super().__init__(host, mode)
        self.name = shown
        self._usage = usage
        self._host = os.fspath(host)
        self._shown = shown
        self._append = mode.startswith("a")
        #: SPIFFS's write cache of this file: (file offset, bytes) not on the flash yet
        self._cache: tuple[int, bytearray] | None = None
        usage.resize(self._host, os.fstat(self.fileno()).st_size)

    # -- writing ----------------------------------------------------------------------------------
    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        medium = self._usage.medium
        position = self.tell()
        if self._append:  # O_APPEND: the end of the file, cached bytes included
            position = os.fstat(self.fileno()).st_size
            if self._cache is not None:
                position = max(position, self._cache[0] + len(self._cache[1]))
        if medium.write_cache:
            return self._spiffs_write(view, position)
        return self._fat_write(view, position)

    def _fat_write(self, view: memoryview, position: int) -> int:
        end = position + len(view)
        fits = self._usage.fitting_size(self._host, end)
        count = max(0, min(len(view), fits - position))
        written = self._host_write(view[:count]) if count else 0
        if written < count:  # the PC took fewer bytes than the card had room for
            self._full(f"{self._shown} (the PC's disk is full)")
        if written < len(view):  # FatFs wrote what fits: vfs_fat_file.c says ENOSPC
            self._full(f"{self._shown} got {written} of {len(view)} bytes")
        return written

    def _spiffs_write(self, view: memoryview, position: int) -> int:
        limit = self._usage.medium.write_cache
        cache = self._cache
        if cache is not None:
            start, data = cache
            inside = start <= position <= start + len(data) and position + len(view) <= start + limit
            if len(view) < limit and inside:
                data[position - start:position - start + len(view)] = view
                super().seek(position + len(view))
                return len(view)
            self._write_back(loud=True)  # SPIFFS_write dumps the cache first; its error is this write's
        if len(view) < limit:  # a small write: into the cache, as SPIFFS_write does
            self._cache = (position, bytearray(view))
            super().seek(position + len(view))
            return len(view)
        self._spiffs_store(position, view)
        return len(view)

    def _spiffs_store(self, position: int, view: memoryview) -> None:
        """``spiffs_hydro_write``: the part over existing data, then the appended part, each reserving
        its pages plus one (``spiffs_gc_check(len + page)``) or failing whole with EIO."""
        size = self._usage.size(self._host) or 0
        page = self._usage.medium.unit
        over = max(0, min(len(view), size - position))
        for part, at in ((view[:over], position), (view[over:], position + over)):
            if not len(part):
                continue
            if -(-(len(part) + page) // page) > self._usage.pages_free():
                self._full(f"{len(view)} bytes for {self._shown}")
            super().seek(at)
            if self._host_write(part) < len(part):
                self._full(f"{self._shown} (the PC's disk is full)")

    def _write_back(self, *, loud: bool) -> None:
        """The cache reaches the flash: raise EIO when it does not fit (``loud``), else only tell."""
        cache, self._cache = self._cache, None
        if cache is None:
            return
        start, data = cache
        here = super().tell()
        try:
            self._spiffs_store(start, memoryview(data))
        except OSError:
            if loud:
                raise
        finally:
            if not self.closed:
                super().seek(here)

    def _host_write(self, part: memoryview) -> int:
        """Write ``part`` at the position; a short count only where the PC's disk is full."""
        try:
            written = super().write(part) or 0
        except OSError as exc:
            self._usage.resize(self._host, os.fstat(self.fileno()).st_size)
            if exc.errno in HOST_FULL_ERRNOS:
                self._full(f"{self._shown} (the PC's disk is full)")
            raise
        self._usage.resize(self._host, max(self._usage.size(self._host) or 0, super().tell()))
        return written

    def _full(self, what: str) -> None:
        self._usage.told_full(what)
        raise device_error(self._usage.medium.full_errno)

    def truncate(self, size: int | None = None) -> int:
        self._write_back(loud=True)
        target = self.tell() if size is None else int(size)
        if target < 0:
            raise device_error(errno.EINVAL)
        if not self._usage.room_for(self._host, target):
            self._full(f"{self._shown} truncated to {target} bytes")
        result = super().truncate(target)
        self._usage.resize(self._host, target)
        return result

    # -- the cache's write-back points --------------------------------------------------------------
    def flush(self) -> None:
        self._write_back(loud=True)
        super().flush()

    def seek(self, offset: int, whence: int = 0) -> int:
        self._write_back(loud=False)  # SPIFFS_lseek flushes the cache and ignores what that says
        return super().seek(offset, whence)

    def read(self, size: int | None = -1) -> bytes:
        self._write_back(loud=False)
        return super().read(size)

    def readinto(self, buffer) -> int | None:
        self._write_back(loud=False)
        return super().readinto(buffer)

    def readall(self) -> bytes:
        self._write_back(loud=False)
        return super().readall()

    def close(self) -> None:
        if self.closed:
            return
        try:
            self._write_back(loud=True)
        finally:
            super().close()

    def __repr__(self) -> str:
        return f"<io.FileIO {self._shown!r}>"


def open_stream(raw: io.FileIO, mode: str, buffering: int, encoding: str | None, errors: str | None,
                newline: str | None) -> IO[Any]:
    """What ``open()`` builds on a raw file. Reading: a buffered stream (and a text wrapper). Writing:
    the raw :class:`DeviceFile` itself (and a text wrapper that passes every write on), unbuffered
    as on the board, so an error comes from the write that caused it."""
    binary = "b" in mode
    if buffering == 0 and not binary:
        raise ValueError("can't have unbuffered text I/O")
    stream: io.RawIOBase | io.BufferedIOBase = raw
    if not isinstance(raw, DeviceFile) and buffering != 0:
        size = io.DEFAULT_BUFFER_SIZE if buffering in (-1, 1) else buffering
        stream = io.BufferedRandom(raw, size) if "+" in mode else io.BufferedReader(raw, size)
    if binary:
        return cast(IO[Any], stream)
    text = io.TextIOWrapper(cast(IO[bytes], stream), encoding or "utf-8", errors, newline,
                            line_buffering=buffering == 1, write_through=isinstance(raw, DeviceFile))
    text.mode = mode  # type: ignore[misc]
    return text


__all__ = ["DeviceFile", "FAT32_CARD", "HOST_FULL_ERRNOS", "MEDIA", "Medium", "MediumUsage", "SPIFFS_FLASH",
           "copy_counted", "device_error", "open_stream"]
