"""Hardening: a long run does not grow memory. A short in-process soak (300 frames of the face
detector, or of the bundled sample when ../shared is absent) must show no RSS growth trend after
its warm-up; ``python -m maixemu.tools.soak --frames 5000`` is the full benchmark."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from maixemu.tools import soak

pytestmark = pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="RSS is read from /proc (Linux)")

MB = 1024 * 1024


def test_short_soak_has_no_memory_growth_trend():
    started = time.monotonic()
    notices: list[str] = []
    result = soak.soak(300, every=50, warmup=100, notice=notices.append)
    elapsed = time.monotonic() - started
    assert result.exit_code == 0, notices
    assert [s.frame for s in result.samples] == [0, 50, 100, 150, 200, 250, 300]
    after_warmup = [s.rss for s in result.samples if s.frame >= 100]
    # No trend: the end is within 8 MB of the warm-up sample, and memory does not rise at every sample.
    assert after_warmup[-1] - after_warmup[0] < 8 * MB, soak.report(result, 8)[0]
    rises = sum(b - a > MB for a, b in zip(after_warmup, after_warmup[1:]))
    assert rises < len(after_warmup) - 1, soak.report(result, 8)[0]
    print(f"300 soak frames in {elapsed:.1f} s")  # speed is the soak benchmark's business, not this test's


def test_report_fails_on_growth():
    result = soak.SoakResult(script=Path("x.py"), frames=1000, warmup=500, exit_code=0, samples=[
        soak.Sample(0, 0.0, 100 * MB), soak.Sample(500, 10.0, 150 * MB), soak.Sample(1000, 20.0, 175 * MB)])
    text, ok = soak.report(result, 20)
    assert not ok
    assert text.splitlines()[0] == ("soak: x.py, 1000 frames in 20.0 s (50.0 frames/s overall, "
                                    "50.0 frames/s after warm-up)")
    assert text.splitlines()[1] == ("RSS at start 100.0 MB, at warm-up (frame 500) 150.0 MB, at the end "
                                    "(frame 1000) 175.0 MB: +25.0 MB after warm-up (limit 20 MB)")
    assert text.splitlines()[-1] == "FAIL: RSS grew by 25.0 MB after warm-up"


def test_fallback_without_shared_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(soak, "FACE_MODEL", tmp_path / "absent.kmodel")
    notices: list[str] = []
    script, flash, folder = soak.choose_workload(tmp_path, notices.append)
    assert script.name == "default_sample.py" and flash == {}
    assert len(list(folder.glob("*.png"))) == 12
    assert notices == [f"soak: {soak.SHARED_DIR} is absent: running the bundled default sample on synthetic "
                       "frames instead of samples/face_detect.py"]


def test_cli_rejects_frames_below_warmup(capsys):
    with pytest.raises(SystemExit) as info:
        soak.main(["--frames", "100"])
    assert info.value.code == 2
    assert "--frames must be larger than --warmup" in capsys.readouterr().err


def test_soak_prints_progress_while_it_runs(monkeypatch):
    """A log gets progress lines while the soak runs (frames done of the total, the last RSS sample)."""
    import io

    stream = io.StringIO()
    seen_during: list[str] = []
    real_rss = soak.rss_bytes

    def rss_and_look() -> int:  # called from inside the run: what the log held by then
        seen_during.append(stream.getvalue())
        return real_rss()

    monkeypatch.setattr(soak, "rss_bytes", rss_and_look)
    result = soak.soak(40, every=20, warmup=20, notice=lambda _: None, progress_stream=stream, progress_every=1e-9)
    assert result.exit_code == 0
    assert any("soak:" in text and "/40" in text for text in seen_during[1:-1])  # printed before the end
    assert "40/40" in stream.getvalue() and "RSS" in stream.getvalue()
