"""tools/device/keras_mfu.py at tiny sizes on this CPU: it runs without TensorFlow, its FLOP formula's Dense
parameter count matches the model's (the script asserts it), and it writes the JSON that data/measured keeps."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_tiny_run_predicts_measures_and_writes_the_json(tmp_path):
    out = tmp_path / "mfu.json"
    script = ROOT / "tools" / "device" / "keras_mfu.py"
    proc = subprocess.run([sys.executable, str(script), "--tiny", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert {"date", "device_kind", "nvidia_smi", "jax", "keras", "recipe", "prediction", "measurement", "how"} <= \
        set(result)
    assert result["tensorflow_imported"] is False
    recipe, prediction, measurement = result["recipe"], result["prediction"], result["measurement"]
    width, depth, batch = recipe["width"], recipe["depth"], recipe["batch"]
    assert recipe["dense_params"] == depth * (width * width + width) + width * 1024 + 1024
    assert prediction["model_flops_per_step"] == 6 * recipe["dense_params"] * batch
    assert prediction["step_seconds"] == prediction["compute_seconds"] + prediction["fixed_seconds"]
    assert len(measurement["per_epoch"]) == recipe["timed_epochs"]
    assert measurement["min"] <= measurement["step_seconds"] <= measurement["max"]
    assert 0 < measurement["mfu"] < 1
    assert "PREDICTED step" in proc.stdout.split("MEASURED step")[0]
