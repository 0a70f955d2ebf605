"""Published figures of the accelerators learners get or rent, each with its source, and the ceilings the course
measured itself on a lent H100 (the package is installed without data/, so those numbers live here).

Figures are per chip: one GPU card, one TPU chip; `chips` says how many a rented unit has (Kaggle's 2x T4: 2; a TPU
v2-8 or v3-8: 4 chips of 2 TensorCores; a v5e-8: 8 chips of 1). TFLOP/s are DENSE peaks: NVIDIA's Ampere and Hopper
pages print tensor-core figures "with sparsity" (an asterisk), twice the dense figure; this table stores half of
those. None means the chip has no native support for the dtype, or that no source was found: the notes say which.
The Google TPU figures were read on Google's pages themselves; the NVIDIA figures were checked against copies of
NVIDIA's spec tables (datasheets, product pages) quoted in public pages and repositories, and cite NVIDIA's URL."""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from urllib.parse import urlparse

from helpers.tables import Table

DTYPES = ("float32", "tf32", "float16", "bfloat16")


def _peaks(float32=None, tf32=None, float16=None, bfloat16=None):
    return MappingProxyType(dict(zip(DTYPES, (float32, tf32, float16, bfloat16))))


@dataclass(frozen=True)
class Accelerator:
    name: str
    peak_tflops: MappingProxyType  # dtype -> dense TFLOP/s per chip, or None
    memory_gb: float | None  # per chip
    bandwidth_gb_s: float | None  # memory bandwidth per chip
    interconnect: str
    interconnect_gb_s: float | None  # PCIe: per direction; NVLink: total per GPU; ICI: per chip, as the source gives
    source_urls: tuple[str, ...]
    notes: str
    chips: int = 1

    def unit_tflops(self, dtype: str) -> float | None:
        """The peak of the whole rented unit (all its chips)."""
        peak = self.peak_tflops[dtype]
        return None if peak is None else peak * self.chips

    def ridge_point(self, dtype: str) -> float | None:
        """FLOPs per byte of memory traffic at which the roofline turns from bandwidth-bound to compute-bound."""
        peak = self.peak_tflops[dtype]
        if peak is None or not self.bandwidth_gb_s:
            return None
        return peak * 1e12 / (self.bandwidth_gb_s * 1e9)


T4_PAGE = "https://www.nvidia.com/en-us/data-center/tesla-t4/"
T4_SHEET = "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf"
P100_SHEET = "https://images.nvidia.com/content/tesla/pdf/nvidia-tesla-p100-PCIe-datasheet.pdf"
V100_SHEET = "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"
A100_PAGE = "https://www.nvidia.com/en-us/data-center/a100/"
A100_SHEET = ("https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
              "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf")
A100_40GB_SHEET = "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet.pdf"
H100_PAGE = "https://www.nvidia.com/en-us/data-center/h100/"
TPU_V2 = "https://cloud.google.com/tpu/docs/v2"
TPU_V2_PRESS = ("https://www.elektroniknet.de/halbleiter/prozessoren/chip-innovation-treibt-ki-revolution.175111/"
                "gallerie-748460/seite-4.html")
TPU_V2_NEWS = "https://bitrefine.group/aboutcompany/news/260-announcement-of-google-cloud-tpus-v-2"
TPU_V3 = "https://cloud.google.com/tpu/docs/v3"
TPU_V5E = "https://cloud.google.com/tpu/docs/v5e"
TPU_CORES = "https://docs.jax.dev/en/latest/_autosummary/jax.experimental.pallas.tpu.ChipVersion.html"

_NO_BF16 = "no tf32 or bfloat16 (tensor cores arrived with FP16 only); "
_PCIE3 = ("PCIe Gen3 x16: NVIDIA's T4 and V100 PCIe datasheets print 32 GB/s interconnect bandwidth, "
          "16 GB/s per direction")
_T4 = dict(peak_tflops=_peaks(float32=8.1, float16=65.0), memory_gb=16, bandwidth_gb_s=320,
           interconnect="PCIe Gen3 x16", interconnect_gb_s=16.0, source_urls=(T4_PAGE, T4_SHEET))
_T4_NOTES = (_NO_BF16 + "float16 is the datasheet's 'mixed precision (FP16/FP32)' tensor-core figure; 16 GB GDDR6; "
             "the product page prints '320+ GB/s', the datasheet '300 GB/sec'; " + _PCIE3 + ".")

