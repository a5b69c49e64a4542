"""Build pieces of the firmware's own C (read from the MaixPy-v1 mirror at test time) into small PC
programs, so a test can compare maixemu with what the firmware's code computes on the same input.

Nothing of the firmware is kept in the project: the sources are read from ``../.mirror`` (developer
machines) and compiled into ``tmp_path`` with the firmware's flags (``compile_flags.cmake``: gnu11,
-Os, -ffast-math, -fsingle-precision-constant, -ffloat-store, and unsigned ``char`` as on RISC-V).
On the PC the compiler does not contract ``a*b+c`` into FMA, so these builds are the firmware's
*no-FMA* arithmetic. Tests using this skip cleanly when the mirror or a C compiler is absent.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from _shared import REPO_ROOT

MIRROR = REPO_ROOT.parent / ".mirror" / "sipeed+MaixPy-v1" / "repo"
IMG_DIR = "components/micropython/port/src/omv/img"
FIRMWARE_FLAGS = ["-std=gnu11", "-Os", "-ffast-math", "-fsingle-precision-constant", "-ffloat-store",
                  "-funsigned-char", "-w"]


def have_firmware_c() -> bool:
    return MIRROR.is_dir() and shutil.which("gcc") is not None


needs_firmware_c = pytest.mark.skipif(
    not have_firmware_c(), reason="needs the MaixPy-v1 mirror (../.mirror, developer machines) and gcc")


def firmware_source(path: str) -> str:
    """A file of the firmware at the golden commit's tree (``HEAD`` of the mirror)."""
    return subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:{path}"], check=True,
                          capture_output=True, text=True).stdout


#: What imlib's finders need from the rest of the firmware, written for the PC: the allocators
#: (plain malloc), the list and rectangle helpers (same semantics as collections.c / imlib.c), a
#: grayscale ``image_t``, and fmath.h's inline functions as the header defines them (fast_sqrtf is
#: the ``fsqrt.s`` instruction in inline asm there, ``sqrtss`` in inline asm here, so that the compiler
#: rewrites neither). fmath.c itself is appended from the mirror.
_SHIM = r"""
#include <stdlib.h>
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <stdio.h>
#include <math.h>
#include <float.h>
#define IMAGE_BPP_BINARY 0
#define IMAGE_BPP_GRAYSCALE 1
#define IMAGE_BPP_RGB565 2
typedef struct { int w, h, bpp; union { uint8_t *data; uint8_t *pixels; }; } image_t;
typedef struct { int16_t x, y; } point_t;
typedef struct { int16_t x, y, w, h; } rectangle_t;
typedef struct { size_t n, len; char *d; } list_t;
static void *umm_malloc(size_t n) { return malloc(n); }
static void umm_free(void *p) { free(p); }
static void *umm_realloc(void *p, size_t n) { return realloc(p, n); }
static void *umm_calloc(size_t a, size_t b) { return calloc(a, b); }
static void umm_init_x(size_t n) { (void) n; }
static size_t fb_avail(void) { return 1 << 20; }
static void *fb_alloc(size_t n) { return malloc(n); }
static void *fb_alloc0(size_t n) { return calloc(1, n); }
static void fb_free(void) { }
static void fb_alloc_fail(void) { abort(); }
static void *xalloc(size_t n) { return malloc(n + 1); }
static void list_init(list_t *l, size_t len) { l->n = 0; l->len = len; l->d = NULL; }
static size_t list_size(list_t *l) { return l->n; }
static void list_push_back(list_t *l, void *v) {
    l->d = realloc(l->d, (l->n + 1) * l->len); memcpy(l->d + l->n * l->len, v, l->len); l->n++; }
static void list_pop_front(list_t *l, void *v) {
    memcpy(v, l->d, l->len); memmove(l->d, l->d + l->len, (l->n - 1) * l->len); l->n--; }
static void list_copy(list_t *dst, list_t *src) { *dst = *src; }
static void rectangle_init(rectangle_t *r, int x, int y, int w, int h) { r->x = x; r->y = y; r->w = w; r->h = h; }
static bool rectangle_overlap(rectangle_t *a, rectangle_t *b) {
    return a->x < b->x + b->w && a->y < b->y + b->h && b->x < a->x + a->w && b->y < a->y + a->h; }
static void rectangle_united(rectangle_t *a, rectangle_t *b) {
    int x = a->x < b->x ? a->x : b->x, y = a->y < b->y ? a->y : b->y;
    int r = a->x + a->w > b->x + b->w ? a->x + a->w : b->x + b->w;
    int t = a->y + a->h > b->y + b->h ? a->y + a->h : b->y + b->h;
    a->x = x; a->y = y; a->w = r - x; a->h = t - y; }
#define IMAGE_COMPUTE_BINARY_PIXEL_ROW_PTR(img, y) ((uint32_t *) 0)
#define IMAGE_GET_BINARY_PIXEL_FAST(row, x) 0
#define COLOR_BINARY_TO_GRAYSCALE(p) 0
#define IMAGE_COMPUTE_RGB565_PIXEL_ROW_PTR(img, y) ((uint16_t *) 0)
#define IMAGE_GET_RGB565_PIXEL_FAST(row, x) 0
#define COLOR_RGB565_TO_GRAYSCALE(p) 0
#if defined(__x86_64__) || defined(__i386__)
/* an instruction the compiler cannot see through, as the K210's ``fsqrt.s`` asm: -ffast-math must
   not fold sqrt(a)*sqrt(b) or 1/sqrt(sqrt(x)) into powf here when it cannot on the device */
static inline float fast_sqrtf(float x) { __asm__("sqrtss %1, %0" : "=x"(x) : "x"(x)); return x; }
#else
static inline float fast_sqrtf(float x) { return sqrtf(x); }
#endif
static inline int fast_floorf(float x) { return (int) (x); }
static inline int fast_ceilf(float x) { return (int) (x + 0.9999f); }
static inline int fast_roundf(float x) { return (int) (x); }
static inline float fast_fabsf(float d) { return fabsf(d); }
"""


