"""A pytest plugin (pyproject's addopts) for the notebooks under nbval, which tests/conftest.py does not reach:
it lives beside the tests, the notebooks are collected from notebooks/."""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    """Start nbval's kernels without coverage: measuring a kernel slows a notebook by about a quarter, and the unit
    tests alone cover helpers well above the threshold. (The kernel starts in the setup of a notebook's first cell;
    coverage reaches it twice: nbval injects it when --cov is given, and coverage's `patch = subprocess` through an
    environment variable.)"""
    if type(item.parent).__name__ != "IPyNbFile":
        return (yield)
    option, saved_source = item.config.option, getattr(item.config.option, "cov_source", None)
    saved_env = os.environ.pop("COVERAGE_PROCESS_CONFIG", None)
    option.cov_source = None
    try:
        return (yield)
    finally:
        option.cov_source = saved_source
        if saved_env is not None:
            os.environ["COVERAGE_PROCESS_CONFIG"] = saved_env
