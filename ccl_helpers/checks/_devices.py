"""The devices this machine has: the check that a device argument names one of them.

Shared by the :class:`~ccl_helpers.checks.Device` rule and ``CCL_DEVICE``
(:func:`ccl_helpers.runtime.device`): a device this machine lacks is a ValueError that
names the argument (or the variable) and the devices available, before any tensor is
made there."""

from __future__ import annotations

import torch


def mps_available() -> bool:
    """Whether Apple's MPS device is available."""
    return (
        getattr(torch.backends, "mps", None) is not None
        and torch.backends.mps.is_available()
    )


def available_devices() -> list[str]:
    """The devices this machine has, as a message lists them: ``cpu``, then ``cuda``
    (with its indices when there are several) and ``mps`` where present."""
    available = ["cpu"]
    if torch.cuda.is_available():
        count = torch.cuda.device_count()
        available.append(f"cuda (indices 0..{count - 1})" if count > 1 else "cuda")
    if mps_available():
        available.append("mps")
    return available


def is_available(device: torch.device | None) -> bool:
    """Whether this machine has ``device``: the CPU and ``meta`` (the device without
    data) always; CUDA when present, with an index below the device count; MPS when
    present; another type when its torch module says it is available; None (no
    device) never."""
    if device is None:
        return False
    if device.type in ("cpu", "meta"):
        return True
    if device.type == "cuda":
        return torch.cuda.is_available() and (
            device.index is None or device.index < torch.cuda.device_count()
        )
    if device.type == "mps":
        return mps_available()
    backend = getattr(torch, device.type, None)
    return bool(getattr(backend, "is_available", lambda: False)())


def check_available(name: str, device: torch.device | None, given=None) -> torch.device:
    """``device`` if this machine has it (``is_available``); else ValueError naming
    ``name`` and the devices available (``given``: the value as the user wrote it;
    ``device`` None where it names no device)."""
    if not is_available(device):
        raise ValueError(
            f"{name} must name a device available on this machine "
            f"({', '.join(available_devices())}), got "
            f"{device if given is None else given!r}"
        )
    return device


def lacking_device() -> str:
    """A device this machine lacks: ``cuda`` without CUDA, else the index past the last
    GPU."""
    if not torch.cuda.is_available():
        return "cuda"
    return f"cuda:{torch.cuda.device_count()}"
