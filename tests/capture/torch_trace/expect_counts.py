#!/usr/bin/env python3
"""Writes the expected import counts of a TORCH_TRACE log, read independently of the C++ importer.

A deliberately simple reader (standard library only): it splits header lines from tab-prefixed
payload lines, applies tlparse's rank rule, and counts what the importer must find — compiles,
failed and restarted compiles, recompile reasons, graph breaks, cache hits/misses/bypasses (FX
graph and AOT autograd artifacts; each kernel's Triton autotune state apart), and each graph with
its number of nodes. tests/capture/torch_trace/import_fixtures_test.cc compares the importer against the
files this writes into tests/golden/torch_trace/.

  expect_counts.py LOG...           print the expectations as JSON
  expect_counts.py --write DIR ROOT LOG...   write DIR/<LOG relative to ROOT, '/' -> '__'>.json
                                             (a gzipped LOG is named without its .gz)
"""
import gzip
import json
import os
import re
import sys

HEADER = re.compile(r"^[VIWECD]\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ .*?\] (\{.*)$")
ENVELOPE = {"rank", "frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "has_payload",
            "stack", "subgraph_name", "severity", "timestamp", "pathname", "thread"}
EXPORT_ISSUES = {"propagate_real_tensors", "propagate_real_tensors_provenance", "guard_added",
                 "missing_fake_kernel", "mismatched_fake_kernel"}
GRAPH_EVENTS = {"dynamo_output_graph", "aot_forward_graph", "aot_backward_graph", "aot_inference_graph",
                "aot_joint_graph", "inductor_pre_grad_graph", "before_pre_grad_graph", "after_pre_grad_graph",
                "before_recompile_pre_grad", "after_recompile_pre_grad", "inductor_post_grad_graph",
                "before_post_grad_graph", "after_post_grad_graph", "before_recompile_post_grad",
                "after_recompile_post_grad"}


def records(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace", newline="\n") as f:
        meta, payload = None, None
        for raw in f:
            line = raw.rstrip("\n").rstrip("\r")
            if not line:
                continue  # tlparse drops blank lines
            if line.startswith("\t"):
                if payload is not None:
                    payload.append(line[1:])
                continue
            m = HEADER.match(line)
            if not m:
                continue
            if meta is not None:
                yield meta, "\n".join(payload) if payload is not None else ""
            meta, payload = m.group(1), ([] if '"has_payload": "' in m.group(1) else None)
        if meta is not None:
            yield meta, "\n".join(payload) if payload is not None else ""


def count_nodes(text):
    """Placeholders of the top-level forward, the assignments in its body, and its return."""
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if re.match(r"^(    )?def forward\(", l)), None)
    if start is None:
        return 0
    indent = " " * (len(lines[start]) - len(lines[start].lstrip()) + 4)  # the body's indentation

    def code(line):  # the line without a trailing `  # comment` (annotations hold no '#')
        return re.sub(r"\s+#.*$", "", line)
    sig = code(lines[start])
    i = start
    while not sig.rstrip().endswith(":") and i + 1 < len(lines):
        i += 1
        sig += code(lines[i]).strip()
    params = sig[sig.index("(") + 1: sig.rindex(")")]
    depth, quote, parts, cur = 0, None, [], ""
    for ch in params:
        if quote:
            cur += ch
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
            cur += ch
        elif ch in "([{":
            depth += 1
            cur += ch
        elif ch in ")]}":
            depth -= 1
            cur += ch
        elif ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    placeholders = [p for p in parts if p and p != "self"]
    # `l_x_ = L_x_` gives placeholder L_x_ its node name: a rename, not a node.
    names = {re.split(r"[:=]", p)[0].strip().lstrip("*") for p in placeholders}
    node_line = re.compile("^" + indent + r"([A-Za-z_]\w*)(?:: \"[^\"]*\")? = ")
    # The pytree calling convention declares the inputs in the body: `a: "f32[..]"; b: "..";` or
    # one `a: "f32[..]"  # comment` per line.
    declaration = re.compile("^" + indent + r"\w+: \"[^\"]*\"\s*(?:;|#|$)")
    # An in-place operator (`operator.iadd`) prints as `x += 1;  step_t: "f32[]" = x;  x = None`:
    # one node, named by the assignment after the augmented statement.
    augmented = re.compile("^" + indent + r"[A-Za-z_]\w* (?:\+|-|\*|/|//|%|\*\*|&|\||\^|<<|>>|@)= [^;]*;  [A-Za-z_]\w*(?:: \"[^\"]*\")? = ")
    # operator.setitem (`self.k_cache[:, :, pos:pos + t] = k`) prints as
    # `x[(slice(...), ...)] = k_1;  setitem = x;  k_1 = setitem = None`: one node, named after the `;`.
    subscript = re.compile("^" + indent + r"[A-Za-z_]\w*\[.*\] = [^;]*;  [A-Za-z_]\w* = ")
    nodes, has_return, pytree_inputs = 0, False, 0
    for line in lines[i + 1:]:
        if line.strip() and not line.startswith(indent):
            break  # the next method or class
        m = node_line.match(line)
        if augmented.match(line) or subscript.match(line):
            nodes += 1
        elif m and line.split("=", 1)[1].strip() not in names:
            nodes += 1
        elif declaration.match(line):
            pytree_inputs += len(re.findall(r"\w+: \"[^\"]*\"", code(line)))
        elif line.startswith(indent + "return"):
            has_return = True
    # With the pytree convention the declared inputs are the placeholders, not the signature's names.
    inputs = pytree_inputs if pytree_inputs else len(placeholders)
    return inputs + nodes + (1 if has_return else 0)


