"""pbcol (the timeline's column-wise protobuf encoder) against protobuf itself: rows encoded
column by column parse back, with Perfetto's generated classes, into the values they came
from: varint edges (0, 127, 128, 2^63 - 1), negative int64, doubles, fixed64, UTF-8 and empty
strings, absent fields (nulls), nested messages, rows interleaved from parts."""
import numpy as np
import pyarrow as pa
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from ntscope.report import pbcol

TS = [0, 1, 127, 128, 16383, 16384, 2**31, 2**63 - 1]
COUNTER = [0, -1, 5, None, -(2**63), 2**62, 300, None]
DOUBLE = [None, None, None, 1e300, None, None, None, -3.25]    # a oneof with COUNTER: one per row
FLOW = [None, 1, 2**64 - 1, None, 42, None, None, 3]
NAMES = ["io", "", None, "ünïcödé/q1", "x" * 300, "a", None, "initiator/0/1/8306/12088813870"]


def encode_rows(idx):
    n = len(idx)
    take = lambda xs: [xs[i] for i in idx]          # noqa: E731
    f = lambda m, name: m.DESCRIPTOR.fields_by_name[name].number   # noqa: E731
    TE, DA = pb.TrackEvent, pb.DebugAnnotation
    names = pa.array(take(NAMES), pa.string())
    ann = (pbcol.varint_field(f(DA, "name_iid"), 7, n) + pbcol.string_field(f(DA, "string_value"), names, n))
    event = (pbcol.varint_field(f(TE, "counter_value"), pa.array(take(COUNTER), pa.int64()), n)
             + pbcol.double_field(f(TE, "double_counter_value"), pa.array(take(DOUBLE), pa.float64()), n)
             + pbcol.fixed64_field(f(TE, "flow_ids"), pa.array(take(FLOW), pa.uint64()).cast(pa.int64(), safe=False), n)
             + pbcol.message_field(f(TE, "debug_annotations"), ann, names.is_valid().to_numpy(zero_copy_only=False)))
    packet = (pbcol.varint_field(f(pb.TracePacket, "timestamp"), np.array(take(TS), dtype=np.uint64).astype(np.int64), n)
              + pbcol.message_field(f(pb.TracePacket, "track_event"), event))
    return pbcol.message_field(f(pb.Trace, "packet"), packet)


def check(trace, order):
    assert len(trace.packet) == len(order)
    for p, i in zip(trace.packet, order):
        e = p.track_event
        assert p.timestamp == TS[i]
        assert (e.counter_value if e.HasField("counter_value") else None) == COUNTER[i]
        assert (e.double_counter_value if e.HasField("double_counter_value") else None) == DOUBLE[i]
        assert list(e.flow_ids) == ([] if FLOW[i] is None else [FLOW[i]])
        if NAMES[i] is None:
            assert len(e.debug_annotations) == 0
        else:
            [a] = e.debug_annotations
            assert (a.name_iid, a.string_value) == (7, NAMES[i])


def test_rows_parse_back_with_protobuf():
    order = list(range(len(TS)))
    check(pb.Trace.FromString(encode_rows(order).encode()), order)


def test_interleave_restores_row_order():
    odd, even = [1, 3, 5, 7], [0, 2, 4, 6]
    blob = pbcol.interleave([(np.array(odd), encode_rows(odd)), (np.array(even), encode_rows(even))], 8)
    check(pb.Trace.FromString(blob), list(range(8)))
