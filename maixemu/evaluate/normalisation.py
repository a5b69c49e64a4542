"""The float model's input normalisation, when the user does not give it: the usual ones, tried.

A kmodel takes uint8 pixels: nncase folded the float model's ``(x - mean) / std`` into the first
layer, and the kmodel file does not keep it (the KPU stores only the input's zero point, not its
scale). Comparing with the float model under the wrong normalisation gives cosines near 0 and
looks like a broken model. So without ``--mean``/``--std``, the candidates below (raw 0..255,
0..1, the two [-1, 1] conventions, ImageNet's) are each tried on the first few images, and the
one whose float outputs agree best with the kmodel's is used — and named in the report, with the
runner-up, so the user can see it was a guess and fix it with ``--mean``/``--std``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

#: (mean, std, how a person writes it) — the preprocessing of the public K210 model recipes.
CANDIDATES: tuple[tuple[tuple[float, ...], tuple[float, ...], str], ...] = (
    ((0.0,), (1.0,), "x (0..255)"),
    ((0.0,), (255.0,), "x / 255 (0..1)"),
    ((127.5,), (127.5,), "(x - 127.5) / 127.5 (-1..1)"),
    ((128.0,), (128.0,), "(x - 128) / 128 (-1..1)"),
    ((123.675, 116.28, 103.53), (58.395, 57.12, 57.375), "ImageNet mean/std"),
)

#: Images tried per candidate: enough to be stable, few enough to cost a second or two.
PROBE_IMAGES = 3


@dataclass(frozen=True)
class Guess:
    mean: tuple[float, ...]
    std: tuple[float, ...]
    label: str
    cosine: float
    #: (label, mean cosine) of every candidate, best first
    tried: tuple[tuple[str, float], ...]

    def describe(self) -> str:
        runner_up = next(((label, c) for label, c in self.tried if label != self.label), None)
        text = (f"{self.label}, guessed: the best agreement of {len(self.tried)} usual normalisations on the "
                f"first images (cosine {self.cosine:.3f}")
        if runner_up is not None:
            text += f"; next {runner_up[0]} {runner_up[1]:.3f}"
        return text + "); give --mean/--std to set it"


def guess_normalisation(spec, samples) -> Guess | None:
    """The candidate with the highest mean cosine on the first decodable samples (None: none decodes)."""
    from .worker import Evaluator

    evaluator = Evaluator(replace(spec, mean=CANDIDATES[0][0], std=CANDIDATES[0][1], per_layer=False, layer_matches=()))
    reference = evaluator.reference
    assert reference is not None  # (eval guesses only when it compares with a float reference)
    probes = []
    for sample in samples:
        record = evaluator.evaluate(sample)
        if record.get("status") == "ok":
            probes.append(sample)
        if len(probes) == PROBE_IMAGES:
            break
    if not probes:
        return None
    scores = []
    for mean, std, label in CANDIDATES:
        reference.mean = np.asarray(mean, dtype=np.float32)
        reference.std = np.asarray(std, dtype=np.float32)
        cosines = [evaluator.evaluate(s)["ref"]["cosine"] for s in probes]
        scores.append((float(np.nanmean(cosines)) if not np.all(np.isnan(cosines)) else -np.inf, mean, std, label))
    ranked = sorted(scores, key=lambda s: -s[0])  # stable: ties keep the list's order
    best = ranked[0]
    return Guess(best[1], best[2], best[3], best[0], tuple((s[3], s[0]) for s in ranked))
