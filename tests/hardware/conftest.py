"""Fixtures shared by the hardware tests."""

from __future__ import annotations

from typing import Any

import pytest
import smbus2.smbus2 as smbus2_module


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """smbus2's ioctl handed to the bus itself when it is a fake kernel (it has `carry(request,
    arg)`); a real file descriptor still reaches the real ioctl."""
    real = smbus2_module.ioctl     # type: ignore[attr-defined]

    def ioctl(fd: Any, request: int, arg: Any = 0, *rest: Any) -> Any:
        carry = getattr(fd, "carry", None)
        if carry is not None:
            return carry(request, arg)
        return real(fd, request, arg, *rest)

    monkeypatch.setattr(smbus2_module, "ioctl", ioctl)
