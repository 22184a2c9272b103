"""Paddle tensor metadata in the plain forms the graph model uses ("float32", "cpu", [2, 4])."""

from __future__ import annotations

import functools
from typing import Any

from ...graph.model import GradInfo


@functools.cache
def cpu_only_build() -> bool:
    """A Paddle built for the CPU alone (no CUDA, ROCm, XPU, IPU, custom device): every
    tensor is on the CPU, so its place need not be asked for (~2 Paddle calls a tensor,
    microseconds each right after a step)."""
    import paddle

    try:
        built = [
            paddle.is_compiled_with_cuda(), paddle.is_compiled_with_rocm(),
            paddle.is_compiled_with_xpu(), paddle.is_compiled_with_ipu(),
            bool(paddle.device.get_all_custom_device_type()),
        ]  # fmt: skip
    except Exception:  # noqa: BLE001 (an API missing or failing: ask each tensor)
        return False
    return not any(built)


def dtype_name(dtype: Any) -> str:
    """paddle.float32 / VarType.FP32 / DataType.FLOAT32 -> "float32"."""
    text = str(dtype)
    for prefix in ("paddle.", "VarType.", "DataType."):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    aliases = {"FP32": "float32", "FP16": "float16", "FP64": "float64", "BF16": "bfloat16"}
    return aliases.get(text, text.lower())


def place_name(place: Any) -> str:
    """Place(cpu) -> "cpu", Place(gpu:0) -> "gpu:0", CPUPlace -> "cpu"."""
    text = str(place)
    if text.startswith("Place(") and text.endswith(")"):
        return text[len("Place(") : -1]
    if text.lower().startswith("cpuplace"):
        return "cpu"
    return text


def tensor_grad_info(tensor: Any) -> GradInfo | None:
    """dtype/shape/place of a tensor; None if it cannot be read (e.g. freed storage)."""
    try:
        return GradInfo(
            dtype=dtype_name(tensor.dtype),
            shape=tuple(int(d) for d in tensor.shape),
            place=place_name(tensor.place),
        )
    except (RuntimeError, ValueError, TypeError):  # Paddle's errors for an unreadable tensor
        return None
