"""One compiled call for a step's gradient summary (the optional ``fast`` extra: llvmlite).

Right after Paddle's step every distinct NumPy or Paddle call costs 5-40 us (cold caches,
benchmarks/RESULTS.md "Round 7, per step"), so the per-step summary's cost is its number of
calls. This reads every CPU float32/float64 gradient in one call, one pass each: the sum of
squares in float64 and the largest |x| on the bits (|x|'s bits compare as the values do;
above Inf's bits is a NaN). A gradient with a NaN/Inf, or whose sum of squares overflows,
is flagged for the exact NumPy reading (cpu_reduce.array_stats): its numbers are NumPy's.
It also reads a one-element float32/float64 loss at its address.

The code is LLVM IR compiled at run start by llvmlite (~0.1 s once per process: no build
step, no NumPy version pin, unlike numba); without llvmlite, or if anything here fails,
``kernel()`` is None and the NumPy path reads the gradients as before.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

# read_grads(addrs, sizes, kinds, n, out, flags, loss_addr, loss_kind, loss_out) -> flagged
#   addrs[i]: the gradient's address (0: none this step); sizes[i]: its elements;
#   kinds[i]: 0 float32, 1 float64. out: 4 x n doubles (norm, max |g|, NaN, Inf counts;
#   NaN, NaN, 0, 0 for none), flags[i] = 1: read it exactly instead (out left NaN, NaN, 0,
#   0). loss_kind 0/1: the float32/float64 at loss_addr is stored in loss_out as a double.
_IR = r"""
declare double @llvm.sqrt.f64(double)

define internal double @sumsq_f32(ptr %p, i64 %n, ptr %maxbits) {
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %s = phi double [0.0, %entry], [%s2, %loop]
  %m = phi i32 [0, %entry], [%m2, %loop]
  %pa = getelementptr float, ptr %p, i64 %i
  %x = load float, ptr %pa, align 4
  %xd = fpext float %x to double
  %sq = fmul reassoc contract double %xd, %xd
  %s2 = fadd reassoc contract double %s, %sq
  %b = bitcast float %x to i32
  %ab = and i32 %b, 2147483647
  %gt = icmp ugt i32 %ab, %m
  %m2 = select i1 %gt, i32 %ab, i32 %m
  %next = add nuw nsw i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  %sf = phi double [0.0, %entry], [%s2, %loop]
  %mf = phi i32 [0, %entry], [%m2, %loop]
  store i32 %mf, ptr %maxbits, align 4
  ret double %sf
}

define internal double @sumsq_f64(ptr %p, i64 %n, ptr %maxbits) {
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %s = phi double [0.0, %entry], [%s2, %loop]
  %m = phi i64 [0, %entry], [%m2, %loop]
  %pa = getelementptr double, ptr %p, i64 %i
  %x = load double, ptr %pa, align 8
  %sq = fmul reassoc contract double %x, %x
  %s2 = fadd reassoc contract double %s, %sq
  %b = bitcast double %x to i64
  %ab = and i64 %b, 9223372036854775807
  %gt = icmp ugt i64 %ab, %m
  %m2 = select i1 %gt, i64 %ab, i64 %m
  %next = add nuw nsw i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  %sf = phi double [0.0, %entry], [%s2, %loop]
  %mf = phi i64 [0, %entry], [%m2, %loop]
  store i64 %mf, ptr %maxbits, align 8
  ret double %sf
}

