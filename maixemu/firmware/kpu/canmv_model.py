"""One loaded model of a ``maix.KPU`` object: reading its bytes, budgeting, running it on an image.

Both CanMV class APIs keep the model inside the ``KPU`` object (no ``kpu_net`` handle) and read
the model file themselves, a given number of bytes from a path or a flash address; what differs
between them (messages, size checks, which output they hand out) stays in their own modules.
The model memory is counted against the same budget as the legacy ``KPU`` module's models.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from ...host import storage
from ...kmodel import Model
from ...kmodel.k210 import K210_MAIN_MEMORY_BYTES
from .. import ai_memory, ide_events
from . import calls as kpu_calls
from . import loader as kpu_loader
from ..notices import advice_of, notice_once
from .errors import advised
from . import probe

#: Erased NOR flash reads as 0xFF: what a read past the end of a mapped file returns.
ERASED_FLASH = 0xFF


class FileOpenError(ValueError):
    """``get_file_size``: the path does not open (both APIs raise this ValueError text)."""

    def __init__(self, path: str, advice: str):
        super().__init__("open file error, please check file path!")
        advised(self, advice)


def _missing_file_advice(path: str) -> str:
    where = storage.current()
    return (f"no file {path!r} (device path {where.device_path(path)}) on /sd or /flash; they show the "
            "script's folder unless --sd/--flash-dir say otherwise")


def file_size(path: str) -> int:
    """Bytes of a device file, or the firmware's ``open file error`` ValueError."""
    try:
        local = storage.current().resolve(path)
    except OSError:
        local = None
    if local is None or not local.is_file():
        raise FileOpenError(path, _missing_file_advice(path))
    return local.stat().st_size


#: No buffer the firmware mallocs can be larger than the K210's RAM (the "none" budget: all 6 MiB).
RAM_BYTES = K210_MAIN_MEMORY_BYTES


def check_allocation(size: int, message: str) -> None:
    """A buffer larger than the board's RAM fails to malloc: the firmware's MemoryError, nothing read."""
    if size > RAM_BYTES:
        raise advised(MemoryError(message), f"{size} bytes is more than the K210's {RAM_BYTES // (1024 * 1024)} MiB of RAM")


def read_file(path: str, size: int) -> bytes | None:
    """The first ``size`` bytes of a device file, or None when it is shorter (``read_data`` fails)."""
    with storage.current().open(path, "rb") as handle:  # errors in the device's form, no host path
        data = handle.read(size)
    return data if len(data) == size else None


def mapped_flash(address: int) -> bytes | None:
    """Everything mapped at a flash address (``--flash ADDR=FILE``), or None when nothing is."""
    path = storage.current().flash_file(address)
    return None if path is None else path.read_bytes()


def read_flash(address: int, size: int) -> bytes:
    """``sys_spiffs_read(addr, size)``: the mapped bytes, erased flash (0xFF) past their end."""
    data = mapped_flash(address) or b""
    if len(data) >= size:
        return data[:size]
    return data + bytes([ERASED_FLASH]) * (size - len(data))


def unmapped_advice(address: int) -> str:
    return (f"nothing is mapped at flash address 0x{address:x} (it reads as erased flash); map a file there "
            f"with `maixemu run --flash 0x{address:x}=FILE` or the plugin's flash={{0x{address:x}: FILE}}")


