"""chrominvar/illuminvar, remove_shadows, dump_roi, linpolar/logpolar, rotation_corr, flood_fill,
cartoon and find_domain against MaixPy-v1 d8901fd.

Digests (sha256 prefixes) are of what the firmware's own C functions (shadow_removal.c,
phasecorrelation.c, apriltag.c's imlib_rotation_corr with its float32 matd, blob.c/draw.c/filter.c
flood fills) produce for the synthetic inputs below when compiled on the host with the firmware's
flags (-ffast-math -fsingle-precision-constant, fused multiply-add on, as the K210's fmadd.s).
The other expectations are worked out from the C code by hand.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import maixemu.firmware.image as image
from maixemu.firmware.image import _color, _invariant, _polar, _tables
from maixemu.host import storage


def pat565(h: int, w: int) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    return ((x * 37 + y * 101 + (x * y) % 97) & 0xFFFF).astype(np.uint16)


def patgray(h: int, w: int) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    return ((x * 5 + y * 3 + (x * y) % 11) % 256).astype(np.uint8)


def blocks(h: int, w: int, levels: int, dtype) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    return (((x // 5) * 7 + (y // 4) * 3) % levels).astype(dtype)


def rgb(pix) -> image.Image:
    a = np.asarray(pix, np.uint16)
    img = image.Image(size=(a.shape[1], a.shape[0]))
    img._pix[...] = a
    return img


def gray(pix) -> image.Image:
    a = np.asarray(pix, np.uint8)
    img = image.Image(size=(a.shape[1], a.shape[0])).to_grayscale(True)
    img._pix[...] = a
    return img


def digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:32]


def c565(r: int, g: int, b: int) -> int:
    return int(_color.rgb888_to_565(np.array([r, g, b], np.uint8)))


# ---------------------------------------------------------------------- chrominvar / illuminvar
def test_fmath_tables_are_the_firmwares():
    # sincos_tab.c / xyz_tab.c (float32 bytes)
    assert digest(_polar.sin_table()) == "67333f6fdab7460b4da075a22b5293d2"
    assert digest(_polar.cos_table()) == "031a2ee4e21202838d9a253c99af2cbe"
    assert digest(_tables.xyz_table()) == "c1a50c826ba9dc9b482d6d61f339ca39"


def test_invariant_tables_match_the_c_code_on_all_65536_pixels():
    # imlib_chrominvar / imlib_illuminvar over every RGB565 value (identical with and without FMA)
    assert digest(_invariant.chrominvar_table().astype("<u2")) == "ac5d72fdd08952977fdd6be1883107ca"
    assert digest(_invariant.illuminvar_table().astype("<u2")) == "65394e78541564e36c4ea05c4d0e6a56"


def test_chrominvar_by_hand():
    img = rgb([[c565(255, 0, 0), c565(128, 128, 128), 0]])
    assert img.chrominvar() is img
    # red: all the linear light in R -> 255; gray: a third each -> int(255 / 3) = 85; black stays 0
    assert img._pix.tolist() == [[c565(255, 0, 0), c565(85, 85, 85), 0]]
    with pytest.raises(OSError, match="Image format is not supported!"):
        gray([[1]]).chrominvar()


# ---------------------------------------------------------------------- remove_shadows
def test_remove_shadows_against_a_reference():
    bg = c565(200, 100, 100)
    img = rgb([[c565(100, 50, 50), c565(250, 10, 10), c565(40, 20, 20), bg]])
    ref = rgb([[bg] * 4])
    img.remove_shadows(ref)
    # V = max channel: 100/200 = 0.5 -> shadow (take the reference); 250/200 >= 1 -> kept;
    # 40/200 = 0.2 <= 0.3 -> kept; 200/200 = 1.0 is not < 1 -> kept
    assert img._pix.tolist() == [[bg, c565(250, 10, 10), c565(40, 20, 20), bg]]


def test_remove_shadows_with_a_colour_or_a_bmp(tmp_path, board_state):
    img = rgb([[c565(100, 50, 50), c565(250, 10, 10)]])
    img.remove_shadows((200, 100, 100))
    assert int(img._pix[0, 0]) == c565(200, 100, 100)
    (tmp_path / "sd").mkdir()
    board_state.storage = storage.Storage(sd_dir=tmp_path / "sd", flash_dir=tmp_path / "sd")
    ref = rgb([[c565(200, 100, 100)] * 2])
    ref.save("/sd/ref.bmp")
    shaded = rgb([[c565(100, 50, 50), c565(250, 10, 10)]])
    shaded.remove_shadows("/sd/ref.bmp")
    assert np.array_equal(shaded._pix, img._pix)
    with pytest.raises(OSError, match="Images not equal!"):
        rgb([[1, 2, 3]]).remove_shadows("/sd/ref.bmp")
    with pytest.raises(NotImplementedError, match="percentile 12"):
        rgb([[1]]).remove_shadows()
    with pytest.raises(OSError, match="Images not equal!"):
        rgb([[1, 2]]).remove_shadows(rgb([[1]]))


# ---------------------------------------------------------------------- dump_roi
def test_dump_roi_prints_two_bytes_per_pixel(capsys):
    img = rgb(np.arange(20, dtype=np.uint16).reshape(2, 10) * 0x0101)
    assert img.dump_roi(1, 0, 9, 1) is None
    out = capsys.readouterr().out
    pairs = "".join(f"0x{v:02x} 0x{v:02x}; " for v in range(1, 10))
    # a newline after every 8th pixel, after the row, and at the end
    assert out == pairs[: 8 * len("0x01 0x01; ")] + "\n" + pairs[8 * len("0x01 0x01; "):] + "\n\n"
    g = gray(np.arange(8, dtype=np.uint8).reshape(2, 4))
    g.dump_roi((1, 0, 1, 1))  # byte offset 2 * (4 * 0 + 1): the gray pixels 2 and 3
    assert capsys.readouterr().out == "0x02 0x03; \n\n"


# ---------------------------------------------------------------------- polar
POLAR = {  # (pattern, linear, reverse) -> digest of the C output
    ("565", 0, 0): "aae1077475976231ddc27d63347851de", ("565", 0, 1): "c841b6e9a293825d1f272c76d0868504",
    ("565", 1, 0): "14f5bea01e443b87b194cbd2432fd7ed", ("565", 1, 1): "4970eb237c5744d884f14772cd989738",
    ("gray", 0, 0): "b5f889c587e6b582a8340966a1b1162d", ("gray", 0, 1): "cd8b9934273311df4b5561ffa9a7ceae",
    ("gray", 1, 0): "f9606454f669aacce103119835079d4c", ("gray", 1, 1): "e0ceba0c4820ee2caee7d4f1a162e9cc",
}


@pytest.mark.parametrize("key", sorted(POLAR))
def test_linpolar_and_logpolar(key):
    kind, linear, reverse = key
    img = rgb(pat565(48, 64)) if kind == "565" else gray(patgray(48, 64))
    out = (img.linpolar if linear else img.logpolar)(reverse=bool(reverse))
    assert out is img
    assert digest(img._pix) == POLAR[key]


# ---------------------------------------------------------------------- rotation_corr
ROTATION = [  # (x_rot, y_rot, z_rot, x_trans, y_trans, zoom, fov) -> digest of the C output
    ((0, 15, -5, 3, -2, 1.2, 60), "75d4c0e04481085db695275c726c04ae"),
    ((5, 5, 20, 0, 0, 0.8, 45), "52adce386fb2d5be833774c53c5030c2"),
    ((0, 0, 30, 0, 0, 1, 60), "a7beedbbbef025bc2049c6fbea1bb8c5"),
    ((-8, 12, 3, 4, 4, 1.5, 90), "4c5536655a37b83129a29ff9cf07f3c7"),
]


@pytest.mark.parametrize("params,expect", ROTATION)
def test_rotation_corr(params, expect):
    img = rgb(pat565(48, 64))
    assert img.rotation_corr(*params) is img
    assert digest(img._pix) == expect


def test_rotation_corr_arguments():
    img = rgb(pat565(8, 8))
    with pytest.raises(OSError, match="Zoom must be > 0!"):
        img.rotation_corr(zoom=0)
    with pytest.raises(OSError, match="FOV must be > 0 and < 180!"):
        img.rotation_corr(fov=0)
    with pytest.raises(TypeError, match="isn't a tuple or list"):
        img.rotation_corr(corners=None)  # a given keyword is read even when None
    with pytest.raises(ValueError, match="requested length 4"):
        img.rotation_corr(corners=((0, 0), (7, 0), (7, 7)))
    with pytest.raises(ValueError, match="requested length 2"):
        img.rotation_corr(0, 0, 0, 0, 0, 1, 60, ((0, 0), (7, 0), (7, 7), (0,)))  # 8th positional
    same = rgb(pat565(8, 8))
    same.rotation_corr(unknown_keyword=3)  # ignored, as py_helper's keyword lookups do
    assert same.width() == 8


# corners=: homography_compute. Its float32 SVD is rounding-dominated (see _rotation), so the
# expectations are the C build's homographies (bits as printed by the host build with FMA) within a
# tolerance, and its output images within one-pixel shifts of a few pixels.
HOMOGRAPHIES = [  # ((w, h), corners, H of the C build as float32 bits, tolerance in pixels)
    ((24, 16), ((0, 0), (23, 0), (23, 15), (0, 15)),
     "bf13cb7d 362cc8c1 b7908000 350ffa73 bf13cb72 b7090000 b28fe399 338173cf bf13cb7e", 1e-4),
    ((64, 48), ((3, 2), (60, 5), (58, 44), (6, 40)),
     "3eec487e 3d24b237 3fcb7de1 3cc2699f 3ef13159 3f87a992 b99be213 3a8c0f23 3f079ff7", 0.005),
    ((160, 120), ((12, 5), (150, 0), (159, 119), (3, 110)),
     "be13fdba 3c72f311 c0113aa3 3bc34329 be1740f6 bf722815 390869ca 39358f5b be4187ce", 0.1),
    ((320, 240), ((0, 0), (319, 0), (319, 239), (0, 239)),
     "bf13cc31 b9c7e31f 3d499480 b96b1da9 bf13cb4c 3d191c80 b3182672 338f356f bf13ca90", 0.2),
]


def _project(H, w, h):
    g = np.array([[x, y, 1.0] for x in np.linspace(0, w - 1, 9) for y in np.linspace(0, h - 1, 9)])
    p = g @ np.asarray(H, np.float64).T
    return p[:, :2] / p[:, 2:], g[:, :2]


@pytest.mark.parametrize("size,corners,bits,tol", HOMOGRAPHIES)
def test_homography_compute_follows_the_c_build(size, corners, bits, tol):
    from maixemu.firmware.image import _matd

    w, h = size
    world = ((0, 0), (w - 1, 0), (w - 1, h - 1), (0, h - 1))
    H = _matd.homography_compute([(*a, *b) for a, b in zip(world, corners)])
    ref = np.array([int(b, 16) for b in bits.split()], np.uint32).view(np.float32).reshape(3, 3)
    mine, _ = _project(H, w, h)
    theirs, _ = _project(ref, w, h)
    assert np.abs(mine - theirs).max() < tol


def test_homography_stops_after_32_rotations_as_the_port_does():
    """The QVGA identity: the C build's H is off the identity by ~0.09 px (a converged SVD would be
    off by ~1e-4); the port's truncated SVD is off by a comparable amount, not by nothing."""
    from maixemu.firmware.image import _matd

    world = ((0, 0), (319, 0), (319, 239), (0, 239))
    H = _matd.homography_compute([(*a, *a) for a in world])
    p, g = _project(H, 320, 240)
    assert 0.005 < np.abs(p - g).max() < 0.2


