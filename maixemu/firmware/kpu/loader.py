"""Loading a model the way MaixPy's KPU library does: from a path or a flash address, within a budget.

The device keeps loaded models in its 6 MiB of RAM next to the firmware, the camera and LCD
buffers; how much is left depends on the firmware build. Loading past that fails with
``ERR_NO_MEM`` (2006), loading a sixth model with ``ERR_MODELS_FULL`` (2009). This module maps
every way a load can fail to the firmware's code, and adds maixemu's advice for the PC.

A model file is sized with ``stat`` before it is read, so a file the budget cannot hold (a 2 GB
sparse file, a video renamed ``.kmodel``) fails with ``ERR_NO_MEM`` without costing the PC its RAM.
The budget holds the model objects themselves through weak references: the firmware frees a
``kpu_net`` in its finaliser, so a model the script dropped (``del task; gc.collect()``) no longer
counts, exactly as on the board.
"""

from __future__ import annotations

import os
import stat as _stat

from ...kmodel import KmodelError, KmodelVersionError, Model, load_kmodel, sniff_container
from ...kmodel.k210 import K210_FLASH_BYTES, MAIXPY_MODEL_BUDGETS, kpu_load_bytes
from ..state import current
from . import errors as codes
from .state import KpuState, MemoryBudget

#: Room left for models by each firmware build (``maixemu.kmodel.k210``: the one table info uses too).
FIRMWARE_BUDGETS = MAIXPY_MODEL_BUDGETS
#: The KPU library's model table holds this many (``ERR_MODELS_FULL`` past it).
MAX_MODELS = 5
#: Nothing larger can be in the K210's 16 MiB SPI flash (what ``kpu.load_flash`` streams from).
FLASH_BYTES = K210_FLASH_BYTES


def budget() -> MemoryBudget:
    """The active board's model budget (``current().kpu.budget``)."""
    return current().part(KpuState).budget


def model_cost(model: Model, file_size: int, streamed: bool) -> int:
    """RAM a loaded model takes: the file (V3/V4 keep it whole) plus main-memory working buffers.

    ``load_flash`` streams weights from flash, so only the largest layer's parameters count.
    """
    largest = max((layer.param_bytes for layer in model.layers), default=0) if streamed else None
    return kpu_load_bytes(model.memory.main_memory_bytes, file_size, largest)


def _no_room(cost: int, *, streamed: bool, flash: bool) -> ValueError:
    """The firmware's ``ERR_NO_MEM`` for a model needing ``cost`` bytes, with what to do on the PC."""
    room = budget()
    free_kib = max(room.free(), 0) // 1024
    hint = (
        f"the model needs about {cost // 1024} KiB and the '{room.firmware}' firmware has "
        f"{free_kib} KiB left for models"
    )
    if room.firmware != "none":
        bigger = "minimum" if room.firmware == "full" else "none"
        hint += f"; on the board flash a leaner firmware (here: `--firmware {bigger}`)"
    if not streamed:
        hint += ", use kpu.load_flash, or kpu.deinit() other models"
    return codes.load_error(codes.NO_MEM, hint, flash=flash)


def _check_room_for(file_size: int, *, flash: bool) -> None:
    """Before reading a file: refuse what cannot fit (a kept model costs at least its file size)."""
    room = budget()
    if len(room.used) >= MAX_MODELS:
        raise codes.load_error(codes.MODELS_FULL, "call kpu.deinit(task) on models you no longer use", flash=flash)
    if flash:  # load_flash streams its weights: only the flash bounds the file
        if file_size > FLASH_BYTES:
            raise codes.load_error(codes.KMODEL_FORMAT, f"the file is {file_size} bytes, more than the K210's "
                                   "16 MiB flash can hold", flash=True)
    elif file_size > room.free():
        raise _no_room(file_size, streamed=False, flash=flash)


