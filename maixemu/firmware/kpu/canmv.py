"""``from maix import KPU`` on CanMV firmware: one class serving both of CanMV's KPU APIs.

The released firmware (branch ``main``) and the ``feat/kpu`` build each have one ``KPU`` with
disjoint method sets — ``load_kmodel``/``run_with_output``/``init_yolo2``/``regionlayer_yolo2``/
``lp_recog*`` against ``load``/``run``/``get_outputs``/``attr``/``Yolo2``/``Lpr``/``Act``/``Feat`` —
sharing only ``deinit``. So one class carries both and each object settles its family by its first
family-specific call: the script's own usage says which firmware it was written for. Calling the
other family's method on the same object afterwards fails as it would on either firmware
(``AttributeError``), with a line saying so. ``deinit`` and ``print(kpu)`` follow the object's
family (the released behaviour before any call).
"""

from __future__ import annotations

from typing import Any

from .canmv_feat import Feat, FeatApi, license_plate_recognition, nn_activation, yolo2
from .canmv_released import ReleasedApi
from .errors import advised

_FAMILY_NAMES = {"released": "released CanMV firmware (load_kmodel/run_with_output)",
                 "feat": "feat/kpu CanMV firmware (load/run/get_outputs)"}


class KPU(ReleasedApi, FeatApi):
    """A model slot: ``kpu = KPU()`` then ``kpu.load_kmodel(path)`` (released) or ``kpu.load(path)`` (feat/kpu)."""

    Act = nn_activation
    Feat = Feat

    def __init__(self, *_ignored: Any, **_ignored_kw: Any) -> None:
        self._family: str | None = None
        self._loaded = None
        self._ran = False
        self._yolo: dict[str, Any] | None = None
        self._lp_weights: bytes | None = None
        self._lpr: license_plate_recognition | None = None
        self._yolo2: yolo2 | None = None
        self._path = ""

    def _commit(self, family: str, method: str) -> None:
        if self._family is None:
            self._family = family
        elif self._family != family:
            raise advised(AttributeError(f"'KPU' object has no attribute '{method}'"),
                          f"this KPU object was used with the {_FAMILY_NAMES[self._family]}; {method}() belongs "
                          f"to the {_FAMILY_NAMES[family]}. A firmware has one of the two APIs: use one per object "
                          "(and per script)")

    def deinit(self):
        """Free the model: released firmware returns True/False, feat/kpu returns None."""
        if self._family == "feat":
            return self._feat_deinit()
        return self._released_deinit()

    def __repr__(self) -> str:
        return self._feat_repr() if self._family == "feat" else self._released_repr()


def feature_compare(f0, f1) -> float:
    """``KPU.feature_compare(f0, f1)`` as a function: ``(0.5 + 0.5 * dot) * 100``."""
    return KPU.feature_compare(f0, f1)


__all__ = ["KPU", "feature_compare"]
