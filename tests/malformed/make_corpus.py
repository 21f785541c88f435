#!/usr/bin/python3
"""Writes the malformed-capture corpus: broken variants of the valid hero captures and trace.

    /usr/bin/python3 tests/malformed/make_corpus.py OUT_DIR [--source-dir DIR] [--proto-dir DIR]

Every case is one file under OUT_DIR plus one line of OUT_DIR/manifest.jsonl:

    {"name", "category", "format": "json" | "pb" | "trace" | "stream", "file",
     "expected": "invalid_argument" | "report" | "either" | "resource_exhausted" | "data_loss",
     "expect": [substrings of the error, all required],
     "expect_server": [the same, when the server words the problem differently from the client],
     "diagnostics": "more" (a report must carry more diagnostics than the unbroken input's),
     "note": what was broken}

`stream` files are raw Analyze messages, each a 4-byte little-endian length and the bytes of one
gRPC message (normally an AnalyzeChunk), sent as they are. The output is a pure function of the
inputs (the random generator is seeded): regenerating gives the same bytes. Needs Debian's
python3-protobuf and the Python protos the build generates (target cl_python_protos, build/python).
"""

import argparse
import copy
import json
import os
import random
import struct
import sys

SEED = 10
MIB = 1 << 20


def parse_args():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--source-dir", default=root, help="the repository root (examples/hero lives there)")
    p.add_argument("--proto-dir", default=os.path.join(root, "build", "python"),
                   help="where the generated compile_lens/v1/*_pb2.py are")
    p.add_argument("--no-huge", action="store_true", help="leave out the cases of tens of MiB")
    return p.parse_args()


ARGS = parse_args()
sys.path.insert(0, ARGS.proto_dir)
from google.protobuf import json_format  # noqa: E402
from compile_lens.v1 import capture_pb2, service_pb2  # noqa: E402

# The schema this build writes (capture.proto's option, which capture/schema.h reads too).
SCHEMA = capture_pb2.DESCRIPTOR.GetOptions().Extensions[capture_pb2.schema_version]


class Corpus:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.cases = []
        self.names = set()
        os.makedirs(out_dir, exist_ok=True)

    def add(self, name, category, fmt, data, expected, expect=(), expect_server=None, diagnostics=None,
            note=""):
        assert name not in self.names, name
        assert expected in ("invalid_argument", "report", "either", "resource_exhausted", "data_loss"), expected
        self.names.add(name)
        ext = {"json": ".cls.json", "pb": ".cls.pb", "trace": ".log", "stream": ".chunks"}[fmt]
        file_name = category + "." + name + ext
        if isinstance(data, str):
            data = data.encode("utf-8")
        with open(os.path.join(self.out_dir, file_name), "wb") as f:
            f.write(data)
        entry = {"name": name, "category": category, "format": fmt, "file": file_name, "expected": expected,
                 "expect": list(expect)}
        if expect_server is not None:
            entry["expect_server"] = list(expect_server)
        if diagnostics:
            entry["diagnostics"] = diagnostics
        if note:
            entry["note"] = note
        self.cases.append(entry)

    def write_manifest(self):
        with open(os.path.join(self.out_dir, "manifest.jsonl"), "w") as f:
            for c in self.cases:
                f.write(json.dumps(c, sort_keys=True) + "\n")


def dumps(doc):
    return json.dumps(doc, separators=(",", ":"))


def to_pb(doc):
    msg = capture_pb2.SessionCapture()
    json_format.Parse(json.dumps(doc), msg)
    return msg.SerializeToString(deterministic=True)


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def replace_marker(data, marker, replacement):
    """Swaps a same-length marker in encoded bytes (keeps protobuf lengths right)."""
    assert len(marker) == len(replacement)
    assert data.count(marker) == 1, marker
    return data.replace(marker, replacement)


# ---------------------------------------------------------------------------------------------
# The valid inputs.

def load_inputs(root):
    with open(os.path.join(root, "examples/hero/head.cls.json"), "rb") as f:
        head_text = f.read()
    head = json.loads(head_text)
    # "lite": the same session without the 342 extras, so that the many mutated copies stay small.
    lite = copy.deepcopy(head)
    lite.pop("extras", None)
    with open(os.path.join(root, "examples/hero/traces/head.log"), "rb") as f:
        trace = f.read()
    return head_text, head, lite, trace


# ---------------------------------------------------------------------------------------------
# Categories.

