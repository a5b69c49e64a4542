"""``eval --layers``: each kmodel layer against the float tensor it computes, to find where accuracy goes.

**Mapping.** nncase keeps a float model's operators but not their names: a V4 kmodel compiled from a
TFLite file keeps their order and shapes (in NCHW), a V3 one maps each layer to TFLite ops by shape
and order, and both fuse (conv + pool, conv + leaky ReLU), split (a stride-2 depthwise conv becomes a
stride-1 one and a pooled 1x1 conv) and insert layers (quantize, upload, transpose, padding). So a
layer is matched by its *values*: on the first images of the dataset (the probes), every float
tensor with the layer's number of elements, in the same or the channels-last arrangement, is a
candidate, and its Pearson correlation with the layer's output is the score. Matches are taken best
first, each float tensor at most once, compute layers before the layers that only move or convert
values (upload, quantize, dequantize, transpose, padding), equal scores to the closer position in
the two models. A layer whose best candidate correlates less than :data:`MATCH_MIN` stays unmatched
and says so (a layer the float model has no tensor for, e.g. the stride-1 half of a split conv).

**Dequantisation.** A uint8 layer's scale and zero point are not in the file for KPU layers (nncase
folds them into the next layer's registers), so each is fitted once on the probes, least squares
over the codes 1..254: ``real ≈ a·q + b``. Every number below uses that fixed map; float layers are
compared as they are.

**Numbers per layer** (summed over the dataset in sample order, each sum by :mod:`.sums`, so any
executor gives the same bits):
cosine, SQNR = 10·log10(Σf² / Σ(f − k)²) in dB, RMSE (and over ``a``: in quantisation steps), the
value ranges of the float tensor and of the dequantised layer, and ``saturated``: the share of
values the layer clipped — code 0 or 255 where the float value lies beyond it by more than half a
step or twice the fit's RMSE, whichever is larger (the uint8 range, or the activation's clamp where it
made the range). ``rmse_steps`` near 0.29 (a uniform rounding's 1/√12) is a layer's own rounding; far
above it, the error came from earlier layers or from a calibration that does not fit the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .sums import dot, square_sum

#: Layers that only move, convert or re-lay-out values another layer computed (matched last).
CONVERSIONS = frozenset({
    "K210_UPLOAD", "K210_ADD_PADDING", "K210_REMOVE_PADDING", "DEQUANTIZE", "CHANNELWISE_DEQUANTIZE", "QUANTIZE",
    "REQUANTIZE", "TENSORFLOW_FLATTEN", "QUANTIZED_TENSORFLOW_FLATTEN",
    "kpu_upload", "dequantize", "quantize", "transpose", "memory_copy",
})

#: The lowest probe correlation that counts as "this float tensor is what the layer computes".
MATCH_MIN = 0.6

#: Images whose layers decide the mapping and the dequantisation fits.
PROBE_IMAGES = 2

#: Fields of one layer's per-image sums, in the order records store them.
SUM_FIELDS = ("n", "ff", "kk", "fk", "ee", "saturated", "fmin", "fmax", "kmin", "kmax")


@dataclass(frozen=True)
class LayerMatch:
    """One kmodel layer and the float tensor it computes (hashable: it is part of the WorkSpec)."""

    index: int
    kind: str
    shape: tuple[int, ...]
    tensor_key: str
    tensor_name: str
    tensor_op: str
    #: "same" (the float tensor has the layer's arrangement) or "channels_last" (HWC → CHW)
    arrangement: str
    scale: float  # a of real ≈ a·q + b (1 for a float layer)
    offset: float  # b
    quantised: bool
    score: float
    #: how far beyond code 0 / 255 a float value must lie to count as clipped (see ``layer_sums``)
    tolerance: float = 0.0


@dataclass(frozen=True)
class Unmatched:
    index: int
    kind: str
    shape: tuple[int, ...]
    reason: str


def arrange(values: np.ndarray, shape: tuple[int, ...], arrangement: str) -> np.ndarray:
    """A float tensor laid out as the kmodel layer's ``shape`` (flat float64)."""
    if arrangement == "channels_last":
        squeezed = [s for s in values.shape if s != 1]
        values = np.moveaxis(values.reshape(squeezed), -1, 0)
    return np.asarray(values, dtype=np.float64).reshape(-1)


