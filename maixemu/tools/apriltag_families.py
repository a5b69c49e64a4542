"""Regenerate the classic AprilTag code families with the 2010 AprilTag generator's search (a developer tool).

The families tag16h5, tag25h7, tag25h9, tag36h10 and tag36h11 (the code tables of AprilTag 1/2
and of the K210 firmware) are greedy lexicodes, produced deterministically by the Java
``april.tag.TagFamilyGenerator(nbits, minhamming, mincomplexity)`` of the April toolkit:

* the search starts at ``V0 = new java.util.Random(nbits*10000 + minhamming*100 + mincomplexity)
  .nextLong()`` and visits every ``nbits``-bit value once: ``v = (v + 982451653) mod 2**nbits``;
* a value is kept when its four rotations (``TagFamily.rotate90`` of the row-major d x d grid) are
  pairwise at least ``minhamming`` bits apart, it is at least ``minhamming`` bits from every
  rotation of every code kept before, and its *complexity* — the number of rectangles a greedy
  painter needs to draw its grid (bit ``y*d + x`` from the least significant, at each step the
  first rectangle/colour with the largest strict error reduction, scanned y0, y1, x0, x1, colour)
  — is at least ``mincomplexity`` (default ``min(10, nbits // 3)``).

This module re-implements that search (written from the algorithm's description, vectorised with
numpy in chunks: each chunk is filtered against the codes already kept, and only the survivors are
walked in order). ``tests/firmware/test_apriltag_generator.py`` proves it by regenerating tag16h5
(all of it) and the first codes of tag25h9/tag36h10/tag36h11 against OpenCV's tables, and checks
the committed tag25h7 table against the firmware's when the MaixPy mirror is present.

``python -m maixemu.tools.apriltag_families 25 7`` rewrites
``maixemu/firmware/image/_tag25h7.py`` (2**25 candidates: about a minute).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

PRIME = 982451653
_JAVA_MULT = 0x5DEECE66D
_JAVA_MASK = (1 << 48) - 1


def java_random_next_long(seed: int) -> int:
    """``new java.util.Random(seed).nextLong()`` (48-bit LCG, two signed 32-bit draws)."""
    s = (seed ^ _JAVA_MULT) & _JAVA_MASK

    def next32() -> int:
        nonlocal s
        s = (s * _JAVA_MULT + 0xB) & _JAVA_MASK
        v = s >> 16
        return v - (1 << 32) if v & (1 << 31) else v

    hi = next32()
    lo = next32()
    return (hi << 32) + lo  # Java: ((long) next(32) << 32) + next(32), the low draw sign-extended


def default_complexity(nbits: int) -> int:
    return min(10, nbits // 3)


def rotate90(w: int, d: int) -> int:
    """``TagFamily.rotate90``: the d x d grid turned a quarter (bit ``r + d*c`` read for r from d-1
    down, c up, appended most significant first)."""
    out = 0
    for r in range(d - 1, -1, -1):
        for c in range(d):
            out = (out << 1) | ((w >> (r + d * c)) & 1)
    return out


def _rotation_sources(d: int) -> np.ndarray:
    """Output bit k of :func:`rotate90` comes from input bit ``src[k]`` (for vectorising it)."""
    order = [r + d * c for r in range(d - 1, -1, -1) for c in range(d)]  # appended MSB first
    n = d * d
    return np.array([order[n - 1 - k] for k in range(n)], np.uint64)


def _rotate90_many(v: np.ndarray, src: np.ndarray) -> np.ndarray:
    out = np.zeros_like(v)
    one = np.uint64(1)
    for k, s in enumerate(src):
        out |= ((v >> s) & one) << np.uint64(k)
    return out


def _rects(d: int) -> tuple[np.ndarray, ...]:
    """Every rectangle (y0, y1, x0, x1) in the painter's scan order."""
    r = np.array([(y0, y1, x0, x1) for y0 in range(d) for y1 in range(y0, d)
                  for x0 in range(d) for x1 in range(x0, d)], np.int64)
    return r[:, 0], r[:, 1], r[:, 2], r[:, 3]


def _box_sums(m: np.ndarray, rects) -> np.ndarray:
    y0, y1, x0, x1 = rects
    c = np.pad(np.cumsum(np.cumsum(m.astype(np.int64), 0), 1), ((1, 0), (1, 0)))
    return c[y1 + 1, x1 + 1] - c[y0, x1 + 1] - c[y1 + 1, x0] + c[y0, x0]


def complexity(v: int, d: int) -> int:
    """``computeComplexity``: rectangles the greedy painter needs for the code's grid.

    Each step paints the rectangle and colour with the largest strict error reduction, the first
    one in the scan order (y0, y1, x0, x1, colour) on ties; a repainted cell counts +1 when it
    becomes right, -1 when a right cell becomes wrong.
    """
    a = np.array([(v >> i) & 1 for i in range(d * d)], np.int8).reshape(d, d)
    out = np.full((d, d), -1, np.int8)
    rects = _rects(d)
    count = 0
    while (a != out).any():
        right = a == out
        gains = np.stack([_box_sums(~right & (a == c), rects) - _box_sums(right & (a != c), rects)
                          for c in (0, 1)], axis=1)  # (rect, colour) in scan order
        best = int(np.argmax(gains))  # the first of the largest, as the strict ``>`` keeps it
        r, colour = divmod(best, 2)
        y0, y1, x0, x1 = (int(t[r]) for t in rects)
        out[y0:y1 + 1, x0:x1 + 1] = colour
        count += 1
    return count


