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