ROTATION_CORNERS = [  # ((x_rot, .., fov), corners, zlib+base64 of the C output of a 24x16 position map)
    ((0, 0, 0, 0, 0, 1.0, 60.0), ((2, 1), (22, 0), (20, 15), (0, 13)),
     "eNpVyldQCAAcx/HvT4WGFkLZUkqFBtplj7J3yQzZ+wHZez3Yex539t482HvzYO/Ng73H/3TXcZ/Xjx8OOOJk8pKP/MYZF1xxowD"
     "ueBhPvPCmIIUojA+++FGcEqYkpShtylCWcvhT3gQQSAWCCKYiIYTaDyeCSBNFVaqZ6kQTQyxxJp4EEkkimRrUpJb9MBrQkBSTSi"
     "MamyY0pRnNTQta0orWtKEt7UizX5s6dKaL6Uom3Ux3epBFT9OL3vShL/1yfzrtyfjnZ+b+rP9+fwYwkEEMZghDGWaGM4JsM5JRj"
     "GaMGcs4xjOBiUxiMlOYyjSmM4OZzDKzmWPmMo/5LDALWcRilrCUZSw3K1jJKlazhrWsYz0b2Gg2sZktZivb2M4OdrLL7GYPe9nH"
     "fg5wkEMc5ghHzTGOc8Kc5BSnOcNZzpnzXOAil7jMFa5yjet//y1zmzvcNfe4zwMemkc85glPecZzXvCSV7zmDTe4aXL+Rz7xmS9"
     "85Zv5zg9+8ovfICmPHOQoJ73lnXnPB9s531NexlsFVUiF5aMiKqpi8pWfiquEnI2LXOVmCshdHvI0QQpWRYUoVGGqpMqqonBFKF"
     "JRKmPKqpz8TXkFKNBUsF9DNVVLtVVHdU091VdDpSjVdrRiFGviFK8Ek6gkJdtPU7pprwx1UEd1Umd1Ubb+AGUhorg="),
    ((10, -5, 8, 2, -1, 1.2, 45.0), ((1, 2), (23, 1), (21, 14), (2, 15)),
     "eNo9yjVYEFAAReFzdbM7NxW72cQExRqVNkaDxs3Czgm7FZ1sTIzNwC7c7C42sfu+B5/nX08Zc5ln81nAQkqZwUxmMdtyySPN0sk"
     "g07JIJoUy1rGeDbYx/qUsYjFLLPz5VkAhRfHPJof9HOAgh+K/ic1ssa2+l9oylrPCwl9EMSXM4YKF/7Ad4SgV8d/GdtvBzvivZB"
     "WrbU39f5FLXLaq+FdwjOOcsPDvst3soTz+a3nAQ3vEY99VXOEq1+y675N2itNWGf9y9rKPj9Ra+J/YU57xPP43uGm3uO27kjOct"
     "XOcp5Fq+WSf+cJXC/8Le8krC/8du8s9quv/xmpiTdVM4f/Gd37YT9+v7Q1v7V38q7lPF3VVNyXEv7m1UEu1Uvh/8dv+8Df+7/lg"
     "NQxRUvwT1F091NPC39raqK2FHyGpgdWQ5H+ohtlwjYh/L/VWH6v726m9Oljd31CTbLLSlB7/kRplyfHvq37qbwPi31GdrLNyre5"
     "PV4YylRX/FButMUqN/0AbpMFKjH+e5atAhRb+LGUrR1Ms/Kkaq3Eab+FPFP8Lf5GKraT+n6ppNr3+n6CJ9g9RRbuM"),
]


