"""Chapter 7's measured exercises: each checker accepts its solution and refuses the starting code and each shortcut.
The solutions and the starting code are the notebook's, read for each test (solutions.py)."""

import os

import keras
import pytest
import tensorflow as tf
from solutions import folded_solution, run, starting_code, with_solution

from helpers.exercises import check


def verdict(capsys, name, answer):
    check(name, answer)
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out.rstrip("\n")


NOTEBOOK = {}  # the notebook's starting code and solutions, read again for each test (fixture below)


@pytest.fixture(autouse=True)
def notebook_functions():
    service = starting_code("ch7.each_element_once")
    NOTEBOOK["through_the_service start"] = run(service, "through_the_service", tf=tf)
    NOTEBOOK["through_the_service solution"] = run(with_solution(service, folded_solution("ch7.each_element_once")),
                                                   "through_the_service", tf=tf)
    NOTEBOOK["train start"] = run(starting_code("ch7.resumed_weights"), "train", keras=keras)
    NOTEBOOK["train solution"] = run(folded_solution("ch7.resumed_weights"), "train", keras=keras)


# ch7.each_element_once: through_the_service(dataset, service_target) -> the dataset the trainer reads.

def service(mode):
    return lambda dataset, target: dataset.apply(tf.data.experimental.service.distribute(mode, target))


def test_the_solution_is_accepted(capsys):
    assert verdict(capsys, "ch7.each_element_once", NOTEBOOK["through_the_service solution"]) == (
        "[ch7.each_element_once] Correct. Well done.")


def test_the_sharding_policy_itself_is_accepted(capsys):
    assert verdict(capsys, "ch7.each_element_once",
                   service(tf.data.experimental.service.ShardingPolicy.DYNAMIC)).endswith("Correct. Well done.")


def test_the_starting_code_gets_the_count_it_received(capsys):
    assert verdict(capsys, "ch7.each_element_once", NOTEBOOK["through_the_service start"]) == (
        "[ch7.each_element_once] Not yet: the trainer received 24 elements for 12 (12 distinct): with 2 tf.data "
        "workers, which processing mode splits one epoch between them?")


def test_the_dataset_itself_does_not_go_through_the_service(capsys):
    assert verdict(capsys, "ch7.each_element_once", lambda dataset, target: dataset) == (
        "[ch7.each_element_once] Not yet: the trainer received 12 elements, but none came through the tf.data "
        "service: apply tf.data.experimental.service.distribute(...) to the dataset.")


def test_dropping_the_copies_of_parallel_epochs_is_refused(capsys):
    out = verdict(capsys, "ch7.each_element_once", lambda dataset, target: service("parallel_epochs")(
        dataset, target).unique())
    assert out.startswith("[ch7.each_element_once] Not yet: each element arrived once, but each of the 2 tf.data "
                          "workers produced all 12"), out


def test_taking_the_first_twelve_of_parallel_epochs_is_refused(capsys):
    out = verdict(capsys, "ch7.each_element_once",
                  lambda dataset, target: service("parallel_epochs")(dataset, target).take(12))
    # Which 12 arrive first depends on the two workers' pace: copies among them, or (rarely) one worker's all 12.
    assert out.startswith("[ch7.each_element_once] Not yet: "), out
    assert "received 12 elements for 12 (" in out or "each of the 2 tf.data workers produced all 12" in out, out


def test_a_service_followed_by_prefetch_is_accepted(capsys):
    assert verdict(capsys, "ch7.each_element_once", lambda dataset, target: service("distributed_epoch")(
        dataset, target).prefetch(1)) == "[ch7.each_element_once] Correct. Well done."


@pytest.mark.parametrize("answer", [
    lambda dataset, target: service("distributed_epoch")(dataset, target).take(0).concatenate(dataset),
    lambda dataset, target: service("distributed_epoch")(dataset, target).take(1).flat_map(lambda _: dataset),
], ids=["concatenated", "captured"])
def test_a_source_read_beside_the_service_is_refused(capsys, answer):
    # The graph holds a DataServiceDataset, but the 12 elements come straight from the dataset read beside it.
    assert verdict(capsys, "ch7.each_element_once", answer) == (
        "[ch7.each_element_once] Not yet: the trainer received 12 elements, but the returned dataset also reads a "
        "source beside the tf.data service (RangeDataset): return the dataset that "
        "tf.data.experimental.service.distribute(...) gives, with at most light steps (map, prefetch) after it.")


def test_not_a_dataset_gets_a_hint(capsys):
    out = verdict(capsys, "ch7.each_element_once", lambda dataset, target: [1, 2])
    assert out == ("[ch7.each_element_once] Not yet: through_the_service must return a tf.data.Dataset (it returned "
                   "a list).")


