"""The CanMV example corpus (``../shared/scripts/canmv_examples``), staged and judged as its ``plan.json`` says.

Each row of the plan is one test: the script's ``files`` are copied into a fresh ``/sd`` under the
given names (sub-folders such as ``KPU/yolo_face_detect/`` included), ``flash`` is mapped, the plan's
``args`` are parsed by ``maixemu run``'s own argument parser, and the script runs in-process with a
frame budget. ``expect: ok`` means exit 0, no traceback, and — for a script whose loop never ends
— the frame budget reached (so an error swallowed by a demo's ``except Exception as e: print(e)``
still fails); ``expect: error:TEXT`` means TEXT appears in the output.

Rows that fail today because a feature another part of the team is building is missing are
``xfail(strict=True)`` with that feature named: the run must fail *with that feature's own message*
(anything else is a real failure), and the row flips to a failure (XPASS) the day the feature lands,
so the entry gets removed.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from canmv_plan import PLAN, ROWS, outcome, run_plan_row


class MissingFeature(AssertionError):
    """The run failed with the message of a feature the table names as not built yet."""


@dataclass(frozen=True)
class Missing:
    signature: str  # text the failing run's output contains (the feature's own error message)
    feature: str
    owner: str


LATER = "the issue-12 modules helper"
#: Rows that fail on a feature being built elsewhere: script -> what is missing and who builds it.
MISSING: dict[str, Missing] = {
    "01-K210/50-Hardware/demo_wdt.py": Missing(
        "machine.WDT is not emulated", "machine.WDT timeouts with callbacks and the reset", LATER),
}


def _params() -> list:
    params = []
    for script in sorted(ROWS):
        missing = MISSING.get(script)
        marks = []
        if missing is not None:
            marks.append(pytest.mark.xfail(strict=True, raises=MissingFeature,
                                           reason=f"needs {missing.feature} ({missing.owner})"))
        params.append(pytest.param(script, marks=marks, id=script.removeprefix("01-K210/")))
    return params


def test_plan_has_the_corpus_64_scripts():
    if not ROWS:
        pytest.skip(f"{PLAN} not found (../shared/scripts is absent)")
    assert len(ROWS) == 64
    assert set(MISSING) <= set(ROWS), sorted(set(MISSING) - set(ROWS))
    assert len(ROWS) - len(MISSING) >= 51  # the floor today; issue 12 asks for 58 once issue 13 lands


@pytest.mark.scripts
@pytest.mark.parametrize("script", _params())
def test_canmv_example(script: str, maixpy):
    row = ROWS[script]
    result = run_plan_row(row, maixpy)
    as_expected, why = outcome(row, result)
    tail = (result.stdout[-1500:] + "\n--- stderr ---\n" + result.stderr[-2500:])
    missing = MISSING.get(script)
    if as_expected:
        return  # an expected-fail row that passes is reported by pytest as XPASS(strict): remove it above
    if missing is not None and missing.signature in result.stdout + result.stderr:
        raise MissingFeature(f"{script}: {missing.feature} is missing ({why})")
    raise AssertionError(f"{script}: not as the plan expects ({row['expect']}): {why}\n{tail}")
