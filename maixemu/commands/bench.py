"""Benchmark kmodels: ms per run, the ratio to a same-run numpy matmul, load time, each layer's path.

For each model: load time, the median of several ``run()`` calls on a seeded random input, the
effective throughput (the model's MACs / run time) and, measured in the same process, the
GMAC/s of a float64 numpy matmul of comparable size; their ratio says how close the emulator
gets to what this machine's BLAS can do, whatever the machine's load. Then the path every KPU
layer took (``int8+lut HWC``, ``dw+segments HWC``, ``f32+lut CHW``, ... see ``kmodel.kpu.hwc``).

``--compare`` loads each model a second time on the numpy path (``MAIXEMU_KPU_ENGINE=numpy``)
and times both interleaved, so load on the machine hits both alike. ``--litert [FILE]`` times the
float ``.tflite`` reference (default ``../shared/reference/ulffd_landmark.tflite``) with LiteRT
(the ``ai-edge-litert`` package), one thread, in the same process and interleaved with the
models, and prints each model's time as a multiple of LiteRT's. With no MODEL it benches the
shared sample models (``../shared/models`` next to the repository) if present, else the bundled
demo model.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
SHARED_DIR = Path(__file__).resolve().parents[2].parent / "shared"
SHARED_MODELS = SHARED_DIR / "models"
DEFAULT_TFLITE = SHARED_DIR / "reference" / "ulffd_landmark.tflite"


@dataclass
class BenchResult:
    name: str
    load_s: float
    run_ms: float
    macs: int
    matmul_gmacs: float
    engine: str = "auto"
    #: per KPU layer: (layer index, kind, path)
    paths: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def gmacs(self) -> float:
        return self.macs / (self.run_ms * 1e-3) / 1e9 if self.run_ms > 0 else 0.0

    @property
    def ratio(self) -> float:
        return self.gmacs / self.matmul_gmacs if self.matmul_gmacs else 0.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("models", nargs="*", type=Path, help="kmodel files (default: ../shared/models/v3 and v4, else the demo model)")
    parser.add_argument("--runs", type=int, default=15, help="timed runs per model (median reported; default 15)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs first (default 2)")
    parser.add_argument("--compare", action="store_true", help="also time the numpy path, interleaved with the default engine")
    parser.add_argument("--layers", action="store_true", help="list every KPU layer's path (default: a count per path)")
    parser.add_argument("--litert", nargs="?", type=Path, const=DEFAULT_TFLITE, default=None, metavar="TFLITE",
                        help="time a float .tflite with LiteRT, one thread, as the reference (default file: "
                             "../shared/reference/ulffd_landmark.tflite)")


def default_models() -> list[Path]:
    found: list[Path] = []
    for sub in ("v3", "v4"):
        folder = SHARED_MODELS / sub
        if folder.is_dir():
            found += sorted(p for p in folder.glob("*.kmodel") if not p.stem.endswith("_be"))
    return found or [DATA_DIR / "edge_filters.kmodel"]


def random_input(spec, rng: np.random.Generator) -> np.ndarray:
    if np.dtype(spec.dtype) == np.uint8:
        return rng.integers(0, 256, size=spec.shape, dtype=np.uint8)
    return rng.standard_normal(spec.shape).astype(spec.dtype)


def median_time(fn, runs: int, warmup: int) -> float:
    return interleaved_medians([fn], runs, warmup)[0]


def interleaved_medians(fns: list[Callable[[], object]], runs: int, warmup: int) -> list[float]:
    """Median seconds of each function, timed in turn run after run (load hits all alike)."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(max(runs, 1)):
        for fn, out in zip(fns, times):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [float(np.median(t)) for t in times]


def matmul_gmacs(macs: int, runs: int = 7) -> float:
    """GMAC/s of a float64 ``A @ B`` with about the same number of MACs (at least 64³).

    Timed with BLAS's own threading and with one BLAS thread; the better of the two is the
    reference (on a loaded machine multi-threaded BLAS can collapse, which would flatter us).
    """
    from ..kmodel.kpu.blas import blas_threads

    n = max(64, int(round(max(macs, 1) ** (1 / 3))))
    rng = np.random.default_rng(0)
    a = rng.random((n, n))
    b = rng.random((n, n))
    t = median_time(lambda: a @ b, runs, 2)
    with blas_threads(1):
        t = min(t, median_time(lambda: a @ b, runs, 1))
    return n**3 / t / 1e9


@contextlib.contextmanager
def kpu_engine(name: str | None) -> Iterator[None]:
    """Load models on ``name`` (``MAIXEMU_KPU_ENGINE``) inside the block; None keeps the default."""
    if name is None:
        yield
        return
    previous = os.environ.get("MAIXEMU_KPU_ENGINE")
    os.environ["MAIXEMU_KPU_ENGINE"] = name
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("MAIXEMU_KPU_ENGINE", None)
        else:
            os.environ["MAIXEMU_KPU_ENGINE"] = previous


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}" if path.parent.name in ("v3", "v4") else path.stem


def _load(path: Path, engine: str | None):
    from ..kmodel import load_kmodel

    with kpu_engine(engine):
        start = time.perf_counter()
        model = load_kmodel(path)
        return model, time.perf_counter() - start


