"""image.get_affine_transform against the firmware's affine.c (compiled from the mirror with the
firmware's flags, no fused multiply-add), every float of the matrix bit for bit.

Under ``-ffast-math`` GCC rewrites ``imlib_affine_getTansform`` (read from its optimised tree dump):
``A[i][k] /= cnt`` becomes a multiply by ``1/cnt``, the svd22 denominator
``a0*a0 - a1*a1 + a2*a2 - a3*a3`` is summed as ``((a2*a2 + a0*a0) - a1*a1) - a3*a3``, and the two
divisions of the variances by ``cnt`` fold into ``scale = (1 / (var1 + var0)) * (cnt * (S0 + S1))``.
Summed as written, a third of random point sets differ from the build in a last bit.
"""

from __future__ import annotations

import subprocess

import numpy as np

from firmware_c import IMG_DIR, build, firmware_source, imlib_shim, needs_firmware_c, strip_includes
from maixemu.firmware import image

_DRIVER = r"""
int main(void) {
    int cnt;
    while (scanf("%d", &cnt) == 1) {
        uint16_t src[20], dst[20];
        for (int i = 0; i < 2 * cnt; i++) { int v; if (scanf("%d", &v) != 1) return 2; src[i] = v; }
        for (int i = 0; i < 2 * cnt; i++) { int v; if (scanf("%d", &v) != 1) return 2; dst[i] = v; }
        float T[9];
        imlib_affine_getTansform(src, dst, cnt, T);
        for (int i = 0; i < 9; i++) { unsigned u; memcpy(&u, &T[i], 4); printf("%08x ", u); }
        printf("\n");
    }
    return 0;
}
"""


def _point_sets(rng, n: int):
    """Point lists of 1..10 points and their images under a random near-similarity plus noise."""
    cases = []
    for _ in range(n):
        cnt = int(rng.integers(1, 11))
        base = rng.integers(0, 300, (cnt, 2))
        m = np.array([[rng.uniform(0.5, 1.5), rng.uniform(-0.3, 0.3)], [rng.uniform(-0.3, 0.3), rng.uniform(0.5, 1.5)]])
        dst = np.clip(base @ m.T + rng.uniform(-50, 50, 2) + rng.normal(0, 3, (cnt, 2)), 0, 400).astype(int)
        cases.append(([tuple(map(int, p)) for p in base], [tuple(map(int, p)) for p in dst]))
    return cases


@needs_firmware_c
def test_get_affine_transform_equals_the_firmwares_build(tmp_path):
    text = firmware_source(f"{IMG_DIR}/affine.c")
    exe = build(tmp_path, "affine", imlib_shim() + strip_includes(text[:text.index("int imlib_affine_ai(")]) + _DRIVER)
    cases = _point_sets(np.random.default_rng(0), 400)
    lines = [f"{len(s)} " + " ".join(str(v) for p in s + d for v in p) for s, d in cases]
    out = subprocess.run([str(exe)], input=("\n".join(lines) + "\n").encode(), capture_output=True, check=True,
                         timeout=120).stdout.decode().splitlines()
    for k, ((src, dst), line) in enumerate(zip(cases, out)):
        ours = np.array(image.get_affine_transform([list(p) for p in src], [list(p) for p in dst]), np.float32)
        theirs = np.array([int(v, 16) for v in line.split()], np.uint32).view(np.float32)
        nan = np.isnan(theirs)  # one point: 0/0 variances
        assert np.array_equal(np.isnan(ours), nan) and np.array_equal(ours[~nan].view(np.uint32),
                                                                      theirs[~nan].view(np.uint32)), (k, src, dst)
