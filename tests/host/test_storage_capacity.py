"""Issue 24: the media's capacity is counted once and then kept up to date (no entry limit, no walk
per open, no side door: truncate, a descriptor, a copy into the layer, a full PC disk), and a write
that does not fit fails at the write as the board's file system fails it:

* ``/sd`` (FatFs ``f_write``, MicroPython ``vfs_fat_file.c``): what fits is written, then ENOSPC;
  at most 4 GiB - 1 per file;
* ``/flash`` (SPIFFS ``ec68ba8``, MaixPy ``vfs_spiffs_file.c``): a write reserves its pages plus
  one or writes nothing, EIO; a write under a page waits in SPIFFS's write cache and fails at
  ``close()``/``flush()``; a new file needs a free page (ENOENT at the open).
"""

from __future__ import annotations

import errno
import gc
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from maixemu.host.storage import FAT32_CARD, SPIFFS_FLASH, Storage


def _storage(tmp_path: Path) -> tuple[Storage, list[str]]:
    root = tmp_path / "card"
    root.mkdir(exist_ok=True)
    told: list[str] = []
    return Storage(sd_dir=root, flash_dir=root, on_notice=told.append), told


def _fill_flash(store: Storage, leave_pages: int) -> None:
    """Fill /flash with one file so that ``leave_pages`` SPIFFS pages stay free."""
    pages = SPIFFS_FLASH.capacity // SPIFFS_FLASH.unit - leave_pages - 1  # - the file's index page
    with store.open("/flash/fill.bin", "wb") as handle:
        handle.write(b"\0" * (pages * SPIFFS_FLASH.unit - 1))  # ends one byte short of its last page
    free = store.statvfs("/flash")  # (free pages are not in whole 128 KiB blocks: count them)
    assert SPIFFS_FLASH.capacity - (pages + 1) * SPIFFS_FLASH.unit == leave_pages * SPIFFS_FLASH.unit, free


