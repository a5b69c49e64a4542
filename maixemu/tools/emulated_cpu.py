"""Which product every KPU layer takes on another x86 CPU class, and whether those products are
exact there: the models loaded under ``qemu-x86_64 -cpu NAME`` user-mode emulation.

``python -m maixemu.tools.emulated_cpu --cpu Haswell MODEL ...`` starts itself under
``qemu-x86_64`` (Debian's ``qemu-user``; QEMU ≥ 7.2 emulates AVX2) with that CPU model, so that
onnxruntime's MLAS picks the kernels of an AVX2-only CPU (no AVX-512, no VNNI: the u8s8 kernel that
saturates 16-bit pair sums), and prints for each model the probe's verdict, the count of layers
per product, why faster ones were refused, and how many sums of each layer's int8 product differ
from the exact sums on 257 random rows (one all-255). The compiled kernels are not needed (the
layers are prepared, not run), so this takes a minute, not the hours numba would compile under
emulation. Timings under emulation mean nothing; this checks the proof and the choice only.
``--proof-only`` leaves the once-per-process probe out, so that each layer's own proof rows must
find the saturation by themselves (they should refuse u8s8 on every layer, with the count).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np

_CHILD = "MAIXEMU_EMULATED_CPU_CHILD"


def _convs(model) -> list:
    from ..kmodel.kpu import KpuConv

    if model.version == 3:
        return [s.conv for s in model.steps if s.conv is not None]
    found = []
    for node in model.nodes:
        # the run's own closure and those of the functions it calls (a fused head's run calls
        # the layer body it shares with ``Node.redirect``)
        cells, seen = list(node.run.__closure__ or ()), {id(node.run)}
        while cells:
            value = cells.pop().cell_contents
            if isinstance(value, KpuConv):
                found.append(value)
                break
            if callable(value) and getattr(value, "__closure__", None) and id(value) not in seen:
                seen.add(id(value))
                cells.extend(value.__closure__)
    return found


def _compiled_plan(conv):
    """The layer's compiled-path plan (``HwcPath``), prepared here when the model loaded on the
    numpy plans (the default: compiled paths are prepared in the background once the kernels
    load, which this tool never waits for); its kernel warm-up is not queued, as nothing runs."""
    from ..kmodel.kpu import hwc
    from ..kmodel.kpu.fast import compiled_available

    if conv._hwc is not None or not conv.fast or not compiled_available():
        return conv._hwc
    keep = hwc.HwcPath._schedule_warm_up
    hwc.HwcPath._schedule_warm_up = lambda self: self  # type: ignore[method-assign]
    try:
        return hwc.HwcPath.prepare(conv, conv._bounds(), lut_max_entries=conv._lut_max_entries)
    finally:
        hwc.HwcPath._schedule_warm_up = keep  # type: ignore[method-assign]


def report(paths: list[Path], proof_only: bool = False) -> list[str]:
    """The lines described in the module docstring, for this process's CPU."""
    from ..kmodel import load_kmodel
    from ..kmodel.kpu import int8

    if proof_only:
        int8._SATURATES.update(dict.fromkeys(int8.INT8_KINDS, False))

    lines = ["probe: " + "; ".join(f"{k} {'saturates 16-bit pair sums' if int8.pair_saturation(k) else 'exact'}" for k in int8.INT8_KINDS)]
    rng = np.random.default_rng(1)
    for path in paths:
        model = load_kmodel(path)
        kinds: Counter[str] = Counter()
        reasons: Counter[str] = Counter()
        wrong = 0
        counts: list[int] = []
        for conv in _convs(model):
            h = _compiled_plan(conv)
            if h is None:
                kinds[conv.path] += 1
                continue
            kinds[h.products] += 1
            reasons.update(r.split(";")[0].split(",")[0] for r in h.refused)
            counts.extend(int(r.split(", ")[1].split(" of ")[0]) for r in h.refused if "proof sums" in r)
            if h.gemm is not None and not h.products.endswith(("-rgbx", "-patch")):  # (their own GEMM layouts)
                ic, taps = conv.in_shape[0], conv.k * conv.k
                w = conv.weights.reshape(-1, ic, taps).transpose(2, 1, 0).reshape(taps * ic, -1)
                a = rng.integers(0, 256, (257, h.gemm.k), dtype=np.uint8)
                a[0] = 255
                want = int8.exact_sums(a, 128, np.ascontiguousarray(w, dtype=np.uint8), -(conv.regs.arg_x >> conv.regs.shr_x))
                wrong += int((h.gemm(a) != want).sum())
        lines.append(f"{path.name}: " + ", ".join(f"{k} x{n}" for k, n in kinds.most_common())
                     + f"; int8 sums differing from the exact ones on random rows: {wrong}")
        if reasons:
            lines.append("  refused: " + "; ".join(f"{r} (x{n})" for r, n in reasons.most_common()))
        if counts:
            lines.append(f"  wrong proof sums per refused layer: {min(counts)}..{max(counts)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maixemu.tools.emulated_cpu", description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--cpu", default="Haswell", help="qemu CPU model (default Haswell: AVX2 + FMA, no AVX-512)")
    parser.add_argument("--proof-only", action="store_true", help="no probe: each layer's proof rows alone decide")
    args = parser.parse_args(argv)
    if os.environ.get(_CHILD):
        print("\n".join(report(args.models, args.proof_only)))
        return 0
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        print("qemu-x86_64 not found: install Debian's qemu-user (QEMU >= 7.2 for AVX2)", file=sys.stderr)
        return 2
    env = dict(os.environ, **{_CHILD: "1"})
    cmd = [qemu, "-cpu", args.cpu, sys.executable, "-m", "maixemu.tools.emulated_cpu", *map(str, args.models)]
    if args.proof_only:
        cmd.append("--proof-only")
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    sys.stdout.write(done.stdout)
    sys.stderr.write("".join(line + "\n" for line in done.stderr.splitlines() if "TCG doesn't support" not in line))
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