def device_floats(raw: np.ndarray) -> np.ndarray:
    """An output buffer as the firmware hands it out: ``output_size / sizeof(float)`` floats.

    Float outputs are already float32; a uint8 output (a V3 model ending in a KPU layer) is the same
    bytes read as floats, which is what ``kpu_get_output`` + a float cast give on the device.
    """
    values = np.ascontiguousarray(raw)
    if values.dtype == np.float32:
        return values.reshape(-1)
    data = values.reshape(-1).view(np.uint8)
    return data[: data.size // 4 * 4].view("<f4")


@dataclass(eq=False)  # compared and hashed by identity: the model budget holds it weakly
class LoadedModel:
    """A model in a ``KPU`` object: the parsed model and the bytes it was read from.

    The object itself is what the firmware's model budget counts: freed with its ``KPU`` object,
    it stops counting, as the firmware frees a model buffer with its object.
    """

    model: Model
    data: bytes
    label: str
    source: int | str
    outputs: list[np.ndarray] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def sha256(self) -> bytes:
        return hashlib.sha256(self.data).digest()

    @property
    def input_chw(self) -> tuple[int, int, int] | None:
        return probe.input_chw(self.model)

    @property
    def output_chw(self) -> tuple[int, int, int] | None:
        return probe.output_chw(self.model)

    def output_floats(self, index: int = 0) -> np.ndarray | None:
        """Output ``index`` of the last run as device floats, or None if there is no such output."""
        if not 0 <= index < len(self.outputs):
            return None
        return device_floats(self.outputs[index])

    def release(self) -> None:
        kpu_loader.release(self)


class ModelParseError(Exception):
    """``kpu_load_kmodel`` returned an error: the bytes are no V3/V4 model maixemu can run."""

    def __init__(self, advice: str | None):
        super().__init__(advice)
        self.advice = advice


class ModelMemoryError(Exception):
    """The model does not fit in what the firmware leaves for models (malloc fails)."""

    def __init__(self, advice: str | None):
        super().__init__(advice)
        self.advice = advice


def parse_and_reserve(data: bytes, label: str, source: int | str) -> LoadedModel:
    """Parse model bytes and count them against the model budget; the firmware's failures as exceptions."""
    try:
        model = kpu_loader.model_from_bytes(data, label)
    except ValueError as exc:
        raise ModelParseError(advice_of(exc)) from exc
    loaded = LoadedModel(model=model, data=data, label=label, source=source)
    try:
        kpu_loader.reserve(loaded, model, len(data), streamed=False, flash=False, max_models=None)
    except ValueError as exc:
        raise ModelMemoryError(advice_of(exc)) from exc
    return loaded


def ai_input(img, call: str) -> np.ndarray | None:
    """The image's AI buffer as the KPU will read it (listeners told), or None without one."""
    ai = img._ai_array()
    if ai is None:
        return None
    ai_memory._check_stale(img, call)
    kpu_calls.notify_input(ai, call)
    return ai


def run_model(loaded: LoadedModel, flat: np.ndarray, call: str) -> None:
    """Run the model on ``flat`` input bytes; fit them to the input size as the device would read them.

    Neither API checks the byte count (``feat/kpu`` checks only width and height): the KPU reads
    as many bytes as the model takes from where the buffer starts. Short or long buffers are
    fitted here with a warning, because past-the-end bytes are whatever memory follows on the board.
    """
    spec = loaded.model.inputs[0]
    data = np.asarray(flat, dtype=np.uint8).reshape(-1)
    if data.size != spec.nbytes:
        notice_once(
            f"kpu-input-size:{call}:{data.size}:{spec.nbytes}",
            f"{call}: the input has {data.size} bytes, the model reads {spec.nbytes} (shape {spec.shape}); "
            "the device reads past or short of the buffer and the result is garbage",
        )
        data = np.resize(data, spec.nbytes) if data.size else np.zeros(spec.nbytes, np.uint8)
    x = data.view(spec.dtype).reshape(spec.shape) if np.dtype(spec.dtype).itemsize > 1 else data.reshape(spec.shape)
    ide_events.kpu_call(call, loaded.model)
    loaded.outputs = [np.asarray(o) for o in loaded.model.run(x.astype(spec.dtype, copy=False))]
    if kpu_calls.enabled():
        first = loaded.output_floats(0)
        kpu_calls.record(call, loaded.label, input_shape=list(spec.shape),
                         output=kpu_calls.summarize(first if first is not None else np.zeros(0)))


def record_boxes(call: str, loaded: LoadedModel, boxes: list[list]) -> None:
    """Log decoded YOLO boxes like ``kpu.run_yolo2`` does (``rect``, ``classid``, ``value``)."""
    if kpu_calls.enabled():
        kpu_calls.record(call, loaded.label, boxes=[
            {"rect": [int(b[0]), int(b[1]), int(b[2]), int(b[3])], "classid": int(b[4]), "value": float(b[5])}
            for b in boxes
        ])


def record_score(call: str, score: float, length: int) -> None:
    """Log a feature comparison (the demos draw the score on the LCD only)."""
    if kpu_calls.enabled():
        kpu_calls.record(call, "", score=float(score), length=int(length))


__all__ = [
    "ERASED_FLASH", "RAM_BYTES", "FileOpenError", "check_allocation", "LoadedModel", "ModelMemoryError", "ModelParseError",
    "ai_input", "device_floats", "file_size", "mapped_flash", "parse_and_reserve", "read_file",
    "read_flash", "record_boxes", "record_score", "run_model", "unmapped_advice",
]
