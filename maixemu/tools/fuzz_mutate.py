"""Deterministic mutations of kmodel files for the fuzz harness (``maixemu.tools.fuzz``).

Case ``i`` of a campaign with seed ``S`` is a pure function of (corpus, S, i): the model is picked
round-robin and the mutation from ``random.Random(f"{S}:{i}")``, so any finding is reproduced by
``python -m maixemu.tools.fuzz --seed S --replay i`` without storing the mutated file.

Mutations are structure-aware (see ``fuzz_layout``): truncation at the format's boundaries,
interesting values written into size/count/offset/shape/type fields, random type codes, plus
plain random bit flips. Byte-swapped V3 files are mutated in their little-endian form and swapped
back; ``.kfpkg`` zips get their kmodel member mutated and re-zipped, or the zip bytes themselves
mutated.
"""

from __future__ import annotations

import io
import random
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from maixemu.kmodel.container import swap_words
from maixemu.kmodel.k210 import K210_FLASH_BYTES, K210_KPU_RAM_BYTES, K210_MAIN_MEMORY_BYTES

from .fuzz_layout import Field, Layout, layout_of

K210_MAIN = K210_MAIN_MEMORY_BYTES
K210_KPU = K210_KPU_RAM_BYTES
K210_FLASH = K210_FLASH_BYTES


@dataclass
class Seedling:
    """One corpus file, with what the mutator needs precomputed."""

    name: str
    data: bytes
    kind: str  # "le" (V3/V4/V5 as stored), "swapped" (byte-swapped V3), "kfpkg"
    base: bytes  # the little-endian kmodel the structure-aware mutations apply to
    layout: Layout
    member: str | None = None  # kfpkg: name of the kmodel member
    members: list[tuple[str, bytes]] = field(default_factory=list)  # kfpkg: all members in order
    swapped: bool = False  # the kmodel (or kfpkg member) is a byte-swapped V3: mutate ``base``, swap back


@dataclass
class Case:
    index: int
    model: str
    mutation: str
    data: bytes


def load_corpus(models_dir: Path) -> list[Seedling]:
    """Every ``*.kmodel`` and ``*.kfpkg`` below ``models_dir`` (sorted, so case numbers are stable)."""
    out = []
    files = sorted(p for p in models_dir.rglob("*") if p.suffix in (".kmodel", ".kfpkg") and p.is_file())
    for p in files:
        data = p.read_bytes()
        name = str(p.relative_to(models_dir))
        if p.suffix == ".kfpkg":
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                members = [(i.filename, z.read(i)) for i in z.infolist()]
            member = next(n for n, _ in members if n.lower().endswith(".kmodel"))
            inner = dict(members)[member]
            swapped = inner[:4] == b"\x00\x00\x00\x03"
            base = swap_words(inner) if swapped else inner
            out.append(Seedling(name, data, "kfpkg", base, layout_of(base), member, members, swapped))
        elif data[:4] == b"\x00\x00\x00\x03":
            base = swap_words(data)
            out.append(Seedling(name, data, "swapped", base, layout_of(base), swapped=True))
        else:
            out.append(Seedling(name, data, "le", data, layout_of(data)))
    return out


# ---------------------------------------------------------------------------------------------
# value choices
# ---------------------------------------------------------------------------------------------

_EDGE = [0, 1, 2, 3, 4, 7, 8, 15, 16, 0x3F, 0x40, 0x7F, 0x80, 0xFF, 0x100, 0x3FF, 0x400, 0xFFFF, 0x10000,
         0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFE, 0xFFFF_FFFF, K210_MAIN, K210_MAIN + 1, K210_KPU, K210_KPU + 1,
         K210_FLASH, 1 << 20, 1 << 24, 1 << 28, 32768, 32767]


