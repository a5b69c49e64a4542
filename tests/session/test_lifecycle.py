"""Issue 25: one lifecycle — ``session.execute`` is the only place that guards a run, opens the board,
runs the script, closes everything and says the closing line; the command line, the IDE page, the
pytest plugin, soak and eval's device path all call it."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest

from maixemu.session import Plugs, RunSpec, execute

PACKAGE = Path(__file__).resolve().parents[2] / "maixemu"
#: the run's own steps: only the lifecycle may take them
STEPS = {"RunGuard", "run_script", "announce_storage"}
CALLERS = {"session/lifecycle.py": "execute",  # run_command, the command line's entry
           "session/ide.py": "execute", "testing/run.py": "execute",
           "tools/soak.py": "execute", "evaluate/worker.py": "execute", "cli.py": "run_command"}


def _called_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            names.add(func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else "")
    return names


def test_only_the_lifecycle_takes_the_runs_steps():
    takers = {str(path.relative_to(PACKAGE)): sorted(_called_names(path) & STEPS)
              for path in PACKAGE.rglob("*.py") if _called_names(path) & STEPS}
    assert takers == {"session/lifecycle.py": sorted(STEPS)}


@pytest.mark.parametrize("module, entry", sorted(CALLERS.items()))
def test_every_caller_goes_through_it(module, entry):
    assert entry in _called_names(PACKAGE / module)


def test_a_script_gets_one_closing_line_after_its_output(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("print('hello')\n")
    out, notices = io.StringIO(), []
    record = execute(RunSpec(lcd="none", camera="synthetic"), script, plugs=Plugs(stdout=out, stderr=io.StringIO()),
                     listeners=[notices.append])
    assert record.exit_code == 0 and out.getvalue() == "hello\n"
    assert [n for n in notices if n.startswith("script finished:")] == [record.summary.line()]
    assert record.board.closed


def test_a_set_up_failure_is_one_line_and_exit_2(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("print('never')\n")
    err = io.StringIO()
    record = execute(RunSpec(lcd="nowhere:x", camera="synthetic"), script, plugs=Plugs(stderr=err))
    assert record.exit_code == 2 and record.outcome is None and record.board.closed
    assert err.getvalue().count("\n") == 1 and err.getvalue().startswith("maixemu: unknown LCD output 'nowhere:x'")


def test_a_function_runs_on_its_own_board_which_is_closed_after(tmp_path):
    from maixemu.firmware import sensor, state

    def body():
        sensor.reset()
        sensor.set_framesize(sensor.QQVGA)
        return state.current(), sensor.snapshot().width()

    record = execute(RunSpec(lcd="none", camera="synthetic", quiet=True), body)
    board, width = record.value
    assert width == 160 and board is record.board.state and record.board.closed
    assert state.current() is not board  # deactivated with the run


def test_a_functions_exception_comes_back_once_the_board_is_off():
    seen = []

    def body():
        from maixemu.firmware import state

        seen.append(state.current())
        raise LookupError("the caller's own")

    with pytest.raises(LookupError, match="the caller's own"):
        execute(RunSpec(lcd="none", camera="synthetic", quiet=True), body)
    assert seen[0].run.reason == "the board was switched off"  # before the exception came back


TRACED_RUN = """
import sys
from pathlib import Path
from maixemu.session import Plugs, RunSpec, execute
calls = [0]
def tracer(frame, event, arg):
    calls[0] += 1
    return None
script = Path(sys.argv[1])
for _ in range(2):  # the second run starts after the first one's script thread withdrew its interrupts
    sys.settrace(tracer)
    code = execute(RunSpec(lcd="none", camera="synthetic", quiet=True), script).exit_code
    sys.settrace(None)
    print(code, calls[0] > 0)
"""


def test_runs_end_under_a_tracer_as_under_pdb_or_coverage(tmp_path):
    """Withdrawing a script thread's interrupt once left CPython's pending-exception signal set for
    good, and a thread under a tracer or profiler then spun at its next call (a run never ended)."""
    import subprocess
    import sys

    script = tmp_path / "main.py"
    script.write_text("import time\ntime.sleep_ms(1)\nprint('done')\n")
    proc = subprocess.run([sys.executable, "-c", TRACED_RUN, str(script)], capture_output=True, text=True,
                          timeout=180, stdin=subprocess.DEVNULL)
    assert proc.stdout.split() == ["done", "0", "True", "done", "0", "True"], proc.stderr
