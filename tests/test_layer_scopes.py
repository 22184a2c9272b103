"""LayerScopeRecorder on real Paddle models: expectations come from the models themselves."""

from __future__ import annotations

import gc
import inspect
import types
import weakref
from collections import Counter
from typing import Any

import paddle
import paddle.nn as nn
import pytest
from paddle_versions import requires_hook_kwargs

from paddleviz_widget.graph.model import CallSite, Group
from paddleviz_widget.tracer.capture.layer_scopes import LayerScopeRecorder, LayerScopes
from paddleviz_widget.tracer.read.grad_node import grad_node_of
from paddleviz_widget.tracer.read.params import accumulation_ptr
from paddleviz_widget.tracer.read.walk import walk_backward_graph


class LeNet(nn.Layer):  # the seed quickstart model
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2D(3, 6, 3, 1), nn.Sigmoid(), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 3, 1), nn.Sigmoid(), nn.MaxPool2D(2, 2),
        )  # fmt: skip
        self.fc = nn.Sequential(
            nn.Linear(16 * 6 * 6, 120), nn.Sigmoid(), nn.Linear(120, 84), nn.Sigmoid(),
            nn.Linear(84, 10),
        )  # fmt: skip

    def forward(self, img):
        feature = self.conv(img)
        return self.fc(feature.reshape([img.shape[0], -1]))


class Block(nn.Layer):
    """Does ops itself (scale, tanh, residual add) around two children."""

    def __init__(self, width):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)
        self.scale = self.create_parameter([width])

    def forward(self, x):
        h = paddle.tanh(self.fc1(x) * self.scale)
        return self.fc2(input=h) + x  # keyword input: the walk must stop at h, not cross it


class ListNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Sequential(nn.Linear(6, 8), nn.ReLU()), nn.Linear(8, 8))
        self.blocks = nn.LayerList([Block(8) for _ in range(3)])
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        h = self.stem(x) * 2.0
        for block in self.blocks:
            h = block(h)
        return self.head(h).mean()


class Tied(nn.Layer):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.dec = nn.Linear(4, 4)
        self.dec.weight = self.enc.weight  # tied: named_parameters() lists it as enc.weight
        self.skip = nn.Identity()  # called, but makes no node and owns no parameter

    def forward(self, x):
        return self.skip(self.dec(self.enc(x)))


