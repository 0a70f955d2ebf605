"""Chapter 3's code: the terminal sweep's point reports its spread (helpers.bench); the cells the notebook exports
(helpers.chapters.ch03_multi_gpu). The folded notes' claims (the notebook does not run their code): a softmax output
with from_logits=True, and what fails on logical CPUs. Section 7's timing: tests/unit/test_replica_timing.py."""

import warnings

import numpy as np
import pytest
from conftest import run_python

from helpers import data
from helpers.bench import ch03_multi_gpu
from helpers.chapters.ch03_multi_gpu import cross_device_op, one_weight_model


@pytest.fixture
def small_reuters(monkeypatch):
    rng = np.random.default_rng(0)

    def load_reuters():
        x = rng.integers(1, 30982, size=(64, 300))
        y = rng.integers(0, 46, size=64)
        return data.Reuters(x_train=x, y_train=y, x_test=x, y_test=y, num_classes=46, source="test stand-in")

    monkeypatch.setattr(ch03_multi_gpu, "load_reuters", load_reuters)


def test_replica_throughput_reports_the_median_and_the_spread_of_its_timed_epochs(small_reuters):
    point = ch03_multi_gpu.replica_throughput(per_replica_batch=8, steps=3, epochs=4)
    assert point["replicas"] == 1 and point["global_batch"] == 8
    # Three timed epochs after the first (tracing) one: their median lies within their range.
    assert point["samples_per_s_min"] <= point["samples_per_s"] <= point["samples_per_s_max"]
    assert point["samples_per_s"] == pytest.approx(point["steps_per_s"] * point["global_batch"])
    assert point["first_epoch_s"] > 0


# The chapter's exported cells ------------------------------------------------------------------------------------

def test_cross_device_op_names_no_all_reduce_for_one_device_and_reduction_to_one_device_between_cpus():
    assert cross_device_op(["/device:CPU:0"]) is None
    assert type(cross_device_op(["/device:CPU:0", "/device:CPU:1"])).__name__ == "ReductionToOneDevice"


def test_the_empty_steps_model_has_one_weight_and_one_bias_per_class():
    model = one_weight_model()
    assert model.count_params() == 46 + 46
    assert model(np.ones((2, 300), "int32")).shape == (2, 46)


# The notes section 3 and section 6 fold away: what they say, checked on the installed versions -------------------

def test_keras_uses_a_softmax_outputs_logits_unless_an_op_stands_between_them_and_the_loss():
    import keras
    import tensorflow as tf

    rng = np.random.default_rng(0)
    toy_x = rng.normal(size=(1024, 32)).astype("float32")
    toy_y = np.argmax(toy_x @ rng.normal(size=(32, 46)), axis=1)
    final, warned = {}, {}
    for last_layer in ("logits", "softmax", "softmax, clipped"):
        keras.utils.set_random_seed(0)
        inputs = keras.Input((32,))
        outputs = keras.layers.Dense(46, activation=None if last_layer == "logits" else "softmax")(inputs)
        if last_layer == "softmax, clipped":
            outputs = keras.layers.Lambda(lambda p: tf.clip_by_value(p, 1e-7, 1.0))(outputs)
        toy = keras.Model(inputs, outputs)
        toy.compile(optimizer=keras.optimizers.Adam(0.01),
                    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            final[last_layer] = toy.fit(toy_x, toy_y, batch_size=128, epochs=6, verbose=0).history["loss"][-1]
        warned[last_layer] = any("from_logits" in str(w.message) for w in caught)
    floor = np.log(1 + 45 / np.e)  # 2.865: a perfect softmax output, softmaxed again
    assert warned == {"logits": False, "softmax": True, "softmax, clipped": False}
    assert abs(final["softmax"] - final["logits"]) < 1e-3 * final["logits"] and final["logits"] < floor
    assert final["softmax, clipped"] > floor
    perfect = tf.one_hot([3], depth=46)
    double = keras.losses.sparse_categorical_crossentropy(tf.constant([3]), perfect, from_logits=True)
    assert float(double[0]) == pytest.approx(floor, rel=1e-5)


LOGICAL_CPUS = """
import json, warnings
import numpy as np, tensorflow as tf, keras
warnings.simplefilter("ignore")
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
cpus = [d.name for d in tf.config.list_logical_devices("CPU")]
rng = np.random.default_rng(0)
ds = tf.data.Dataset.from_tensor_slices((rng.integers(1, 30982, (128, 300)), rng.integers(0, 46, 128)))
ds = ds.batch(32, drop_remainder=True)
found = []
for ops, options in [(None, {"steps_per_execution": 2}),
                     (tf.distribute.ReductionToOneDevice(), {"steps_per_execution": 2}),
                     (tf.distribute.ReductionToOneDevice(), {"jit_compile": True})]:
    with tf.distribute.MirroredStrategy(cpus, cross_device_ops=ops).scope():
        small = keras.Sequential([keras.Input((300,), dtype="int32"), keras.layers.Embedding(30982, 7),
                                  keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(46)])
        small.compile(optimizer="nadam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      **options)
    try:
        small.fit(ds.take(2), epochs=1, verbose=0)
        found.append("works")
    except tf.errors.InvalidArgumentError as err:
        found.append(str(err))
print(json.dumps(found))
"""


def test_on_logical_cpus_the_default_op_breaks_fused_steps_and_xla_breaks_with_any_op():
    default_fused, reduction_fused, reduction_xla = run_python(LOGICAL_CPUS)
    assert "You must feed a value for placeholder tensor" in default_fused
    assert reduction_fused == "works"
    assert "Trying to access resource" in reduction_xla
