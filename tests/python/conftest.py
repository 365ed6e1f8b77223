"""pytest over the installed memscope module and the memscope executable (scripts/python-check.sh).

MEMSCOPE_CLI names the memscope executable the answers are compared with. The module must be
the installed one, not this repository's python/ folder. A skipped test fails the session:
nothing here may pass by not running.
"""

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
DATA = ROOT / "tests" / "data"

_skipped = []


def cli_path():
    cli = os.environ.get("MEMSCOPE_CLI") or shutil.which("memscope")
    if not cli or not os.access(cli, os.X_OK):
        pytest.fail("set MEMSCOPE_CLI to the memscope executable to compare with")
    return cli


@pytest.fixture(scope="session")
def cli():
    return cli_path()


def pytest_runtest_logreport(report):
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if _skipped and session.exitstatus == 0:
        print(f"\nconftest: {len(_skipped)} test(s) skipped, which counts as failing: {_skipped}")
        session.exitstatus = 1
