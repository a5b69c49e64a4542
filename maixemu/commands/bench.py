"""Benchmark kmodels: ms per run, effective GMAC/s, load time, and the ratio to a numpy matmul.

For each model: load time, the median of several ``run()`` calls on a seeded random input, the
effective throughput (the model's MACs / run time) and, measured in the same process, the
GMAC/s of a float64 numpy matmul of comparable size; their ratio says how close the emulator
gets to what this machine's BLAS can do. With no MODEL it benches the shared sample models
(``../shared/models`` next to the repository) if present, else the bundled demo model.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
SHARED_MODELS = Path(__file__).resolve().parents[2].parent / "shared" / "models"


@dataclass
class BenchResult:
    name: str
    load_s: float
    run_ms: float
    macs: int
    matmul_gmacs: float

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
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(max(runs, 1)):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


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


def bench_model(path: Path, runs: int, warmup: int) -> BenchResult:
    from ..kmodel import load_kmodel

    start = time.perf_counter()
    model = load_kmodel(path)
    load_s = time.perf_counter() - start
    rng = np.random.default_rng(0)
    inputs = [random_input(spec, rng) for spec in model.inputs]
    run_s = median_time(lambda: model.run(*inputs), runs, warmup)
    macs = sum(layer.macs for layer in model.layers)
    name = f"{path.parent.name}/{path.stem}" if path.parent.name in ("v3", "v4") else path.stem
    return BenchResult(name, load_s, run_s * 1e3, macs, matmul_gmacs(macs))


def format_results(results: list[BenchResult]) -> str:
    rows = [("model", "load s", "ms/run", "GMAC", "GMAC/s", "f64 matmul GMAC/s", "ratio")]
    for r in results:
        rows.append((r.name, f"{r.load_s:.3f}", f"{r.run_ms:.2f}", f"{r.macs / 1e9:.3f}", f"{r.gmacs:.2f}",
                     f"{r.matmul_gmacs:.2f}", f"{100 * r.ratio:.0f} %"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in rows)


def run(args: argparse.Namespace) -> int:
    from ..kmodel import KmodelError

    paths = list(args.models) or default_models()
    results = []
    status = 0
    for path in paths:
        try:
            results.append(bench_model(path, args.runs, args.warmup))
        except (OSError, KmodelError) as exc:
            print(f"maixemu bench: {path}: {exc}", file=sys.stderr)
            status = 2
    if results:
        print(format_results(results))
    return status
