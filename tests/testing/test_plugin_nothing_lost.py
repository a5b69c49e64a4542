"""Nothing lost in the pytest plugin (issue 10): ``flash_image=`` with ``flash_dir=`` keeps that folder,
the fresh per-run folders stay private and writable, and a given folder is said to be written."""

from __future__ import annotations

from _shared import make_kfpkg, snapshot

from maixemu.testing import MaixPyRunner


def test_flash_image_with_flash_dir_keeps_the_folder(tmp_path):
    flash = tmp_path / "myflash"
    (flash / "lib").mkdir(parents=True)
    (flash / "boot.py").write_text("print('boot')\n")
    (flash / "lib" / "util.py").write_text("x = 1\n")
    before = snapshot(flash)
    runner = MaixPyRunner(tmp_path / "work")
    result = runner.run(code="import KPU as kpu\nkpu.deinit(kpu.load(0x300000))\nprint(open('/flash/boot.py').read())\n",
                        flash_image=make_kfpkg(tmp_path / "face.kfpkg"), flash_dir=flash)
    assert result.check().lines == ["print('boot')", ""]
    assert snapshot(flash) == before
    assert any("/flash is " in n and "the script's writes" in n for n in result.notices)


def test_fresh_folders_are_private_and_hold_what_the_script_wrote(tmp_path):
    runner = MaixPyRunner(tmp_path / "work")
    result = runner.run(code="open('/sd/out.txt', 'w').write('x')\nopen('/flash/main.py', 'w').write('y')\n",
                        files={"/sd/in.txt": "data"})
    result.check()
    assert (result.sd_dir / "out.txt").read_text() == "x"
    assert (result.flash_dir / "main.py").read_text() == "y"
    assert (result.sd_dir / "in.txt").read_text() == "data"
    assert not any("the script's writes" in n for n in result.notices)  # its own folders: nothing to say