def _far_from_all(v: np.ndarray, codes: np.ndarray, minhamming: int, block: int = 64) -> np.ndarray:
    """Mask of the ``v`` at least ``minhamming`` bits from every one of ``codes`` (candidates
    drop out block by block, so a dense family costs little per candidate)."""
    keep = np.ones(v.size, bool)
    idx = np.arange(v.size)
    for start in range(0, codes.size, block):
        if not idx.size:
            break
        blk = codes[start:start + block]
        near = (np.bitwise_count(v[idx, None] ^ blk[None, :]) < minhamming).any(axis=1)
        keep[idx[near]] = False
        idx = idx[~near]
    return keep


def generate(nbits: int, minhamming: int, mincomplexity: int | None = None, max_codes: int | None = None,
             chunk: int = 1 << 16) -> list[int]:
    """The family's codes in the generator's order (stop early after ``max_codes``)."""
    d = int(round(nbits ** 0.5))
    if d * d != nbits:
        raise ValueError("the classic families have a square number of bits")
    if mincomplexity is None:
        mincomplexity = default_complexity(nbits)
    mask = (1 << nbits) - 1
    v0 = java_random_next_long(nbits * 10000 + minhamming * 100 + mincomplexity)
    src = _rotation_sources(d)
    codes: list[int] = []
    rot = np.zeros(0, np.uint64)  # every rotation of every kept code
    total = 1 << nbits
    steps = np.arange(1, chunk + 1, dtype=np.uint64) * np.uint64(PRIME)  # < 2**46: no overflow
    for first in range(0, total, chunk):
        n = min(chunk, total - first)
        base = np.uint64((v0 + first * PRIME) & mask)
        v = (base + steps[:n]) & np.uint64(mask)
        r1 = _rotate90_many(v, src)
        r2 = _rotate90_many(r1, src)
        r3 = _rotate90_many(r2, src)
        ok = np.ones(n, bool)
        for a, b in ((v, r1), (v, r2), (v, r3), (r1, r2), (r1, r3), (r2, r3)):
            ok &= np.bitwise_count(a ^ b) >= minhamming
        cand = np.flatnonzero(ok)
        if rot.size and cand.size:
            cand = cand[_far_from_all(v[cand], rot, minhamming)]
        added: list[int] = []
        for i in cand:  # in search order: the codes kept within this chunk
            c = int(v[i])
            if any(bin(c ^ w).count("1") < minhamming for w in added):
                continue
            if complexity(c, d) < mincomplexity:
                continue
            codes.append(c)
            w = c
            for _ in range(4):
                added.append(w)
                w = rotate90(w, d)
            if max_codes is not None and len(codes) >= max_codes:
                return codes
        if added:
            rot = np.concatenate([rot, np.array(added, np.uint64)])
    return codes


_TABLE = Path(__file__).resolve().parents[1] / "firmware" / "image" / "_tag25h7.py"

_HEADER = '''"""The tag25h7 AprilTag family (242 codes, d = 5, minimum Hamming distance 7), the table the
K210 firmware's ``find_apriltags(families=image.TAG25H7)`` decodes against.

Generated, not copied: ``python -m maixemu.tools.apriltag_families 25 7`` ran our re-implementation
of the 2010 AprilTag generator's search (``maixemu/tools/apriltag_families.py``: Java-Random start,
prime stride, rotation-aware Hamming test, greedy-rectangle complexity >= 8) and wrote this list.
The same generator reproduces tag16h5 and the start of tag25h9/tag36h10/tag36h11 code for code,
and the test compares this table with the firmware's when the MaixPy mirror is present.
"""

CODES = (
'''


def write_table(codes: list[int], path: Path = _TABLE) -> None:
    body = "".join(f"    0x{c:07x},\n" for c in codes)
    path.write_text(_HEADER + body + ")\n")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nbits", type=int)
    ap.add_argument("minhamming", type=int)
    ap.add_argument("--complexity", type=int, default=None)
    ap.add_argument("--max-codes", type=int, default=None)
    ap.add_argument("--print", action="store_true", help="print the codes instead of writing _tag25h7.py")
    a = ap.parse_args(argv)
    codes = generate(a.nbits, a.minhamming, a.complexity, a.max_codes)
    if a.print or (a.nbits, a.minhamming) != (25, 7):
        for c in codes:
            print(f"0x{c:x}")
        print(f"{len(codes)} codes")
        return
    write_table(codes)
    print(f"{len(codes)} codes -> {_TABLE}")


if __name__ == "__main__":
    main()
