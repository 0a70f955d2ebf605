"""One Keras 3 model on the JAX backend, its training step time PREDICTED and then MEASURED, and its model-FLOPs
utilisation (MFU): the model FLOPs per second it achieves over the card's bfloat16 matmul ceiling.

The model takes small integer ids (a 64 KiB int32 batch per step, so the host-to-device copy that held
`ceilings_jax.py`'s `keras_mlp` to 6% is negligible): Embedding(1024, W) -> DEPTH x Dense(W, gelu) -> Dense(1024),
sparse categorical cross-entropy from logits, Adam, "mixed_bfloat16", jit_compile=True, steps_per_execution.

1. Prints the recipe.
2. Predicts before timing: model FLOPs per step = 6 x (Dense parameters) x batch (2 per parameter per example
   forward, 4 backward; every Dense layer needs its input's gradient, the first one too, because the embedding
   trains; the embedding's gather does no matmul FLOPs), predicted step = FLOPs / ceiling + fixed cost, where the
   ceiling is an 8192 x 8192 bf16 jnp.matmul timed in this run (best of several after warm-up; the ceiling stored in
   data/measured/nvidia-h200.json is printed beside it) and the fixed cost is the step time of the same loop with
   W = 128 (same depth, batch, steps_per_execution).
3. Measures: fit() for a warm-up epoch (compile, excluded) and several timed epochs; a callback times each epoch,
   blocking on the weights at its end. Reports the median step, min/max over epochs, TFLOP/s, MFU, measured/predicted.
4. Writes the JSON to --out (if given) and prints it.

Here (CPU, a few seconds): `.venv/bin/python tools/device/keras_mfu.py --tiny --out /tmp/mfu.json`.
On a lent GPU (JAX with CUDA, no Keras, no TensorFlow), Keras carried as wheels in `.whl` (data/README.md):
`python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && PYTHONPATH=/tmp/site
 python3 tools/device/keras_mfu.py --out $OUT/keras_mfu.json`.
Keras's JAX trainer runs steps_per_execution as a Python loop of jitted steps: it syncs with the host only once
per that many steps. TensorFlow is never imported (the JSON says so).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ["KERAS_BACKEND"] = "jax"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

VOCAB = 1024
STORED = Path(__file__).resolve().parents[2] / "data" / "measured" / "nvidia-h200.json"
FULL = dict(width=8192, depth=4, batch=16384, steps_per_execution=8, steps_per_epoch=32, epochs=6, fixed_width=128,
            matmul_n=8192)
TINY = dict(width=64, depth=2, batch=256, steps_per_execution=2, steps_per_epoch=4, epochs=3, fixed_width=16,
            matmul_n=256)


def dense_params(width, depth):
    """Parameters of the Dense layers: DEPTH of (W x W + W), then the head (W x 1024 + 1024)."""
    return depth * (width * width + width) + width * VOCAB + VOCAB


def model_flops(width, depth, batch):
    """Matmul FLOPs of one training step: 6 x Dense parameters x examples."""
    return 6 * dense_params(width, depth) * batch


def build(width, depth, steps_per_execution):
    layers = [keras.Input((), dtype="int32"), keras.layers.Embedding(VOCAB, width)]
    layers += [keras.layers.Dense(width, activation="gelu") for _ in range(depth)] + [keras.layers.Dense(VOCAB)]
    model = keras.Sequential(layers)
    model.compile(optimizer=keras.optimizers.Adam(1e-4),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=True, steps_per_execution=steps_per_execution)
    return model


class EpochTimes(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        # fit() has put the last step's state back into the variables: wait until it is computed.
        jax.block_until_ready([v.value for v in self.model.variables + self.model.optimizer.variables])
        self.seconds.append(time.perf_counter() - self.start)


def step_seconds(width, r):
    """Seconds per training step in each timed epoch (the first epoch, which compiles, left out)."""
    model = build(width, r["depth"], r["steps_per_execution"])
    rng = np.random.default_rng(0)
    n = r["batch"] * r["steps_per_epoch"]
    x = rng.integers(0, VOCAB, size=n, dtype=np.int32)
    y = (x * 7 + 3) % VOCAB  # something learnable
    times = EpochTimes()
    model.fit(x, y, batch_size=r["batch"], epochs=r["epochs"], shuffle=False, verbose=0, callbacks=[times])
    assert sum(layer.count_params() for layer in model.layers if isinstance(layer, keras.layers.Dense)) == \
        dense_params(width, r["depth"])
    return [s / r["steps_per_epoch"] for s in times.seconds[1:]]


def matmul_ceiling(n, rounds=7, per_round=10):
    """bf16 TFLOP/s of an n x n x n jnp.matmul: per_round products dispatched back to back (no host sync between
    them), best and median of several rounds after a warm-up."""
    a = jax.random.normal(jax.random.PRNGKey(0), (n, n), jnp.float32).astype(jnp.bfloat16)
    b = jax.random.normal(jax.random.PRNGKey(1), (n, n), jnp.float32).astype(jnp.bfloat16)
    f = jax.jit(jnp.matmul)
    f(a, b).block_until_ready()
    rates = []
    for _ in range(rounds):
        start = time.perf_counter()
        outs = [f(a, b) for _ in range(per_round)]
        jax.block_until_ready(outs)
        rates.append(2 * n**3 * per_round / (time.perf_counter() - start) / 1e12)
    return max(rates), statistics.median(rates)


def stored_ceiling():
    """The fastest bfloat16 row of data/measured/nvidia-h200.json (tools/device/ceilings_jax.py)."""
    try:
        rows = json.loads(STORED.read_text())["matmul"]["bfloat16"]
        row = max(rows, key=lambda row: row["tflops"])
        return {"n": row["n"], "tflops": row["tflops"]}
    except (OSError, KeyError, ValueError):
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny sizes, for a CPU check in a few seconds")
    parser.add_argument("--out", help="where to write the JSON")
    args = parser.parse_args()
    r = dict(TINY if args.tiny else FULL)
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    device = jax.devices()[0]
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,clocks.max.sm,power.limit",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        smi = repr(error)
    recipe = {**r, "vocab": VOCAB, "policy": keras.mixed_precision.global_policy().name, "optimizer": "Adam(1e-4)",
              "loss": "sparse categorical cross-entropy from logits", "jit_compile": True,
              "timed_epochs": r["epochs"] - 1, "dense_params": dense_params(r["width"], r["depth"]),
              "embedding_params": VOCAB * r["width"]}
    print("recipe:", json.dumps(recipe), flush=True)

    flops = model_flops(r["width"], r["depth"], r["batch"])
    best, median = matmul_ceiling(r["matmul_n"])
    stored = stored_ceiling()
    fixed = step_seconds(r["fixed_width"], r)
    ceiling = best * 1e12
    prediction = {
        "formula": "step = 6 x dense_params x batch / ceiling + fixed",
        "model_flops_per_step": flops,
        "ceiling_tflops_now": best, "ceiling_tflops_now_median": median, "ceiling_n": r["matmul_n"],
        "ceiling_tflops_stored": stored and stored["tflops"],
        "ceiling_n_stored": stored and stored["n"], "ceiling_used": "now (best round)",
        "compute_seconds": flops / ceiling,
        "fixed_seconds": statistics.median(fixed), "fixed_min": min(fixed), "fixed_max": max(fixed),
        "fixed_width": r["fixed_width"],
    }
    prediction["step_seconds"] = prediction["compute_seconds"] + prediction["fixed_seconds"]
    print(f"ceiling: {best:.1f} TFLOP/s now (median {median:.1f}, n={r['matmul_n']}); stored:",
          f"{stored['tflops']:.1f} TFLOP/s (n={stored['n']})" if stored else "none", flush=True)
    print(f"PREDICTED step: {flops:.4g} FLOPs / {best:.1f} TFLOP/s = {prediction['compute_seconds'] * 1e3:.3f} ms"
          f" + fixed {prediction['fixed_seconds'] * 1e3:.3f} ms (W={r['fixed_width']})"
          f" = {prediction['step_seconds'] * 1e3:.3f} ms", flush=True)

    steps = step_seconds(r["width"], r)
    step = statistics.median(steps)
    achieved = flops / step
    measurement = {
        "step_seconds": step, "min": min(steps), "max": max(steps), "per_epoch": steps,
        "achieved_tflops": achieved / 1e12, "mfu": achieved / ceiling,
        "mfu_vs_stored_ceiling": stored and achieved / (stored["tflops"] * 1e12),
        "measured_over_predicted": step / prediction["step_seconds"],
        # What neither term covers: gelu, Adam, the embedding's scatter-add, the loss, matmuls off the ceiling.
        "unexplained_seconds": step - prediction["step_seconds"],
    }
    print(f"MEASURED step: {step * 1e3:.3f} ms (min {min(steps) * 1e3:.3f}, max {max(steps) * 1e3:.3f}),"
          f" {achieved / 1e12:.1f} TFLOP/s, MFU {achieved / ceiling:.1%},"
          f" measured/predicted {measurement['measured_over_predicted']:.3f};"
          f" compute at the ceiling {prediction['compute_seconds'] / step:.1%} of the step,"
          f" fixed {prediction['fixed_seconds'] / step:.1%}, the rest {measurement['unexplained_seconds'] / step:.1%}",
          flush=True)

    result = {
        "date": time.strftime("%Y-%m-%d"), "device_kind": device.device_kind, "platform": device.platform,
        "nvidia_smi": smi, "jax": jax.__version__, "keras": keras.__version__, "python": platform.python_version(),
        "tensorflow_imported": "tensorflow" in sys.modules,
        "recipe": recipe, "prediction": prediction, "measurement": measurement,
        "how": ("tools/device/keras_mfu.py" + (" --tiny" if args.tiny else "") + f" on {device.device_kind}: Keras "
                f"{keras.__version__} on the JAX backend, fit() on NumPy int32 ids; the step time predicted from "
                f"6 x Dense parameters x batch over the bf16 ceiling of an n={r['matmul_n']} matmul timed in the same "
                "run, "
                f"plus the step time of the same loop at W={r['fixed_width']}, then measured as the median over the "
                "timed epochs"),
    }
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
