"""Device-like limits (issue 10): the firmware's MemoryError text, /flash's SPIFFS capacity (statvfs, and
SPIFFS_write's EIO past it: issue 24), and no host path in any error message a script can see."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from test_nothing_lost_storage import run_here

MODEL = Path(__file__).resolve().parents[2] / "maixemu" / "data" / "edge_filters.kmodel"


def test_memory_errors_carry_the_firmwares_text(tmp_path):
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent("""
        from Maix import utils
        for n in (10**9, -1):
            try:
                utils.flash_read(0, n)
            except MemoryError as e:
                print(e)
        print(len(utils.flash_read(0, 1024)))
    """))
    code, out, err = run_here(script, quiet=True)
    assert code == 0, err
    assert out.splitlines() == ["memory allocation failed, allocating 1000000000 bytes",
                                "memory allocation failed, allocating 4294967295 bytes", "1024"]


def test_flash_has_the_spiffs_capacity_statvfs_reports(tmp_path):
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent("""
        import os
        print(os.statvfs('/flash'))
        written = 0
        try:
            with open('/flash/blob.bin', 'wb') as f:
                for _ in range(60):
                    written += f.write(b'\\xff' * 65536)
        except OSError as e:
            print('full:', e, written // 65536)
        print(os.statvfs('/flash')[3], os.stat('/flash/blob.bin')[6])
        os.remove('/flash/blob.bin')
        print(os.statvfs('/flash')[3])
    """))
    code, out, err = run_here(script, quiet=True)
    assert code == 0, err
    assert out.splitlines() == ["(131072, 131072, 21, 21, 21, 0, 0, 0, 0, 128)", "full: [Errno 5] EIO 42",
                                f"0 {42 * 65536}", "21"]


NAMES_NO_HOST_PATH = """
import os, image, KPU as kpu
errors = []
def attempt(action):
    try:
        action()
    except Exception as e:
        errors.append(str(e))
attempt(lambda: open('/sd/missing.txt'))
attempt(lambda: open('/sd/sub/new.txt', 'w'))
attempt(lambda: os.listdir('/sd/nothing'))
attempt(lambda: os.remove('/sd/nothing.txt'))
attempt(lambda: os.rename('/sd/nothing.txt', '/sd/b.txt'))
attempt(lambda: image.Image('/sd/notes.jpg'))
attempt(lambda: image.Image('/sd/missing.jpg'))
attempt(lambda: image.Image(size=(8, 8)).save('/sd/sub/x.jpg'))
attempt(lambda: kpu.load('/sd/missing.kmodel'))
attempt(lambda: kpu.load('/sd/notes.kmodel'))
attempt(lambda: kpu.load('/sd/dir.kmodel'))
attempt(lambda: kpu.load(0x500000))
print(len(errors))
for e in errors:
    print(repr(e))
"""


def test_no_host_path_in_device_error_messages(tmp_path):
    project = tmp_path / "some_user" / "project"
    project.mkdir(parents=True)
    (project / "notes.jpg").write_text("not a picture")
    (project / "notes.kmodel").write_text("not a model")
    (project / "dir.kmodel").mkdir()
    shutil.copy(MODEL, project / "m.kmodel")
    script = project / "main.py"
    script.write_text(NAMES_NO_HOST_PATH.lstrip())
    code, out, err = run_here(script, quiet=True)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "12"
    leaked = [line for line in lines[1:] if "some_user" in line or str(tmp_path) in line]
    assert leaked == []
