"""pytest-benchmark timings of every image method (skipped by default: ``--benchmark-skip``).

Run with ``python -m pytest tests/firmware/test_bench_image.py --benchmark-only`` (``-k gaussian``
for some); each result's ``extra_info["x_matmul"]`` is its mean time over a 256x256 float64 numpy
matmul timed in the same run. The cases are ``maixemu.tools.image_bench.CASES`` (the same as
``python -m maixemu.tools.image_bench``). The coverage test below always runs.
"""

from __future__ import annotations

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
