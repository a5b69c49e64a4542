"""Hardening: hostile or broken .kfpkg flash packages give one clear FlashImageError line, write nothing
outside the extraction folder and leave nothing behind when they fail."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from maixemu.host.flash_image import FLASH_BYTES, FlashImageError, read_flash_image

MODEL = Path(__file__).resolve().parents[2] / "maixemu" / "data" / "edge_filters.kmodel"


def make_pkg(path: Path, listing, members: dict[str, bytes], *, compression=zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as archive:
        if listing is not None:
            text = listing if isinstance(listing, (str, bytes)) else json.dumps(listing)
            archive.writestr("flash-list.json", text)
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def nothing_in(folder: Path) -> bool:
    return not folder.exists() or not any(folder.iterdir())


def one(name: str, address=0x300000) -> dict:
    return {"version": "0.1.0", "files": [{"address": address, "bin": name, "sha256Prefix": False}]}


def patch_declared_size(path: Path, member: str, size: int) -> None:
    """Make the zip headers lie about a member's uncompressed size (as a crafted package would)."""
    with zipfile.ZipFile(path) as archive:
        offset = archive.getinfo(member).header_offset
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, offset + 22, size)  # local file header
    central = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, size)  # central directory
    path.write_bytes(bytes(data))


CASES = [
    ("dotdot", one("../evil.kmodel"), {"../evil.kmodel": b"x"},
     "dotdot.kfpkg: flash-list.json names the file '../evil.kmodel'; only plain file names inside the package "
     "are allowed (no folders, '..' or absolute paths)"),
    ("absolute", one("/tmp/evil.kmodel"), {"/tmp/evil.kmodel": b"x"},
     "absolute.kfpkg: flash-list.json names the file '/tmp/evil.kmodel'; only plain file names inside the "
     "package are allowed (no folders, '..' or absolute paths)"),
    ("drive", one("C:evil.kmodel"), {"C:evil.kmodel": b"x"},
     "drive.kfpkg: flash-list.json names the file 'C:evil.kmodel'; only plain file names inside the package "
     "are allowed (no folders, '..' or absolute paths)"),
    ("folder", one("sub/m.kmodel"), {"sub/m.kmodel": b"x"},
     "folder.kfpkg: flash-list.json names the file 'sub/m.kmodel'; only plain file names inside the package "
     "are allowed (no folders, '..' or absolute paths)"),
    ("nolisting", None, {"m.kmodel": b"x"}, "nolisting.kfpkg has no flash-list.json; is it a kflash package?"),
    ("notjson", "{files: [", {},
     "notjson.kfpkg: flash-list.json is not valid JSON (line 1 column 2: Expecting property name enclosed in "
     "double quotes)"),
    ("notutf8", b"\xff\xfe\x00{", {}, "notutf8.kfpkg: flash-list.json is not UTF-8 text"),
    ("toplist", [1, 2], {}, 'toplist.kfpkg: flash-list.json must be an object with a "files" list, got a list'),
    ("nofiles", {"version": "0.1.0"}, {}, 'nofiles.kfpkg: flash-list.json has no "files" list'),
    ("filesdict", {"files": {"bin": "m"}}, {}, 'filesdict.kfpkg: flash-list.json "files" must be a list, got an object'),
    ("empty", {"files": []}, {}, 'empty.kfpkg: flash-list.json "files" is empty; the package maps nothing'),
    ("entrytype", {"files": ["m.kmodel"]}, {},
     "entrytype.kfpkg: flash-list.json entry 1 needs \"bin\" and \"address\", got 'm.kmodel'"),
    ("noaddress", {"files": [{"bin": "m.kmodel"}]}, {"m.kmodel": b"x"},
     "noaddress.kfpkg: flash-list.json entry 1 needs \"bin\" and \"address\", got {'bin': 'm.kmodel'}"),
    ("binnumber", {"files": [{"bin": 5, "address": 0}]}, {},
     'binnumber.kfpkg: flash-list.json entry 1: "bin" must be a file name, got 5'),
    ("addrtext", one("m.kmodel", "here"), {"m.kmodel": b"x"},
     "addrtext.kfpkg: address of 'm.kmodel' is not a flash address (decimal or 0x-hex ASCII digits): 'here'"),
    ("addrlist", one("m.kmodel", [1]), {"m.kmodel": b"x"},
     "addrlist.kfpkg: address of 'm.kmodel' must be a number, got [1]"),
    ("addrfar", one("m.kmodel", 0x1000000), {"m.kmodel": b"x"},
     "addrfar.kfpkg: address 0x1000000 of 'm.kmodel' is outside the 16 MiB flash"),
    ("missing", one("m.kmodel"), {}, "missing.kfpkg: flash-list.json names 'm.kmodel', which is not in the zip"),
    ("overlap", {"files": [{"bin": "a.kmodel", "address": 0x300000}, {"bin": "b.kmodel", "address": 0x300010}]},
     {"a.kmodel": b"a" * 100, "b.kmodel": b"b"},
     "overlap.kfpkg: 'a.kmodel' at 0x300000 (100 bytes) overlaps 'b.kmodel' at 0x300010"),
    ("pastend", one("m.kmodel", FLASH_BYTES - 10), {"m.kmodel": b"m" * 100},
     "pastend.kfpkg: 'm.kmodel' (100 bytes at 0xfffff6) does not fit the 16 MiB flash"),
]


