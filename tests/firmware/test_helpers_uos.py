"""uos/os on mapped folders: mounts, cwd, refusals (``..`` escapes, symlinks out), device errors, open()."""

from __future__ import annotations

import errno
import os

import pytest

from maixemu.firmware.state import current
from maixemu.firmware import uos
from maixemu.host import storage


@pytest.fixture()
def board(tmp_path):
    sd, flash = tmp_path / "sd", tmp_path / "flash"
    sd.mkdir()
    flash.mkdir()
    store = storage.Storage(sd_dir=sd, flash_dir=flash, cwd="/sd")
    current().storage = store
    return store


def test_root_lists_the_mount_points(board):
    assert uos.listdir("/") == ["flash", "sd"]
    board.sd_present = False
    assert uos.listdir("/") == ["flash"]


def test_getcwd_chdir_relative_paths(board):
    assert uos.getcwd() == "/sd"
    uos.mkdir("cap_images")
    uos.chdir("cap_images")
    assert uos.getcwd() == "/sd/cap_images"
    with uos.open_device("0.jpg", "wb") as handle:
        handle.write(b"\xff\xd8")
    assert uos.listdir() == ["0.jpg"]
    assert (board.sd_dir / "cap_images" / "0.jpg").read_bytes() == b"\xff\xd8"
    uos.chdir("..")
    assert uos.getcwd() == "/sd"
    uos.chdir("/flash")
    assert uos.listdir("/sd") == ["cap_images"]
    uos.chdir("/")
    assert uos.listdir() == ["flash", "sd"]


def test_remove_rename_rmdir(board):
    uos.mkdir("/sd/d")
    with uos.open_device("/sd/d/a.txt", "w") as handle:
        handle.write("x")
    uos.rename("/sd/d/a.txt", "/sd/d/b.txt")
    assert uos.listdir("/sd/d") == ["b.txt"]
    with pytest.raises(OSError) as info:
        uos.rename("/sd/d/b.txt", "/flash/b.txt")
    assert info.value.errno == errno.EXDEV
    with pytest.raises(OSError) as info:
        uos.rmdir("/sd/d")
    assert info.value.errno == errno.ENOTEMPTY
    uos.remove("/sd/d/b.txt")
    uos.rmdir("/sd/d")
    assert uos.listdir("/sd") == []


@pytest.mark.parametrize("path", ["/sd/../../etc/passwd", "/etc/passwd", "../../etc/passwd", "/sd/nothing.txt"])
def test_paths_outside_or_missing_are_enoent(board, path):
    with pytest.raises(OSError) as info:
        uos.open_device(path)
    assert info.value.errno == errno.ENOENT
    assert str(info.value) == "[Errno 2] ENOENT"
    assert info.value.args[0] == errno.ENOENT


def test_symlink_pointing_outside_is_enoent(board, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    os.symlink(outside, board.sd_dir / "link.txt")
    os.symlink(tmp_path, board.sd_dir / "linkdir")
    for path in ("/sd/link.txt", "link.txt", "/sd/linkdir/secret.txt"):
        with pytest.raises(OSError) as info:
            uos.open_device(path)
        assert info.value.errno == errno.ENOENT
    with pytest.raises(OSError) as info:
        uos.listdir("/sd/linkdir")
    assert info.value.errno == errno.ENOENT
    with pytest.raises(OSError):
        uos.stat("/sd/link.txt")


def test_symlink_inside_the_mount_is_followed(board):
    (board.sd_dir / "real.txt").write_text("ok")
    os.symlink(board.sd_dir / "real.txt", board.sd_dir / "alias.txt")
    with uos.open_device("/sd/alias.txt") as handle:
        assert handle.read() == "ok"


def test_stat_and_ilistdir(board):
    (board.flash_dir / "main.py").write_text("print(1)\n")
    uos.mkdir("/flash/sub")
    mode, *_rest = uos.stat("/flash/main.py")
    assert mode == 0x8000
    assert uos.stat("/flash/main.py")[6] == 9
    assert uos.stat("/flash/sub")[0] == 0x4000
    assert uos.stat("/")[0] == 0x4000
    assert list(uos.ilistdir("/flash")) == [("main.py", 0x8000, 0, 9), ("sub", 0x4000, 0, 0)]
    assert list(uos.ilistdir("/")) == [("flash", 0x4000, 0, 0), ("sd", 0x4000, 0, 0)]


def test_statvfs_device_numbers(board):
    # MaixPy's SPIFFS: 0x300000 bytes in 128 KiB logical blocks of 4 KiB pages; SPIFFS_info counts
    # (24 - 2) * (32 - 1) + 1 = 683 data pages of 4091 bytes, statvfs gives them in 128 KiB blocks.
    flash = uos.statvfs("/flash")
    assert flash == (131072, 131072, 21, 21, 21, 0, 0, 0, 0, 128)
    with uos.open_device("/flash/model.kmodel", "wb") as model:  # an index page + 49 data pages
        model.write(b"\0" * 200000)
    assert uos.statvfs("/flash")[3] == (683 * 4091 - 50 * 4091) // 131072 == 19
    sd = uos.statvfs("/sd")
    assert sd[0] == sd[1] == 32768 and sd[2] == 242304 and sd[9] == 255
    assert uos.statvfs("/") == (0, 0, 0, 0, 0, 0, 0, 0, 1, 128)
    with pytest.raises(OSError):
        uos.statvfs("/usb")


def test_mount_points_cannot_be_removed(board):
    for func in (uos.rmdir, uos.remove):
        with pytest.raises(OSError):
            func("/sd")
    with pytest.raises(OSError) as info:
        uos.mkdir("/flash")
    assert info.value.errno == errno.EEXIST


def test_open_device_relative_to_device_cwd(board):
    (board.sd_dir / "labels.txt").write_text("cat\ndog\n")
    with uos.open_device("labels.txt") as handle:
        assert handle.read().split() == ["cat", "dog"]
    uos.chdir("/flash")
    with pytest.raises(OSError):
        uos.open_device("labels.txt")


def test_misc(board):
    assert uos.uname().sysname == "MaixPy"
    assert uos.uname().machine == "Sipeed_M1 with kendryte-k210"
    assert uos.sync() is None
    assert len(uos.urandom(8)) == 8
    assert uos.sep == "/"
