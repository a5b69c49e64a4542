"""The KPU side of the firmware, one job per module (``maixemu.firmware.KPU`` is MaixPy's ``KPU`` module
over them, ``maixemu.firmware.maix`` CanMV's ``from maix import KPU``):

* :mod:`.net` — the objects the legacy API returns (``kpu_net``, ``kpu_yolo2_find``, ``kpu_netinfo_find``);
* :mod:`.run` — one model run: the AI buffer read and checked, the output typed into a :mod:`.fmap`;
* :mod:`.loader` — model files and flash addresses within the firmware's memory budget;
* :mod:`.state` — the board's KPU state (budget, AI-memory policy, :mod:`.calls` log);
* :mod:`.region` — YOLOv2 decoding; :mod:`.face` — face features; :mod:`.classifier` — ``kpu.classifier``;
* :mod:`.errors` — the KPU library's error codes and texts;
* :mod:`.canmv` — both CanMV class APIs (:mod:`.canmv_released`, :mod:`.canmv_feat`, :mod:`.canmv_model`),
  with :mod:`.algorithm` (their post-processing) and :mod:`.probe` (what ``feat/kpu`` reads of a header).
"""
