"""``uos.VfsSpiffs(dev)``: SPIFFS on a flash device the script provides (MaixPy ``vfs_spiffs.c``).

The device is any object with the geometry attributes ``fs_size``, ``erase_block``,
``log_block_size``, ``log_page_size`` and the methods ``read(buf, size, addr)`` (fills the
bytearray ``buf``), ``write(buf, size, addr)`` and optionally ``erase(size, addr)`` — MaixPy's own
RAM-disk demo (``basic/demo_ram_fs.py``) is such a class::

    vfs = uos.VfsSpiffs(RAMFlashDev()); vfs.mkfs(vfs); uos.mount(vfs, '/ramdisk')

What follows the firmware: the constructor's attribute reads (AttributeError naming the first
missing one), ``mkfs`` (mount, and format when the device holds no file system: erase every
erase block, then the ``[MAIXPY]:Spiffs ...`` lines), ``mount`` (``[MAIXPY]:Spiffs Mount
successful``, or ``OSError(EIO)`` on an unformatted device), SPIFFS's flat name space (``open``
of ``/a/b.txt`` makes a file named ``a/b.txt``; ``mkdir`` is ``NotImplementedError: SPIFFS not
support``, ``rmdir`` ``OSError(EIO)``; ``chdir`` does nothing and ``getcwd`` is ``''``), the open
modes of ``vfs_spiffs_file.c`` (``'a'`` does not create; every failed open is ENOENT), names of at
most 127 bytes, ``stat`` without times, and ``statvfs`` from ``SPIFFS_info``: ``(blocks - 2) *
(pages_per_block - lookup_pages) + 1`` data pages of ``log_page_size - 5`` bytes, reported in
units of the firmware's configured 128 KiB logical block (a 256 KiB RAM disk shows 0 blocks, as on
the board). A file takes an index page plus its data pages; a write that does not fit is
``OSError(EIO)`` (SPIFFS_ERR_FULL through ``file_obj_write``).

What does not: the bytes on the device are maixemu's own layout (a header, then every file's name
and contents), not SPIFFS's lookup and index pages. They are written and read through the
device's own ``erase``/``write``/``read`` whenever a file is closed, removed or renamed and when
the file system is mounted, so a device keeps its files across ``VfsSpiffs`` objects and mounts
as it does on the board; a script that inspects the raw bytes sees another format.
"""

from __future__ import annotations

import errno
import io
import struct
from typing import Any

from ..host.storage import Medium

#: ``CONFIG_SPIFFS_LOGICAL_BLOCK_SIZE`` (projects/maixpy_k210/config_defaults.mk): statvfs's unit.
CONFIG_LOGICAL_BLOCK_SIZE = 0x20000
#: ``CONFIG_SPIFFS_OBJ_NAME_LEN``: a name (with its leading ``/``) and its terminating zero.
OBJ_NAME_LEN = 128
#: ``sizeof(spiffs_page_header)``: object id, span index (two u16) and flags (u8), packed.
PAGE_HEADER = 5
#: ``sizeof(spiffs_obj_id)``: one lookup entry per page.
OBJ_ID_SIZE = 2
_MAGIC = b"maixemu-vfs-spiffs\x00\x01"
_GEOMETRY = ("fs_size", "erase_block", "log_block_size", "log_page_size")


def _error(code: int) -> OSError:
    return OSError(code, errno.errorcode[code])


