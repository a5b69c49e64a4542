"""``uos.mount``/``umount`` with Python VFS objects, ``VfsFat``/``VfsSpiffs`` on block devices, and
``flash_format`` (MaixPy-v1 ``moduos.c``; MicroPython ``extmod/vfs.c`` semantics)."""

from __future__ import annotations

import errno
import io

import pytest

from maixemu.firmware import uos
from maixemu.host.storage import Storage


class RamFs:
    """A minimal MicroPython-style VFS: files in a dict."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.calls: list[str] = []

    def mount(self, readonly, mkfs):
        self.calls.append(f"mount {readonly} {mkfs}")

    def umount(self):
        self.calls.append("umount")

    def ilistdir(self, path):
        return [(name.lstrip("/"), 0x8000, 0, len(data)) for name, data in self.files.items()]

    def open(self, path, mode):
        fs = self

        class File(io.BytesIO):
            def close(self):
                if "w" in mode:
                    fs.files[path] = self.getvalue()
                super().close()

        handle = File(self.files.get(path, b"") if "r" in mode else b"")
        return io.TextIOWrapper(handle) if "b" not in mode else handle

    def stat(self, path):
        return (0x8000, 0, 0, 0, 0, 0, len(self.files[path]), 0, 0, 0)

    def remove(self, path):
        del self.files[path]

    def rename(self, old, new):
        self.files[new] = self.files.pop(old)

    def statvfs(self, path):
        return (512, 512, 16, 10, 10, 0, 0, 0, 0, 255)


@pytest.fixture
def store(tmp_path, board_state):
    project = tmp_path / "project"
    project.mkdir()
    (project / "keep.txt").write_text("user file")
    board_state.storage = Storage.for_project(project, layer_home=tmp_path / "layers", cwd="/sd")
    return project


def test_a_python_vfs_mounts_and_serves_the_path_functions(store):
    fs = RamFs()
    uos.mount(fs, "/ram", readonly=False)
    assert fs.calls == ["mount False False"]
    assert "ram" in uos.listdir("/")
    with uos.open_device("/ram/a.txt", "w") as f:
        f.write("hello")
    assert fs.files == {"/a.txt": b"hello"}
    assert uos.listdir("/ram") == ["a.txt"]
    assert uos.stat("/ram/a.txt")[6] == 5
    uos.rename("/ram/a.txt", "/ram/b.txt")
    with uos.open_device("/ram/b.txt") as f:
        assert f.read() == "hello"
    with pytest.raises(OSError) as exc:
        uos.rename("/ram/b.txt", "/sd/b.txt")
    assert exc.value.errno == errno.EXDEV
    uos.remove("/ram/b.txt")
    assert uos.statvfs("/ram")[0] == 512
    with pytest.raises(OSError) as exc:
        uos.mount(RamFs(), "/ram")
    assert exc.value.errno == errno.EPERM
    uos.umount("/ram")
    assert fs.calls[-1] == "umount" and "ram" not in uos.listdir("/")
    with pytest.raises(OSError) as exc:
        uos.umount("/ram")
    assert exc.value.errno == errno.EINVAL


def test_the_boards_own_mounts_cannot_be_replaced(store):
    with pytest.raises(OSError) as exc:
        uos.mount(RamFs(), "/flash")
    assert exc.value.errno == errno.EPERM


def test_fat_on_a_block_device_says_it_is_not_emulated():
    class Bdev:
        def readblocks(self, n, buf): ...
        def writeblocks(self, n, buf): ...
        def ioctl(self, op, arg): return 0

    with pytest.raises(NotImplementedError, match="uos.VfsFat on a block device is not emulated"):
        uos.VfsFat(Bdev())
    with pytest.raises(AttributeError, match="has no attribute 'readblocks'"):
        uos.VfsFat(object())
    with pytest.raises(AttributeError, match="has no attribute 'count'"):
        uos.VfsFat(type("OldBdev", (), {"readblocks": lambda self, n, buf: None})())
    with pytest.raises(AttributeError, match="'Bdev' object has no attribute 'fs_size'"):
        uos.VfsSpiffs(Bdev())  # a FAT-style block device is not what SPIFFS reads


def test_flash_format_empties_flash_and_keeps_the_pcs_files(store, capsys):
    assert uos.listdir("/flash") == ["keep.txt"]
    assert uos.flash_format() is True
    assert uos.listdir("/flash") == []
    assert (store / "keep.txt").read_text() == "user file"  # copy-on-write: nothing lost
    assert "[MAIXPY]:Spiffs Format successful" in capsys.readouterr().out
