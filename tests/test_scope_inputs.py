"""scope_recording._inputs (the layer pre hook's fast path) gives what tensors_in((args,
kwargs)) gives, in the same order, for every shape of call a layer gets."""

from __future__ import annotations

import paddle
import pytest

from paddleviz_widget.tracer.capture.scope_recording import _inputs, tensors_in

x = paddle.randn([4, 4])
x.stop_gradient = False
y = paddle.randn([2])
p = paddle.create_parameter([2], "float32")

CALLS = [
    ((x,), {}),
    ((x,), None),
    ((x, x), {}),  # the same tensor twice: both
    ((x, y, p), {}),  # a Parameter is a Tensor
    ((), {}),
    ((x, 1), {}),
    ((1, x), {}),
    ((x,), {"mask": y}),
    ((x,), {"mask": None}),
    ([x, y], {}),  # args not a tuple
    (((x, y),), None),  # nested
    (({"a": x, "b": [y, x]},), {}),
]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_inputs_as_tensors_in(args: object, kwargs: object) -> None:
    got = _inputs(args, kwargs)
    want = tensors_in((args, kwargs))
    assert [id(t) for t in got] == [id(t) for t in want]
    assert got is not args  # a list of its own, never the caller's tuple
