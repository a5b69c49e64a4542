"""``maixemu kernels``: the report of the compiled kernels' cache, ``--compile`` that fills it in
one go (so a later run finds every kernel it needs), ``--clear`` that removes only its own files,
and the run's one notice while kernels compile in the background."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _shared import shared_path

needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba (the fast extra) is not installed")
#: a hang detector for children that compile (15-40 s of CPU cold), far above any real run
HANG_S = 1800


def _env(cache: Path, **extra: str) -> dict:
    env = dict(os.environ, MAIXEMU_CACHE_DIR=str(cache), MAIXEMU_KERNELS="background")
    env.update(extra)
    for name in ("MAIXEMU_KPU_ENGINE", "MAIXEMU_NO_JIT", "NUMBA_DISABLE_JIT"):
        env.pop(name, None)
    return env


def _maixemu(cache: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "maixemu", "kernels", *args], capture_output=True, text=True,
                          env=_env(cache), timeout=HANG_S)


def test_clear_removes_numba_and_maixemu_files_only(tmp_path):
    """``--clear`` empties the cache folder of numba's index/data files and maixemu's own (the
    worker's log and lock, the record of requests), keeps anything else, and touches nothing
    outside ``$MAIXEMU_CACHE_DIR/numba``."""
    folder = tmp_path / "numba"
    sub = folder / "firmware_0123"
    sub.mkdir(parents=True)
    for name in ("kernels.chw_to_hwc-568.py311.nbi", "kernels.chw_to_hwc-568.py311.1.nbc"):
        (sub / name).write_bytes(b"x" * 100)
    for name in ("compile.log", "compile.lock", "requests.jsonl"):
        (folder / name).write_text("x")
    (folder / "notes.txt").write_text("mine")
    (tmp_path / "beside.nbi").write_text("not in the cache folder")
    proc = _maixemu(tmp_path, "--clear")
    assert proc.returncode == 0, proc.stderr
    assert "removed 5 files" in proc.stdout, proc.stdout
    assert sorted(p.name for p in folder.rglob("*")) == ["notes.txt"]
    assert (folder / "notes.txt").read_text() == "mine" and (tmp_path / "beside.nbi").exists()
    (folder / "notes.txt").unlink()
    assert _maixemu(tmp_path, "--clear").returncode == 0 and not folder.exists()


def test_model_files_without_compile_are_refused(tmp_path):
    proc = _maixemu(tmp_path, "face.kmodel")
    assert proc.returncode == 2 and "--compile" in proc.stderr


@needs_numba
def test_the_report_counts_what_numba_compiled_for_this_cpu(tmp_path):
    """The report reads numba's own index: after one KPU kernel and one image kernel are compiled
    (in a ``wait``-mode child), it says 1 of the KPU kernels and 1 of the image kernels, each with
    one specialisation, out of every kernel the two packages define."""
    code = ("import numpy as np\n"
            "from maixemu.kmodel.kpu import fast\n"
            "k = fast.kernels(); x = np.zeros((2, 3, 4), np.uint8); k.chw_to_hwc(x, np.zeros((3, 4, 2), np.uint8))\n"
            "from maixemu.firmware.image import _qrcode\n"
            "_qrcode._threshold(np.zeros((4, 4), np.int64), np.zeros((4, 4), np.uint8))\n")
    subprocess.run([sys.executable, "-c", code], env=_env(tmp_path, MAIXEMU_KERNELS="wait"), check=True, timeout=HANG_S)
    proc = _maixemu(tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"kernel cache: {tmp_path / 'numba'}" in out
    kpu = next(line for line in out.splitlines() if "KPU kernels:" in line)
    img = next(line for line in out.splitlines() if "image kernels:" in line)
    assert kpu.split(":")[1].strip().startswith("1 of ") and "(1 specialisations)" in kpu, out
    assert img.split(":")[1].strip().startswith("1 of ") and "(1 specialisations)" in img, out
    assert int(kpu.split(" of ")[1].split()[0]) > 20 and int(img.split(" of ")[1].split()[0]) > 20, out
    assert "size on disk: 0.0 MB" not in out


_IMAGE_PIPELINE = r"""
import cv2, numpy as np
from maixemu.firmware import image
aruco = cv2.aruco
m = aruco.generateImageMarker(aruco.getPredefinedDictionary(aruco.DICT_APRILTAG_36h11), 7, 64)
a = np.full((120, 160), 255, np.uint8)
a[28:92, 48:112] = m
img = image.Image._wrap(image.GRAYSCALE, a)
def pipeline():
    return [t.id() for t in img.find_apriltags()] + [len(img.find_blobs([(0, 80)]))]
"""

#: a first run of the image pipeline: it asks for its kernels (recorded by the worker's request)
#: and ends before they are compiled, as a short run on a busy machine does
_FIRST_RUN = _IMAGE_PIPELINE + r"""
import time
from maixemu.kmodel.kpu import kernel_cache, fast, warmup
warmup.start()
while not warmup.active():
    time.sleep(0.01)
pipeline()
deadline = time.monotonic() + 600
while not warmup.idle() and not warmup._parked and time.monotonic() < deadline:
    time.sleep(0.05)
print(len(kernel_cache.recorded(fast.cache_dir())))
"""

#: a later run: the face model and the image pipeline, every warm-up done, and no kernel missed
_LATER_RUN = _IMAGE_PIPELINE + r"""
import json, sys
import numpy as np
from maixemu.kmodel import load_kmodel
from maixemu.kmodel.kpu import warmup
model = load_kmodel(sys.argv[1])
x = np.random.default_rng(0).integers(0, 256, model.inputs[0].shape, dtype=np.uint8)
model.run(x); pipeline()
warmup.start(); warmup.wait()
pipeline(); model.run(x); warmup.wait()
paths = [str(l.details["path"]) for l in model.layers if l.on_kpu]
print(json.dumps({"worker": warmup._worker is not None, "failures": warmup.failures(),
                  "compiled": sum("HWC" in p for p in paths), "kpu": len(paths)}))
"""


@needs_numba
def test_after_compile_a_fresh_run_finds_every_kernel_in_the_cache(tmp_path):
    """From an empty cache: a first image-pipeline run asks for its kernels and ends; then
    ``maixemu kernels --compile FACE`` compiles those and every kernel the face model's layers
    run; a fresh process running the face model and the pipeline in the background mode then
    finds each in the cache (the compile worker is never started: no kernel was NotCached) and
    every KPU layer ends on its compiled path. The report then says nothing is missing."""
    pytest.importorskip("cv2")
    face = shared_path("models", "v3", "face_detect_320x240.kmodel")
    first = subprocess.run([sys.executable, "-c", _FIRST_RUN], env=_env(tmp_path), capture_output=True, text=True,
                           timeout=HANG_S, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert int(first.stdout.strip()) > 0
    proc = _maixemu(tmp_path, "--compile", str(face))
    assert proc.returncode == 0, proc.stderr
    assert "compiled:" in proc.stdout and "s of CPU" in proc.stdout
    assert "0 not compiled" in proc.stdout, proc.stdout
    later = subprocess.run([sys.executable, "-c", _LATER_RUN, str(face)], env=_env(tmp_path), capture_output=True,
                           text=True, timeout=HANG_S, cwd=tmp_path)
    assert later.returncode == 0, later.stderr
    result = json.loads(later.stdout.strip().splitlines()[-1])
    assert result == {"worker": False, "failures": [], "compiled": result["kpu"], "kpu": result["kpu"]}
    assert result["kpu"] > 0


def _run_telling(quiet: bool, times: int) -> tuple[list[str], str]:
    """A run whose engine sends ``times`` kernels to the compile worker (its logger line, as
    ``warmup._Worker.submit`` says it): the notices the run's listeners got, and its stderr."""
    import io

    from maixemu.kmodel.kpu import warmup
    from maixemu.session.lifecycle import execute
    from maixemu.session.board import Plugs
    from maixemu.session.spec import RunSpec

    def script() -> None:
        for _ in range(times):
            warmup._tell_compiling()

    notices: list[str] = []
    err = io.StringIO()
    execute(RunSpec(quiet=quiet, lcd="none", camera="synthetic"), script, plugs=Plugs(stdout=io.StringIO(), stderr=err),
            listeners=[notices.append])
    return notices, err.getvalue()


def test_a_run_that_compiles_says_so_once():
    """Each kernel sent to the compile worker is said on the engine's logger; a run turns that
    into one ``[maixemu]`` notice naming ``maixemu kernels --compile``, however many kernels."""
    notices, err = _run_telling(False, 3)
    said = [n for n in notices if "maixemu kernels --compile" in n]
    assert len(said) == 1 and said[0].startswith("compiling the compiled engine's kernels in the background"), notices
    assert err.count("[maixemu] compiling the compiled engine's kernels") == 1, err
    again, _ = _run_telling(False, 1)  # the next run says it again, once
    assert sum("maixemu kernels --compile" in n for n in again) == 1
    nothing, _ = _run_telling(False, 0)
    assert not any("maixemu kernels --compile" in n for n in nothing)


def test_the_compile_notice_is_not_printed_under_quiet():
    _, err = _run_telling(True, 2)
    assert "maixemu kernels --compile" not in err


@needs_numba
@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child process")
def test_ctrl_c_keeps_what_is_compiled(tmp_path):
    """Ctrl-C during ``--compile`` stops it (exit 130, one line saying what stays), the kernels
    compiled so far stay in the cache, and the report still reads them."""
    import signal
    import time

    face = shared_path("models", "v3", "face_detect_320x240.kmodel")  # (many kernels: the interrupt lands mid-way)
    proc = subprocess.Popen([sys.executable, "-m", "maixemu", "kernels", "--compile", str(face)], env=_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + HANG_S
    while not list((tmp_path / "numba").rglob("*.nbi")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=HANG_S)
    if proc.returncode == 0:
        pytest.skip("the compile ended before the interrupt arrived")
    assert proc.returncode == 130, err
    assert "what was compiled so far stays in the cache" in err and "Traceback" not in err, err
    assert list((tmp_path / "numba").rglob("*.nbi"))
    report = _maixemu(tmp_path)
    assert report.returncode == 0 and "KPU kernels: 0 of" not in report.stdout, report.stdout


@needs_numba
def test_a_request_for_an_earlier_signature_is_not_counted_missing(tmp_path):
    """A run recorded ``planes_of_565(pix, t5, t6, out)``; the kernel now takes ``(pix, out)``: the
    old line names an importable kernel but can never compile, so neither the report nor
    ``--compile`` counts it (the current signature's request still does)."""
    from numba import types

    from maixemu.commands import kernels
    from maixemu.kmodel.kpu import kernel_cache

    u16, u8 = types.Array(types.uint16, 1, "C"), types.Array(types.uint8, 1, "C")
    module = "maixemu.firmware.image._color_kernels"
    kernel_cache.record(tmp_path, module, "planes_of_565", (u16, u8, u8, types.Array(types.uint8, 2, "C")))
    kernel_cache.record(tmp_path, module, "planes_of_565", (u16, types.Array(types.uint8, 2, "C")))
    requests = kernel_cache.recorded(tmp_path)
    assert len(requests) == 2
    from maixemu.kmodel.kpu.compile_worker import resolve

    lengths = [len(r.argtypes) for r in kernels._missing(requests)]
    assert 4 not in lengths
    current = next(r for r in requests if len(r.argtypes) == 2)
    # (missing unless this machine's cache already holds it)
    assert (2 in lengths) != kernel_cache.is_compiled(resolve(module, "planes_of_565"), current.argtypes)


_RECORDED_WHEN_ASKED = r"""
import sys, threading
import numpy as np
from maixemu.kmodel.kpu import fast, kernel_cache, warmup
stuck = threading.Event()
warmup._loader = stuck.wait          # a loader thread that never takes a job (a busy machine, at worst)
import numba  # noqa: F401
warmup.install_guard()
warmup._active = True                # (what the loader says once numba is in)
from maixemu.firmware.image import _color_kernels
from maixemu.firmware.image._jit import NOT_SERVED
out = np.empty((3, 8), np.uint8)
assert _color_kernels.planes_of_565.attempt(np.zeros(8, np.uint16), out) is NOT_SERVED
print(len(warmup._jobs), [r.name for r in kernel_cache.recorded(fast.cache_dir())])
"""


@needs_numba
def test_a_kernel_is_recorded_when_a_run_asks_for_it(tmp_path):
    """A run that ends with jobs still queued (its loader thread had not handed them to the
    compile worker yet) has still recorded every kernel it asked for, so ``--compile`` builds
    them: seen in CI on a busy machine, where a later run then asked the worker for a blob
    kernel the first run had used."""
    proc = subprocess.run([sys.executable, "-c", _RECORDED_WHEN_ASKED], env=_env(tmp_path), capture_output=True,
                          text=True, timeout=HANG_S, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "['planes_of_565']"], proc.stdout
