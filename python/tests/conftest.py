"""Shared fixtures: the repository root, the project's h5py generators, and
the oracles (h5py, hdf5plugin), skipped when absent."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INTEROP = os.path.join(ROOT, "tests", "interop")


def need(module):
    """The module, or skip the test ("skipped: ..." in the report)."""
    try:
        return __import__(module)
    except Exception:  # noqa: BLE001
        pytest.skip("skipped: %s is not installed" % module)


@pytest.fixture(scope="session")
def gen_random():
    """The project's random h5py file generator (tests/interop/gen_random_h5.py)."""
    need("h5py")
    sys.path.insert(0, INTEROP)
    import gen_random_h5
    return gen_random_h5
