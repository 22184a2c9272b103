"""The LLVM IR of the compiled per-step calls (grad_kernel.py compiles it with llvmlite).

Plain loops over raw addresses, written for LLVM's loop vectorizer: only the sums of squares
of read_grads carry `reassoc contract` (their order is free); quiet_step's additions are in
NumPy's own order, so its layer norms are NumPy's bit for bit.
"""

from .ir_blocks import add_in_order, loop_head, loop_next, out_rows


def _sumsq(name: str, fty: str, ity: str, align: int, abs_mask: int) -> str:
    """sumsq_<name>(p, n, maxbits): the sum of squares of the n floats of type fty at p, in
    double, and the largest |x|'s bits (ity: fty's bits; abs_mask clears the sign) at maxbits:
    one loop for float32 and float64, which differ only in the types and the widening."""
    x = "%xd" if fty != "double" else "%x"
    widen = f"\n  %xd = fpext {fty} %x to double" if fty != "double" else ""
    return f"""
define internal double @sumsq_{name}(ptr %p, i64 %n, ptr %maxbits) {{
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %s = phi double [0.0, %entry], [%s2, %loop]
  %m = phi {ity} [0, %entry], [%m2, %loop]
  %pa = getelementptr {fty}, ptr %p, i64 %i
  %x = load {fty}, ptr %pa, align {align}{widen}
  %sq = fmul reassoc contract double {x}, {x}
  %s2 = fadd reassoc contract double %s, %sq
  %b = bitcast {fty} %x to {ity}
  %ab = and {ity} %b, {abs_mask}
  %gt = icmp ugt {ity} %ab, %m
  %m2 = select i1 %gt, {ity} %ab, {ity} %m
  %next = add nuw nsw i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  %sf = phi double [0.0, %entry], [%s2, %loop]
  %mf = phi {ity} [0, %entry], [%m2, %loop]
  store {ity} %mf, ptr %maxbits, align {align}
  ret double %sf
}}
"""


# read_grads(addrs, sizes, kinds, n, out, flags, loss_addr, loss_kind, loss_out) -> flagged
#   addrs[i]: the gradient's address (0: none this step); sizes[i]: its elements;
#   kinds[i]: 0 float32, 1 float64. out: 4 x n doubles (norm, max |g|, NaN, Inf counts;
#   NaN, NaN, 0, 0 for none), flags[i] = 1: read it exactly instead (out left NaN, NaN, 0,
#   0). loss_kind 0/1: the float32/float64 at loss_addr is stored in loss_out as a double.
# read_part(addrs, sizes, kinds, n, out, flags, lo, hi) -> flagged: gradients lo..hi-1 only,
#   as read_grads reads them (called without the GIL: two threads read a big model's halves).
# read_upto(..., loss_out, stop): read_grads reading gradients 0..stop-1; those from stop on
#   were read by read_part before, their flags counted.
READ_GRADS = (
    "declare double @llvm.sqrt.f64(double)\n"
    + _sumsq("f32", "float", "i32", 4, 0x7FFFFFFF)
    + _sumsq("f64", "double", "i64", 8, 0x7FFFFFFFFFFFFFFF)
    + rf"""
define i64 @read_grads(ptr %addrs, ptr %sizes, ptr %kinds, i64 %n, ptr %out, ptr %flags,
                       i64 %loss_addr, i64 %loss_kind, ptr %loss_out) {{
entry:
  %r = call i64 @read_upto(ptr %addrs, ptr %sizes, ptr %kinds, i64 %n, ptr %out, ptr %flags,
                           i64 %loss_addr, i64 %loss_kind, ptr %loss_out, i64 %n)
  ret i64 %r
}}

define i64 @read_upto(ptr %addrs, ptr %sizes, ptr %kinds, i64 %n, ptr %out, ptr %flags,
                      i64 %loss_addr, i64 %loss_kind, ptr %loss_out, i64 %stop) {{
entry:
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
  %read = call i64 @read_part(ptr %addrs, ptr %sizes, ptr %kinds, i64 %n, ptr %out,
                              ptr %flags, i64 0, i64 %stop)
  br label %count
count:
  %j = phi i64 [%stop, %start], [%jnext, %counted]
  %c = phi i64 [%read, %start], [%c2, %counted]
  %cmore = icmp slt i64 %j, %n
  br i1 %cmore, label %counted, label %exit
counted:
  %pf = getelementptr i8, ptr %flags, i64 %j
  %f = load i8, ptr %pf, align 1
  %fw = zext i8 %f to i64
  %c2 = add i64 %c, %fw
  %jnext = add i64 %j, 1
  br label %count
exit:
  ret i64 %c
}}

define i64 @read_part(ptr %addrs, ptr %sizes, ptr %kinds, i64 %n, ptr %out, ptr %flags,
                      i64 %lo, i64 %hi) {{
entry:
  %mb32 = alloca i32, align 4
  %mb64 = alloca i64, align 8
  br label %start
start:
  %n2 = mul i64 %n, 2
  %n3 = mul i64 %n, 3
  %any = icmp slt i64 %lo, %hi
  br i1 %any, label %loop, label %exit
loop:
  %i = phi i64 [%lo, %start], [%inext, %latch]
  %bad = phi i64 [0, %start], [%bad2, %latch]
{out_rows("o0, o1, o2, o3")}
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
  %more = icmp slt i64 %inext, %hi
  br i1 %more, label %loop, label %exit
exit:
  %r = phi i64 [0, %start], [%bad2, %latch]
  ret i64 %r
}}

"""
)