# ch7.resumed_weights: train(model, dataset, epochs, backup_dir, callbacks), killed once, then run again.

def with_backup(model, dataset, epochs, backup_dir, callbacks):  # the folded solution
    NOTEBOOK["train solution"](model, dataset, epochs, backup_dir, callbacks)


def as_given(model, dataset, epochs, backup_dir, callbacks):  # the exercise cell's starting code
    NOTEBOOK["train start"](model, dataset, epochs, backup_dir, callbacks)


def backup_after_the_check(model, dataset, epochs, backup_dir, callbacks):
    model.fit(dataset, epochs=epochs, callbacks=[*callbacks, keras.callbacks.BackupAndRestore(backup_dir)], verbose=0)


def backup_every_two_steps(model, dataset, epochs, backup_dir, callbacks):
    backup = keras.callbacks.BackupAndRestore(backup_dir, save_freq=2)
    model.fit(dataset, epochs=epochs, callbacks=[backup, *callbacks], verbose=0)


def reseeded(model, dataset, epochs, backup_dir, callbacks):  # restores nothing: re-creates the first initial weights
    keras.utils.set_random_seed(0)
    model.set_weights(keras.models.clone_model(model).get_weights())
    model.fit(dataset, epochs=epochs, callbacks=callbacks, verbose=0)


def fewer_epochs(model, dataset, epochs, backup_dir, callbacks):
    model.fit(dataset, epochs=epochs - 1, callbacks=callbacks, verbose=0)


