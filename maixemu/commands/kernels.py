"""Report, fill or empty the compiled kernels' cache folder, so a run never compiles in the background.

`maixemu kernels` shows the folder (`~/.cache/maixemu/numba` or `$MAIXEMU_CACHE_DIR/numba`), how
many of maixemu's kernels (the KPU engine's and the image module's) numba has compiled there for
this maixemu version, numba and CPU, and its size. `maixemu kernels --compile [MODEL ...]` compiles
every missing one now, through the same entry as the background compile worker: the warm-ups of
the bundled sample's model and of each MODEL given (every specialisation these layers run), plus
every kernel earlier runs sent to the worker (recorded in the folder). Ctrl-C keeps what is done.
`maixemu kernels --clear` removes numba's cache files and maixemu's own from that folder, nothing else.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
import time
from pathlib import Path
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("models", nargs="*", type=Path, metavar="MODEL",
                        help="with --compile: .kmodel or .kfpkg files whose layers' kernels to compile too")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--compile", action="store_true", help="compile every missing kernel now (Ctrl-C keeps what is done)")
    action.add_argument("--clear", action="store_true", help="empty the cache folder (only maixemu's and numba's files)")


def run(args: argparse.Namespace) -> int:
    from ..kmodel.kpu import fast

    folder = fast.cache_dir()
    if args.models and not args.compile:
        print("maixemu kernels: MODEL files are for --compile (maixemu kernels --compile MODEL ...)", file=sys.stderr)
        return 2
    if args.clear:
        return _clear(folder)
    if not fast.numba_installed():
        print(f"maixemu kernels: numba is not installed, so nothing is compiled (runs use the numpy engine); "
              f"install maixemu[fast]. Cache folder: {folder}", file=sys.stderr)
        return 1 if args.compile else 0
    if args.compile:
        code = _compile(folder, args.models)
        if code:
            return code
    print(_report(folder))
    return 0


# --- the report ----------------------------------------------------------------------------------
def image_kernels() -> dict[str, Any]:
    """Every ``firmware.image._jit.kernel`` by ``module.name``, found by importing the image
    package's modules and asking each for the kernels it defines (no list here to drift)."""
    from ..firmware import image

    found: dict[str, Any] = {}
    for info in pkgutil.iter_modules(image.__path__):
        module = importlib.import_module(f"{image.__name__}.{info.name}")
        for name, obj in vars(module).items():
            if callable(getattr(obj, "dispatcher", None)) and hasattr(obj, "__wrapped__") \
                    and getattr(obj, "__module__", module.__name__) == module.__name__:
                found[f"{module.__name__}.{name}"] = obj
    return found


def _count(dispatchers: dict[str, Any]) -> tuple[int, int, int]:
    """``(compiled kernels, kernels, compiled specialisations)`` for this CPU."""
    from ..kmodel.kpu.kernel_cache import compiled_signatures

    kernels, specs = 0, 0
    for disp in dispatchers.values():
        sigs = compiled_signatures(disp)
        kernels += bool(sigs)
        specs += len(sigs)
    return kernels, len(dispatchers), specs


def _report(folder: Path) -> str:
    import numba

    from ..kmodel.kpu import kernel_cache

    kpu = kernel_cache.kpu_dispatchers()
    img = {name: k.dispatcher() for name, k in image_kernels().items()}
    from llvmlite import binding

    cpu = binding.get_host_cpu_name()
    lines = [f"kernel cache: {folder}", f"  for maixemu {_version()}, numba {numba.__version__}, CPU {cpu}"]
    for title, group in (("KPU kernels", kpu), ("image kernels", img)):
        done, total, specs = _count(group)
        lines.append(f"  {title}: {done} of {total} compiled ({specs} specialisations)")
    wanted = _missing(kernel_cache.recorded(folder))
    recorded = len(kernel_cache.recorded(folder))
    lines.append(f"  asked for by runs: {recorded} specialisations, {len(wanted)} not compiled"
                 + ("  (maixemu kernels --compile builds them)" if wanted else ""))
    lines.append(f"  size on disk: {kernel_cache.size_on_disk(folder) / 1e6:.1f} MB")
    return "\n".join(lines)


