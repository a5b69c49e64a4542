"""Flash packages (``.kfpkg``) as kflash writes them: a zip with ``flash-list.json`` and the payloads.

``maixemu run --flash-image face.kfpkg`` maps every file of the package to its flash address so that
``kpu.load(0x300000)`` finds it. Packages come from forums and downloads, so they are treated as
hostile input:

* member names must be plain file names (no folders, ``..``, absolute or drive paths); members are
  extracted by that validated base name only, into one folder, never following a symlink there;
* sizes are checked against the 16 MiB flash *before* extraction, and extraction reads at most the
  declared size and checks the real size (a zip bomb or a lying header cannot write more);
* ``flash-list.json`` itself is read only up to :data:`LISTING_MAX_BYTES`, and a listing nested
  deeper than JSON needs, or holding numbers of thousands of digits, is refused, not parsed;
* addresses are plain ASCII numbers (decimal or ``0x`` hex) inside the flash, ranges may not
  overlap; member names must be unique in the zip;
* the package must be a regular file (a FIFO or a device would block the run forever).

Every problem is a :class:`FlashImageError` whose message names the package and what is wrong, so
``maixemu run`` can print it as one line (exit 2). A failed extraction removes what it wrote.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from ..kmodel.k210 import K210_FLASH_BYTES

#: The K210 boards' SPI flash is 16 MiB; nothing in a package can lie beyond it.
FLASH_BYTES = K210_FLASH_BYTES

#: A kflash listing is a few hundred bytes; a bigger one is not a listing (or is a zip bomb).
LISTING_MAX_BYTES = 1 << 20

_CHUNK = 1 << 20

#: An address as kflash writes it: decimal or 0x-hex ASCII digits, at most what 16 MiB needs.
_ADDRESS = re.compile(r"(?:0[xX][0-9a-fA-F]{1,8}|[0-9]{1,10})")


class FlashImageError(ValueError):
    """A .kfpkg that cannot be mapped; the message says what is wrong with it."""


def _type_name(value: object) -> str:
    """JSON's name for a Python value, for messages about flash-list.json."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, (int, float)) else type(value).__name__


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _member_name(name: str, package: Path) -> str:
    path = PurePosixPath(name.replace("\\", "/"))
    drive = len(name) >= 2 and name[1] == ":"
    if drive or path.is_absolute() or ".." in path.parts or len(path.parts) != 1 or not path.name or "\0" in name:
        raise FlashImageError(
            f"{package.name}: flash-list.json names the file {name!r}; only plain file names inside the "
            "package are allowed (no folders, '..' or absolute paths)"
        )
    return path.name


def _parse_address(value: object, name: str, package: Path) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FlashImageError(f"{package.name}: address of {name!r} must be a number, got {_short(value)}")
    if isinstance(value, str):
        text = value.strip()
        if not _ADDRESS.fullmatch(text):  # no "٣٠٠", no "1_000", no 5000-digit numbers
            raise FlashImageError(
                f"{package.name}: address of {name!r} is not a flash address (decimal or 0x-hex ASCII digits): "
                f"{_short(value)}")
        address = int(text, 0) if text[:2].lower() == "0x" else int(text, 10)
    else:
        address = value
    if not 0 <= address < FLASH_BYTES:
        shown = f"0x{address:x}" if abs(address).bit_length() <= 64 else f"of {len(str(abs(address)))} digits"
        raise FlashImageError(f"{package.name}: address {shown} of {name!r} is outside the 16 MiB flash")
    return address


