"""Chapter 5's exercises (input pipelines): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

from helpers.exercises import _close, exercise


@exercise("ch5.shuffle_buffer_mb")
def _shuffle_buffer_mb(answer):
    # 3000 images x 224 x 224 x 3 float32 values x 4 bytes.
    if _close(answer, 3000 * 224 * 224 * 3 * 4 / 1e6):
        return None
    if _close(answer, 3000 * 224 * 224 * 3 / 1e6):
        return "the images were divided by 255: they are float32, 4 bytes per value."
    if _close(answer, 3000 * 224 * 224 * 3 * 4 / 2**20):
        return "use 1 MB = 10^6 bytes here (you divided by 2^20)."
    return "bytes = images x height x width x channels x bytes per value; then divide by 10^6."


@exercise("ch5.faster_pipeline")
def _faster_pipeline(answer):
    # Measured: both pipelines run over a small generated image folder; the edited one must deliver every file once
    # per epoch and, after its first epoch, at least twice the slow one's images/s.
    import tempfile
    from pathlib import Path

    from helpers.images import list_image_folder, make_image_folder
    from helpers.timing import examples_per_second

    slow, faster = answer
    with tempfile.TemporaryDirectory() as folder:
        paths, labels, names = list_image_folder(make_image_folder(Path(folder) / "shapes", per_class=40))
        one_epoch = sorted(int(label) for _, batch in faster(paths, names) for label in batch)
        if one_epoch != sorted(labels.tolist()):
            return ("faster_pipeline must deliver every file exactly once per epoch, as slow_pipeline does "
                    f"({len(one_epoch)} labels came out for {len(paths)} files).")
        steps = -(-len(paths) // 64)  # batches per epoch; the timing starts after one full epoch
        # Each pipeline's best of three, taken in turns: a busy machine (another notebook, a shared Colab VM) slows
        # single short runs at random, and must not turn a right answer into a wrong one.
        datasets = [make(paths, names).repeat() for make in (slow, faster)]
        rates = [[], []]
        for _ in range(3):
            for rate, dataset in zip(rates, datasets):
                rate.append(examples_per_second(dataset, batches=2 * steps, warmup=steps + 1))
    ratio = max(rates[1]) / max(rates[0])
    if ratio >= 2:
        return None
    return (f"faster_pipeline delivered {ratio:.1f}x slow_pipeline's images/s; 2x is the goal. Decode in parallel "
            "(num_parallel_calls), keep decoded images with cache(), prepare batches ahead with prefetch().")
