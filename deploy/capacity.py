#!/usr/bin/python3
"""Measures the figures deploy/README.md's capacity model rests on, against a real cl-server.

Starts cl-server on a free loopback port with one analysis thread (so that its figures are per
core) and a metrics endpoint, then, for each workload, runs SESSIONS `cl-client analyze --server`
uploads, CONCURRENCY at a time, and reports:

  server CPU per session  the server process's user+system CPU time (/proc/PID/stat) over the run,
                          divided by the sessions: upload assembly, analysis and rendering
                          together. 1 / this is sessions per second per core.
  analysis per session    compile_lens_analysis_duration_seconds (passes and rendering alone)
  wire MiB per session    compile_lens_capture_bytes (what --max_session_bytes counts)
  RSS idle / peak         VmRSS sampled every 20 ms, and the kernel's VmHWM
  MiB per in-flight       (peak RSS - idle RSS) / CONCURRENCY: what one held session costs

Workloads: the hero session (head + base, 12 graphs, 560 nodes) and a synthetic session whose
first graph is a chain of --big-nodes call_function nodes (the hero's graph 0 re-listed), the
shape of a large model's post-grad graph. The clients run on the same machine: wall-clock
throughput is reported but is not the capacity figure; server CPU per session is.

  deploy/capacity.py --server build/service/cl-server --client build/client/cl-client
"""
import argparse
import concurrent.futures
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def status_kib(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def metric_sum_count(metrics_addr, name):
    text = urllib.request.urlopen(f"http://{metrics_addr}/metrics", timeout=10).read().decode()
    values = {}
    for suffix in ("sum", "count"):
        m = re.search(rf"^{name}_{suffix}(?:{{}})? (\S+)$", text, re.M)
        values[suffix] = float(m.group(1)) if m else 0.0
    return values["sum"], values["count"]


def big_session(path, nodes):
    """The hero head with graph 0 replaced by a chain of `nodes` call_function nodes."""
    capture = json.load(open(os.path.join(ROOT, "examples/hero/head.cls.json")))
    graph = capture["graphs"][0]
    placeholders = [n for n in graph["nodes"] if n["op"] == "placeholder"]
    template = next(n for n in graph["nodes"] if n["op"] == "call_function")
    out, prev = list(placeholders), placeholders[0]["name"]
    for i in range(nodes):
        node = copy.deepcopy(template)
        node["name"] = f"chain_{i}"
        node["args"] = [{"node": prev}, {"node": placeholders[1]["name"]}, {"literal": "None"}]
        node["source"] = dict(template["source"], line=template["source"]["line"] + i % 64)
        out.append(node)
        prev = node["name"]
    out.append({"name": "output", "op": "output", "target": "output", "args": [{"node": prev}]})
    graph["nodes"] = out
    with open(path, "w") as f:
        json.dump(capture, f)


def run_workload(args, server, metrics_addr, name, client_args):
    pid = server.pid
    idle_kib = status_kib(pid, "VmRSS")
    peak = [idle_kib]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], status_kib(pid, "VmRSS"))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    bytes0 = metric_sum_count(metrics_addr, "compile_lens_capture_bytes")
    analysis0 = metric_sum_count(metrics_addr, "compile_lens_analysis_duration_seconds")
    cpu0, t0 = cpu_seconds(pid), time.monotonic()

    # Every upload is a session of its own: the server answers a session id it has analyzed (or is
    # analyzing) from its retry cache (or refuses it, ABORTED), which would measure no analysis.
    def one(i):
        return subprocess.run([args.client, "analyze", *client_args, "--server", server.address,
                               "--session-id", f"capacity-{name}-{i}", "--quiet", "--deadline", "600s"],
                              capture_output=True, text=True)

    with concurrent.futures.ThreadPoolExecutor(args.concurrency) as ex:
        results = list(ex.map(one, range(args.sessions)))
    wall, cpu = time.monotonic() - t0, cpu_seconds(pid) - cpu0
    stop.set()
    sampler.join()
    failed = [r for r in results if r.returncode != 0]
    if failed:
        sys.exit(f"{name}: {len(failed)} of {len(results)} calls failed: {failed[0].stderr.strip()}")
    wire_sum, n = (a - b for a, b in zip(metric_sum_count(metrics_addr, "compile_lens_capture_bytes"), bytes0))
    analysis_sum, analyses = (a - b for a, b in zip(
        metric_sum_count(metrics_addr, "compile_lens_analysis_duration_seconds"), analysis0))
    # An OK exit is not an analysis: a call answered from the retry cache exits 0 too.
    if n != args.sessions or analyses != args.sessions:
        sys.exit(f"{name}: {args.sessions} calls OK, but the server took {n:.0f} uploads and ran "
                 f"{analyses:.0f} analyses")
    peak_kib = max(peak[0], 0)
    print(f"{name}: {args.sessions} sessions, {args.concurrency} at a time")
    print(f"  server CPU per session  {1000 * cpu / args.sessions:8.2f} ms   "
          f"({args.sessions / cpu:.0f} sessions/s per core)")
    print(f"  analysis per session    {1000 * analysis_sum / max(n, 1):8.2f} ms")
    print(f"  wire MiB per session    {wire_sum / max(n, 1) / 2**20:8.2f}")
    print(f"  wall throughput         {args.sessions / wall:8.1f} sessions/s (clients on the same machine)")
    print(f"  RSS idle / peak         {idle_kib / 1024:8.1f} / {peak_kib / 1024:.1f} MiB")
    print(f"  MiB per in-flight       {(peak_kib - idle_kib) / 1024 / args.concurrency:8.1f}")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default=os.path.join(ROOT, "build/service/cl-server"))
    parser.add_argument("--client", default=os.path.join(ROOT, "build/client/cl-client"))
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--big-nodes", type=int, default=100_000)
    args = parser.parse_args()

    server = subprocess.Popen(
        [args.server, "--listen", "127.0.0.1:0", "--metrics_listen", "127.0.0.1:0", "--analysis_threads", "1",
         "--max_inflight", "1024", "--analysis_queue", "1024", "--max_session_bytes", str(2 << 30)],
        stderr=subprocess.PIPE, text=True)
    try:
        server.address = server.stderr.readline().split("listening on ")[1].strip()
        metrics_addr = server.stderr.readline().split("metrics on ")[1].strip()
        threading.Thread(target=server.stderr.read, daemon=True).start()
        hero = os.path.join(ROOT, "examples/hero")
        run_workload(args, server, metrics_addr, "hero (head + base)",
                     [f"{hero}/head.cls.json", "--base", f"{hero}/base.cls.json"])
        with tempfile.TemporaryDirectory() as tmp:
            big = os.path.join(tmp, "big.cls.json")
            big_session(big, args.big_nodes)
            big_args = argparse.Namespace(**vars(args))
            big_args.sessions = max(args.concurrency, args.sessions // 8)
            run_workload(big_args, server, metrics_addr, f"synthetic {args.big_nodes}-node graph (head only)", [big])
    finally:
        server.terminate()
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
