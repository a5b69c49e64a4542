"""README pictures made by the tests: each test that shows a main view writes it into ``docs/``.

The pictures are made from our own content only (digits drawn with PIL, maixemu's own model or a
model file's feature maps of such a digit), never from ``../shared`` images. A picture is written
only when its pixels changed, so a run over an unchanged tree leaves ``git status`` clean and a
change in what a view shows turns up as a changed PNG in review.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from _shared import REPO_ROOT

DOCS = REPO_ROOT / "docs"


def regenerate(name: str, rgb: np.ndarray) -> Path:
    """Write ``docs/NAME`` from an (H, W, 3) uint8 picture unless it already holds these pixels."""
    path = DOCS / name
    picture = np.ascontiguousarray(rgb, dtype=np.uint8)
    if path.exists():
        with Image.open(path) as old:
            if np.array_equal(np.asarray(old.convert("RGB")), picture):
                return path
    Image.fromarray(picture, "RGB").save(path, optimize=True)
    return path
