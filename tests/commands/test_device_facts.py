"""One source for each device fact (issue 11): ``maixemu info``, ``kpu.load`` and ``kpu.memtest`` use
the same MaixPy model budgets (MiB) and the same cost of a loaded model, so they never disagree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from _shared import shared_path
from maixemu.cli import main

DEMO_MODEL = Path(__file__).resolve().parents[2] / "maixemu" / "data" / "edge_filters.kmodel"
MIB = 1024 * 1024


def _padded_model(folder: Path, size: int, model: Path = DEMO_MODEL) -> Path:
    """``model`` padded to ``size`` bytes (the loader keeps the whole file, as the firmware)."""
    data = model.read_bytes()
    path = folder / "big.kmodel"
    path.write_bytes(data + bytes(size - len(data)))
    return path


def _info_verdicts(model: Path, capsys) -> dict[str, str]:
    assert main(["info", str(model)]) == 0
    text = capsys.readouterr().out
    line = next(line for line in text.splitlines() if line.startswith("MaixPy budgets"))
    return dict(re.findall(r"(\w+) firmware[^:]*: (ok|too big)", line))


@pytest.mark.parametrize("size", [2_050_000, 2_200_000])
def test_info_and_kpu_load_agree_on_the_full_firmware(tmp_path, capsys, maixpy, size):
    # the iris model needs 56 bytes of scratch: the file is what counts (2 050 000 B > 2 MB, < 2 MiB)
    model = _padded_model(tmp_path, size, shared_path("models", "v3", "iris.kmodel"))
    verdicts = _info_verdicts(model, capsys)
    result = maixpy.run(code="import KPU as kpu\ntask = kpu.load('/sd/big.kmodel')\nprint('loaded')\n",
                        files={"/sd/big.kmodel": model}, firmware="full")
    loads = result.exit_code == 0
    assert loads == (verdicts["full"] == "ok"), (verdicts, result.stderr)
    assert loads == (size == 2_050_000)  # 2 050 000 bytes fit the full firmware's 2 MiB, 2 200 000 do not


@pytest.mark.parametrize("firmware, room_kib", [("full", 2048), ("minimum", 4096), ("none", 6144)])
def test_memtest_reports_the_room_kpu_load_has(tmp_path, maixpy, firmware, room_kib):
    lines = maixpy.run(code="import KPU as kpu\nkpu.memtest()\n", firmware=firmware).check().lines
    assert lines[1] == f"###free sys heap memory: {room_kib} KB"
    load = "import KPU as kpu\ntask = kpu.load('/sd/big.kmodel')\nkpu.memtest()\n"
    fits = maixpy.run(code=load, files={"/sd/big.kmodel": _padded_model(tmp_path, (room_kib - 256) * 1024)},
                      firmware=firmware)
    assert fits.check().lines[1].startswith("###free sys heap memory: ")
    assert int(fits.lines[1].split()[-2]) < 256  # what is left after the model
    refused = maixpy.run(code=load, files={"/sd/big.kmodel": _padded_model(tmp_path, (room_kib + 1) * 1024)},
                         firmware=firmware)
    assert "ERR_NO_MEM" in refused.stderr
