"""This runtime's ceilings measured with JAX alone (the lent GPU machines have JAX with CUDA, no TensorFlow):
matmul FLOP/s per dtype over a sweep of sizes, device memory bandwidth, host-to-device bandwidth, and XLA's own
FLOP count of one matmul. Writes JSON to the path given (default: stdout). Run by hand on a lent GPU:
`python tools/device/ceilings_jax.py $OUT/ceilings.json`."""

import json
import os
import platform
import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np


def timed(fn, *args, repeats=7):
    fn(*args).block_until_ready()  # compile and warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args).block_until_ready()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)


def matmul_sweep(dtype, precision, sizes):
    rows = []
    key = jax.random.PRNGKey(0)
    for n in sizes:
        a = jax.random.normal(key, (n, n), dtype=jnp.float32).astype(dtype)
        b = jax.random.normal(key, (n, n), dtype=jnp.float32).astype(dtype)
        f = jax.jit(lambda x, y: jnp.matmul(x, y, precision=precision))
        median, low, high = timed(f, a, b)
        flops = 2 * n**3
        rows.append({"n": n, "seconds": median, "min": low, "max": high, "tflops": flops / median / 1e12})
    return rows


def keras_mlp(keras, device):
    """Training steps of a 4-layer Dense stack under each policy: the achieved FLOP/s against 6 x parameters x
    examples (the forward pass is 2 FLOPs per parameter per example, the backward pass twice that)."""
    width, batch, steps = (4096, 4096, 20) if device.platform == "gpu" else (256, 256, 3)
    rows = []
    for policy in ("float32", "mixed_bfloat16", "mixed_float16"):
        keras.mixed_precision.set_global_policy(policy)
        model = keras.Sequential([keras.Input((width,))] + [keras.layers.Dense(width, activation="relu")
                                                            for _ in range(4)])
        model.compile(optimizer="adam", loss="mse", jit_compile=True)
        x = np.random.default_rng(0).normal(size=(batch * steps, width)).astype("float32")
        model.fit(x, x, batch_size=batch, epochs=1, verbose=0)  # compile
        times = []
        for _ in range(3):
            start = time.perf_counter()
            model.fit(x, x, batch_size=batch, epochs=1, verbose=0)
            times.append((time.perf_counter() - start) / steps)
        step = statistics.median(times)
        flops = 6 * model.count_params() * batch
        rows.append({"policy": policy, "params": model.count_params(), "batch": batch, "step_seconds": step,
                     "min": min(times), "max": max(times), "tflops": flops / step / 1e12})
    keras.mixed_precision.set_global_policy("float32")
    return rows


def main():
    keras_only = "--keras-only" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--keras-only"]
    out = args[0] if args else None
    device = jax.devices()[0]
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "jax": jax.__version__,
        "python": platform.python_version(),
        "device_kind": device.device_kind,
        "platform": device.platform,
    }
    try:
        result["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total,clocks.max.sm,power.limit", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as error:  # noqa: BLE001
        result["nvidia_smi"] = repr(error)
    if keras_only:
        return finish(result, out)
    sizes = [512, 1024, 2048, 4096, 8192, 16384] if device.platform == "gpu" else [256, 512]
    result["matmul"] = {
        "float32 (highest precision)": matmul_sweep(jnp.float32, jax.lax.Precision.HIGHEST, sizes),
        "float32 (default precision: TF32 on tensor cores)": matmul_sweep(jnp.float32, None, sizes),
        "bfloat16": matmul_sweep(jnp.bfloat16, None, sizes),
        "float16": matmul_sweep(jnp.float16, None, sizes),
    }
    # XLA's count of one matmul's FLOPs and bytes, against 2*n^3 and 3*n^2*itemsize.
    n = 4096 if device.platform == "gpu" else 256
    a = jnp.ones((n, n), jnp.bfloat16)
    cost = jax.jit(jnp.matmul).lower(a, a).compile().cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    result["xla_cost_matmul_4096_bf16"] = {"flops": cost.get("flops"), "bytes accessed": cost.get("bytes accessed"),
                                           "formula_flops": 2 * n**3, "formula_bytes": 3 * n * n * 2}
    # Device memory bandwidth: y = x * 2 reads and writes every byte once.
    bw = []
    for mib in (256, 1024, 4096) if device.platform == "gpu" else (64,):
        x = jnp.ones((mib * 2**20 // 4,), jnp.float32)
        median, low, high = timed(jax.jit(lambda v: v * 2.0), x, repeats=9)
        bw.append({"mib": mib, "seconds": median, "gb_per_s": 2 * x.nbytes / median / 1e9,
                   "min_gb_per_s": 2 * x.nbytes / high / 1e9, "max_gb_per_s": 2 * x.nbytes / low / 1e9})
        del x
    result["memory_bandwidth"] = bw
    # Host to device: device_put of pinned-less NumPy arrays.
    h2d = []
    for mib in (64, 256, 1024):
        host = np.ones((mib * 2**20 // 4,), np.float32)
        jax.device_put(host, device).block_until_ready()
        times = []
        for _ in range(5):
            start = time.perf_counter()
            jax.device_put(host, device).block_until_ready()
            times.append(time.perf_counter() - start)
        median = statistics.median(times)
        h2d.append({"mib": mib, "seconds": median, "gb_per_s": host.nbytes / median / 1e9})
    result["host_to_device"] = h2d
    return finish(result, out)


def finish(result, out):
    # A Keras model on the JAX backend, if Keras is here: achieved FLOP/s, counting 6 x parameters x examples.
    try:
        os.environ.setdefault("KERAS_BACKEND", "jax")
        import keras
        result["keras"] = keras.__version__
        result["keras_mlp"] = keras_mlp(keras, jax.devices()[0])
    except Exception as error:  # noqa: BLE001
        result["keras"] = f"not available: {error!r}"
    text = json.dumps(result, indent=1)
    if out:
        with open(out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
