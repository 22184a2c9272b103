"""parse_backward_log never raises and warns at most once, whatever it is given."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paddleviz_widget.tracer.parse.log_parser import GradNodeRun, LoggedSlot, parse_backward_log
from paddleviz_widget.tracer.parse.log_records import GLOG_PREFIX, join_records, separate_log

LOGS = Path(__file__).parent / "fixtures" / "logs"
# 3.3.1 fixtures and the 2.6.2 / 3.0.0 ones (paddle-*/), named "paddle-3.0.0/mlp".
TEXTS = {
    str(p.relative_to(LOGS).with_suffix("")): p.read_text() for p in sorted(LOGS.rglob("*.log"))
}
FULL = {name: parse_backward_log(text) for name, text in TEXTS.items()}
NAMES = st.sampled_from(sorted(TEXTS))
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# One line of anything, including glog-looking lines and the brackets dumps are made of.
_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\n")
PLAIN_LINE = st.text(_CHARS, max_size=60)
GLOG_LINE = PLAIN_LINE.map(lambda msg: f"I1121 10:10:51.369462 12345 user.cc:7] {msg}")
BRACKETY_LINE = st.text(st.sampled_from("([{}])\t ,:Name Shape 0x1f"), max_size=30)
ANY_LINE = st.one_of(PLAIN_LINE, GLOG_LINE, BRACKETY_LINE)


def check_contract(text: str) -> GradNodeRun | None:
    log = parse_backward_log(text)
    assert len(log.warnings) <= 1
    if not log.runs:
        assert len(log.warnings) == 1
    return log.runs[-1] if log.runs else None


def agrees(part: LoggedSlot, whole: LoggedSlot) -> bool:
    """Every field the partial parse knows equals the full parse's (None: not known)."""
    pairs = zip(
        (part.name, part.tensor, part.dtype, part.shape, part.place),
        (whole.name, whole.tensor, whole.dtype, whole.shape, whole.place),
    )
    return all(a is None or a == b for a, b in pairs)


@SETTINGS
@given(NAMES, st.data())
def test_truncated_log_gives_a_prefix_of_the_runs(name, data):
    text = TEXTS[name]
    cut = data.draw(st.integers(0, len(text)))
    log = parse_backward_log(text[:cut])
    check_contract(text[:cut])
    full = FULL[name].runs
    n = len(log.runs)
    assert log.runs[: max(n - 1, 0)] == full[: max(n - 1, 0)]
    if not log.warnings:
        assert log.runs == full  # silence only when nothing was lost
    if n:
        last, whole = log.runs[-1], full[n - 1]
        assert (last.node_name, last.ptr) == (whole.node_name, whole.ptr)
        assert last.api is None or last.api == whole.api
        for part_slots, whole_slots in ((last.inputs, whole.inputs), (last.outputs, whole.outputs)):
            assert len(part_slots) <= len(whole_slots)
            assert all(agrees(a, b) for a, b in zip(part_slots, whole_slots))
        for a, b in zip(last.edges, whole.edges):
            assert a.target_ptr == b.target_ptr
            assert a.grad is None or b.grad is not None and agrees(a.grad, b.grad)


@SETTINGS
@given(NAMES, st.lists(st.tuples(st.floats(0, 1), ANY_LINE), max_size=12))
def test_lines_interleaved_anywhere_never_break_the_parser(name, inserts):
    lines = TEXTS[name].splitlines(keepends=True)
    for where, line in inserts:
        lines.insert(int(where * len(lines)), line + "\n")
    check_contract("".join(lines))


@SETTINGS
@given(NAMES, st.lists(st.tuples(st.floats(0, 1), st.one_of(PLAIN_LINE, BRACKETY_LINE))))
def test_other_output_between_records_is_set_apart_and_ignored(name, inserts):
    """What a user prints to fd 2 lands between glog records: the parse must not change."""
    lines = [(False, line) for line in TEXTS[name].splitlines(keepends=True)]
    starts = [i for i, (_, line) in enumerate(lines) if GLOG_PREFIX.match(line)]
    for where, line in sorted(inserts, key=lambda pair: -pair[0]):
        if not GLOG_PREFIX.match(line):
            lines.insert(starts[int(where * (len(starts) - 1))], (True, line + "\n"))
    mixed = "".join(line for _, line in lines)
    records, other = separate_log(mixed)
    assert join_records(records) == TEXTS[name]
    assert other == "".join(line for added, line in lines if added)
    assert parse_backward_log(mixed) == FULL[name]


@SETTINGS
@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("utf-8", "replace"))))
def test_garbage_never_raises(text):
    check_contract(text)


@SETTINGS
@given(NAMES, st.data())
def test_fixture_with_a_region_replaced_by_garbage(name, data):
    """Stands in for another Paddle version's wording: unknown parts become None, one warning."""
    text = TEXTS[name]
    start = data.draw(st.integers(0, len(text)))
    stop = data.draw(st.integers(start, min(len(text), start + 2000)))
    junk = data.draw(st.one_of(st.text(max_size=200), BRACKETY_LINE))
    check_contract(text[:start] + junk + text[stop:])


def test_empty_text_warns_once():
    log = parse_backward_log("")
    assert log.runs == () and len(log.warnings) == 1
