"""The distribution strategy for this runtime: which one fits the hardware (plan_strategy), a TPU's, and the one to
use (choose_strategy)."""

from __future__ import annotations

from dataclasses import dataclass

import tensorflow as tf

from helpers.devices import tpu_hint, tpu_runtime_missing


@dataclass(frozen=True)
class StrategyPlan:
    """Which strategy fits the hardware, on which devices, with which all-reduce, and why."""

    kind: str  # "TPUStrategy", "MirroredStrategy" or "OneDeviceStrategy"
    devices: tuple[str, ...]
    cross_device_ops: str | None
    reason: str


def plan_strategy(physical_gpus: int, logical_gpus: list[str], logical_cpus: list[str], tpu: bool) -> StrategyPlan:
    """TPU > several devices > one GPU > CPU, with a cross-device op that works on that hardware."""
    if tpu:
        return StrategyPlan("TPUStrategy", (), None, "a TPU is connected")
    if len(logical_gpus) > 1:
        if physical_gpus > 1:
            return StrategyPlan(
                "MirroredStrategy", tuple(logical_gpus), "NcclAllReduce",
                f"{len(logical_gpus)} GPUs; NCCL all-reduce between real cards",
            )
        return StrategyPlan(
            "MirroredStrategy", tuple(logical_gpus), "HierarchicalCopyAllReduce",
            f"{len(logical_gpus)} logical GPUs carved from one card; NCCL needs separate physical GPUs",
        )
    if logical_gpus:
        return StrategyPlan("OneDeviceStrategy", (logical_gpus[0],), None, "one GPU")
    if len(logical_cpus) > 1:
        return StrategyPlan(
            "MirroredStrategy", tuple(logical_cpus), "ReductionToOneDevice",
            f"{len(logical_cpus)} logical CPU devices standing in for accelerators; the default "
            "collective ring fails there with steps_per_execution > 1",
        )
    return StrategyPlan("OneDeviceStrategy", (logical_cpus[0] if logical_cpus else "/cpu:0",), None, "CPU only")



def connect_tpu():
    """A TPUStrategy over the TPU attached to this runtime (TensorFlow's TPU build must be installed). Chapter 5
    teaches the calls one by one (its TPU program's connect_tpu); TensorFlow's shortcut `connect` makes the first
    three: resolve the TPU ("local": this VM's own), connect to it, initialise it."""
    return tf.distribute.TPUStrategy(tf.distribute.cluster_resolver.TPUClusterResolver.connect(tpu="local"))


def usable_tpu_strategy():
    """connect_tpu() if a TPU is attached and usable here, else None (with the reason printed)."""
    hint = tpu_hint()
    if hint is None:
        return None
    missing = tpu_runtime_missing()
    if missing:
        print(missing)
        return None
    try:
        return connect_tpu()
    except Exception as err:  # any failure here means: no usable TPU, fall back
        print(f"TPU hinted ({hint}) but not usable with TensorFlow {tf.__version__}: {err}")
        return None


def choose_strategy(verbose: bool = True) -> tf.distribute.Strategy:
    """The best strategy this runtime supports (see plan_strategy), ready for `with strategy.scope()`."""
    tpu_strategy = usable_tpu_strategy()
    plan = plan_strategy(
        physical_gpus=len(tf.config.get_visible_devices("GPU")),
        logical_gpus=[d.name for d in tf.config.list_logical_devices("GPU")],
        logical_cpus=[d.name for d in tf.config.list_logical_devices("CPU")],
        tpu=tpu_strategy is not None,
    )
    if tpu_strategy is not None:
        strategy = tpu_strategy
    elif plan.kind == "MirroredStrategy":
        ops = getattr(tf.distribute, plan.cross_device_ops)()
        strategy = tf.distribute.MirroredStrategy(devices=list(plan.devices), cross_device_ops=ops)
    else:
        strategy = tf.distribute.OneDeviceStrategy(plan.devices[0])
    if verbose:
        ops = f" with {plan.cross_device_ops}" if plan.cross_device_ops else ""
        print(f"Strategy: {plan.kind} over {strategy.num_replicas_in_sync} replica(s){ops} ({plan.reason})")
    return strategy
