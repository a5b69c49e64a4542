"""The image module's method-table audit against the firmware's own tables.

``FIRMWARE_METHODS`` is the locals table of the image type (``py_image.c``, ``locals_dict_table``)
and ``FIRMWARE_MODULE`` the module's ``globals_dict_table``, both from sipeed/MaixPy-v1 master
d8901fd (= v0.6.3's table; v0.6.2 lacks ``crop``), full build (``OMV_MINIMUM`` unset, every
``IMLIB_ENABLE_*`` of ``boards/MAIX/imlib_config.h`` on). Every name must exist in maixemu; the ones
still raising ``NotImplementedError`` must be exactly :data:`NOT_EMULATED`, each with its reason
(the closing note of issue 13 names them from here).
"""

from __future__ import annotations

import inspect

import pytest

import maixemu.firmware.image as image

FIRMWARE_COMMIT = "d8901fd"

FIRMWARE_METHODS = frozenset("""
    add ai_to_pix and assign b_and b_nand b_nor b_or b_xnor b_xor bilateral binary black_hat blend
    blur cartoon chrominvar clear close compress compress_for_ide compressed compressed_for_ide conv3
    copy crop cut difference dilate div draw_arrow draw_circle draw_cross draw_ellipse draw_font
    draw_image draw_keypoints draw_line draw_rectangle draw_string dump_roi erode find_apriltags
    find_barcodes find_blobs find_circles find_datamatrices find_displacement find_domain find_edges
    find_eye find_features find_hog find_keypoints find_lbp find_line_segments find_lines
    find_qrcodes find_rects find_template flood_fill format gamma_corr gaussian gaussian_blur
    get_hist get_histogram get_pixel get_regression get_similarity get_statistics get_stats height
    histeq histogram illuminvar invert laplacian lens_corr linpolar logpolar max mean mean_pool
    mean_pooled median midpoint midpoint_pool midpoint_pooled min mode morph mul nand negate nor
    open or pix_to_ai remove_shadows replace resize rotation_corr save selective_search set
    set_pixel size statistics strech_char stretch sub to_bitmap to_bytes to_grayscale to_rainbow
    to_rgb565 top_hat width xnor xor
""".split())

#: v0.6.2 (88bfd01) has the same table without ``crop``.
V062_ONLY_MISSING = frozenset({"crop"})

#: The same slot, one C function (the firmware's aliases).
FIRMWARE_ALIASES = {
    "and": "b_and", "nand": "b_nand", "or": "b_or", "nor": "b_nor", "xor": "b_xor", "xnor": "b_xnor",
    "assign": "replace", "set": "replace", "blur": "gaussian", "gaussian_blur": "gaussian",
    "get_hist": "get_histogram", "histogram": "get_histogram", "get_stats": "get_statistics",
    "statistics": "get_statistics",
}

FIRMWARE_MODULE_FUNCTIONS = frozenset("""
    font_load font_free ImageWriter Image ImageReader rgb_to_lab lab_to_rgb rgb_to_grayscale
    grayscale_to_rgb get_affine_transform warp_affine_ai HaarCascade load_descriptor
    save_descriptor match_descriptor
""".split())

FIRMWARE_MODULE_CONSTANTS = {
    "SEARCH_EX": 0, "SEARCH_DS": 1, "EDGE_CANNY": 0, "EDGE_SIMPLE": 1, "CORNER_FAST": 0,
    "CORNER_AGAST": 1, "TAG16H5": 1, "TAG25H7": 2, "TAG25H9": 4, "TAG36H10": 8, "TAG36H11": 16,
    "ARTOOLKIT": 32, "ASCII": 0, "UTF8": 2,
    # imlib.h ``enum barcodes``: BARCODE_EAN2 = 0 ... BARCODE_CODE128 = 15
    **{name: i for i, name in enumerate("EAN2 EAN5 EAN8 UPCE ISBN10 UPCA EAN13 ISBN13 I25 DATABAR "
                                         "DATABAR_EXP CODABAR CODE39 PDF417 CODE93 CODE128".split())},
}

#: Methods of the firmware's table still raising NotImplementedError, and why. Keep it exact: a
#: method that gets built must leave this table in the same change.
NOT_EMULATED: dict[str, str] = {}

#: Module functions still raising NotImplementedError as a whole (none); ``load_descriptor``,
#: ``save_descriptor`` and ``match_descriptor`` take LBP descriptors and ORB keypoints alike.
NOT_EMULATED_FUNCTIONS: dict[str, str] = {}


#: Integer names maixemu's image module has and the firmware's does not (scripts written against
#: the emulator could use them; on a board they are AttributeErrors).
EMULATOR_ONLY_CONSTANTS = {"BINARY", "GRAYSCALE", "RGB565", "JPEG", "QRCODE"}


def _is_stub(value) -> bool:
    return bool(getattr(value, "_not_emulated", False))


def test_device_methods_table_is_the_firmwares():
    assert set(image._DEVICE_METHODS) == FIRMWARE_METHODS
    assert len(image._DEVICE_METHODS) == len(FIRMWARE_METHODS) == 121


@pytest.mark.parametrize("name", sorted(FIRMWARE_METHODS))
def test_every_firmware_method_exists(name: str):
    assert callable(getattr(image.Image, name, None)), f"image.Image.{name} is missing"


def test_aliases_share_one_implementation():
    """``blur`` is the firmware's gaussian (not mean); an alias is the same function or delegates."""
    for alias, target in FIRMWARE_ALIASES.items():
        a, b = getattr(image.Image, alias), getattr(image.Image, target)
        a, b = getattr(a, "__wrapped__", a), getattr(b, "__wrapped__", b)
        assert a is b or f"self.{target}(" in inspect.getsource(a), alias


def test_not_emulated_methods_are_exactly_the_allow_list():
    stubs = {n for n in FIRMWARE_METHODS if _is_stub(getattr(image.Image, n))}
    assert stubs == set(NOT_EMULATED), (
        f"built but still listed: {sorted(set(NOT_EMULATED) - stubs)}; "
        f"stubbed but not listed: {sorted(stubs - set(NOT_EMULATED))}")


@pytest.mark.parametrize("name", sorted(NOT_EMULATED))
def test_stubs_raise_not_implemented_naming_the_method(name: str):
    img = image.Image(size=(8, 8))
    with pytest.raises(NotImplementedError, match=rf"image\.Image\.{name} is not emulated"):
        getattr(img, name)()


def test_module_functions_and_constants_exist():
    for name in FIRMWARE_MODULE_FUNCTIONS:
        assert callable(getattr(image, name, None)), f"image.{name} is missing"
    for name, value in FIRMWARE_MODULE_CONSTANTS.items():
        assert getattr(image, name, None) == value, name


def test_not_emulated_module_functions_are_exactly_the_allow_list():
    stubs = {n for n in FIRMWARE_MODULE_FUNCTIONS if _is_stub(getattr(image, n))}
    assert stubs == set(NOT_EMULATED_FUNCTIONS)
    for name in stubs:
        with pytest.raises(NotImplementedError, match=rf"image\.{name} is not emulated"):
            getattr(image, name)()


def test_emulator_only_constants_are_known():
    ints = {n for n, v in vars(image).items()
            if not n.startswith("_") and n.isupper() and isinstance(v, int) and not isinstance(v, bool)}
    assert ints - set(FIRMWARE_MODULE_CONSTANTS) == EMULATOR_ONLY_CONSTANTS
