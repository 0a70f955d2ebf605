"""A small, deterministic training run that survives being killed (chapter 6).

    python resumable.py --backup-dir DIR --out WEIGHTS.npz [--epochs 4] [--steps 12] [--save-freq epoch|N]
                        [--die-at "step 2 6"]

It trains with keras.callbacks.BackupAndRestore: killed at any moment and started again with the same arguments, it
resumes from the last backup. It prints "start epoch E" when an epoch begins and "step E S" after each step.
--die-at LINE makes it SIGKILL itself right after printing LINE: the same abrupt death as a preemption (no cleanup
runs), but at an exact point; a kill sent from outside lands a few steps later on a busy machine.
"""

import argparse
import gc
import os
import signal

import keras
import numpy as np
import tensorflow as tf

# TensorFlow's modules live until the program ends: exempt them from garbage collection, which would otherwise
# spend about 2 s scanning them once more at exit (Python docs: gc.freeze).
gc.freeze()

BATCH = 16


class Progress(keras.callbacks.Callback):
    """Prints where training is, for whoever watches this process; dies by SIGKILL after the `die_at` line."""

    def __init__(self, die_at=None):
        super().__init__()
        self.die_at = die_at

    def report(self, line):
        print(line, flush=True)
        if line == self.die_at:
            os.kill(os.getpid(), signal.SIGKILL)  # like a preempted machine: no `finally`, no saving

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch
        self.report(f"start epoch {epoch}")

    def on_train_batch_end(self, batch, logs=None):
        self.report(f"step {self.epoch} {batch + 1}")


def train(backup_dir, out, epochs, steps, save_freq, die_at=None):
    tf.config.experimental.enable_op_determinism()  # with fixed seeds: the same history gives the same weights
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)  # one pass of the data per epoch, in a fixed order
    x = rng.normal(size=(steps * BATCH, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1)) + 0.1 * rng.normal(size=(steps * BATCH, 1))).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).repeat()
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")  # Adam: its state must survive too
    # double_checkpoint: Keras writes the backup in place; if a kill lands mid-write, it falls back to the one before.
    backup = keras.callbacks.BackupAndRestore(backup_dir, save_freq=save_freq, double_checkpoint=True)
    model.fit(dataset, epochs=epochs, steps_per_epoch=steps, shuffle=False, verbose=0,
              callbacks=[backup, Progress(die_at)])
    np.savez(out, *model.get_weights())
    print("done", flush=True)


def save_frequency(text):
    """--save-freq: "epoch" or a positive whole number of steps."""
    if text == "epoch":
        return text
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f'{text!r} is neither "epoch" nor a positive number of steps')
    return int(text)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backup-dir", required=True)
    parser.add_argument("--out", required=True, help="where to write the final weights (.npz)")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=12, help="steps per epoch")
    parser.add_argument("--save-freq", type=save_frequency, default="epoch", help='"epoch" or a number of steps')
    parser.add_argument("--die-at", help='SIGKILL this process right after printing this line, e.g. "step 2 6"')
    args = parser.parse_args()
    train(args.backup_dir, args.out, args.epochs, args.steps, args.save_freq, args.die_at)
