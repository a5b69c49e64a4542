"""The CanMV ``KPU`` object's base: what both API families' methods know of the object they run on.

``canmv.KPU`` is made of the two families' method sets (``canmv_released.ReleasedApi``,
``canmv_feat.FeatApi``), and both must recognise a KPU object (``PY_ASSERT_TYPE(..., KPU)``,
the class-or-instance helpers) and settle its family at its first family-specific call. They
recognise it by this base, which lives below both, so neither imports the class made of them.
"""

from __future__ import annotations

from .errors import advised

FAMILY_NAMES = {"released": "released CanMV firmware (load_kmodel/run_with_output)",
                "feat": "feat/kpu CanMV firmware (load/run/get_outputs)"}


class KpuObject:
    """A CanMV KPU object, whichever family it turns out to be (see :mod:`.canmv`)."""

    _family: str | None = None

    def _commit(self, family: str, method: str) -> None:
        """Settle the object's family at ``method`` (a call of the other family's fails as on either firmware)."""
        if self._family is None:
            self._family = family
        elif self._family != family:
            raise advised(AttributeError(f"'KPU' object has no attribute '{method}'"),
                          f"this KPU object was used with the {FAMILY_NAMES[self._family]}; {method}() belongs "
                          f"to the {FAMILY_NAMES[family]}. A firmware has one of the two APIs: use one per object "
                          "(and per script)")


__all__ = ["FAMILY_NAMES", "KpuObject"]
