"""Bounded models (issue 10): ``kpu.load`` sizes a file before reading it, and a model the script
dropped stops counting against the firmware's budget (the budget holds weak references)."""

from __future__ import annotations

import gc
import resource
import shutil
import sys
from pathlib import Path

import pytest

import maixemu

from maixemu.firmware.state import current
from maixemu.firmware import KPU, mgc
from maixemu.firmware.kpu import loader as kpu_loader
from maixemu.host import storage

MODEL = Path(__file__).resolve().parents[2] / "maixemu" / "data" / "edge_filters.kmodel"


@pytest.fixture()
def sd(tmp_path):
    shutil.copy(MODEL, tmp_path / "m.kmodel")
    current().storage = storage.Storage(sd_dir=tmp_path, flash_dir=tmp_path, flash_map={0x300000: tmp_path / "big.kmodel"})
    return tmp_path


def _max_rss_bytes() -> int:
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def test_a_2gb_sparse_file_is_refused_without_being_read(sd):
    with open(sd / "big.kmodel", "wb") as handle:
        handle.truncate(2 << 30)  # 2 GiB of holes: costs no disk, would cost 2 GiB of RAM to read
    before = _max_rss_bytes()
    for source in ("/sd/big.kmodel", 0x300000):
        with pytest.raises(ValueError) as info:
            KPU.load(source)
        assert str(info.value) == "[MAIXPY]kpu: load error:2006, ERR_NO_MEM: memory not enough"
        assert str(sd) not in maixemu.advice(info.value)
    assert _max_rss_bytes() - before < 256 << 20  # reading it would have added 2 GiB


def test_a_dropped_model_frees_its_memory(sd):
    nets = [KPU.load("/sd/m.kmodel") for _ in range(kpu_loader.MAX_MODELS)]
    with pytest.raises(ValueError, match="ERR_MODELS_FULL"):
        KPU.load("/sd/m.kmodel")
    del nets[0]
    mgc.collect()  # what the script's gc.collect() calls
    spare = KPU.load("/sd/m.kmodel")
    assert len(current().kpu.budget.used) == kpu_loader.MAX_MODELS
    del nets, spare
    gc.collect()
    assert len(current().kpu.budget.used) == 0


def test_the_budget_refuses_ids(sd):
    with pytest.raises(TypeError, match="not its id"):
        kpu_loader.reserve(12345, None, 0, streamed=False, flash=False)
