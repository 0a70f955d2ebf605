import os
from types import SimpleNamespace

from tests import nbval_kernels


class IPyNbFile:  # stands in for nbval's collector: the plugin goes by the class name
    pass


def run_setup(item, seen):
    hook = nbval_kernels.pytest_runtest_setup(item)
    next(hook)  # the plugin's code before the kernel starts
    seen.update(env=os.environ.get("COVERAGE_PROCESS_CONFIG"), source=item.config.option.cov_source)
    try:
        hook.send(None)
    except StopIteration:
        pass


def test_a_notebook_kernel_starts_without_coverage_and_coverage_comes_back(monkeypatch):
    monkeypatch.setenv("COVERAGE_PROCESS_CONFIG", "{}")
    item = SimpleNamespace(parent=IPyNbFile(), config=SimpleNamespace(option=SimpleNamespace(cov_source=["helpers"])))
    seen = {}
    run_setup(item, seen)
    assert seen == {"env": None, "source": None}
    assert os.environ["COVERAGE_PROCESS_CONFIG"] == "{}" and item.config.option.cov_source == ["helpers"]


def test_unit_tests_keep_coverage(monkeypatch):
    monkeypatch.setenv("COVERAGE_PROCESS_CONFIG", "{}")
    item = SimpleNamespace(parent=object(), config=SimpleNamespace(option=SimpleNamespace(cov_source=["helpers"])))
    seen = {}
    run_setup(item, seen)
    assert seen == {"env": "{}", "source": ["helpers"]}
