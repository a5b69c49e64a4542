"""The picojpeg port (``_jpeg_decode``) against picojpeg itself, on many generated and damaged JPEGs.

``picojpeg.c`` and the decoding loop of ``picojpeg_util.c`` (``pjpeg_load_from_file``, RGB565
output as ``image.Image(path)`` asks for it) are read from the MaixPy-v1 mirror at test time and
compiled on the host with the firmware's flags, behind a shim standing in for the MicroPython
headers; nothing of the firmware is kept in the project. Every file the generator makes (baseline
JPEGs of many sizes, qualities and samplings, grayscale ones, with and without restart markers,
then copies with flipped or cut bytes) must give the C's bytes, or fail where the C fails. The
same inputs also pin the compiled Huffman kernel to its Python twin (``MAIXEMU_NO_JIT`` path).
Skips cleanly without the mirror (developer machines only) or gcc.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from _shared import REPO_ROOT
from maixemu.firmware.image import _jit, _jpeg_decode

MIRROR = REPO_ROOT.parent / ".mirror" / "sipeed+MaixPy-v1" / "repo"
IMG_DIR = "components/micropython/port/src/omv/img"
FLAGS = ["-std=gnu11", "-Os", "-ffast-math", "-fsingle-precision-constant", "-ffloat-store", "-funsigned-char", "-w"]

needs_c = pytest.mark.skipif(not (MIRROR.is_dir() and shutil.which("gcc")),
                             reason="needs the MaixPy-v1 mirror (../.mirror, developer machines) and gcc")

_SHIM = r"""
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <errno.h>
typedef void *mp_obj_t;
typedef unsigned long mp_uint_t;
#define MP_OBJ_NULL ((mp_obj_t)0)
#define MP_EINVAL 22
#define MP_ENOMEM 12
#define OMV_INIT_BPP 2
#define mp_printf(where, ...) printf(__VA_ARGS__)
#define xalloc malloc
#define xfree free
static int mp_plat_print;
static mp_uint_t vfs_internal_read(mp_obj_t f, void *b, mp_uint_t n, int *e) { *e = 5; return 0; }
static mp_uint_t vfs_internal_size(mp_obj_t f) { return 0; }
typedef struct { int w_max, h_max; } fb_t;
static fb_t the_fb;
#define MAIN_FB() (&the_fb)
"""

_MAIN = r"""
/* argv: pairs of (input, output) paths. Output: "OK w h comps\n" + pixel memory, or "ERR err\n". */
int main(int argc, char **argv) {
    for (int a = 1; a + 1 < argc; a += 2) {
        FILE *f = fopen(argv[a], "rb");
        fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
        uint8_t *buf = malloc(n + 1); fread(buf, 1, n, f); fclose(f);
        int w, h, comps, err; pjpeg_scan_type_t st;
        uint8 *pix = pjpeg_load_from_file(MP_OBJ_NULL, buf, (uint32_t)n, &w, &h, &comps, &st, 0, true, NULL, 0, 0, &err);
        FILE *o = fopen(argv[a + 1], "wb");
        if (!pix) { fprintf(o, "ERR %d\n", err); }
        else { fprintf(o, "OK %d %d %d\n", w, h, comps); fwrite(pix, 1, (size_t)w * h * (comps == 1 ? 1 : 2), o); free(pix); }
        fclose(o); free(buf);
    }
    return 0;
}
"""


def _show(path: str) -> str:
    return subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:{path}"], check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="module")
def picojpeg(tmp_path_factory) -> Path:
    """The compiled decoder (picojpeg.c + pjpeg_load_from_file of picojpeg_util.c)."""
    d = tmp_path_factory.mktemp("picojpeg")
    (d / "picojpeg.h").write_text(_show(f"{IMG_DIR}/include/picojpeg.h"))
    (d / "picojpeg.c").write_text(_show(f"{IMG_DIR}/picojpeg.c"))
    util = _show(f"{IMG_DIR}/picojpeg_util.c")
    util = util[: util.index("typedef struct image_compare_results_tag")]  # the metrics and image_t glue
    util = "\n".join(line for line in util.splitlines() if not line.startswith('#include "'))
    (d / "util.c").write_text('#include "picojpeg.h"\n' + _SHIM + util + _MAIN)
    exe = d / "pjpeg"
    subprocess.run(["gcc", *FLAGS, "-I", str(d), "-o", str(exe), str(d / "picojpeg.c"), str(d / "util.c")],
                   check=True, capture_output=True)
    return exe


def _run_c(exe: Path, files: list[bytes], work: Path) -> list[tuple]:
    args = []
    for i, data in enumerate(files):
        (work / f"{i}.jpg").write_bytes(data)
        args += [str(work / f"{i}.jpg"), str(work / f"{i}.out")]
    subprocess.run([str(exe), *args], check=True, capture_output=True, timeout=600)
    out = []
    for i in range(len(files)):
        raw = (work / f"{i}.out").read_bytes()
        head, _, body = raw.partition(b"\n")
        fields = head.decode().split()
        out.append(("ERR",) if fields[0] == "ERR" else ("OK", int(fields[1]), int(fields[2]), int(fields[3]), body))
    return out


def _decode_py(data: bytes) -> tuple:
    try:
        kind, pix = _jpeg_decode.decode(data)
    except _jpeg_decode.JpegError:
        return ("ERR",)
    h, w = pix.shape
    return ("OK", w, h, 1 if kind == "gray" else 3, pix.astype("<u2" if kind == "rgb565" else np.uint8).tobytes())


# ---------------------------------------------------------------------- the inputs
def _scene(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Smooth gradients, hard edges and noise: every coefficient range the entropy coder can meet."""
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.stack([(xx * rng.integers(1, 9) + yy * rng.integers(0, 5)) % 256,
                    (yy * rng.integers(1, 9)) % 256, ((xx ^ yy) * rng.integers(1, 5)) % 256], -1).astype(np.int32)
    for _ in range(rng.integers(1, 6)):
        x0, y0 = rng.integers(0, w), rng.integers(0, h)
        img[y0:y0 + rng.integers(1, h + 1), x0:x0 + rng.integers(1, w + 1)] = rng.integers(0, 256, 3)
    img += rng.integers(-rng.integers(0, 60) - 1, rng.integers(0, 60) + 1, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


SAMPLINGS = ("444", "422", "420", "440", "411")


def generated_jpegs(count: int, seed: int = 1) -> list[bytes]:
    """Baseline JPEGs from OpenCV's libjpeg: sizes 1..90 px, qualities 1..100, the five samplings
    (picojpeg refuses 4:1:1), grayscale, restart intervals; then damaged copies of some."""
    import cv2

    rng = np.random.default_rng(seed)
    out: list[bytes] = []
    for i in range(count):
        h, w = int(rng.integers(1, 91)), int(rng.integers(1, 91))
        params = [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(1, 101))]
        if rng.random() < 0.3:
            params += [cv2.IMWRITE_JPEG_RST_INTERVAL, int(rng.integers(1, 6))]
        scene = _scene(rng, h, w)
        if i % 5 == 4:
            ok, enc = cv2.imencode(".jpg", cv2.cvtColor(scene, cv2.COLOR_RGB2GRAY), params)
        else:
            sampling = SAMPLINGS[i % len(SAMPLINGS)]
            params += [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, getattr(cv2, f"IMWRITE_JPEG_SAMPLING_FACTOR_{sampling}")]
            ok, enc = cv2.imencode(".jpg", scene[:, :, ::-1], params)
        assert ok
        out.append(enc.tobytes())
    damaged = []
    for data in out[: count // 2]:
        b = bytearray(data)
        sos = data.find(b"\xff\xda")
        start = sos + 2 + struct.unpack(">H", data[sos + 2:sos + 4])[0]
        mode = rng.integers(0, 3)
        if mode == 0 and len(b) - 2 > start:  # flip bytes of the entropy-coded data
            for _ in range(rng.integers(1, 4)):
                b[rng.integers(start, len(b) - 2)] ^= int(rng.integers(1, 256))
        elif mode == 1:  # cut the file short
            b = b[: int(rng.integers(start, len(b)))]
        else:  # a marker in the middle of the scan
            if len(b) - 2 > start:
                at = int(rng.integers(start, len(b) - 2))
                b[at:at + 2] = bytes([0xFF, int(rng.choice([0xD0, 0xD9, 0xC4, 0x01]))])
        damaged.append(bytes(b))
    return out + damaged


# ---------------------------------------------------------------------- the tests
@needs_c
def test_decoder_equals_picojpeg_on_generated_and_damaged_files(picojpeg, tmp_path):
    files = generated_jpegs(250)
    expected = _run_c(picojpeg, files, tmp_path)
    failures = sum(e[0] == "ERR" for e in expected)
    assert 0 < failures < len(files) // 3  # the damage reaches both outcomes
    mismatched = [i for i, (data, e) in enumerate(zip(files, expected)) if _decode_py(data) != e]
    assert mismatched == []


@needs_c
def test_decoder_equals_picojpeg_on_the_shared_photos(picojpeg, tmp_path):
    from _shared import SHARED_DIR

    photos = sorted((SHARED_DIR / "images").glob("*.jpg")) if (SHARED_DIR / "images").is_dir() else []
    if not photos:
        pytest.skip("../shared/images is absent")
    files = [p.read_bytes() for p in photos]
    expected = _run_c(picojpeg, files, tmp_path)
    assert [_decode_py(d) for d in files] == expected


def test_compiled_huffman_kernel_equals_its_python_twin():
    """The entropy decoder's numba kernel and the same statements run by Python agree on every
    generated file (coefficients and the status), damaged ones included."""
    kernel = _jpeg_decode._decode_scan
    for data in generated_jpegs(60, seed=7):
        try:
            frame = _jpeg_decode._parse(data)
            kind = _jpeg_decode._scan_type(frame)
        except _jpeg_decode.JpegError:
            continue
        got = []
        for use_python in (False, True):
            try:
                _jpeg_decode._KERNEL_PYTHON = use_python
                got.append(_jpeg_decode._decode_coefficients(data, frame, kind))
            except _jpeg_decode.JpegError as exc:
                got.append(exc.status)
            finally:
                _jpeg_decode._KERNEL_PYTHON = False
        if isinstance(got[0], np.ndarray):
            assert isinstance(got[1], np.ndarray) and np.array_equal(got[0], got[1])
        else:
            assert got[0] == got[1]
    assert kernel.__wrapped__ is not None


@pytest.mark.skipif(not _jit.compiled(), reason="numba is not installed: one form only")
def test_compiled_idct_and_assembly_equal_the_array_forms(monkeypatch):
    """``_idct_blocks`` and ``_assemble565`` (taken once kernels are served compiled) against the
    numpy IDCT and assembly, on every generated file (all samplings, odd sizes) and a photo (the
    array forms' scan is the Python twin)."""
    from _shared import SHARED_DIR

    photos = sorted((SHARED_DIR / "images").glob("*.jpg")) if (SHARED_DIR / "images").is_dir() else []
    checked = 0
    for data in generated_jpegs(60, seed=11) + [p.read_bytes() for p in photos[:1]]:
        try:
            kernels = _jpeg_decode.decode(data)
        except _jpeg_decode.JpegError as exc:
            kernels = exc.status
        monkeypatch.setattr(_jpeg_decode, "compiled", lambda: False)
        try:
            arrays = _jpeg_decode.decode(data)
        except _jpeg_decode.JpegError as exc:
            arrays = exc.status
        monkeypatch.undo()
        if isinstance(kernels, tuple):
            assert isinstance(arrays, tuple) and kernels[0] == arrays[0] and np.array_equal(kernels[1], arrays[1])
            checked += 1
        else:
            assert kernels == arrays
    assert checked > 40


def test_the_idct_and_assembly_kernels_python_twins():
    rng = np.random.default_rng(4)
    coef = np.where(rng.random((6, 64)) < 0.3, rng.integers(-32768, 32768, (6, 64)), 0).astype(np.int16)
    out = np.empty(coef.size, np.uint8)
    _jpeg_decode._idct_blocks.__wrapped__(coef.reshape(-1), out)
    monkey = _jpeg_decode.compiled
    try:
        _jpeg_decode.compiled = lambda: False
        want = _jpeg_decode.idct(coef)
    finally:
        _jpeg_decode.compiled = monkey
    assert np.array_equal(out.reshape(-1, 64), want)
    # a 2x2-sampled 20x13 picture: 2 x 1 MCUs of 6 blocks
    samples = rng.integers(0, 256, (2 * 6 * 64,)).astype(np.uint8)
    red, blue, green1, green = _jpeg_decode._colour_tables()
    pix = np.zeros((13, 20), np.uint16)
    _jpeg_decode._assemble565.__wrapped__(samples, 2, 6, 2, 2, red, blue, green1, green, pix)
    s = samples.reshape(1, 2, 6, 8, 8)
    y = s[:, :, :4].reshape(1, 2, 2, 2, 8, 8).transpose(0, 2, 4, 1, 3, 5).reshape(16, 32)[:13, :20].astype(np.intp)
    cb = np.repeat(np.repeat(s[0, :, 4].transpose(1, 0, 2).reshape(8, 16), 2, 0), 2, 1)[:13, :20]
    cr = np.repeat(np.repeat(s[0, :, 5].transpose(1, 0, 2).reshape(8, 16), 2, 0), 2, 1)[:13, :20]
    want = red[(y << 8) | cr] | blue[(y << 8) | cb] | green[(green1[(y << 8) | cb].astype(np.intp) << 8) | cr]
    assert np.array_equal(pix, want)
