"""What one image's evaluation depends on: the ``WorkSpec`` every worker gets, and its fingerprint.

Frozen and made of plain values, so it pickles to a process or a Dask worker unchanged and hashes
to a per-thread cache key. The fingerprint (file contents, not paths, plus every option that
changes a number) guards the checkpoint: a resumed run only reuses records computed the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .errors import EvalError
from .layers import LayerMatch
from .recipe import InputRecipe


@dataclass(frozen=True)
class WorkSpec:
    model: str
    task: str
    recipe: InputRecipe
    output: int = 0
    anchors: tuple[float, ...] = ()
    threshold: float = 0.5
    nms: float = 0.3
    reference: str | None = None
    mean: tuple[float, ...] = (0.0,)
    std: tuple[float, ...] = (1.0,)
    top: int = 5
    extra: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    #: ``--layers``: compare layer by layer, with these kmodel layer → float tensor matches
    per_layer: bool = False
    layer_matches: tuple[LayerMatch, ...] = ()


def file_sha256(path: str | Path) -> str:
    """The file's SHA-256; a FIFO or a device (which would never end) is an EvalError."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise EvalError(f"{path}: not a regular file")
    digest = hashlib.sha256()
    with open(path, "rb") as fp:
        for block in iter(lambda: fp.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fingerprint(spec: WorkSpec) -> str:
    described = asdict(spec)
    described["model"] = file_sha256(spec.model)
    described["reference"] = file_sha256(spec.reference) if spec.reference else None
    text = json.dumps(described, sort_keys=True, default=list)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
