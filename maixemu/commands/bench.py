"""Benchmark kmodels: process CPU and wall time per run, the ratio to a same-run float64 matmul, memory, each layer's path.

For each model: load time, the median of many ``run()`` calls on a seeded random input, the
effective throughput (the model's MACs / CPU time) and the GMAC/s of single-threaded float64
numpy matmuls, timed *interleaved* with the model (run, matmul, run, matmul…) so that load on a
shared machine hits both alike; their ratio says how close the emulator gets to what this
machine's BLAS does, whatever the machine's load. Two yardsticks (``_bench_yardstick``): one
square matmul of about the model's MACs (at least 64³: fair to big models only), and one matmul
per layer with MACs, of that layer's own shape (the same MACs, calls and outputs: fair to small
models too); ``ratio own`` is the model's GMAC/s over the own-shape matmuls', ``ratio sq`` over the
square matmul's (both printed: the square one is the stricter for big models, meaningless for a
model of a few hundred MACs). Times are the CPU time of the
whole process (``time.process_time``: every thread, so BLAS or onnxruntime threads spinning
count) beside wall time; ratios use CPU time. Then the model's working memory (the resident
memory a fresh load and three runs add, ``x file`` its multiple of the file's size, ``x K210`` its
multiple of what the board itself holds for the model: the file and main-memory scratch that
``kpu.load`` keeps in general RAM, and the KPU RAM its maps use) and the path
every layer took (``u8s8+linear HWC``, ``u8u8-patch+linear HWC``, ``dw+linear HWC``, ``f32+lut CHW``,
V4's quantized CPU ops ``u8s8`` / ``dw`` / ``int64`` … see ``kmodel.kpu.products``), with why a
faster product was refused on this CPU and the layers below 1 GMAC/s. The first lines name the
machine: CPU flags, whether onnxruntime's u8s8 kernel saturates here, the BLAS and its threads.

``--layers`` lists every layer with its CPU time and GMAC/s. ``--compare`` loads each model a
second time on the numpy path (``MAIXEMU_KPU_ENGINE=numpy``) and times both interleaved.
``--litert [FILE]`` times the float ``.tflite`` reference (default
``../shared/reference/ulffd_landmark.tflite``) with LiteRT (``ai-edge-litert``), one thread,
interleaved with the models, and prints each model's time as a multiple of LiteRT's. ``--fresh``
also measures each model's first output in new Python processes (``import`` + ``load_kmodel`` +
the first ``run()``): cold, with an empty kernel cache, then warm, with the cache that left —
process CPU time, wall time, peak resident memory. With no MODEL it benches the shared sample
models (``../shared/models`` next to the repository) if present, else the bundled demo model;
``--all`` adds every distinct kmodel of the shared CanMV examples.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from ._bench_measure import FirstOutput, cold_and_warm, working_memory
from ._bench_yardstick import layer_seconds, own_shapes_runner, square_runner

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
SHARED_DIR = Path(__file__).resolve().parents[2].parent / "shared"
SHARED_MODELS = SHARED_DIR / "models"
CANMV_EXAMPLES = SHARED_DIR / "scripts" / "canmv_examples"
DEFAULT_TFLITE = SHARED_DIR / "reference" / "ulffd_landmark.tflite"


@dataclass
class Timing:
    """Medians of one timed function: CPU time of the whole process and wall time (seconds)."""

    cpu: float
    wall: float


@dataclass
class LayerTiming:
    """One layer's median CPU time in a run, with what ran it."""

    index: int
    kind: str
    path: str
    macs: int
    cpu: float
    refused: list[str] = field(default_factory=list)
    #: median seconds of a float64 matmul of this layer's own shape, timed the same way (0: none)
    matmul_cpu: float = 0.0

    @property
    def gmacs(self) -> float:
        return self.macs / self.cpu / 1e9 if self.cpu > 0 and self.macs else 0.0

    @property
    def matmul_gmacs(self) -> float:
        return self.macs / self.matmul_cpu / 1e9 if self.matmul_cpu > 0 and self.macs else 0.0


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
    wall_ms: float = 0.0
    #: cold and warm first output of a fresh process, with ``--fresh``
    fresh: tuple[FirstOutput, FirstOutput] | None = None
    #: every layer's CPU time and path
    layers: list[LayerTiming] = field(default_factory=list)
    #: resident bytes a load and three runs add (None where it cannot be measured)
    memory: int | None = None
    file_bytes: int = 0
    #: what the K210 holds for the model (``kpu.load``'s file + main-memory scratch, the KPU RAM it
    #: uses): the yardstick of ``memory`` that does not grow with a detector's maps
    k210_bytes: int = 0
    #: CPU ms medians of the ``extra`` functions timed next to the model (LiteRT)
    extra_ms: list[float] = field(default_factory=list)
    #: GMAC/s of the own-shape yardstick (a float64 matmul per layer, ``_bench_yardstick``)
    own_gmacs: float = 0.0

    @property
    def gmacs(self) -> float:
        return self.macs / (self.run_ms * 1e-3) / 1e9 if self.run_ms > 0 else 0.0

    @property
    def square_ratio(self) -> float:
        """The model's GMAC/s over the square matmul's."""
        return self.gmacs / self.matmul_gmacs if self.matmul_gmacs else 0.0

    @property
    def own_ratio(self) -> float:
        """The model's GMAC/s over the own-shape matmuls' (one per layer, its shape)."""
        return self.gmacs / self.own_gmacs if self.own_gmacs else 0.0

    @property
    def ratio(self) -> float:
        """The stricter of the two ratios where both are meaningful (the square matmul has at
        least the model's MACs), else the own-shape one: a 70-MAC model is not measured against
        one call of 262 144 MACs."""
        if self.macs >= SQUARE_MIN_MACS and self.matmul_gmacs:
            return min(self.square_ratio, self.own_ratio) if self.own_gmacs else self.square_ratio
        return self.own_ratio

    @property
    def slow_layers(self) -> list[LayerTiming]:
        """Layers with MACs that ran below 1 GMAC/s."""
        return [t for t in self.layers if t.macs and t.gmacs < 1.0]