def _version() -> str:
    """The installed maixemu's version (the package metadata: commands import no package root)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("maixemu")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree without install
        return "(not installed)"


def _missing(requests: list) -> list:
    """The recorded requests whose kernel is importable and not compiled for this CPU."""
    from ..kmodel.kpu.compile_worker import resolve
    from ..kmodel.kpu.kernel_cache import is_compiled

    out = []
    for req in requests:
        try:
            disp = resolve(req.module, req.name)
        except Exception:
            continue  # a kernel of another maixemu version
        if not _takes(disp, len(req.argtypes)):
            continue  # recorded for an earlier signature of the kernel: no run asks for it now
        if not is_compiled(disp, req.argtypes):
            out.append(req)
    return out


def _takes(dispatcher, count: int) -> bool:
    """Whether the kernel behind ``dispatcher`` takes ``count`` arguments (a request recorded
    before its parameters changed would fail to compile at every ``--compile`` and stay counted
    as missing forever)."""
    import inspect

    fn = getattr(dispatcher, "py_func", None)
    if fn is None:
        return True
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return True
    return len(params) == count


# --- --compile -----------------------------------------------------------------------------------
def _compile(folder: Path, models: list[Path]) -> int:
    """Queue every warm-up (bundled model, MODELs, recorded requests) in the background mode, so
    that each missing kernel goes to the compile worker exactly as in a run, and wait for them."""
    os.environ["MAIXEMU_KERNELS"] = "background"
    if os.environ.get("MAIXEMU_KPU_ENGINE", "").strip().lower() == "numpy":
        print("maixemu kernels: MAIXEMU_KPU_ENGINE=numpy uses no compiled kernels; unset it to compile them", file=sys.stderr)
        return 2
    from ..kmodel.kpu import kernel_cache, warmup
    from ..progress import progress_bar
    from ._model_arg import load_model_arg

    from ..session.board import DEMO_MODEL

    bar = progress_bar(None, "compiling kernels", "warm-up", log_every=30.0)
    try:
        held = []  # (the models stay alive until their warm-ups ran)
        for path in [DEMO_MODEL, *models]:
            model = load_model_arg(path, "kernels")
            if model is None:
                bar.close()
                return 2
            held.append(model)
        for req in _missing(kernel_cache.recorded(folder)):
            warmup.schedule_compile(req.module, req.name, req.argtypes)
        warmup.start()
        while True:
            finished = warmup.wait(timeout=0.25)
            done, queued = warmup.progress()
            bar.total = queued  # (grows while models' layers queue theirs)
            bar.update(done - bar.n)  # (tqdm's own interval decides when a line is printed)
            if finished:
                break
    except KeyboardInterrupt:
        bar.close()
        warmup.stop_worker()  # (numba writes each file whole, then renames: what is there is whole)
        print("maixemu kernels: stopped; what was compiled so far stays in the cache "
              "(maixemu kernels --compile goes on from there)", file=sys.stderr)
        return 130
    bar.close()
    warmup.stop_worker()  # (its CPU time counts once it has exited)
    for why in warmup.failures():
        print(f"maixemu kernels: a kernel could not be compiled (its run uses the numpy form): {why}", file=sys.stderr)
    print(f"compiled: {_cpu_s():.1f} s of CPU in all (this command and its compile worker)")
    del held
    return 0


def _cpu_s() -> float:
    """CPU seconds of this process and its exited children (the compile worker)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows: this process only
        return time.process_time()
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


# --- --clear -------------------------------------------------------------------------------------
def _clear(folder: Path) -> int:
    from ..kmodel.kpu.kernel_cache import clear

    if not folder.exists():
        print(f"kernel cache: {folder} is empty already")
        return 0
    removed, freed = clear(folder)
    left = " (other files in it were left alone)" if folder.exists() else ""
    print(f"kernel cache: removed {removed} files ({freed / 1e6:.1f} MB) from {folder}{left}")
    return 0