@pytest.mark.parametrize("stem,listing,members,message", CASES, ids=[c[0] for c in CASES])
def test_broken_packages_name_the_problem(tmp_path, stem, listing, members, message):
    pkg = make_pkg(tmp_path / f"{stem}.kfpkg", listing, members)
    out = tmp_path / "out"
    with pytest.raises(FlashImageError) as info:
        read_flash_image(pkg, extract_to=out)
    assert str(info.value) == message
    assert nothing_in(out)  # nothing extracted
    assert not (tmp_path / "evil.kmodel").exists() and not Path("/tmp/evil.kmodel").exists()


def test_not_a_zip_and_missing_file(tmp_path):
    bad = tmp_path / "bad.kfpkg"
    bad.write_bytes(b"hello")
    with pytest.raises(FlashImageError) as info:
        read_flash_image(bad)
    assert str(info.value) == "bad.kfpkg is not a .kfpkg (not a zip file: File is not a zip file)"
    with pytest.raises(FlashImageError) as info:
        read_flash_image(tmp_path / "gone.kfpkg")
    assert str(info.value) == f"no such flash package: {tmp_path / 'gone.kfpkg'}"


def test_member_over_the_flash_is_refused_before_extraction(tmp_path):
    """17 MiB of zeros compress to ~17 KiB: the declared size is checked, nothing is inflated."""
    pkg = make_pkg(tmp_path / "bomb.kfpkg", one("zeros.bin", 0), {"zeros.bin": bytes(17 << 20)})
    assert pkg.stat().st_size < 100_000
    with pytest.raises(FlashImageError) as info:
        read_flash_image(pkg, extract_to=tmp_path / "out")
    assert str(info.value) == "bomb.kfpkg: 'zeros.bin' (17825792 bytes at 0x0) does not fit the 16 MiB flash"
    assert nothing_in(tmp_path / "out")


def test_member_bigger_than_its_header_says_is_not_written_past_it(tmp_path):
    pkg = make_pkg(tmp_path / "lie.kfpkg", one("m.kmodel"), {"m.kmodel": b"\1" * 50_000})
    patch_declared_size(pkg, "m.kmodel", 100)
    out = tmp_path / "out"
    with pytest.raises(FlashImageError) as info:
        read_flash_image(pkg, extract_to=out)
    assert str(info.value) == "lie.kfpkg: 'm.kmodel' is damaged or larger than its zip header says (Bad CRC-32 for file 'm.kmodel')"
    assert nothing_in(out)  # the partial file is removed


def test_member_smaller_than_its_header_says(tmp_path):
    pkg = make_pkg(tmp_path / "short.kfpkg", one("m.kmodel"), {"m.kmodel": b"\1" * 5000})
    patch_declared_size(pkg, "m.kmodel", 9000)
    with pytest.raises(FlashImageError) as info:
        read_flash_image(pkg, extract_to=tmp_path / "out")
    assert str(info.value) == "short.kfpkg: 'm.kmodel' is damaged: it holds 5000 bytes, its zip header says 9000"


def test_oversized_listing_is_not_read(tmp_path):
    pkg = make_pkg(tmp_path / "biglist.kfpkg", " " * (2 << 20), {})
    with pytest.raises(FlashImageError) as info:
        read_flash_image(pkg)
    assert str(info.value) == ("biglist.kfpkg: flash-list.json is 2097152 bytes; a kflash listing is a few hundred "
                               "(refusing more than 1048576 bytes)")


def test_extraction_does_not_follow_a_planted_symlink(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / "m.kmodel").symlink_to(outside)
    pkg = make_pkg(tmp_path / "ok.kfpkg", one("m.kmodel"), {"m.kmodel": b"model"})
    with pytest.raises(FlashImageError, match="cannot extract 'm.kmodel'"):
        read_flash_image(pkg, extract_to=out)
    assert outside.read_text() == "keep"


def test_good_package_maps_addresses_and_cleans_its_temp_folder_on_failure(tmp_path):
    pkg = make_pkg(tmp_path / "good.kfpkg", one("m.kmodel", "0x300000"), {"m.kmodel": MODEL.read_bytes()})
    mapping = read_flash_image(pkg, extract_to=tmp_path / "out")
    assert mapping == {0x300000: tmp_path / "out" / "m.kmodel"}
    assert mapping[0x300000].read_bytes() == MODEL.read_bytes()


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "maixemu", *args], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_cli_flash_image_error_is_one_line_exit_2(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("print('never runs')\n")
    pkg = make_pkg(tmp_path / "evil.kfpkg", one("../../evil.kmodel"), {"../../evil.kmodel": b"x"})
    proc = run_cli("run", str(script), "--lcd", "none", "--flash-image", str(pkg))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == ("maixemu: evil.kfpkg: flash-list.json names the file '../../evil.kmodel'; only plain "
                           "file names inside the package are allowed (no folders, '..' or absolute paths)\n")
    assert not (tmp_path.parent / "evil.kmodel").exists()


def test_cli_flash_image_maps_the_model_and_removes_the_extraction(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("import KPU as kpu\ntask = kpu.load(0x300000)\nprint('loaded')\nkpu.deinit(task)\n")
    pkg = make_pkg(tmp_path / "good.kfpkg", one("m.kmodel"), {"m.kmodel": MODEL.read_bytes()})
    proc = run_cli("run", str(script), "--lcd", "none", "--flash-image", str(pkg), "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "loaded\n"
