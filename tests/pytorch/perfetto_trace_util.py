"""Reads a .pftrace of `npuscope export --perfetto` back as Perfetto's trace processor does (Note [Perfetto
trace layout] in collector/include/npuscope/collector/export_perfetto.h), in Python: decoded with Debian's
python3-protobuf and collector/proto/perfetto_trace.proto (compiled by protoc into a temporary directory),
interned strings resolved, each track's slices rebuilt from their BEGIN/END events sorted by (time, file
order) with a stack. The C++ tests' reader is tests/collector/perfetto_decode.h; this one serves the tests
that export a trace recorded from a PyTorch script."""
import importlib
import os
import subprocess
import sys
import tempfile

PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "collector", "proto")
_pb2 = None


def trace_pb2():
    """The generated module of perfetto_trace.proto (compiled once per process)."""
    global _pb2
    if _pb2 is None:
        out = tempfile.mkdtemp(prefix="npuscope_pb2_")
        subprocess.run(["protoc", "--python_out=" + out, "-I", PROTO_DIR, "perfetto_trace.proto"], check=True)
        sys.path.insert(0, out)
        _pb2 = importlib.import_module("perfetto_trace_pb2")
    return _pb2


class Decoded:
    """tracks: uuid -> {"name", "parent", "counter"}; slices: dicts with name, category, ts, dur, depth,
    track, args, flows; counters: uuid -> [(ts, value)]; problems: what Perfetto would not accept."""

    def __init__(self):
        self.tracks, self.slices, self.counters, self.problems = {}, [], {}, []

    def path(self, uuid):
        t = self.tracks.get(uuid)
        if t is None:
            return "?"
        return self.path(t["parent"]) + "/" + t["name"] if t["parent"] else t["name"]


def decode(path):
    pb = trace_pb2()
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    d = Decoded()
    names, categories, arg_names, values = {}, {}, {}, {}
    events = {}  # track -> [(ts, order, event)]
    processes = {}  # pid -> uuid
    for i, p in enumerate(trace.packet):
        if p.HasField("interned_data"):
            data = p.interned_data
            names.update((n.iid, n.name) for n in data.event_names)
            categories.update((c.iid, c.name) for c in data.event_categories)
            arg_names.update((a.iid, a.name) for a in data.debug_annotation_names)
            values.update((v.iid, v.str.decode()) for v in data.debug_annotation_string_values)
        if p.HasField("track_descriptor"):
            t = p.track_descriptor
            track = {"name": t.name, "parent": t.parent_uuid, "counter": t.HasField("counter")}
            if t.HasField("process"):
                track["name"] = t.process.process_name
                processes[t.process.pid] = t.uuid
            if t.HasField("thread"):
                track["name"], track["parent"] = t.thread.thread_name, processes.get(t.thread.pid, 0)
            if t.uuid in d.tracks:
                d.problems.append("track %d described twice" % t.uuid)
            d.tracks[t.uuid] = track
        if not p.HasField("track_event"):
            continue
        e = p.track_event
        if e.track_uuid not in d.tracks:
            d.problems.append("an event before its track")
        if e.name_iid and e.name_iid not in names:
            d.problems.append("a name used before it was interned")
        events.setdefault(e.track_uuid, []).append((p.timestamp, i, e))
    for uuid, evs in events.items():
        evs.sort(key=lambda x: (x[0], x[1]))
        open_slices = []
        for ts, _, e in evs:
            if e.type == pb.TrackEvent.TYPE_COUNTER:
                value = e.double_counter_value if e.HasField("double_counter_value") else e.counter_value
                d.counters.setdefault(uuid, []).append((ts, value))
                continue
            if e.type == pb.TrackEvent.TYPE_SLICE_END:
                if not open_slices:
                    d.problems.append("an END with no open slice")
                    continue
                s = open_slices.pop()
                s["dur"] = ts - s["ts"]
                continue
            args = {}
            for a in e.debug_annotations:
                key = arg_names.get(a.name_iid, "?")
                kind = a.WhichOneof("value")
                args[key] = values.get(a.string_value_iid) if kind == "string_value_iid" else getattr(a, kind)
            s = {"name": names.get(e.name_iid, ""), "category": ",".join(categories[c] for c in e.category_iids),
                 "ts": ts, "dur": 0, "depth": len(open_slices), "track": uuid, "args": args, "flows": list(e.flow_ids)}
            d.slices.append(s)
            if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                open_slices.append(s)
        if open_slices:
            d.problems.append("a slice never ended")
    return d
