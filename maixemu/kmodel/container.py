"""Recognise what a model file is and hand it to the right version's loader.

MaixPy users pass around V3 and V4 kmodels, byte-swapped V3 files meant for ``kpu.load_flash``,
``.kfpkg`` flash zips, V5 files from nncase 1.x and things that are not models at all. Each gets
either a loaded Model or a KmodelError that says what the file looks like and what to do.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib
from dataclasses import dataclass

from .errors import KmodelFormatError, KmodelVersionError
from .k210 import K210_FLASH_BYTES
from .model import Model

LDMK = 0x4B4D444C
ZIP_MAGIC = 0x04034B50
#: The K210's flash is 16 MiB: no model file (or flash package) a board can hold is larger, so
#: bigger files are refused before they are read or unzipped.
MAX_MODEL_FILE_BYTES = K210_FLASH_BYTES
#: A .kfpkg holds a kmodel, flash-list.json and perhaps firmware: a handful of members. Checked in
#: the end-of-central-directory record before zipfile builds one object per member.
MAX_KFPKG_MEMBERS = 256


@dataclass(frozen=True)
class ContainerKind:
    """What the first bytes of a file say it is."""

    kind: str  # "v3", "v3-swapped", "v4", "v5", "kfpkg", "v1", "v2", "ldmk-other", "empty", "unknown"
    version: int | None
    description: str


_IMAGE_MAGICS = {
    b"\xff\xd8\xff": "a JPEG image",
    b"\x89PNG": "a PNG image",
    b"BM": "a BMP image",
    b"GIF8": "a GIF image",
    b"TFL3": "a TensorFlow Lite model",
}


def sniff_container(data: bytes) -> ContainerKind:
    """Classify model bytes by their first words, without parsing further."""
    if len(data) == 0:
        return ContainerKind("empty", None, "an empty file")
    if len(data) >= 8 and data[4:8] == b"TFL3":
        return ContainerKind("unknown", None, "a TensorFlow Lite model (.tflite); convert it with nncase to a kmodel")
    for magic, what in _IMAGE_MAGICS.items():
        if data.startswith(magic):
            return ContainerKind("unknown", None, what)
    if len(data) < 4:
        return ContainerKind("unknown", None, f"a {len(data)}-byte file, too short to be a kmodel")
    (word0,) = struct.unpack_from("<I", data, 0)
    if word0 == 3:
        return ContainerKind("v3", 3, "kmodel V3 (nncase v0.1)")
    if word0 == 0x03000000:
        return ContainerKind("v3-swapped", 3, "kmodel V3 with every 32-bit word byte-swapped (the form kpu.load_flash reads)")
    if word0 in (1, 2):
        return ContainerKind(f"v{word0}", word0, f"kmodel version {word0} (pre-nncase format)")
    if word0 == ZIP_MAGIC:
        return ContainerKind("kfpkg", None, "a zip archive (a .kfpkg flash package?)")
    if word0 == LDMK:
        version = struct.unpack_from("<I", data, 4)[0] if len(data) >= 8 else None
        if version == 4:
            return ContainerKind("v4", 4, "kmodel V4 (nncase v0.2)")
        if version == 5:
            return ContainerKind("v5", 5, "kmodel V5 (nncase v1.x)")
        return ContainerKind("ldmk-other", version, f"a 'KMDL' model of version {version}")
    text = _text_kind(data)
    if text is not None:
        return ContainerKind("unknown", None, text)
    if _looks_random(data):
        return ContainerKind(
            "unknown", None,
            f"random-looking bytes (first word 0x{word0:08x}): an encrypted model (MaixPy .smodel/.emodel are "
            "AES-encrypted for one board) or a compressed file; only plain kmodels can be loaded")
    return ContainerKind("unknown", None, f"not a kmodel (first word 0x{word0:08x})")


_OTHER_MAGICS = {
    b"\x1f\x8b": "a gzip-compressed file; decompress it first",
    b"7z\xbc\xaf": "a 7-Zip archive; extract the .kmodel first",
    b"Rar!": "a RAR archive; extract the .kmodel first",
    b"\x7fELF": "an ELF executable (firmware?), not a model",
}


def _text_kind(data: bytes) -> str | None:
    """Name the text files a failed download leaves behind (web page, Git LFS pointer, JSON)."""
    for magic, what in _OTHER_MAGICS.items():
        if data.startswith(magic):
            return what
    head = data[:512].lstrip().lower()
    if head.startswith(b"version https://git-lfs"):
        return "a Git LFS pointer file (the repository was cloned without git-lfs; fetch the real file)"
    if head.startswith((b"<!doctype html", b"<html", b"<?xml", b"<head")):
        return "an HTML/XML page (the download saved a web page instead of the model)"
    if head.startswith((b"{", b"[")):
        return "a JSON/text file, not a model"
    return None


def _looks_random(data: bytes) -> bool:
    """Near 8 bits of entropy per byte over the first 4 KiB: ciphertext or compressed data."""
    sample = data[:4096]
    if len(sample) < 1024:
        return False
    import math

    counts = [0] * 256
    for b in sample:
        counts[b] += 1
    n = len(sample)
    entropy = -sum(c / n * math.log2(c / n) for c in counts if c)
    return entropy > 7.5


def swap_words(data: bytes) -> bytes:
    """Reverse the bytes of every 32-bit word (the ``model_le2be.py`` transform, its own inverse)."""
    import numpy as np

    usable = len(data) - len(data) % 4
    words = np.frombuffer(data, dtype="<u4", count=usable // 4).byteswap()
    return words.tobytes() + data[usable:]


def kmodel_from_kfpkg(data: bytes) -> tuple[str, bytes]:
    """Return (member name, bytes) of the single kmodel inside a .kfpkg zip."""
    eocd = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 65535))
    if eocd >= 0 and eocd + 12 <= len(data):
        (entries,) = struct.unpack_from("<H", data, eocd + 10)
        if entries > MAX_KFPKG_MEMBERS:
            raise KmodelFormatError(f"the zip declares {entries} members; a .kfpkg holds a handful",
                                    offset=eocd + 10, field="zip entry count")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = [i for i in archive.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, OverflowError, NotImplementedError) as exc:
        raise KmodelFormatError(f"the file starts like a zip (.kfpkg) but is not a valid zip: {exc}", offset=0, field="zip") from exc
    models = [i for i in members if i.filename.lower().endswith(".kmodel")]
    if len(models) != 1:
        names = ", ".join(i.filename for i in members) or "nothing"
        raise KmodelFormatError(
            f"a .kfpkg zip must hold exactly one .kmodel member to be loaded as a model; it holds {names}. "
            "Extract the .kmodel, or map the package with --flash-image",
            offset=0,
            field="zip members",
        )
    info = models[0]
    if info.file_size > MAX_MODEL_FILE_BYTES:
        raise KmodelFormatError(
            f"zip member {info.filename} declares {info.file_size} bytes, more than any K210 model",
            offset=0,
            field="zip member size",
        )
    try:
        with archive.open(info) as member:
            payload = member.read(MAX_MODEL_FILE_BYTES + 1)
    except RuntimeError as exc:  # zipfile says "File ... is encrypted, password required for extraction"
        raise KmodelFormatError(f"zip member {info.filename} is encrypted; extract it with its password first",
                                offset=info.header_offset, field="zip member flags") from exc
    except NotImplementedError as exc:  # compression method zipfile cannot decode
        raise KmodelFormatError(f"zip member {info.filename}: {exc}", offset=info.header_offset,
                                field="zip member compression method") from exc
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, OverflowError) as exc:
        # a bad CRC, a truncated or corrupt deflate stream, a local header that does not match
        raise KmodelFormatError(f"zip member {info.filename} is corrupt (a damaged download?): {exc}",
                                offset=info.header_offset, field="zip member data") from exc
    if len(payload) > MAX_MODEL_FILE_BYTES:
        raise KmodelFormatError(f"zip member {info.filename} inflates to more than {MAX_MODEL_FILE_BYTES} bytes",
                                offset=info.header_offset, field="zip member size")
    return info.filename, payload


def read_model_bytes(source: str | os.PathLike | bytes | bytearray | memoryview) -> tuple[bytes, str]:
    """Bytes of a model given as a path or a buffer, plus a name for messages."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if len(data) > MAX_MODEL_FILE_BYTES:
            raise KmodelFormatError(f"the buffer is {len(data)} bytes, larger than the K210's 16 MiB flash: not a K210 model",
                                    offset=0, field="file size")
        return data, "<bytes>"
    path = os.fspath(source)
    size = os.path.getsize(path)
    if size > MAX_MODEL_FILE_BYTES:
        raise KmodelFormatError(f"{path} is {size} bytes, larger than the K210's 16 MiB flash: not a K210 model", offset=0, field="file size")
    with open(path, "rb") as fh:
        return fh.read(), path


