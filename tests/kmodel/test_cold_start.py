"""The first outputs never wait for numba (``kmodel.kpu.warmup``, ``MAIXEMU_KERNELS=background``).

The rule: every compiled path has a plain twin with the same bytes (a KPU layer's numpy plan, a
CPU layer's numpy op, an image kernel's Python statements), which serves until the compiled code
is in memory. These tests hold the switch to the golden vectors at every intermediate state (one
loader step at a time, so some layers are compiled and some not), make a compile hang and still
get every answer, and check that a short run never even imports numba. None of them measures a
time: a run that waited for a hanging compile would never end (the subprocess bound is a hang
detector, far above any run).
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from _shared import SHARED_DIR, shared_path

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba (the fast extra) is not installed")

#: how long a child may take before the test calls it hung (a cold compile of a face detector's
#: kernels is 15-40 s of CPU; nothing here waits for one)
HANG_S = 900

FACE = "models/v3/face_detect_320x240.kmodel"
V4_FACE = "models/v4/ulffd_landmark.kmodel"


def _golden(rel_model: str) -> list[dict]:
    entry = next(e for e in json.loads((SHARED_DIR / "golden" / "MANIFEST.json").read_text())["models"] if e["model"] == rel_model)
    return [dict(np.load(SHARED_DIR / "golden" / case["file"])) for case in entry["cases"]]


def _same(outs: list[np.ndarray], case: dict) -> bool:
    return all(out.tobytes() == case[f"output_{i}"].tobytes() for i, out in enumerate(outs))


@pytest.fixture
def background(monkeypatch):
    """The default mode, from a clean queue: nothing started, nothing spent."""
    from maixemu.kmodel.kpu import warmup

    monkeypatch.setenv("MAIXEMU_KERNELS", "background")
    monkeypatch.delenv("MAIXEMU_KPU_ENGINE", raising=False)
    monkeypatch.delenv("MAIXEMU_NO_JIT", raising=False)
    warmup.wait(timeout=HANG_S)  # (what earlier tests queued in the wait mode)
    warmup._reset()
    yield warmup
    warmup._reset()


def _child_env(cache: Path | None = None) -> dict:
    env = dict(os.environ, MAIXEMU_KERNELS="background")
    for name in ("MAIXEMU_KPU_ENGINE", "MAIXEMU_NO_JIT", "NUMBA_DISABLE_JIT"):
        env.pop(name, None)
    if cache is not None:
        env["MAIXEMU_CACHE_DIR"] = str(cache)
    return env


def _run_child(code: str, env: dict, cwd: Path, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter; a child that hangs is killed with what it started."""
    proc = subprocess.Popen([sys.executable, "-c", code, *args], env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=os.name == "posix")
    try:
        out, err = proc.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        if os.name == "posix":
            os.killpg(proc.pid, 9)
        proc.kill()
        proc.communicate()
        pytest.fail(f"the child did not finish in {HANG_S} s: it waited for a compile")
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


# --------------------------------------------------------------------------- the switch itself
@pytest.mark.golden
@pytest.mark.parametrize("rel", [FACE, V4_FACE])
def test_every_state_of_the_switch_gives_the_golden_bytes(background, monkeypatch, rel):
    """The loader is held after each step (one layer's compiled path, one kernel loaded or
    compiled): at each state the model runs every golden case, so runs with any mix of numpy and
    compiled layers are compared with the reference, and in the end every KPU layer is compiled."""
    from maixemu.kmodel import load_kmodel

    warmup = background
    model = load_kmodel(shared_path(*rel.split("/")))
    cases = _golden(rel)
    kpu = [layer for layer in model.layers if layer.on_kpu]

    def compiled_layers() -> int:
        return sum("HWC" in str(layer.details["path"]) for layer in kpu)

    assert compiled_layers() == 0  # loaded on the numpy plans
    for case in cases:
        assert _same(model.run(case["input"]), case)

    steps: queue.Queue = queue.Queue()
    go = threading.Semaphore(0)
    real_run = warmup._run

    def held(job):
        real_run(job)
        steps.put(job)
        go.acquire()

    monkeypatch.setattr(warmup, "_run", held)
    warmup.start()
    seen = []
    while not (warmup.idle() and steps.empty()):
        try:
            steps.get(timeout=1.0)  # (a poll: parked steps wait for the compile worker)
        except queue.Empty:
            continue
        n = compiled_layers()
        seen.append(n)
        for case in cases:
            assert _same(model.run(case["input"]), case), f"with {n} of {len(kpu)} KPU layers compiled"
        go.release()
    assert compiled_layers() == len(kpu)
    assert any(0 < n < len(kpu) for n in seen), seen  # some runs had both kinds of layers
    for case in cases:
        assert _same(model.run(case["input"]), case)


