"""Malformed flash packages (issue 10): each is one line and exit 2, the same verdict in ``maixemu run
--flash-image`` and ``maixemu info``; a FIFO never blocks; ``--timeout`` holds during set-up."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest

from _shared import split_summary
from maixemu.cli import main as cli_main
from maixemu.runner import RunSpec, run_script

MODEL = Path(__file__).resolve().parents[2] / "maixemu" / "data" / "edge_filters.kmodel"


def package(path: Path, listing: str | bytes, members: list[tuple[str, bytes]]) -> Path:
    with warnings.catch_warnings(), zipfile.ZipFile(path, "w") as archive:
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name we mean to write
        archive.writestr("flash-list.json", listing)
        for name, data in members:
            archive.writestr(name, data)
    return path


def listing(address) -> str:
    return '{"version": "0.1.0", "files": [{"address": %s, "bin": "m.kmodel", "sha256Prefix": false}]}' % address


MALFORMED = {
    "deep JSON": ("[" * 200_000 + "]" * 200_000, [("m.kmodel", MODEL.read_bytes())], "nested too deeply"),
    "5000-digit address": (listing("9" * 5000), [("m.kmodel", MODEL.read_bytes())], "number too long"),
    "5000-digit address string": (listing(json.dumps("0x" + "f" * 5000)), [("m.kmodel", MODEL.read_bytes())],
                                  "is not a flash address"),
    "non-ASCII digits": (listing(json.dumps("\u0663\u0660\u0660\u0660\u0660\u0660\u0660")),
                         [("m.kmodel", MODEL.read_bytes())], "is not a flash address"),
    "duplicate members": (listing(3145728), [("m.kmodel", MODEL.read_bytes()), ("m.kmodel", b"other")],
                          "two members named 'm.kmodel'"),
}


def run_in_process(pkg: Path, tmp_path: Path) -> tuple[int, str]:
    script = tmp_path / "main.py"
    script.write_text("print('never runs')\n")
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()) as out:
        code = run_script(RunSpec(lcd="none", flash_image=pkg, quiet=True), script, stderr=err)
    assert out.getvalue() == ""
    return code, err.getvalue()


def info_in_process(pkg: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = cli_main(["info", str(pkg)])
    captured = capsys.readouterr()
    return code, captured.err


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_package_is_one_line_exit_2_in_run_and_info(tmp_path, capsys, case):
    text, members, words = MALFORMED[case]
    pkg = package(tmp_path / "broken.kfpkg", text, members)
    code, err = run_in_process(pkg, tmp_path)
    assert code == 2 and err.count("\n") == 1 and err.startswith("maixemu: broken.kfpkg: ") and words in err, err
    code, err = info_in_process(pkg, capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("maixemu info: broken.kfpkg: ") and words in err, err


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "maixemu", *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_in_run_and_info_without_blocking(tmp_path):
    fifo = tmp_path / "face.kfpkg"
    os.mkfifo(fifo)
    script = tmp_path / "main.py"
    script.write_text("print('never runs')\n")
    run = _cli("run", str(script), "--lcd", "none", "--flash-image", str(fifo))
    assert (run.returncode, run.stdout, run.stderr) == (2, "", f"maixemu: {fifo} is a FIFO, not a .kfpkg file\n")
    info = _cli("info", str(fifo))
    assert (info.returncode, info.stderr) == (2, f"maixemu info: {fifo} is a FIFO, not a model file\n")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_timeout_is_armed_before_set_up(tmp_path):
    """A --kpu-log FIFO nobody reads blocks the set-up; --timeout must still end the run."""
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    script = tmp_path / "main.py"
    script.write_text("print('never runs')\n")
    proc = _cli("run", str(script), "--lcd", "none", "--kpu-log", str(fifo), "--timeout", "1")
    assert proc.returncode == 0
    assert proc.stdout == ""
    # the closing line every run ends with, counting 0 frames: the script never started
    assert split_summary(proc.stderr) == ("", "--timeout of 1 s reached; run ended")
    assert " 0 frames in " in proc.stderr.splitlines()[-1]
