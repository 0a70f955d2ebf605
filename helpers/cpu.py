"""What this machine's CPU is and which 16-bit formats it computes natively, read from /proc/cpuinfo: no TensorFlow
or JAX, so chapters on either backend (and runtimes without TensorFlow, such as Colab's TPU runtime) can print it."""

from __future__ import annotations

import platform


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# CPU instructions that compute in a 16-bit float format natively, as Linux's /proc/cpuinfo names them: Intel AMX
# tiles and AVX-512 (x86), Arm's BF16 extension and half-precision SIMD. Without them a CPU converts each 16-bit
# value to float32 and back around the arithmetic.
CPU_16BIT_FLAGS = {"bfloat16": ("amx_bf16", "avx512_bf16", "bf16"), "float16": ("amx_fp16", "avx512_fp16", "asimdhp")}


def cpu_flags(cpuinfo: str | None = None) -> set[str] | None:
    """The CPU's feature flags: the `flags` line (x86) or `Features` line (Arm) of /proc/cpuinfo, or of `cpuinfo`
    when given. None where there is nothing to read (macOS, Windows): unknown, which is not the same as absent."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as f:
                cpuinfo = f.read()
        except OSError:
            return None
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return None


def cpu_16bit_support(flags: set[str] | None) -> dict[str, list[str] | None]:
    """For "bfloat16" and "float16": which of CPU_16BIT_FLAGS the CPU has ([] for none), or None if unknown."""
    return {dtype: None if flags is None else [name for name in names if name in flags]
            for dtype, names in CPU_16BIT_FLAGS.items()}