@pytest.mark.golden
@pytest.mark.parametrize("rel", ["models/v3/mnist.kmodel", V4_FACE])
def test_the_plain_forms_scratch_goes_once_the_compiled_paths_serve(background, monkeypatch, rel):
    """The numpy plans' tiles (14 MiB on a face detector) served the first runs; once every
    layer runs compiled they are dropped from the thread that ran them, and the bytes stay golden."""
    from maixemu.kmodel import load_kmodel
    from maixemu.kmodel.kpu import parallel

    warmup = background
    monkeypatch.setattr(warmup, "START_AFTER_S", 1e9)  # (the engine starts when this test says)
    parallel.release_scratch()
    model = load_kmodel(shared_path(*rel.split("/")))
    cases = _golden(rel)

    def plain() -> bool:
        return parallel.plain_scratch_bytes() > 0

    for case in cases:
        assert _same(model.run(case["input"]), case)
    assert plain()  # the plain forms ran here and left their tiles
    warmup.start()
    assert warmup.wait(HANG_S)
    assert all("HWC" in str(layer.details["path"]) for layer in model.layers if layer.on_kpu)
    for case in cases[:1] * parallel.PLAIN_QUIET_RUNS:
        assert _same(model.run(case["input"]), case)
    assert not plain()
    for case in cases:
        assert _same(model.run(case["input"]), case)


@pytest.mark.golden
def test_a_trace_across_the_switch_matches_the_layer_dump(background):
    """Layer by layer: the face detector's maps, traced while the compiled paths come in."""
    from maixemu.kmodel import load_kmodel

    warmup = background
    model = load_kmodel(shared_path(*FACE.split("/")))
    dump = np.load(shared_path("golden", "v3", "face_detect_320x240", "layers_case_face_21.npz"))
    x = np.load(shared_path("golden", "v3", "face_detect_320x240", "case_face_21.npz"))["input"]
    keys = sorted(k for k in dump.files if k.startswith("layer_"))
    warmup.start()
    for _ in range(3):
        traced = list(model.trace(x))
        assert [dump[k].tobytes() for k in keys] == [step.output.tobytes() for step in traced]
    warmup.wait(HANG_S)
    assert [dump[k].tobytes() for k in keys] == [step.output.tobytes() for step in model.trace(x)]


# --------------------------------------------------------------------------- never a wait
_HANG_CHILD = r"""
import json, os, signal, sys, threading
import numpy as np
from maixemu.kmodel.kpu import warmup
asked = threading.Event()
HOW = sys.argv[1]
if HOW == "worker":
    # the real compile worker, stopped as soon as it starts: it never answers
    real_init = warmup._Worker.__init__
    def stopped(self, folder):
        real_init(self, folder)
        os.kill(self.proc.pid, signal.SIGSTOP)
        real_submit = self.submit
        def submit(miss):
            ident = real_submit(miss)
            asked.set()
            return ident
        self.submit = submit
    warmup._Worker.__init__ = stopped
else:
    # no worker: the loader compiles in this process, and that compile hangs holding numba's lock
    def no_worker(self, folder):
        raise OSError("no worker in this test")
    warmup._Worker.__init__ = no_worker
    from numba.core import dispatcher
    def hang(self, args, return_type):
        asked.set()
        threading.Event().wait()
    dispatcher._FunctionCompiler._compile_core = hang
from maixemu.kmodel import load_kmodel
model = load_kmodel(sys.argv[2])
warmup.start()
assert asked.wait(600), "the loader never reached a compile"
cases = [dict(np.load(p)) for p in sys.argv[3:]]
same = [all(o.tobytes() == c[f"output_{i}"].tobytes() for i, o in enumerate(model.run(c["input"]))) for c in cases]
paths = sorted({str(l.details["path"]) for l in model.layers if l.on_kpu})
from maixemu.firmware.image import _jit, _qrcode
g = np.random.default_rng(5).integers(0, 256, (40, 50)).astype(np.int64)
want = _qrcode._threshold.__wrapped__(g, np.zeros(g.shape, np.uint8))
got = [_qrcode._threshold(g, np.zeros(g.shape, np.uint8)).tobytes() == want.tobytes() for _ in range(2)]
attempt = _qrcode._threshold.attempt(g, np.zeros(g.shape, np.uint8)) is _jit.NOT_SERVED
print(json.dumps({"same": same, "paths": paths, "image": got, "compiled_now": _jit.compiled_now(),
                  "attempt_not_served": attempt}))
sys.stdout.flush()
warmup._stop_worker()
os._exit(0)  # (the hung compile thread would keep a normal exit waiting on numba's lock)
"""


