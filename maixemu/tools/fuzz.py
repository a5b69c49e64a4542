"""Fuzz the kmodel loaders: mutated models must load and run, or fail with a KmodelError.

    python -m maixemu.tools.fuzz --cases 10000 [--seed S] [--models DIR] [--jobs N] [--save DIR]
    python -m maixemu.tools.fuzz --seed S --replay I        # re-run one case, print its traceback

Why: people download kmodels from forums; a truncated or corrupt file must never crash the
emulator with an IndexError, hang, or allocate gigabytes. Every case mutates one model of the
corpus (``../shared/models``: V3, byte-swapped V3, V4, V5, .kfpkg; see ``fuzz_mutate``), then calls
``load_kmodel`` and, if that succeeds, one ``run()`` on a deterministic input of the right shape.

Allowed outcomes: success, or a ``KmodelError`` subclass whose ``field`` or ``offset`` is set (so
its message names what is wrong). Everything else is a FINDING: another exception type, a
KmodelError naming neither field nor offset, a case slower than ``--time-limit`` (2 s), or a
``tracemalloc`` peak above ``--mem-limit`` (256 MB) during load+run. Files that are not kmodels
at all (images, a .tflite, random bytes, zips, ...) are checked first: each must be rejected with
a message saying what the file looks like.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import traceback
import tracemalloc
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from maixemu.kmodel import KmodelError, load_kmodel
from maixemu.progress import LOG_EVERY_S, progress_bar

from .fuzz_mutate import Case, Seedling, load_corpus, make_case, non_kmodels

SHARED_DIR = Path(__file__).resolve().parents[2].parent / "shared"
DEFAULT_MODELS = SHARED_DIR / "models"
TIME_LIMIT_S = 2.0
MEM_LIMIT_BYTES = 256 * 1024 * 1024
#: A case still running after this long is abandoned (SIGALRM) and reported as a hang.
HANG_S = 30.0
OK = "loaded+ran"


@dataclass
class Result:
    index: int
    model: str
    mutation: str
    outcome: str  # OK, a KmodelError class name, or "FINDING <what>"
    message: str
    seconds: float
    peak_bytes: int
    trace: str = ""

    @property
    def finding(self) -> bool:
        return self.outcome.startswith("FINDING")


class _Hang(BaseException):
    """Raised by SIGALRM inside a case that runs far past the time limit."""


def _alarm(signum, frame):  # pragma: no cover - only on a hang
    raise _Hang()


def deterministic_inputs(model, seed: int) -> list[np.ndarray]:
    """One array per input spec: uint8 pixels or float32 values from a seeded generator."""
    rng = np.random.default_rng(seed)
    xs = []
    for spec in model.inputs:
        if spec.nbytes > MEM_LIMIT_BYTES:
            raise MemoryError(f"input spec {spec.shape} {spec.dtype} would take {spec.nbytes} bytes")
        if np.dtype(spec.dtype) == np.uint8:
            xs.append(rng.integers(0, 256, size=spec.shape, dtype=np.uint8))
        else:
            xs.append(rng.standard_normal(spec.shape).astype(spec.dtype))
    return xs


def run_bytes(data: bytes, seed: int, *, time_limit: float = TIME_LIMIT_S, mem_limit: int = MEM_LIMIT_BYTES,
              hang_s: float = HANG_S) -> tuple[str, str, float, int, str]:
    """Load and run one file; (outcome, message, CPU seconds, peak bytes, traceback if a finding)."""
    use_alarm = hang_s > 0 and hasattr(signal, "setitimer") and _in_main_thread()
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, hang_s)
    peak = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    outcome, message, tb = OK, "", ""
    # numpy's RuntimeWarnings (1/0 for a zero scale, inf - inf) are the device's silent IEEE
    # results, not failures; keep them out of the report
    quiet = warnings.catch_warnings()
    quiet.__enter__()
    warnings.simplefilter("ignore", RuntimeWarning)
    try:
        tracemalloc.start()
        try:
            model = load_kmodel(data)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        xs = deterministic_inputs(model, seed)
        tracemalloc.start()
        try:
            model.run(*xs)
        finally:
            peak = max(peak, tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        message = "; ".join(n for n in getattr(model, "notes", []) if "kfpkg" in n or "swapped" in n)
    except KmodelError as exc:
        message = str(exc)
        if exc.field is None and exc.offset is None:
            outcome, tb = f"FINDING {type(exc).__name__} naming no field/offset", traceback.format_exc()
        else:
            outcome = type(exc).__name__
    except _Hang:
        outcome, message, tb = f"FINDING hang (> {hang_s:g} s)", "abandoned", traceback.format_exc()
    except Exception as exc:  # noqa: BLE001 - the point is to catch everything else
        outcome, message, tb = f"FINDING {type(exc).__name__}", str(exc)[:500], traceback.format_exc()
    finally:
        quiet.__exit__(None, None, None)
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        if tracemalloc.is_tracing():
            tracemalloc.stop()
    wall = time.perf_counter() - t0
    # the limit applies to CPU time: on a shared 2-core machine wall time also measures the
    # neighbours; a case that sleeps or blocks would still hit the wall-clock hang guard
    seconds = time.process_time() - c0
    if not outcome.startswith("FINDING"):
        if seconds > time_limit:
            outcome, tb = (f"FINDING slow (> {time_limit:g} s)",
                           f"took {seconds:.2f} s CPU ({wall:.2f} s wall); outcome would be {outcome}: {message}")
        elif peak > mem_limit:
            outcome, tb = f"FINDING memory (> {mem_limit >> 20} MB)", f"peak {peak >> 20} MB; outcome would be {outcome}: {message}"
    return outcome, message, seconds, peak, tb


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


# ---------------------------------------------------------------------------------------------
# campaign
# ---------------------------------------------------------------------------------------------

_corpus: list[Seedling] = []


def _init_worker(models_dir: str, warm: bool) -> None:
    """Load the corpus and run every original model once, so first-call costs (imports, BLAS
    start-up) are not charged to the first mutated case."""
    global _corpus
    _corpus = load_corpus(Path(models_dir))
    if warm:
        for s in _corpus:
            run_bytes(s.data, 0, time_limit=1e9, mem_limit=1 << 62, hang_s=0)


def run_case(case: Case, seed: int, **limits) -> Result:
    outcome, message, seconds, peak, tb = run_bytes(case.data, seed * 1_000_003 + case.index, **limits)
    return Result(case.index, case.model, case.mutation, outcome, message, seconds, peak, tb)


def _run_chunk(args: tuple[int, list[int], dict]) -> list[Result]:
    seed, indices, limits = args
    return [run_case(make_case(_corpus, seed, i), seed, **limits) for i in indices]


def campaign(models_dir: Path, cases: int, seed: int, *, jobs: int = 1, start: int = 0, limits: dict | None = None,
             progress=None) -> list[Result]:
    """Run cases ``start .. start+cases-1``; in-process when ``jobs`` is 1."""
    limits = limits or {}
    indices = list(range(start, start + cases))
    if jobs <= 1:
        if not _corpus or getattr(campaign, "_dir", None) != str(models_dir):
            _init_worker(str(models_dir), warm=True)
            campaign._dir = str(models_dir)  # type: ignore[attr-defined]
        results = []
        for i in indices:
            results.append(run_case(make_case(_corpus, seed, i), seed, **limits))
            if progress:
                progress(results)
        return results
    chunk = 50
    chunks = [(seed, indices[k : k + chunk], limits) for k in range(0, len(indices), chunk)]
    results = []
    with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(str(models_dir), True)) as pool:
        for part in pool.map(_run_chunk, chunks):
            results.extend(part)
            if progress:
                progress(results)
    return results


#: Limits of a fuzz run inside the test suite: outcomes and memory only. Time limits belong to the
#: long campaign and the benchmarks; a unit test on a busy 2-core machine must not time itself.
SUITE_LIMITS = {"time_limit": float("inf"), "hang_s": 0.0}


def check_non_kmodels(models_dir: Path, **limits) -> list[Result]:
    """Each non-model file must be rejected with a KmodelError (field/offset set)."""
    corpus = load_corpus(models_dir) if models_dir.is_dir() else []
    out = []
    for k, (label, data) in enumerate(non_kmodels(models_dir.parent, corpus)):
        outcome, message, seconds, peak, tb = run_bytes(data, k, **limits)
        out.append(Result(-1 - k, label, "as is", outcome, message, seconds, peak, tb))
    return out


def counts(results: list[Result]) -> Counter:
    return Counter(r.outcome for r in results)


def format_counts(c: Counter) -> str:
    order = [OK, "KmodelFormatError", "KmodelVersionError", "KmodelUnsupportedError", "KmodelRuntimeError"]
    lines = [f"  {k:<24} {c.get(k, 0)}" for k in order]
    lines += [f"  {k:<24} {v}" for k, v in sorted(c.items()) if k not in order]
    findings = sum(v for k, v in c.items() if k.startswith("FINDING"))
    lines.append(f"  {'FINDINGS total':<24} {findings}")
    return "\n".join(lines)


def describe(r: Result, seed: int) -> str:
    how = f"python -m maixemu.tools.fuzz --seed {seed} --replay {r.index}" if r.index >= 0 else "non-kmodel sample"
    return (f"[{r.outcome}] case {r.index} model {r.model}\n  mutation: {r.mutation}\n  seed: {seed}  reproduce: {how}\n"
            f"  {r.seconds:.2f} s, peak {r.peak_bytes / 1e6:.1f} MB: {r.message}\n"
            + "".join("    " + line + "\n" for line in r.trace.strip().splitlines()[-6:]))


def save_findings(findings: list[Result], seed: int, models_dir: Path, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    corpus = load_corpus(models_dir)
    for r in findings:
        stem = folder / f"seed{seed}_case{r.index:06d}"
        if r.index >= 0:
            stem.with_suffix(".kmodel").write_bytes(make_case(corpus, seed, r.index).data)
        stem.with_suffix(".json").write_text(json.dumps({**asdict(r), "seed": seed}, indent=1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m maixemu.tools.fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0, help="first case index")
    ap.add_argument("--models", type=Path, default=DEFAULT_MODELS)
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--save", type=Path, help="write each finding (mutated file + description) here")
    ap.add_argument("--replay", type=int, help="run case I only and print its outcome and traceback")
    ap.add_argument("--time-limit", type=float, default=TIME_LIMIT_S)
    ap.add_argument("--mem-limit-mb", type=int, default=MEM_LIMIT_BYTES >> 20)
    ap.add_argument("--no-non-kmodels", action="store_true", help="skip the non-kmodel file checks")
    args = ap.parse_args(argv)
    if not args.models.is_dir():
        print(f"no models folder at {args.models}", file=sys.stderr)
        return 2
    limits = {"time_limit": args.time_limit, "mem_limit": args.mem_limit_mb << 20}
    if args.replay is not None:
        _init_worker(str(args.models), warm=True)
        case = make_case(_corpus, args.seed, args.replay)
        r = run_case(case, args.seed, **limits)
        print(describe(r, args.seed))
        if r.trace:
            print(r.trace)
        return 1 if r.finding else 0
    t0 = time.time()
    non = [] if args.no_non_kmodels else check_non_kmodels(args.models)
    if non:
        print("non-kmodel files:")
        for r in non:
            print(f"  {r.model:<52} {r.outcome}: {r.message}")
    bar = progress_bar(args.cases, "fuzz", "case", log_every=LOG_EVERY_S)

    findings_so_far = [0]

    def progress(results: list[Result]) -> None:
        new = results[int(bar.n) :]
        findings_so_far[0] += sum(r.finding for r in new)
        bar.set_postfix(findings=findings_so_far[0], refresh=False)
        bar.update(len(new))

    with bar:
        results = campaign(args.models, args.cases, args.seed, jobs=args.jobs, start=args.start, limits=limits,
                           progress=progress)
    wall = time.time() - t0
    per_model = Counter(r.model for r in results)
    print(f"\n{len(results)} cases over {len(per_model)} models, seed {args.seed}, {wall:.0f} s wall, jobs {args.jobs}")
    slowest = max(results, key=lambda r: r.seconds, default=None)
    biggest = max(results, key=lambda r: r.peak_bytes, default=None)
    if slowest and biggest:
        print(f"slowest case {slowest.index} {slowest.seconds:.2f} s; largest peak case {biggest.index} "
              f"{biggest.peak_bytes / 1e6:.0f} MB")
    print("outcomes:")
    print(format_counts(counts(results)))
    findings = [r for r in results + non if r.finding]
    for r in findings:
        print(describe(r, args.seed))
    if findings and args.save:
        save_findings(findings, args.seed, args.models, args.save)
        print(f"findings written to {args.save}")
    return 1 if findings else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