def imlib_shim(*typedefs: str) -> str:
    """The shim, fmath.c's functions, and the named typedefs cut from the mirror's imlib.h."""
    import re

    header = firmware_source(f"{IMG_DIR}/include/imlib.h")
    parts = [_SHIM]
    for name in typedefs:
        m = re.search(r"typedef (?:struct|enum) " + re.escape(name) + r" \{.*?\}[^;]*;", header, re.S)
        parts.append(m.group(0))
    fmath = firmware_source(f"{IMG_DIR}/fmath.c").replace('#include "math.h"', "").replace('#include "fmath.h"', "")
    parts.append(fmath.replace(" inline float", " float"))
    return "\n".join(parts) + "\n"


#: The omv ``array_t`` the finders collect their results in (a growable array of pointers).
ARRAY_SHIM = r"""
typedef struct { int n; void **items; } array_t;
static void array_alloc(array_t **a, void (*f)(void *)) { (void) f; *a = calloc(1, sizeof(array_t)); }
static int array_length(array_t *a) { return a->n; }
static void *array_at(array_t *a, int i) { return a->items[i]; }
static void array_push_back(array_t *a, void *v) {
    a->items = realloc(a->items, (a->n + 1) * sizeof(void *)); a->items[a->n++] = v; }
static void *array_take(array_t *a, int i) {
    void *v = a->items[i]; memmove(a->items + i, a->items + i + 1, (a->n - i - 1) * sizeof(void *)); a->n--; return v; }
static void *array_pop_back(array_t *a) { return a->items[--a->n]; }
static void array_free(array_t *a) { free(a->items); free(a); }
static void xfree(void *p) { free(p); }
static void *rectangle_alloc(int x, int y, int w, int h) {
    rectangle_t *r = malloc(sizeof(rectangle_t)); rectangle_init(r, x, y, w, h); return r; }
"""


def strip_includes(text: str) -> str:
    """A firmware source without its ``#include`` lines (the shim provides what they declared)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("#include")) + "\n"


def shared_gray(name: str, size: tuple[int, int]):
    """A photo of ``../shared/images`` as gray uint8 at ``size`` (skips when ../shared is absent)."""
    import numpy as np
    from PIL import Image as PILImage

    from _shared import shared_path

    path = shared_path("images", name)
    if not path.is_file():
        pytest.skip(f"{path} not found (../shared is absent)")
    return np.asarray(PILImage.open(path).convert("L").resize(size))


def build(tmp_path: Path, name: str, source: str, extra_flags: tuple[str, ...] = ()) -> Path:
    """Compile one C translation unit (already assembled by the test) into ``tmp_path/name``."""
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    exe = tmp_path / name
    subprocess.run(["gcc", *FIRMWARE_FLAGS, *extra_flags, "-o", str(exe), str(src), "-lm"], check=True,
                   capture_output=True, text=True)
    return exe


def run(exe: Path, stdin: bytes) -> str:
    return subprocess.run([str(exe)], input=stdin, capture_output=True, check=True, timeout=120).stdout.decode("latin-1")


#: What apriltag.c needs beyond the shim: grayscale rows, the family enum, its allocator hooks and
#: ``fb_alloc0_all`` as MaixPy's: it always hands out OMV_FB_ALLOC_SIZE (700 KiB in the full build),
#: which sizes the cluster hash table (89600 buckets) and so orders the clusters.
_APRILTAG_SHIM = r"""
#define IMAGE_COMPUTE_GRAYSCALE_PIXEL_ROW_PTR(img, y) ((img)->data + (y) * (img)->w)
#define IMAGE_GET_GRAYSCALE_PIXEL_FAST(row, x) ((row)[x])
#define IM_MAX(a, b) ((a) > (b) ? (a) : (b))
#define IM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define UINT32_T_MASK 31
#define UINT32_T_SHIFT 5
typedef enum apriltag_families { TAG16H5 = 1, TAG25H7 = 2, TAG25H9 = 4, TAG36H10 = 8, TAG36H11 = 16,
                                 ARTOOLKIT = 32 } apriltag_families_t;
