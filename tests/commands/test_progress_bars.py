"""Progress with rate and time left on ``maixemu trace`` and the fuzz campaign (tqdm on stderr).

A terminal gets the live bar; a log (stderr not a TTY) gets nothing from ``trace`` and one line
every ``log_every`` seconds from runs that take minutes. The terminal is a StringIO that says it is
one; the counts are asserted, never a time.
"""

from __future__ import annotations

import io
import shutil
import sys

import numpy as np

from _shared import REPO_ROOT
from maixemu import progress
from maixemu.cli import main
from maixemu.tools import fuzz

DEMO_MODEL = REPO_ROOT / "maixemu" / "data" / "edge_filters.kmodel"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _last_state(text: str) -> str:
    return [part for part in text.replace("\n", "\r").split("\r") if part.strip()][-1]


def test_bar_on_a_terminal_shows_count_rate_and_time_left():
    term = Terminal()
    with progress.progress_bar(4, "trace", "layer", stream=term) as bar:
        for _ in range(4):
            bar.update()
    last = _last_state(term.getvalue())
    assert last.startswith("trace: 100%") and "4/4" in last
    assert "layer/s" in last and "<00:00" in last  # rate, then elapsed<left


def test_no_bar_in_a_log_unless_asked_for_lines():
    log = io.StringIO()
    with progress.progress_bar(4, "trace", "layer", stream=log) as bar:
        bar.update(4)
    assert log.getvalue() == ""
    with progress.progress_bar(4, "fuzz", "case", stream=log, log_every=30) as bar:
        bar.update(4)
    assert "4/4" in log.getvalue() and "\x1b" not in log.getvalue()


def test_a_log_gets_whole_lines_not_carriage_returns():
    log = io.StringIO()
    with progress.progress_bar(3, "soak", "frame", stream=log, log_every=1e-9) as bar:
        for _ in range(3):
            bar.update()
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and len(lines) >= 2 and all(line.startswith("soak:") for line in lines)
    assert "3/3" in lines[-1]


def test_trace_shows_a_bar_per_layer(tmp_path, monkeypatch):
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    x = np.random.default_rng(0).integers(0, 256, (1, 3, 240, 320), dtype=np.uint8)
    np.save(tmp_path / "x.npy", x)
    assert main(["trace", str(DEMO_MODEL), "--input", str(tmp_path / "x.npy"), "--out", str(tmp_path / "out")]) == 0
    last = _last_state(term.getvalue())
    assert last.startswith("trace: 100%") and "1/1" in last
    assert "layer/s" in last or "s/layer" in last  # tqdm turns the rate round when a layer takes > 1 s


def test_trace_in_a_log_prints_no_bar(tmp_path, capsys):
    x = np.zeros((1, 3, 240, 320), np.uint8)
    np.save(tmp_path / "x.npy", x)
    assert main(["trace", str(DEMO_MODEL), "--input", str(tmp_path / "x.npy"), "--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().err == ""


def test_fuzz_campaign_shows_cases_findings_and_rate(tmp_path, monkeypatch, capsys):
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(DEMO_MODEL, models / "edge_filters.kmodel")
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    code = fuzz.main(["--cases", "6", "--models", str(models), "--no-non-kmodels"])
    assert code == 0, capsys.readouterr().out
    states = [s for s in term.getvalue().replace("\n", "\r").split("\r") if s.startswith("fuzz:")]
    assert "6/6" in states[-1] and "case/s" in states[-1] and "findings=0" in states[-1]
    assert states[0].startswith("fuzz:   0%") and len(states) >= 2  # from the start to the end
    assert "6 cases over 1 models" in capsys.readouterr().out


def test_bench_shows_a_bar_per_model_with_rate_and_time_left(monkeypatch, capsys):
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert main(["bench", str(DEMO_MODEL), str(DEMO_MODEL), "--runs", "1", "--warmup", "0"]) == 0
    states = [s for s in term.getvalue().replace("\n", "\r").split("\r") if s.startswith("bench:")]
    assert states[0].startswith("bench:   0%") and "0/2" in states[0]
    assert "2/2" in states[-1] and "edge_filters" in states[-1]
    assert "model/s" in states[-1] or "s/model" in states[-1]  # the rate (tqdm turns it round when slow)
    assert "edge_filters" in capsys.readouterr().out  # the table still goes to stdout


def test_bench_in_a_log_prints_plain_lines_only(capsys):
    assert main(["bench", str(DEMO_MODEL), "--runs", "1", "--warmup", "0"]) == 0
    err = capsys.readouterr().err
    assert "1/1" in err and ("model/s" in err or "s/model" in err) and "\x1b" not in err
