"""Chapter 5's TPU program (helpers/programs/tpu_strategy_fit.py): the four calls that connect TensorFlow to a TPU,
and what it does where tensorflow-tpu is missing. No TPU here: TensorFlow is a stand-in that records its calls."""

import contextlib
import importlib.metadata
import sys
import types
from pathlib import Path

import pytest
from conftest import run_python

from helpers.programs import tpu_strategy_fit

PROGRAM = Path(tpu_strategy_fit.__file__)


class FakeTensorFlow:
    """A `tf` whose TPU calls, model, dataset and fit record what they are given, in order, in `calls`."""

    def __init__(self, replicas=8):
        calls = self.calls = []
        resolver, strategy = object(), types.SimpleNamespace(num_replicas_in_sync=replicas)
        self.resolver, self.strategy = resolver, strategy
        self.in_scope = False

        def recorded(name, result=None):
            def call(*args, **kwargs):
                calls.append((name, args, kwargs))
                return result() if callable(result) else result
            return call

        @contextlib.contextmanager
        def scope():
            calls.append(("strategy.scope", (), {}))
            self.in_scope = True
            yield
            self.in_scope = False

        strategy.scope = scope

        class Model:
            def __init__(model, layers):
                calls.append(("Sequential", (len(layers),), {"in scope": self.in_scope}))

            def compile(model, **kwargs):
                calls.append(("compile", (), {**kwargs, "in scope": self.in_scope}))

            def fit(model, dataset, **kwargs):
                calls.append(("fit", (dataset,), kwargs))
                return types.SimpleNamespace(history={"loss": [2.5, 1.25][: kwargs["epochs"]]})

        class Dataset:
            @staticmethod
            def from_tensor_slices(arrays):
                x, y = arrays
                calls.append(("from_tensor_slices", (x.shape, x.dtype.name, y.shape), {}))
                return types.SimpleNamespace(batch=recorded("batch", "batched dataset"))

        ns = types.SimpleNamespace
        self.distribute = ns(cluster_resolver=ns(TPUClusterResolver=recorded("TPUClusterResolver", resolver)),
                             TPUStrategy=recorded("TPUStrategy", strategy))
        self.config = ns(experimental_connect_to_cluster=recorded("experimental_connect_to_cluster"))
        self.tpu = ns(experimental=ns(initialize_tpu_system=recorded("initialize_tpu_system")))
        self.keras = ns(Sequential=Model, Input=recorded("Input", "input"),
                        layers=ns(Dense=recorded("Dense", "dense")),
                        losses=ns(SparseCategoricalCrossentropy=recorded("SparseCategoricalCrossentropy", "loss")))
        self.data = ns(Dataset=Dataset)

    def names(self):
        return [name for name, _, _ in self.calls]


def test_connect_tpu_makes_the_four_calls_in_order_on_the_local_tpu():
    tf = FakeTensorFlow()
    assert tpu_strategy_fit.connect_tpu(tf) is tf.strategy
    assert tf.calls == [("TPUClusterResolver", (), {"tpu": "local"}),
                        ("experimental_connect_to_cluster", (tf.resolver,), {}),
                        ("initialize_tpu_system", (tf.resolver,), {}),
                        ("TPUStrategy", (tf.resolver,), {})]


NO_TPU_BUILD = f"""
import contextlib, importlib.metadata, io, json, runpy, sys

real_version = importlib.metadata.version


def version(name):  # whatever this machine has: tensorflow-tpu is missing
    if name == "tensorflow-tpu":
        raise importlib.metadata.PackageNotFoundError(name)
    return real_version(name)


importlib.metadata.version = version
sys.argv = [{str(PROGRAM)!r}]
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        runpy.run_path(sys.argv[0], run_name="__main__")
    status = "no exit"
except SystemExit as exit:
    status = exit.code
print(json.dumps({{"status": status, "out": out.getvalue(),
                  "imported": sorted(m for m in sys.modules if m.split(".")[0] in ("tensorflow", "keras"))}}))
"""


