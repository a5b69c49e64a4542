"""pytest-benchmark timings of every image method (skipped by default: ``--benchmark-skip``).

Run with ``python -m pytest tests/firmware/test_bench_image.py --benchmark-only`` (``-k gaussian``
for some); each result's ``extra_info["x_matmul"]`` is its mean time over a 256x256 float64 numpy
matmul timed in the same run. The cases are ``maixemu.tools.image_bench.CASES`` (the same as
``python -m maixemu.tools.image_bench``). The coverage test below always runs.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image
from maixemu.tools import image_bench

CASES = {case.name: case for case in image_bench.CASES}


def test_every_method_of_the_firmwares_table_has_a_bench_case():
    covered = {m for case in image_bench.CASES for m in case.methods}
    aliases = {"and", "nand", "or", "nor", "xor", "xnor", "assign", "set", "blur", "gaussian_blur", "get_hist",
               "histogram", "get_stats", "statistics"}  # one C function each, timed under its main name
    built = {m for m in image._DEVICE_METHODS if not getattr(getattr(image.Image, m), "_not_emulated", False)}
    assert sorted(built - aliases - covered) == []
    assert not [m for m in covered if not m.startswith("image.") and not hasattr(image.Image, m)]


def test_bench_board_serves_the_shared_photos_and_gives_the_storage_back():
    if not image_bench.PHOTO.is_file():
        pytest.skip("../shared/images is absent")
    from maixemu.firmware import state

    board = state.current()
    before = board._storage
    with image_bench.bench_board():
        assert image.Image("/sd/" + image_bench.PHOTO.name).width() == 320
        assert board._storage is not before
    assert board._storage is before


@pytest.fixture(scope="module")
def fixtures():
    with image_bench.bench_board():
        yield image_bench.Fixtures()


@pytest.fixture(scope="module")
def matmul_seconds():
    return image_bench.matmul_seconds()


@pytest.mark.parametrize("name", sorted(CASES))
def test_image_method_speed(benchmark, fixtures, matmul_seconds, name):
    case = CASES[name]
    setup, call = image_bench.prepare(case, fixtures)
    setup()
    call()  # compile the kernels, fill caches
    benchmark.pedantic(call, setup=setup, rounds=5, iterations=1, warmup_rounds=0)
    benchmark.extra_info["x_matmul"] = round(benchmark.stats.stats.mean / matmul_seconds, 2)


# ------------------------------------------------------------------------- peers and K210 times
def test_every_peer_and_k210_time_belongs_to_a_case():
    from maixemu.tools import image_k210, image_peers

    bases = {case.name.rsplit(" [", 1)[0] for case in image_bench.CASES}
    assert sorted(set(image_peers.PEERS) - bases) == []
    assert sorted(set(image_k210.K210_TIMES) - bases) == []
    for name, t in image_k210.K210_TIMES.items():
        assert t.source and t.what and t.ms > 0, name


def test_a_peer_runs_on_the_cases_own_frame_and_reports_its_findings(fixtures):
    from maixemu.tools import image_peers

    for fmt in ("rgb565", "gray"):
        case = CASES[f"find_qrcodes(code) [{fmt}]"]
        timing = image_bench.time_case(case, fixtures, min_runs=2, max_runs=2, budget_s=0.0,
                                       peer=image_peers.peer_of(case.name))
        assert timing.found == 1 and timing.peer_found == 1  # both decode the code pasted on the photo
        assert timing.seconds > 0 and timing.peer_seconds is not None
        frame = fixtures.peer_frames["qrcode", fmt]
        assert frame.shape[:2] == (240, 320) and frame.ndim == (3 if fmt == "rgb565" else 2)


def test_the_peer_frame_holds_the_images_pixels():
    from maixemu.firmware import image
    from maixemu.firmware.image import _color

    img = image.Image(size=(4, 2))
    img._pix[...] = _color.rgb888_to_565(np.array([[[255, 0, 0]] * 4, [[0, 0, 255]] * 4], np.uint8))
    bgr = image_bench.opencv_frame(img)
    assert bgr[0, 0].tolist() == [0, 0, 255] and bgr[1, 0].tolist() == [255, 0, 0]


def test_lab_thresholds_map_onto_opencvs_8_bit_lab():
    from maixemu.tools.image_peers import lab_bounds

    assert lab_bounds((0, 100, -128, 127, -128, 127)) == ((0, 0, 0), (255, 255, 255))
    assert lab_bounds((20, 60, 15, 127, -20, 0)) == ((51, 143, 108), (153, 255, 128))


def test_the_markdown_table_cites_every_k210_time_and_names_every_peer():
    from maixemu.tools import image_k210, image_peers

    rows = [image_bench.Row("find_lines() [rgb565]", 7.0, 8.0, peer_ms=3.5, found="6/250", k210="≥22.6"),
            image_bench.Row("width() [gray]", 0.001, 0.0)]
    text = image_bench.format_markdown(rows, 0.001, "a frame")
    assert "| `find_lines() [rgb565]` | 7.000 | 8.00 | 3.500 | 2.00 | 6/250 | ≥22.6 |" in text
    assert all(t.source in text for t in image_k210.K210_TIMES.values()) and "Machine: " in text
    assert all(f"`{name}`: {p.what}" in text for name, p in image_peers.PEERS.items())


def test_the_markdown_table_replaces_only_the_text_between_the_markers(tmp_path):
    doc = tmp_path / "speed.md"
    doc.write_text(f"intro\n{image_bench.TABLE_BEGIN}\nold table\n{image_bench.TABLE_END}\nafter\n")
    image_bench.write_markdown(doc, "| new |\n")
    assert doc.read_text() == f"intro\n{image_bench.TABLE_BEGIN}\n| new |\n{image_bench.TABLE_END}\nafter\n"
    plain = tmp_path / "table.md"
    image_bench.write_markdown(plain, "| t |\n")
    assert plain.read_text() == "| t |\n"