class Shared(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.unused = nn.Linear(4, 4)  # never called, parameters never used
        self.borrowed = nn.Linear(4, 4)  # never called, weight used by the parent

    def forward(self, x):
        h = self.fc(paddle.nn.functional.relu(self.fc(x)))
        return paddle.matmul(h, self.borrowed.weight)


class Discards(nn.Layer):
    def __init__(self):
        super().__init__()
        self.aux = nn.Tanh()
        self.main = nn.Tanh()

    def forward(self, x):
        self.aux(x)  # output dropped: its node is freed and its address free for reuse
        return self.main(x)


MODELS = {
    "lenet": (LeNet, [2, 3, 32, 32]),
    "list": (ListNet, [3, 6]),
    "tied": (Tied, [2, 4]),
    "shared": (Shared, [2, 4]),
}


def _input(shape):
    x = paddle.randn(shape)
    x.stop_gradient = False  # gives the input an accumulation node that belongs to no layer
    return x


def record(model, shape, with_model=True):
    x = _input(shape)
    with LayerScopeRecorder(model if with_model else None) as rec:
        y = model(x)
    return rec.scopes, walk_backward_graph([grad_node_of(y)]), x, y


def group_by_layer(model, scopes: LayerScopes) -> dict[int, Group]:
    """id(layer) -> its group, matched through the structured name."""
    by_name, root = {g.name: g for g in scopes.groups}, type(model).__name__
    layers = model.named_sublayers(include_self=True)
    return {id(layer): by_name[p or root] for p, layer in layers if (p or root) in by_name}


def subtree(scopes: LayerScopes, gid: str) -> set[str]:
    children: dict[str | None, list[str]] = {}
    for g in scopes.groups:
        children.setdefault(g.parent, []).append(g.id)
    found, stack = set(), [gid]
    while stack:
        cur = stack.pop()
        found.add(cur)
        stack.extend(children.get(cur, []))
    return found


def standalone_op_names(layer, args, kwargs) -> Counter:
    """Op nodes one call of ``layer`` makes on its own, on detached copies of its inputs."""

    def leaf(t):
        if not isinstance(t, paddle.Tensor):
            return t
        c = t.detach()
        c.stop_gradient = t.stop_gradient
        return c

    out = layer(*[leaf(a) for a in args], **{k: leaf(v) for k, v in kwargs.items()})
    outs = out if isinstance(out, (list, tuple)) else [out]
    roots = [n for o in outs if (n := grad_node_of(o)) is not None]
    nodes = walk_backward_graph(roots).nodes if roots else ()
    return Counter(n.name for n in nodes if not n.is_accumulation)


@requires_hook_kwargs
@pytest.mark.parametrize("key", sorted(MODELS))
def test_every_layer_owns_exactly_the_ops_its_call_makes(key):
    cls, shape = MODELS[key]
    paddle.seed(0)
    model = cls()
    calls: list[tuple[Any, tuple, dict]] = []
    hooks = [
        layer.register_forward_pre_hook(
            lambda layer, args, kwargs: calls.append((layer, args, kwargs)), with_kwargs=True
        )
        for layer in model.sublayers(include_self=True)
    ]
    scopes, walked, _, _ = record(model, shape)
    for h in hooks:
        h.remove()
    assert all(n.ptr in scopes.group_of_ptr for n in walked.nodes if not n.is_accumulation)
    groups = group_by_layer(model, scopes)
    expected: dict[int, Counter] = {}
    for layer, args, kwargs in calls:  # a layer called twice owns both calls' ops
        expected.setdefault(id(layer), Counter()).update(standalone_op_names(layer, args, kwargs))
    called = [key for key, want in expected.items() if want]
    assert len(called) >= 2
    for key in called:
        inside = subtree(scopes, groups[key].id)
        got = Counter(
            n.name
            for n in walked.nodes
            if not n.is_accumulation and scopes.group_of_ptr[n.ptr] in inside
        )
        assert got == expected[key], groups[key].name


@pytest.mark.parametrize("with_model", [True, False])
@pytest.mark.parametrize("key", sorted(MODELS))
def test_parameters_land_in_their_first_owner(key, with_model):
    cls, shape = MODELS[key]
    model = cls()
    scopes, _, x, _ = record(model, shape, with_model)
    groups = group_by_layer(model, scopes)
    layers = dict(model.named_sublayers(include_self=True))
    for name, p in model.named_parameters():  # a tied parameter is listed under its 1st owner
        owner = layers[name.rsplit(".", 1)[0] if "." in name else ""]
        assert scopes.group_of_ptr[accumulation_ptr(p)] == groups[id(owner)].id, name
    assert accumulation_ptr(x) not in scopes.group_of_ptr  # the user's input is no layer's


def readers(walked, tensor) -> list:
    """Op nodes that take ``tensor``'s accumulation node as an input."""
    by_index = {n.index: n for n in walked.nodes}
    ptr = accumulation_ptr(tensor)
    return [by_index[e.source] for e in walked.edges if by_index[e.target].ptr == ptr]


@pytest.mark.parametrize("key", ["lenet", "list"])
def test_each_linear_matmul_lands_in_its_linear(key):
    cls, shape = MODELS[key]
    model = cls()
    scopes, walked, _, _ = record(model, shape)
    groups = group_by_layer(model, scopes)
    linears = [m for m in model.sublayers() if isinstance(m, nn.Linear)]
    assert linears
    for linear in linears:
        matmuls = [n for n in readers(walked, linear.weight) if n.name == "MatmulGradNode"]
        assert len(matmuls) == 1
        assert scopes.group_of_ptr[matmuls[0].ptr] == groups[id(linear)].id


def test_tied_and_borrowed_weights_follow_the_layer_that_ran_the_op():
    model = Tied()
    scopes, walked, _, _ = record(model, [2, 4])
    groups = group_by_layer(model, scopes)
    matmuls = [n for n in readers(walked, model.enc.weight) if n.name == "MatmulGradNode"]
    assert sorted(scopes.group_of_ptr[n.ptr] for n in matmuls) == sorted(
        [groups[id(model.enc)].id, groups[id(model.dec)].id]
    )
    model = Shared()
    scopes, walked, _, _ = record(model, [2, 4])
    groups = group_by_layer(model, scopes)
    (borrow,) = readers(walked, model.borrowed.weight)  # matmul run by Shared.forward itself
    assert scopes.group_of_ptr[borrow.ptr] == groups[id(model)].id
    assert scopes.group_of_ptr[accumulation_ptr(model.borrowed.weight)] == (
        groups[id(model.borrowed)].id
    )


def _line_of(func, text) -> int:
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_lenet_groups_are_the_layer_tree():
    model = LeNet()
    scopes, walked, _, _ = record(model, [1, 3, 32, 32])
    layers = list(model.named_sublayers(include_self=True))
    assert [(g.name, g.type) for g in scopes.groups] == [
        (path or "LeNet", type(layer).__name__) for path, layer in layers
    ]
    name_of = {g.id: g.name for g in scopes.groups}
    assert len(name_of) == len(scopes.groups)
    for g, (path, _) in zip(scopes.groups, layers):
        expected_parent = None if not path else path.rsplit(".", 1)[0] if "." in path else "LeNet"
        assert name_of.get(g.parent) == expected_parent
        assert g.parent is None or list(name_of).index(g.parent) < list(name_of).index(g.id)
    root = scopes.groups[0].id
    # The model's own reshape is the ReshapeGradNode that reads no parameter (the other two
    # reshape the conv biases inside Conv2D).
    bias_reshapes = {n.ptr for p in model.parameters() for n in readers(walked, p)}
    (own,) = [n for n in walked.nodes if n.name == "ReshapeGradNode" and n.ptr not in bias_reshapes]
    assert scopes.group_of_ptr[own.ptr] == root
    assert scopes.call_sites[root] == CallSite(__file__, _line_of(record, "y = model(x)"), "record")
    conv = next(g.id for g in scopes.groups if g.name == "conv")
    assert scopes.call_sites[conv].line == _line_of(LeNet.forward, "self.conv(img)")


def test_both_modes_agree_and_shared_layer_keeps_one_group():
    model = Shared()
    a, walked_a, _, _ = record(model, [2, 4], with_model=True)
    b, walked_b, _, _ = record(model, [2, 4], with_model=False)
    assert a.groups == b.groups
    names_a = {g.id: g.name for g in a.groups}
    names_b = {g.id: g.name for g in b.groups}
    per_node_a = [names_a.get(a.group_of_ptr.get(n.ptr)) for n in walked_a.nodes]
    assert per_node_a == [names_b.get(b.group_of_ptr.get(n.ptr)) for n in walked_b.nodes]
    fc = next(g.id for g in a.groups if g.name == "fc")
    assert sum(a.group_of_ptr.get(n.ptr) == fc and n.name == "MatmulGradNode"
               for n in walked_a.nodes) == 2  # fmt: skip
    # Uncalled layers: listed while they own parameters; restricted_to(graph) keeps only the
    # one whose parameter is in the graph.
    assert {"unused", "borrowed"} <= set(names_a.values())
    kept = a.restricted_to(n.ptr for n in walked_a.nodes)
    assert {g.name for g in kept.groups} == {"Shared", "fc", "borrowed"}


class Hidden(nn.Layer):
    def __init__(self):
        super().__init__()
        self.plain = [nn.Linear(4, 4)]  # a plain list: not registered as a sublayer

    def forward(self, x):
        return self.plain[0](x)


def test_naming_without_a_model():
    model, hidden, x = Tied(), Hidden(), _input([2, 4])
    with LayerScopeRecorder() as rec:
        model.enc(x)  # an inner layer called on its own first: still named from its model
        model(x)
        hidden(x)
    by_name = {g.name: g for g in rec.scopes.groups}
    assert by_name["enc"].parent == by_name["Tied"].id and by_name["Tied"].parent is None
    assert by_name[hidden.plain[0].full_name()].parent == by_name["Hidden"].id
    assert "Identity" not in {g.type for g in rec.scopes.groups}  # called, but holds nothing


def test_freed_nodes_addresses_are_not_reused_while_recording():
    for _ in range(5):  # an address reuse is likely on the first try; repeat to be sure
        model = Discards()
        scopes, walked, _, _ = record(model, [2, 3])
        main = group_by_layer(model, scopes)[id(model.main)]
        tanh = next(n for n in walked.nodes if n.name == "TanhGradNode")
        assert scopes.group_of_ptr[tanh.ptr] == main.id
        assert scopes.node_names[tanh.ptr] == "TanhGradNode"


def _hook_state(model):
    return [(dict(m._forward_pre_hooks), dict(m._forward_post_hooks)) for m in model.sublayers()]


def test_hooks_and_layer_call_restored_even_on_exceptions():
    model = ListNet()
    before, call = _hook_state(model), nn.Layer.__dict__["__call__"]
    for with_model in (True, False):
        recorder = LayerScopeRecorder(model if with_model else None)
        with pytest.raises(ZeroDivisionError), recorder:
            assert _hook_state(model) != before or not with_model
            model(_input([3, 6]))
            raise ZeroDivisionError
        assert _hook_state(model) == before
        assert nn.Layer.__dict__["__call__"] is call


@pytest.mark.parametrize("with_model", [True, False])
def test_exception_inside_a_layer_does_not_confuse_later_calls(with_model):
    model = Tied()
    wrapper = nn.Sequential(model, nn.Linear(3, 4))  # Tied gives 4 features: matmul raises
    rec = LayerScopeRecorder(wrapper if with_model else None)
    with rec:
        with pytest.raises(ValueError):
            wrapper(_input([2, 4]))
        y = model(_input([2, 4]))
    groups = {g.id: g.name for g in rec.scopes.groups}
    walked = walk_backward_graph([grad_node_of(y)])
    add = next(n for n in walked.nodes if n.name == "AddGradNode")  # dec's bias add
    assert groups[rec.scopes.group_of_ptr[add.ptr]].endswith("dec")


def _paddle_objects(root, stop_at) -> list:
    """Paddle tensors/GradNodes reachable from ``root`` by references (not through stop_at)."""
    found, seen, stack = [], {id(o) for o in stop_at}, [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, paddle.Tensor) or type(obj).__name__ == "GradNodeBase":
            found.append(obj)
            continue
        if isinstance(obj, (type, types.ModuleType, types.FunctionType)):
            continue  # code and classes: the way to every global, not data the object holds
        stack.extend(gc.get_referents(obj))
    return found


@pytest.mark.parametrize("with_model", [True, False])
def test_nothing_paddle_is_kept_after_stop(with_model):
    model = ListNet()
    rec = LayerScopeRecorder(model if with_model else None)
    with rec:
        y = model(_input([3, 6]))
        node = weakref.ref(grad_node_of(y))
        assert node() is not None  # held by the recorder while recording
        assert _paddle_objects(rec, stop_at=[model, type(rec)])
    assert node() is None
    assert _paddle_objects(rec, stop_at=[model, type(rec)]) == []
    assert _paddle_objects(rec.scopes, stop_at=[type(rec.scopes)]) == []
    y.backward()  # the graph itself is intact


def test_misuse_is_reported():
    with pytest.raises(TypeError, match="nn.Layer"):
        LayerScopeRecorder(model=object())
    rec = LayerScopeRecorder()
    with pytest.raises(RuntimeError, match="not recording"):
        rec.stop()
    with rec, pytest.raises(RuntimeError, match="already recording"):
        rec.start()
