"""all_finite(addr, n, kind) -> 1/0: the LLVM IR of one compiled finiteness check (grad_kernel.py
compiles it with the others). kind 0: n float32 at addr, 1: n float64. Every element's |x| bits
are compared with Inf's: above or at them is an Inf or a NaN. One vectorised pass, no array
made: the forward NaN/Inf check of trace(stats=True) reads each layer's output with it
(tracer/capture/forward_finite.py), ~1 us a call where NumPy's two reductions cost ~10."""


def _max_bits(name: str, ity: str, align: int, abs_mask: int) -> str:
    """maxbits_<name>(p, n): the largest of the n |x| bit patterns (ity wide) at p."""
    return f"""
define internal {ity} @maxbits_{name}(ptr %p, i64 %n) {{
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %m = phi {ity} [0, %entry], [%m2, %loop]
  %pa = getelementptr {ity}, ptr %p, i64 %i
  %b = load {ity}, ptr %pa, align {align}
  %ab = and {ity} %b, {abs_mask}
  %gt = icmp ugt {ity} %ab, %m
  %m2 = select i1 %gt, {ity} %ab, {ity} %m
  %next = add nuw nsw i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  %mf = phi {ity} [0, %entry], [%m2, %loop]
  ret {ity} %mf
}}
"""


ALL_FINITE = (
    _max_bits("f32", "i32", 4, 0x7FFFFFFF)
    + _max_bits("f64", "i64", 8, 0x7FFFFFFFFFFFFFFF)
    + """
define i64 @all_finite(i64 %addr, i64 %n, i64 %kind) {
entry:
  %p = inttoptr i64 %addr to ptr
  %is32 = icmp eq i64 %kind, 0
  br i1 %is32, label %f32, label %f64
f32:
  %m32 = call i32 @maxbits_f32(ptr %p, i64 %n)
  %ok32 = icmp ult i32 %m32, 2139095040
  %r32 = zext i1 %ok32 to i64
  ret i64 %r32
f64:
  %m64 = call i64 @maxbits_f64(ptr %p, i64 %n)
  %ok64 = icmp ult i64 %m64, 9218868437227405312
  %r64 = zext i1 %ok64 to i64
  ret i64 %r64
}
"""
)
