"""The board's file systems on the PC: ``/sd`` and ``/flash``, copy-on-write by default, flash by address.

A MaixPy script sees two mount points and a working directory (``/sd`` when the board boots from an
SD card). Every device path a script uses — in ``open``, ``uio``, ``uos``, ``image.Image(path)``,
``img.save``, ``kpu.load``, its own imports — goes through one :class:`Storage`, which decides where
it lands on the PC and refuses anything that would escape the mount (``..``, absolute host paths,
symlinks pointing out) with the device's ``OSError(ENOENT)``.

Each mount point is a :class:`Mount`: a real folder (its *root*) and, by default, a copy-on-write
:class:`Layer` on top of it, so that **a run modifies or deletes no file that existed before it**:

* reads fall through to the root unless the layer holds a newer version of the file;
* writes, renames and ``mkdir`` go to the layer's folder (a file opened for appending is copied up
  first); deletions are recorded as *whiteouts* (a JSON list next to the layer), so a deleted
  project file disappears from the device's view and stays on the PC;
* ``listdir``/``stat`` show the merged view: the layer's entries, then the root's that are not
  whited out;
* symlinks are resolved component by component in *device* space (a link's target is looked up
  through the same merged view), and one that leads out of the mount is refused; ``remove`` and
  ``rename`` of a link act on the link, never on its target.

``maixemu run`` mounts the script's folder as both ``/sd`` and ``/flash`` with one layer each, kept
in ``.maixemu/sd`` and ``.maixemu/flash`` next to the script: the two are separate file systems as on
the board (a write to ``/flash/main.py`` never changes ``/sd/main.py``), both show the project's
files, and what a run wrote is still there for the next run (the board's storage persists).
``--sd DIR``/``--flash-dir DIR``/``--writable`` mount a folder without a layer: writes change it.

Capacity follows the device's media (:mod:`maixemu.host.medium`: MaixPy's SPIFFS, an 8 GB FAT32
card): ``statvfs`` reports them, and a write that does not fit fails at the write as the board's file
system fails it (FAT: ``ENOSPC``; SPIFFS: ``EIO``). What counts as used is what the mount itself
holds: the layer's files for a copy-on-write mount (the project's files are visible but are not
"on" the emulated flash), the folder's files for a writable one — counted once, then kept up to date
by every write, truncation, copy, deletion and rename.

This module imports nothing from ``maixemu.firmware``; one :class:`Storage` object is the whole
storage state of a board.
"""

from __future__ import annotations

import errno
import io
import json
import os
import posixpath
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .atomic_write import write_text_atomically
from .medium import (FAT32_CARD, HOST_FULL_ERRNOS, MEDIA, SPIFFS_FLASH, DeviceFile, Medium, MediumUsage,
                     copy_counted, device_error, open_stream)

MOUNT_POINTS = ("flash", "sd")

#: The folder next to a script that holds its runs' copy-on-write layers.
LAYER_FOLDER = ".maixemu"

#: Symlinks followed in one lookup before giving up (as Linux does).
MAX_LINKS = 40

Notice = Callable[[str], None]

#: Notices about a full medium in one run at most (one per mount, then one per file that lost data).
FULL_NOTICES = 8
PathLike = "str | bytes | os.PathLike"


def enoent(path: str) -> OSError:
    """The error MicroPython raises for a missing path (it prints ``[Errno 2] ENOENT``)."""
    return device_error(errno.ENOENT, path)


@contextmanager
def device_errors(shown: str):
    """Host OSErrors (which name the PC's paths) become the device's ``OSError(errno, 'ENAME', path)``
    with the path as the script gave it; errors already in the device's form pass through."""
    try:
        yield
    except OSError as exc:
        if exc.errno is None or (exc.strerror == errno.errorcode.get(exc.errno) and exc.filename in (None, shown)):
            raise
        raise device_error(exc.errno, shown or None) from None


def _raw_mode(mode: str) -> str:
    """FileIO's mode for an ``open()`` mode (``"rt"`` → ``"r"``, ``"ab+"`` → ``"a+"``)."""
    kinds = set(mode)
    if len(kinds & set("rwax")) != 1 or not kinds <= set("rwaxbt+") or {"b", "t"} <= kinds:
        raise ValueError(f"invalid mode: '{mode}'")
    base = next(c for c in "rwax" if c in kinds)
    return base + ("+" if "+" in kinds else "")