static void umm_alloc_fail(void) { abort(); }
static int mp_plat_print;
#define mp_printf(p, ...) printf(__VA_ARGS__)
#define OMV_FB_ALLOC_SIZE (700 * 1024)
static void *fb_alloc0_all(uint64_t *size) { *size = OMV_FB_ALLOC_SIZE; return calloc(1, OMV_FB_ALLOC_SIZE); }
"""


def apriltag_program(tmp_path: Path, name: str, driver: str) -> Path:
    """The mirror's apriltag.c whole (``imlib_find_apriltags``, ``imlib_find_rects``) with line.c's
    ``trace_line``/``pixel_magnitude`` and imlib.c's ``lb_clip_line`` (find_rects' edge magnitude),
    plus ``driver`` (a ``main``), compiled with the firmware's flags. ``quad_segment_maxima`` reads a
    buffer after freeing it, so freed bytes are kept intact, as the golden reference (and OpenMV's
    allocator) does. The cluster heap never runs out here (see ``_quads``)."""
    text = firmware_source(f"{IMG_DIR}/apriltag.c")
    text = text.replace('#include "imlib.h"', "").replace("#ifdef IMLIB_ENABLE_APRILTAGS", "", 1)
    text = text[:text.index("#ifdef IMLIB_ENABLE_ROTATION_CORR")]
    text = text.replace("#ifdef IMLIB_ENABLE_FIND_RECTS", "").replace("#endif //IMLIB_ENABLE_FIND_RECTS", "")
    line_c = firmware_source(f"{IMG_DIR}/line.c")
    trace = (line_c[line_c.index("static void pixel_magnitude"):line_c.index("static bool merge_line")]
             + line_c[line_c.index("size_t trace_line"):])
    imlib_c = firmware_source(f"{IMG_DIR}/imlib.c")
    clip = imlib_c[imlib_c.index("bool lb_clip_line"):imlib_c.index("/////////////////////\n// Rectangle Stuff")]
    shim = imlib_shim("find_apriltags_list_lnk_data", "find_rects_list_lnk_data", "line").replace(
        "static void umm_free(void *p) { free(p); }", "static void umm_free(void *p) { (void) p; }")
    return build(tmp_path, name, shim + _APRILTAG_SHIM + trace + clip + text + driver)


# ---------------------------------------------------------------------- imlib sources with the real imlib.h
OMV_DIR = "components/micropython/port/src/omv"

#: MicroPython and FatFs headers imlib.h includes that the image code under test does not use
_EMPTY_HEADERS = ("ff.h", "py/mpconfig.h")

#: the allocators for the PC: fb_alloc is the firmware's stack of frame-buffer blocks
ALLOC_SHIM = r"""
#include <stdlib.h>
#include <stdint.h>
static void *fb_blocks[64];
static int fb_top;
void *fb_alloc(uint64_t size) { fb_blocks[fb_top] = malloc(size ? size : 1); return fb_blocks[fb_top++]; }
void *fb_alloc0(uint64_t size) { fb_blocks[fb_top] = calloc(1, size ? size : 1); return fb_blocks[fb_top++]; }
void fb_free(void) { if (fb_top) free(fb_blocks[--fb_top]); }
void fb_free_all(void) { while (fb_top) fb_free(); }
void fb_alloc_fail(void) { abort(); }
uint64_t fb_avail(void) { return 1 << 26; }
void *xalloc(uint32_t size) { return malloc(size ? size : 1); }
void *xalloc0(uint32_t size) { return calloc(1, size ? size : 1); }
void xfree(void *mem) { free(mem); }
void *xrealloc(void *mem, uint32_t size) { return realloc(mem, size); }
void *umm_malloc(size_t size) { return malloc(size); }
void umm_free(void *p) { free(p); }
"""

#: reading and writing an ``image_t`` on the pipe (bpp, w, h, then the device memory)
IMAGE_IO = r"""
#include <stdio.h>
#include "imlib.h"
size_t io_nbytes(image_t *i) {
    return i->bpp == 0 ? ((i->w + 31) / 32) * 4 * i->h : (size_t) i->w * i->h * i->bpp; }
