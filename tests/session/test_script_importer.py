"""The script's importer keeps to /sd and /flash (issue 10): names are names, links out are refused,
packages are served with the device's os/open (also under ``python -m maixemu run``), no __pycache__."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from _shared import snapshot
from test_nothing_lost_storage import run_here


def _marker_module(folder: Path, marker: Path, name: str = "evil") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    module = folder / f"{name}.py"
    module.write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    return module


def test_a_module_name_is_not_a_host_path(tmp_path):
    marker = tmp_path / "marker"
    module = _marker_module(tmp_path / "outside", marker)
    script = tmp_path / "project" / "main.py"
    script.parent.mkdir()
    script.write_text(textwrap.dedent(f"""
        for name in ({str(module.with_suffix(''))!r}, "../outside/evil", "outside.evil"):
            try:
                __import__(name)
                print("imported", name)
            except ImportError as e:
                print("refused")
    """))
    code, out, err = run_here(script, quiet=True)
    assert code == 0, err
    assert out.splitlines() == ["refused"] * 3
    assert not marker.exists()


def test_a_module_link_leading_out_is_refused(tmp_path):
    marker = tmp_path / "marker"
    module = _marker_module(tmp_path / "outside", marker, "helper")
    project = tmp_path / "project"
    project.mkdir()
    (project / "helper.py").symlink_to(module)
    (project / "inside.py").write_text("VALUE = 7\n")
    (project / "alias.py").symlink_to(project / "inside.py")
    script = project / "main.py"
    script.write_text(textwrap.dedent("""
        import alias
        print("alias", alias.VALUE)
        try:
            import helper
        except ImportError as e:
            print(type(e).__name__, e)
    """))
    code, out, err = run_here(script, quiet=True)
    assert code == 0, err
    assert out.splitlines() == ["alias 7", "ImportError no module named 'helper'"]
    assert not marker.exists()


PACKAGE_SCRIPT = """
import mypkg
from mypkg import tools
from mypkg.tools import where
print(mypkg.NAME, tools.double(21), where())
import json, math                                   # Python's own library still imports
print(json.dumps([math.floor(2.5)]))
try:
    import host_only
except ImportError as e:
    print("host module:", e)
"""


def test_packages_are_served_by_the_device_importer_under_python_m(tmp_path):
    project = tmp_path / "project"
    (project / "mypkg").mkdir(parents=True)
    (project / "mypkg" / "__init__.py").write_text("NAME = 'mypkg'\nfrom . import tools\n")
    (project / "mypkg" / "tools.py").write_text(textwrap.dedent("""
        import os
        def double(x):
            return 2 * x
        def where():
            with open('written_by_pkg.txt', 'w') as f:   # the device's open: /sd, into the layer
                f.write('x')
            return os.listdir('/')
    """))
    (project / "main.py").write_text(PACKAGE_SCRIPT.lstrip())
    (project / "host_only.py").write_text("raise SystemExit('the host module ran')\n")
    (project / "host_only.py").rename(tmp_path / "host_only.py")  # only in the PC's working directory
    before = snapshot(project)
    proc = subprocess.run([sys.executable, "-m", "maixemu", "run", str(project / "main.py"), "--lcd", "none",
                           "--camera", "synthetic", "-q"], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["mypkg 42 ['flash', 'sd']", "[2]",
                                        "host module: no module named 'host_only'"]
    assert snapshot(project) == before  # no __pycache__, no written_by_pkg.txt in the project
    assert not list(tmp_path.rglob("__pycache__"))
    assert (project / ".maixemu" / "sd" / "written_by_pkg.txt").exists()


def test_a_module_the_script_wrote_to_flash_is_importable(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("open('/flash/gen.py', 'w').write('X = 5\\n')\nimport os\nos.chdir('/flash')\n"
                      "import gen\nprint(gen.X, gen.__file__)\n")
    code, out, err = run_here(script, quiet=True)
    assert (code, out) == (0, "5 /flash/gen.py\n"), err
