"""The course's one error type and the argument checks that raise it. A leaf module: it imports nothing of the course,
so any module can use it."""

from __future__ import annotations

import os

MAX_DEVICES = 16
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class CourseError(Exception):
    """A mistake the learner can fix; the message says which call, what was wrong and what to do."""


def whole_number(call: str, value, minimum: int = 1, maximum: int | None = None, hint: str = "") -> int:
    """`value` if it is an int (not a bool) from `minimum` to `maximum`, else a CourseError that names the call,
    e.g. whole_number("make_dataset(batch_size=", 0) -> "make_dataset(batch_size=0): use a whole number >= 1."."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or (maximum is not None
                                                                                    and value > maximum):
        allowed = f"from {minimum} to {maximum}" if maximum is not None else f">= {minimum}"
        raise CourseError(f"{call}{value!r}): use a whole number {allowed}{hint}.")
    return value


def check_devices(devices, call: str = "setup(devices=") -> int:
    return whole_number(call, devices, 1, MAX_DEVICES, hint=" logical devices (COURSE_DEVICES sets it too)")


def flag_from_env(name: str, default: bool = False) -> bool:
    """Read a yes/no environment variable strictly, so a typo does not silently mean 'no'."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise CourseError(f"{name}={raw!r} is not a yes/no value: use {name}=1 or {name}=0.")


def int_from_env(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise CourseError(f"{name}={raw!r} is not a whole number: use e.g. {name}=2.") from None