@pytest.mark.parametrize("params,corners,packed", ROTATION_CORNERS)
def test_rotation_corr_corners(params, corners, packed):
    import base64
    import zlib

    w, h = 24, 16
    img = rgb((np.arange(w * h) + 1).reshape(h, w))  # each pixel codes its position (0 = black)
    assert img.rotation_corr(*params[:7], corners=corners) is img
    ref = np.frombuffer(zlib.decompress(base64.b64decode(packed)), np.uint16).reshape(h, w)
    mine = img._pix.astype(np.int64)
    differ = mine != ref
    assert differ.sum() <= 2
    both = differ & (mine > 0) & (ref > 0)
    dx = np.abs((mine[both] - 1) % w - (ref[both].astype(np.int64) - 1) % w)
    dy = np.abs((mine[both] - 1) // w - (ref[both].astype(np.int64) - 1) // w)
    assert differ.sum() == both.sum() and (dx <= 1).all() and (dy <= 1).all()


# ---------------------------------------------------------------------- flood_fill / cartoon
FLOOD = [  # (kind, (x, y, seed, floating, invert, clear_background)) -> digest of the C output
    ("gray", (3, 3, 0.05, 0.05, 0, 0), "b340783f21f00118c6b18fe2e21279f8"),
    ("gray", (20, 10, 0.1, 0.5, 1, 0), "9e1983a0720dcd0cbd70c04aee598275"),
    ("gray", (39, 29, 0.0, 0.0, 0, 1), "bbc6f8b7b74cf9e90d8dbfc1839da85a"),
    ("565", (3, 3, 0.05, 0.05, 0, 0), "74b176ccf42095f8805540f9d6d29b57"),
    ("565", (20, 10, 0.1, 0.5, 1, 0), "0c11bd9ad44da697ce6c21cccdc453c5"),
    ("565", (39, 29, 0.0, 0.0, 0, 1), "9d9ec90b36e8410ee5495957f9d71682"),
]


@pytest.mark.parametrize("kind,args,expect", FLOOD)
def test_flood_fill_matches_the_scan_line_fill(kind, args, expect):
    if kind == "gray":
        img, color = gray(blocks(30, 40, 6, np.uint8) * 40), 255
    else:
        img, color = rgb(blocks(30, 40, 5, np.uint16) * 0x0841 + 0x1000), 0xF800
    x, y, seed, floating, invert, clear = args
    img.flood_fill(x, y, seed_threshold=seed, floating_threshold=floating, color=color,
                   invert=invert, clear_background=clear)
    assert digest(img._pix) == expect


def test_flood_fill_by_hand():
    g = gray([[10, 12, 30, 12], [10, 40, 11, 10]])
    # floating threshold int(0.01 * 255) = 2: 10 -> 12 joins; 12 -> 30 does not; the 11/10 at the
    # right are only reachable through 30/40
    g.flood_fill(0, 0, seed_threshold=0.1, floating_threshold=0.01, color=99)
    assert g._pix.tolist() == [[99, 99, 30, 12], [99, 40, 11, 10]]
    g.flood_fill(9, 9)  # outside: nothing
    mask = gray([[0, 255, 0, 0], [0, 0, 0, 0]])  # set mask pixels are walls *and* painted
    h = gray([[5, 5, 5, 5], [5, 5, 5, 5]])
    h.flood_fill(3, 0, seed_threshold=0, floating_threshold=0, color=1, mask=mask)
    assert h._pix.tolist() == [[1, 1, 1, 1], [1, 1, 1, 1]]
    with pytest.raises(OSError, match="seed_threshold"):
        h.flood_fill(0, 0, seed_threshold=1.5)
    with pytest.raises(TypeError, match="Can't convert int to Image"):
        h.flood_fill(0, 0, mask=3)


CARTOON = {  # (kind, seed, floating) -> digest of the C output
    ("gray", 0.05, 0.05): "b99addd140a7b85c9d703058f363e6eb", ("gray", 0.2, 0.1): "7fffc9b78deb8855e8e6154f8ab05fc5",
    ("gray", 0.5, 0.02): "d52d901b1e0e2e440853a985349abead", ("565", 0.05, 0.05): "a3998a8d7d5cf0c5530fad6d3770813f",
    ("565", 0.2, 0.1): "8992159cd857c55a15a5989a78f9f86b", ("565", 0.5, 0.02): "db1ef1504486ceb94ba334cd1f84a729",
}


@pytest.mark.parametrize("key", sorted(CARTOON))
def test_cartoon(key):
    kind, seed, floating = key
    img = gray(patgray(30, 40)) if kind == "gray" else rgb(pat565(30, 40))
    assert img.cartoon(seed, floating) is img
    assert digest(img._pix) == CARTOON[key]


def test_cartoon_by_hand():
    g = gray([[10, 12, 200, 202]])
    g.cartoon(seed_threshold=0.05, floating_threshold=0.05)  # thresholds int(0.05 * 255) = 12
    assert g._pix.tolist() == [[11, 11, 201, 201]]  # each run's integer mean


# ---------------------------------------------------------------------- find_domain
def test_find_domain_one_region_and_labels_in_place():
    pix = np.zeros((6, 8), np.uint8)
    pix[1:4, 1:5] = 200
    img = gray(pix)
    out = img.find_domain(0.7)
    assert out.format() is None and out._pix.tolist() == (pix > 0).astype(np.uint8).tolist()
    assert img._pix[1, 1] == 1 and img._pix.max() == 1  # region 0 relabelled with value 1
    assert gray(np.zeros((4, 4))).find_domain(0.5) is None
    with pytest.raises(ValueError, match="only support grayscale pic"):
        rgb([[1]]).find_domain(0.5)


def test_find_domain_prefers_the_line_like_of_two_big_regions():
    pix = np.zeros((10, 12), np.uint8)
    pix[1:9, 1:8] = 50  # a 7x8 block (largest, not a line: rates 0 on its borders... see below)
    pix[0, :] = 100  # a full-width top row: the second region, 12 pixels >= w + h? no: 12 < 22
    img = gray(pix)
    out = img.find_domain(0.7)
    # the block (56 px) is the largest; the row (12 px) is below w + h = 22: the block is returned
    assert out._pix[4, 4] == 1 and out._pix[0, 0] == 0
    pix2 = np.zeros((10, 12), np.uint8)
    pix2[2:9, 2:9] = 50  # 49 px block, touching no border: hrate = vrate = 0 -> "a line"
    pix2[0, :] = 100
    pix2[:, 11] = 100  # 21 px on the top row and right column (>= 22? 12 + 9 = 21: no)
    pix2[9, :] = 100  # bottom row too: 31 px
    img2 = gray(pix2)
    out2 = img2.find_domain(0.7)
    # largest = the 49-px block whose border rates are 0 < 0.7 -> it is taken (r_flag 0)
    assert out2._pix[5, 5] == 1 and out2._pix[0, 0] == 0


def test_find_domain_takes_the_second_region_when_only_it_is_a_line():
    pix = np.zeros((10, 12), np.uint8)
    pix[:, 0:6] = 50  # 60 px, spans its rows and touches the top/left borders fully: rates 1.0
    pix[:, 8:11] = 100  # 30 px (>= w + h = 22), touches no left/right border: vrate 0 < 0.7
    out = gray(pix).find_domain(0.7)
    assert out._pix[:, 8:11].all() and not out._pix[:, 0:6].any()


# ---------------------------------------------------------------------- stretch / strech_char
def test_stretch_uses_the_interior_range_and_an_integer_scale():
    pix = np.array([[0, 0, 0, 0], [0, 50, 60, 0], [0, 70, 55, 200], [9, 0, 0, 0]], np.uint8)
    img = gray(pix)
    assert img.stretch(0, 80) is None
    # interior min/max (rows/cols 1..2): 50 and 70 -> scale (80 - 0) / 20 = 4; the borders map
    # through the same line and wrap as uint8: (0 - 50) * 4 = -200 -> 56, (200 - 50) * 4 = 600 -> 88
    expect = ((pix.astype(int) - 50) * 4) & 0xFF
    assert img._pix.tolist() == expect.tolist()
    capped = gray(np.array([[0, 0, 0], [0, 10, 0], [0, 0, 0]], np.uint8))
    capped.stretch(0, 255)  # interior is one pixel: min == max (start pixel 10): nothing happens
    assert capped._pix[1, 1] == 10


def test_strech_char_by_hand(capsys):
    img = gray(np.array([[10, 20], [30, 40]], np.uint8))
    img.strech_char(0)
    # mean 25, max 40: (v - 25) * 255 / 15 truncated, clamped -> 0, 0, 85, 255
    assert img._pix.tolist() == [[0, 0], [85, 255]]
    assert rgb([[1]]).strech_char(0) is None
    assert capsys.readouterr().out == "only support grayscale now\r\n"
