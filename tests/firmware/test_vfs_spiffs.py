"""``uos.VfsSpiffs`` on a flash device the script writes (MaixPy ``vfs_spiffs.c``, ``vfs_spiffs_file.c``,
``vfs_spiffs_io.c``): the demo's RAM disk, the firmware's messages, SPIFFS's flat names and limits."""

from __future__ import annotations

import errno

import pytest

from maixemu.firmware import uos

open = uos.open_device  # noqa: A001 - the script's open, as the runner installs it

RAM_FS_DEMO = """
import uos

class RAMFlashDev:
    def __init__(self):
            self.fs_size = 256*1024
            self.fs_data = bytearray(256*1024)
            self.erase_block = 32*1024
            self.log_block_size = 64*1024
            self.log_page_size = 4*1024

    def read(self,buf,size,addr):
            for i in range(len(buf)):
                buf[i] = self.fs_data[addr+i]

    def write(self,buf,size,addr):
            for i in range(len(buf)):
                self.fs_data[addr+i] = buf[i]

    def erase(self,size,addr):
            for i in range(size):
                self.fs_data[addr+i] = 0xff

blkdev = RAMFlashDev()
vfs = uos.VfsSpiffs(blkdev)
vfs.mkfs(vfs)
uos.mount(vfs,'/ramdisk')

text_str = "hello maixpy"
with open("/ramdisk/test.txt", "w") as f:
    print("write:", text_str)
    f.write(text_str)
with open("/ramdisk/test.txt", "r") as f:
    text = f.read()
    print("read:",text)
print(uos.listdir("/ramdisk"), uos.stat("/ramdisk/test.txt")[6], uos.statvfs("/ramdisk"))
uos.umount("/ramdisk")
vfs2 = uos.VfsSpiffs(blkdev)          # the same device again: its file system is still there
uos.mount(vfs2, "/again")
print(open("/again/test.txt").read())
"""


def test_the_firmware_ram_disk_demo(maixpy):
    result = maixpy.run(code=RAM_FS_DEMO, timeout=120)
    assert result.ok, result.stderr
    # 256 KiB in 64 KiB blocks of 4 KiB pages: (4 - 2) * (16 - 1) + 1 = 31 data pages of 4091 bytes,
    # reported in the firmware's 128 KiB units: 0 blocks
    assert result.lines == [
        "[MAIXPY]:Spiffs Mount failed ",  # mkfs mounts first: the RAM holds no file system yet
        "[MAIXPY]:Spiffs Unmount.", "[MAIXPY]:Spiffs Formating...", "[MAIXPY]:Spiffs Format successful ",
        "[MAIXPY]:Spiffs Mount successful ",  # uos.mount
        "write: hello maixpy", "read: hello maixpy",
        "['test.txt'] 12 (131072, 131072, 0, 0, 0, 0, 0, 0, 0, 128)",
        "[MAIXPY]:Spiffs Mount successful ",
        "hello maixpy",
    ]


class FlashDev:
    """A device object as vfs_spiffs.c reads it, counting the calls it gets."""

    def __init__(self, size=256 * 1024, block=64 * 1024, page=4 * 1024, erase=True):
        self.fs_size, self.erase_block, self.log_block_size, self.log_page_size = size, 4096, block, page
        self.data = bytearray(size)
        self.calls = {"read": 0, "write": 0, "erase": 0}
        if erase:
            self.erase = self._erase

    def read(self, buf, size, addr):
        self.calls["read"] += 1
        buf[:] = self.data[addr:addr + size]

    def write(self, buf, size, addr):
        self.calls["write"] += 1
        self.data[addr:addr + size] = buf

    def _erase(self, size, addr):
        self.calls["erase"] += 1
        self.data[addr:addr + size] = b"\xff" * size


@pytest.fixture
def ramdisk(capsys):
    dev = FlashDev()
    vfs = uos.VfsSpiffs(dev)
    vfs.mkfs(vfs)
    uos.mount(vfs, "/ram")
    capsys.readouterr()
    yield dev, vfs
    uos.umount("/ram")


