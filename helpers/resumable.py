"""A small, deterministic training run that survives being killed (chapter 6).

    python -m helpers.resumable --backup-dir DIR --out WEIGHTS.npz [--epochs 4] [--steps 12] [--save-freq epoch|N]
                                [--die-at "step 2 6"]

It trains with keras.callbacks.BackupAndRestore: killed at any moment and started again with the same
arguments, it resumes from the last backup. It prints one line per finished step ("step EPOCH STEP") and
"start epoch E" when an epoch begins. --die-at LINE makes it SIGKILL itself right after printing LINE: the same
abrupt death as a preemption (no cleanup runs), but at an exact point. A kill sent from outside lands a few steps
later on a busy machine, possibly in the middle of writing the backup, which would make the demo unrepeatable.
Op determinism and fixed seeds make two runs with the same history produce identical weights.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

BATCH = 16


def build_data(steps: int, seed: int = 0):
    """Exactly one pass of the data per epoch, in a fixed order: epoch k sees the same batches in any run."""
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(steps * BATCH, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1)) + 0.1 * rng.normal(size=(steps * BATCH, 1))).astype("float32")
    return x, y


def report(line: str, die_at: str | None = None) -> None:
    """Print a progress line at once; if it is the `die_at` line, die by SIGKILL like a preempted machine."""
    print(line, flush=True)
    if line == die_at:
        os.kill(os.getpid(), signal.SIGKILL)


class Progress:
    """Reports where training is, for whoever watches this process."""

    @staticmethod
    def make(die_at: str | None = None):
        import keras

        class _Progress(keras.callbacks.Callback):
            def on_epoch_begin(self, epoch, logs=None):
                self.epoch = epoch
                report(f"start epoch {epoch}", die_at)

            def on_train_batch_end(self, batch, logs=None):
                report(f"step {self.epoch} {batch + 1}", die_at)

        return _Progress()


def train(backup_dir: str, out: str, epochs: int, steps: int, save_freq, die_at: str | None = None) -> None:
    import keras
    import numpy as np
    import tensorflow as tf

    tf.config.experimental.enable_op_determinism()
    keras.utils.set_random_seed(0)
    x, y = build_data(steps)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).repeat()
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")  # Adam: its state must survive too
    # double_checkpoint: Keras writes the backup in place; if a kill lands mid-write, it falls back to the one before.
    backup = keras.callbacks.BackupAndRestore(backup_dir, save_freq=save_freq, double_checkpoint=True)
    model.fit(dataset, epochs=epochs, steps_per_epoch=steps, shuffle=False, verbose=0,
              callbacks=[backup, Progress.make(die_at)])
    np.savez(out, *model.get_weights())
    print("done", flush=True)


def save_frequency(text: str):
    """--save-freq: "epoch" or a positive whole number of steps."""
    if text == "epoch":
        return text
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f'{text!r} is neither "epoch" nor a positive number of steps')
    return int(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.resumable", description=__doc__.splitlines()[0])
    parser.add_argument("--backup-dir", required=True)
    parser.add_argument("--out", required=True, help="where to write the final weights (.npz)")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=12, help="steps per epoch")
    parser.add_argument("--save-freq", type=save_frequency, default="epoch", help='"epoch" or a number of steps')
    parser.add_argument("--die-at", help='SIGKILL this process right after printing this line, e.g. "step 2 6"')
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    train(args.backup_dir, args.out, args.epochs, args.steps, args.save_freq, args.die_at)
    return 0


if __name__ == "__main__":
    sys.exit(main())
