"""maixemu: run MaixPy (K210) scripts unchanged on a PC."""

from __future__ import annotations

__version__ = "0.1.0"


def advice(exc: BaseException) -> str | None:
    """What maixemu advises about a device exception a script or test caught, or None.

    A device exception's ``args`` and ``str()`` are the firmware's, byte for byte, so that a script
    printing or comparing them sees what the board says; maixemu's advice for the PC (what the
    runner prints on its own ``[maixemu]`` line when the exception ends a run) is kept beside the
    exception and read here::

        try:
            kpu.forward(task, img)
        except ValueError as e:
            print(e)                   # [MAIXPY]kpu: check img format err!  (as on the board)
            print(maixemu.advice(e))   # kpu.forward got an image without AI memory: ...
    """
    value = getattr(exc, ADVICE_ATTRIBUTE, None)  # (firmware.notices.advised puts it there)
    return value if isinstance(value, str) and value else None


#: the attribute of an exception where maixemu keeps its advice: ``firmware.notices.ADVICE_ATTRIBUTE``,
#: spelt again here so that ``import maixemu`` imports none of the layers below (a test holds them equal)
ADVICE_ATTRIBUTE = "_maixemu_advice"


__all__ = ["__version__", "advice"]
