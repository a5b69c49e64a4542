"""Deciding, before the run, which float tensor each kmodel layer is compared with (``--layers``).

The first decodable images of the dataset (:data:`.layers.PROBE_IMAGES`) are run through the kmodel
layer by layer and through the float model with every tensor kept; :func:`.layers.match_layers`
matches them. Done once in the main process, the matches travel in the :class:`WorkSpec`, so every
worker compares the same pairs with the same dequantisation, and a resumed run too.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .errors import EvalError, Undecodable
from .layers import PROBE_IMAGES, Unmatched, match_layers
from .spec import WorkSpec


def probe_matches(spec: WorkSpec, samples) -> tuple[WorkSpec, list[Unmatched], int]:
    """The spec with its layer matches, the layers left unmatched, and how many images decided it."""
    from .worker import Evaluator

    evaluator = Evaluator(replace(spec, per_layer=True, layer_matches=()))
    reference = evaluator.reference
    if reference is None:  # pragma: no cover - checked by the caller
        raise EvalError("--layers needs --reference FLOAT_MODEL")
    keys = [t.key for t in reference.tapped]
    probes = []
    for sample in samples:
        try:
            prepared = evaluator._prepare(sample.path, evaluator.file_recipe)
        except Undecodable:
            continue
        x = prepared.chw.reshape(evaluator.input_shape)
        layer_outputs = [np.array(step.output, copy=True) for step in evaluator.model.trace(x)]
        _, tapped = reference.run_tensors(prepared.chw, keys)
        probes.append((layer_outputs, tapped))
        if len(probes) == PROBE_IMAGES:
            break
    if not probes:
        raise EvalError("--layers: none of the images decodes, so no layer can be matched")
    matches, unmatched = match_layers(evaluator.model.layers, reference.tapped, probes)
    return replace(spec, per_layer=True, layer_matches=tuple(matches)), unmatched, len(probes)
