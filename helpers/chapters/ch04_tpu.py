"""Chapter 4's step-fusing experiment: steady steps/s at several `steps_per_execution`
(`python -m helpers.bench step-fusing`)."""

from __future__ import annotations

import helpers
from helpers.tables import Result

# The TensorFlow TPU guide: steps_per_execution=50 "increases throughput by about 50%" (small MNIST model, TPU).
PUBLISHED_TPU_GAIN = {"published: TF TPU guide, MNIST on a TPU": ([50], [1.5])}


# notebook cell: step_fusing_sweep
STEPS_PER_EXECUTION = (1, 8, 32)


def fused_steps_per_second(build_model, steps_per_execution, dataset, *, strategy, steps, epochs=3):
    """Train a fresh model that runs `steps_per_execution` training steps per call into the device; return steady
    steps/s (the first epoch, with tracing, is left out)."""
    with strategy.scope():
        model = build_model()
        model.compile(optimizer="adam", loss=helpers.models.matching_loss(), steps_per_execution=steps_per_execution)
    timer = helpers.timing.EpochTimer()
    model.fit(dataset, epochs=epochs, steps_per_epoch=steps, verbose=0, callbacks=[timer])
    return steps / timer.steady_seconds


def step_fusing_sweep(strategy, fast: bool, values=STEPS_PER_EXECUTION, per_replica_batch: int = 32,
                      warm_up: bool = True) -> dict:
    """Steady steps/s at each steps_per_execution, for a tiny model and (not in fast mode) the course model, under
    `strategy`. warm_up=False skips the warm-up run, for a process that has already trained a model."""
    data = helpers.data.load_reuters()
    dataset = helpers.data.make_dataset(data.x_train, data.y_train, per_replica_batch * strategy.num_replicas_in_sync,
                                        repeat=True, drop_remainder=True)
    steps = 32 if fast else 320  # a multiple of every value: each epoch ends on a whole execution
    models = {"Conv1D (course model)": helpers.models.reuters_conv1d,
              "bag of words (tiny)": helpers.models.reuters_bag_of_words}
    if warm_up:  # the first training run in a process pays one-time costs its own first epoch does not absorb
        fused_steps_per_second(models["bag of words (tiny)"], 1, dataset, strategy=strategy, steps=8, epochs=2)
    if fast:  # the tiny model shows fusing best; fast mode leaves out the course model's 3 fits (half the time)
        del models["Conv1D (course model)"]
    epochs = 2 if fast else 4  # the first (tracing) epoch is left out: fast mode times one epoch per setting
    return {name: [fused_steps_per_second(build, n, dataset, strategy=strategy, steps=steps, epochs=epochs)
                   for n in values] for name, build in models.items()}
# end of notebook cell


def fusing_gains(sweep: dict, values=STEPS_PER_EXECUTION) -> dict:
    """{model: (steps_per_execution values, steps/s relative to the first value)}, plus the published TPU point."""
    return {**{name: (list(values), [r / rates[0] for r in rates]) for name, rates in sweep.items()},
            **PUBLISHED_TPU_GAIN}


def step_fusing(fast: bool) -> Result:
    """steps_per_execution 1, 8, 32 under the best strategy here: steady steps/s and the gain over 1."""
    strategy = helpers.devices.choose_strategy(verbose=False)
    sweep = step_fusing_sweep(strategy, fast)
    rows = [[name, n, round(rate, 1), round(rate / rates[0], 2)]
            for name, rates in sweep.items() for n, rate in zip(STEPS_PER_EXECUTION, rates)]
    fig = helpers.plots.lines(fusing_gains(sweep), logx=True, xlabel="steps_per_execution",
                              ylabel="steps/s relative to steps_per_execution=1",
                              title=f"Step fusing, {strategy.num_replicas_in_sync} replica(s), 32 examples per replica")
    return Result("step-fusing", ["model", "steps_per_execution", "steps_per_s", "vs_1"], rows, fig)
