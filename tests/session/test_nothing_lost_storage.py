"""Nothing lost (issue 10): a run never deletes or overwrites a file that existed before it unless the
user mounted the folder for writing; every device path goes through the board's storage."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import textwrap
from pathlib import Path

from _shared import make_kfpkg, snapshot

from maixemu.runner import RunSpec, run_script


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "maixemu", "run", *args], capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL, cwd=cwd)


def run_here(script: Path, **options) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    options.setdefault("lcd", "none")
    options.setdefault("camera", "synthetic")
    with contextlib.redirect_stdout(out):
        code = run_script(RunSpec(**options), script, stderr=err)
    return code, out.getvalue(), err.getvalue()


def project_with_files(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes\n")
    (folder / "data").mkdir()
    (folder / "data" / "table.csv").write_text("1,2\n")
    return folder


# -------------------------------------------------------------------------------- flash packages
def test_flash_image_with_flash_dir_keeps_every_file_of_the_folder(tmp_path):
    """Today's main deletes the whole --flash-dir folder (the clean-up captured the loop variable)."""
    project = project_with_files(tmp_path)
    script = project / "main.py"
    script.write_text("import KPU as kpu\nkpu.deinit(kpu.load(0x300000))\nprint('loaded')\n")
    flash = tmp_path / "myflash"
    flash.mkdir()
    (flash / "boot.py").write_text("print('boot')\n")
    (flash / "lib").mkdir()
    (flash / "lib" / "util.py").write_text("x = 1\n")
    before, project_before = snapshot(flash), snapshot(project)
    proc = run_cli(str(script), "--lcd", "none", "--flash-image", str(make_kfpkg(tmp_path / "face.kfpkg")),
                   "--flash-dir", str(flash), "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "loaded\n"
    assert snapshot(flash) == before
    assert snapshot(project) == project_before


def test_flash_image_extraction_folder_is_removed(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", None)
    script = tmp_path / "main.py"
    script.write_text("import KPU as kpu\nkpu.deinit(kpu.load(0x300000))\n")
    code, _, err = run_here(script, flash_image=make_kfpkg(tmp_path / "face.kfpkg"), quiet=True)
    assert code == 0, err
    assert [p.name for p in (tmp_path / "tmp").iterdir() if p.name.startswith("maixemu-flash-")] == []


# -------------------------------------------------------------------------------- default mounts
INSTALL_AND_CLEAN = """
import os
with open('/flash/main.py', 'w') as f:    # an ordinary "install to flash" script
    f.write('print(42)\\n')
with open('/flash/main.py') as f:
    print('flash main:', f.read().strip())
with open('/sd/main.py') as f:
    print('sd main is the script:', f.read().startswith('import os'))
print('labels:', open('/sd/data/table.csv').read().strip(), open('/flash/notes.txt').read().strip())
for name in os.listdir('/sd'):              # a script's clean-up of /sd/*.txt
    if name.endswith('.txt'):
        os.remove('/sd/' + name)
os.rename('/sd/data/table.csv', '/sd/data/old.csv')
open('log.txt', 'a').write('run\\n')      # relative to the device cwd (/sd)
print('sd now:', sorted(os.listdir('/sd')), os.listdir('/sd/data'))
print('flash still has notes:', 'notes.txt' in os.listdir('/flash'))
"""


def test_a_run_changes_no_file_of_the_project_and_says_where_its_writes_are(tmp_path):
    project = project_with_files(tmp_path)
    script = project / "main.py"
    script.write_text(INSTALL_AND_CLEAN.lstrip())
    before = snapshot(project)
    proc = run_cli(str(script), "--lcd", "none", "--camera", "synthetic")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "flash main: print(42)",
        "sd main is the script: True",
        "labels: 1,2 my notes",
        "sd now: ['data', 'log.txt', 'main.py'] ['old.csv']",
        "flash still has notes: True",
    ]
    assert snapshot(project) == before
    layer = project / ".maixemu"
    assert (layer / "flash" / "main.py").read_text() == "print(42)\n"
    assert (layer / "sd" / "log.txt").read_text() == "run\n"
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("[maixemu] script finished: ") and "; the script wrote " in last and str(layer) in last
    assert "/flash/main.py" in last and "deleted /sd/data/table.csv, /sd/notes.txt" in last
    again = run_cli(str(script), "--lcd", "none", "--camera", "synthetic")  # the board kept its storage
    assert "include what earlier runs wrote or deleted" in again.stderr
    assert snapshot(project) == before


def test_sd_dir_and_writable_write_for_real_and_say_so_once(tmp_path):
    project = project_with_files(tmp_path)
    script = project / "main.py"
    script.write_text("open('/sd/out.txt', 'w').write('x')\nopen('/flash/f.txt', 'w').write('y')\n")
    card = tmp_path / "card"
    card.mkdir()
    code, _, err = run_here(script, sd_dir=card)
    assert code == 0, err
    assert (card / "out.txt").read_text() == "x"
    assert not (project / "f.txt").exists() and (project / ".maixemu" / "flash" / "f.txt").read_text() == "y"
    assert err.count(f"/sd is {card.resolve()} (--sd/--flash-dir): the script's writes") == 1
    code, _, err = run_here(script, writable=True)
    assert code == 0, err
    assert (project / "out.txt").read_text() == "x" and (project / "f.txt").read_text() == "y"
    assert err.count("(--writable): the script's writes and deletions change the files there") == 1


# -------------------------------------------------------------------------------- every path
def test_uio_io_and_builtins_open_use_the_device_paths(tmp_path, monkeypatch):
    """On main ``uio`` was CPython's ``io``: relative writes landed in the host's working directory."""
    project = tmp_path / "project"
    project.mkdir()
    host_cwd = tmp_path / "elsewhere"
    host_cwd.mkdir()
    monkeypatch.chdir(host_cwd)
    script = project / "main.py"
    script.write_text(textwrap.dedent("""
        import uio, io, builtins
        with uio.open('a.txt', 'w') as f:
            f.write('uio')
        with io.open('b.txt', 'w') as f:
            f.write('io')
        with builtins.open('c.txt', 'w') as f:
            f.write('builtins')
        with io.FileIO('d.bin', 'w') as f:
            f.write(b'fileio')
        try:
            uio.open('/etc/hostname')
        except OSError as e:
            print('outside:', e)
        print(sorted(__import__('os').listdir('/sd')), io.BytesIO(b'x').read())
    """))
    code, out, err = run_here(script, quiet=True)
    assert code == 0, err
    assert out.splitlines() == ["outside: [Errno 2] ENOENT", "['a.txt', 'b.txt', 'c.txt', 'd.bin', 'main.py'] b'x'"]
    assert list(host_cwd.iterdir()) == []
    assert sorted(p.name for p in (project / ".maixemu" / "sd").iterdir()) == ["a.txt", "b.txt", "c.txt", "d.bin"]


def test_remove_and_rename_of_a_link_act_on_the_link(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "model.bin").write_bytes(b"weights")
    (project / "current.bin").symlink_to(project / "model.bin")
    (project / "other.bin").symlink_to("model.bin")
    script = project / "main.py"
    script.write_text("import os\nos.remove('/sd/current.bin')\nos.rename('/sd/other.bin', '/sd/moved.bin')\n"
                      "print(sorted(os.listdir('/sd')), open('/sd/moved.bin', 'rb').read())\n")
    for mounted in ({}, {"writable": True}):
        code, out, err = run_here(script, quiet=True, **mounted)
        assert code == 0, err
        assert out == "['main.py', 'model.bin', 'moved.bin'] b'weights'\n"
        assert (project / "model.bin").read_bytes() == b"weights"
    assert not (project / "current.bin").exists() and (project / "moved.bin").is_symlink()


def test_a_utf8_bom_script_runs(tmp_path):
    script = tmp_path / "main.py"
    script.write_bytes("\ufeffprint('bom ok')\n".encode("utf-8"))
    code, out, err = run_here(script, quiet=True)
    assert (code, out) == (0, "bom ok\n"), err