QUIET_STEP = (
    rf"""
; NumPy's np.add.reduce of n <= 128 doubles, bit for bit: 0.0 + its pairwise sum (fewer than
; 8: in order; else 8 running sums, combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the
; rest in order).
define internal double @numpy_sum(ptr %a, i64 %n) {{
entry:
  %few = icmp slt i64 %n, 8
  br i1 %few, label %seq, label %blocks
{add_in_order("seq", "entry", "0", "0.0")}
blocks:
  %acc = alloca [8 x double], align 8
  call void @llvm.memcpy.p0.p0.i64(ptr %acc, ptr %a, i64 64, i1 false)
  %rem = srem i64 %n, 8
  %end = sub i64 %n, %rem
  br label %bl
bl:
  %j = phi i64 [8, %blocks], [%jnext, %blbody8]
  %bmore = icmp slt i64 %j, %end
  br i1 %bmore, label %blbody, label %combine
blbody:
  br label %lane
lane:
  %k = phi i64 [0, %blbody], [%knext, %lane]
  %jk = add i64 %j, %k
  %px = getelementptr double, ptr %a, i64 %jk
  %xv = load double, ptr %px, align 8
  %pr = getelementptr double, ptr %acc, i64 %k
  %rv = load double, ptr %pr, align 8
  %rs = fadd double %rv, %xv
  store double %rs, ptr %pr, align 8
  %knext = add i64 %k, 1
  %kmore = icmp slt i64 %knext, 8
  br i1 %kmore, label %lane, label %blbody8
blbody8:
  %jnext = add i64 %j, 8
  br label %bl
combine:
  %p0 = getelementptr double, ptr %acc, i64 0
  %p1 = getelementptr double, ptr %acc, i64 1
  %p2 = getelementptr double, ptr %acc, i64 2
  %p3 = getelementptr double, ptr %acc, i64 3
  %p4 = getelementptr double, ptr %acc, i64 4
  %p5 = getelementptr double, ptr %acc, i64 5
  %p6 = getelementptr double, ptr %acc, i64 6
  %p7 = getelementptr double, ptr %acc, i64 7
  %v0 = load double, ptr %p0, align 8
  %v1 = load double, ptr %p1, align 8
  %v2 = load double, ptr %p2, align 8
  %v3 = load double, ptr %p3, align 8
  %v4 = load double, ptr %p4, align 8
  %v5 = load double, ptr %p5, align 8
  %v6 = load double, ptr %p6, align 8
  %v7 = load double, ptr %p7, align 8
  %a01 = fadd double %v0, %v1
  %a23 = fadd double %v2, %v3
  %a45 = fadd double %v4, %v5
  %a67 = fadd double %v6, %v7
  %a03 = fadd double %a01, %a23
  %a47 = fadd double %a45, %a67
  %res = fadd double %a03, %a47
  br label %tail
{add_in_order("tail", "combine", "%end", "%res")}
}}

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
"""
    + rf"""
; quiet_step(norm, p, layer_of, l, squares, sums, norms, bound, factor, ratio, fraction, row)
;   -> 1/0
; A clean step's layer norms (anomalies.py's _all_layer_norms: per layer the squares summed
; in parameter order, as np.bincount does; the total by numpy_sum) into norms[0..l], and
; whether no rule can fire: with bound (a row of l+1 lower bounds of the window's medians;
; 0: the rules are not on yet) no norm over factor x its bound, no layer under ratio x its
; neighbours' smaller norm, no non-idle (> 0) layer under fraction x the largest layer norm.
; 1: row (the window's next history row) is written; 0: nothing decided (more than 128
; parameters, or a rule may fire): the NumPy rules run.
define i64 @quiet_step(ptr %norm, i64 %p, ptr %layer_of, i64 %l, ptr %squares, ptr %sums,
                       ptr %norms, i64 %bound_addr, double %factor, double %ratio,
                       double %fraction, i64 %row_addr) {{
entry:
  %big = icmp sgt i64 %p, 128
  br i1 %big, label %no, label %zero
{loop_head("zero", "j0", "entry", "%l", "sq")}
  %pz = getelementptr double, ptr %sums, i64 %j0
  store double 0.0, ptr %pz, align 8
{loop_next("zero", "j0")}
{loop_head("sq", "i", "zero", "%p", "layers")}
  %pn = getelementptr double, ptr %norm, i64 %i
  %x = load double, ptr %pn, align 8
  %x2 = fmul double %x, %x
  %ps = getelementptr double, ptr %squares, i64 %i
  store double %x2, ptr %ps, align 8
  %pl = getelementptr i64, ptr %layer_of, i64 %i
  %li = load i64, ptr %pl, align 8
  %pls = getelementptr double, ptr %sums, i64 %li
  %old = load double, ptr %pls, align 8
  %new = fadd double %old, %x2
  store double %new, ptr %pls, align 8
{loop_next("sq", "i")}
{loop_head("layers", "j1", "sq", "%l", "total")}
  %psj = getelementptr double, ptr %sums, i64 %j1
  %sj = load double, ptr %psj, align 8
  %nj = call double @llvm.sqrt.f64(double %sj)
  %pnj = getelementptr double, ptr %norms, i64 %j1
  store double %nj, ptr %pnj, align 8
{loop_next("layers", "j1")}
total:
  %tot2 = call double @numpy_sum(ptr %squares, i64 %p)
  %tot = call double @llvm.sqrt.f64(double %tot2)
  %ptot = getelementptr double, ptr %norms, i64 %l
  store double %tot, ptr %ptot, align 8
  %rules = icmp ne i64 %bound_addr, 0
  br i1 %rules, label %spike, label %yes
spike:
  %bound = inttoptr i64 %bound_addr to ptr
  br label %spikeloop
spikeloop:
  %j2 = phi i64 [0, %spike], [%j2n, %spikenext]
  %l1 = add i64 %l, 1
  %spmore = icmp slt i64 %j2, %l1
  br i1 %spmore, label %spikebody, label %vanish
spikebody:
  %pbj = getelementptr double, ptr %bound, i64 %j2
  %bj = load double, ptr %pbj, align 8
  %limit = fmul double %factor, %bj
  %pnj2 = getelementptr double, ptr %norms, i64 %j2
  %nj2 = load double, ptr %pnj2, align 8
  %over = fcmp ogt double %nj2, %limit
  br i1 %over, label %no, label %spikenext
spikenext:
  %j2n = add i64 %j2, 1
  br label %spikeloop
vanish:
  %few = icmp slt i64 %l, 2
  br i1 %few, label %yes, label %span
span:
  br label %hiloop
hiloop:
  %j4 = phi i64 [0, %span], [%j4n, %hibody]
  %hi = phi double [0.0, %span], [%hin, %hibody]
  %lo = phi double [0x7FF0000000000000, %span], [%lon, %hibody]
  %himore = icmp slt i64 %j4, %l
  br i1 %himore, label %hibody, label %hidone
hibody:
  %ph = getelementptr double, ptr %norms, i64 %j4
  %nh = load double, ptr %ph, align 8
  %gt = fcmp ogt double %nh, %hi
  %hin = select i1 %gt, double %nh, double %hi
  %lt4 = fcmp olt double %nh, %lo
  %pos4 = fcmp ogt double %nh, 0.0
  %low4 = and i1 %lt4, %pos4
  %lon = select i1 %low4, double %nh, double %lo
  %j4n = add i64 %j4, 1
  br label %hiloop
hidone:
  %deepref = fmul double %hi, %fraction
  %deep = fcmp olt double %lo, %deepref
  br i1 %deep, label %no, label %vstart
vstart:
  br label %vloop
{loop_head("vloop", "j3", "vstart", "%l", "yes", "vnext")}
  %first = icmp eq i64 %j3, 0
  %lm1 = sub i64 %l, 1
  %last = icmp eq i64 %j3, %lm1
  %jprev = sub i64 %j3, 1
  %jnext = add i64 %j3, 1
  %iprev = select i1 %first, i64 %jnext, i64 %jprev
  %inxt = select i1 %last, i64 %jprev, i64 %jnext
  %pa1 = getelementptr double, ptr %norms, i64 %iprev
  %na1 = load double, ptr %pa1, align 8
  %pa2 = getelementptr double, ptr %norms, i64 %inxt
  %na2 = load double, ptr %pa2, align 8
  %lt = fcmp olt double %na2, %na1
  %mn = select i1 %lt, double %na2, double %na1
  %ref = fmul double %mn, %ratio
  %pself = getelementptr double, ptr %norms, i64 %j3
  %ns = load double, ptr %pself, align 8
  %under = fcmp olt double %ns, %ref
  br i1 %under, label %no, label %vnext
{loop_next("vloop", "j3", "vnext")}
yes:
  %row = inttoptr i64 %row_addr to ptr
  %nbytes0 = add i64 %l, 1
  %nbytes = mul i64 %nbytes0, 8
  call void @llvm.memcpy.p0.p0.i64(ptr %row, ptr %norms, i64 %nbytes, i1 false)
  ret i64 1
no:
  ret i64 0
}}
"""
)