int io_int(void) { int v; if (fread(&v, 4, 1, stdin) != 1) exit(0); return v; }
float io_float(void) { float v; if (fread(&v, 4, 1, stdin) != 1) exit(1); return v; }
void io_read_image(image_t *i) {
    i->bpp = io_int(); i->w = io_int(); i->h = io_int();
    i->data = malloc(io_nbytes(i) + 4);
    if (fread(i->data, 1, io_nbytes(i), stdin) != io_nbytes(i)) exit(1);
}
void io_write_image(image_t *i) { fwrite(i->data, 1, io_nbytes(i), stdout); fflush(stdout); }
__attribute__((weak)) bool image_get_mask_pixel(image_t *ptr, int x, int y)
{
    if ((0 <= x) && (x < ptr->w) && (0 <= y) && (y < ptr->h)) {
        switch (ptr->bpp) {
            case IMAGE_BPP_BINARY: return IMAGE_GET_BINARY_PIXEL(ptr, x, y);
            case IMAGE_BPP_GRAYSCALE: return COLOR_GRAYSCALE_TO_BINARY(IMAGE_GET_GRAYSCALE_PIXEL(ptr, x, y));
            case IMAGE_BPP_RGB565: return COLOR_RGB565_TO_BINARY(IMAGE_GET_RGB565_PIXEL(ptr, x, y));
            default: return false;
        }
    }
    return false;
}
"""


def imlib_include_dir(root: Path) -> Path:
    """A folder of headers under which imlib's own ``.c`` files compile for the PC: the mirror's
    imlib.h, fmath.h, fsort.h, ... and the allocator headers, the default build's configuration
    (``config_defaults.mk``: full imlib, the 196608-entry YUV/LAB tables), empty MicroPython/FatFs
    headers."""
    inc = root / "inc"
    (inc / "py").mkdir(parents=True, exist_ok=True)
    (inc / "include").mkdir(exist_ok=True)
    for name in ("imlib.h", "imdefs.h", "font.h", "collections.h", "fsort.h"):
        (inc / name).write_text(firmware_source(f"{IMG_DIR}/include/{name}"))
    # fast_sqrtf is the K210's fsqrt.s in inline asm: sqrtss in inline asm here (see _SHIM)
    fmath = firmware_source(f"{IMG_DIR}/include/fmath.h")
    riscv = 'asm ("fsqrt.s %0, %1" : "=f" (x) : "f" (x));'
    assert riscv in fmath
    (inc / "fmath.h").write_text(fmath.replace(riscv, '\n#if defined(__x86_64__) || defined(__i386__)\n'
                                               '__asm__("sqrtss %1, %0" : "=x"(x) : "x"(x));\n#else\nx = sqrtf(x);\n#endif\n'))
    (inc / "include" / "font.h").write_text(firmware_source(f"{IMG_DIR}/include/font.h"))
    for name in ("array.h", "fb_alloc.h", "xalloc.h", "umm_malloc.h"):
        (inc / name).write_text(firmware_source(f"{OMV_DIR}/include/{name}"))
    (inc / "imlib_config.h").write_text(firmware_source(f"{OMV_DIR}/boards/MAIX/imlib_config.h"))
    for name in _EMPTY_HEADERS:
        (inc / name).write_text("")
    (inc / "py" / "obj.h").write_text("typedef void *mp_obj_t;\n")
    (inc / "global_config.h").write_text("#define CONFIG_MAIXPY_OMV_MINIMUM 0\n#define CONFIG_MAIXPY_OMV_CONV_YUV_FAST 1\n")
    return inc


def build_imlib(root: Path, name: str, sources: dict[str, str]) -> Path:
    """Compile imlib sources (file name -> text; the mirror's files and the test's own) with the
    firmware's flags against :func:`imlib_include_dir` into one program. Functions the sources
    reference but the test never calls (other parts of imlib) link to stubs that abort."""
    import re

    inc = imlib_include_dir(root)
    paths = []
    for file, text in {**sources, "alloc_shim.c": ALLOC_SHIM, "image_io.c": IMAGE_IO}.items():
        (root / file).write_text(text)
        paths.append(str(root / file))
    exe = root / name
    cmd = ["gcc", *FIRMWARE_FLAGS, f"-I{inc}", "-o", str(exe), *paths, "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        missing = sorted(set(re.findall(r"undefined reference to `([A-Za-z_0-9]+)'", done.stderr)))
        if not missing:
            raise RuntimeError(done.stderr)
        stubs = root / "abort_stubs.c"  # no header: each name only has to link
        stubs.write_text("#include <stdlib.h>\n" + "".join(f"void {m}(void) {{ abort(); }}\n" for m in missing))
        subprocess.run(cmd + [str(stubs)], check=True, capture_output=True, text=True)
    return exe


#: the two forms a differential test runs the emulator in (the ``jit`` fixtures' parameters)
FORMS = ("compiled", "numpy")


def both_forms(request, monkeypatch, *modules) -> str:
    """The body of a test's ``jit`` fixture (``params=FORMS``): "compiled" runs the compiled kernels
    (skipped without numba), "numpy" the numpy paths, each module's ``compiled()`` made False."""
    from maixemu.firmware.image import _jit

    if request.param == "compiled":
        if not _jit.compiled():
            pytest.skip("numba is not installed: only the numpy paths run")
    else:
        for module in modules:
            monkeypatch.setattr(module, "compiled", lambda: False)
    return request.param


