"""The board's filesystem on the PC: ``/sd`` and ``/flash`` mapped to local folders, flash by address.

A MaixPy script sees two mount points and a working directory (``/sd`` when the board boots from an
SD card). Every device path a script uses — in ``open``, ``uos``, ``image.Image(path)``,
``kpu.load`` — goes through :func:`Storage.resolve`, which is the one place that decides where it
lands on the PC and refuses anything that would escape the mapped folders (``..``, absolute host
paths, symlinks pointing out). Refusals are the device's own ``OSError(ENOENT)``.
"""

from __future__ import annotations

import errno
import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

MOUNT_POINTS = ("flash", "sd")


def enoent(path: str) -> OSError:
    """The error MicroPython raises for a missing path (it prints ``[Errno 2] ENOENT``)."""
    return OSError(errno.ENOENT, "ENOENT", path)


@dataclass
class Storage:
    """Where ``/sd`` and ``/flash`` live on the PC, the device working directory, and flash contents.

    ``flash_map`` maps flash byte addresses (as used by ``kpu.load(0x300000)``) to local files.
    """

    sd_dir: Path
    flash_dir: Path
    cwd: str = "/sd"
    flash_map: dict[int, Path] = field(default_factory=dict)
    sd_present: bool = True

    def __post_init__(self) -> None:
        self.sd_dir = Path(self.sd_dir).resolve()
        self.flash_dir = Path(self.flash_dir).resolve()
        self.flash_map = {int(a): Path(p).resolve() for a, p in self.flash_map.items()}

    def mounts(self) -> list[str]:
        return ["flash", "sd"] if self.sd_present else ["flash"]

    def roots(self) -> dict[str, Path]:
        out = {"flash": self.flash_dir}
        if self.sd_present:
            out["sd"] = self.sd_dir
        return out

    def device_path(self, path: str | os.PathLike) -> str:
        """Normalise a script's path (relative to the device cwd) to an absolute device path."""
        text = os.fspath(path)
        if isinstance(text, bytes):
            text = text.decode("utf-8", "surrogateescape")
        joined = text if text.startswith("/") else posixpath.join(self.cwd, text)
        normal = posixpath.normpath(joined)
        if normal.startswith("//"):
            normal = "/" + normal.lstrip("/")
        return normal

    def split(self, path: str | os.PathLike) -> tuple[str | None, str]:
        """(mount name or None for "/", path inside the mount) of a device path."""
        device = self.device_path(path)
        if device == "/":
            return None, ""
        parts = device.lstrip("/").split("/", 1)
        mount = parts[0]
        if mount not in self.roots():
            raise enoent(os.fspath(path))
        return mount, parts[1] if len(parts) > 1 else ""

    def resolve(self, path: str | os.PathLike) -> Path:
        """The host path for a device path; ``OSError(ENOENT)`` if it is outside ``/sd`` and ``/flash``.

        Symlinks inside the mapped folders are followed only while they stay inside them.
        """
        mount, inner = self.split(path)
        if mount is None:
            raise OSError(errno.EISDIR, "EISDIR", os.fspath(path))
        if "\0" in inner:  # the host would raise ValueError; the device just has no such file
            raise enoent(os.fspath(path))
        root = self.roots()[mount]
        candidate = (root / inner) if inner else root
        real = Path(os.path.realpath(candidate))
        if not self._inside(real, root):
            raise enoent(os.fspath(path))
        return real

    @staticmethod
    def _inside(real: Path, root: Path) -> bool:
        return real == root or root in real.parents

    def visible_entries(self, folder: str | os.PathLike) -> list[tuple[str, Path]]:
        """``(name, host path)`` of the entries of a device folder a script can reach, sorted by name.

        Symlinks leading out of the mount (or nowhere) are left out: a script must not learn even
        the size or type of what lies outside, and the device has no such entries anyway.
        """
        host = self.resolve(folder)
        mount, _ = self.split(folder)
        root = self.roots()[mount]
        entries = []
        for name in sorted(os.listdir(host)):
            real = Path(os.path.realpath(host / name))
            if self._inside(real, root) and os.path.lexists(real):
                entries.append((name, real))
        return entries

    def to_device(self, host_path: str | os.PathLike) -> str | None:
        """The device path of a host file inside a mapped folder, or None."""
        real = Path(os.path.realpath(host_path))
        for mount, root in self.roots().items():
            if real == root or root in real.parents:
                rel = real.relative_to(root).as_posix()
                return f"/{mount}" + ("" if rel == "." else f"/{rel}")
        return None

    def chdir(self, path: str) -> None:
        device = self.device_path(path)
        if device != "/":
            host = self.resolve(device)
            if not host.is_dir():
                raise enoent(path)
        self.cwd = device

    def flash_file(self, address: int) -> Path | None:
        return self.flash_map.get(int(address))


_current: Storage | None = None


def current() -> Storage:
    """The storage of the running script; outside ``maixemu run`` both mounts are the process cwd."""
    global _current
    if _current is None:
        here = Path.cwd()
        _current = Storage(sd_dir=here, flash_dir=here)
    return _current


def install(storage: Storage | None) -> None:
    """Make ``storage`` the one every firmware module uses (None: back to the default)."""
    global _current
    _current = storage


def resolve(path: str | os.PathLike) -> Path:
    """Shortcut: ``current().resolve(path)``."""
    return current().resolve(path)