def layer_paths(model) -> list[tuple[int, str, str]]:
    return [(layer.index, layer.kind, str(layer.details["path"])) for layer in model.layers if layer.on_kpu and "path" in layer.details]


def bench_model(path: Path, runs: int, warmup: int, *, compare: bool = False,
                extra: list[Callable[[], object]] | None = None) -> list[BenchResult]:
    """Time a model (and its numpy-path twin with ``compare``; ``extra`` functions interleaved too).

    Returns one result per engine; ``bench_model.extra_ms`` holds the medians of ``extra``.
    """
    engines: list[str | None] = [None] + (["numpy"] if compare else [])
    loaded = [_load(path, engine) for engine in engines]
    rng = np.random.default_rng(0)
    inputs = [random_input(spec, rng) for spec in loaded[0][0].inputs]
    fns: list[Callable[[], object]] = [lambda m=m: m.run(*inputs) for m, _ in loaded]
    extra = extra or []
    medians = interleaved_medians(fns + extra, runs, warmup)
    bench_model.extra_ms = [m * 1e3 for m in medians[len(fns):]]
    macs = sum(layer.macs for layer in loaded[0][0].layers)
    reference = matmul_gmacs(macs)
    return [BenchResult(_name(path), load_s, median * 1e3, macs, reference, engine or "auto", layer_paths(model))
            for (model, load_s), engine, median in zip(loaded, engines, medians)]


bench_model.extra_ms = []


def format_results(results: list[BenchResult], litert_ms: dict[str, float] | None = None) -> str:
    rows = [("model", "engine", "load s", "ms/run", "GMAC", "GMAC/s", "f64 matmul GMAC/s", "ratio")]
    if litert_ms:
        rows[0] += ("x LiteRT",)
    for r in results:
        row = (r.name, r.engine, f"{r.load_s:.3f}", f"{r.run_ms:.2f}", f"{r.macs / 1e9:.3f}", f"{r.gmacs:.2f}",
               f"{r.matmul_gmacs:.2f}", f"{r.ratio:.2f}")
        if litert_ms:
            row += (f"{r.run_ms / litert_ms[r.name]:.2f}" if r.name in litert_ms else "",)
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in rows)


def format_paths(result: BenchResult, every_layer: bool) -> str:
    if not result.paths:
        return f"{result.name} [{result.engine}]: no KPU layers"
    if every_layer:
        lines = [f"{result.name} [{result.engine}]:"]
        lines += [f"  layer {i:3d}  {kind:12s} {path}" for i, kind, path in result.paths]
        return "\n".join(lines)
    counts = Counter(path for _, _, path in result.paths)
    summary = ", ".join(f"{path} x{n}" for path, n in counts.most_common())
    return f"{result.name} [{result.engine}]: {len(result.paths)} KPU layers: {summary}"


def litert_runner(path: Path) -> Callable[[], object]:
    """One LiteRT invocation of ``path`` on a seeded random input, one thread."""
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError as exc:
        raise RuntimeError(f"--litert needs the ai-edge-litert package ({exc})") from exc
    interpreter = Interpreter(model_path=str(path), num_threads=1)
    interpreter.allocate_tensors()
    rng = np.random.default_rng(0)
    for detail in interpreter.get_input_details():
        dtype = np.dtype(detail["dtype"])
        shape = tuple(int(d) for d in detail["shape"])
        value = rng.integers(0, 256, shape).astype(dtype) if dtype.kind in "iu" else rng.random(shape, dtype=np.float32).astype(dtype)
        interpreter.set_tensor(detail["index"], value)
    return interpreter.invoke


def run(args: argparse.Namespace) -> int:
    from ..kmodel import KmodelError

    paths = list(args.models) or default_models()
    results: list[BenchResult] = []
    litert_ms: dict[str, float] = {}
    extra: list[Callable[[], object]] = []
    status = 0
    if args.litert is not None:
        try:
            extra = [litert_runner(args.litert)]
        except (RuntimeError, ValueError, OSError) as exc:
            print(f"maixemu bench: {exc}", file=sys.stderr)
            return 2
    from ..progress import LOG_EVERY_S, progress_bar

    with progress_bar(len(paths), "bench", "model", log_every=LOG_EVERY_S) as bar:  # rate and time left
        for path in paths:
            bar.set_postfix_str(_name(path), refresh=True)
            try:
                got = bench_model(path, args.runs, args.warmup, compare=args.compare, extra=extra)
            except (OSError, KmodelError) as exc:
                bar.write(f"maixemu bench: {path}: {exc}", file=sys.stderr)
                status = 2
                continue
            finally:
                bar.update(1)
            results += got
            if extra:
                litert_ms[got[0].name] = bench_model.extra_ms[0]
    if results:
        print(format_results(results, litert_ms or None))
        if litert_ms:
            print(f"LiteRT {args.litert.name} (float, 1 thread, interleaved with each model): "
                  + ", ".join(f"{ms:.2f} ms next to {name}" for name, ms in litert_ms.items()))
        print()
        for r in results:
            if r.engine == "auto" or args.layers:
                print(format_paths(r, args.layers))
    return status
