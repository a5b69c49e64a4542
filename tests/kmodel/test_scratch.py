"""The per-thread scratch buffers (``kpu.parallel``): a hit is the same array object (onnxruntime's
output binding is redone only when it changes), and no view of a buffer that was replaced is ever
handed out again (a layer writing into a dead buffer would lose its sums, and keep it alive)."""

from __future__ import annotations

import threading

import numpy as np

from maixemu.kmodel.kpu import parallel


def test_a_repeated_request_is_the_same_array():
    parallel.release_scratch()
    a = parallel.scratch_array("t_same", (4, 8), np.int32)
    assert parallel.scratch_array("t_same", (4, 8), np.int32) is a
    assert a.shape == (4, 8) and a.dtype == np.int32 and a.flags.c_contiguous


def test_growing_a_buffer_retires_every_view_of_the_old_one():
    parallel.release_scratch()
    small = parallel.scratch_array("t_grow", (4, 8), np.int32)
    flat = parallel.scratch_array("t_grow", (32,), np.dtype(np.int32))  # (another spelling of the dtype)
    assert np.shares_memory(small, flat)
    big = parallel._scratch("t_grow", 1000, np.int32)  # a larger layer replaces the buffer
    again = parallel.scratch_array("t_grow", (4, 8), np.int32)
    again_flat = parallel.scratch_array("t_grow", (32,), np.dtype(np.int32))
    assert again is not small and again_flat is not flat
    assert np.shares_memory(again, big) and np.shares_memory(again_flat, big)
    assert not np.shares_memory(again, small)


def test_a_dtype_of_its_own_is_a_buffer_of_its_own():
    parallel.release_scratch()
    i32 = parallel.scratch_array("t_dtype", (16,), np.int32)
    u8 = parallel.scratch_array("t_dtype", (16,), np.uint8)
    assert not np.shares_memory(i32, u8)
    parallel._scratch("t_dtype", 4096, np.uint8)  # growing the uint8 one leaves the int32 view valid
    assert parallel.scratch_array("t_dtype", (16,), np.int32) is i32
    assert parallel.scratch_array("t_dtype", (16,), np.uint8) is not u8


def test_release_forgets_the_views_and_threads_do_not_share():
    parallel.release_scratch()
    a = parallel.scratch_array("t_thread", (64,), np.float32)
    parallel.release_scratch()
    assert parallel.scratch_array("t_thread", (64,), np.float32) is not a
    mine = parallel.scratch_array("t_thread", (64,), np.float32)
    theirs: list[np.ndarray] = []
    worker = threading.Thread(target=lambda: theirs.append(parallel.scratch_array("t_thread", (64,), np.float32)))
    worker.start()
    worker.join()
    assert not np.shares_memory(mine, theirs[0])


def test_work_views_are_disjoint_aligned_and_the_same_objects_on_a_repeat():
    parallel.release_scratch()
    specs = (((3, 5), np.uint8), ((7, 4), np.int32), ((9,), np.float64))
    views = parallel.work_views(*specs)
    assert [v.shape for v in views] == [(3, 5), (7, 4), (9,)]
    assert [v.dtype for v in views] == [np.uint8, np.int32, np.float64]
    assert all(v.flags.c_contiguous and v.flags.writeable and v.ctypes.data % 64 == 0 for v in views)
    for i, a in enumerate(views):
        for b in views[i + 1:]:
            assert not np.shares_memory(a, b)
    again = parallel.work_views(*specs)
    assert all(a is b for a, b in zip(views, again))


def test_a_larger_work_request_replaces_the_arena_and_drops_every_carving():
    parallel.release_scratch()
    small = parallel.work_views(((64,), np.int32))
    other = parallel.work_views(((8,), np.uint8), ((8,), np.int32))  # (fits the arena the first made)
    assert np.shares_memory(small[0], other[0]) and np.shares_memory(small[0], other[1])  # one arena
    big = parallel.work_views(((1 << 16,), np.float32))
    again = parallel.work_views(((64,), np.int32))
    assert again[0] is not small[0] and not np.shares_memory(again[0], small[0])
    assert np.shares_memory(again[0], big[0])


def test_work_views_are_per_thread_and_released():
    parallel.release_scratch()
    mine = parallel.work_views(((64,), np.float32))[0]
    theirs: list[np.ndarray] = []
    worker = threading.Thread(target=lambda: theirs.append(parallel.work_views(((64,), np.float32))[0]))
    worker.start()
    worker.join()
    assert not np.shares_memory(mine, theirs[0])
    parallel.release_scratch()
    assert parallel.work_views(((64,), np.float32))[0] is not mine


def _plain_buffers() -> set[str]:
    return {name for name, _ in getattr(parallel._SCRATCH, "plain", {})}


def test_plain_scratch_goes_after_two_runs_without_the_plain_forms():
    parallel.release_scratch()
    parallel.plain_scratch("t_plain_cols", 4096, np.float32)
    parallel.scratch_array("t_kept", (16,), np.int32)  # (a compiled path's buffer)
    kept = parallel.work_views(((64,), np.uint8))[0]
    parallel.run_finished()  # the run that used them
    assert _plain_buffers() == {"t_plain_cols"}
    parallel.run_finished()  # one quiet run: a model still on its plain forms may run next
    assert _plain_buffers() == {"t_plain_cols"}
    kept_array = parallel.scratch_array("t_kept", (16,), np.int32)
    parallel.run_finished()
    assert _plain_buffers() == set() and parallel.plain_scratch_bytes() == 0
    assert parallel.scratch_array("t_kept", (16,), np.int32) is kept_array  # the compiled paths' buffers stay
    assert parallel.work_views(((64,), np.uint8))[0] is kept  # the work arena stays


def test_a_plain_run_between_quiet_ones_keeps_the_buffers():
    parallel.release_scratch()
    first = parallel.plain_scratch("t_plain_bn", 256, np.float64)
    for _ in range(5):  # a plain model and a compiled one, alternating
        parallel.run_finished()
        assert parallel.plain_scratch("t_plain_bn", 256, np.float64) is not None
        parallel.run_finished()
    assert np.shares_memory(parallel.plain_scratch("t_plain_bn", 256, np.float64), first)


def test_a_dropped_plain_buffer_is_made_again_and_its_views_are_gone():
    parallel.release_scratch()
    old = parallel.plain_scratch("t_plain_g", 128, np.float32)
    for _ in range(parallel.PLAIN_QUIET_RUNS + 1):
        parallel.run_finished()
    assert parallel.plain_scratch_bytes() == 0
    new = parallel.plain_scratch("t_plain_g", 128, np.float32)
    assert not np.shares_memory(new, old)
    assert parallel.plain_scratch_bytes() == 128 * 4


def test_plain_and_compiled_buffers_of_one_name_are_apart():
    parallel.release_scratch()
    plain = parallel.plain_scratch("t_both", 64, np.float32)
    compiled = parallel._scratch("t_both", 64, np.float32)
    assert not np.shares_memory(plain, compiled)
