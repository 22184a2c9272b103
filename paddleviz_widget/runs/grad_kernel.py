"""One compiled call for a step's gradient summary (the optional ``fast`` extra: llvmlite).

Right after Paddle's step every distinct NumPy or Paddle call costs 5-40 us (cold caches,
benchmarks/RESULTS.md "Round 7, per step"), so the per-step summary's cost is its number of
calls. This reads every CPU float32/float64 gradient in one call, one pass each: the sum of
squares in float64 and the largest |x| on the bits (|x|'s bits compare as the values do;
above Inf's bits is a NaN). A gradient with a NaN/Inf, or whose sum of squares overflows,
is flagged for the exact NumPy reading (cpu_reduce.array_stats): its numbers are NumPy's.
It also reads a one-element float32/float64 loss at its address. ``quiet_step`` settles a
clean step of the anomaly rules (anomalies.py) in one call when nothing can fire.

The code (kernel_ir.py) is LLVM IR compiled at run start by llvmlite (~0.1 s once per
process: no build step, no NumPy version pin, unlike numba); without llvmlite, or if anything
here fails, ``kernel()`` is None and the NumPy path reads the gradients as before.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

from .finite_ir import ALL_FINITE
from .kernel_ir import QUIET_STEP, READ_GRADS
from .step_ir import WATCH_STEP

_ARGS = {
    "read_grads": (ctypes.c_int64,) * 9,
    "quiet_step": (ctypes.c_int64,) * 8 + (ctypes.c_double,) * 3 + (ctypes.c_int64,),
    "watch_step": (ctypes.c_int64,) * 6,
    "read_upto": (ctypes.c_int64,) * 10,
    "read_part": (ctypes.c_int64,) * 8,
    "all_finite": (ctypes.c_int64,) * 3,
}
# Called without the GIL: two threads read a big model's gradients at once (compiled_read.py).
_RELEASING = {"read_part"}
_lock = threading.Lock()  # held while compiling
_start = threading.Lock()  # held while starting the compiling thread
_state: dict[str, Any] = {}  # the compiled functions by name (None: unavailable), "engine"
_helper: list[threading.Thread] = []  # the compiling thread, while it runs


def kernel(name: str = "read_grads", *, wait: bool = True) -> Any:
    """``read_grads`` (or ``quiet_step``, ``watch_step``) as a ctypes function (pointers as
    plain integers), or None: llvmlite is not installed or the code did not compile here.
    Compiled once per process. ``wait=False``: None until then, the compiling started on a
    helper thread (llvmlite optimises and emits code without the GIL: the training goes on
    meanwhile, on the NumPy path)."""
    if "engine" in _state:
        return _state.get(name)
    if wait:
        _compile_once()
        return _state.get(name)
    if _helper:
        return None  # compiling (never waits on the compiling thread's lock)
    with _start:
        if not _helper:
            thread = threading.Thread(target=_compile_once, name="pvw-compile", daemon=True)
            _helper.append(thread)
            thread.start()
    return None


def settled() -> bool:
    """The compiling has ended: kernel() now gives the functions, or None for good."""
    return "engine" in _state


def _compile_once() -> None:
    with _lock:
        if "engine" in _state:
            return
        try:
            found = _compile()
        except Exception:  # noqa: BLE001 (an old llvmlite, an unknown CPU: NumPy reads)
            found = {"engine": None}
        _state.update(found)  # "engine" last: the functions are there once it is


def _before_fork() -> None:
    """A fork waits for the compiling thread (a child must not inherit a half-done import)."""
    for thread in list(_helper):
        if thread is not threading.current_thread():
            thread.join()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork)


def _compile() -> dict[str, Any]:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(READ_GRADS + QUIET_STEP + WATCH_STEP + ALL_FINITE)
    module.verify()
    machine = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3
    )
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True
    passes = llvm.create_pass_builder(machine, options)
    passes.getModulePassManager().run(module, passes)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    found: dict[str, Any] = {}
    for name, args in _ARGS.items():
        address = engine.get_function_address(name)
        if not address:
            raise RuntimeError(f"{name} not compiled")
        # PYFUNCTYPE: the GIL stays held (released, another thread could keep it for 5 ms),
        # but where two threads share the read (milliseconds of bytes, not microseconds)
        kind = ctypes.CFUNCTYPE if name in _RELEASING else ctypes.PYFUNCTYPE
        found[name] = kind(ctypes.c_int64, *args)(address)
    found["engine"] = engine  # the code lives as long as its engine; last (kernel())
    return found