def spiffs_medium(fs_size: int, log_block_size: int, log_page_size: int) -> Medium:
    """Capacity and allocation of SPIFFS with this geometry, as ``SPIFFS_info`` counts them."""
    blocks = fs_size // log_block_size
    pages_per_block = log_block_size // log_page_size
    lookup_pages = max(1, pages_per_block * OBJ_ID_SIZE // log_page_size)
    data_page = log_page_size - PAGE_HEADER
    data_pages = max(0, (blocks - 2) * (pages_per_block - lookup_pages) + 1)
    return Medium("spiffs", block_size=CONFIG_LOGICAL_BLOCK_SIZE, capacity=data_pages * data_page,
                  unit=data_page, overhead_units=1, namemax=OBJ_NAME_LEN)


class VfsSpiffs:
    """SPIFFS on the script's device (see the module docstring)."""

    def __init__(self, dev: Any):
        for name in (*_GEOMETRY, "write", "read"):  # spiffs_vfs_make_new's mp_load_attr/mp_load_method
            if not hasattr(dev, name):
                raise AttributeError(f"'{type(dev).__name__}' object has no attribute '{name}'")
        self._dev = dev
        self._geometry = {name: int(getattr(dev, name)) for name in _GEOMETRY}
        if min(self._geometry.values()) <= 0 or self._geometry["log_page_size"] > self._geometry["log_block_size"]:
            raise _error(errno.EINVAL)
        self._medium = spiffs_medium(self._geometry["fs_size"], self._geometry["log_block_size"],
                                     self._geometry["log_page_size"])
        self._files: dict[str, bytes] | None = None  # None: not mounted
        self._readonly = False

    def __repr__(self) -> str:
        return f"<VfsSpiffs object at 0x{id(self):x}>"

    # -- the device ----------------------------------------------------------------------------
    def _read(self, addr: int, size: int) -> bytes:
        buf = bytearray(size)
        self._dev.read(buf, size, addr)
        return bytes(buf)

    def _load(self) -> dict[str, bytes] | None:
        """The files the device holds, or None when it holds no file system (SPIFFS_ERR_NOT_A_FS)."""
        head = self._read(0, len(_MAGIC) + 4)
        if not head.startswith(_MAGIC):
            return None
        (length,) = struct.unpack_from("<I", head, len(_MAGIC))
        if len(head) + length > self._geometry["fs_size"]:
            return None
        body = self._read(len(head), length)
        files: dict[str, bytes] = {}
        pos = 0
        while pos < len(body):
            name_len, size = struct.unpack_from("<BI", body, pos)
            pos += 5
            name = body[pos:pos + name_len].decode("utf-8", "replace")
            files[name] = body[pos + name_len:pos + name_len + size]
            pos += name_len + size
        return files

    def _save(self) -> None:
        """Write the file table through the device's ``write`` (page by page, as SPIFFS writes)."""
        assert self._files is not None
        body = b"".join(struct.pack("<BI", len(n.encode()), len(d)) + n.encode() + d for n, d in self._files.items())
        image = _MAGIC + struct.pack("<I", len(body)) + body
        if len(image) > self._geometry["fs_size"]:
            raise _error(errno.EIO)
        page = self._geometry["log_page_size"]
        for addr in range(0, len(image), page):
            chunk = bytearray(image[addr:addr + page])
            self._dev.write(chunk, len(chunk), addr)

    def _format(self) -> None:
        size, unit = self._geometry["fs_size"], self._geometry["erase_block"]
        erase = getattr(self._dev, "erase", None)
        for addr in range(0, size - size % unit, unit):
            if erase is not None:
                erase(unit, addr)
            else:  # no erase method: the firmware's erase callback would fail; write erased flash
                self._dev.write(bytearray(b"\xff" * unit), unit, addr)
        self._files = {}
        self._save()
        self._files = None

    # -- mounting ------------------------------------------------------------------------------
    def _mount(self) -> bool:
        files = self._load()
        print(f"[MAIXPY]:Spiffs Mount {'successful' if files is not None else 'failed'} ")
        self._files = files
        return files is not None

    @staticmethod
    def mkfs(vfs: "VfsSpiffs") -> None:
        """``vfs.mkfs(vfs)``: mount; format first when the device holds no file system."""
        if not isinstance(vfs, VfsSpiffs):
            raise TypeError("VfsSpiffs object required")
        if vfs._mount():
            return
        print("[MAIXPY]:Spiffs Unmount.")
        print("[MAIXPY]:Spiffs Formating...")
        vfs._format()
        print("[MAIXPY]:Spiffs Format successful ")

    def mount(self, readonly: Any, mkfs: Any) -> None:
        """What ``uos.mount`` calls: mount or ``OSError(EIO)`` (``mkfs`` is not looked at)."""
        self._readonly = bool(readonly)
        if not self._mount():
            raise _error(errno.EIO)

    def umount(self) -> None:
        return None  # the firmware keeps the file system mounted internally

    def _mounted(self) -> dict[str, bytes]:
        if self._files is None:
            raise _error(errno.ENOEXEC)  # SPIFFS_ERR_NOT_MOUNTED
        return self._files

    # -- names ---------------------------------------------------------------------------------
    @staticmethod
    def _name(path: Any) -> str:
        """The SPIFFS object name of ``path`` without its leading ``/`` (names are flat)."""
        text = path.decode() if isinstance(path, bytes) else str(path)
        if text.startswith("./"):
            text = text[1:]
        return text.lstrip("/")

    def _check_name(self, name: str) -> None:
        if len(("/" + name).encode()) > OBJ_NAME_LEN - 1:
            raise _error(errno.EINVAL)  # SPIFFS_ERR_NAME_TOO_LONG

    # -- the VFS methods ----------------------------------------------------------------------
    def open(self, path: Any, mode: str = "r") -> Any:
        files = self._mounted()
        name = self._name(path)
        readable, create, truncate, append, binary = True, False, False, False, False
        for ch in str(mode):
            if ch in "wx":
                create = truncate = True
            elif ch == "a":
                append = True
            elif ch == "b":
                binary = True
        if not name or len(("/" + name).encode()) > OBJ_NAME_LEN - 1:
            raise _error(errno.ENOENT)  # file_open reports every failed SPIFFS_open as ENOENT
        if name not in files and not create:
            raise _error(errno.ENOENT)
        if create and (self._readonly or (name not in files and not self._fits(files, name, 0))):
            raise _error(errno.ENOENT)
        writable = create or append or "+" in str(mode)
        content = b"" if truncate else files.get(name, b"")
        if truncate:
            files[name] = b""
        return _SpiffsFile(self, name, content, binary=binary, writable=writable and not self._readonly,
                           readable=readable, append=append)

    def _fits(self, files: dict[str, bytes], name: str, size: int) -> bool:
        used = sum(self._medium.cost(len(d)) for n, d in files.items() if n != name)
        return used + self._medium.cost(size) <= self._medium.capacity

    def _store(self, name: str, content: bytes) -> None:
        files = self._mounted()
        if not self._fits(files, name, len(content)):
            raise _error(errno.EIO)  # SPIFFS_ERR_FULL: file_obj_write's EIO
        files[name] = content
        self._save()

    def ilistdir(self, path: Any = "") -> Any:
        files = self._mounted()
        as_bytes = isinstance(path, bytes)
        return iter([((n.encode() if as_bytes else n), 0x8000, 0, len(d)) for n, d in list(files.items())])

    def stat(self, path: Any) -> tuple[int, ...]:
        files = self._mounted()
        text = path.decode() if isinstance(path, bytes) else str(path)
        if text in ("", "/") or text.startswith("./"):
            return (0x4000, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        name = self._name(text)
        if name not in files:
            raise _error(errno.ENOENT)
        return (0x8000, 0, 0, 0, 0, 0, len(files[name]), 0, 0, 0)

    def statvfs(self, path: Any) -> tuple[int, ...]:
        files = self._mounted()
        used = sum(self._medium.cost(len(d)) for d in files.values())
        return self._medium.statvfs(used)

    def remove(self, path: Any) -> None:
        files = self._mounted()
        name = self._name(path)
        if name not in files:
            print("[MaixPy]:SPIFFS Error Code -10002")  # SPIFFS_ERR_NOT_FOUND, printed by spiffs_vfs_remove
            raise _error(errno.ENOENT)
        del files[name]
        self._save()

    def rename(self, old: Any, new: Any) -> None:
        files = self._mounted()
        source, target = self._name(old), self._name(new)
        if source not in files:
            raise _error(errno.ENOENT)
        self._check_name(target)
        content = files.pop(source)
        files[target] = content  # an existing target is removed first (SPIFFS_ERR_CONFLICTING_NAME)
        self._save()

    def mkdir(self, path: Any) -> None:
        raise NotImplementedError("SPIFFS not support")

    def rmdir(self, path: Any) -> None:
        raise _error(errno.EIO)

    def chdir(self, path: Any) -> None:
        return None

    def getcwd(self) -> str:
        return ""


class _SpiffsFile:
    """An open SPIFFS file: ``TextIOWrapper`` (str) or, with ``'b'``, ``FileIO`` (bytes); its
    contents reach the device when it is flushed or closed."""

    def __init__(self, fs: VfsSpiffs, name: str, content: bytes, *, binary: bool, writable: bool,
                 readable: bool, append: bool):
        self._fs, self._name = fs, name
        self._buffer = io.BytesIO(content)
        if append:
            self._buffer.seek(0, io.SEEK_END)
        self._binary, self._writable, self._readable, self._append = binary, writable, readable, append
        self._dirty = False
        self.closed = False

    def __repr__(self) -> str:
        return f"<io.{'FileIO' if self._binary else 'TextIOWrapper'} 0x{id(self):x}>"

    def _check(self) -> None:
        if self.closed:
            raise _error(errno.EBADF)

    def read(self, size: int = -1) -> Any:
        self._check()
        data = self._buffer.read(-1 if size is None else size)
        return data if self._binary else data.decode("utf-8", "replace")

    def readline(self, size: int = -1) -> Any:
        self._check()
        data = self._buffer.readline(size)
        return data if self._binary else data.decode("utf-8", "replace")

    def readlines(self) -> list[Any]:
        lines: list[Any] = []
        while True:
            line = self.readline()
            if not line:
                return lines
            lines.append(line)

    def readinto(self, buf: Any) -> int:
        self._check()
        return self._buffer.readinto(buf)

    def __iter__(self) -> Any:
        return iter(self.readline, b"" if self._binary else "")

    def write(self, data: Any) -> int:
        self._check()
        if not self._writable:
            raise _error(errno.EIO)  # SPIFFS_write on a read-only descriptor fails: file_obj_write's EIO
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(memoryview(data))
        if self._append:
            self._buffer.seek(0, io.SEEK_END)
        position = self._buffer.tell()
        end = max(len(self._buffer.getbuffer()), position + len(raw))
        if not self._fs._fits(self._fs._mounted(), self._name, end):
            raise _error(errno.EIO)
        self._buffer.write(raw)
        self._dirty = True
        return len(raw)

    def seek(self, offset: int, whence: int = 0) -> int:
        self._check()
        return self._buffer.seek(offset, whence)

    def tell(self) -> int:
        self._check()
        return self._buffer.tell()

    def flush(self) -> None:
        self._check()
        if self._dirty:
            self._fs._store(self._name, self._buffer.getvalue())
            self._dirty = False

    def close(self) -> None:
        if self.closed:
            return
        try:
            self.flush()
        finally:
            self.closed = True

    def __enter__(self) -> "_SpiffsFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["VfsSpiffs", "spiffs_medium"]