def _read_source(source: int | str, *, flash: bool) -> tuple[bytes, str]:
    """Bytes of the model at a flash address or device path, or the firmware's load error.

    The size is checked (``stat``) before a byte is read; host paths never appear in the message.
    """
    if isinstance(source, int):
        path = current().storage.flash_file(source)
        if path is None:
            raise codes.load_error(
                codes.KMODEL_VERSION,
                f"nothing is mapped at flash address 0x{source:x}; map a model there with "
                f"`maixemu run --flash 0x{source:x}=MODEL.kmodel` or `--flash-image PACKAGE.kfpkg`",
                flash=flash,
            )
        label = f"flash 0x{source:x} ({path.name})"
    else:
        where = current().storage
        try:
            path = where.resolve(source)
        except OSError:
            path = None
        if path is None or not path.is_file():
            raise codes.load_error(
                codes.PARAM,
                f"no file {source!r} (device path {where.device_path(source)}) on /sd or /flash; they show "
                "the script's folder unless --sd/--flash-dir say otherwise",
                flash=flash,
            )
        label = str(source)
    try:
        info = os.stat(path)
        if not _stat.S_ISREG(info.st_mode):
            raise OSError(f"{label} is not a regular file")
        _check_room_for(info.st_size, flash=flash)
        with open(path, "rb") as handle:
            data = handle.read(info.st_size + 1)
    except OSError as exc:
        raise codes.load_error(codes.READ_FILE, f"could not read {label}: {exc.strerror or exc}",
                               flash=flash) from None
    if len(data) > info.st_size:  # grew while read: read no further than the size that was checked
        data = data[: info.st_size]
    return data, label


def load_model(source: int | str, *, flash: bool = False) -> tuple[Model, int, str]:
    """Load and budget a model; returns (model, file size, label). Raises the firmware's ValueError."""
    data, label = _read_source(source, flash=flash)
    return model_from_bytes(data, label, flash=flash), len(data), label


def model_from_bytes(data: bytes, label: str, *, flash: bool = False) -> Model:
    """Parse model bytes already read (the CanMV class APIs read a given byte count themselves)."""
    kind = sniff_container(data[:16])
    if flash and kind.kind == "v3":
        raise codes.load_error(
            codes.KMODEL_VERSION,
            f"{label} is an ordinary V3 kmodel; kpu.load_flash needs the byte-swapped form "
            "(model_le2be.py) — or use kpu.load for this file",
            flash=True,
        )
    if not flash and kind.kind == "v3-swapped":
        raise codes.load_error(
            codes.KMODEL_VERSION,
            f"{label} is a byte-swapped V3 kmodel, the form only kpu.load_flash reads; "
            "load it with kpu.load_flash or use the ordinary file",
        )
    if kind.kind in ("v5", "ldmk-other", "v1", "v2", "kfpkg", "unknown", "empty"):
        advice = f"{label} is {kind.description}"
        if kind.kind == "v5":
            advice += "; MaixPy's kpu module runs V3/V4 only: recompile with nncase v0.2 (V4)"
        elif kind.kind == "kfpkg":
            advice += "; map the package with `maixemu run --flash-image FILE.kfpkg` and load its address"
        raise codes.load_error(codes.KMODEL_VERSION, advice, flash=flash)
    try:
        model = load_kmodel(data)
    except KmodelVersionError as exc:
        raise codes.load_error(codes.KMODEL_VERSION, f"{label}: {exc}", flash=flash) from None
    except KmodelError as exc:
        raise codes.load_error(codes.KMODEL_FORMAT, f"{label} is damaged or not supported: {exc}", flash=flash) from None
    return model


def reserve(owner: object, model: Model, file_size: int, *, streamed: bool, flash: bool,
            max_models: int | None = MAX_MODELS) -> int:
    """Count a loaded model against the budget, or raise the firmware's 2009/2006 errors.

    ``owner`` is the object that holds the model (``kpu_net``, a CanMV ``LoadedModel``): the budget
    refers to it weakly, so it stops counting when the object is freed, as the firmware's finaliser
    frees a ``kpu_net``. ``max_models=None`` skips the count check (the CanMV class APIs keep their
    own model tables).
    """
    if isinstance(owner, int):
        raise TypeError("kpu_loader.reserve takes the model object, not its id(): the budget must see it freed")
    room = budget()
    if max_models is not None and len(room.used) >= max_models:
        raise codes.load_error(codes.MODELS_FULL, "call kpu.deinit(task) on models you no longer use", flash=flash)
    cost = model_cost(model, file_size, streamed)
    if cost > room.free():
        raise _no_room(cost, streamed=streamed, flash=flash)
    room.used[owner] = cost
    return cost


def release(owner: object) -> None:
    budget().used.pop(owner, None)


__all__ = ["FIRMWARE_BUDGETS", "budget", "load_model", "model_from_bytes", "reserve", "release"]
