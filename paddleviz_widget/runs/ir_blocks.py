"""Lines of LLVM IR that kernel_ir.py and step_ir.py would otherwise write out again and
again, made by one function each (the IR itself is in those two files). The IR strings that
call them are f-strings: a brace of the IR itself is doubled there."""

from __future__ import annotations


def frame_loads(first: int, fields: str) -> str:
    """The loads of ``%frame``'s i64 slots (step_ir.py's frame layout) from slot ``first``
    on, one a field of ``fields`` (", " between) in slot order: ``ptr name`` an address (as a
    pointer), ``i64 name`` a count, ``double name`` a double's bits. Slot k is ``%f<k>``, a
    pointer's integer ``%<name>_i``."""
    lines = []
    for slot, field in enumerate(fields.split(", "), start=first):
        kind, name = field.split()
        lines.append(f"  %f{slot} = getelementptr i64, ptr %frame, i64 {slot}")
        if kind == "ptr":
            lines.append(f"  %{name}_i = load i64, ptr %f{slot}, align 8")
            lines.append(f"  %{name} = inttoptr i64 %{name}_i to ptr")
        else:
            lines.append(f"  %{name} = load {kind}, ptr %f{slot}, align 8")
    return "\n".join(lines)


def add_in_order(label: str, came_from: str, first: str, start: str) -> str:
    """Blocks ``label``, ``label``body and ``label``done of a function of ``ptr %a, i64 %n``
    entered from block ``came_from``: the doubles %a[first..%n) added one by one, in order,
    to ``start``; the function returns 0.0 + that sum (NumPy's reduction starts at 0.0)."""
    v = f"%{label}_"
    return f"""{label}:
  {v}i = phi i64 [{first}, %{came_from}], [{v}inext, %{label}body]
  {v}r = phi double [{start}, %{came_from}], [{v}r2, %{label}body]
  {v}more = icmp slt i64 {v}i, %n
  br i1 {v}more, label %{label}body, label %{label}done
{label}body:
  {v}p = getelementptr double, ptr %a, i64 {v}i
  {v}x = load double, ptr {v}p, align 8
  {v}r2 = fadd double {v}r, {v}x
  {v}inext = add i64 {v}i, 1
  br label %{label}
{label}done:
  {v}z = fadd double 0.0, {v}r
  ret double {v}z"""


def out_rows(pointers: str, values: str = "") -> str:
    """Pointers (named by ``pointers``, ", " between) to gradient %i's four doubles in
    read_grads' ``%out``: 4 x %n doubles, row by row (norm, max |g|, NaN count, Inf count),
    row k's at ``%i<k>`` = %i + k x %n (%n2, %n3: 2 and 3 x %n, made before the loop). With
    ``values``, each double is loaded into its name right after its pointer."""
    lines = []
    loads = values.split(", ") if values else [""] * 4
    for row, (pointer, value) in enumerate(zip(pointers.split(", "), loads)):
        at = f"%i{row}" if row else "%i"
        if row:
            lines.append(f"  {at} = add i64 %i, {('%n', '%n2', '%n3')[row - 1]}")
        lines.append(f"  %{pointer} = getelementptr double, ptr %out, i64 {at}")
        if value:
            lines.append(f"  %{value} = load double, ptr %{pointer}, align 8")
    return "\n".join(lines)


def loop_head(label: str, j: str, came_from: str, end: str, after: str, latch: str = "") -> str:
    """Block ``label`` of a counted loop: ``%j`` = 0 (entered from block ``came_from``), 1,
    ... while below ``end``, each into block ``label``body (the lines after this); then on to
    block ``after``. ``latch``: the block that counts on (loop_next's), ``label``body's end if
    none."""
    return f"""{label}:
  %{j} = phi i64 [0, %{came_from}], [%{j}next, %{latch or label + "body"}]
  %{j}more = icmp slt i64 %{j}, {end}
  br i1 %{j}more, label %{label}body, label %{after}
{label}body:"""


def loop_next(label: str, j: str, latch: str = "") -> str:
    """The end of loop_head's loop ``label``: ``%j`` counts on, back to its head; in a block
    of its own named ``latch`` (the body branches there) if given."""
    block = f"{latch}:\n" if latch else ""
    return f"""{block}  %{j}next = add i64 %{j}, 1
  br label %{label}"""