ACCELERATORS = (
    Accelerator("T4", notes=_T4_NOTES, **_T4),
    Accelerator("Kaggle 2x T4", chips=2, notes="two T4 cards in one machine, figures per card; the T4 has no NVLink "
                "(its only interconnect is x16 PCIe Gen3), so card-to-card traffic crosses PCIe. " + _T4_NOTES, **_T4),
    Accelerator("P100 PCIe 16GB", _peaks(float32=9.3, float16=18.7), 16, 732, "PCIe Gen3 x16", 16.0,
                (P100_SHEET,), "Pascal has no tensor cores: float16 is the datasheet's half-precision figure "
                "(2x float32); no tf32 or bfloat16; 16 GB CoWoS HBM2 at 732 GB/s; " + _PCIE3 + "."),
    Accelerator("V100 SXM2 16GB", _peaks(float32=15.7, float16=125.0), 16, 900, "NVLink 2.0", 300.0, (V100_SHEET,),
                _NO_BF16 + "float16 is the datasheet's tensor figure (125 TFLOPS); 16 or 32 GB HBM2 at 900 GB/s; "
                "NVLink 300 GB/s per GPU (bi-directional). The PCIe card is slower (14 / 112 TFLOPS)."),
    Accelerator("A100 SXM 40GB", _peaks(19.5, 156.0, 312.0, 312.0), 40, 1555, "NVLink 3", 600.0,
                (A100_40GB_SHEET, A100_PAGE), "dense figures (the datasheet's sparse ones are 2x: TF32 312*, "
                "BF16/FP16 624*); 40 GB HBM2 at 1,555 GB/s; NVLink 600 GB/s per GPU."),
    Accelerator("A100 SXM 80GB", _peaks(19.5, 156.0, 312.0, 312.0), 80, 2039, "NVLink 3", 600.0,
                (A100_SHEET, A100_PAGE), "dense figures (sparse: TF32 312*, BF16/FP16 624*); 80 GB HBM2e at "
                "2,039 GB/s (the 80 GB PCIe card: 1,935 GB/s, same TFLOP/s); NVLink 600 GB/s; PCIe Gen4 64 GB/s."),
    Accelerator("H100 SXM 80GB", _peaks(67.0, 989 / 2, 1979 / 2, 1979 / 2), 80, 3350, "NVLink 4", 900.0,
                (H100_PAGE,), "NVIDIA prints TF32 989* and BF16/FP16 1,979* teraFLOPS with sparsity: stored halved "
                "(dense); 80 GB HBM3 at 3.35 TB/s; NVLink 900 GB/s, PCIe Gen5 128 GB/s. The H100 NVL on the same page "
                "differs: 60 FP32, 835* TF32, 1,671* BF16/FP16, 94 GB at 3.9 TB/s, NVLink 600 GB/s."),
    Accelerator("H100 PCIe 80GB", _peaks(), None, None, "PCIe Gen5 x16", None, (H100_PAGE,),
                "not verified: the copies of NVIDIA's H100 table found list the SXM and NVL parts only, and no "
                "NVIDIA source for the H100 PCIe card was found; every figure is left None."),
    Accelerator("TPU v2-8", _peaks(bfloat16=45.0), None, None, "ICI", None,
                (TPU_V2, TPU_V2_PRESS, TPU_V2_NEWS, TPU_CORES), chips=4,
                notes="4 chips of 2 TensorCores (v2-8 = 8 cores); 45 TFLOP/s per chip from trade press "
                "(4 x 45 = the 180 TFLOPS Google announced for a TPU v2 board); Google's v2 page prints no figures: "
                "memory, HBM bandwidth and ICI not verified; no float32/float16 peak is published."),
    Accelerator("TPU v3-8", _peaks(bfloat16=123.0), 32, 900, "ICI", None, (TPU_V3, TPU_CORES), chips=4,
                notes="4 chips of 2 TensorCores; per chip 123 TFLOP/s bf16, 32 GiB HBM2 (Google prints GiB) at "
                "900 GB/s; a v3-8: 4 x 123 = 492 TFLOP/s, 128 GiB; ICI bandwidth not printed by Google, not verified."),
    Accelerator("TPU v5e-8", _peaks(bfloat16=197.0), 16, 819, "ICI (2D torus)", 400.0, (TPU_V5E, TPU_CORES),
                chips=8, notes="8 chips of 1 TensorCore (8 chips per host); per chip 197 TFLOP/s bf16, 16 GB HBM2 at "
                "819 GB/s (another version of the page prints 800 GiBps), ICI 400 GB/s bidirectional per chip (4 "
                "ports); a v5e-8: 8 x 197 = 1,576 TFLOP/s, 128 GB."),
)

