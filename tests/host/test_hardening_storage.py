"""Hardening: a script cannot reach outside the folders mapped to /sd and /flash, whatever path it
tries (``..``, absolute host paths, symlinks out, NUL bytes); it gets the device's ``[Errno 2] ENOENT``."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

from maixemu.runner import RunSpec, run_script

MODEL = Path(__file__).resolve().parents[2] / "maixemu" / "data" / "edge_filters.kmodel"

ATTEMPTS = {
    "open dotdot": 'open("/sd/../../etc/passwd").read()',
    "open relative dotdot": 'open("../../etc/passwd").read()',
    "open host absolute": 'open("/etc/passwd").read()',
    "open outside file": 'open(OUT + "/secret.txt").read()',
    "open bytes path": 'open(b"/sd/../../etc/passwd").read()',
    "open nul": 'open("/sd/a\\x00b").read()',
    "open symlink out": 'open("/sd/link.txt").read()',
    "open through symlinked dir": 'open("/sd/linkdir/secret.txt").read()',
    "write through symlinked dir": 'open("/sd/linkdir/new.txt", "w").write("x")',
    "write dangling symlink out": 'open("/sd/dangling.txt", "w").write("x")',
    "listdir host": 'os.listdir("/etc")',
    "listdir symlinked dir": 'os.listdir("/sd/linkdir")',
    "ilistdir symlinked dir": 'list(os.ilistdir("/sd/linkdir"))',
    "stat dotdot": 'os.stat("/sd/../../etc/passwd")',
    "stat symlink out": 'os.stat("/sd/link.txt")',
    "rename to outside": 'os.rename("/sd/mine.txt", "/sd/../../" + OUT + "/stolen.txt")',
    "rename into symlinked dir": 'os.rename("/sd/mine.txt", "/sd/linkdir/stolen.txt")',
    "rename symlink out": 'os.rename("/sd/link.txt", "/sd/moved.txt")',
    "remove outside": 'os.remove("/sd/../.." + OUT + "/secret.txt")',
    "remove through symlinked dir": 'os.remove("/sd/linkdir/secret.txt")',
    "mkdir through symlinked dir": 'os.mkdir("/sd/linkdir/newdir")',
    "chdir symlinked dir": 'os.chdir("/sd/linkdir")',
    "image load dotdot": 'image.Image("/sd/../../" + OUT + "/pic.bmp")',
    "image load symlink": 'image.Image("/sd/pic.bmp")',
    "image save symlinked dir": 'image.Image(size=(8, 8)).save("/sd/linkdir/x.bmp")',
    "image save host absolute": 'image.Image(size=(8, 8)).save(OUT + "/y.bmp")',
    "image save dotdot": 'image.Image(size=(8, 8)).save("../../" + OUT + "/z.bmp")',
    "flash dotdot": 'open("/flash/../sd/../../etc/passwd").read()',
}

#: image.Image(path) and save(path) name the path they were given, as the firmware does.
IMAGE_PATHS = {
    "image load dotdot": "/sd/../../{out}/pic.bmp",
    "image load symlink": "/sd/pic.bmp",
    "image save symlinked dir": "/sd/linkdir/x.bmp",
    "image save host absolute": "{out}/y.bmp",
    "image save dotdot": "../../{out}/z.bmp",
}

SCRIPT = """
import os, image
OUT = {out!r}
def attempt(label, action):
    try:
        action()
        print(label, "-> reached")
    except OSError as e:
        print(label, "->", type(e).__name__, e)
{calls}
print("listing", os.listdir("/sd"))
print("ilisting", [entry[0] for entry in os.ilistdir("/sd")])
"""


def test_every_escape_gets_enoent_and_nothing_outside_changes(tmp_path):
    sd, out = tmp_path / "sd", tmp_path / "outside"
    sd.mkdir()
    out.mkdir()
    (out / "secret.txt").write_text("secret")
    import cv2
    import numpy as np

    cv2.imwrite(str(out / "pic.bmp"), np.zeros((4, 4, 3), np.uint8))
    (sd / "link.txt").symlink_to(out / "secret.txt")
    (sd / "pic.bmp").symlink_to(out / "pic.bmp")
    (sd / "linkdir").symlink_to(out)
    (sd / "dangling.txt").symlink_to(out / "not_there.txt")
    (sd / "mine.txt").write_text("mine")
    calls = "\n".join(f"attempt({label!r}, lambda: {code})" for label, code in ATTEMPTS.items())
    script = sd / "main.py"
    script.write_text(textwrap.dedent(SCRIPT).format(out=str(out), calls=calls))
    before = sorted(p.name for p in out.iterdir())
    stdout, stderr = io.StringIO(), io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(stdout):
        code = run_script(RunSpec(lcd="none", camera="synthetic", quiet=True), script, stderr=stderr)
    assert code == 0, stderr.getvalue()
    lines = stdout.getvalue().splitlines()
    expected = []
    for label in ATTEMPTS:
        line = f"{label} -> FileNotFoundError [Errno 2] ENOENT"
        if label in IMAGE_PATHS:
            line += f": {IMAGE_PATHS[label].format(out=out)!r}"
        expected.append(line)
    assert lines[: len(ATTEMPTS)] == expected
    # Symlinks leading out are not even listed: a script learns nothing about what lies outside.
    assert "listing ['main.py', 'mine.txt']" in lines
    assert "ilisting ['main.py', 'mine.txt']" in lines
    assert sorted(p.name for p in out.iterdir()) == before
    assert (out / "secret.txt").read_text() == "secret"
    assert (sd / "mine.txt").read_text() == "mine"


def test_kpu_load_outside_the_mounts_is_a_param_error(tmp_path):
    sd, out = tmp_path / "sd", tmp_path / "outside"
    sd.mkdir()
    out.mkdir()
    (out / "m.kmodel").write_bytes(MODEL.read_bytes())
    (sd / "linkdir").symlink_to(out)
    script = sd / "main.py"
    script.write_text(textwrap.dedent(f"""
        import KPU as kpu
        for path in ("/sd/linkdir/m.kmodel", {str(out / 'm.kmodel')!r}, "/sd/../../{out.name}/m.kmodel"):
            try:
                kpu.load(path)
                print("loaded", path)
            except ValueError as e:
                print(str(e).splitlines()[0])
    """))
    stdout, stderr = io.StringIO(), io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(stdout):
        code = run_script(RunSpec(lcd="none", quiet=True), script, stderr=stderr)
    assert code == 0, stderr.getvalue()
    assert stdout.getvalue().splitlines() == [
        "[MAIXPY]kpu: load error:2001, ERR_PARAM: please check param, load address or kmodel file name"
    ] * 3


def test_missing_sd_or_flash_folder_is_one_line_exit_2(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "main.py"
    script.write_text("print('never')\n")
    for option in ("--sd", "--flash-dir"):
        proc = subprocess.run([sys.executable, "-m", "maixemu", "run", str(script), "--lcd", "none", option,
                               str(tmp_path / "nope")], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 2
        assert proc.stderr == f"maixemu: {option} {tmp_path / 'nope'}: no such folder\n"