def load_kmodel(source: str | os.PathLike | bytes | bytearray | memoryview, *, float_mode: str = "host") -> Model:
    """Load a kmodel (V3, byte-swapped V3, V4, or a .kfpkg holding one) from a path or bytes.

    ``float_mode`` (V4 only): ``"host"`` (default) reproduces the golden vectors (nncase's host float
    formulas, bit for bit); ``"device"`` uses the formulas of the runtime's RISC-V build, which
    differ by about 1e-5 relative.
    """
    data, name = read_model_bytes(source)
    notes: list[str] = []
    kind = sniff_container(data)
    if kind.kind == "kfpkg":
        member, data = kmodel_from_kfpkg(data)
        notes.append(f"loaded from .kfpkg member {member}")
        kind = sniff_container(data)
        if kind.kind == "kfpkg":
            raise KmodelFormatError("a .kfpkg inside a .kfpkg is not a model", offset=0, field="zip member")
    if kind.kind == "v3-swapped":
        data = swap_words(data)
        notes.append("byte-swapped V3 file (load_flash form); words swapped back on load")
        kind = sniff_container(data)
    model: Model
    if kind.kind == "v3":
        from .v3 import load_v3

        model = load_v3(data)
    elif kind.kind == "v4":
        from .v4 import load_v4

        model = load_v4(data, float_mode=float_mode)
    elif kind.kind in ("v1", "v2"):
        raise KmodelVersionError(
            f"kmodel version {kind.version} (pre-nncase format) is not supported; recompile with "
            "nncase v0.1.0-rc5 (V3) or v0.2.x (V4)",
            offset=0,
            field="version",
        )
    elif kind.kind == "v5":
        raise KmodelVersionError(
            "kmodel V5 (nncase v1.x) cannot run here: MaixPy's kpu.load says "
            f"'{KmodelVersionError.firmware_message}'. Recompile the model with nncase v0.2 (V4) or "
            "v0.1 (V3)",
            offset=4,
            field="version",
        )
    elif kind.kind == "ldmk-other":
        raise KmodelVersionError(
            f"kmodel version {kind.version} is not a K210 format; only V3/V4 run on MaixPy",
            offset=4,
            field="version",
        )
    elif kind.kind == "empty":
        raise KmodelFormatError(f"{name} is empty", offset=0, field="file")
    else:
        desc = kind.description
        tail = "" if "model" in desc or ";" in desc or "(" in desc else ", not a kmodel"
        raise KmodelFormatError(f"{name} is {desc}{tail}", offset=0, field="magic")
    model.notes = list(getattr(model, "notes", [])) + notes
    # the compiled paths its layers queued come in the background (kpu.warmup): at once in the
    # wait mode, else once the numpy plans have run long enough for them to pay
    from .kpu.fast import preload
    from .kpu.heap import trim

    trim()  # (what the load freed: the file's parse, the proofs' temporaries; see kpu.heap)
    preload()
    return model