#: the square yardstick is 64³ at least: below that it is a bigger product than the model
SQUARE_MIN_MACS = 64**3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("models", nargs="*", type=Path, help="kmodel files (default: ../shared/models/v3 and v4, else the demo model)")
    parser.add_argument("--runs", type=int, default=15, help="timed runs per model (median reported; default 15)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs first (default 2)")
    parser.add_argument("--compare", action="store_true", help="also time the numpy path, interleaved with the default engine")
    parser.add_argument("--layers", action="store_true", help="list every KPU layer's path (default: a count per path)")
    parser.add_argument("--all", action="store_true", help="with no MODEL: also every distinct kmodel of ../shared's CanMV examples")
    parser.add_argument("--fresh", action="store_true", help="also time each model's first output in new Python processes, "
                        "with an empty kernel cache (cold) and then warm: CPU and wall time, peak memory")
    parser.add_argument("--litert", nargs="?", type=Path, const=DEFAULT_TFLITE, default=None, metavar="TFLITE",
                        help="time a float .tflite with LiteRT, one thread, as the reference (default file: "
                             "../shared/reference/ulffd_landmark.tflite)")


def default_models(include_examples: bool = False) -> list[Path]:
    found: list[Path] = []
    for sub in ("v3", "v4"):
        folder = SHARED_MODELS / sub
        if folder.is_dir():
            found += sorted(p for p in folder.glob("*.kmodel") if not p.stem.endswith("_be"))
    if include_examples and CANMV_EXAMPLES.is_dir():
        found += sorted(CANMV_EXAMPLES.rglob("*.kmodel"))
    return _distinct(found) or [DATA_DIR / "edge_filters.kmodel"]