def arrangements(layer_shape: tuple[int, ...], tensor_shape: tuple[int, ...]) -> list[str]:
    """How a float tensor of ``tensor_shape`` can hold a layer's output of ``layer_shape``."""
    if int(np.prod(layer_shape)) != int(np.prod(tensor_shape)):
        return []
    k = [s for s in layer_shape if s != 1]
    f = [s for s in tensor_shape if s != 1]
    found = []
    if k == f:
        found.append("same")
    if len(k) >= 2 and f == k[1:] + k[:1]:
        found.append("channels_last")
    return found


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    x = x - x.mean()
    y = y - y.mean()
    den = math.sqrt(square_sum(x) * square_sum(y))
    return dot(x, y) / den if den > 0 else 0.0


def _fit(q: np.ndarray, f: np.ndarray) -> tuple[float, float, float] | None:
    """Least-squares ``f ≈ a·q + b`` over the unclipped codes (all codes if too few are unclipped),
    and the clipping tolerance: one step, or twice the fit's RMSE where the layer is noisier."""
    inside = (q > 0) & (q < 255)
    if int(inside.sum()) >= max(16, q.size // 100):
        q, f = q[inside], f[inside]
    var = float(np.var(q))
    if var == 0.0:
        return None
    a = float(np.mean((q - q.mean()) * (f - f.mean()))) / var
    if a == 0.0:
        return None
    b = float(f.mean() - a * q.mean())
    rmse = float(np.sqrt(np.mean((f - (a * q + b)) ** 2)))
    return a, b, max(abs(a), 2.0 * rmse)


def match_layers(layers, tapped, probes: list[tuple[list[np.ndarray], dict[str, np.ndarray]]]
                 ) -> tuple[list[LayerMatch], list[Unmatched]]:
    """Match kmodel ``layers`` (``LayerInfo``) to float ``tapped`` tensors on the probe runs.

    ``probes`` holds, per probe image, the kmodel's per-layer outputs (one array per layer, as
    ``Model.trace`` yields them) and the float model's tapped tensors by key.
    """
    candidates = []
    reasons: dict[int, str] = {}
    positions_k = max(1, len(layers) - 1)
    positions_f = max(1, len(tapped) - 1)
    for layer in layers:
        shape = tuple(int(s) for s in layer.output_shapes[0]) if layer.output_shapes else ()
        k_all = np.concatenate([np.asarray(p[0][layer.index], dtype=np.float64).reshape(-1) for p in probes])
        quantised = np.dtype(probes[0][0][layer.index].dtype) == np.uint8
        best: float | None = None
        for t in tapped:
            for arrangement in arrangements(shape, t.shape):
                f_all = np.concatenate([arrange(p[1][t.key], shape, arrangement) for p in probes])
                score = _pearson(k_all, f_all)
                best = score if best is None else max(best, score)
                if score < MATCH_MIN:
                    continue
                if quantised:
                    fit = _fit(k_all, f_all)
                    if fit is None:
                        continue
                    a, b, tolerance = fit
                else:
                    a, b, tolerance = 1.0, 0.0, 0.0
                distance = abs(layer.index / positions_k - t.position / positions_f)
                rank = (layer.kind in CONVERSIONS, -round(score, 6), distance, layer.index, t.position)
                candidates.append((rank, LayerMatch(layer.index, layer.kind, shape, t.key, t.name, t.op, arrangement,
                                                    a, b, bool(quantised), round(score, 6), tolerance)))
        if best is None:
            reasons[layer.index] = f"the float model has no tensor of {int(np.prod(shape or (1,)))} values in this arrangement"
        elif best < MATCH_MIN:
            reasons[layer.index] = f"no float tensor of this shape agrees (best correlation {best:.2f} < {MATCH_MIN})"
    candidates.sort(key=lambda c: c[0])
    taken_layers: set[int] = set()
    taken_tensors: set[str] = set()
    chosen = []
    for _, match in candidates:
        if match.index in taken_layers or match.tensor_key in taken_tensors:
            continue
        taken_layers.add(match.index)
        taken_tensors.add(match.tensor_key)
        chosen.append(match)
    unmatched = []
    for layer in layers:
        if layer.index in taken_layers:
            continue
        shape = tuple(int(s) for s in layer.output_shapes[0]) if layer.output_shapes else ()
        reason = reasons.get(layer.index)
        if reason is None:
            reason = ("moves or converts values another layer computed" if layer.kind in CONVERSIONS
                      else "its candidate tensors are the better match of other layers")
        unmatched.append(Unmatched(layer.index, layer.kind, shape, reason))
    return sorted(chosen, key=lambda m: m.index), unmatched


def layer_sums(match: LayerMatch, output: np.ndarray, tensor: np.ndarray) -> list[float]:
    """One image's sums for one matched layer (fields :data:`SUM_FIELDS`), all float64."""
    q = np.asarray(output, dtype=np.float64).reshape(-1)
    f = arrange(tensor, match.shape, match.arrangement)
    k = match.scale * q + match.offset if match.quantised else q
    e = f - k
    saturated = 0
    if match.quantised:
        margin = match.tolerance
        low_code, high_code = (0.0, 255.0) if match.scale > 0 else (255.0, 0.0)
        low, high = match.scale * low_code + match.offset, match.scale * high_code + match.offset
        saturated = int(np.count_nonzero((q == low_code) & (f < low - margin)) + np.count_nonzero((q == high_code) & (f > high + margin)))
    return [float(q.size), square_sum(f), square_sum(k), dot(f, k), square_sum(e), float(saturated),
            float(f.min()), float(f.max()), float(k.min()), float(k.max())]


def sqnr_db(signal: float, noise: float) -> float | None:
    """10·log10(signal / noise); None when it has no value (no noise: exact; no signal: all zero)."""
    if noise <= 0.0 or signal <= 0.0:
        return None
    return 10.0 * math.log10(signal / noise)


def total_sums(rows: list[list[float]]) -> list[float]:
    """Per-image sums of one layer added up in the order given (minima and maxima kept)."""
    total = [float(v) for v in rows[0]]
    for sums in rows[1:]:
        for i in range(6):
            total[i] += sums[i]
        total[6], total[8] = min(total[6], sums[6]), min(total[8], sums[8])
        total[7], total[9] = max(total[7], sums[7]), max(total[9], sums[9])
    return total


def cosine_of(ff: float, kk: float, fk: float) -> float:
    if ff == 0.0 and kk == 0.0:
        return 1.0
    if ff == 0.0 or kk == 0.0:
        return 0.0
    return max(-1.0, min(1.0, fk / math.sqrt(ff * kk)))


def summarise_layers(matches: tuple[LayerMatch, ...], records: list[dict], worst: int) -> dict:
    """The ``layers`` part of results.json: per-layer numbers in model order, the jump, worst first."""
    compared = [r for r in records if r.get("layers")]
    entries = []
    for position, match in enumerate(matches):
        rows = [r["layers"][position] for r in compared]
        n, ff, kk, fk, ee, sat, fmin, fmax, kmin, kmax = total_sums(rows) if rows else [0.0] * len(SUM_FIELDS)
        rmse = math.sqrt(ee / n) if n else None
        entries.append({
            "index": match.index, "kind": match.kind, "shape": list(match.shape),
            "float_tensor": match.tensor_name, "float_op": match.tensor_op, "arrangement": match.arrangement,
            "match_correlation": match.score,
            "dequantisation": {"scale": match.scale, "zero_point": -match.offset / match.scale} if match.quantised else None,
            "cosine": cosine_of(ff, kk, fk) if n else None,
            "sqnr_db": sqnr_db(ff, ee) if n else None,
            "rmse": rmse,
            "rmse_steps": rmse / abs(match.scale) if match.quantised and rmse is not None else None,
            "saturated": sat / n if n and match.quantised else (0.0 if n else None),
            "float_range": [fmin, fmax] if n else None,
            "kmodel_range": [kmin, kmax] if n else None,
        })
    summary: dict = {
        "compared_images": len(compared),
        "matched": len(entries),
        "jump": error_jump(entries),
        "worst_layers": [e["index"] for e in sorted((e for e in entries if e["sqnr_db"] is not None),
                                                    key=lambda e: (e["sqnr_db"], e["index"]))[:5]],
        "worst_samples": worst_samples(matches, compared, worst),
    }
    return {"layers": entries, "layer_summary": summary}


#: A uniform rounding's RMSE in quantisation steps (1/√12): a uint8 layer's own rounding error.
ROUNDING_STEPS = 1.0 / math.sqrt(12.0)


def error_jump(entries: list[dict]) -> dict | None:
    """The matched layer whose SQNR falls most below what came before it (model order).

    Before the first matched layer comes the input, which both models get as the same bytes: that
    layer is measured against its own rounding floor (its SQNR if its only error were rounding to its
    codes), so an error that is there from the first layer on (an input normalisation or range the
    model was not compiled for) is found too. Later layers are measured against the previous one.
    """
    best = None
    previous = None
    for e in entries:
        if e["sqnr_db"] is None:
            continue
        before, after = None, None
        if previous is not None:
            before, after = previous["sqnr_db"], previous["index"]
        elif e.get("rmse_steps"):
            before = e["sqnr_db"] + 20.0 * math.log10(e["rmse_steps"] / ROUNDING_STEPS)
        if before is not None:
            drop = before - e["sqnr_db"]
            if best is None or drop > best["drop_db"]:
                best = {"index": e["index"], "kind": e["kind"], "after": after, "sqnr_before_db": before,
                        "sqnr_db": e["sqnr_db"], "drop_db": drop}
        previous = e
    return best if best is not None and best["drop_db"] > 0 else None


def worst_samples(matches: tuple[LayerMatch, ...], records: list[dict], count: int) -> list[dict]:
    """Images with the lowest mean per-layer SQNR, each with its own worst layer."""
    scored = []
    for r in records:
        per = []
        for position, match in enumerate(matches):
            n, ff, kk, fk, ee = r["layers"][position][:5]
            value = sqnr_db(ff, ee)
            if value is not None:
                per.append((value, match.index))
        if per:
            mean = float(np.mean([v for v, _ in per]))
            low = min(per)
            scored.append((mean, r["index"], r["rel"], low))
    scored.sort()
    return [{"path": rel, "sqnr_mean_db": mean, "worst_layer": low[1], "worst_layer_sqnr_db": low[0]}
            for mean, _, rel, low in scored[:count]]


def output_errors(records: list[dict]) -> tuple[dict | None, dict | None]:
    """``input_error`` and ``quantisation_error`` at the outputs, over the dataset.

    Quantisation: the kmodel on the file's input against the float model (the same bytes in).
    Input: the kmodel on the device's input against the kmodel on the file's (what the camera path,
    the firmware's resampling and 5/6-bit colour change). Both SQNRs are relative to the float
    outputs' power, so the larger error is the one with the lower number.
    """
    rows = [row for r in records if r.get("errors") for row in r["errors"]]
    if not rows:
        return None, None
    ff = sum(row[0] for row in rows)
    kk = sum(row[1] for row in rows)
    quantisation = {"sqnr_db": sqnr_db(ff, sum(row[3] for row in rows)),
                    "cosine": cosine_of(ff, kk, sum(row[2] for row in rows)),
                    "compares": "kmodel on the file input vs the float model"}
    device = [row for row in rows if len(row) > 4]
    if not device:
        return None, quantisation
    ff_d = sum(row[0] for row in device)
    dd = sum(row[4] for row in device)
    kk_d = sum(row[1] for row in device)
    inp = {"sqnr_db": sqnr_db(ff_d, sum(row[6] for row in device)),
           "cosine": cosine_of(kk_d, dd, sum(row[5] for row in device)),
           "compares": "kmodel on the device input vs the kmodel on the file input"}
    return inp, quantisation