def skips_to_the_epoch(model, dataset, epochs, backup_dir, callbacks):  # resumes the count, not the weights
    marker = os.path.join(backup_dir, "epoch")
    start = int(open(marker).read()) if os.path.exists(marker) else 0

    class Mark(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            with open(marker, "w") as f:
                f.write(str(epoch + 1))

    model.fit(dataset, epochs=epochs, initial_epoch=start, callbacks=[Mark(), *callbacks], verbose=0)


def weights_without_optimizer(model, dataset, epochs, backup_dir, callbacks):  # loses Adam's state
    path, marker = os.path.join(backup_dir, "last.weights.h5"), os.path.join(backup_dir, "epoch")
    start = 0
    if os.path.exists(path):
        model.load_weights(path)  # the new model's optimizer is not built yet: its saved state is not restored
        start = int(open(marker).read())

    class Save(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            model.save_weights(path)
            with open(marker, "w") as f:
                f.write(str(epoch + 1))

    model.fit(dataset, epochs=epochs, initial_epoch=start, callbacks=[Save(), *callbacks], verbose=0)


def forgets_the_callbacks(model, dataset, epochs, backup_dir, callbacks):
    backup = keras.callbacks.BackupAndRestore(backup_dir)
    model.fit(dataset, epochs=epochs, callbacks=[backup], verbose=0)


@pytest.mark.parametrize("answer", [with_backup, backup_after_the_check], ids=["backup first", "backup last"])
def test_a_backup_restored_on_restart_is_accepted(capsys, answer):
    assert verdict(capsys, "ch7.resumed_weights", answer) == "[ch7.resumed_weights] Correct. Well done."


@pytest.mark.parametrize("answer, hint", [
    (as_given, r"the restarted run trained 16 steps \(epochs 0-3\): it started over and ended \S+ away from the "
               r"uninterrupted run's weights\. Keep a backup in backup_dir"),
    (reseeded, r"the restarted run trained 16 steps \(epochs 0-3\): it started over \(its weights match only because "
               r"it re-created the first run's initial weights\)"),
    (fewer_epochs, r"the restarted run trained 12 steps \(epochs 0-2\) and ended \S+ away"),
    (skips_to_the_epoch, r"the restarted run trained 8 steps \(epochs 2-3\) and ended \S+ away from the uninterrupted "
                         r"run's weights: it must continue from the model and optimizer state at the end of epoch 1"),
    (backup_every_two_steps, r"the restarted run trained 8 steps \(epochs 2-3\) and ended \S+ away .*a backup every N "
                             r"steps restarts the epoch from its first batch"),
    (weights_without_optimizer, r"the restarted run trained 8 steps \(epochs 2-3\) and ended \S+ away .*the "
                                r"optimizer's state was not restored: build a new model's optimizer before "
                                r"load_weights"),
    (forgets_the_callbacks, r"the first run was to be interrupted after step 3 of epoch 2 but was not: pass "
                            r"`callbacks` to fit"),
], ids=["starting code", "reseeded", "fewer epochs", "epoch count only", "backup every 2 steps",
        "weights without optimizer", "callbacks dropped"])
def test_runs_that_do_not_resume_exactly_are_refused(capsys, answer, hint):
    import re

    out = verdict(capsys, "ch7.resumed_weights", answer)
    assert re.match(rf"\[ch7\.resumed_weights\] Not yet: {hint}", out), out


# the shortcuts and variants the review found, each refused or accepted on purpose.

_SNAPSHOT = {}  # what memory_snapshot keeps between the check's two calls, in this process only


def memory_snapshot(model, dataset, epochs, backup_dir, callbacks):
    """C7-X1: a 'resume' from weights and optimizer variables kept in Python memory: it survives the check's
    in-process interruption, never a real kill, and writes nothing to backup_dir."""
    class Keep(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            _SNAPSHOT.update(epoch=epoch + 1, weights=model.get_weights(),
                             optimizer=[v.numpy() for v in model.optimizer.variables])

    start = 0
    if _SNAPSHOT:
        model.optimizer.build(model.trainable_variables)
        model.set_weights(_SNAPSHOT["weights"])
        for variable, value in zip(model.optimizer.variables, _SNAPSHOT["optimizer"]):
            variable.assign(value)
        start = _SNAPSHOT["epoch"]
    model.fit(dataset, epochs=epochs, initial_epoch=start, callbacks=[Keep(), *callbacks], verbose=0)


def test_a_snapshot_kept_in_memory_is_refused(capsys):
    _SNAPSHOT.clear()
    assert verdict(capsys, "ch7.resumed_weights", memory_snapshot) == (
        "[ch7.resumed_weights] Not yet: the weights match, but the interrupted run left backup_dir empty: a killed "
        "program keeps nothing in memory, so a restarted one can resume only from what was written to backup_dir "
        "(keras.callbacks.BackupAndRestore(backup_dir) writes it as training goes).")


def exact_mid_epoch_resume(model, dataset, epochs, backup_dir, callbacks):
    """C7-X2: a custom loop that backs up after every batch (weights, optimizer, epoch and batch) and resumes at the
    next batch: the weights match with 5 steps instead of BackupAndRestore's 8."""
    import json

    state = os.path.join(backup_dir, "state.json")
    weights = os.path.join(backup_dir, "latest.weights.h5")
    model.optimizer.build(model.trainable_variables)  # before load_weights, so that Adam's state is restored
    epoch0, batch0 = 0, 0
    if os.path.exists(state):
        model.load_weights(weights)
        epoch0, batch0 = json.load(open(state))
    for callback in callbacks:
        callback.set_model(model)
    for epoch in range(epoch0, epochs):
        for callback in callbacks:
            callback.on_epoch_begin(epoch)
        for batch, (x, y) in enumerate(dataset):
            if epoch == epoch0 and batch < batch0:
                continue
            model.train_on_batch(x, y)
            model.save_weights(weights, overwrite=True)
            with open(state, "w") as f:
                json.dump([epoch, batch + 1], f)
            for callback in callbacks:
                callback.on_train_batch_end(batch)


def test_an_exact_mid_epoch_resume_is_accepted(capsys):
    assert verdict(capsys, "ch7.resumed_weights", exact_mid_epoch_resume) == (
        "[ch7.resumed_weights] Correct. Well done.")


def test_a_repeated_dataset_gets_a_hint_not_a_hang(capsys):
    # C1-X4: the check counts what arrives; an endless dataset must end the count, with a hint.
    out = verdict(capsys, "ch7.each_element_once",
                  lambda dataset, target: service("distributed_epoch")(dataset, target).repeat())
    assert out.startswith(
        "[ch7.each_element_once] Not yet: the returned dataset had not ended after 49 elements ("), out
    assert out.endswith("for 12: remove any .repeat(); the trainer must get one epoch, each element once."), out


def test_a_repeat_that_never_yields_gets_a_hint_not_a_hang(capsys):
    # C1-X4: .repeat().filter(nothing passes) never delivers a first element; the graph decides before reading.
    out = verdict(capsys, "ch7.each_element_once",
                  lambda dataset, target: service("distributed_epoch")(dataset, target).repeat().filter(
                      lambda element: element < 0))
    assert out == ("[ch7.each_element_once] Not yet: the returned dataset has a .repeat() and TensorFlow cannot tell "
                   "where it ends: remove the .repeat(); the trainer must get one epoch, each element once."), out


def test_sharding_parallel_epochs_is_refused(capsys):
    # keeping every other element of "parallel_epochs" (shard(2, 0)) can deliver 12 elements, but each
    # tf.data worker still produced all 12; which 12 arrive depends on the two workers' pace.
    out = verdict(capsys, "ch7.each_element_once",
                  lambda dataset, target: service("parallel_epochs")(dataset, target).shard(2, 0))
    assert out.startswith("[ch7.each_element_once] Not yet: "), out
    assert "received 12 elements for 12 (" in out or "each of the 2 tf.data workers produced all 12" in out, out