def _distinct(paths: list[Path]) -> list[Path]:
    """``paths`` without files whose bytes an earlier one already has (the examples share models)."""
    seen: set[str] = set()
    out: list[Path] = []
    for p in paths:
        digest = hashlib.sha1(p.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            out.append(p)
    return out


def random_input(spec, rng: np.random.Generator) -> np.ndarray:
    if np.dtype(spec.dtype) == np.uint8:
        return rng.integers(0, 256, size=spec.shape, dtype=np.uint8)
    return rng.standard_normal(spec.shape).astype(spec.dtype)


def median_time(fn, runs: int, warmup: int) -> float:
    """Median process CPU seconds of ``fn``."""
    return interleaved_medians([fn], runs, warmup)[0].cpu


def interleaved_medians(fns: list[Callable[[], object]], runs: int, warmup: int) -> list[Timing]:
    """Median process CPU and wall seconds of each function, timed in turn run after run."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    cpu: list[list[float]] = [[] for _ in fns]
    wall: list[list[float]] = [[] for _ in fns]
    for _ in range(max(runs, 1)):
        for fn, c, w in zip(fns, cpu, wall):
            t0, w0 = time.process_time(), time.perf_counter()
            fn()
            w1, t1 = time.perf_counter(), time.process_time()
            c.append(t1 - t0)
            w.append(w1 - w0)
    return [Timing(float(np.median(c)), float(np.median(w))) for c, w in zip(cpu, wall)]


def matmul_runner(macs: int) -> tuple[Callable[[], object], int]:
    """A float64 ``A @ B`` with about the same number of MACs (at least 64³) on one BLAS thread,
    and its MAC count: the square yardstick timed next to each model (``_bench_yardstick``)."""
    return square_runner(macs)


def matmul_gmacs(macs: int, runs: int = 7) -> float:
    """GMAC/s (CPU time) of the single-threaded yardstick matmul on its own."""
    fn, n3 = matmul_runner(macs)
    return n3 / median_time(fn, runs, 2) / 1e9


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
    if path.parent.name in ("v3", "v4"):
        return f"{path.parent.name}/{path.stem}"
    if CANMV_EXAMPLES in path.parents:
        return f"canmv/{path.stem}"
    return path.stem


def _load(path: Path, engine: str | None):
    from ..kmodel import load_kmodel

    with kpu_engine(engine):
        start = time.perf_counter()
        model = load_kmodel(path)
        return model, time.perf_counter() - start


def layer_paths(model) -> list[tuple[int, str, str]]:
    return [(layer.index, layer.kind, str(layer.details["path"])) for layer in model.layers if layer.on_kpu and "path" in layer.details]


def layer_timings(model, inputs: list, runs: int = 5) -> list[LayerTiming]:
    """Every layer's median CPU time over ``runs`` runs (``Model.layer_times``), with its path
    (KPU layers and V4's quantized CPU ops name theirs; other CPU layers show their kind) and,
    for layers with MACs, the time of a float64 matmul of its own shape timed the same way."""
    samples: dict[int, list[float]] = {}
    for _ in range(max(runs, 1)):
        for index, seconds in model.layer_times(*inputs):
            samples.setdefault(index, []).append(seconds)
    yardsticks = layer_seconds(model.layers, max(runs, 1))
    out = []
    for layer in model.layers:
        if layer.index in samples:
            path = str(layer.details.get("path", "cpu"))
            out.append(LayerTiming(layer.index, layer.kind, path, int(layer.macs), float(np.median(samples[layer.index])),
                                   list(layer.details.get("refused", ())), yardsticks.get(layer.index, 0.0)))
    return out


def bench_model(path: Path, runs: int, warmup: int, *, compare: bool = False,
                extra: list[Callable[[], object]] | None = None, fresh: bool = False) -> list[BenchResult]:
    """Time a model (and its numpy-path twin with ``compare``; ``extra`` functions interleaved too).

    Returns one result per engine; the first one's ``extra_ms`` holds the CPU medians of ``extra``.
    """
    from ..kmodel.kpu import fast

    first = cold_and_warm(path) if fresh else None
    engines: list[str | None] = [None] + (["numpy"] if compare else [])
    loaded = [_load(path, engine) for engine in engines]
    fast.wait_for_warm_up()  # time the kernels, not their background loading
    rng = np.random.default_rng(0)
    inputs = [random_input(spec, rng) for spec in loaded[0][0].inputs]
    fns: list[Callable[[], object]] = [_runner(model, inputs) for model, _ in loaded]
    macs = sum(layer.macs for layer in loaded[0][0].layers)
    yardstick, yard_macs = matmul_runner(macs)
    own, own_macs = own_shapes_runner(loaded[0][0].layers)
    extra = extra or []
    medians = interleaved_medians(fns + [yardstick, own] + extra, runs, warmup)
    reference = yard_macs / medians[len(fns)].cpu / 1e9
    own_cpu = medians[len(fns) + 1].cpu
    own_gmacs = own_macs / own_cpu / 1e9 if own_cpu > 0 and own_macs else 0.0
    results = []
    for (model, load_s), engine, t in zip(loaded, engines, medians):
        result = BenchResult(_name(path), load_s, t.cpu * 1e3, macs, reference, engine or "auto", layer_paths(model), t.wall * 1e3,
                             first if engine is None else None, layer_timings(model, inputs), file_bytes=path.stat().st_size,
                             own_gmacs=own_gmacs, k210_bytes=k210_bytes(model))
        results.append(result)
    results[0].extra_ms = [m.cpu * 1e3 for m in medians[len(fns) + 2:]]
    # every reference to the timed models goes first (the loop's ``model`` too): what they hold
    # and share — activation tables found in a cache — must not be counted out of the measured load
    del loaded, fns, model
    results[0].memory = working_memory(path, inputs)
    return results


def k210_bytes(model) -> int:
    """Bytes the board holds for ``model``: ``kpu.load``'s share of general RAM (the file and the
    model's main-memory scratch) plus the KPU RAM its maps take (``maixemu info``'s numbers)."""
    from ..kmodel.inspect import fit_report

    report = fit_report(model)
    return report.load_bytes + report.kpu_ram_bytes


def _runner(model, inputs: list) -> Callable[[], object]:
    return lambda: model.run(*inputs)


def _table(rows: list[tuple[str, ...]], left: int = 2) -> str:
    """Columns padded to their widest cell: the first ``left`` to the left, numbers to the right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
                     for row in rows)