def firmware_function(path: str, name: str) -> str:
    """The definition of function ``name`` cut from a firmware source (its line up to the closing
    brace at the start of a line), for tests that need one function of a file that does not build."""
    import re

    text = firmware_source(path)
    m = re.search(r"^[^\n;]*\b" + re.escape(name) + r"\s*\([^;{]*\)\s*\{.*?^\}", text, re.S | re.M)
    if m is None:
        raise LookupError(f"{name} not found in {path}")
    return m.group(0) + "\n"


class ImlibProcess:
    """A running :func:`build_imlib` program that answers one request per call on its pipe: the
    image (``image_t`` as the device holds it), then int32/float32 fields; it writes the image back."""

    def __init__(self, exe: Path):
        self.exe = exe
        self.proc = subprocess.Popen([str(exe)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def __call__(self, img, op: int, *fields, timeout: float = 60.0):
        import struct

        import numpy as np

        from maixemu.firmware.image import _kinds

        data = image_bytes(img) + struct.pack("<i", op)
        for f in fields:
            if isinstance(f, bytes):
                data += f
            elif isinstance(f, (float, np.floating)):
                data += struct.pack("<f", float(f))
            else:
                data += struct.pack("<i", int(f))
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        self.wait_for_answer(timeout)
        out = self.proc.stdout.read(_kinds.memory_size(img._fmt, img.width(), img.height(), 0))
        return from_memory(img._fmt, img.width(), img.height(), out)

    def wait_for_answer(self, timeout: float = 60.0) -> None:
        """Fail (instead of waiting forever) when the firmware's code does not answer: some of
        its functions loop forever on some inputs, as on the device."""
        import select

        assert self.proc.stdout is not None
        if not select.select([self.proc.stdout], [], [], timeout)[0]:
            self.proc.kill()
            raise TimeoutError(f"the firmware's C gave no answer within {timeout} s (it may loop forever here)")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def image_bytes(img) -> bytes:
    """An image as :data:`IMAGE_IO` reads it: bpp (0 bitmap, 1 gray, 2 RGB565), w, h, device memory."""
    import struct

    from maixemu.firmware import pixformat
    from maixemu.firmware.image import _kinds

    bpp = {pixformat.BINARY: 0, pixformat.GRAYSCALE: 1, pixformat.RGB565: 2}[img._fmt]
    return struct.pack("<iii", bpp, img.width(), img.height()) + _kinds.memory_bytes(img)


def from_memory(fmt: int, w: int, h: int, data: bytes):
    """Pixels of a format from the device memory the program wrote."""
    import numpy as np

    from maixemu.firmware import pixformat
    from maixemu.firmware.image import _kinds

    if fmt == pixformat.BINARY:
        return _kinds.unpack_bits(data, w, h)
    return np.frombuffer(data, np.uint16 if fmt == pixformat.RGB565 else np.uint8).reshape(h, w).copy()