def test_constructor_reads_the_device_as_the_firmware_does():
    class Bdev:  # a FAT-style block device is not what SPIFFS reads
        def readblocks(self, n, buf): ...

    with pytest.raises(AttributeError, match="^'Bdev' object has no attribute 'fs_size'$"):
        uos.VfsSpiffs(Bdev())
    dev = FlashDev()
    del dev.erase  # optional (mp_load_method_maybe)
    uos.VfsSpiffs(dev)
    bare = type("NoRead", (), {"fs_size": 1, "erase_block": 1, "log_block_size": 1, "log_page_size": 1,
                               "write": lambda *a: None})()
    with pytest.raises(AttributeError, match="has no attribute 'read'"):
        uos.VfsSpiffs(bare)


def test_an_unformatted_device_does_not_mount(capsys):
    vfs = uos.VfsSpiffs(FlashDev())
    with pytest.raises(OSError) as err:
        uos.mount(vfs, "/raw")
    assert err.value.errno == errno.EIO
    assert capsys.readouterr().out == "[MAIXPY]:Spiffs Mount failed \n"
    assert "raw" not in uos.listdir("/")


def test_format_erases_through_the_device(capsys):
    dev = FlashDev()
    vfs = uos.VfsSpiffs(dev)
    vfs.mkfs(vfs)
    assert dev.calls["erase"] == 256 * 1024 // 4096 and dev.calls["write"] >= 1
    vfs.mkfs(vfs)  # formatted now: mkfs only mounts
    assert capsys.readouterr().out.splitlines()[-1] == "[MAIXPY]:Spiffs Mount successful "


def test_flat_names_and_the_directory_calls(ramdisk):
    dev, vfs = ramdisk
    with open("/ram/a/b.txt", "w") as f:  # SPIFFS has no directories: the name is "a/b.txt"
        f.write("x")
    assert uos.listdir("/ram") == ["a/b.txt"]
    with pytest.raises(OSError) as err:
        uos.stat("/ram/a")
    assert err.value.errno == errno.ENOENT
    assert uos.stat("/ram")[0] == 0x4000 and uos.stat("/ram/a/b.txt")[:7] == (0x8000, 0, 0, 0, 0, 0, 1)
    with pytest.raises(NotImplementedError, match="^SPIFFS not support$"):
        uos.mkdir("/ram/d")
    with pytest.raises(OSError) as err:
        uos.rmdir("/ram/a")
    assert err.value.errno == errno.EIO
    assert vfs.getcwd() == "" and vfs.chdir("/x") is None


def test_open_modes_follow_vfs_spiffs_file(ramdisk, capsys):
    with pytest.raises(OSError) as err:
        open("/ram/none.txt")
    assert err.value.errno == errno.ENOENT
    with pytest.raises(OSError) as err:
        open("/ram/none.txt", "a")  # SPIFFS_O_APPEND without SPIFFS_O_CREAT
    assert err.value.errno == errno.ENOENT
    with open("/ram/log.txt", "w") as f:
        f.write("one\n")
    with open("/ram/log.txt", "a") as f:
        f.write("two\n")
    assert open("/ram/log.txt").readlines() == ["one\n", "two\n"]
    assert open("/ram/log.txt", "rb").read() == b"one\ntwo\n"
    assert repr(open("/ram/log.txt")).startswith("<io.TextIOWrapper 0x")
    with pytest.raises(OSError) as err:
        open("/ram/" + "n" * 127, "w")  # a name (with its '/') of 128 bytes: too long
    assert err.value.errno == errno.ENOENT
    uos.rename("/ram/log.txt", "/ram/new.txt")
    assert uos.listdir("/ram") == ["new.txt"]
    uos.remove("/ram/new.txt")
    with pytest.raises(OSError) as err:
        uos.remove("/ram/new.txt")
    assert err.value.errno == errno.ENOENT
    assert capsys.readouterr().out == "[MaixPy]:SPIFFS Error Code -10002\n"


def test_capacity_is_spiffs_info_s(ramdisk):
    dev, vfs = ramdisk
    # 31 data pages of 4091 bytes; a file takes one index page plus its data pages
    with open("/ram/big.bin", "wb") as f:
        f.write(b"\0" * (29 * 4091))  # 30 pages
        with pytest.raises(OSError) as err:
            f.write(b"\0" * (2 * 4091))  # 32 pages: SPIFFS_ERR_FULL
        assert err.value.errno == errno.EIO
    assert uos.stat("/ram/big.bin")[6] == 29 * 4091
    with open("/ram/small.txt", "w") as f:  # its index page is the last free one
        with pytest.raises(OSError) as err:
            f.write("a")  # and a data page more does not fit
        assert err.value.errno == errno.EIO
    assert uos.statvfs("/ram")[2:4] == (0, 0)