def _mib(n: int | None) -> str:
    """MiB with one decimal, two below 1 MiB (a small model's numbers)."""
    if n is None:
        return ""
    return f"{n / (1 << 20):.1f}" if n >= 1 << 20 else f"{n / (1 << 20):.2f}"


def format_results(results: list[BenchResult], litert_ms: dict[str, float] | None = None) -> str:
    rows: list[tuple[str, ...]] = [("model", "engine", "load s", "CPU ms/run", "wall ms", "GMAC", "GMAC/s", "f64 matmul GMAC/s",
                                     "own shapes", "ratio own", "ratio sq", "memory MiB", "x file", "K210 MiB", "x K210")]
    if litert_ms:
        rows[0] += ("x LiteRT",)
    for r in results:
        times_file = f"{r.memory / r.file_bytes:.1f}" if r.memory is not None and r.file_bytes else ""
        times_k210 = f"{r.memory / r.k210_bytes:.1f}" if r.memory is not None and r.k210_bytes else ""
        row: tuple[str, ...] = (r.name, r.engine, f"{r.load_s:.3f}", f"{r.run_ms:.2f}", f"{r.wall_ms:.2f}", f"{r.macs / 1e9:.3f}", f"{r.gmacs:.2f}",
               f"{r.matmul_gmacs:.2f}", f"{r.own_gmacs:.2f}", f"{r.own_ratio:.2f}", f"{r.square_ratio:.2f}", _mib(r.memory), times_file,
               _mib(r.k210_bytes) if r.k210_bytes else "", times_k210)
        if litert_ms:
            row += (f"{r.run_ms / litert_ms[r.name]:.2f}" if r.name in litert_ms else "",)
        rows.append(row)
    text = _table(rows)
    fresh = [r for r in results if r.fresh]
    if fresh:
        rows = [("first output, fresh process", "cold CPU s", "wall s", "peak RSS MiB", "all kernels CPU s", "warm CPU s", "wall s",
                 "peak RSS MiB")]
        for r in fresh:
            assert r.fresh is not None
            cold, warm = r.fresh
            rows.append((r.name, f"{cold.cpu:.2f}", f"{cold.wall:.2f}", _mib(cold.rss), f"{cold.ready_cpu:.2f}", f"{warm.cpu:.2f}",
                         f"{warm.wall:.2f}", _mib(warm.rss)))
        text += "\n\n" + _table(rows, left=1)
    return text


