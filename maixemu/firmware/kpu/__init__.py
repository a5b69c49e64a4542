"""The KPU side of the firmware, one job per module.

Today it holds the two CanMV class APIs of ``from maix import KPU`` (:mod:`.canmv`), the
post-processing both of them share (:mod:`.algorithm`) and what the ``feat/kpu`` build reads from a
kmodel's header (:mod:`.probe`). The legacy ``KPU`` module's helpers (``kpu_loader``, ``kpu_fmap``,
``yolo2``, ...) move here with the board work; the CanMV modules already use them rather than
copies.
"""