def truncations(c, rng, head_text, lite):
    """.cls.json and .cls.pb cut at many byte offsets."""
    n = len(head_text)
    offsets = sorted(set([0, 1, 2, 10, 100, n // 2, n - 3, n - 2] + [rng.randrange(3, n - 3) for _ in range(32)]))
    for off in offsets:
        cut = head_text[:off]
        try:
            json.loads(cut)
            parses = True
        except ValueError:
            parses = False
        if off == 0:
            # An empty document is an empty message to protobuf's JSON parser: no schema.
            c.add("json_at_0", "truncation", "json", cut, "invalid_argument", ["not a capture", "Unexpected end"],
                  note="empty file")
        elif parses:
            c.add("json_at_%d" % off, "truncation", "json", cut, "either", note="cut at %d of %d" % (off, n))
        else:
            c.add("json_at_%d" % off, "truncation", "json", cut, "invalid_argument", ["not a capture"],
                  note="cut at %d of %d" % (off, n))
    pb = to_pb(lite)
    n = len(pb)
    offsets = sorted(set([1, 2, 5, n // 2, n - 1] + [rng.randrange(3, n - 1) for _ in range(30)]))
    for off in offsets:
        cut = pb[:off]
        msg = capture_pb2.SessionCapture()
        try:
            msg.ParseFromString(cut)
            parses = True
        except Exception:  # DecodeError
            parses = False
        # Cut at a field boundary the bytes are a shorter, well-formed message: the validator or the
        # analysis decides. Inside a field they are not a capture at all.
        if parses:
            c.add("pb_at_%d" % off, "truncation", "pb", cut, "either", note="cut at %d of %d (a field boundary)" % (off, n))
        else:
            c.add("pb_at_%d" % off, "truncation", "pb", cut, "invalid_argument", ["not a capture", "cut short"],
                  note="cut at %d of %d" % (off, n))


def type_confusions(c, lite):
    def case(name, mutate, expect, expected="invalid_argument", note=""):
        doc = copy.deepcopy(lite)
        mutate(doc)
        c.add(name, "type_confusion", "json", dumps(doc), expected, expect, note=note)

    def setp(path, value):
        def f(doc):
            obj = doc
            for p in path[:-1]:
                obj = obj[p]
            obj[path[-1]] = value
        return f

    case("string_for_uint32", setp(["frames", 0, "line"], "eighty-six"), ["line"])
    case("string_for_int64", setp(["compiles", 0, "duration_us"], "long"), ["duration_us"])
    case("string_for_double", setp(["divergence", "atol"], "tiny"), ["atol"])
    # ("yes" would be read as true: protobuf takes absl::SimpleAtob's spellings for a bool.)
    case("string_for_bool", setp(["iterations", 0, "recompiled"], "perhaps"), ["recompiled"])
    case("number_for_string", setp(["session", "id"], 12345), ["id"])
    case("bool_for_string", setp(["graphs", 0, "nodes", 0, "name"], True), ["name"])
    case("object_for_list", setp(["compiles"], {"id": "0/0"}), ["compiles"])
    case("list_for_object", setp(["session"], ["a", "b"]), ["session"])
    case("list_for_string", setp(["schema"], ["0.5.0"]), ["schema"])
    case("object_for_string", setp(["graphs", 0, "id"], {"id": "x"}), ["id"])
    case("string_for_list", setp(["graphs", 0, "nodes"], "n0,n1"), ["nodes"])
    case("number_for_object", setp(["divergence"], 7), ["divergence"])
    case("string_for_map", setp(["session", "labels"], "cluster=dev"), ["labels"])
    case("list_for_map", setp(["iterations", 0, "state"], [["a", "b"]]), ["state"])
    case("number_in_string_list", setp(["graphs", 0, "nodes", 0, "meta", "shape"], [16, {"s": 0}]), ["shape"])
    case("unknown_enum_name", setp(["compiles", 0, "status"], "EXPLODED"), ["status"])
    case("unknown_stage_number", setp(["graphs", 0, "stage"], 99), ["stage"], expected="either",
         note="proto3 keeps unknown enum numbers; the JSON parser may refuse or keep")
    case("negative_uint32", setp(["frames", 0, "line"], -1), ["line"])
    case("uint32_overflow", setp(["frames", 0, "line"], 4294967296), ["line"])
    case("int64_overflow", setp(["compiles", 0, "start_us"], 92233720368547758080), ["start_us"])
    case("fraction_for_int", setp(["frames", 0, "line"], 86.5), ["line"])
    case("exponent_for_uint64", setp(["kernels"], [{"name": "k", "launches": 1e300}]), ["launches"])
    case("unknown_field", setp(["session", "hostname"], "typo"), ["hostname"])
    case("unknown_top_field", setp(["graph"], []), ["graph"])
    case("arg_both_kinds", setp(["graphs", 0, "nodes", 3, "args"], [{"node": "l_x_", "literal": "1"}]),
         ["args"], note="two members of a oneof")
    case("arg_list_as_list", setp(["graphs", 0, "nodes", 3, "args"], [["l_x_"]]), ["args"])
    case("struct_as_list", setp(["compiles", 0, "metrics"], [1, 2, 3]), ["metrics"])
    case("null_for_list_item", setp(["compiles", 0, "graph_ids"], ["0/0/dynamo_output_graph", None]),
         ["graph_ids"], expected="either", note="protobuf's parser skips a null list item")
    # Documents that are not objects.
    c.add("top_level_list", "type_confusion", "json", dumps([lite]), "invalid_argument", ["not a capture"])
    c.add("top_level_string", "type_confusion", "json", dumps("0.5.0"), "invalid_argument", ["not a capture"])
    c.add("top_level_number", "type_confusion", "json", "42", "invalid_argument", ["not a capture"])
    c.add("top_level_null", "type_confusion", "json", "null", "invalid_argument", ["not a capture"])
    # In binary: a field number of the right name with the wrong wire type. SessionCapture.schema (1)
    # sent as a varint, session (2) as a fixed64.
    pb = to_pb(lite)
    # A field whose wire type is not its declared one is an unknown field to protobuf: kept aside,
    # so the capture reads as if it were absent.
    c.add("pb_schema_as_varint", "type_confusion", "pb", varint(1 << 3 | 0) + varint(5) + pb[pb.index(b"\x12"):],
          "invalid_argument", ["schema: missing"], note="schema field with wire type varint")
    c.add("pb_session_as_fixed64", "type_confusion", "pb", field(1, b"0.5.0") + varint(2 << 3 | 1) + b"\0" * 8,
          "report", note="session field with wire type fixed64: no session")
    c.add("pb_json_bytes", "type_confusion", "pb", dumps(lite).encode(), "invalid_argument", ["not a capture"],
          note=".cls.json text read as .cls.pb")


def huge_strings(c, lite, no_huge):
    if no_huge:
        return

    def case(name, size, mutate, expected="report", expect=(), fmt="json", note=""):
        doc = copy.deepcopy(lite)
        mutate(doc, "x" * size if name != "source_text" else ("# " + "y" * 78 + "\n") * (size // 81))
        data = dumps(doc) if fmt == "json" else to_pb(doc)
        c.add(name, "huge_string", fmt, data, expected, expect, note=note or "%d MiB" % (size // MIB))

    def setp(path):
        def f(doc, value):
            obj = doc
            for p in path[:-1]:
                obj = obj[p]
            obj[path[-1]] = value
        return f

    case("fail_reason", 24 * MIB, setp(["compiles", 1, "fail_reason"]))
    case("source_text", 24 * MIB, setp(["sources", 0, "text"]))
    case("node_target", 8 * MIB, setp(["graphs", 2, "nodes", 5, "target"]))
    case("session_id", 8 * MIB, setp(["session", "id"]))
    case("label_value", 4 * MIB, setp(["session", "labels", "model"]), note="4 MiB fleet label value")
    case("recompile_reason_pb", 24 * MIB, lambda d, v: d["compiles"][2]["recompile_reasons"].insert(0, v), fmt="pb")
    # Over the server's --max_session_bytes (48 MiB in the test): refused naming the limit.
    case("over_session_limit", 64 * MIB, setp(["compiles", 0, "fail_reason"]), expected="resource_exhausted",
         expect=["max_session_bytes"], note="64 MiB, over the 48 MiB session limit")


def deep_nesting(c, lite):
    depth = 10000

    def nested(open_, close, inner, n=depth):
        return open_ * n + inner + close * n

    base = dumps(lite)
    assert base.endswith("}")
    head = base[:-1]
    for name, extra in [
        ("extras_objects", ',"extras":[{"payload":' + nested('{"a":', "}", "1") + "}]"),
        ("bare_arrays", ',"zzz":' + nested("[", "]", "1")),
    ]:
        c.add(name, "deep_nesting", "json", head + extra + "}", "invalid_argument", ["not a capture"],
              note="%d deep" % depth)
    # protobuf's parser reads lists nested in a repeated field without recursing: nothing in them.
    c.add("extras_arrays", "deep_nesting", "json", head + ',"extras":' + nested("[", "]", "", 100000) + "}", "either",
          ["not a capture"], note="100000 deep, no item in it")
    c.add("top_level_arrays", "deep_nesting", "json", nested("[", "]", "", 100000), "invalid_argument",
          ["not a capture"], note="100000 deep")
    c.add("top_level_objects", "deep_nesting", "json", nested('{"schema":', "}", '"0.5.0"', 20000),
          "invalid_argument", ["not a capture"], note="20000 deep")
    # In a Struct (compile metrics), in an Arg list, 10k deep.
    doc = copy.deepcopy(lite)
    doc["compiles"][0]["metrics"] = "@@METRICS@@"
    text = dumps(doc).replace('"@@METRICS@@"', nested('{"k":', "}", "1"))
    c.add("struct_metrics", "deep_nesting", "json", text, "invalid_argument", ["not a capture"], note="10000 deep")
    doc = copy.deepcopy(lite)
    doc["graphs"][0]["nodes"][3]["args"] = "@@ARGS@@"
    text = dumps(doc).replace('"@@ARGS@@"', "[" + nested('{"list":{"items":[', "]}}", '{"literal":"1"}') + "]")
    c.add("arg_lists", "deep_nesting", "json", text, "invalid_argument", ["not a capture"], note="10000 deep")
    # Shallow enough for the parsers (a few levels): a valid capture whose Arg nests 30 deep.
    doc = copy.deepcopy(lite)
    arg = {"literal": "1"}
    for _ in range(30):
        arg = {"list": {"items": [arg]}}
    doc["graphs"][0]["nodes"][3]["args"] = [arg]
    c.add("arg_lists_30", "deep_nesting", "json", dumps(doc), "report", note="30 deep, within every limit")
    # Binary: an Arg nested 10k deep in a node, a Struct 10k deep in a compile's metrics.
    pb = to_pb(lite)
    arg = field(2, b"1")  # Arg.literal
    for _ in range(depth):
        arg = field(3, field(1, arg))  # Arg.list { items: arg }
    node = field(1, b"deep") + field(2, b"call_function") + field(3, b"aten.add.Tensor") + field(4, arg)
    graph = field(1, b"deep_graph") + field(2, b"0/0") + field(4, node)
    c.add("pb_arg_lists", "deep_nesting", "pb", pb + field(5, graph), "invalid_argument",
          ["not a capture", "graphs[12].nodes[0].args[0].list.items[0]", "nested more than 100 messages deep"],
          note="Arg 10000 deep")
    value = varint(2 << 3 | 1) + struct.pack("<d", 1.0)  # Value.number_value
    for _ in range(depth):
        entry = field(1, b"k") + field(2, value)           # Struct.FieldsEntry {key, value}
        value = field(5, field(1, entry))                   # Value.struct_value { fields: entry }
    struct_msg = field(1, field(1, b"k") + field(2, value))
    compile_ = field(1, b"0/9") + varint(3 << 3 | 0) + varint(9) + field(17, struct_msg)
    c.add("pb_struct_metrics", "deep_nesting", "pb", pb + field(4, compile_), "invalid_argument",
          ["not a capture", "compiles[4].metrics.fields[0].value", "nested more than 100 messages deep"],
          note="Struct 10000 deep")
    # Binary Arg 90 deep: parses on the client (the limit is 100), then rides inside
    # AnalyzeChunk > CapturePart > NodeBatch > Node, past the server's parse limit.
    arg = field(2, b"1")
    for _ in range(45):
        arg = field(3, field(1, arg))
    node = field(1, b"deep") + field(2, b"call_function") + field(3, b"aten.add.Tensor") + field(4, arg)
    graph = field(1, b"deep_graph") + field(2, b"0/0") + varint(3 << 3 | 0) + varint(7) + field(4, node)
    c.add("pb_arg_lists_90", "deep_nesting", "pb", pb + field(5, graph), "report",
          note="an Arg 90 messages deep: within the parse depth on the client and, wrapped in a part, on the server")


def duplicate_ids(c, lite):
    def case(name, mutate, expect, expect_server=None, fmt="json"):
        doc = copy.deepcopy(lite)
        mutate(doc)
        data = dumps(doc) if fmt == "json" else to_pb(doc)
        c.add(name, "duplicate_id", fmt, data, "invalid_argument", expect, expect_server)

    g0 = lite["graphs"][0]["id"]
    case("frame", lambda d: d["frames"].append(copy.deepcopy(d["frames"][0])), ["frames[1].id", "used by another frame"])
    case("compile", lambda d: d["compiles"].append(copy.deepcopy(d["compiles"][0])),
         ["compiles[4].id", '"0/0" is used by another compile'])
    case("compile_pb", lambda d: d["compiles"].insert(2, copy.deepcopy(d["compiles"][1])),
         ["compiles[2].id", '"0/1" is used by another compile'], fmt="pb")
    case("graph", lambda d: d["graphs"].append(copy.deepcopy(d["graphs"][0])),
         ["graphs[12].id", '"%s" is used by another graph' % g0], ['graph "%s" was announced twice' % g0])
    case("graph_pb", lambda d: d["graphs"].insert(1, copy.deepcopy(d["graphs"][0])),
         ["graphs[1].id", '"%s" is used by another graph' % g0], ['graph "%s" was announced twice' % g0], fmt="pb")

    def dup_node(d, gi, j, k):
        d["graphs"][gi]["nodes"][j]["name"] = d["graphs"][gi]["nodes"][k]["name"]
    for gi, j, k in [(0, 5, 2), (1, 10, 9), (2, 40, 0), (5, 1, 0)]:
        name = lite["graphs"][gi]["nodes"][k]["name"]
        case("node_%d_%d" % (gi, j), lambda d, gi=gi, j=j, k=k: dup_node(d, gi, j, k),
             ["graphs[%d].nodes[%d].name" % (gi, j), '"%s" is used by another node' % name])
    case("node_pb", lambda d: dup_node(d, 3, 7, 6),
         ["graphs[3].nodes[7].name", "is used by another node"], fmt="pb")
    case("source_path", lambda d: d["sources"].append(copy.deepcopy(d["sources"][0])), ["sources[1].path", "appears twice"])
    case("frame_pb", lambda d: d["frames"].append({"id": 0, "name": "other"}), ["frames[1].id"], fmt="pb")


def dangling_refs(c, lite):
    def case(name, mutate, expect, fmt="json", expect_server=None):
        doc = copy.deepcopy(lite)
        mutate(doc)
        data = dumps(doc) if fmt == "json" else to_pb(doc)
        c.add(name, "dangling_ref", fmt, data, "invalid_argument", expect, expect_server)

    g = lite["graphs"]
    case("node_arg", lambda d: d["graphs"][0]["nodes"][3].setdefault("args", []).insert(0, {"node": "nope"}),
         ["graphs[0].nodes[3].args[0]", 'node "nope" is not defined before it'])
    case("node_arg_pb", lambda d: d["graphs"][4]["nodes"][8].setdefault("args", []).insert(0, {"node": "ghost"}),
         ["graphs[4].nodes[8].args[0]", 'node "ghost"'], fmt="pb")
    case("node_arg_in_list", lambda d: d["graphs"][2]["nodes"][6].setdefault("args", []).append(
        {"list": {"items": [{"literal": "1"}, {"node": "nope"}]}}), ["graphs[2].nodes[6].args[", "[1]", '"nope"'])
    case("node_kwarg", lambda d: d["graphs"][1]["nodes"][4].setdefault("kwargs", {}).update({"out": {"node": "nope"}}),
         ['graphs[1].nodes[4].kwargs["out"]', '"nope"'])
    case("node_arg_other_graph", lambda d: d["graphs"][0]["nodes"][3].setdefault("args", []).insert(
        0, {"node": g[1]["nodes"][-2]["name"]}) if g[1]["nodes"][-2]["name"] not in [n["name"] for n in g[0]["nodes"]]
        else d["graphs"][0]["nodes"][3].setdefault("args", []).insert(0, {"node": "only_in_graph_1"}),
        ["graphs[0].nodes[3].args[0]"])
    case("kernel_graph", lambda d: d.setdefault("kernels", []).append({"name": "k0", "graph_id": "no/such/graph"}),
         ['kernels[0].graph_id: "no/such/graph" names no graph'])
    case("kernel_graph_pb", lambda d: d.setdefault("kernels", []).extend(
        [{"name": "k0", "graph_id": g[2]["id"]}, {"name": "k1", "graph_id": "missing"}]),
        ['kernels[1].graph_id: "missing"'], fmt="pb")
    case("kernel_source_node", lambda d: d.setdefault("kernels", []).append(
        {"name": "k0", "graph_id": g[2]["id"], "source_nodes": [g[2]["nodes"][3]["name"], "nope"]}),
        ['kernels[0].source_nodes[1]', 'node "nope" does not exist'])
    case("graph_compile", lambda d: d["graphs"][3].update({"compile_id": "9/9"}),
         ['graphs[3].compile_id: "9/9" names no compile'])
    case("graph_compile_pb", lambda d: d["graphs"][7].update({"compile_id": "0/7"}),
         ['graphs[7].compile_id: "0/7" names no compile'], fmt="pb")
    case("iteration_compile", lambda d: d["iterations"][2].update({"compile_id": "3/0"}),
         ['iterations[2].compile_id: "3/0" names no compile'])
    case("iteration_frame", lambda d: d["iterations"][1].update({"frame_id": 5}),
         ["iterations[1].frame_id: 5 names no frame"])

    def compile_frame(d):
        d["compiles"][0].update({"id": "7/0", "frame_id": 7})
    case("compile_frame", compile_frame, ["compiles[0].frame_id: 7 names no frame"])
    case("compile_no_frames", lambda d: d.update({"frames": []}), ["compiles[0].frame_id: 0 names no frame"])
    case("compile_id_missing", lambda d: d["compiles"][1].pop("id"), ['compiles[1].id: "" is not a compile id'])
    case("compile_id_garbage", lambda d: d["compiles"][2].update({"id": "0/x"}), ['compiles[2].id: "0/x" is not a compile id'])
    case("compile_id_overflow", lambda d: d["compiles"][2].update({"id": "0/99999999999"}),
         ['compiles[2].id: "0/99999999999" is not a compile id'])
    case("compile_id_disagrees", lambda d: d["compiles"][3].update({"frame_compile_id": 1}),
         ['compiles[3]: id "0/3" disagrees with frame_compile_id 1'])
    case("compile_id_round_without_frame", lambda d: d["compiles"][3].update({"id": "0/3@1"}),
         ['compiles[3]: id "0/3@1" disagrees with frame_id 0, which is of reset round 0, not 1'])
    case("compiles_removed", lambda d: d.update({"compiles": []}), ['graphs[0].compile_id: "0/0" names no compile'])

    table = len(lite["frames"][0]["guarded_sources"])
    at = len(lite["compiles"][1]["guarded_source_ids"])
    case("guarded_source_id", lambda d: d["compiles"][1]["guarded_source_ids"].append(table),
         [f"compiles[1].guarded_source_ids[{at}]: {table} is past frame 0's {table} guarded_sources"])
    case("guarded_source_table_removed", lambda d: d["frames"][0].pop("guarded_sources"),
         ["compiles[0].guarded_source_ids[0]: ", "is past frame 0's 0 guarded_sources"], fmt="pb")
    # Symbolic sizes are evaluated at the symbols' hints: a hint must be a number (a float symbol's
    # is a decimal), a name unique.
    case("symbol_hint_not_a_number", lambda d: d["compiles"][1].update(
        {"symbols": [{"name": "s0", "hint": "four"}]}),
        ['compiles[1].symbols[0].hint: "four" is not a number'])
    case("symbol_hint_infinite", lambda d: d["compiles"][1].update(
        {"symbols": [{"name": "zf0", "hint": "inf"}]}),
        ['compiles[1].symbols[0].hint: "inf" is not a number'])
    case("symbol_name_twice", lambda d: d["compiles"][1].update(
        {"symbols": [{"name": "s0", "hint": "4"}, {"name": "s0", "hint": "8"}]}),
        ['compiles[1].symbols[1].name: "s0" is used by another symbol'])
    case("symbol_unbacked_hint", lambda d: d["compiles"][0].update(
        {"symbols": [{"name": "u0", "hint": "3", "unbacked": True}]}),
        ['compiles[0].symbols[0].hint: is set on an unbacked symbol'])
    case("graphs_removed_kernels_kept", lambda d: d.update({"graphs": [], "kernels": [{"name": "k", "graph_id": g[0]["id"]}]}),
         ["kernels[0].graph_id"])


def cycles(c, lite):
    def case(name, gi, edges, expect, fmt="json"):
        doc = copy.deepcopy(lite)
        nodes = doc["graphs"][gi]["nodes"]
        for j, k in edges:
            nodes[j].setdefault("args", []).append({"node": nodes[k]["name"]})
        data = dumps(doc) if fmt == "json" else to_pb(doc)
        c.add(name, "cycle", fmt, data, "invalid_argument", expect)

    nodes = lite["graphs"]
    def name(gi, k):
        return nodes[gi]["nodes"][k]["name"]
    case("self_loop", 0, [(5, 5)], ["graphs[0].nodes[5].args[", '"%s" is not defined before it' % name(0, 5)])
    case("two_cycle", 1, [(5, 6), (6, 5)], ["graphs[1].nodes[5].args[", '"%s"' % name(1, 6)])
    case("three_cycle", 2, [(10, 12), (12, 11), (11, 10)], ["graphs[2].nodes[10].args[", '"%s"' % name(2, 12)])
    case("long_cycle", 3, [(3, 40)], ["graphs[3].nodes[3].args[", '"%s"' % name(3, 40)])
    case("placeholder_loop", 4, [(0, 1), (1, 0)], ["graphs[4].nodes[0].args[0]", '"%s"' % name(4, 1)])
    case("output_to_itself", 5, [(len(nodes[5]["nodes"]) - 1, len(nodes[5]["nodes"]) - 1)],
         ["graphs[5].nodes[%d].args[" % (len(nodes[5]["nodes"]) - 1)])
    case("cycle_pb", 6, [(7, 8), (8, 7)], ["graphs[6].nodes[7].args[", '"%s"' % name(6, 8)], fmt="pb")
    # A cycle through kwargs.
    doc = copy.deepcopy(lite)
    ns = doc["graphs"][7]["nodes"]
    ns[9].setdefault("kwargs", {})["alpha"] = {"node": ns[10]["name"]}
    ns[10].setdefault("args", []).append({"node": ns[9]["name"]})
    c.add("kwarg_cycle", "cycle", "json", dumps(doc), "invalid_argument",
          ['graphs[7].nodes[9].kwargs["alpha"]', '"%s"' % ns[10]["name"]])


def nan_inf(c, lite):
    """NaN and infinities: as JSON tokens (not JSON, but Python and torch write them), as the
    strings proto3 JSON defines for doubles, and as doubles in binary."""
    places = {
        "atol": lambda d, v: d["divergence"].update({"atol": v}),
        "layer_abs": lambda d, v: d["divergence"]["layers"][1].update({"max_abs_diff": v}),
        "layer_rel": lambda d, v: d["divergence"]["layers"][1].update({"max_rel_diff": v}),
        "layer_rmse": lambda d, v: d["divergence"]["layers"][0].update({"rmse_compiled": v, "noise_floor": v}),
        "kernel_flops": lambda d, v: d.setdefault("kernels", []).append(
            {"name": "k", "graph_id": d["graphs"][2]["id"], "flops": v, "bytes": v, "measured_us": v}),
        "iteration_diff": lambda d, v: d["iterations"][1].update({"output_max_abs_diff": v}),
        "confidence": lambda d, v: d["divergence"]["bisect"]["culprit"].update({"confidence": v}),
    }
    values = {"nan": float("nan"), "inf": float("inf"), "ninf": float("-inf")}
    strings = {"nan": "NaN", "inf": "Infinity", "ninf": "-Infinity"}
    for place, mutate in places.items():
        for vname in values:
            # As a JSON token: Python writes NaN / Infinity bare. Not JSON; protobuf's parser decides.
            doc = copy.deepcopy(lite)
            mutate(doc, values[vname])
            c.add("token_%s_%s" % (place, vname), "nan_inf", "json", json.dumps(doc, separators=(",", ":")),
                  "either", ["not a capture"], note="bare JSON token")
            doc = copy.deepcopy(lite)
            mutate(doc, strings[vname])
            c.add("string_%s_%s" % (place, vname), "nan_inf", "json", dumps(doc), "report",
                  note="proto3 JSON string form")
        doc = copy.deepcopy(lite)
        mutate(doc, "NaN")
        c.add("pb_%s_nan" % place, "nan_inf", "pb", to_pb(doc), "report")
    # In the metrics Struct: a string "NaN" is a string; a bare token is the parser's call.
    for vname, v in values.items():
        doc = copy.deepcopy(lite)
        doc["compiles"][0]["metrics"]["duration_us"] = v
        c.add("token_metrics_%s" % vname, "nan_inf", "json", json.dumps(doc, separators=(",", ":")), "either",
              ["not a capture"])
        doc = copy.deepcopy(lite)
        doc["compiles"][0]["metrics"]["duration_us"] = strings[vname]
        c.add("string_metrics_%s" % vname, "nan_inf", "json", dumps(doc), "report")
    doc = copy.deepcopy(lite)
    doc["divergence"]["atol"] = "@@X@@"
    c.add("overflow_1e999", "nan_inf", "json", dumps(doc).replace('"@@X@@"', "1e999"), "either", ["atol"],
          note="a literal that overflows a double")


def invalid_utf8(c, lite):
    bad = {
        "ff": b"\xff",
        "c0af": b"\xc0\xaf",          # overlong '/'
        "ed_a0_80": b"\xed\xa0\x80",  # a UTF-16 surrogate encoded in UTF-8
        "trunc_e2": b"\xe2\x82",      # truncated 3-byte sequence
        "f8": b"\xf8\x88\x80\x80\x80",  # 5-byte form
    }
    places = {
        "session_id": lambda d, v: d["session"].update({"id": v}),
        "node_name": lambda d, v: d["graphs"][1]["nodes"][7].update({"name": v}),
        "source_text": lambda d, v: d["sources"][0].update({"text": d["sources"][0]["text"][:200] + v}),
        "label_key": lambda d, v: d["session"]["labels"].update({v: "x"}),
        "recompile_reason": lambda d, v: d["compiles"][1]["recompile_reasons"].insert(0, v),
        "fail_reason": lambda d, v: d["compiles"][2].update({"fail_reason": v}),
    }
    pb_paths = {"session_id": "session.id (byte ", "node_name": "graphs[1].nodes[7].name (byte ",
                "source_text": "sources[0].text (byte ", "label_key": "session.labels[",
                "recompile_reason": "compiles[1].recompile_reasons[0] (byte ", "fail_reason": "compiles[2].fail_reason (byte "}
    marker = "@@UTF8MARK@@"
    rng = random.Random(SEED + 1)
    for pname, mutate in places.items():
        for bname, bbytes in bad.items():
            # JSON: raw bytes inside a string.
            doc = copy.deepcopy(lite)
            mutate(doc, marker)
            data = dumps(doc).encode()
            data = replace_marker(data, marker.encode(), (bbytes * 12)[:len(marker)])
            c.add("json_%s_%s" % (pname, bname), "invalid_utf8", "json", data, "invalid_argument",
                  ["not a capture", "UTF-8", "(byte %d, line 1, column %d)" % (data.index(bbytes[:1]), data.index(bbytes[:1]) + 1)])
        # Binary: a proto3 string field holding bytes that are not UTF-8.
        doc = copy.deepcopy(lite)
        mutate(doc, marker)
        data = to_pb(doc)
        bbytes = list(bad.values())[rng.randrange(len(bad))]
        data = replace_marker(data, marker.encode(), (bbytes * 12)[:len(marker)])
        c.add("pb_%s" % pname, "invalid_utf8", "pb", data, "invalid_argument",
              ["not a capture", pb_paths[pname], "not UTF-8"])
    # JSON escapes that name no character: lone surrogates.
    for name, esc in [("lone_high", "\\ud800"), ("lone_low", "\\udc00"), ("reversed_pair", "\\udc00\\ud800")]:
        doc = copy.deepcopy(lite)
        doc["graphs"][0]["nodes"][2]["target"] = marker
        data = dumps(doc).replace(marker, "abc" + esc)
        c.add("json_escape_" + name, "invalid_utf8", "json", data, "either", ["not a capture"],
              note="JSON escape of a lone surrogate")
    # A BOM and a NUL: valid UTF-8, legal in strings.
    doc = copy.deepcopy(lite)
    doc["session"]["host"] = "a\u0000b\ufeff"
    c.add("json_nul_and_bom", "invalid_utf8", "json", dumps(doc), "report", note="valid but odd code points")


def schema_versions(c, lite):
    for name, version in [("old", "0.4.0"), ("next_minor", "0.6.0"), ("major", "1.0.0"), ("no_patch", "0.5"),
                          ("x_patch", "0.5.x"), ("leading_space", " 0.5.0"), ("trailing_newline", "0.5.0\n"),
                          ("v_prefix", "v0.5.0"), ("negative", "-0.5.0"), ("huge_patch", "0.5.99999999999999999999"),
                          ("empty", ""), ("binary_junk", "0.5.\u0001")]:
        doc = copy.deepcopy(lite)
        doc["schema"] = version
        expect = ["schema: missing"] if not version else ["schema:", "is not supported", "0.5.x"]
        if version == "0.5.99999999999999999999":
            c.add(name, "schema_version", "json", dumps(doc), "report", note="any 0.5.<digits> is read")
            continue
        c.add(name, "schema_version", "json", dumps(doc), "invalid_argument", expect)
    for name, version in [("patch_1", "0.5.1"), ("patch_12", "0.5.12")]:
        doc = copy.deepcopy(lite)
        doc["schema"] = version
        c.add(name, "schema_version", "json", dumps(doc), "report", note="a later 0.5 patch")
    doc = copy.deepcopy(lite)
    del doc["schema"]
    c.add("missing", "schema_version", "json", dumps(doc), "invalid_argument", ["schema: missing"])
    doc = copy.deepcopy(lite)
    doc["schema"] = 0.5
    c.add("number", "schema_version", "json", dumps(doc), "invalid_argument", ["schema"])
    for name, version in [("pb_old", "0.4.9"), ("pb_next", "0.6.0"), ("pb_empty", "")]:
        doc = copy.deepcopy(lite)
        doc["schema"] = version
        c.add(name, "schema_version", "pb", to_pb(doc), "invalid_argument", ["schema:"])


def broken_traces(c, rng, trace):
    n = len(trace)
    # Cut before the end of its first line (a header), the log holds no record: it is refused as
    # not a TORCH_TRACE log, naming the file, rather than read as an empty session.
    refused = {0: "empty, not a TORCH_TRACE log",
               1: "not a TORCH_TRACE log (no record header in its 1 line)"}
    for off in sorted(set([0, 1, 60, 200] + [rng.randrange(200, n) for _ in range(14)])):
        name = "truncated_at_%d" % off
        note = "the log cut at %d of %d" % (off, n)
        if off in refused:
            c.add(name, "broken_trace", "trace", trace[:off], "invalid_argument",
                  ["broken_trace.%s.log: %s" % (name, refused[off])], note=note)
        else:
            c.add(name, "broken_trace", "trace", trace[:off], "report", note=note)
    for i in range(8):
        data = bytearray(trace)
        for _ in range(1 + i * 4):
            p = rng.randrange(n)
            data[p] = rng.randrange(256)
        c.add("byte_flips_%d" % i, "broken_trace", "trace", bytes(data), "report", note="%d random bytes" % (1 + i * 4))
    garbage = bytes(rng.randrange(256) for _ in range(256 * 1024))
    c.add("random_bytes", "broken_trace", "trace", garbage, "invalid_argument",
          ["broken_trace.random_bytes.log: not a TORCH_TRACE log (no record header in the first 100 lines)"],
          note="256 KiB of random bytes")
    c.add("nul_bytes", "broken_trace", "trace", b"\0" * 100000, "invalid_argument",
          ["broken_trace.nul_bytes.log: not a TORCH_TRACE log (no record header in its 1 line)"])
    # The client decompresses a .gz before streaming it: a broken one fails there, naming the file.
    c.add("gzip_magic", "broken_trace", "trace", b"\x1f\x8b\x08\x00" + garbage[:4096], "data_loss",
          ["broken_trace.gzip_magic.log"], note="looks gzip-compressed, is not")
    lines = trace.split(b"\n")
    # Metadata JSON broken on the glog lines.
    heads = [i for i, l in enumerate(lines) if l.startswith(b"V1") or l.startswith(b"I1") or l.startswith(b"W1")]
    def edit(name, fn, note, expected="report", diagnostics="more"):
        ls = list(lines)
        fn(ls)
        c.add(name, "broken_trace", "trace", b"\n".join(ls), expected, diagnostics=diagnostics, note=note)

    def cut_json(ls):
        for i in heads[5:25]:
            ls[i] = ls[i][: ls[i].index(b"{") + 10]
    edit("metadata_cut", cut_json, "20 glog lines with their JSON cut short")

    def deep_json(ls):
        i = heads[3]
        ls[i] = ls[i][: ls[i].index(b"{")] + b'{"a":' * 20000 + b"1" + b"}" * 20000
    edit("metadata_deep_20k", deep_json, "a metadata object 20000 deep")

    def deep_arrays(ls):
        i = heads[7]
        ls[i] = ls[i][: ls[i].index(b"{")] + b'{"dynamo_start": {"stack": ' + b"[" * 100000 + b"]" * 100000 + b"}}"
    edit("metadata_deep_arrays_100k", deep_arrays, "a stack 100000 arrays deep")

    def bad_md5(ls):
        for i in heads[:40]:
            ls[i] = ls[i].replace(b'"has_payload": "', b'"has_payload": "0')
    edit("md5_wrong", bad_md5, "payload hashes that do not match")

    def nan_tokens(ls):
        for i in heads:
            if b"compilation_metrics" in ls[i]:
                ls[i] = ls[i].replace(b'"duration_us": ', b'"duration_us": NaN, "x_inf": Infinity, "y": ', 1)
    edit("metrics_nan_tokens", nan_tokens, "NaN / Infinity tokens in compilation_metrics", diagnostics=None)

    def invalid_utf8_meta(ls):
        for i in heads[2:12]:
            ls[i] = ls[i].replace(b'"', b'"\xff\xfe', 1)
    edit("metadata_invalid_utf8", invalid_utf8_meta, "bytes that are not UTF-8 in metadata", diagnostics=None)

    def invalid_utf8_payload(ls):
        for i in range(len(ls)):
            if ls[i].startswith(b"\t") and (b"add" in ls[i] or b"Tensor" in ls[i]):
                ls[i] = ls[i] + b"\xc0\xaf\xff"
    edit("payload_invalid_utf8", invalid_utf8_payload, "bytes that are not UTF-8 in graph payloads",
         diagnostics=None)

    def invalid_utf8_reason(ls):
        for i in range(len(ls)):
            ls[i] = ls[i].replace(b"tensor 'x' size mismatch", b"tensor '\xff\xfe' size mismatch")
    edit("recompile_reason_invalid_utf8", invalid_utf8_reason, "recompile reasons that are not UTF-8",
         diagnostics=None)

    def huge_line(ls):
        ls.insert(heads[4], b"V1129 16:45:46.298000 11758 torch/_dynamo/utils.py:1318] " + b"{" + b" " * (24 * MIB) + b"}")
    edit("huge_line_24MiB", huge_line, "one 24 MiB line", diagnostics=None)

    def huge_payload(ls):
        i = heads[10]
        ls.insert(i, b'V1129 16:45:46.298000 11758 torch/_dynamo/utils.py:1318] {"artifact": {"name": "big", "encoding": "string"}, "has_payload": "00"}')
        ls.insert(i + 1, (b"\t" + b"z" * 1000 + b"\n") * (20 * 1024) + b"\tend")
    edit("huge_payload_20MiB", huge_payload, "an artifact payload of 20 MiB")

    def crlf(ls):
        for i in range(len(ls)):
            ls[i] = ls[i] + b"\r"
    edit("crlf", crlf, "CRLF line ends", diagnostics=None)

    def interleaved_junk(ls):
        for i in sorted(heads[::9], reverse=True):
            ls.insert(i, b"\tthis payload line belongs to no record")
            ls.insert(i, b"not a glog line at all")
    edit("junk_lines", interleaved_junk, "lines that are not glog records between records")

    def dup_compile(ls):
        first = [i for i in heads if b"dynamo_start" in ls[i]][:1]
        for i in first:
            ls.insert(i, ls[i])
    edit("dynamo_start_twice", dup_compile, "a dynamo_start record sent twice", diagnostics=None)

    def type_confusion(ls):
        for i in heads:
            ls[i] = ls[i].replace(b'"frame_id": 0', b'"frame_id": "zero"').replace(b'"attempt": 0', b'"attempt": [0]')
    edit("metadata_types", type_confusion, "frame_id as a string, attempt as a list")


def stream_cases(c, lite):
    """Raw Analyze messages: what a buggy or hostile client, not cl-client, could send."""
    def chunks(msgs):
        out = bytearray()
        for m in msgs:
            b = m if isinstance(m, (bytes, bytearray)) else m.SerializeToString(deterministic=True)
            out += struct.pack("<I", len(b)) + b
        return bytes(out)

    def opts():
        ch = service_pb2.AnalyzeChunk()
        ch.options.SetInParent()
        return ch

    def part(side=service_pb2.HEAD, **kw):
        ch = service_pb2.AnalyzeChunk()
        ch.part.side = side
        for k, v in kw.items():
            getattr(ch.part, k).CopyFrom(v)
        return ch

    def end(n):
        ch = service_pb2.AnalyzeChunk()
        ch.end.parts = n
        return ch

    capture = capture_pb2.SessionCapture()
    json_format.Parse(json.dumps(lite), capture)
    header = service_pb2.CaptureHeader(schema=SCHEMA, session=capture.session)

    def valid_parts():
        ps = [part(header=header)]
        for f in capture.frames:
            ps.append(part(frame=f))
        for cp in capture.compiles:
            ps.append(part(compile=cp))
        for g in capture.graphs:
            ps.append(part(graph_header=service_pb2.GraphHeader(id=g.id, compile_id=g.compile_id, stage=g.stage)))
            ps.append(part(node_batch=service_pb2.NodeBatch(graph_id=g.id, nodes=g.nodes)))
        return ps

    def add(name, msgs, expected, expect, note=""):
        c.add(name, "stream", "stream", chunks(msgs), expected, expect, note=note)

    ps = valid_parts()
    add("valid", [opts()] + ps + [end(len(ps))], "report", [], note="control: the typed parts of a valid capture")
    add("no_options", ps + [end(len(ps))], "invalid_argument", ["first message", "options"])
    add("options_twice", [opts(), opts()] + ps + [end(len(ps))], "invalid_argument", ["options may only come once"])
    add("no_end", [opts()] + ps, "invalid_argument", ["without an end marker"])
    add("end_count_wrong", [opts()] + ps + [end(len(ps) + 3)], "invalid_argument",
        ["end marker says %d parts" % (len(ps) + 3), "%d arrived" % len(ps)])
    add("part_before_header", [opts()] + ps[1:] + [end(len(ps) - 1)], "invalid_argument",
        ["part 0", "the header must be the first part"])
    add("header_twice", [opts(), ps[0]] + ps + [end(len(ps) + 1)], "invalid_argument", ["part 1", "a second header"])
    side0 = part(side=service_pb2.SIDE_UNSPECIFIED, header=header)
    add("side_unspecified", [opts(), side0, end(1)], "invalid_argument", ["part 0", "side must be HEAD or BASE"])
    empty = service_pb2.AnalyzeChunk()
    empty.part.side = service_pb2.HEAD
    add("empty_part", [opts(), ps[0], empty, end(2)], "invalid_argument", ["part 1", "carries nothing"])
    add("empty_chunk", [opts(), ps[0], service_pb2.AnalyzeChunk(), end(1)], "invalid_argument", ["carries nothing"])
    add("base_only", [opts(), part(side=service_pb2.BASE, header=header), end(1)], "invalid_argument",
        ["no head capture"])
    nb = service_pb2.NodeBatch(graph_id="never_announced")
    add("node_batch_unannounced", [opts(), ps[0], part(node_batch=nb), end(2)], "invalid_argument",
        ["part 1", 'graph "never_announced" was not announced'])
    add("graph_header_no_id", [opts(), ps[0], part(graph_header=service_pb2.GraphHeader()), end(2)],
        "invalid_argument", ["part 1", "graph_header.id is empty"])
    frag = service_pb2.Fragment(kind="no_such_part", data=b"\x0a\x01x", last=True)
    add("fragment_unknown_kind", [opts(), ps[0], part(fragment=frag), end(2)], "invalid_argument",
        ['fragment.kind "no_such_part" is not a capture part'])
    frag = service_pb2.Fragment(kind="header", data=b"", last=True)
    add("fragment_header_kind", [opts(), ps[0], part(fragment=frag), end(2)], "invalid_argument",
        ["part 1", "a second header"])
    frag = service_pb2.Fragment(kind="compile", data=b"\xff\xff\xff\xff\xff\xff", last=True)
    add("fragment_garbage", [opts(), ps[0], part(fragment=frag), end(2)], "invalid_argument",
        ["the reassembled compile is not a valid Compile"])
    frag = service_pb2.Fragment(kind="compile", data=field(7, b"\xff\xfe"), last=True)
    add("fragment_invalid_utf8", [opts(), ps[0], part(fragment=frag), end(2)], "invalid_argument",
        ["the reassembled compile is not a valid Compile"])
    frag = service_pb2.Fragment(kind="frame", data=b"\x08\x01", last=False)
    add("fragment_unfinished", [opts(), ps[0], part(fragment=frag), end(2)], "invalid_argument",
        ["the stream ended inside a fragmented frame"])
    f2 = service_pb2.Fragment(kind="compile", data=b"", last=True)
    add("fragment_kind_switch", [opts(), ps[0], part(fragment=frag), part(fragment=f2), end(3)], "invalid_argument",
        ['fragment.kind "compile" while a fragmented frame was arriving'])
    sc = service_pb2.SourceChunk(path="a.py", text="x = 1\n", last=False)
    add("source_unfinished", [opts(), ps[0], part(source_chunk=sc), end(2)], "invalid_argument",
        ['the stream ended inside source "a.py"'])
    add("source_then_frame", [opts(), ps[0], part(source_chunk=sc), ps[1], end(3)], "invalid_argument",
        ['source "a.py" was still arriving'])
    tt = service_pb2.AnalyzeChunk()
    tt.part.side = service_pb2.HEAD
    tt.part.torch_trace = b"V1129 16:45:46.298000 1 x.py:1] {}\n"
    add("trace_then_typed", [opts(), tt, ps[1], end(2)], "invalid_argument", ["not both"])
    add("typed_then_trace", [opts(), ps[0], ps[1], tt, end(3)], "invalid_argument", ["not both"])
    add("header_after_trace", [opts(), tt, ps[0], end(2)], "invalid_argument", ["header must come before"])
    bad_header = service_pb2.CaptureHeader(schema="0.4.0", session=capture.session)
    add("header_old_schema", [opts(), part(header=bad_header), end(1)], "invalid_argument",
        ["part 0", '"0.4.0" is not supported'])
    # Parts several to a message (PartBatch, what cl-client sends).
    def batch(*parts):
        ch = service_pb2.AnalyzeChunk()
        ch.parts.SetInParent()
        for p in parts:
            ch.parts.parts.append(p.part)
        return ch

    half = len(ps) // 2
    add("batch_valid", [opts(), batch(*ps[:half]), ps[half], batch(*ps[half + 1:]), end(len(ps))], "report", [],
        note="control: the same parts in two batches and one single part")
    add("batch_empty", [opts(), ps[0], batch(), end(1)], "invalid_argument", ["message 3 is an empty batch of parts"])
    add("batch_bad_part", [opts(), batch(ps[0], part(node_batch=nb)), end(2)], "invalid_argument",
        ["part 1", 'graph "never_announced" was not announced'])
    add("batch_side_unspecified", [opts(), batch(ps[0], part(side=service_pb2.SIDE_UNSPECIFIED, frame=capture.frames[0])),
                                   end(2)], "invalid_argument", ["part 1", "side must be HEAD or BASE"])
    add("batch_end_counts_messages", [opts(), batch(*ps), end(1)], "invalid_argument",
        ["end marker says 1 parts", "%d arrived" % len(ps)], note="the end marker counts parts, not messages")
    # Messages that are not AnalyzeChunks: cut, garbage, invalid UTF-8 in string fields.
    whole = ps[5].SerializeToString(deterministic=True)
    for cut in (1, 3, len(whole) // 2, len(whole) - 1):
        add("message_cut_at_%d" % cut, [opts(), ps[0], whole[:cut], end(2)], "invalid_argument",
            ["message 3 is not an AnalyzeChunk"], note="the third message is a %d-byte prefix of a valid part" % cut)
    add("message_garbage", [opts(), b"\xff" * 32, end(0)], "invalid_argument",
        ["message 2 is not an AnalyzeChunk: ? (byte 0): not a field tag"])
    marker = "@@UTF8MARK@@"
    fr = capture_pb2.Frame(id=9, name=marker)
    data = replace_marker(part(frame=fr).SerializeToString(deterministic=True), marker.encode(), b"\xff\xfe" * 6)
    add("frame_name_invalid_utf8", [opts(), ps[0], data, end(2)], "invalid_argument",
        ["message 3 is not an AnalyzeChunk: part.frame.name (byte ", "not UTF-8"])
    data = replace_marker(part(header=service_pb2.CaptureHeader(schema=SCHEMA, session=capture_pb2.Session(id=marker)))
                          .SerializeToString(deterministic=True), marker.encode(), b"\xc0\xaf" * 6)
    add("session_id_invalid_utf8", [opts(), data, end(1)], "invalid_argument",
        ["message 2 is not an AnalyzeChunk: part.header.session.id (byte ", "not UTF-8"])
    # A node whose Arg nests deep: within protobuf's parse depth (100) as a part of the stream, and
    # past it (AnalyzeChunk > CapturePart > NodeBatch > Node > Arg > ArgList > Arg ...).
    typed = [p for p in ps if p.part.WhichOneof("part") in ("header", "frame", "compile")]
    for name, pairs, expected, expect in [("arg_40_deep", 40, "report", []),
                                          ("arg_60_deep", 60, "invalid_argument", ["message %d is not an AnalyzeChunk" % (len(typed) + 3)])]:
        arg = capture_pb2.Arg(literal="1")
        for _ in range(pairs):
            outer = capture_pb2.Arg()
            outer.list.items.append(arg)
            arg = outer
        node = capture_pb2.Node(name="deep", op="call_function", target="aten.add.Tensor", args=[arg])
        deep_ps = typed + [part(graph_header=service_pb2.GraphHeader(id="g", compile_id="0/0", stage=1)),
                           part(node_batch=service_pb2.NodeBatch(graph_id="g", nodes=[node]))]
        add(name, [opts()] + deep_ps + [end(len(deep_ps))], expected, expect,
            note="an Arg %d lists deep in a node batch" % pairs)
    # One message over the server's 1 MiB message limit.
    big = service_pb2.AnalyzeChunk()
    big.part.side = service_pb2.HEAD
    big.part.frame.CopyFrom(capture_pb2.Frame(id=1, name="n" * (2 * MIB)))
    add("message_over_1MiB", [opts(), ps[0], big, end(2)], "resource_exhausted", [])


def main():
    rng = random.Random(SEED)
    corpus = Corpus(ARGS.out_dir)
    head_text, head, lite, trace = load_inputs(ARGS.source_dir)
    c = corpus
    c.add("hero_head", "control", "json", head_text, "report", note="the valid capture the cases derive from")
    c.add("hero_lite", "control", "json", dumps(lite), "report", note="without extras: the base of the mutations")
    c.add("hero_lite_pb", "control", "pb", to_pb(lite), "report")
    c.add("hero_trace", "control", "trace", trace, "report")
    truncations(c, rng, head_text, lite)
    type_confusions(c, lite)
    huge_strings(c, lite, ARGS.no_huge)
    deep_nesting(c, lite)
    duplicate_ids(c, lite)
    dangling_refs(c, lite)
    cycles(c, lite)
    nan_inf(c, lite)
    invalid_utf8(c, lite)
    schema_versions(c, lite)
    broken_traces(c, rng, trace)
    stream_cases(c, lite)
    corpus.write_manifest()
    counts = {}
    for case in corpus.cases:
        counts[case["category"]] = counts.get(case["category"], 0) + 1
    print("%d cases in %s: %s" % (len(corpus.cases), ARGS.out_dir,
                                  ", ".join("%s %d" % kv for kv in sorted(counts.items()))))


if __name__ == "__main__":
    main()