def _gist(why: str) -> str:
    """A refusal without its counts: ``u8s8: not exact on this CPU, 23 of 640 proof sums`` →
    ``u8s8: not exact on this CPU``."""
    return why.split(";")[0].split(",")[0]


def format_paths(result: BenchResult, every_layer: bool) -> str:
    """The layers' paths: a count per path (or every layer with its CPU time and GMAC/s), why
    faster products were refused, and the layers below 1 GMAC/s."""
    head = f"{result.name} [{result.engine}]"
    if not result.layers:
        return f"{head}: no layers"
    if every_layer:
        lines = [f"{head}:"]
        for t in result.layers:
            speed = (f"{t.gmacs:7.1f} GMAC/s" if t.gmacs >= 1 else f"{t.gmacs:7.2f} GMAC/s") if t.macs else " " * 14
            yard = f"  (f64 matmul of its shape {t.matmul_gmacs:.2f})" if t.macs and t.matmul_cpu > 0 else ""
            why = f"  refused: {'; '.join(t.refused)}" if t.refused else ""
            lines.append(f"  layer {t.index:3d}  {t.kind:18s} {t.path:24s} {t.cpu * 1e3:8.3f} ms {speed}{yard}{why}")
    else:
        counts = Counter(t.path for t in result.layers if t.path != "cpu")
        summary = ", ".join(f"{path} x{n}" for path, n in counts.most_common()) or "none"
        lines = [f"{head}: {len(result.paths)} KPU layers; paths: {summary}"]
        reasons = Counter(_gist(why) for t in result.layers for why in t.refused)
        if reasons:
            lines.append("  refused: " + "; ".join(f"{why} (x{n})" for why, n in reasons.most_common()))
    slow = result.slow_layers
    if slow:
        lines.append("  below 1 GMAC/s: " + ", ".join(f"layer {t.index} {t.kind} {t.gmacs:.2f}"
                                                   + (f" (its f64 matmul {t.matmul_gmacs:.2f})" if t.matmul_cpu > 0 else "")
                                                   for t in slow))
    return "\n".join(lines)


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

    paths = list(args.models) or default_models(include_examples=args.all)
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
                got = bench_model(path, args.runs, args.warmup, compare=args.compare, extra=extra, fresh=args.fresh)
            except (OSError, KmodelError, subprocess.SubprocessError) as exc:
                bar.write(f"maixemu bench: {path}: {exc}", file=sys.stderr)
                status = 2
                continue
            finally:
                bar.update(1)
            results += got
            if extra:
                litert_ms[got[0].name] = got[0].extra_ms[0]
    if results:
        from ..kmodel.kpu.machine import describe

        print("\n".join(describe()))
        print()
        print(format_results(results, litert_ms or None))
        if litert_ms:
            print(f"LiteRT {args.litert.name} (float, 1 thread, CPU ms, interleaved with each model): "
                  + ", ".join(f"{ms:.2f} next to {name}" for name, ms in litert_ms.items()))
        print()
        for r in results:
            if r.engine == "auto" or args.layers:
                print(format_paths(r, args.layers))
    return status