def test_without_tensorflow_tpu_the_program_exits_3_with_a_message_and_imports_no_tensorflow():
    found = run_python(NO_TPU_BUILD)
    assert found["status"] == tpu_strategy_fit.NO_TPU_BUILD == 3
    assert found["out"] == ("tensorflow-tpu is not installed: TPUStrategy needs it (a Cloud TPU VM created with a "
                            "TensorFlow software version). On Colab's and Kaggle's TPUs, use Keras on JAX (this "
                            "chapter).\n")
    assert found["imported"] == []  # neither TensorFlow nor Keras (which TensorFlow would import)


def test_main_returns_3_in_process_when_tensorflow_tpu_is_missing(monkeypatch, capsys):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # an import of TensorFlow would now raise ImportError
    assert tpu_strategy_fit.main([]) == 3
    assert capsys.readouterr().out.startswith("tensorflow-tpu is not installed: TPUStrategy needs it")


@pytest.fixture
def tensorflow_tpu(monkeypatch):
    """tensorflow-tpu 2.20.0 'installed' and a stand-in TensorFlow in sys.modules: what main() imports."""
    real_version = importlib.metadata.version
    asked = []

    def version(name):
        asked.append(name)
        return "2.20.0" if name == "tensorflow-tpu" else real_version(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    tf = FakeTensorFlow(replicas=8)
    monkeypatch.setitem(sys.modules, "tensorflow", tf)
    tf.asked = asked
    return tf


def test_with_tensorflow_tpu_main_connects_then_fits_under_the_strategy(tensorflow_tpu, capsys):
    tf = tensorflow_tpu
    assert tpu_strategy_fit.main([]) == 0
    assert "tensorflow-tpu" in tf.asked
    names = tf.names()
    assert names[:4] == ["TPUClusterResolver", "experimental_connect_to_cluster", "initialize_tpu_system",
                         "TPUStrategy"]  # connected first, before any model
    assert names.index("strategy.scope") < names.index("Sequential")
    calls = {name: (args, kwargs) for name, args, kwargs in tf.calls}
    assert calls["Sequential"][1]["in scope"] and calls["compile"][1]["in scope"]  # the weights, one per replica
    assert calls["compile"][1]["steps_per_execution"] == 32
    assert calls["from_tensor_slices"][0] == ((64 * 1024, 784), "float32", (64 * 1024,))  # 64 global batches
    assert calls["batch"] == ((1024,), {"drop_remainder": True})  # 128 per replica x 8 replicas, one shape
    assert calls["fit"] == (("batched dataset",), {"epochs": 2, "verbose": 2})
    assert capsys.readouterr().out == ("tensorflow-tpu 2.20.0: TPUStrategy with 8 replicas, global batch 1024\n"
                                       "losses: 2.500 1.250\n")


def test_the_program_takes_its_batch_fusing_and_epochs_from_the_command_line(tensorflow_tpu, capsys):
    tf = tensorflow_tpu
    assert tpu_strategy_fit.main(["--per-replica-batch", "16", "--steps-per-execution", "4", "--epochs", "1"]) == 0
    calls = {name: (args, kwargs) for name, args, kwargs in tf.calls}
    assert calls["compile"][1]["steps_per_execution"] == 4
    assert calls["batch"] == ((16 * 8,), {"drop_remainder": True})
    assert calls["fit"][1]["epochs"] == 1
    assert "TPUStrategy with 8 replicas, global batch 128" in capsys.readouterr().out


def test_a_failing_connection_stops_the_program_before_any_model(tensorflow_tpu):
    class NoTPU(Exception):
        pass

    def unreachable(resolver):
        raise NoTPU("no TPU at 'local'")

    tensorflow_tpu.tpu.experimental.initialize_tpu_system = unreachable
    with pytest.raises(NoTPU):
        tpu_strategy_fit.main([])
    assert tensorflow_tpu.names() == ["TPUClusterResolver", "experimental_connect_to_cluster"]