define i64 @read_grads(ptr %addrs, ptr %sizes, ptr %kinds, i64 %n, ptr %out, ptr %flags,
                       i64 %loss_addr, i64 %loss_kind, ptr %loss_out) {
entry:
  %mb32 = alloca i32, align 4
  %mb64 = alloca i64, align 8
  %lossp = inttoptr i64 %loss_addr to ptr
  %l32 = icmp eq i64 %loss_kind, 0
  %l64 = icmp eq i64 %loss_kind, 1
  br i1 %l32, label %loss32, label %loss_other
loss32:
  %lv32 = load float, ptr %lossp, align 4
  %lvd = fpext float %lv32 to double
  store double %lvd, ptr %loss_out, align 8
  br label %start
loss_other:
  br i1 %l64, label %loss64, label %start
loss64:
  %lv64 = load double, ptr %lossp, align 8
  store double %lv64, ptr %loss_out, align 8
  br label %start
start:
  %n2 = mul i64 %n, 2
  %n3 = mul i64 %n, 3
  %any = icmp sgt i64 %n, 0
  br i1 %any, label %loop, label %exit
loop:
  %i = phi i64 [0, %start], [%inext, %latch]
  %bad = phi i64 [0, %start], [%bad2, %latch]
  %o0 = getelementptr double, ptr %out, i64 %i
  %i1 = add i64 %i, %n
  %o1 = getelementptr double, ptr %out, i64 %i1
  %i2 = add i64 %i, %n2
  %o2 = getelementptr double, ptr %out, i64 %i2
  %i3 = add i64 %i, %n3
  %o3 = getelementptr double, ptr %out, i64 %i3
  %of = getelementptr i8, ptr %flags, i64 %i
  store double 0.0, ptr %o2, align 8
  store double 0.0, ptr %o3, align 8
  store i8 0, ptr %of, align 1
  %pa = getelementptr i64, ptr %addrs, i64 %i
  %a = load i64, ptr %pa, align 8
  %none = icmp eq i64 %a, 0
  br i1 %none, label %absent, label %present
absent:
  store double 0x7FF8000000000000, ptr %o0, align 8
  store double 0x7FF8000000000000, ptr %o1, align 8
  br label %latch
present:
  %p = inttoptr i64 %a to ptr
  %ps = getelementptr i64, ptr %sizes, i64 %i
  %sz = load i64, ptr %ps, align 8
  %pk = getelementptr i8, ptr %kinds, i64 %i
  %k = load i8, ptr %pk, align 1
  %is32 = icmp eq i8 %k, 0
  br i1 %is32, label %f32, label %f64
f32:
  %s32 = call double @sumsq_f32(ptr %p, i64 %sz, ptr %mb32)
  %b32 = load i32, ptr %mb32, align 4
  %nf32 = icmp uge i32 %b32, 2139095040
  %m32 = bitcast i32 %b32 to float
  %md32 = fpext float %m32 to double
  br label %join
f64:
  %s64 = call double @sumsq_f64(ptr %p, i64 %sz, ptr %mb64)
  %b64 = load i64, ptr %mb64, align 8
  %nf64 = icmp uge i64 %b64, 9218868437227405312
  %md64 = bitcast i64 %b64 to double
  br label %join
join:
  %s = phi double [%s32, %f32], [%s64, %f64]
  %nonfinite = phi i1 [%nf32, %f32], [%nf64, %f64]
  %mx = phi double [%md32, %f32], [%md64, %f64]
  %sumok = fcmp olt double %s, 0x7FF0000000000000
  %finite = xor i1 %nonfinite, true
  %ok = and i1 %finite, %sumok
  br i1 %ok, label %good, label %exact
good:
  %norm = call double @llvm.sqrt.f64(double %s)
  store double %norm, ptr %o0, align 8
  store double %mx, ptr %o1, align 8
  br label %latch
exact:
  store double 0x7FF8000000000000, ptr %o0, align 8
  store double 0x7FF8000000000000, ptr %o1, align 8
  store i8 1, ptr %of, align 1
  br label %latch
latch:
  %add = phi i64 [0, %absent], [0, %good], [1, %exact]
  %bad2 = add i64 %bad, %add
  %inext = add nuw nsw i64 %i, 1
  %more = icmp slt i64 %inext, %n
  br i1 %more, label %loop, label %exit
exit:
  %r = phi i64 [0, %start], [%bad2, %latch]
  ret i64 %r
}
"""

_ARGS = (ctypes.c_int64,) * 9
_lock = threading.Lock()
_state: dict[str, Any] = {}  # "fn": the compiled function (None: unavailable), "engine"


def kernel() -> Any:
    """``read_grads`` as a ctypes function (all arguments plain integers), or None: llvmlite
    is not installed or the code did not compile here. Compiled once per process."""
    with _lock:
        if "fn" not in _state:
            _state["fn"] = None
            try:
                _state["fn"] = _compile()
            except Exception:  # noqa: BLE001 (an old llvmlite, an unknown CPU: NumPy reads)
                _state.pop("engine", None)
        return _state["fn"]


def _compile() -> Any:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(_IR)
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
    _state["engine"] = engine  # the code lives as long as its engine
    address = engine.get_function_address("read_grads")
    if not address:
        raise RuntimeError("read_grads not compiled")
    # PYFUNCTYPE: the GIL stays held (released, another thread could keep it for 5 ms)
    return ctypes.PYFUNCTYPE(ctypes.c_int64, *_ARGS)(address)