@pytest.mark.golden
@pytest.mark.parametrize("how", ["worker", "in-process"])
def test_a_hanging_compile_never_delays_an_answer(tmp_path, how):
    """An empty kernel cache, the compiled engine started, and the compile it needs hung — in
    the worker (stopped with SIGSTOP) or in this process (holding numba's compiler lock): every
    golden case still gets its bytes from the numpy plans, and an image kernel its Python twin."""
    if how == "worker" and not hasattr(__import__("signal"), "SIGSTOP"):
        pytest.skip("SIGSTOP is POSIX")
    model = shared_path(*FACE.split("/"))
    cases = [str(SHARED_DIR / "golden" / c["file"]) for c in next(
        e for e in json.loads((SHARED_DIR / "golden" / "MANIFEST.json").read_text())["models"] if e["model"] == FACE)["cases"]]
    result = _run_child(_HANG_CHILD, _child_env(tmp_path / "empty-cache"), tmp_path, how, str(model), *cases)
    assert result["same"] == [True] * len(cases)
    assert all(p.endswith("CHW") for p in result["paths"]), result["paths"]  # still the numpy plans
    assert result["image"] == [True, True]
    assert result["compiled_now"] is True  # numba is in, the kernels are not: their twins answered
    assert result["attempt_not_served"] is True  # (a caller with a vectorised form is told so at once)


_SHORT_CHILD = r"""
import json, sys
import numpy as np
from maixemu.kmodel import load_kmodel
from maixemu.kmodel.kpu import warmup
from maixemu.firmware.image import _jit, _qrcode
model = load_kmodel(sys.argv[1])
case = dict(np.load(sys.argv[2]))
same = [all(o.tobytes() == case[f"output_{i}"].tobytes() for i, o in enumerate(model.run(case["input"]))) for _ in range(3)]
g = np.random.default_rng(5).integers(0, 256, (40, 50)).astype(np.int64)
image = _qrcode._threshold(g, np.zeros(g.shape, np.uint8)).tobytes() == _qrcode._threshold.__wrapped__(g, np.zeros(g.shape, np.uint8)).tobytes()
print(json.dumps({"same": same, "image": image, "compiled": _jit.compiled_now(), "started": warmup.started(),
                  "numba": "numba" in sys.modules, "onnxruntime": "onnxruntime" in sys.modules}))
"""


@pytest.mark.golden
def test_a_short_run_never_imports_numba(tmp_path):
    """Three face-detector runs and an image kernel call spend far less than ``START_AFTER_S``:
    the compiled engine does not start, so neither numba nor onnxruntime is imported (their
    import alone is most of a warm start's cost and memory), and the answers are the golden ones."""
    case = SHARED_DIR / "golden" / "v3" / "face_detect_320x240" / "case_face_21.npz"
    result = _run_child(_SHORT_CHILD, _child_env(), tmp_path, str(shared_path(*FACE.split("/"))), str(case))
    assert result == {"same": [True] * 3, "image": True, "compiled": False, "started": False, "numba": False,
                      "onnxruntime": False}


# --------------------------------------------------------------------------- when it starts
def test_the_compiled_engine_starts_once_the_plain_forms_spent_start_after(background, monkeypatch):
    warmup = background
    monkeypatch.setattr(warmup, "START_AFTER_S", 0.3)
    ran = threading.Event()
    job = warmup.schedule(ran.set)
    warmup.account(0.1)
    warmup.account(0.1)
    assert not warmup.started() and not ran.is_set() and job.kernels is None
    warmup.account(0.15)
    assert warmup.started()
    assert warmup.wait(HANG_S) and ran.is_set() and job.ready


def test_model_runs_count_only_while_compiled_paths_are_queued(background, monkeypatch):
    """``metered`` adds a run's CPU time while warm-ups wait for the engine, never after it started."""
    warmup = background
    monkeypatch.setattr(warmup, "START_AFTER_S", 1e9)
    with warmup.metered():
        sum(range(10000))
    assert warmup._spent == 0.0  # nothing queued: nothing to gain
    warmup.schedule(lambda: None)
    with warmup.metered():
        sum(range(200000))
    assert warmup._spent > 0.0


