"""``--ide`` without the ``ide`` extra: one line saying what to install, exit 2; the core does not need it."""

from __future__ import annotations

import subprocess
import sys


def test_ide_without_aiohttp_says_what_to_install(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("print('never runs')\n")
    code = ("import sys; sys.modules['aiohttp'] = None\n"  # as if the extra were not installed
            "from maixemu.cli import main\n"
            f"sys.exit(main(['run', {str(script)!r}, '--ide', '0', '--lcd', 'none']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "pip install 'maixemu[ide]'" in proc.stderr
    assert "never runs" not in proc.stdout
    # Without --ide the same process needs no web server at all.
    plain = code.replace(", '--ide', '0'", "")
    proc = subprocess.run([sys.executable, "-c", plain], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and "never runs" in proc.stdout