def interesting_u32(rng: random.Random, old: int, file_len: int) -> int:
    """A value likely to break a size, count, offset or shape check (wrapped to 32 bits)."""
    pick = rng.random()
    if pick < 0.45:
        v = rng.choice(_EDGE)
    elif pick < 0.7:
        v = rng.choice([old + 1, old - 1, old * 2, old * 16, old // 2, old + 8, old - 8, old + 4, old ^ 0x80000000])
    elif pick < 0.85:
        v = rng.choice([file_len, file_len + 1, file_len - 1, file_len - old, file_len // 2, file_len * 4])
    elif pick < 0.93:
        v = old ^ (1 << rng.randrange(32))
    else:
        v = rng.getrandbits(32)
    return v & 0xFFFF_FFFF


def _write_u32(buf: bytearray, off: int, value: int) -> None:
    if off + 4 <= len(buf):
        struct.pack_into("<I", buf, off, value & 0xFFFF_FFFF)


def _read(buf: bytes | bytearray, f: Field) -> int:
    if f.offset + f.size > len(buf):
        return 0
    return struct.unpack_from("<Q" if f.size == 8 else "<I", buf, f.offset)[0]


# ---------------------------------------------------------------------------------------------
# mutations of a little-endian kmodel (return description)
# ---------------------------------------------------------------------------------------------


def _pick_field(rng: random.Random, lay: Layout, kinds: tuple[str, ...] | None = None) -> Field | None:
    fields = [f for f in lay.fields if kinds is None or f.kind in kinds]
    if not fields:
        return None
    by_kind: dict[str, list[Field]] = {}
    for f in fields:
        by_kind.setdefault(f.kind, []).append(f)
    return rng.choice(by_kind[rng.choice(sorted(by_kind))])


def mutate_truncate(rng: random.Random, buf: bytearray, lay: Layout) -> tuple[bytearray, str]:
    cuts = [(o, n) for o, n in lay.boundaries if 0 <= o <= len(buf)] or [(len(buf) // 2, "middle")]
    off, name = rng.choice(cuts)
    if rng.random() < 0.3:
        off = max(0, min(len(buf), off + rng.choice([-4, -1, 1, 4])))
        name = f"near {name}"
    return buf[:off], f"truncate to {off} bytes ({name})"


def mutate_field(rng: random.Random, buf: bytearray, lay: Layout, kinds=None) -> tuple[bytearray, str]:
    f = _pick_field(rng, lay, kinds)
    if f is None:
        return mutate_flip(rng, buf, lay)
    old = _read(buf, f)
    if f.size == 8:  # a register word: change one bit field's worth of bits
        byte = rng.randrange(8)
        value = old
        if rng.random() < 0.5:
            value ^= 1 << rng.randrange(64)
        else:
            value = (old & ~(0xFF << (8 * byte))) | (rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.getrandbits(8)]) << (8 * byte))
        if f.offset + 8 <= len(buf):
            struct.pack_into("<Q", buf, f.offset, value)
        return buf, f"set {f.name} @0x{f.offset:x} from 0x{old:016x} to 0x{value:016x}"
    if f.kind == "opcode":
        value = random_opcode(rng, lay)
    else:
        value = interesting_u32(rng, old, len(buf))
        if f.signed and rng.random() < 0.3:
            value = rng.choice([-1, -2, -0x8000_0000, 0x7FFF_FFFF]) & 0xFFFF_FFFF
    _write_u32(buf, f.offset, value)
    return buf, f"set {f.name} ({f.kind}) @0x{f.offset:x} from 0x{old:x} to 0x{value:x}"


def random_opcode(rng: random.Random, lay: Layout) -> int:
    pick = rng.random()
    if pick < 0.55 and lay.opcodes:
        return rng.choice(lay.opcodes)
    if pick < 0.85:
        return rng.randrange(0x2100)
    return rng.getrandbits(32)


def mutate_opcode(rng: random.Random, buf: bytearray, lay: Layout) -> tuple[bytearray, str]:
    return mutate_field(rng, buf, lay, kinds=("opcode",))


def mutate_flip(rng: random.Random, buf: bytearray, lay: Layout) -> tuple[bytearray, str]:
    if not buf:
        return bytearray(b"\x00"), "empty file -> one zero byte"
    n = rng.choice([1, 1, 2, 4, 8, 32])
    head = min(len(buf), max(64, max((f.offset + f.size for f in lay.fields if f.kind != "register"), default=64)))
    done = []
    for _ in range(n):
        off = rng.randrange(head) if rng.random() < 0.6 else rng.randrange(len(buf))
        if rng.random() < 0.7:
            buf[off] ^= 1 << rng.randrange(8)
            done.append(f"flip 0x{off:x}")
        else:
            buf[off] = rng.getrandbits(8)
            done.append(f"byte 0x{off:x}=0x{buf[off]:02x}")
    return buf, "random " + ", ".join(done)


def mutate_multi(rng: random.Random, buf: bytearray, lay: Layout) -> tuple[bytearray, str]:
    descs = []
    for _ in range(rng.choice([2, 3])):
        buf, d = mutate_field(rng, buf, lay)
        descs.append(d)
    return buf, "; ".join(descs)


_MUTATORS = [(mutate_truncate, 0.20), (mutate_field, 0.38), (mutate_opcode, 0.14), (mutate_flip, 0.16),
             (mutate_multi, 0.12)]


def mutate_kmodel(rng: random.Random, base: bytes, lay: Layout) -> tuple[bytes, str]:
    """One structure-aware mutation of a little-endian kmodel."""
    r = rng.random()
    for fn, weight in _MUTATORS:
        if r < weight:
            break
        r -= weight
    out, desc = fn(rng, bytearray(base), lay)
    return bytes(out), desc


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, payload in members:
            z.writestr(name, payload)
    return buf.getvalue()


def make_case(corpus: list[Seedling], seed: int, index: int) -> Case:
    """Case ``index`` of the campaign with ``seed`` (deterministic)."""
    s = corpus[index % len(corpus)]
    rng = random.Random(f"{seed}:{index}")
    if s.kind == "kfpkg" and rng.random() < 0.2:
        # the zip bytes themselves: truncation or flips
        lay = Layout(None)
        eocd = s.data.rfind(b"PK\x05\x06")
        cd = s.data.find(b"PK\x01\x02")
        for off, name in ((30, "local header"), (cd, "central directory"), (eocd, "end of central directory")):
            if off > 0:
                lay.mark(off, name)
                lay.add(off, f"zip {name} signature", "word")
        lay.add(eocd + 10, "zip entry count", "count")
        lay.add(eocd + 12, "zip central directory size", "size")
        lay.add(eocd + 16, "zip central directory offset", "offset")
        lay.add(18, "zip local compressed size", "size")
        lay.add(8, "zip compression method", "word")
        lay.add(6, "zip flags (bit 0: encrypted)", "word")
        data, desc = mutate_kmodel(rng, s.data, lay)
        return Case(index, s.name, "zip bytes: " + desc, data)
    data, desc = mutate_kmodel(rng, s.base, s.layout)
    if s.swapped:
        data = swap_words(data)
        desc += " (in the little-endian form, swapped back)"
    if s.kind == "kfpkg":
        data = _zip([(n, data if n == s.member else p) for n, p in s.members])
        desc = f"member {s.member}: {desc}, re-zipped"
    return Case(index, s.name, desc, data)


# ---------------------------------------------------------------------------------------------
# non-kmodel files
# ---------------------------------------------------------------------------------------------


def _png() -> bytes:
    import zlib

    def chunk(tag: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + tag + payload + struct.pack(">I", zlib.crc32(tag + payload))

    raw = b"".join(b"\x00" + bytes([x * 16, 0, 255 - x * 16]) * 16 for x in range(16))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def non_kmodels(shared: Path, corpus: list[Seedling]) -> list[tuple[str, bytes]]:
    """Files people mistake for models, each with a label; missing shared files are left out."""
    rng = random.Random(1234)
    out: list[tuple[str, bytes]] = [("empty file", b"")]
    images = shared / "images"
    for pattern, label in (("*.jpg", "JPEG image"), ("*.bmp", "BMP image"), ("*.png", "PNG image")):
        found = sorted(images.glob(pattern)) if images.is_dir() else []
        if found:
            out.append((f"{label} {found[0].name}", found[0].read_bytes()))
    if not any(label.startswith("PNG") for label, _ in out):
        out.append(("PNG image (generated 16x16)", _png()))
    tflite = sorted((shared / "reference").glob("*.tflite")) if (shared / "reference").is_dir() else []
    if tflite:
        out.append((f"TFLite model {tflite[0].name}", tflite[0].read_bytes()))
    out.append(("random bytes (4 KiB)", bytes(rng.getrandbits(8) for _ in range(4096))))
    out.append(("random bytes (3 bytes)", b"\x9c\x11\xe0"))
    # MaixPy's encrypted models are AES-CBC ciphertext: uniformly random-looking from byte 0
    out.append(("encrypted-looking file (AES-like ciphertext, 64 KiB)", bytes(rng.getrandbits(8) for _ in range(65536))))
    kfpkgs = [s for s in corpus if s.kind == "kfpkg"]
    kmodels = [s for s in corpus if s.kind == "le" and s.layout.version in (3, 4)]
    if kfpkgs:
        out.append((f"kfpkg passed as a model ({kfpkgs[0].name})", kfpkgs[0].data))
    if len(kmodels) >= 2:
        two = _zip([(kmodels[0].name.replace("/", "_"), kmodels[0].data), (kmodels[1].name.replace("/", "_"), kmodels[1].data)])
        out.append(("zip with two kmodels", two))
    out.append(("zip with no kmodel", _zip([("flash-list.json", b'{"version": "0.1.0", "files": []}')])))
    out.append(("HTML page saved instead of the model", b"<!DOCTYPE html>\n<html><head><title>Download</title></head></html>\n"))
    out.append(("gzip-compressed model", b"\x1f\x8b\x08\x00" + bytes(60)))
    out.append(("Git LFS pointer", b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 388776\n"))
    return out