def _fill_card(store: Storage, leave: int) -> None:
    """Make /sd hold all but ``leave`` bytes (sparse files of 4 GiB - 1 and the rest)."""
    want = FAT32_CARD.capacity - leave
    index = 0
    while want > 0:
        size = min(want, FAT32_CARD.max_file // FAT32_CARD.unit * FAT32_CARD.unit)
        with store.open(f"/sd/fill{index}.bin", "wb") as handle:
            handle.truncate(size)
        want -= size
        index += 1


# ------------------------------------------------------------------------------------ counting
def test_opens_do_not_walk_the_mount(tmp_path, monkeypatch):
    """Today's main walked the whole mount at every write-open (550 ms per open with 20 000 files)."""
    from maixemu.host import medium

    store, _ = _storage(tmp_path)
    walks = []
    real_walk = os.walk
    monkeypatch.setattr(medium.os, "walk", lambda *a, **k: (walks.append(a[0]), real_walk(*a, **k))[1])
    for n in range(30):
        with store.open(f"/sd/file{n}.txt", "w") as handle:
            handle.write("x" * n)
    store.statvfs("/sd")
    assert len(walks) == 1


def test_everything_on_the_card_counts_however_many_entries(tmp_path):
    """Today's main stopped adding up at 20 000 entries: what lay behind them was free space."""
    root = tmp_path / "card"
    root.mkdir()
    for n in range(20050):
        (root / f"{n}").touch()
    (root / "z").mkdir()
    for n in range(2):  # 2 x 3.9 GB in a folder below the 20 050 entries (a walk reaches them last)
        with open(root / "z" / f"big{n}.bin", "wb") as handle:
            handle.truncate(3_900_000_000)
    store = Storage(sd_dir=root, flash_dir=root)
    free = store.statvfs("/sd")[3] * FAT32_CARD.block_size
    assert free == FAT32_CARD.capacity - 2 * FAT32_CARD.cost(3_900_000_000)
    with pytest.raises(OSError) as info:
        with store.open("/sd/more.bin", "wb") as handle:
            handle.seek(free + FAT32_CARD.unit)
            handle.write(b"x")
    assert info.value.errno == errno.ENOSPC


def test_two_open_files_share_the_free_space(tmp_path):
    """Each file of today's main got its own snapshot of the free space: two of them filled it twice."""
    store, _ = _storage(tmp_path)
    _fill_flash(store, leave_pages=40)
    first, second = store.open("/flash/a.bin", "wb"), store.open("/flash/b.bin", "wb")
    first.write(b"1" * 30 * 4091)
    with pytest.raises(OSError) as info:
        second.write(b"2" * 30 * 4091)
    assert info.value.errno == errno.EIO
    first.close()
    second.close()


# ------------------------------------------------------------------------------------ FAT: /sd
def test_a_full_card_fails_the_write_itself_with_enospc(tmp_path):
    """Today's main returned len(s) for ``open(p, 'w').write(s)`` and lost it silently at close."""
    store, told = _storage(tmp_path)
    _fill_card(store, leave=FAT32_CARD.unit)  # one cluster left
    handle = store.open("/sd/log.txt", "w")
    with pytest.raises(OSError) as info:
        handle.write("x" * (FAT32_CARD.unit + 10))
    assert info.value.errno == errno.ENOSPC and str(info.value) == "[Errno 28] ENOSPC"
    handle.close()
    assert os.path.getsize(tmp_path / "card" / "log.txt") == FAT32_CARD.unit  # the cluster that fitted
    assert told and "/sd/log.txt got 32768 of 32778 bytes" in told[0]


def test_a_fat_file_stops_at_4_gib(tmp_path):
    store, _ = _storage(tmp_path)
    with store.open("/sd/huge.bin", "wb") as handle:
        handle.seek(0xFFFFFFFF - 2)
        assert handle.write(b"ab") == 2
        with pytest.raises(OSError) as info:
            handle.write(b"c")
    assert info.value.errno == errno.ENOSPC
    with pytest.raises(OSError):
        with store.open("/sd/other.bin", "wb") as handle:
            handle.truncate(0x100000000)


def test_truncate_is_counted(tmp_path):
    """Today's main let ``truncate(10**12)`` make a file of a terabyte on an 8 GB card."""
    store, _ = _storage(tmp_path)
    with store.open("/sd/t.bin", "wb") as handle:
        with pytest.raises(OSError) as info:
            handle.truncate(FAT32_CARD.capacity + 1)
        assert info.value.errno == errno.ENOSPC
        handle.truncate(FAT32_CARD.capacity // 2)
    assert store.statvfs("/sd")[3] == FAT32_CARD.capacity // 2 // FAT32_CARD.block_size
    with store.open("/sd/t.bin", "r+b") as handle:
        handle.truncate(0)
    assert store.statvfs("/sd")[3] == FAT32_CARD.capacity // FAT32_CARD.block_size


# ------------------------------------------------------------------------------------ SPIFFS: /flash
def test_a_spiffs_write_is_whole_or_nothing_with_eio(tmp_path):
    store, told = _storage(tmp_path)
    _fill_flash(store, leave_pages=4)
    with store.open("/flash/new.bin", "wb") as handle:  # its index page leaves 3
        assert handle.write(b"x" * (2 * 4091 - 100)) == 2 * 4091 - 100  # 2 pages + 1 spare: fits
    with store.open("/flash/new2.bin", "wb") as handle:  # the index page takes the last one
        with pytest.raises(OSError) as info:
            handle.write(b"y" * 4096)
    assert info.value.errno == errno.EIO and str(info.value) == "[Errno 5] EIO"
    assert os.path.getsize(tmp_path / "card" / "new2.bin") == 0  # nothing of it was written
    assert any("4096 bytes for /flash/new2.bin" in line for line in told)


def test_a_small_spiffs_write_fails_at_close(tmp_path):
    """SPIFFS caches writes under a page: the board's write returns their length, close() says EIO."""
    store, _ = _storage(tmp_path)
    _fill_flash(store, leave_pages=2)
    handle = store.open("/flash/s.txt", "w")  # its index page leaves 1: "hello" needs 1 + 1 spare
    assert handle.write("hello") == 5
    with pytest.raises(OSError) as info:
        handle.close()
    assert info.value.errno == errno.EIO
    assert os.path.getsize(tmp_path / "card" / "s.txt") == 0


def test_a_dropped_file_that_lost_its_data_is_said(tmp_path):
    """``open(p, 'w').write(s)`` without close: the board loses it without a word; maixemu says so."""
    store, told = _storage(tmp_path)
    _fill_flash(store, leave_pages=2)
    store.open("/flash/t.txt", "w").write("dropped")
    gc.collect()
    assert os.path.getsize(tmp_path / "card" / "t.txt") == 0
    assert any("7 bytes for /flash/t.txt" in line and "EIO" in line for line in told)


def test_a_new_file_on_a_full_spiffs_is_enoent_at_the_open(tmp_path):
    store, _ = _storage(tmp_path)
    _fill_flash(store, leave_pages=1)  # a write always leaves its spare page ...
    store.open("/flash/empty.txt", "w").close()  # ... which a new file's index page can take
    with pytest.raises(OSError) as info:
        store.open("/flash/new.txt", "w")
    assert info.value.errno == errno.ENOENT
    with store.open("/flash/fill.bin", "r+b") as handle:  # an existing file still opens
        assert handle.read(4) == b"\0\0\0\0"


# ------------------------------------------------------------------------------------ side doors
def test_a_copy_into_the_layer_counts_and_never_leaves_half_a_file(tmp_path, monkeypatch):
    from maixemu.host import medium

    project = tmp_path / "project"
    project.mkdir()
    for name in ("a.bin", "b.bin"):
        (project / name).write_bytes(b"m" * 1_500_000)
    store = Storage.for_project(project)
    with store.open("/flash/a.bin", "ab") as handle:  # appending copies the project's file up first
        handle.write(b"!")
    with pytest.raises(OSError) as info:
        store.open("/flash/b.bin", "ab")  # a second 1.5 MB copy does not fit the 2.7 MB flash
    assert info.value.errno == errno.EIO
    assert not (project / ".maixemu" / "flash" / "b.bin").exists()

    def half_then_full(source, target):
        Path(target).write_bytes(Path(source).read_bytes()[:1000])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(medium.shutil, "copyfile", half_then_full)
    with pytest.raises(OSError) as info:
        store.open("/sd/b.bin", "ab")  # the PC's disk fills during the copy
    assert info.value.errno == errno.ENOSPC and str(info.value) == "[Errno 28] ENOSPC: '/sd/b.bin'"
    assert sorted(os.listdir(project / ".maixemu" / "sd")) == []  # no half copy shadows the user's file
    assert (project / "b.bin").read_bytes() == b"m" * 1_500_000


def test_a_full_pc_disk_is_the_devices_error_and_said(tmp_path):
    """RLIMIT_FSIZE makes the PC refuse the bytes (EFBIG) long before the card is full."""
    root = tmp_path / "card"
    root.mkdir()
    code = textwrap.dedent(f"""
        import resource
        from maixemu.host.storage import Storage
        told = []
        store = Storage(sd_dir={str(root)!r}, flash_dir={str(root)!r}, on_notice=told.append)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100000, 100000))
        try:
            with store.open("/sd/log.bin", "wb") as handle:
                handle.write(b"x" * 200000)
        except OSError as exc:
            print(exc)
        print(told)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    error, told = proc.stdout.splitlines()
    assert error == "[Errno 28] ENOSPC"
    assert "/sd/log.bin (the PC's disk is full)" in told


def test_a_script_cannot_open_a_descriptor(tmp_path):
    """Today's main passed ``open(3, 'wb')`` to the host: past the mounts and the medium's capacity."""
    from maixemu.firmware import uos
    from maixemu.firmware.state import BoardState, bind

    state = BoardState()
    state.storage, _ = _storage(tmp_path)
    with bind(state):
        handle = uos.open_device("/flash/a.bin", "wb")
        with pytest.raises(TypeError, match=r"^can't convert 'int' object to str implicitly$"):
            uos.open_device(handle.fileno(), "wb")
        assert str(tmp_path) not in repr(handle) and handle.name == "/flash/a.bin"
        text = uos.open_device("b.txt", "w")
        assert str(tmp_path) not in repr(text) and text.name == "b.txt"
        handle.close()
        text.close()
