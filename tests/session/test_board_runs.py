"""Every run is a power-on reset (issue 11): runs in one process never see each other's board —
the model budget, the device ``sys`` — and nothing a script does reaches the host ``sys``."""

from __future__ import annotations

import gc
import io
import sys

from maixemu.runner import RunSpec, run_script

KEEPS_A_MODEL = """
import KPU as kpu
task = kpu.load(0xF00000)      # kept until the script ends (and by its functions afterwards)
def keep():
    return task
print("loaded", task.model_size() > 0)
"""


def test_eight_runs_in_one_process_each_keep_a_model(tmp_path):
    script = tmp_path / "main.py"
    script.write_text(KEEPS_A_MODEL)
    codes, errors = [], []
    collecting = gc.isenabled()
    gc.disable()  # nothing frees the earlier runs' models behind the test's back
    try:
        for _ in range(8):
            err = io.StringIO()
            codes.append(run_script(RunSpec(lcd="none", camera="synthetic", quiet=True), script,
                                    stdout=io.StringIO(), stderr=err))
            errors.append(err.getvalue())
    finally:
        if collecting:
            gc.enable()
    assert codes == [0] * 8, errors


DEVICE_SYS = """
import sys
sys.path.append("/sd/lib")
print(sys.path)
print(sys.argv)
try:
    sys.setrecursionlimit(50)
except AttributeError:
    print("no setrecursionlimit")
try:
    sys.path = []
except AttributeError:
    print("sys.path cannot be replaced")
print(sorted(n for n in dir(sys) if not n.startswith("__")))
print(sys.implementation.name, sys.platform, sys.byteorder, sys.maxsize == 2**63 - 1)
print(sys.modules)
"""


def test_device_sys_is_the_boards_own_and_nothing_reaches_the_host_or_the_next_run(tmp_path, capsys):
    script = tmp_path / "main.py"
    script.write_text(DEVICE_SYS)
    host_path, host_argv, host_limit = list(sys.path), list(sys.argv), sys.getrecursionlimit()
    outputs = []
    for _ in range(2):
        out = io.StringIO()
        code = run_script(RunSpec(lcd="none", camera="synthetic", quiet=True), script, argv=["-x"],
                          stdout=out, stderr=io.StringIO())
        assert code == 0
        outputs.append(out.getvalue() or capsys.readouterr().out)
    assert sys.path == host_path and sys.argv == host_argv and sys.getrecursionlimit() == host_limit
    assert outputs[0] == outputs[1]  # the second run starts from the device's own sys again
    lines = outputs[0].splitlines()
    assert lines[0] == "['', '.', '/sd', '/flash', '/sd/lib']"
    assert lines[1] == f"['{script}', '-x']"
    assert lines[2:4] == ["no setrecursionlimit", "sys.path cannot be replaced"]
    assert lines[4] == ("['argv', 'byteorder', 'exit', 'implementation', 'maxsize', 'modules', 'path', 'platform', "
                        "'print_exception', 'stderr', 'stdin', 'stdout', 'version', 'version_info']")
    assert lines[5] == "micropython MaixPy little True"
    assert lines[6] == "{}"


def test_a_module_on_an_appended_device_path_is_importable(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper.py").write_text("VALUE = 42\n")
    script = tmp_path / "main.py"
    script.write_text("import sys\nsys.path.append('/sd/lib')\nimport helper\nprint(helper.VALUE)\n"
                      "print('helper' in sys.modules)\n")
    out = io.StringIO()
    code = run_script(RunSpec(lcd="none", camera="synthetic", quiet=True), script, stdout=out,
                      stderr=io.StringIO())
    assert code == 0
    assert out.getvalue().splitlines() == ["42", "True"]
