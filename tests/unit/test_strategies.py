"""helpers/strategies.py: the strategy plan for each kind of hardware, connecting a TPU, and the strategy chosen."""

from types import SimpleNamespace

import pytest
import tensorflow as tf

from helpers import devices, strategies
from helpers.strategies import StrategyPlan, plan_strategy


def test_usable_tpu_strategy_without_hint_returns_none(monkeypatch, capsys):
    monkeypatch.setattr(strategies, "tpu_hint", lambda: None)

    def never(**kwargs):
        raise AssertionError("must not try to resolve a TPU without a hint")

    monkeypatch.setattr(tf.distribute.cluster_resolver, "TPUClusterResolver", never)
    assert strategies.usable_tpu_strategy() is None
    assert capsys.readouterr().out == ""


def test_usable_tpu_strategy_with_a_build_without_tpu_support_points_to_chapters_5_and_9(monkeypatch, capsys):
    monkeypatch.setenv("TPU_NAME", "fake-tpu")
    monkeypatch.setattr(devices, "tpu_build", lambda: None)

    def never(**kwargs):
        raise AssertionError("must not try to connect with a TensorFlow that has no TPU runtime")

    monkeypatch.setattr(tf.distribute.cluster_resolver, "TPUClusterResolver", never)
    assert strategies.usable_tpu_strategy() is None
    out = capsys.readouterr().out
    assert out.startswith(f"A TPU seems attached (TPU_NAME=fake-tpu), but TensorFlow {tf.__version__} here cannot use")
    assert "so this notebook runs at fast sizes on the host CPU. Chapters 5 and 9 (05_tpu.ipynb and 09_" in out
    assert "pip install" not in out  # TensorFlow's TPU build would replace the runtime's libtpu


def test_usable_tpu_strategy_falls_back_when_connecting_fails(monkeypatch, capsys):
    monkeypatch.setenv("TPU_NAME", "fake-tpu")
    monkeypatch.setattr(devices, "tpu_build", lambda: "tensorflow-tpu 2.20.0")

    def failing_connect():
        raise ValueError("Please provide a TPU Name to connect to.")

    monkeypatch.setattr(strategies, "connect_tpu", failing_connect)
    assert strategies.usable_tpu_strategy() is None
    assert capsys.readouterr().out == (
        f"TPU hinted (TPU_NAME=fake-tpu) but not usable with TensorFlow {tf.__version__}: "
        "Please provide a TPU Name to connect to.\n"
    )


def test_usable_tpu_strategy_success_path(monkeypatch):
    monkeypatch.setenv("COLAB_TPU_ADDR", "10.0.0.2:8470")
    monkeypatch.setattr(devices, "tpu_build", lambda: "tensorflow-tpu 2.20.0")
    strategy = object()
    monkeypatch.setattr(strategies, "connect_tpu", lambda: strategy)
    assert strategies.usable_tpu_strategy() is strategy


@pytest.mark.parametrize(
    "args, kind, devs, ops, reason",
    [
        ((0, [], ["/cpu:0"], True), "TPUStrategy", (), None, "a TPU is connected"),
        ((4, ["/cpu:0"], [], True), "TPUStrategy", (), None, "a TPU is connected"),
        ((2, ["g0", "g1"], ["c0"], False), "MirroredStrategy", ("g0", "g1"), "NcclAllReduce",
         "2 GPUs; NCCL"),
        ((1, ["g0", "g1", "g2"], ["c0"], False), "MirroredStrategy", ("g0", "g1", "g2"),
         "HierarchicalCopyAllReduce", "3 logical GPUs carved from one card"),
        ((1, ["g0"], ["c0", "c1"], False), "OneDeviceStrategy", ("g0",), None, "one GPU"),
        ((0, [], ["c0", "c1"], False), "MirroredStrategy", ("c0", "c1"), "ReductionToOneDevice",
         "2 logical CPU devices standing in for accelerators"),
        ((0, [], ["c0"], False), "OneDeviceStrategy", ("c0",), None, "CPU only"),
        ((0, [], [], False), "OneDeviceStrategy", ("/cpu:0",), None, "CPU only"),
    ],
)
def test_plan_strategy(args, kind, devs, ops, reason):
    plan = plan_strategy(*args)
    assert (plan.kind, plan.devices, plan.cross_device_ops) == (kind, devs, ops)
    assert plan.reason.startswith(reason)


def test_plan_strategy_ops_exist_in_tensorflow():
    plans = [plan_strategy(2, ["a", "b"], [], False), plan_strategy(1, ["a", "b"], [], False),
             plan_strategy(0, [], ["a", "b"], False)]
    for plan in plans:
        ops = getattr(tf.distribute, plan.cross_device_ops)
        assert issubclass(ops, tf.distribute.CrossDeviceOps)


def test_choose_strategy_in_process(capsys):
    strategy = strategies.choose_strategy()  # the test process has one CPU device and no GPU
    assert isinstance(strategy, tf.distribute.OneDeviceStrategy)
    assert capsys.readouterr().out == "Strategy: OneDeviceStrategy over 1 replica(s) (CPU only)\n"
    strategies.choose_strategy(verbose=False)
    assert capsys.readouterr().out == ""


def test_choose_strategy_follows_a_mirrored_plan(monkeypatch, capsys):
    plan = StrategyPlan("MirroredStrategy", ("/device:CPU:0",), "ReductionToOneDevice", "test plan")
    monkeypatch.setattr(strategies, "plan_strategy", lambda **kwargs: plan)
    strategy = strategies.choose_strategy()
    assert isinstance(strategy, tf.distribute.MirroredStrategy)
    assert strategy.num_replicas_in_sync == 1
    assert capsys.readouterr().out == (
        "Strategy: MirroredStrategy over 1 replica(s) with ReductionToOneDevice (test plan)\n"
    )


def test_choose_strategy_prefers_a_connected_tpu(monkeypatch, capsys):
    tpu_strategy = SimpleNamespace(num_replicas_in_sync=8)
    monkeypatch.setattr(strategies, "usable_tpu_strategy", lambda: tpu_strategy)
    assert strategies.choose_strategy() is tpu_strategy
    assert capsys.readouterr().out == (
        "Strategy: TPUStrategy over 8 replica(s) (a TPU is connected)\n"
    )