# ---------------------------------------------------------------------------------------- layer
class Layer:
    """Where a copy-on-write mount keeps what runs wrote (a folder) and deleted (a whiteout list).

    Nothing is created on the PC until the first write. ``written``/``removed`` are the device
    paths (inside the mount) this run changed, for the run's closing line.
    """

    def __init__(self, folder: Path, whiteout_file: Path):
        self.folder = Path(folder)
        self.whiteout_file = Path(whiteout_file)
        self.whiteouts: set[tuple[str, ...]] = set()
        self.written: set[tuple[str, ...]] = set()
        self.removed: set[tuple[str, ...]] = set()
        self._load_whiteouts()

    def _load_whiteouts(self) -> None:
        self.whiteouts = self._read_whiteouts()

    def _read_whiteouts(self) -> set[tuple[str, ...]]:
        try:
            items = json.loads(self.whiteout_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()
        if not isinstance(items, list):
            return set()
        return {tuple(p.split("/")) for p in items if isinstance(p, str) and p and "\0" not in p}

    def holds_changes(self) -> bool:
        """True when earlier runs left files or deletions here."""
        try:
            return bool(self.whiteouts) or any(self.folder.iterdir())
        except OSError:
            return False

    def ensure(self) -> None:
        """Create the layer folder (and explain the ``.maixemu`` folder it lives in)."""
        if self.folder.is_dir():
            return
        home = self.folder.parent
        home.mkdir(parents=True, exist_ok=True)
        for name, text in (
            (".gitignore", "# maixemu's copy-on-write storage of /sd and /flash: not project files\n*\n"),
            ("README.txt", "What MaixPy scripts run by maixemu wrote to /sd and /flash (sd/, flash/) and\n"
                           "deleted (*.deleted, a list of device paths). Your own files are left as they\n"
                           "were. Delete this folder to give the next run the project's files only.\n"),
        ):
            target = home / name
            if not target.exists():
                try:
                    target.write_text(text, encoding="utf-8")
                except OSError:
                    pass
        self.folder.mkdir(exist_ok=True)

    def add_whiteout(self, rel: tuple[str, ...]) -> None:
        """Record a deletion. Another run on the same project may be recording its own: the list on disk
        is read again under a lock and this deletion merged into it, written under a name of its own
        and renamed, so no run's deletion is lost and no run renames another's half-written file."""
        self.ensure()
        with _locked(self.folder):
            merged = self._read_whiteouts() | self.whiteouts
            merged = {w for w in merged if w[: len(rel)] != rel}  # now hidden by rel itself
            merged.add(rel)
            write_text_atomically(self.whiteout_file, json.dumps(sorted("/".join(w) for w in merged), indent=0))
            self.whiteouts = merged

    def hides(self, rel: tuple[str, ...]) -> bool:
        """True when ``rel`` or one of its parents was deleted (the root's version is not shown)."""
        return any(rel[:n] in self.whiteouts for n in range(1, len(rel) + 1))


@contextmanager
def _locked(folder: Path):
    """An exclusive OS lock on ``folder`` while one run changes what lies next to it (the OS drops it
    when a process dies); no lock where there is no ``flock``."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------- mount
@dataclass
class Entry:
    """A resolved path inside a mount: ``rel`` has no links or ``..`` left; ``host`` is None when missing."""

    rel: tuple[str, ...]
    host: Path | None
    in_layer: bool = False

    @property
    def exists(self) -> bool:
        return self.host is not None

    @property
    def found(self) -> Path:
        """The host path of an entry that exists (the caller checked :attr:`exists`)."""
        assert self.host is not None
        return self.host

    @property
    def is_link(self) -> bool:
        return self.host is not None and self.host.is_symlink()

    @property
    def is_dir(self) -> bool:
        return self.host is not None and not self.is_link and self.host.is_dir()


def _inside(path: str, base: str) -> tuple[str, ...] | None:
    """The components of ``path`` below ``base`` (both normalised host paths), or None when outside."""
    if path == base:
        return ()
    prefix = base.rstrip(os.sep) + os.sep
    if path.startswith(prefix):
        return tuple(path[len(prefix):].split(os.sep))
    return None


class Mount:
    """One mount point: a real folder (``root``) and, for copy-on-write, a :class:`Layer` on top.

    Paths are given as components from the mount point (``("models", "face.kmodel")``). Methods
    raise the device's ``OSError(errno)``.
    """

    def __init__(self, name: str, root: str | os.PathLike | None, *, layer: Layer | None = None,
                 medium: Medium | None = None, hidden: Iterable[str] = ()):
        self.name = name
        self.root = Path(os.path.realpath(root)) if root is not None else None
        self.layer = layer
        self.medium = medium or MEDIA.get(name, FAT32_CARD)
        #: names at the root's top level the device never sees (the ``.maixemu`` folder itself)
        self.hidden = frozenset(hidden)
        #: what the mount holds of its medium, kept up to date by every change (no walk per open)
        self.usage = MediumUsage(self.medium, self._counted_root, self.hidden if layer is None else frozenset())

    # -- what the mount is ---------------------------------------------------------------------
    @property
    def copy_on_write(self) -> bool:
        return self.layer is not None

    def describe(self) -> str:
        where = self.root if self.root is not None else "nothing"
        if self.layer is None:
            return f"/{self.name} is {where} (written for real)"
        return f"/{self.name} shows {where}, writes go to {self.layer.folder}"

    def _upper(self, rel: tuple[str, ...]) -> Path | None:
        return None if self.layer is None else self.layer.folder.joinpath(*rel)

    def _lower(self, rel: tuple[str, ...]) -> Path | None:
        return None if self.root is None else self.root.joinpath(*rel)

    def _lower_visible(self, rel: tuple[str, ...]) -> bool:
        if self.root is None:
            return False
        if rel and rel[0] in self.hidden:
            return False
        if self.layer is not None and self.layer.hides(rel):
            return False
        for n in range(1, len(rel)):  # every parent must be a real folder of the root
            parent = self.root.joinpath(*rel[:n])
            if parent.is_symlink() or not parent.is_dir():
                return False
        return True

    def _entry(self, rel: tuple[str, ...]) -> Entry:
        """The entry at ``rel`` (parents already resolved), without following a final link."""
        if not rel:
            upper = self._upper(rel)
            if upper is not None and upper.is_dir():
                return Entry(rel, upper, True)
            return Entry(rel, self.root or upper, False)
        upper = self._upper(rel)
        if upper is not None and os.path.lexists(upper):
            return Entry(rel, upper, True)
        if self._lower_visible(rel):
            lower = self._lower(rel)
            if lower is not None and os.path.lexists(lower):
                return Entry(rel, lower, False)
        return Entry(rel, None)

    def _link_target(self, link: Path, parent: tuple[str, ...], shown: str) -> tuple[bool, list[str]]:
        """(absolute?, components) of a link's target in device space; ENOENT when it leads out."""
        target = os.readlink(link)
        if not os.path.isabs(target):
            return False, target.replace(os.sep, "/").split("/")
        normal = os.path.normpath(target)
        real = os.path.realpath(target)
        for base in (self.layer.folder if self.layer else None, self.root):
            if base is None:
                continue
            for candidate in (normal, real):
                inside = _inside(candidate, str(base))
                if inside is not None and not (base == self.root and inside and inside[0] in self.hidden):
                    return True, list(inside)
        raise enoent(shown)

    def lookup(self, parts: Iterable[str], *, follow: bool = True, missing_ok: bool = False,
               shown: str = "") -> Entry:
        """Resolve a path the way the device's file system would, links included.

        ``follow=False`` leaves a final symlink as it is (remove/rename act on the link);
        ``missing_ok`` returns an entry with ``host=None`` when only the last component is missing
        (a file about to be created). Anything else missing, or leading out, is ENOENT.
        """
        done: list[str] = []
        todo = deque(p for p in parts)
        links = 0
        entry = self._entry(())
        while todo:
            part = todo.popleft()
            if part in ("", "."):
                continue
            if part == "..":
                if not done:
                    raise enoent(shown)  # above the mount point: another mount or the host
                done.pop()
                entry = self._entry(tuple(done))
                continue
            if part == LAYER_FOLDER and not done and part in self.hidden:
                raise enoent(shown)
            last = not any(p not in ("", ".") for p in todo)
            entry = self._entry((*done, part))
            if not entry.exists:
                if last and missing_ok:
                    return entry
                raise enoent(shown)
            if entry.is_link and (follow or not last):
                links += 1
                if links > MAX_LINKS:
                    raise device_error(errno.ELOOP, shown)
                absolute, target = self._link_target(entry.found, tuple(done), shown)
                if absolute:
                    done = []
                todo.extendleft(reversed(target))
                entry = self._entry(tuple(done))
                continue
            if not last and not entry.is_dir:
                raise enoent(shown)
            if entry.is_link:
                # Left as a link (remove/rename act on it): it must still be one the device can see,
                # i.e. lead to something inside the mount; links out or nowhere are not there.
                self.lookup((*done, part), shown=shown)
            done.append(part)
        return entry

    # -- reading -------------------------------------------------------------------------------
    def scandir(self, parts: Iterable[str], shown: str = "") -> list[tuple[str, Entry]]:
        """``(name, resolved entry)`` of a folder's visible entries, sorted by name.

        The merged view: the layer's entries, then the root's that are not whited out. Entries
        whose links lead out of the mount (or nowhere) are left out: a script must not learn even
        the size or type of what lies outside, and the device has no such entries anyway.
        """
        folder = self.lookup(parts, shown=shown)
        if not folder.is_dir:
            raise device_error(errno.ENOTDIR if folder.exists else errno.ENOENT, shown)
        names: set[str] = set()
        upper = self._upper(folder.rel)
        if upper is not None and upper.is_dir():
            names.update(os.listdir(upper))
        if self._lower_visible(folder.rel) or not folder.rel:
            lower = self._lower(folder.rel)
            if lower is not None and lower.is_dir():
                names.update(n for n in os.listdir(lower)
                             if not (self.layer and self.layer.hides((*folder.rel, n)))
                             and not (not folder.rel and n in self.hidden))
        out = []
        for name in sorted(names):
            try:
                out.append((name, self.lookup((*folder.rel, name), shown=shown)))
            except OSError:
                continue
        return out

    def read_path(self, parts: Iterable[str], shown: str = "") -> Path:
        """The host file or folder holding what the device sees at this path (for reading)."""
        entry = self.lookup(parts, shown=shown)
        assert entry.host is not None
        return entry.host

    # -- writing -------------------------------------------------------------------------------
    def _writable(self, rel: tuple[str, ...]) -> Path:
        """Where a new version of ``rel`` goes on the PC; the layer's parent folders are created."""
        if self.layer is None:
            assert self.root is not None
            return self.root.joinpath(*rel)
        self.layer.ensure()
        target = self.layer.folder.joinpath(*rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        self.layer.written.add(rel)
        self.layer.removed.discard(rel)
        return target

    def _counted_root(self) -> Path | None:
        return self.layer.folder if self.layer is not None else self.root

    def used_bytes(self) -> int:
        """Bytes of the medium in use: what this mount holds itself (see the module docstring)."""
        return self.usage.used()

    def writable_path(self, parts: Iterable[str], *, keep_content: bool, shown: str = "") -> Path:
        """A host path to write the file at this device path to (a copy of it when ``keep_content``).

        Links are followed (writing through a link writes its target, inside the mount); the
        parent folder must exist on the device.
        """
        entry = self.lookup(parts, missing_ok=True, shown=shown)
        if entry.is_dir or not entry.rel:
            raise device_error(errno.EISDIR, shown)
        target = self._writable(entry.rel)
        if keep_content and entry.exists and not entry.in_layer and self.layer is not None:
            copy_counted(entry.found, target, self.usage, shown)  # the layer's copy takes room on the medium
        return target

    def open(self, parts: Iterable[str], mode: str = "r", buffering: int = -1, encoding: str | None = None,
             errors: str | None = None, newline: str | None = None, shown: str = ""):
        """``open()`` on the device: reads from the merged view, writes to the layer (or the folder)
        through a :class:`~maixemu.host.medium.DeviceFile` that counts every byte on the medium."""
        raw_mode = _raw_mode(mode)
        parts = list(parts)
        if raw_mode == "r":
            entry = self.lookup(parts, shown=shown)
            if entry.is_dir:
                raise device_error(errno.EISDIR, shown)
            return open_stream(io.FileIO(entry.found, "r"), mode, buffering, encoding, errors, newline)
        entry = self.lookup(parts, missing_ok=True, shown=shown)
        if entry.is_dir or not entry.rel:
            raise device_error(errno.EISDIR, shown)
        if raw_mode.startswith("x") and entry.exists:
            raise device_error(errno.EEXIST, shown)
        if raw_mode.startswith("r") and not entry.exists:
            raise enoent(shown)
        keep = raw_mode[0] in "ra"
        creates = not entry.exists or (self.layer is not None and not entry.in_layer and not keep)
        if creates and self.usage.free() < self.medium.cost(0):
            # SPIFFS_open cannot allocate the new file's index page; vfs_spiffs_file.c says ENOENT
            self.usage.told_full(f"no room to create {shown}")
            raise enoent(shown)
        target = self.writable_path(entry.rel, keep_content=keep, shown=shown)
        try:
            raw = DeviceFile(target, raw_mode, usage=self.usage, shown=shown)
        except OSError as exc:
            if exc.errno in HOST_FULL_ERRNOS:
                self.usage.told_full(f"{shown} (the PC's disk is full)")
                raise device_error(self.medium.full_errno, shown) from None
            raise
        return open_stream(raw, mode, buffering, encoding, errors, newline)

    def mkdir(self, parts: Iterable[str], shown: str = "") -> None:
        entry = self.lookup(parts, follow=False, missing_ok=True, shown=shown)
        if entry.exists:
            raise device_error(errno.EEXIST, shown)
        os.mkdir(self._writable(entry.rel))

    def _forget(self, rel: tuple[str, ...], had_root_version: bool) -> None:
        """After the layer's copy of ``rel`` is gone: hide the root's version too, if it has one."""
        if self.layer is None:
            return
        if had_root_version:
            self.layer.add_whiteout(rel)
        self.layer.written.discard(rel)
        self.layer.removed.add(rel)

    def _root_has(self, rel: tuple[str, ...]) -> bool:
        lower = self._lower(rel)
        return lower is not None and self._lower_visible(rel) and os.path.lexists(lower)

    def remove(self, parts: Iterable[str], shown: str = "") -> None:
        """Delete a file or a link (the link itself, never its target)."""
        entry = self.lookup(parts, follow=False, shown=shown)
        if entry.is_dir:
            raise device_error(errno.EISDIR, shown)
        if self.layer is None:
            with self.usage.changing(entry.found):
                os.unlink(entry.found)
            return
        root_version = self._root_has(entry.rel)
        if root_version:  # the whiteout first: a failure to record it (a full PC disk) leaves all as it was
            self.layer.add_whiteout(entry.rel)
        if entry.in_layer:
            with self.usage.changing(entry.found):
                os.unlink(entry.found)
        self._forget(entry.rel, False)

    def rmdir(self, parts: Iterable[str], shown: str = "") -> None:
        entry = self.lookup(parts, follow=False, shown=shown)
        if not entry.is_dir:
            raise device_error(errno.ENOTDIR, shown)
        if self.scandir(entry.rel, shown):
            raise device_error(errno.ENOTEMPTY, shown)
        if self.layer is None:
            os.rmdir(entry.found)
            return
        root_version = self._root_has(entry.rel)
        upper = self._upper(entry.rel)
        if upper is not None and upper.is_dir():
            shutil.rmtree(upper)  # holds nothing the device sees (checked above)
        self._forget(entry.rel, root_version)

    def rename(self, old: Iterable[str], new: Iterable[str], shown: str = "") -> None:
        """Move a file, link or folder inside this mount; an existing file at ``new`` is replaced."""
        source = self.lookup(old, follow=False, shown=shown)
        if not source.rel:
            raise device_error(errno.EPERM, shown)
        target = self.lookup(new, follow=False, missing_ok=True, shown=shown)
        if not target.rel:
            raise device_error(errno.EPERM, shown)
        if target.rel[: len(source.rel)] == source.rel and target.rel != source.rel:
            raise device_error(errno.EINVAL, shown)  # a folder into itself
        if target.rel == source.rel:
            return
        if target.exists:
            if target.is_dir and not source.is_dir:
                raise device_error(errno.EISDIR, shown)
            if source.is_dir and not target.is_dir:
                raise device_error(errno.ENOTDIR, shown)
            if target.is_dir and self.scandir(target.rel, shown):
                raise device_error(errno.ENOTEMPTY, shown)
        if self.layer is None:
            assert self.root is not None
            destination = self.root.joinpath(*target.rel)
            if target.exists and not target.is_dir:
                self.usage.resize(destination, None)
            os.replace(source.found, destination)
            self.usage.moved(source.found, destination)
            return
        target_root_version = self._root_has(target.rel)
        destination = self._writable(target.rel)
        if target.exists and target.in_layer:
            if target.is_dir:
                shutil.rmtree(destination)  # empty (checked above)
            else:
                with self.usage.changing(destination):
                    os.unlink(destination)
        source_root_version = self._root_has(source.rel)
        if source.in_layer and not (source.is_dir and source_root_version):
            os.replace(source.found, destination)
            self.usage.moved(source.found, destination)
        else:
            self._copy_view(source, destination, target.rel)
            upper = self._upper(source.rel)
            if upper is not None and os.path.lexists(upper):
                if upper.is_dir() and not upper.is_symlink():
                    self.usage.forget_tree(upper)
                    shutil.rmtree(upper)
                else:
                    with self.usage.changing(upper):
                        os.unlink(upper)
        if target_root_version:
            self.layer.add_whiteout(target.rel)  # the layer's version wins, a folder hides the root's
        self._forget(source.rel, source_root_version)

    def _copy_view(self, entry: Entry, destination: Path, rel: tuple[str, ...]) -> None:
        """Copy what the device sees at ``entry`` (a merged folder, a file or a link) to ``destination``,
        the host path of device path ``rel``; a relative link is rewritten to keep its target."""
        if entry.is_link:
            absolute, target = self._link_target(entry.found, entry.rel[:-1], "")
            target_rel = posixpath.normpath(posixpath.join("/", *(target if absolute else (*entry.rel[:-1], *target))))
            os.symlink(posixpath.relpath(target_rel, posixpath.join("/", *rel[:-1])), destination)
        elif entry.is_dir:
            destination.mkdir(exist_ok=True)
            for name, child in self.scandir(entry.rel):
                raw = self.lookup((*entry.rel, name), follow=False)
                self._copy_view(raw if raw.is_link else child, destination / name, (*rel, name))
        else:
            copy_counted(entry.found, destination, self.usage, "/" + "/".join((self.name, *rel)))

    def to_device(self, host_path: str | os.PathLike) -> tuple[str, ...] | None:
        """The components of a host file in this mount's folders (layer first), or None."""
        real = os.path.realpath(host_path)
        for base in (self.layer.folder if self.layer else None, self.root):
            if base is None:
                continue
            inside = _inside(real, os.path.realpath(base))
            if inside is not None and not (base == self.root and inside and inside[0] in self.hidden):
                return inside
        return None


# ---------------------------------------------------------------------------------------- storage
class Storage:
    """A board's storage: the ``/sd`` and ``/flash`` mounts, the device working directory, and what
    the SPI flash holds by address (``flash_map``, for ``kpu.load(0x300000)``).

    ``Storage(sd_dir, flash_dir)`` mounts two folders as they are (writes change them: tests and
    the pytest plugin give fresh private folders); :meth:`for_project` builds the copy-on-write
    mounts ``maixemu run`` uses by default.
    """

    def __init__(self, sd_dir: str | os.PathLike | None = None, flash_dir: str | os.PathLike | None = None,
                 cwd: str = "/sd", flash_map: dict[int, str | os.PathLike] | None = None, sd_present: bool = True,
                 *, mounts: dict[str, Mount] | None = None, on_notice: Notice | None = None):
        if mounts is None:
            here = Path.cwd()
            mounts = {"flash": Mount("flash", flash_dir if flash_dir is not None else here),
                      "sd": Mount("sd", sd_dir if sd_dir is not None else here)}
        self._mounts = dict(mounts)
        self.cwd = cwd
        self.flash_map = {int(a): Path(p).resolve() for a, p in (flash_map or {}).items()}
        self.sd_present = sd_present
        self.on_notice = on_notice
        self._full_told: set[tuple[str, str]] = set()
        for mount in self._mounts.values():
            mount.usage.on_full = lambda what, mount=mount: self._tell_full(mount, what)

    @classmethod
    def for_project(cls, project: str | os.PathLike, *, sd_dir: str | os.PathLike | None = None,
                    flash_dir: str | os.PathLike | None = None, writable: bool = False,
                    layer_home: str | os.PathLike | None = None, **kwargs) -> "Storage":
        """The mounts of a run of a script in ``project``: ``/sd`` and ``/flash`` both show the
        project folder through their own copy-on-write layer in ``layer_home`` (default
        ``project/.maixemu``); a folder given as ``sd_dir``/``flash_dir``, or ``writable``, is
        mounted without a layer.
        """
        project = Path(os.path.realpath(project))
        home = Path(layer_home) if layer_home is not None else project / LAYER_FOLDER
        hidden = {home.name} if Path(os.path.realpath(home.parent)) == project else set()
        mounts = {}
        for name, given in (("flash", flash_dir), ("sd", sd_dir)):
            if given is not None:
                mounts[name] = Mount(name, given, hidden=hidden if Path(os.path.realpath(given)) == project else ())
            elif writable:
                mounts[name] = Mount(name, project, hidden=hidden)
            else:
                layer = Layer(home / name, home / f"{name}.deleted")
                mounts[name] = Mount(name, project, layer=layer, hidden=hidden)
        return cls(mounts=mounts, **kwargs)

    # -- the mount table -----------------------------------------------------------------------
    def mounts(self) -> list[str]:
        return ["flash", "sd"] if self.sd_present else ["flash"]

    def mount(self, name: str) -> Mount:
        return self._mounts[name]

    @property
    def sd_dir(self) -> Path:
        """The real folder shown as ``/sd``."""
        root = self._mounts["sd"].root
        assert root is not None  # (the storage's mounts are folders)
        return root

    @property
    def flash_dir(self) -> Path:
        """The real folder shown as ``/flash``."""
        root = self._mounts["flash"].root
        assert root is not None  # (the storage's mounts are folders)
        return root

    def layers(self) -> dict[str, Layer]:
        return {name: m.layer for name, m in self._mounts.items() if m.layer is not None}

    # -- device paths --------------------------------------------------------------------------
    def device_path(self, path) -> str:
        """Normalise a script's path (relative to the device cwd) to an absolute device path."""
        text = os.fspath(path)
        if isinstance(text, bytes):
            text = text.decode("utf-8", "surrogateescape")
        joined = text if text.startswith("/") else posixpath.join(self.cwd, text)
        normal = posixpath.normpath(joined)
        if normal.startswith("//"):
            normal = "/" + normal.lstrip("/")
        return normal

    def _shown(self, path) -> str:
        text = os.fspath(path)
        return text.decode("utf-8", "surrogateescape") if isinstance(text, bytes) else text

    def split(self, path) -> tuple[str | None, str]:
        """(mount name or None for "/", path inside the mount) of a device path."""
        device = self.device_path(path)
        if device == "/":
            return None, ""
        mount, _, inner = device.lstrip("/").partition("/")
        if mount not in self.mounts():
            raise enoent(self._shown(path))
        return mount, inner

    def locate(self, path) -> tuple[Mount, list[str], str]:
        """(mount, components inside it, the path as the script gave it) — ENOENT outside /sd, /flash."""
        shown = self._shown(path)
        if "\0" in shown:  # the host would raise ValueError; the device just has no such file
            raise enoent(shown)
        # Components are taken from the path as given (joined to the cwd), not normalised: the
        # mount resolves ``..`` after links, as a real file system does.
        text = shown if shown.startswith("/") else posixpath.join(self.cwd, shown)
        parts = [p for p in text.split("/") if p not in ("", ".")]
        if not parts:
            raise device_error(errno.EISDIR, shown)
        # ``/sd/../flash/x`` is ``/flash/x`` on the device: resolve ``..`` above a mount point first.
        while ".." in parts[1:] and parts.index("..") == 1:
            del parts[0:2]
        if not parts or parts[0] not in self.mounts():
            if not parts:
                raise device_error(errno.EISDIR, shown)
            raise enoent(shown)
        return self._mounts[parts[0]], parts[1:], shown

    def is_mount_point(self, path) -> bool:
        device = self.device_path(path)
        return device.lstrip("/") in self.mounts() and device.count("/") == 1

    # -- reading -------------------------------------------------------------------------------
    def resolve(self, path) -> Path:
        """The host path holding what the device sees at ``path`` (for reading); ENOENT outside."""
        mount, parts, shown = self.locate(path)
        with device_errors(shown):
            return mount.read_path(parts, shown)

    def lookup(self, path, *, follow: bool = True) -> Entry:
        mount, parts, shown = self.locate(path)
        with device_errors(shown):
            return mount.lookup(parts, follow=follow, shown=shown)

    def is_file(self, path) -> bool:
        try:
            entry = self.lookup(path)
        except OSError:
            return False
        return entry.exists and not entry.is_dir and entry.found.is_file()

    def is_dir(self, path) -> bool:
        try:
            if self.device_path(path) == "/":
                return True
            return self.lookup(path).is_dir
        except OSError:
            return False

    def scandir(self, path) -> list[tuple[str, Entry]]:
        mount, parts, shown = self.locate(path)
        with device_errors(shown):
            return mount.scandir(parts, shown)

    def listdir(self, path) -> list[str]:
        return [name for name, _ in self.scandir(path)]

    def stat(self, path) -> os.stat_result:
        with device_errors(self._shown(path)):
            return self.resolve(path).stat()

    def statvfs(self, path) -> tuple[int, ...]:
        mount, parts, shown = self.locate(path)
        mount.lookup(parts, shown=shown)
        return mount.medium.statvfs(mount.used_bytes())

    # -- writing -------------------------------------------------------------------------------
    def open(self, path, mode: str = "r", buffering: int = -1, encoding: str | None = None,
             errors: str | None = None, newline: str | None = None):
        """The device's ``open()``: a file object of the merged view (writes to the layer)."""
        mount, parts, shown = self.locate(path)
        with device_errors(shown):
            return mount.open(parts, mode, buffering, encoding, errors, newline, shown)

    def resolve_for_write(self, path, *, keep_content: bool = False) -> Path:
        """A host path a writer library (Pillow, numpy) may write the file at ``path`` to."""
        mount, parts, shown = self.locate(path)
        with device_errors(shown):
            return mount.writable_path(parts, keep_content=keep_content, shown=shown)

    def _tell_full(self, mount: Mount, what: str) -> None:
        """Said when a medium refuses data, naming what was refused (a few per run): also where the
        board itself says nothing (a file object dropped unclosed, a seek past SPIFFS's write cache)."""
        if self.on_notice is None or (mount.name, what) in self._full_told or len(self._full_told) >= FULL_NOTICES:
            return
        self._full_told.add((mount.name, what))
        medium = mount.medium
        code = medium.full_errno
        self.on_notice(f"/{mount.name} is full: its {medium.kind.upper()} holds {medium.capacity} bytes, as on the "
                       f"board; {what} (the board says OSError: [Errno {code}] {errno.errorcode[code]})")

    def mkdir(self, path) -> None:
        mount, parts, shown = self.locate(path)
        with device_errors(shown):
            mount.mkdir(parts, shown)

    def rmdir(self, path) -> None:
        mount, parts, shown = self.locate(path)
        with device_errors(shown):
            mount.rmdir(parts, shown)

    def remove(self, path) -> None:
        mount, parts, shown = self.locate(path)
        with device_errors(shown):
            mount.remove(parts, shown)

    def rename(self, old, new) -> None:
        """Rename within one mount (an existing file at ``new`` is replaced); across mounts: EXDEV."""
        old_mount, old_parts, shown = self.locate(old)
        new_mount, new_parts, _ = self.locate(new)
        if old_mount is not new_mount:
            raise device_error(errno.EXDEV, shown)
        with device_errors(shown):
            old_mount.rename(old_parts, new_parts, shown)

    def chdir(self, path) -> None:
        device = self.device_path(path)
        if device != "/" and not self.lookup(path).is_dir:
            raise enoent(self._shown(path))
        self.cwd = device

    # -- host side -----------------------------------------------------------------------------
    def to_device(self, host_path) -> str | None:
        """The device path of a host file inside a mapped folder (or a layer), or None. The working
        directory's mount is asked first: by default ``/sd`` and ``/flash`` show the same folder,
        and the script runs from ``/sd``."""
        here = self.cwd.strip("/").split("/", 1)[0]
        for name in sorted(self.mounts(), key=lambda mount: mount != here):
            inside = self._mounts[name].to_device(host_path)
            if inside is not None:
                return "/" + "/".join((name, *inside))
        return None

    def flash_file(self, address: int) -> Path | None:
        return self.flash_map.get(int(address))

    def earlier_changes_line(self) -> str | None:
        """Said once at the start when the layers hold what earlier runs wrote or deleted."""
        earlier = [m for _, m in sorted(self._mounts.items()) if m.layer is not None and m.layer.holds_changes()]
        if not earlier:
            return None
        layer = earlier[0].layer
        assert layer is not None  # (earlier lists the mounts with a layer)
        home = layer.folder.parent
        return (f"{' and '.join('/' + m.name for m in earlier)} include what earlier runs wrote or deleted "
                f"(kept in {home}; delete that folder to start from your own files only)")

    def closing_line(self) -> str | None:
        """The run's last line when it changed something: what, and where it is on the PC."""
        changed = [(name, m.layer) for name, m in sorted(self._mounts.items())
                   if m.layer is not None and (m.layer.written or m.layer.removed)]
        if not changed:
            return None
        paths = [f"/{name}/" + "/".join(rel) for name, layer in changed for rel in sorted(layer.written)]
        gone = [f"/{name}/" + "/".join(rel) for name, layer in changed for rel in sorted(layer.removed)]
        what = []
        if paths:
            what.append(f"wrote {_listing(paths)}")
        if gone:
            what.append(f"deleted {_listing(gone)}")
        homes = sorted({str(layer.folder.parent) for _, layer in changed})
        return (f"the script {' and '.join(what)}; your own files are unchanged: the new versions are in "
                f"{', '.join(homes)} (sd/, flash/), where the next run sees them again")


def _listing(paths: list[str], limit: int = 3) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def private_layer_home() -> Path:
    """A temporary folder for the layers of storage nobody asked to keep (outside ``maixemu run``)."""
    folder = Path(tempfile.mkdtemp(prefix="maixemu-storage-"))
    import atexit

    atexit.register(shutil.rmtree, folder, True)
    return folder


#: Who answers :func:`current`: the board layer installs the active board's storage here (the host
#: layer knows no boards). Without one, a default over the working directory.
_provider: Callable[[], Storage] | None = None
_fallback: Storage | None = None


def current() -> Storage:
    """The storage of the running script's board (``maixemu.firmware.state.current().storage``);
    with no board layer loaded, the process cwd through a private layer (so calls made from a Python
    shell read local files and change none)."""
    if _provider is not None:
        return _provider()
    global _fallback
    if _fallback is None:
        _fallback = Storage.for_project(Path.cwd(), layer_home=private_layer_home())
    return _fallback


def set_provider(provider: Callable[[], Storage] | None) -> None:
    """Called once by the board layer: :func:`current` asks ``provider()`` from then on."""
    global _provider
    _provider = provider


def resolve(path) -> Path:
    """Shortcut: ``current().resolve(path)``."""
    return current().resolve(path)
