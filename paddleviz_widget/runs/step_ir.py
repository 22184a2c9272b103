"""The LLVM IR of ``watch_step``: a watched step's read_grads, its float32 rows in the run log
writer's buffers and, for a clean step, quiet_step, in ONE call (kernel_ir.py defines the two;
grad_kernel.py compiles all three together). Right after Paddle's step each distinct call
costs microseconds (benchmarks/RESULTS.md), so a clean step's gradients, rows and rules are
one call from Python.

watch_step(frame, loss_addr, loss_kind, slot, bound, row) -> read_grads' flagged count, plus
(1 << 32) when quiet_step settled the step (row written: no rule can fire).
frame: i64[19], set once per run:
  0 addrs, 1 sizes, 2 kinds, 3 n, 4 out (4 x n doubles), 5 flags, 6 loss_out: read_grads'
  7 rows32: float32 [2][plane][n] (norm, max |g|), 8 counts: double [2][plane][n] (NaN, Inf),
  9 plane: rows per buffer plane (the writer's flush_every); slot: this step's row in them
  10 fraction, 11 layer_of, 12 l, 13 squares, 14 sums, 15 norms, 16 factor, 17 ratio (10,
  16, 17: the doubles' bits): quiet_step's. 18 stop: read_upto's (the gradients from it on
  were read before the call, by read_part on two threads: compiled_read.py).
  row 0: quiet_step not wanted this step (the caller's rules do not allow it); it runs only
  when nothing is flagged, every gradient is there and a loss read here is finite (a loss
  not read here is checked by the caller: row 0).
The float32 rows round as NumPy's assignment of float64 into a float32 array (fptrunc:
round to nearest even), so the writer's buffers hold what write_step would put there.
"""

from .ir_blocks import frame_loads, out_rows

WATCH_STEP = rf"""
define i64 @watch_step(ptr %frame, i64 %loss_addr, i64 %loss_kind, i64 %slot, i64 %bound,
                       i64 %row) {{
entry:
{frame_loads(0, "ptr addrs, ptr sizes, ptr kinds, i64 n, ptr out, ptr flags, ptr lout")}
{frame_loads(18, "i64 stop")}
  %bad = call i64 @read_upto(ptr %addrs, ptr %sizes, ptr %kinds, i64 %n, ptr %out,
                             ptr %flags, i64 %loss_addr, i64 %loss_kind, ptr %lout, i64 %stop)
{frame_loads(7, "ptr r32, ptr cnt, i64 plane")}
  %first = mul i64 %slot, %n
  %second0 = add i64 %plane, %slot
  %second = mul i64 %second0, %n
  %n2 = mul i64 %n, 2
  %n3 = mul i64 %n, 3
  %any = icmp sgt i64 %n, 0
  br i1 %any, label %rows, label %decide
rows:
  %i = phi i64 [0, %entry], [%inext, %rows]
  %present = phi i1 [true, %entry], [%present2, %rows]
{out_rows("pn, pm, pc0, pc1", "vn, vm, vc0, vc1")}
  %a = add i64 %first, %i
  %b = add i64 %second, %i
  %qn = getelementptr float, ptr %r32, i64 %a
  %tn = fptrunc double %vn to float
  store float %tn, ptr %qn, align 4
  %qm = getelementptr float, ptr %r32, i64 %b
  %tm = fptrunc double %vm to float
  store float %tm, ptr %qm, align 4
  %qc0 = getelementptr double, ptr %cnt, i64 %a
  store double %vc0, ptr %qc0, align 8
  %qc1 = getelementptr double, ptr %cnt, i64 %b
  store double %vc1, ptr %qc1, align 8
  %pa = getelementptr i64, ptr %addrs, i64 %i
  %ga = load i64, ptr %pa, align 8
  %has = icmp ne i64 %ga, 0
  %present2 = and i1 %present, %has
  %inext = add nuw nsw i64 %i, 1
  %more = icmp slt i64 %inext, %n
  br i1 %more, label %rows, label %decide
decide:
  %all = phi i1 [true, %entry], [%present2, %rows]
  %clean0 = icmp eq i64 %bad, 0
  %wanted = icmp ne i64 %row, 0
  %clean1 = and i1 %clean0, %wanted
  %clean = and i1 %clean1, %all
  br i1 %clean, label %lossck, label %done
lossck:
  %read = icmp ult i64 %loss_kind, 2
  br i1 %read, label %lossval, label %quiet
lossval:
  %lv = load double, ptr %lout, align 8
  %labs = call double @llvm.fabs.f64(double %lv)
  %lfin = fcmp olt double %labs, 0x7FF0000000000000
  br i1 %lfin, label %quiet, label %done
quiet:
{frame_loads(10, "double fr, ptr lo, i64 l, ptr sq, ptr su, ptr no, double fa, double ra")}
  %q = call i64 @quiet_step(ptr %out, i64 %n, ptr %lo, i64 %l, ptr %sq, ptr %su, ptr %no,
                            i64 %bound, double %fa, double %ra, double %fr, i64 %row)
  %qs = shl i64 %q, 32
  ret i64 %qs
done:
  ret i64 %bad
}}

declare double @llvm.fabs.f64(double)
"""
