"""The KPU library's error codes and texts, and how maixemu adds its advice to them.

The exception text starts with the firmware's message, byte for byte (scripts print it and users
search for it); when maixemu knows more (which address is unmapped, what the file really is),
one more line starting with ``[maixemu]`` says what to do on the PC.
"""

from __future__ import annotations

from ..notices import advised  # the one advice mechanism (re-exported for the KPU code)

ERROR_TEXTS = {
    2001: "ERR_PARAM: please check param, load address or kmodel file name",
    2002: "ERR_KMODEL_VERSION: only support kmodel V3/V4 now",
    2003: "ERR_KMODEL_FORMAT: layer_header.body_size <=0",
    2004: "ERR_DECRYPT: check smodel match with your board",
    2005: "ERR_READ_FILE: read file failed",
    2006: "ERR_NO_MEM: memory not enough",
    2007: "ERR_GET_CONV_LAYER: first layer should be conv layer",
    2008: "ERR_RUN_MODEL: maybe model dirty",
    2009: "ERR_MODELS_FULL: we only support load 5 models in the same time",
    2010: "ERR_PERMITION",
    2011: "SIPEED_KPU_ERR_IDX_OUTRANGE",
    2012: "SIPEED_KPU_ERR_SIZE_NOTMATCH",
    2013: "ERR_OUTPUTS_SET: need kpu.set_outputs() to set shape",
    2014: "ERR_NOT_IMPLEMENT",
    2015: "ERR_UNKNOWN",
}

PARAM, KMODEL_VERSION, KMODEL_FORMAT, DECRYPT, READ_FILE, NO_MEM, GET_CONV_LAYER = range(2001, 2008)
RUN_MODEL, MODELS_FULL = 2008, 2009
OUTPUTS_NODONE = 2013

CHECK_IMG_FORMAT_ERR = "[MAIXPY]kpu: check img format err!\r\n"
PIX_AI_NULL = "[MAIXPY]kpu: pix_ai is NULL!\r\n"


def error_text(code: int) -> str:
    return ERROR_TEXTS.get(code, ERROR_TEXTS[2015])


def load_error(code: int, advice: str | None = None, *, flash: bool = False) -> ValueError:
    """``ValueError("[MAIXPY]kpu: load error:<code>, <text>")`` as ``kpu.load`` raises it."""
    verb = "load_flash error" if flash else "load error"
    return advised(ValueError(f"[MAIXPY]kpu: {verb}:{code}, {error_text(code)}"), advice)
