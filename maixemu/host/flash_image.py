"""Flash packages (``.kfpkg``) as kflash writes them: a zip with ``flash-list.json`` and the payloads.

``maixemu run --flash-image face.kfpkg`` maps every file of the package to its flash address so that
``kpu.load(0x300000)`` finds it. Packages come from forums and downloads, so member names, sizes and
addresses are checked before anything is extracted, and members are extracted by their validated
base name only, into a private temporary folder.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

#: The K210 boards' SPI flash is 16 MiB; nothing in a package can lie beyond it.
FLASH_BYTES = 16 * 1024 * 1024


class FlashImageError(ValueError):
    """A .kfpkg that cannot be mapped; the message says what is wrong with it."""


def _member_name(name: str, package: Path) -> str:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or len(path.parts) != 1 or not path.name:
        raise FlashImageError(
            f"{package.name}: flash-list.json names the file {name!r}; only plain file names inside the "
            "package are allowed (no folders, '..' or absolute paths)"
        )
    return path.name


def _parse_address(value: object, name: str, package: Path) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FlashImageError(f"{package.name}: address of {name!r} must be a number, got {value!r}")
    try:
        address = int(value, 0) if isinstance(value, str) else int(value)
    except ValueError as exc:
        raise FlashImageError(f"{package.name}: address of {name!r} is not a number: {value!r}") from exc
    if not 0 <= address < FLASH_BYTES:
        raise FlashImageError(f"{package.name}: address 0x{address:x} of {name!r} is outside the 16 MiB flash")
    return address


def read_flash_image(package: str | Path, extract_to: Path | None = None) -> dict[int, Path]:
    """Extract a .kfpkg and return ``{flash address: extracted file}``.

    Raises FlashImageError for a broken zip, a missing or malformed ``flash-list.json``, unsafe
    member names, members missing from the zip, oversized members, or overlapping address ranges.
    """
    package = Path(package)
    try:
        archive = zipfile.ZipFile(package)
    except FileNotFoundError:
        raise FlashImageError(f"no such flash package: {package}") from None
    except zipfile.BadZipFile as exc:
        raise FlashImageError(f"{package.name} is not a .kfpkg (not a zip file: {exc})") from exc
    with archive:
        infos = {info.filename: info for info in archive.infolist()}
        if "flash-list.json" not in infos:
            raise FlashImageError(f"{package.name} has no flash-list.json; is it a kflash package?")
        try:
            listing = json.loads(archive.read("flash-list.json").decode("utf-8-sig"))
            files = listing["files"]
            if not isinstance(files, list):
                raise TypeError("'files' is not a list")
        except (ValueError, KeyError, TypeError) as exc:
            raise FlashImageError(f"{package.name}: flash-list.json is malformed ({exc})") from exc

        entries: list[tuple[int, str, zipfile.ZipInfo]] = []
        for entry in files:
            if not isinstance(entry, dict) or "bin" not in entry or "address" not in entry:
                raise FlashImageError(f"{package.name}: flash-list.json entry {entry!r} needs 'bin' and 'address'")
            name = _member_name(str(entry["bin"]), package)
            address = _parse_address(entry["address"], name, package)
            info = infos.get(name)
            if info is None:
                raise FlashImageError(f"{package.name}: flash-list.json names {name!r}, which is not in the zip")
            if address + info.file_size > FLASH_BYTES:
                raise FlashImageError(
                    f"{package.name}: {name!r} ({info.file_size} bytes at 0x{address:x}) does not fit the 16 MiB flash"
                )
            entries.append((address, name, info))

        entries.sort()
        for (a0, n0, i0), (a1, n1, _) in zip(entries, entries[1:]):
            if a0 + i0.file_size > a1:
                raise FlashImageError(
                    f"{package.name}: {n0!r} at 0x{a0:x} ({i0.file_size} bytes) overlaps {n1!r} at 0x{a1:x}"
                )

        if extract_to is None:
            extract_to = Path(tempfile.mkdtemp(prefix="maixemu-flash-"))
            atexit.register(shutil.rmtree, extract_to, True)
        mapping: dict[int, Path] = {}
        for address, name, info in entries:
            target = extract_to / name
            with archive.open(info) as src, open(target, "wb") as dst:
                remaining = info.file_size
                while remaining > 0:
                    chunk = src.read(min(remaining, 1 << 20))
                    if not chunk:
                        break
                    dst.write(chunk)
                    remaining -= len(chunk)
                if src.read(1):
                    raise FlashImageError(f"{package.name}: {name!r} is larger than its zip header says")
            mapping[address] = target
        return mapping
