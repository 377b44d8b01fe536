"""A small model of how Perfetto's trace processor imports a TrackEvent trace, for tests on a
machine where trace_processor_shell cannot run (it is downloaded at first use): the file is
parsed with Perfetto's own generated classes (perfetto.protos), interned names resolved per
sequence, packets sorted by timestamp keeping file order for equal times (TraceSorter's
order), slices built per track with a stack (an end closes the innermost open slice of its
track; an instant is a slice of no duration in the innermost open one), flows linked by id (flow_ids opens or steps a flow, terminating_flow_ids closes it),
counter values kept per track. What the trace processor would reject or repair is recorded
in `errors` instead."""
from collections import defaultdict
from dataclasses import dataclass, field

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


@dataclass
class Slice:
    track: int
    name: str
    ts: int
    category: str = None
    args: dict = field(default_factory=dict)
    dur: int = None
    depth: int = 0
    parent: "Slice" = None


@dataclass
class Trace:
    tracks: dict = field(default_factory=dict)        # uuid -> TrackDescriptor
    slices: list = field(default_factory=list)
    flows: list = field(default_factory=list)         # (slice_out, slice_in)
    counters: dict = field(default_factory=lambda: defaultdict(list))   # uuid -> [(ts, value)]
    errors: list = field(default_factory=list)

    def host_of(self, uuid):
        """The process (host) name a track belongs to."""
        while uuid in self.tracks:
            d = self.tracks[uuid]
            if d.HasField("process"):
                return d.process.process_name
            uuid = d.parent_uuid
        return None

    def name_of(self, uuid):
        return self.tracks[uuid].name if uuid in self.tracks else None


def load(path):
    t = Trace()
    with open(path, "rb") as f:
        trace = pb.Trace.FromString(f.read())
    names, cats, arg_names = {}, {}, {}
    events = []
    for i, p in enumerate(trace.packet):
        if p.HasField("interned_data"):
            if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
                names, cats, arg_names = {}, {}, {}
            names.update({e.iid: e.name for e in p.interned_data.event_names})
            cats.update({e.iid: e.name for e in p.interned_data.event_categories})
            arg_names.update({e.iid: e.name for e in p.interned_data.debug_annotation_names})
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            if d.uuid in t.tracks:
                t.errors.append(f"track {d.uuid} described twice")
            if d.HasField("parent_uuid") and d.parent_uuid not in t.tracks:
                t.errors.append(f"track {d.uuid}: parent {d.parent_uuid} not described before it")
            t.tracks[d.uuid] = d
        if p.HasField("track_event"):
            e = p.track_event
            if e.track_uuid not in t.tracks:
                t.errors.append(f"packet {i}: track {e.track_uuid} not described before its first event")
            args = {}
            for a in e.debug_annotations:
                which = a.WhichOneof("value")
                args[arg_names.get(a.name_iid, f"?{a.name_iid}")] = getattr(a, which) if which else None
            events.append((p.timestamp, i, e, names.get(e.name_iid) if e.HasField("name_iid") else None,
                           [cats.get(c) for c in e.category_iids], args))
    events.sort(key=lambda x: (x[0], x[1]))         # by time, file order for equal times
    stacks = defaultdict(list)
    open_flows = {}
    for ts, i, e, name, cats, args in events:
        if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            stack = stacks[e.track_uuid]
            s = Slice(e.track_uuid, name, ts, cats[0] if cats else None, args, depth=len(stack),
                      parent=stack[-1] if stack else None)
            stack.append(s)
            t.slices.append(s)
            for fid in e.flow_ids:
                if fid in open_flows:
                    t.flows.append((open_flows[fid], s))
                open_flows[fid] = s
            for fid in e.terminating_flow_ids:
                if fid in open_flows:
                    t.flows.append((open_flows.pop(fid), s))
                else:
                    t.errors.append(f"packet {i}: flow {fid} ends before it began")
        elif e.type == pb.TrackEvent.TYPE_INSTANT:      # a slice of no duration, nested where it falls
            stack = stacks[e.track_uuid]
            t.slices.append(Slice(e.track_uuid, name, ts, cats[0] if cats else None, args, dur=0, depth=len(stack),
                                  parent=stack[-1] if stack else None))
        elif e.type == pb.TrackEvent.TYPE_SLICE_END:
            stack = stacks[e.track_uuid]
            if not stack:
                t.errors.append(f"packet {i}: slice end on track {e.track_uuid} with no open slice")
                continue
            s = stack.pop()
            s.dur = ts - s.ts
        elif e.type == pb.TrackEvent.TYPE_COUNTER:
            v = e.double_counter_value if e.HasField("double_counter_value") else e.counter_value
            t.counters[e.track_uuid].append((ts, v))
    for uuid, stack in stacks.items():
        for s in stack:
            t.errors.append(f"slice {s.name} at {s.ts} on track {uuid} never ends")
    return t
