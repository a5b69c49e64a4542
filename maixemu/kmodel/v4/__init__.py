"""kmodel V4 (nncase v0.2): the on-disk format (``format``), one decoder per node body
(``nodes``, ``kpu`` for the K210 nodes, ``nnil`` for the unary programs) and the prepared
model (``model``: ``load_v4``, ``V4Model``)."""

from __future__ import annotations

from .format import OPCODE_NAMES
from .model import FLOAT_MODES, V4Model, load_v4

__all__ = ["FLOAT_MODES", "OPCODE_NAMES", "V4Model", "load_v4"]