def _read_listing(archive: zipfile.ZipFile, info: zipfile.ZipInfo, package: Path) -> list:
    """The ``files`` list of flash-list.json, read with a size bound and checked for shape."""
    if info.file_size > LISTING_MAX_BYTES:
        raise FlashImageError(
            f"{package.name}: flash-list.json is {info.file_size} bytes; a kflash listing is a few hundred "
            f"(refusing more than {LISTING_MAX_BYTES} bytes)"
        )
    try:
        with archive.open(info) as src:
            raw = src.read(LISTING_MAX_BYTES + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError) as exc:
        raise FlashImageError(f"{package.name}: flash-list.json cannot be read from the zip ({exc})") from None
    if len(raw) > LISTING_MAX_BYTES:
        raise FlashImageError(f"{package.name}: flash-list.json is larger than its zip header says")
    try:
        listing = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise FlashImageError(f"{package.name}: flash-list.json is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise FlashImageError(
            f"{package.name}: flash-list.json is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise FlashImageError(f"{package.name}: flash-list.json is nested too deeply to be a kflash listing") from None
    except ValueError as exc:  # Python's limit on digits in an integer (4300)
        raise FlashImageError(f"{package.name}: flash-list.json holds a number too long to be an address ({exc})") from None
    if not isinstance(listing, dict):
        raise FlashImageError(
            f'{package.name}: flash-list.json must be an object with a "files" list, got {_type_name(listing)}'
        )
    if "files" not in listing:
        raise FlashImageError(f'{package.name}: flash-list.json has no "files" list')
    files = listing["files"]
    if not isinstance(files, list):
        raise FlashImageError(f'{package.name}: flash-list.json "files" must be a list, got {_type_name(files)}')
    if not files:
        raise FlashImageError(f'{package.name}: flash-list.json "files" is empty; the package maps nothing')
    return files


def _plan(archive: zipfile.ZipFile, package: Path) -> list[tuple[int, str, zipfile.ZipInfo]]:
    """Validated (address, member name, zip entry) triples, sorted by address; nothing extracted yet."""
    infos: dict[str, zipfile.ZipInfo] = {}
    for info in archive.infolist():
        if info.filename in infos:  # which of the two would kflash write? refuse to guess
            raise FlashImageError(f"{package.name}: the zip holds two members named {_short(info.filename)}")
        infos[info.filename] = info
    if "flash-list.json" not in infos:
        raise FlashImageError(f"{package.name} has no flash-list.json; is it a kflash package?")
    entries: list[tuple[int, str, zipfile.ZipInfo]] = []
    for number, entry in enumerate(_read_listing(archive, infos["flash-list.json"], package), 1):
        if not isinstance(entry, dict) or "bin" not in entry or "address" not in entry:
            raise FlashImageError(
                f'{package.name}: flash-list.json entry {number} needs "bin" and "address", got {_short(entry)}'
            )
        if not isinstance(entry["bin"], str):
            raise FlashImageError(
                f'{package.name}: flash-list.json entry {number}: "bin" must be a file name, got {_short(entry["bin"])}'
            )
        name = _member_name(entry["bin"], package)
        address = _parse_address(entry["address"], name, package)
        member = infos.get(name)
        if member is None or member.is_dir():
            raise FlashImageError(f"{package.name}: flash-list.json names {name!r}, which is not in the zip")
        if address + member.file_size > FLASH_BYTES:
            raise FlashImageError(
                f"{package.name}: {name!r} ({member.file_size} bytes at 0x{address:x}) does not fit the 16 MiB flash"
            )
        entries.append((address, name, member))
    entries.sort(key=lambda e: (e[0], e[2].file_size))
    for (a0, n0, i0), (a1, n1, _) in zip(entries, entries[1:]):
        if a0 + i0.file_size > a1:
            raise FlashImageError(
                f"{package.name}: {n0!r} at 0x{a0:x} ({i0.file_size} bytes) overlaps {n1!r} at 0x{a1:x}"
            )
    return entries


def _extract(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, package: Path) -> None:
    """Copy one member to ``target``: at most its declared size, and exactly that many bytes."""
    name = info.filename
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    written = 0
    try:
        with archive.open(info) as src, os.fdopen(os.open(target, flags, 0o600), "wb") as dst:
            while written < info.file_size:
                chunk = src.read(min(info.file_size - written, _CHUNK))
                if not chunk:
                    break
                dst.write(chunk)
                written += len(chunk)
            extra = src.read(1)
    except RuntimeError as exc:  # zipfile: "File ... is encrypted, password required"
        raise FlashImageError(f"{package.name}: {name!r} cannot be extracted ({exc}); kflash packages are not encrypted") from None
    except NotImplementedError as exc:
        raise FlashImageError(f"{package.name}: {name!r} cannot be extracted ({exc})") from None
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise FlashImageError(
            f"{package.name}: {name!r} is damaged or larger than its zip header says ({exc})"
        ) from None
    except OSError as exc:
        raise FlashImageError(f"{package.name}: cannot extract {name!r} to {target.parent}: {exc.strerror or exc}") from None
    if written < info.file_size:
        raise FlashImageError(
            f"{package.name}: {name!r} is damaged: it holds {written} bytes, its zip header says {info.file_size}"
        )
    if extra:
        raise FlashImageError(f"{package.name}: {name!r} is larger than its zip header says ({info.file_size} bytes)")


def _open_package(package: Path) -> zipfile.ZipFile:
    """The package's zip, after checking it is a regular file (opening a FIFO would block forever)."""
    try:
        info = os.stat(package)
    except FileNotFoundError:
        raise FlashImageError(f"no such flash package: {package}") from None
    except OSError as exc:
        raise FlashImageError(f"cannot read {package}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise FlashImageError(f"{package} is a folder, not a .kfpkg file")
    if not stat.S_ISREG(info.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "not a regular file"
        raise FlashImageError(f"{package} is {kind}, not a .kfpkg file")
    try:
        return zipfile.ZipFile(package)
    except zipfile.BadZipFile as exc:
        raise FlashImageError(f"{package.name} is not a .kfpkg (not a zip file: {exc})") from None
    except (OSError, ValueError, EOFError, OverflowError) as exc:
        raise FlashImageError(f"cannot read {package}: {getattr(exc, 'strerror', None) or exc}") from None


def check_flash_image(package: str | os.PathLike) -> dict[int, str]:
    """``{flash address: member name}`` of a valid .kfpkg, without extracting anything.

    The verdict :func:`read_flash_image` (``maixemu run --flash-image``) reaches, for ``maixemu
    info``/``forward``/``trace`` to give the same one line for a broken package.
    """
    package = Path(package)
    with _open_package(package) as archive:
        return {address: name for address, name, _ in _plan(archive, package)}


def read_flash_image(package: str | os.PathLike, extract_to: Path | None = None) -> dict[int, Path]:
    """Extract a .kfpkg and return ``{flash address: extracted file}``.

    ``extract_to`` is the folder the members go to (created if missing); by default a private
    temporary folder removed at interpreter exit. Raises FlashImageError for a broken zip, a missing
    or malformed ``flash-list.json``, unsafe member names, members missing from the zip, oversized or
    damaged members, or overlapping address ranges; nothing is left behind in that case.
    """
    package = Path(package)
    archive = _open_package(package)
    with archive:
        entries = _plan(archive, package)
        created = extract_to is None
        if extract_to is None:
            extract_to = Path(tempfile.mkdtemp(prefix="maixemu-flash-"))
        else:
            extract_to = Path(extract_to)
            extract_to.mkdir(parents=True, exist_ok=True)
        mapping: dict[int, Path] = {}
        touched: list[Path] = []  # files this call created or overwrote, removed again on failure
        try:
            for address, name, info in entries:
                target = extract_to / name
                if target not in touched:
                    touched.append(target)
                    _extract(archive, info, target, package)
                mapping[address] = target
        except BaseException:
            if created:
                shutil.rmtree(extract_to, ignore_errors=True)
            else:
                for path in touched:
                    if not path.is_symlink():
                        path.unlink(missing_ok=True)
            raise
        if created:
            atexit.register(shutil.rmtree, extract_to, True)
        return mapping
