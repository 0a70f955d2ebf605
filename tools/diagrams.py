"""The static diagrams the chapters link (notebooks/images/), drawn here so they can be drawn again:

    python -m tools.diagrams  # writes notebooks/images/mirrored_strategy_step.png (chapter 3)
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

IMAGES = Path(__file__).resolve().parents[1] / "notebooks" / "images"


def mirrored_step(replicas: int = 4, global_batch: int = 512):
    """MirroredStrategy's training step: split the global batch, compute locally, all-reduce, update."""
    fig, ax = plt.subplots(figsize=(9, 1.2 + 1.1 * replicas))
    ax.set_xlim(0, 10)
    ax.set_ylim(-0.5, replicas + 0.5)
    ax.axis("off")
    box = {"boxstyle": "round,pad=0.4", "facecolor": "#dde8f5", "edgecolor": "#4c72b0"}
    mid = (replicas - 1) / 2
    ax.text(0.8, mid, f"global batch\n{global_batch} examples", ha="center", va="center", bbox=box)
    ax.text(8.9, mid, "all-reduce:\nsum of gradients\nsent to every\nreplica", ha="center", va="center",
            bbox={**box, "facecolor": "#f5e6dd", "edgecolor": "#c44e52"})
    for i in range(replicas):
        y = replicas - 1 - i
        ax.annotate("", (2.2, y), (1.6, mid), arrowprops={"arrowstyle": "->"})
        ax.text(2.9, y, f"{global_batch // replicas} examples", ha="center", va="center", fontsize=9)
        ax.text(5.3, y, f"replica {i}: model copy\nforward + backward", ha="center", va="center", bbox=box)
        ax.annotate("", (8.0, mid), (6.6, y), arrowprops={"arrowstyle": "->"})
        ax.annotate("", (6.6, y - 0.25), (8.0, mid - 0.25),
                    arrowprops={"arrowstyle": "->", "color": "#c44e52", "linestyle": "--"})
    ax.set_title("One synchronous step: split, compute locally, all-reduce, identical update on every replica")
    fig.tight_layout()
    return fig


def main() -> int:
    path = IMAGES / "mirrored_strategy_step.png"
    mirrored_step(replicas=4, global_batch=512).savefig(path, dpi=80, bbox_inches="tight")
    print(f"wrote {path.relative_to(IMAGES.parents[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
