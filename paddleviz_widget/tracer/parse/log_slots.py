"""Read the slot dumps a GradNode writes at VLOG 5/6 into LoggedSlot values.

A dump looks like (one glog record, shortened)::

    { Input: [
    ( grad_out , [{
        Name: @Grad,
        Initialized: 1,
        TensorInfo: {
            Dtype: float32,
            Place: Place(cpu),
            Shape: 1, 10,
        },
        ADInfo:{ ...the grad tensor and GradNode edges, same field names... }
    }]),  ]
     Output: [
     ( grad_x , [{ ... }]), ] }

Paddle 2.6 and 3.0 write each slot on one line, with ``[ ]`` for the nested blocks::

    ( grad_out , [{Name: None, Initialized: 1, Ptr: 0x55..,TensorInfo: [ Type: DenseTensor,
    Dtype: float32, Place: Place(cpu), Shape: 2, 3, DistAttr: Unknown ], ADInfo:[ ... ]}]),

A slot holding a list of tensors is written ``( out_grad , [[ {...}, {...},  ]])`` and gives one
LoggedSlot per tensor, all with the slot's name. Fields after ``ADInfo`` describe the tensor's
own grad, not the tensor, and are ignored. A field counts only when its line is complete, so text
cut off mid-value never yields a wrong shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OUTPUT_SECTION = re.compile(r"^[ \t]*Output:[ \t]*\[", re.M)
_INPUT_SECTION = re.compile(r"Input:[ \t]*\[")
_SLOT_HEAD = re.compile(r"^[ \t]*\([ \t]*(?P<slot>[^\s,()]+)[ \t]*,[ \t]*\[", re.M)
# A top-level tensor opens right after the slot's "[" or after the previous tensor's "},";
# nested blocks open after "Grad:", "TensorInfo:" or "ADInfo:" and never match (2.6/3.0 write
# "Grad: [ {Name:", hence the look-behind).
_TENSOR_START = re.compile(r"(?:(?<!Grad: )\[|\},)[ \t]*\{[ \t]*\n?[ \t]*Name:")
_NAME = re.compile(r"Name:[ \t]*([^,\n]*),")
_INITIALIZED = re.compile(r"Initialized:[ \t]*(\d+),")
_DTYPE = re.compile(r"Dtype:[ \t]*([A-Za-z_]\w*),")
_PLACE = re.compile(r"Place:[ \t]*([^,\n]+),")
# Ends at its line's end (3.3) or at the next field / the block's "]" (2.6, 3.0: one line).
_SHAPE = re.compile(r"Shape:[ \t]*([-\d, \t]*)(?:\n|DistAttr|\])")
_INT = re.compile(r"-?\d+")
_UNKNOWN_VALUES = {"", "None", "Unknown", "Undefined", "UNDEFINED"}
# An unnamed tensor's name is its address ("Tensor_55de8a8a4d50"): no name, and another one
# at each run (a replayed graph's document differed from one build_graph to the next).
_ADDRESS_NAME = re.compile(r"Tensor_[0-9a-fA-F]{6,16}")


@dataclass(frozen=True)
class LoggedSlot:
    """One tensor in a named GradNode slot, as the log describes it (None: not known)."""

    name: str | None
    tensor: str | None
    dtype: str | None
    shape: tuple[int, ...] | None
    place: str | None


@dataclass(frozen=True)
class SlotDump:
    inputs: tuple[LoggedSlot, ...]
    outputs: tuple[LoggedSlot, ...] | None  # None: the dump has no Output section
    problems: int  # tensors or slots that could not be read completely


def normalize_place(text: str) -> str | None:
    """ "Place(cpu)" -> "cpu", "Place(gpu:0)" -> "gpu:0"."""
    text = text.strip()
    if text.startswith("Place(") and text.endswith(")"):
        text = text[len("Place(") : -1]
    return None if text in _UNKNOWN_VALUES else text


def parse_dims(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in _INT.findall(text))


def _value(pattern: re.Pattern[str], text: str, lo: int, hi: int) -> str | None:
    match = pattern.search(text, lo, hi)
    if match is None:
        return None
    value = match.group(1).strip()
    return None if value in _UNKNOWN_VALUES else value


def _parse_tensor(slot: str, text: str, lo: int, hi: int) -> tuple[LoggedSlot, bool]:
    """(slot, complete) for the tensor block text[lo:hi]; complete: every field was readable.

    Works on positions rather than slices: dumps are most of a VLOG 6 log.
    """
    own_end = text.find("ADInfo", lo, hi)
    hi = hi if own_end < 0 else own_end
    initialized = _value(_INITIALIZED, text, lo, hi)
    tensor = _value(_NAME, text, lo, hi)
    if tensor is not None and _ADDRESS_NAME.fullmatch(tensor):
        tensor = None
    if initialized == "0":  # an undefined grad (e.g. for a stop_gradient input): nothing to read
        return LoggedSlot(slot, tensor, None, None, None), True
    dtype = _value(_DTYPE, text, lo, hi)
    place_text = _value(_PLACE, text, lo, hi)
    place = normalize_place(place_text) if place_text else None
    shape_match = _SHAPE.search(text, lo, hi)
    shape = parse_dims(shape_match.group(1)) if shape_match else None
    complete = initialized is not None and None not in (dtype, shape, place)
    return LoggedSlot(slot, tensor, dtype, shape, place), complete


def _parse_section(text: str, lo: int, hi: int) -> tuple[list[LoggedSlot], int]:
    slots: list[LoggedSlot] = []
    problems = 0
    heads = list(_SLOT_HEAD.finditer(text, lo, hi))
    for k, head in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else hi
        # From the slot's own "[", so the first tensor's start pattern matches.
        starts = [m.start() for m in _TENSOR_START.finditer(text, head.end() - 1, end)]
        if not starts:
            if text.find("{", head.end(), end) >= 0:  # tensors written but not delimitable
                slots.append(LoggedSlot(head.group("slot"), None, None, None, None))
                problems += 1
            continue  # an empty list: the slot holds no tensor
        for j, start in enumerate(starts):
            stop = starts[j + 1] if j + 1 < len(starts) else end
            logged, complete = _parse_tensor(head.group("slot"), text, start, stop)
            slots.append(logged)
            problems += not complete
    return slots, problems


def parse_slot_dump(message: str) -> SlotDump:
    """Parse one ``{ Input: [...] Output: [...] }`` record (Output optional)."""
    start = _INPUT_SECTION.search(message)
    lo = start.end() if start else 0
    split = _OUTPUT_SECTION.search(message, lo)
    inputs, problems = _parse_section(message, lo, split.start() if split else len(message))
    outputs = None
    if split is not None:
        parsed, out_problems = _parse_section(message, split.end(), len(message))
        outputs = tuple(parsed)
        problems += out_problems
    return SlotDump(tuple(inputs), outputs, problems)