# Runtime names -> row: TensorFlow/nvidia-smi GPU names and JAX TPU device_kind, lower-cased.
_NAMES = (
    (r"h100.*pcie", "H100 PCIe 80GB"),
    (r"h100.*(sxm|hbm3)", "H100 SXM 80GB"),
    (r"a100.*sxm.*80", "A100 SXM 80GB"),
    (r"a100.*sxm.*40", "A100 SXM 40GB"),
    (r"v100.*sxm2.*16", "V100 SXM2 16GB"),
    (r"p100.*pcie.*16", "P100 PCIe 16GB"),
    (r"\bt4\b", "T4"),
    (r"tpu v2\b", "TPU v2-8"),
    (r"tpu v3\b", "TPU v3-8"),
    (r"tpu v5 ?(lite|e)\b|v5litepod", "TPU v5e-8"),
)


def lookup(device_name: str) -> Accelerator | None:
    """The row for a name a runtime reports ('Tesla T4', 'NVIDIA A100-SXM4-80GB', 'TPU v5 lite'), or None."""
    by_name = {a.name.lower(): a for a in ACCELERATORS}
    name = device_name.strip().lower()
    if name in by_name:
        return by_name[name]
    for pattern, row in _NAMES:
        if re.search(pattern, name):
            return by_name[row.lower()]
    return None


def _host(url: str) -> str:
    return urlparse(url).netloc.removeprefix("www.")


def _fmt(value) -> str:
    return "-" if value is None else f"{value:g}"


def published_table() -> Table:
    rows = [[a.name, a.chips, *(_fmt(a.peak_tflops[d]) for d in DTYPES), _fmt(a.memory_gb), _fmt(a.bandwidth_gb_s),
             a.interconnect + ("" if a.interconnect_gb_s is None else f" {a.interconnect_gb_s:g} GB/s"),
             _host(a.source_urls[0])] for a in ACCELERATORS]
    return Table(["accelerator", "chips", "float32", "tf32", "float16", "bfloat16", "memory GB", "GB/s",
                  "interconnect", "source"], rows, title="Published dense peaks per chip (TFLOP/s)")


def sources() -> Table:
    return Table(["accelerator", "source"], [[a.name, url] for a in ACCELERATORS for url in a.source_urls])


# Measured by tools/device/ceilings_jax.py on a lent NVIDIA H100 80GB HBM3 (SXM, 700 W); the JSON is
# data/measured/nvidia-h100-80gb-hbm3.json. Best over each sweep of the per-size medians, rounded to 0.1.
MEASURED_H100_SWEEPS = MappingProxyType({"float32": "float32 (highest precision)",
                                         "tf32": "float32 (default precision: TF32 on tensor cores)",
                                         "bfloat16": "bfloat16", "float16": "float16"})
MEASURED_H100 = MappingProxyType({
    "device": "NVIDIA H100 80GB HBM3",
    "date": "2026-11-26",
    "jax": "0.11.2",
    "matmul_tflops": MappingProxyType({"float32": 51.5, "tf32": 382.7, "bfloat16": 643.5, "float16": 654.8}),
    "memory_bandwidth_gb_s": 2706.5,
    "host_to_device_gb_s": 9.7,
})


def this_gpu() -> Accelerator | None:
    """The table's row for this runtime's first GPU (by TensorFlow's name for it); None without a GPU or a row."""
    import tensorflow as tf  # only here: the table itself needs no TensorFlow

    gpus = tf.config.list_physical_devices("GPU")
    return lookup(tf.config.experimental.get_device_details(gpus[0]).get("device_name", "")) if gpus else None


def published_peak(dtype: str = "float32") -> tuple[str, float] | None:
    """(name, FLOP/s) of the published `dtype` peak of this runtime's first GPU, if the table knows it; else None."""
    import tensorflow as tf

    card = this_gpu()
    if card and dtype == "float32" and card.peak_tflops.get("tf32") and \
            tf.config.experimental.tensor_float_32_execution_enabled():
        return f"{card.name} (TF32, TensorFlow's default for float32 there)", card.peak_tflops["tf32"] * 1e12
    peak = card.peak_tflops.get(dtype) if card else None
    return (card.name, peak * 1e12) if peak else None


def one_way_link_gb_s(card: Accelerator) -> float | None:
    """The link's bandwidth in one direction, what a ring all-reduce's send step uses: NVLink's and ICI's figures
    above count both directions, PCIe's one."""
    if card.interconnect_gb_s is None:
        return None
    return card.interconnect_gb_s if card.interconnect.startswith("PCIe") else card.interconnect_gb_s / 2
