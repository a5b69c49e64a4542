"""MaixPy ``uos``/``os``: the ``/flash`` (SPIFFS) and ``/sd`` (FAT) filesystems.

``listdir("/") == ['flash', 'sd']``; the working directory after boot is ``/flash`` (or ``/sd``).
Errors are ``OSError(errno)`` (``[Errno 2] ENOENT``). There is no ``os.path``.
"""

from typing import Any, Iterator, NamedTuple

sep: str
S_IFDIR: int
S_IFREG: int

class uname_result(NamedTuple):
    """``uname()``'s result."""
    sysname: str
    nodename: str
    release: str
    version: str
    machine: str

def uname() -> uname_result:
    """Firmware identity (sysname, release, version ...)."""
def getcwd() -> str:
    """Current directory (``/flash`` or ``/sd`` after boot)."""
def chdir(path: str, /) -> None:
    """Change the current directory."""
def listdir(path: str = ..., /) -> list[str]:
    """Names in a directory (default: current)."""
def ilistdir(path: str = ..., /) -> Iterator[tuple[str, int, int, int]]:
    """``(name, type, inode, size)`` tuples."""
def mkdir(path: str, /) -> None:
    """Create a directory."""
def rmdir(path: str, /) -> None:
    """Remove an empty directory."""
def remove(path: str, /) -> None:
    """Delete a file."""
def unlink(path: str, /) -> None:
    """Alias of ``remove``."""
def rename(old: str, new: str, /) -> None:
    """Rename or move."""
def stat(path: str, /) -> tuple[int, ...]:
    """10-tuple like CPython's ``os.stat`` (times since 2000)."""
def statvfs(path: str, /) -> tuple[int, ...]:
    """``(bsize, frsize, blocks, bfree, bavail, files, ffree, favail, flag, namemax)``."""
def sync() -> None:
    """Flush filesystem buffers."""
def urandom(n: int, /) -> bytes:
    """``n`` random bytes."""
def dupterm(stream: Any = None, index: int = 0, /) -> None:
    """Duplicate the REPL onto a stream."""
def mount(vfs: Any, mount_point: str, *, readonly: bool = False, mkfs: bool = False) -> None:
    """Mount a file system object (``open``/``ilistdir``/``stat``... methods) at ``/NAME``."""
def umount(mnt: Any) -> None:
    """Unmount a mount point (or the mounted object)."""
def flash_format() -> bool:
    """Erase ``/flash`` (SPIFFS)."""
class VfsFat:
    """FAT file system on a block device (``readblocks``/``writeblocks``/``ioctl``)."""
    def __init__(self, bdev: Any) -> None: ...
    @staticmethod
    def mkfs(bdev: Any) -> None: ...
class VfsSpiffs:
    """SPIFFS on a flash device object: attributes ``fs_size``, ``erase_block``, ``log_block_size``,
    ``log_page_size`` and methods ``read(buf, size, addr)``, ``write(buf, size, addr)``, optionally
    ``erase(size, addr)``. ``vfs.mkfs(vfs)`` formats it if needed; then ``uos.mount(vfs, '/ram')``."""
    def __init__(self, dev: Any) -> None: ...
    @staticmethod
    def mkfs(vfs: "VfsSpiffs") -> None: ...
    def mount(self, readonly: bool, mkfs: bool) -> None: ...
    def umount(self) -> None: ...
    def open(self, path: str, mode: str = "r") -> Any: ...
    def ilistdir(self, path: str = "") -> Any:
        """``(name, 0x8000, 0, size)`` per file: SPIFFS names are flat (``a/b.txt`` is one name)."""
    def stat(self, path: str) -> tuple[int, ...]: ...
    def statvfs(self, path: str) -> tuple[int, ...]: ...
    def remove(self, path: str) -> None: ...
    def rename(self, old: str, new: str) -> None: ...
    def mkdir(self, path: str) -> None:
        """``NotImplementedError: SPIFFS not support``."""
    def rmdir(self, path: str) -> None:
        """``OSError(EIO)``."""
    def chdir(self, path: str) -> None: ...
    def getcwd(self) -> str: ...
