"""The copy-on-write storage (issue 10): a run's writes, deletions and renames land in its layer, the
project folder stays as it was, and the device sees the merged view; /sd and /flash are separate."""

from __future__ import annotations

import errno
import os

import pytest

from maixemu.firmware.state import BoardState
from maixemu.host import storage
from maixemu.host.storage import SPIFFS_FLASH, Storage


@pytest.fixture()
def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "main.py").write_text("print('mine')\n")
    (folder / "labels.txt").write_text("cat\ndog\n")
    (folder / "data").mkdir()
    (folder / "data" / "a.txt").write_text("a")
    return folder


def snapshot(folder):
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() and not p.is_symlink() else None)
            for p in sorted(folder.rglob("*")) if ".maixemu" not in p.parts}


def read(store, path):
    with store.open(path) as handle:
        return handle.read()


def test_reads_fall_through_and_writes_go_to_the_layer(project):
    before = snapshot(project)
    store = Storage.for_project(project)
    assert read(store, "/sd/labels.txt") == "cat\ndog\n"
    assert read(store, "/flash/labels.txt") == "cat\ndog\n"  # both mounts show the project
    with store.open("/flash/main.py", "w") as handle:
        handle.write("print('installed')\n")
    assert read(store, "/flash/main.py") == "print('installed')\n"
    assert read(store, "/sd/main.py") == "print('mine')\n"  # separate file systems
    with store.open("/sd/labels.txt", "a") as handle:  # appending copies the file up first
        handle.write("bird\n")
    assert read(store, "/sd/labels.txt") == "cat\ndog\nbird\n"
    assert snapshot(project) == before
    assert (project / ".maixemu" / "flash" / "main.py").read_text() == "print('installed')\n"
    assert (project / ".maixemu" / ".gitignore").read_text().splitlines()[-1] == "*"
    line = store.closing_line()
    assert "/flash/main.py" in line and "/sd/labels.txt" in line and str(project / ".maixemu") in line


def test_deletions_are_whiteouts_that_persist(project):
    before = snapshot(project)
    store = Storage.for_project(project)
    store.remove("/sd/labels.txt")
    store.remove("/sd/data/a.txt")
    store.rmdir("/sd/data")
    assert store.listdir("/sd") == ["main.py"]
    assert store.listdir("/flash") == ["data", "labels.txt", "main.py"]
    with pytest.raises(OSError) as info:
        store.open("/sd/labels.txt")
    assert info.value.errno == errno.ENOENT
    assert snapshot(project) == before
    again = Storage.for_project(project)  # the next run sees the same card
    assert again.listdir("/sd") == ["main.py"]
    assert "earlier runs" in again.earlier_changes_line()
    again.mkdir("/sd/data")  # a folder made again does not show the deleted one's files
    assert again.listdir("/sd/data") == []
    assert "deleted /sd/data, /sd/data/a.txt, /sd/labels.txt" in store.closing_line()


def test_rename_moves_in_the_layer_only(project):
    before = snapshot(project)
    store = Storage.for_project(project)
    store.rename("/sd/labels.txt", "/sd/old_labels.txt")
    store.rename("/sd/data", "/sd/kept")
    assert store.listdir("/sd") == ["kept", "main.py", "old_labels.txt"]
    assert read(store, "/sd/kept/a.txt") == "a"
    with open(store.resolve("/sd/old_labels.txt")) as handle:
        assert handle.read() == "cat\ndog\n"
    with store.open("/sd/main.py", "w") as handle:
        handle.write("x")
    store.rename("/sd/old_labels.txt", "/sd/main.py")  # replaces the layer's main.py
    assert read(store, "/sd/main.py") == "cat\ndog\n"
    with pytest.raises(OSError) as info:
        store.rename("/sd/main.py", "/flash/main.py")
    assert info.value.errno == errno.EXDEV
    assert snapshot(project) == before


@pytest.mark.parametrize("layered", [True, False])
def test_remove_and_rename_of_a_link_act_on_the_link(project, layered):
    (project / "alias.txt").symlink_to(project / "labels.txt")
    (project / "data" / "rel.txt").symlink_to("../labels.txt")
    store = Storage.for_project(project, writable=not layered)
    assert read(store, "/sd/alias.txt") == "cat\ndog\n"
    store.rename("/sd/data/rel.txt", "/sd/data/moved.txt")
    assert read(store, "/sd/data/moved.txt") == "cat\ndog\n"
    store.remove("/sd/alias.txt")
    assert (project / "labels.txt").read_text() == "cat\ndog\n"
    assert "alias.txt" not in store.listdir("/sd")
    assert (project / "alias.txt").is_symlink() == layered  # a layered run leaves the link itself too


