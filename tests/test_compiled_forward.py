"""compiled_forward (program_rerun.py), asked in every checked layer call: a plain bound
method is answered before the StaticFunction import; a compiled forward must still be found,
whichever way it was compiled, and a forward set on the instance is still looked at."""

from __future__ import annotations

import paddle

from paddleviz_widget.tracer.capture.program_rerun import compiled_forward


class _Decorated(paddle.nn.Layer):
    @paddle.jit.to_static
    def forward(self, x):  # type: ignore[no-untyped-def]
        return x * 2


def test_a_plain_layer_has_no_compiled_forward() -> None:
    assert compiled_forward(paddle.nn.Linear(2, 2)) is None


def test_a_to_static_model_and_a_decorated_forward_are_found() -> None:
    from paddle.jit.dy2static.program_translator import StaticFunction

    whole = paddle.jit.to_static(paddle.nn.Linear(2, 2))
    assert isinstance(compiled_forward(whole), StaticFunction)
    assert isinstance(compiled_forward(_Decorated()), StaticFunction)


def test_a_plain_function_set_on_the_instance_is_not_compiled() -> None:
    layer = paddle.nn.Linear(2, 2)
    layer.forward = lambda x: x  # not a bound method: the slow path, still None
    assert compiled_forward(layer) is None