def is_number(val):
    """A symbol's logged value as a hint: a finite number ("4", "0.5596"), not a nested int ("j1")."""
    try:
        return val is not None and float(val) not in (float("inf"), float("-inf")) and float(val) == float(val)
    except (TypeError, ValueError):
        return False


def expect(path):
    rank = None
    seen_ranked = False
    compiles, failed = {}, set()
    reasons = {}          # compile id -> count from the recompile_reasons artifact
    metric_reason = {}    # compile id -> 1 when compilation_metrics names a recompile_reason
    graph_breaks = 0
    cache = {"hit": 0, "miss": 0, "bypass": 0}
    compile_seconds = {}  # compile id -> its compilation_metrics' whole-frame seconds (the last)
    autotune = {"hit": 0, "miss": 0, "bypass": 0}  # triton_kernel_info's autotune_cache_state
    attempts = {}  # (round, "frame/compile") -> the attempts seen, for plain compile ids
    graphs, graph_seen = [], {}
    # torch._dynamo.reset() starts compile ids over: a second dynamo_start of an id whose frame
    # compile has had its compilation_metrics opens a new round, whose ids end in "@N"; a
    # compilation_metrics with no compile id is the compile "-/N".
    round_, started, finished, idless = 0, set(), set(), 0
    metrics_seen = set()
    symbols = {}  # (compile id, symbol) -> whether its first record gave a hint ("val")
    # Draft export's records (a guard only when it names no compile and torch evaluated it), and
    # the unbacked symbols of no compile.
    export_issues, export_symbols = 0, 0
    for meta_text, payload in records(path):
        try:
            meta = json.loads(meta_text)
        except ValueError:
            continue
        if not isinstance(meta, dict):
            continue
        events = [k for k in meta if k not in ENVELOPE]
        if not events:
            continue
        event = events[0]
        if event == "str":
            continue
        if "rank" in meta and isinstance(meta["rank"], int):
            if rank is None:
                rank = meta["rank"]
            if meta["rank"] != rank:
                continue
            seen_ranked = True
        elif seen_ranked:
            continue
        cid = ""
        fid, fcid, att = meta.get("frame_id"), meta.get("frame_compile_id"), meta.get("attempt")
        if isinstance(fid, int) and isinstance(fcid, int) and fid >= 0 and fcid >= 0:
            ca = meta.get("compiled_autograd_id")
            frame_compile = (f"!{ca}/" if isinstance(ca, int) else "") + f"{fid}/{fcid}"
            torch_cid = frame_compile + (f"_{att}" if isinstance(att, int) and att > 0 else "")
            cid = torch_cid + (f"@{round_}" if round_ else "")
            if event == "dynamo_start":
                if cid in started and frame_compile in finished:
                    round_, started, finished = round_ + 1, set(), set()
                    cid = f"{torch_cid}@{round_}"
                started.add(cid)
            if event == "compilation_metrics":
                finished.add(frame_compile)
            compiles.setdefault(cid, True)
            if not isinstance(meta.get("compiled_autograd_id"), int):
                a = att if isinstance(att, int) and att > 0 else 0
                attempts.setdefault((round_, frame_compile), set()).add((a, cid))
        value = meta[event]
        if (event == "compilation_metrics" and fid is None and isinstance(value, dict)
                and value.get("compile_id") is None and value.get("is_runtime") is not True):
            compiles[f"-/{idless}"] = True
            idless += 1
        name = value.get("name") if event == "artifact" and isinstance(value, dict) else None
        # Torch 2.6 logs a compile it refused at the cache-size limit as bwd_compilation_metrics.
        if event == "bwd_compilation_metrics" and cid and isinstance(value, dict) \
                and value.get("fail_type") and cid not in metrics_seen:
            failed.add(cid)
        if event == "compilation_metrics" and cid:
            metrics_seen.add(cid)
        if event == "compilation_metrics" and cid and isinstance(value, dict):
            # Torch's whole-frame compile time: seconds (older torch) or microseconds (2.6 on).
            secs = value.get("entire_frame_compile_time_s")
            if not isinstance(secs, (int, float)) or isinstance(secs, bool) or secs < 0:
                us = value.get("dynamo_cumulative_compile_time_us")
                secs = us / 1e6 if isinstance(us, (int, float)) and not isinstance(us, bool) \
                    and us >= 0 else None
            if secs is not None:
                compile_seconds[cid] = secs
            if value.get("fail_type"):
                failed.add(cid)
            if value.get("recompile_reason"):
                metric_reason[cid] = 1
        if event in ("create_symbol", "create_unbacked_symbol") and cid and isinstance(value, dict) \
                and isinstance(value.get("symbol"), str) and value["symbol"]:
            hinted = event == "create_symbol" and is_number(value.get("val"))
            symbols.setdefault((cid, value["symbol"]), hinted)
        kind = name if event == "artifact" else event
        if kind == "recompile_reasons" and cid:
            try:
                p = json.loads(payload)
                reasons[cid] = 1 if isinstance(p, str) else len([x for x in p if isinstance(x, str)])
            except ValueError:
                pass
        elif kind == "dynamo_graph_break_reason" and cid:
            graph_breaks += 1
        elif kind and cid and re.fullmatch(r"(fx_graph|aotautograd)_cache_(hit|miss|bypass)", kind):
            cache[kind.rsplit("_", 1)[1]] += 1
        elif kind == "aotautograd_cache_hash" and cid:  # torch 2.6: the outcome is in the payload
            try:
                state = json.loads(payload).get("cache_state")
            except (ValueError, AttributeError):
                state = None
            if state in cache:
                cache[state] += 1
        elif kind == "triton_kernel_info" and cid:
            try:
                p = json.loads(payload)
            except ValueError:
                p = None
            for info in (p.values() if isinstance(p, dict) else []):
                state = info.get("autotune_cache_state") if isinstance(info, dict) else None
                if state in autotune:
                    autotune[state] += 1
        elif event in EXPORT_ISSUES and isinstance(value, dict) and (
                event != "guard_added" or (not cid and value.get("prefix") == "eval")):
            export_issues += 1
        elif kind == "make_fx_fail_partial" and not cid:
            export_issues += 1  # a non-strict trace that raised: the graph it had made
        elif event == "symbolic_shape_specialization" and not cid and isinstance(value, dict) \
                and value.get("sources"):
            export_issues += 1  # draft export's: an input's size declared dynamic made a constant
        elif event == "create_unbacked_symbol" and not cid and isinstance(value, dict) \
                and value.get("symbol"):
            export_symbols += 1
        elif kind in GRAPH_EVENTS:
            gid = f"{cid or '-'}/{kind}"
            graph_seen[gid] = graph_seen.get(gid, 0) + 1
            if graph_seen[gid] > 1:
                gid += f"#{graph_seen[gid]}"
            graphs.append({"id": gid, "nodes": count_nodes(payload)})
    total_reasons = sum(reasons.values()) + sum(v for k, v in metric_reason.items() if k not in reasons)
    # A restart: an attempt with no compilation_metrics of its own that a later attempt followed.
    restarts = 0
    for seen in attempts.values():
        last = max(a for a, _ in seen)
        restarts += sum(1 for a, cid in seen if a < last and cid not in metrics_seen)
    return {"compiles": len(compiles), "failed": len(failed), "restarts": restarts,
            "recompile_reasons": total_reasons, "graph_breaks": graph_breaks, "cache": cache,
            "autotune": autotune, "graphs": graphs,
            "compile_seconds": round(sum(compile_seconds.values()), 6),
            "timed_compiles": len(compile_seconds),
            "symbols": len(symbols), "symbol_hints": sum(symbols.values()),
            "export_issues": export_issues, "export_symbols": export_symbols}


def main(argv):
    if len(argv) > 3 and argv[1] == "--write":
        out_dir, root = argv[2], argv[3]
        os.makedirs(out_dir, exist_ok=True)
        for path in argv[4:]:
            rel = os.path.relpath(path, root)
            rel = rel[:-len(".gz")] if rel.endswith(".gz") else rel  # the name it was written under
            name = rel.replace("/", "__") + ".json"
            with open(os.path.join(out_dir, name), "w") as f:
                json.dump(expect(path), f, indent=1, sort_keys=True)
                f.write("\n")
        return 0
    for path in argv[1:]:
        print(json.dumps({path: expect(path)}, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