def test_a_relative_link_moved_up_keeps_its_target(project):
    (project / "data" / "rel.txt").symlink_to("../labels.txt")
    store = Storage.for_project(project)
    store.rename("/sd/data/rel.txt", "/sd/moved.txt")
    assert read(store, "/sd/moved.txt") == "cat\ndog\n"
    assert (project / "data" / "rel.txt").is_symlink()


def test_links_are_resolved_through_the_merged_view(project):
    (project / "current.txt").symlink_to(project / "labels.txt")  # absolute, inside the project
    store = Storage.for_project(project)
    with store.open("/sd/labels.txt", "w") as handle:
        handle.write("new\n")
    assert read(store, "/sd/current.txt") == "new\n"  # the link's target as the device sees it now
    store.remove("/sd/labels.txt")
    with pytest.raises(OSError):
        read(store, "/sd/current.txt")
    assert (project / "labels.txt").read_text() == "cat\ndog\n"


def test_the_layer_folder_is_not_part_of_the_device(project):
    store = Storage.for_project(project)
    with store.open("/sd/x.txt", "w") as handle:
        handle.write("x")
    assert ".maixemu" not in store.listdir("/sd") and ".maixemu" not in store.listdir("/flash")
    for path in ("/sd/.maixemu/sd/x.txt", "/flash/.maixemu/README.txt"):
        with pytest.raises(OSError) as info:
            store.open(path)
        assert info.value.errno == errno.ENOENT
    assert store.to_device(project / ".maixemu" / "sd" / "x.txt") == "/flash/x.txt" or \
        store.to_device(project / ".maixemu" / "sd" / "x.txt") == "/sd/x.txt"


def test_flash_has_the_spiffs_capacity(tmp_path):
    """SPIFFS_write reserves the pages of a whole write plus one or writes nothing, and MaixPy's
    vfs_spiffs_file.c reports its failure as EIO (issue 24: checked against the firmware's source)."""
    store = Storage(sd_dir=tmp_path, flash_dir=tmp_path)
    told = []
    store.on_notice = told.append
    chunk = b"\xa5" * 65536
    written = 0
    with pytest.raises(OSError) as info:
        with store.open("/flash/fill.bin", "wb") as handle:
            for _ in range(100):
                written += handle.write(chunk)
    assert info.value.errno == errno.EIO and str(info.value) == "[Errno 5] EIO"
    size = (tmp_path / "fill.bin").stat().st_size
    # 42 chunks take 1 + 673 pages of 683; the 43rd needs 18 (17 + 1 spare) of the 9 left: none of it is written
    assert size == written == 42 * 65536
    assert store.statvfs("/flash")[3] == 0
    assert told == ["/flash is full: its SPIFFS holds 2794153 bytes, as on the board; 65536 bytes for "
                    "/flash/fill.bin (the board says OSError: [Errno 5] EIO)"]
    store.remove("/flash/fill.bin")
    assert store.statvfs("/flash")[2:4] == (21, 21)


def test_default_storage_outside_a_run_changes_nothing(tmp_path, monkeypatch):
    (tmp_path / "here.txt").write_text("keep")
    monkeypatch.chdir(tmp_path)
    store = BoardState().storage  # a board nobody gave a storage: the cwd through a private layer
    with store.open("/sd/here.txt", "w") as handle:
        handle.write("changed")
    assert read(store, "/sd/here.txt") == "changed"
    assert (tmp_path / "here.txt").read_text() == "keep"
    assert sorted(os.listdir(tmp_path)) == ["here.txt"]


def test_two_runs_deleting_at_once_keep_every_deletion(project):
    """Issue 24: two runs on one project shared one temporary file name for the deletion list: of 1000
    deletions 500 were kept, and a run got a spurious ENOENT renaming the other's temporary file."""
    import subprocess
    import sys
    import textwrap

    for n in range(1000):
        (project / f"f{n}.txt").write_text(str(n))
    code = textwrap.dedent("""
        import sys
        from maixemu.host.storage import Storage
        store = Storage.for_project(sys.argv[1])
        for n in range(int(sys.argv[2]), 1000, 2):
            store.remove(f"/sd/f{n}.txt")
    """)
    runs = [subprocess.Popen([sys.executable, "-c", code, str(project), str(first)], stderr=subprocess.PIPE,
                             text=True) for first in (0, 1)]
    errors = [run.communicate(timeout=300)[1] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], errors
    store = Storage.for_project(project)
    assert [name for name in store.listdir("/sd") if name.startswith("f")] == []
    assert len(store.layers()["sd"].whiteouts) == 1000
    assert sorted(os.listdir(project / ".maixemu")) == [".gitignore", "README.txt", "sd", "sd.deleted"]
    assert len(list(project.glob("f*.txt"))) == 1000  # the user's files are all still there