def test_the_wait_mode_is_what_the_fast_engine_means(monkeypatch):
    from maixemu.kmodel.kpu import warmup

    monkeypatch.setenv("MAIXEMU_KERNELS", "background")
    monkeypatch.setenv("MAIXEMU_KPU_ENGINE", "fast")
    assert warmup.mode() == "wait"
    monkeypatch.setenv("MAIXEMU_KPU_ENGINE", "auto")
    assert warmup.mode() == "background"
    monkeypatch.setenv("MAIXEMU_KERNELS", "later")
    with pytest.raises(ValueError, match="MAIXEMU_KERNELS='later'; use one of background, wait"):
        warmup.mode()


# --------------------------------------------------------------------------- nothing left over
_NO_MAIN_COMPILE_CHILD = r"""
import json, sys, threading
import numpy as np
from numba.core import dispatcher
main = []
real = dispatcher.Dispatcher.compile
def spy(self, sig):
    if threading.current_thread() is threading.main_thread():
        main.append(self.py_func.__qualname__)
    return real(self, sig)
dispatcher.Dispatcher.compile = spy
from maixemu.kmodel import load_kmodel
from maixemu.kmodel.kpu import fast
model = load_kmodel(sys.argv[1])
spec = model.inputs[0]
rng = np.random.default_rng(0)
x = rng.integers(0, 256, spec.shape, dtype=np.uint8) if spec.dtype == np.uint8 else rng.standard_normal(spec.shape).astype(spec.dtype)
before = model.run(x)
fast.wait_for_warm_up()
after = [model.run(x) for _ in range(2)]
same = all(a.tobytes() == b.tobytes() for outs in after for a, b in zip(outs, before))
paths = [str(l.details["path"]) for l in model.layers if l.on_kpu]
print(json.dumps({"main": main, "same": same, "compiled": sum("HWC" in p for p in paths), "kpu": len(paths),
                  "helpers": fast.loaded_kernels() is not None}))
"""


def _public_models() -> list:
    found = sorted((SHARED_DIR / "models").glob("v[34]/*.kmodel"))
    return [pytest.param(p, id=f"{p.parent.name}/{p.stem}") for p in found] or [
        pytest.param(None, marks=pytest.mark.skip(reason="../shared/models not found"))]


@pytest.mark.parametrize("path", _public_models())
def test_no_kernel_is_loaded_or_compiled_by_a_run_itself(tmp_path, path):
    """In a fresh process, every kernel a model's runs call is brought into memory by a warm-up
    (the loader thread), never by the run: the main thread neither compiles nor loads one, across
    the switch and after it. (A kernel a run calls without a warm-up would make the first frame
    after the switch wait.) Outputs stay the same bytes and every KPU layer ends compiled."""
    result = _run_child(_NO_MAIN_COMPILE_CHILD, _child_env(), tmp_path, str(path))
    assert result["main"] == []
    assert result["same"] and result["compiled"] == result["kpu"] and result["helpers"]


