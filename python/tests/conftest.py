"""The tests run against a build of the project: HPVM_HOME names it (scripts/check-python.sh
sets it, with HPVM_CACHE_DIR for the compiled graphs)."""

import os

import pytest


def pytest_configure(config):
    home = os.environ.get("HPVM_HOME")
    if not home or not os.path.exists(os.path.join(home, "bin", "hpvm-cc")):
        raise pytest.UsageError(
            f"HPVM_HOME is {home!r}; expected the project's build directory (with bin/hpvm-cc). "
            "Run the tests with scripts/check-python.sh")