# --------------------------------------------------------------------------- the worker
def test_the_compile_worker_fills_the_cache_folder(tmp_path):
    """Every request gets its answer, in order: a kernel numba cannot compile for the given
    argument types gets ``fail`` with the reason and the next request still works; what it
    compiled (a KPU kernel, an image kernel) is in ``$MAIXEMU_CACHE_DIR/numba``; it exits when
    its input closes."""
    from numba import types

    from maixemu.kmodel.kpu.compile_worker import request_line

    env = _child_env(tmp_path)
    env["MAIXEMU_KERNELS"] = "wait"
    proc = subprocess.Popen([sys.executable, "-m", "maixemu.kmodel.kpu.compile_worker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=env, cwd=tmp_path, text=True)
    try:
        u8 = types.Array(types.uint8, 3, "C")
        proc.stdin.write(request_line(1, "maixemu.kmodel.kpu.kernels", "chw_to_hwc", (types.float32,)))
        proc.stdin.write(request_line(2, "maixemu.kmodel.kpu.kernels", "chw_to_hwc", (u8, u8)))
        proc.stdin.write(request_line(3, "maixemu.firmware.image._qrcode", "_threshold",
                                      (types.Array(types.int64, 2, "C"), types.Array(types.uint8, 2, "C"))))
        proc.stdin.flush()
        answers = [proc.stdout.readline().strip() for _ in range(3)]
    finally:
        proc.stdin.close()
        code = proc.wait(timeout=HANG_S)
    assert answers[0].startswith("fail 1 ") and len(answers[0]) > len("fail 1 "), answers
    assert answers[1:] == ["ok 2", "ok 3"]
    assert code == 0
    cached = {p.name.split("-")[0] for p in (tmp_path / "numba").rglob("*.nbi")}
    assert {"kernels.chw_to_hwc", "_qrcode._threshold"} <= cached, cached


def test_a_dropped_model_is_not_kept_for_its_queued_compiled_paths(background):
    """``del task; gc.collect()`` frees a model whose compiled paths are still queued (the
    firmware's model budget counts on it), and the engine started later skips its layers."""
    import gc
    import weakref

    from maixemu.kmodel import load_kmodel

    warmup = background
    model = load_kmodel(shared_path(*FACE.split("/")))
    convs = [weakref.ref(step.conv) for step in model.steps if step.conv is not None]
    assert convs and warmup.holding()
    del model
    gc.collect()
    assert all(ref() is None for ref in convs)
    warmup.start()
    assert warmup.wait(HANG_S) and not warmup.holding()


_APRILTAG_CHILD = r"""
import json, sys
import cv2
import numpy as np
from maixemu.firmware import image
from maixemu.firmware.image import _jit, _quadkernels
from maixemu.kmodel.kpu import warmup
aruco = cv2.aruco
m = aruco.generateImageMarker(aruco.getPredefinedDictionary(aruco.DICT_APRILTAG_36h11), 7, 64)
a = np.full((120, 160), 255, np.uint8)
a[28:92, 48:112] = m
img = image.Image._wrap(image.GRAYSCALE, a)
def find():
    return [(t.id(), t.corners(), t.rotation(), t.decision_margin()) for t in img.find_apriltags()]
first = find()
served = [_jit.compiled_now()]
while not warmup.started():  # the Python twins' time starts the compiled engine
    assert find() == first
warmup.wait()
while not _quadkernels.threshold.dispatcher().signatures:  # the first call after the compile loads it
    assert find() == first
last = find()
print(json.dumps({"tags": [t[0] for t in first], "same": last == first, "served": served + [_jit.compiled_now()]}))
"""


def test_image_kernels_switch_to_compiled_with_the_same_findings(tmp_path):
    """An image pipeline (AprilTag: threshold, union-find, quad fitting, decoding kernels) in a
    fresh process: its Python twins answer first, their time starts the compiled engine, and
    once its kernels are in memory (loaded or compiled by the worker) the findings are the
    same to the last bit."""
    pytest.importorskip("cv2")
    result = _run_child(_APRILTAG_CHILD, _child_env(), tmp_path)
    assert result == {"tags": [7], "same": True, "served": [False, True]}


_EXIT_CHILD = r"""
import sys, threading, time
import numpy as np
from maixemu.kmodel.kpu import int8, onnx_graph, warmup
b = np.random.default_rng(0).integers(0, 256, (64, 64)).astype(np.uint8)
session = int8._session(onnx_graph.matmul_integer(b, 128, 0), 1)
a = np.random.default_rng(1).integers(0, 256, (4096, 64)).astype(np.uint8)
inside = threading.Event()

def warm_up():  # a layer's warm-up: onnxruntime calls, one after another
    inside.set()
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        session.run(None, {"A": a})
    print("the warm-up ended", flush=True)

warmup.schedule(warm_up, holds_helpers=False)
warmup.start()
assert inside.wait(600), "the loader never ran the warm-up"
print("the script ended", flush=True)
"""


def test_the_exit_waits_for_a_warm_up_inside_onnxruntime(tmp_path):
    """A script that ends (or fails) while the loader thread is inside an onnxruntime call: the
    process exits with the script's code, not SIGABRT. (Python ends a daemon thread that takes
    the GIL back during finalisation with ``pthread_exit``; onnxruntime takes it back in a C++
    destructor, and that unwind calls ``std::terminate``: a CI run died so, "terminate called
    without an active exception", after a script's ValueError.) Without the exit's wait this
    child aborts every time."""
    pytest.importorskip("onnxruntime")
    proc = subprocess.run([sys.executable, "-c", _EXIT_CHILD], env=_child_env(tmp_path / "cache"), cwd=tmp_path,
                          capture_output=True, text=True, timeout=HANG_S, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "terminate called" not in proc.stderr
    assert proc.stdout.splitlines() == ["the script ended", "the warm-up ended"]
