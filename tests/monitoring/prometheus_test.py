"""cl-server's metrics, scraped by a real Prometheus (Debian's), and deploy/monitoring checked against it.

One cl-server (--metrics_listen 127.0.0.1:0, fleet labels capped at 3 values) and one Prometheus
(a free loopback port, a generated config scraping the server every second and loading
deploy/monitoring/rules.yml, a temporary storage dir). The test analyzes the hero session, every
log in tests/fixtures/python (raw uploads, and one imported client-side into captures) and the
torch-2.6 graph-break trace of tests/fixtures/torch_trace with cl-client, makes bad calls on the wire (no options, no end marker, a wrong part count, an unknown
pass, a session over --max_session_bytes) and a health check, then asks Prometheus over its HTTP API:
the counters equal what the reports and the calls add up to, every dashboard expression and template
variable query returns series, and every recording and alerting rule evaluates without error.

Environment: CL_SERVER, CL_CLIENT (binaries), CL_SOURCE_DIR (the checkout), PROMETHEUS (the binary),
and PYTHONPATH holding the generated Python protos (build/python).
"""
import collections
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

import grpc
from compile_lens.v1 import capture_pb2, service_pb2, service_pb2_grpc

# The schema this build writes (capture.proto's option, which capture/schema.h reads too).
SCHEMA = capture_pb2.DESCRIPTOR.GetOptions().Extensions[capture_pb2.schema_version]

SOURCE_DIR = os.environ["CL_SOURCE_DIR"]
MONITORING = os.path.join(SOURCE_DIR, "deploy", "monitoring")
JOB = "compile-lens"
ANALYZE = 'grpc_service="compile_lens.v1.CompileLens",grpc_method="Analyze"'
MAX_SESSION_BYTES = 4 << 20
LABEL_VALUES = 3  # --metrics_label_values: the fourth model on is "other"
# What the dashboard's variables and Grafana's macros become in the queries sent here.
SUBSTITUTIONS = {
    "$__rate_interval": "1m", "$job": JOB, "$instance": ".+", "$cluster": ".*", "$model": ".*",
}
# Series made on first sight rather than at start-up (lint patterns come from the lint pass's
# findings): an expression over only these may return nothing.
FIRST_SIGHT_METRICS = {"compile_lens_lint_findings_total"}
with open(os.path.join(SOURCE_DIR, "service", "metrics.cc")) as _f:
    METRICS_SOURCE = _f.read()  # where every metric is declared


def wait_for(predicate, what, timeout=90):
    """Polls `predicate` until it returns a true value (returned), or fails after `timeout` s."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
            if last:
                return last
        except (OSError, urllib.error.URLError, ValueError) as e:
            last = e
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Prometheus:
    """A Prometheus server of our own on a free loopback port, with a temporary storage dir."""

    def __init__(self, workdir, target):
        self.workdir = workdir
        config = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
            "rule_files": [os.path.join(MONITORING, "rules.yml")],
            "scrape_configs": [{"job_name": JOB, "static_configs": [{"targets": [target]}]}],
        }
        self.config = os.path.join(workdir, "prometheus.yml")
        with open(self.config, "w") as f:
            json.dump(config, f)  # JSON is YAML
        self.proc = None

    def start(self):
        # The port is free when picked but could be taken before Prometheus binds it: try again.
        for _ in range(5):
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            self.log = os.path.join(self.workdir, f"prometheus-{self.port}.log")
            with open(self.log, "w") as log:
                self.proc = subprocess.Popen(
                    [os.environ["PROMETHEUS"], f"--config.file={self.config}",
                     f"--storage.tsdb.path={os.path.join(self.workdir, 'data')}",
                     f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                    stdout=log, stderr=subprocess.STDOUT)
            try:
                wait_for(lambda: self._ready(), "Prometheus to be ready", timeout=60)
                return
            except AssertionError:
                self.stop()
                with open(self.log) as f:
                    log = f.read()
                if "address already in use" not in log:
                    raise AssertionError("Prometheus did not start:\n" + log)
        raise AssertionError("no free port for Prometheus")

    def _ready(self):
        if self.proc.poll() is not None:
            raise AssertionError("exited")
        with urllib.request.urlopen(self.url + "/-/ready", timeout=5) as r:
            return r.status == 200

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)

    def api(self, path, **params):
        query = urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=30) as r:
                body = json.load(r)
        except urllib.error.HTTPError as e:  # 400/422: a bad query; the body says why
            body = json.load(e)
        if body.get("status") != "success":
            raise AssertionError(f"{path} {params}: {body.get('errorType')}: {body.get('error')}")
        return body["data"]

    def query(self, expr):
        """The instant vector of `expr` as {frozenset(labels): value}."""
        data = self.api("query", query=expr)
        if data["resultType"] != "vector":
            raise AssertionError(f"{expr}: a {data['resultType']}, not a vector")
        return {frozenset((k, v) for k, v in r["metric"].items() if k != "__name__"): float(r["value"][1])
                for r in data["result"]}

    def by(self, label, expr):
        """`sum by (label) (expr)` as {value of label ("" when absent): number}."""
        return {dict(k).get(label, ""): v for k, v in self.query(f"sum by ({label}) ({expr})").items()}

    def scalar(self, expr):
        result = self.query(f"sum({expr})")
        return next(iter(result.values())) if result else 0.0


class Server:
    """cl-server on loopback port 0 with its metrics endpoint on another port 0."""

    def __init__(self, workdir):
        self.log = os.path.join(workdir, "cl-server.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [os.environ["CL_SERVER"], "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                 "--analysis_threads=2", f"--max_session_bytes={MAX_SESSION_BYTES}",
                 f"--metrics_label_values={LABEL_VALUES}", "--drain_delay=0s"],
                stdout=log, stderr=subprocess.STDOUT)

        def addresses():
            with open(self.log) as f:
                text = f.read()
            if self.proc.poll() is not None:
                raise AssertionError("cl-server exited:\n" + text)
            grpc_addr = re.search(r"cl-server: listening on (\S+)", text)
            metrics_addr = re.search(r"cl-server: metrics on (\S+)", text)
            return grpc_addr and metrics_addr and (grpc_addr.group(1), metrics_addr.group(1))

        try:
            self.address, self.metrics_address = wait_for(addresses, "cl-server's addresses", timeout=30)
        except AssertionError:
            self.stop()
            raise

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)


class Traffic:
    """The calls the test makes, and what they should add up to."""

    def __init__(self, server, workdir):
        self.server = server
        self.workdir = workdir
        self.reports = []  # the report of every analysis that succeeded
        self.codes = collections.Counter()  # Analyze calls by the code the client saw
        self.models = collections.Counter()  # sessions analyzed by the model label they should get
        self.seen_models = []
        self.analyzed = 0  # calls whose session reached the analysis (complete upload)

    def _model_label(self, model):
        if not model:
            return ""
        if model not in self.seen_models and len(self.seen_models) < LABEL_VALUES:
            self.seen_models.append(model)
        return model if model in self.seen_models else "other"

    def client_analyze(self, inputs, model, *flags):
        out = os.path.join(self.workdir, f"report-{len(self.reports)}.json")
        args = [os.environ["CL_CLIENT"], "analyze", *inputs, "--server", self.server.address, "--json", out,
                "--quiet", "--label", f"cluster=ci,model={model},user=alice", *flags]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise AssertionError(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
        with open(out) as f:
            self.reports.append(json.load(f))
        self.codes["OK"] += 1
        self.models[self._model_label(model)] += 1
        self.analyzed += 1

    def raw_call(self, chunks, expect, reaches_analysis=False, model=""):
        """Sends `chunks` as they are and checks the code the server ends the call with."""
        with grpc.insecure_channel(self.server.address) as channel:
            stub = service_pb2_grpc.CompileLensStub(channel)
            try:
                stub.Analyze(iter(chunks), timeout=60)
                code = grpc.StatusCode.OK
            except grpc.RpcError as e:
                code = e.code()
        if code != expect:
            raise AssertionError(f"expected {expect}, got {code}")
        go_name = {grpc.StatusCode.OK: "OK", grpc.StatusCode.INVALID_ARGUMENT: "InvalidArgument",
                   grpc.StatusCode.RESOURCE_EXHAUSTED: "ResourceExhausted"}[code]
        self.codes[go_name] += 1
        if reaches_analysis:
            self.analyzed += 1
            self.models[self._model_label(model)] += 1

    @staticmethod
    def raw_chunks(data, passes=(), end=True, parts_delta=0):
        """options, a header, `data` as raw TORCH_TRACE pieces, then (when `end`) the end marker."""
        chunks = [service_pb2.AnalyzeChunk(options=service_pb2.AnalyzeOptions(passes=list(passes)))]
        header = service_pb2.CaptureHeader(schema=SCHEMA, session=capture_pb2.Session(), source_name="bad.log")
        chunks.append(service_pb2.AnalyzeChunk(part=service_pb2.CapturePart(side=service_pb2.HEAD, header=header)))
        for i in range(0, len(data), 512 << 10):
            chunks.append(service_pb2.AnalyzeChunk(
                part=service_pb2.CapturePart(side=service_pb2.HEAD, torch_trace=data[i:i + (512 << 10)])))
        if end:
            chunks.append(service_pb2.AnalyzeChunk(end=service_pb2.EndOfCapture(parts=len(chunks) - 1 + parts_delta)))
        return chunks


def report_sum(reports, section, field, key):
    """{key value: sum of `count`} over reports[*][section][field][*] of OK sections."""
    out = collections.Counter()
    for r in reports:
        s = r.get(section, {})
        if s.get("status") == "OK":
            for item in s.get(field, []):
                out[key(item)] += int(item.get("count", 1))
    return out


def nonzero(d):
    return {k: v for k, v in d.items() if v}


def substitute(expr):
    for var in sorted(SUBSTITUTIONS, key=len, reverse=True):
        expr = expr.replace(var, SUBSTITUTIONS[var])
    if "$" in expr:
        raise AssertionError(f"an unsubstituted variable in {expr}")
    return expr


def metric_names(expr):
    """The compile-lens and gRPC metric names an expression reads (histogram suffixes dropped)."""
    names = set(re.findall(r"\b((?:compile_lens|grpc_server)_[a-z_]+)\b", expr))
    return {re.sub(r"_(bucket|sum|count)$", "", n) if n.endswith(("_bucket", "_sum", "_count")) else n
            for n in names}


def load_dashboard():
    with open(os.path.join(MONITORING, "dashboard.json")) as f:
        return json.load(f)


class DashboardConventionsTest(unittest.TestCase):
    """deploy/monitoring/dashboard.json follows its conventions (deploy/monitoring/README.md), statically."""

    def test_every_panel_has_a_title_description_unit_and_the_datasource_variable(self):
        dashboard = load_dashboard()
        self.assertTrue(8 <= len(dashboard["uid"]) <= 40)
        self.assertEqual(dashboard["graphTooltip"], 1)
        for panel in dashboard["panels"]:
            with self.subTest(panel=panel.get("title")):
                self.assertTrue(panel.get("title"))
                self.assertGreater(len(panel.get("description", "")), 20)
                self.assertIn(panel["fieldConfig"]["defaults"].get("unit"),
                              {"reqps", "ops", "s", "percentunit", "bytes", "short"})
                self.assertEqual(panel["datasource"]["uid"], "${datasource}")
                self.assertTrue(panel["targets"])
                for target in panel["targets"]:
                    self.assertEqual(target["datasource"]["uid"], "${datasource}")

    def test_every_query_filters_by_job_and_instance_and_rates_over_the_rate_interval(self):
        for panel in load_dashboard()["panels"]:
            for target in panel["targets"]:
                expr = target["expr"]
                with self.subTest(expr=expr):
                    self.assertEqual(expr.count('job=~"$job"'), expr.count("{"))
                    self.assertEqual(expr.count('instance=~"$instance"'), expr.count("{"))
                    for window in re.findall(r"\[([^\]]*)\]", expr):
                        self.assertEqual(window, "$__rate_interval")
                    # Counters only inside rate().
                    for counter in re.findall(r"\b\w+_total\b", expr):
                        self.assertRegex(expr, r"rate\(" + counter)

    def test_variables(self):
        variables = {v["name"]: v for v in load_dashboard()["templating"]["list"]}
        self.assertEqual(list(variables), ["datasource", "job", "instance", "cluster", "model"])
        self.assertEqual(variables["datasource"]["type"], "datasource")
        self.assertEqual(variables["datasource"]["label"], "Data Source")
        for name in ("job", "instance", "cluster", "model"):
            self.assertEqual(variables[name]["datasource"]["uid"], "${datasource}")
            self.assertTrue(variables[name]["multi"] and variables[name]["includeAll"])


class PrometheusScrapeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Class cleanups run even when setUpClass fails half-way, unlike tearDownClass.
        cls.workdir = tempfile.mkdtemp(prefix="cl-prometheus-")
        cls.addClassCleanup(shutil.rmtree, cls.workdir, ignore_errors=True)
        cls.server = Server(cls.workdir)
        cls.addClassCleanup(cls.server.stop)
        cls.prometheus = Prometheus(cls.workdir, cls.server.metrics_address)
        cls.addClassCleanup(cls.prometheus.stop)
        cls.prometheus.start()
        wait_for(cls.target_up, "the cl-server target to be up")
        cls.traffic = Traffic(cls.server, cls.workdir)
        cls.send_traffic()
        cls.wait_for_the_scrape()

    @classmethod
    def target_up(cls):
        targets = cls.prometheus.api("targets")["activeTargets"]
        return any(t["labels"]["job"] == JOB and t["health"] == "up" for t in targets)

    @classmethod
    def send_traffic(cls):
        t = cls.traffic
        hero = os.path.join(SOURCE_DIR, "examples", "hero")
        t.client_analyze([os.path.join(hero, "head.cls.json"), "--base", os.path.join(hero, "base.cls.json")], "hero")
        logs = sorted(glob.glob(os.path.join(SOURCE_DIR, "tests", "fixtures", "python", "*.log")))
        assert len(logs) >= 5, logs
        for log in logs:  # raw TORCH_TRACE bytes, imported server-side
            t.client_analyze([log, "--raw"], os.path.basename(log)[:-len(".log")])
        # One imported client-side and sent as typed capture parts.
        t.client_analyze([logs[-1]], "capture-parts")
        # A real torch 2.6 trace with graph breaks of three categories (the fixtures above have none).
        # Stored gzipped: cl-client inflates it as it streams, so the server gets the log's own bytes.
        t.client_analyze([os.path.join(SOURCE_DIR, "tests", "fixtures", "torch_trace", "torch-2.6", "graph_breaks",
                                       "trace.log.gz"), "--raw"], "graph-breaks")
        # A real torch 2.6 draft export: what torch.export could not prove, by kind.
        t.client_analyze([os.path.join(SOURCE_DIR, "tests", "fixtures", "torch_trace", "torch-2.6", "draft_export",
                                       "trace.log.gz"), "--raw"], "draft-export")

        with open(logs[0], "rb") as f:
            small = f.read()
        # Bad input, each refused with the code the design gives it.
        no_options = Traffic.raw_chunks(small)[1:]
        t.raw_call(no_options, grpc.StatusCode.INVALID_ARGUMENT)
        t.raw_call(Traffic.raw_chunks(small, end=False), grpc.StatusCode.INVALID_ARGUMENT)
        t.raw_call(Traffic.raw_chunks(small, parts_delta=1), grpc.StatusCode.INVALID_ARGUMENT)
        # Log lines (the server imports a raw log as it arrives: bytes that are not one are refused as
        # such before they add up to the limit).
        line = b'V1206 00:00:00.000000 1 a.py:1] {"str": ["/w/a.py", 0]}\n'
        too_large = line * ((MAX_SESSION_BYTES + (1 << 20)) // len(line))
        t.raw_call(Traffic.raw_chunks(too_large), grpc.StatusCode.RESOURCE_EXHAUSTED)
        # A complete upload whose analysis fails: an unknown pass.
        t.raw_call(Traffic.raw_chunks(small, passes=["no-such-pass"]), grpc.StatusCode.INVALID_ARGUMENT,
                   reaches_analysis=True)
        health = subprocess.run([os.environ["CL_CLIENT"], "health", "--server", cls.server.address],
                                capture_output=True, text=True, timeout=60)
        assert health.returncode == 0, health.stderr

    @classmethod
    def wait_for_the_scrape(cls):
        calls = sum(cls.traffic.codes.values())
        p = cls.prometheus
        wait_for(lambda: p.scalar(f'grpc_server_handled_total{{{ANALYZE}}}') == calls
                 and p.scalar('grpc_server_handled_total{grpc_method="Check",grpc_code="OK"}') >= 1
                 and p.scalar("compile_lens_analysis_duration_seconds_count") == cls.traffic.analyzed,
                 f"Prometheus to scrape all {calls} Analyze calls")

    # ---- The counters add up -------------------------------------------------------------------

    def test_handled_by_code_counts_every_call_including_the_refused_ones(self):
        p = self.prometheus
        self.assertEqual(nonzero(p.by("grpc_code", f"grpc_server_handled_total{{{ANALYZE}}}")),
                         {code: float(n) for code, n in self.traffic.codes.items()})
        # Every Go code exists from the first scrape, 0 or not.
        self.assertEqual(len(p.query(f"grpc_server_handled_total{{{ANALYZE}}}")), 17)
        self.assertEqual(p.scalar(f"grpc_server_started_total{{{ANALYZE}}}"), sum(self.traffic.codes.values()))
        self.assertEqual(p.scalar(f"grpc_server_handling_seconds_count{{{ANALYZE}}}"), sum(self.traffic.codes.values()))
        self.assertGreaterEqual(p.scalar('grpc_server_handled_total{grpc_service="grpc.health.v1.Health",'
                                         'grpc_method="Check",grpc_code="OK",grpc_type="unary"}'), 1)
        self.assertEqual(p.scalar(f"grpc_server_msg_sent_total{{{ANALYZE}}}"), self.traffic.codes["OK"])
        self.assertGreater(p.scalar(f"grpc_server_msg_received_total{{{ANALYZE}}}"), sum(self.traffic.codes.values()))
        self.assertEqual(p.by("reason", "compile_lens_analysis_rejected_total"),
                         {"invalid": 3.0, "too_large": 1.0, "queue_full": 0.0, "max_inflight": 0.0,
                          "upload_timeout": 0.0, "idle": 0.0})

    def test_recompiles_and_graph_breaks_by_category_are_the_reports_sums(self):
        p = self.prometheus
        reports = self.traffic.reports
        expected = report_sum(reports, "recompile", "clusters", lambda c: c["category"])
        self.assertTrue(expected, "the sessions sent have recompiles")
        self.assertEqual(nonzero(p.by("category", "compile_lens_recompiles_total")),
                         {k: float(v) for k, v in expected.items()})
        expected = report_sum(reports, "recompile", "graph_breaks", lambda g: g["category"])
        self.assertGreaterEqual(len(expected), 3, "the sessions sent have graph breaks")
        self.assertEqual(nonzero(p.by("category", "compile_lens_graph_breaks_total")),
                         {k: float(v) for k, v in expected.items()})

    def test_divergence_and_cache_stability(self):
        p = self.prometheus
        reports = self.traffic.reports
        checked = [r for r in reports if r["divergence"].get("status") == "OK"]
        divergent = collections.Counter(r["divergence"].get("severity", "ERROR").lower()
                                        for r in checked if r["divergence"].get("first_divergent_layer"))
        self.assertTrue(divergent, "the sessions sent include divergent ones")
        self.assertEqual(p.scalar("compile_lens_divergence_checked_sessions_total"), len(checked))
        self.assertEqual(nonzero(p.by("severity", "compile_lens_divergent_sessions_total")),
                         {k: float(v) for k, v in divergent.items()})
        verdicts = report_sum(reports, "cache_stability", "findings", lambda f: f.get("verdict", "SUSPICIOUS").lower())
        self.assertTrue(verdicts, "the sessions sent include cache-stability findings")
        self.assertEqual(nonzero(p.by("verdict", "compile_lens_stale_cache_findings_total")),
                         {k: float(v) for k, v in verdicts.items()})
        lint = report_sum(reports, "lint", "findings",
                          lambda f: f"{f.get('pattern', '')}/{f.get('severity') or 'candidate'}")
        got = self.prometheus.query("sum by (pattern, severity) (compile_lens_lint_findings_total)")
        self.assertEqual({f"{dict(k).get('pattern', '')}/{dict(k).get('severity', '')}": v for k, v in got.items()},
                         {k: float(v) for k, v in lint.items()})

    def test_compile_seconds_cache_lookups_and_failures_are_the_reports_sums(self):
        p = self.prometheus
        sections = [r["compile_time"] for r in self.traffic.reports
                    if r.get("compile_time", {}).get("status") == "OK"]
        self.assertTrue(sections, "the sessions sent have compile times")
        lookups = collections.Counter()
        seconds, observations = collections.Counter(), collections.Counter()
        for s in sections:
            for c in s.get("caches", []):
                for outcome, field in (("hit", "hits"), ("miss", "misses"), ("bypass", "bypasses")):
                    lookups[f"{c['cache']}/{outcome}"] += int(c.get(field, 0))
            for cost in s.get("ledger", []):
                seconds[cost["cause"]] += float(cost.get("seconds", 0))
                observations[cost["cause"]] += 1
        got = p.query("sum by (cache, outcome) (compile_lens_cache_lookups_total)")
        self.assertEqual(nonzero({f"{dict(k)['cache']}/{dict(k)['outcome']}": v for k, v in got.items()}),
                         {k: float(v) for k, v in lookups.items() if v})
        # Every cache x outcome series exists from the tuple's first session, 0 or not.
        self.assertEqual(len(got), 9)
        self.assertEqual(nonzero(p.by("cause", "compile_lens_compile_seconds_count")),
                         {k: float(v) for k, v in observations.items()})
        for cause, total in p.by("cause", "compile_lens_compile_seconds_sum").items():
            self.assertAlmostEqual(total, seconds[cause], places=3, msg=cause)
        failed = report_sum(self.traffic.reports, "failures", "failed",
                            lambda f: f.get("fail_type") or "other")
        got = nonzero(p.by("fail_type", "compile_lens_compile_failures_total"))
        self.assertEqual(sum(got.values()), float(sum(failed.values())))

    def test_export_findings_by_kind_are_the_reports_sums(self):
        expected = report_sum(self.traffic.reports, "failures", "export_findings", lambda f: f["kind"])
        self.assertGreaterEqual(len(expected), 2, "the sessions sent include a draft export")
        self.assertEqual(nonzero(self.prometheus.by("kind", "compile_lens_export_findings_total")),
                         {k: float(v) for k, v in expected.items()})

    def test_sessions_by_outcome_and_fleet_labels_through_the_allowlist_and_cap(self):
        p = self.prometheus
        partial = sum(1 for r in self.traffic.reports
                      if any(isinstance(s, dict) and s.get("status") == "ERROR" for s in r.values()))
        ok = len(self.traffic.reports) - partial
        self.assertEqual(nonzero(p.by("outcome", "compile_lens_sessions_analyzed_total")),
                         nonzero({"ok": float(ok), "partial": float(partial), "failed": 1.0}))
        self.assertEqual(nonzero(p.by("model", "compile_lens_sessions_analyzed_total")),
                         {k: float(v) for k, v in self.traffic.models.items()})
        self.assertIn("other", self.traffic.models)
        self.assertEqual(p.query('compile_lens_sessions_analyzed_total{user!=""}'), {})  # not allowlisted
        self.assertEqual(p.scalar("compile_lens_capture_bytes_count"), self.traffic.analyzed)
        self.assertEqual(p.scalar('compile_lens_analysis_pass_duration_seconds_count{pass="recompile"}'),
                         len(self.traffic.reports))
        self.assertEqual(p.scalar("compile_lens_sessions_inflight"), 0)
        self.assertGreater(p.scalar("compile_lens_analysis_queue_capacity"), 0)

    # ---- deploy/monitoring against the real thing ---------------------------------------------------

    def test_every_dashboard_expression_evaluates_to_series(self):
        dashboard = load_dashboard()
        exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
        self.assertGreater(len(exprs), 15)
        for expr in exprs:
            with self.subTest(expr=expr):
                result = self.prometheus.query(substitute(expr))  # raises on a PromQL error
                names = metric_names(expr)
                self.assertTrue(names, "reads no compile-lens or gRPC metric")
                for name in names - FIRST_SIGHT_METRICS:  # a misspelt name gives no series, not an error
                    self.assertTrue(self.prometheus.api("metadata", metric=name), f"{name} is not exported")
                for name in names & FIRST_SIGHT_METRICS:  # no series, hence no metadata, before the first
                    self.assertIn(f'"{name}"', METRICS_SOURCE, f"{name} is not declared in service/metrics.cc")
                if not names <= FIRST_SIGHT_METRICS:
                    self.assertTrue(result, "no series")

    def test_every_dashboard_variable_query_finds_values(self):
        for variable in load_dashboard()["templating"]["list"]:
            if variable["type"] != "query":
                continue
            with self.subTest(variable=variable["name"]):
                m = re.fullmatch(r"label_values\((.+), (\w+)\)", variable["query"]["query"])
                self.assertIsNotNone(m)
                values = self.prometheus.api(f"label/{m.group(2)}/values", **{"match[]": substitute(m.group(1))})
                self.assertTrue(values)

    def test_every_rule_evaluates_without_error(self):
        def evaluated_groups():
            groups = self.prometheus.api("rules")["groups"]
            rules = [r for g in groups for r in g["rules"]]
            # Go's zero time ("0001-01-01T00:00:00Z") until a rule's first evaluation.
            done = rules and not any(r.get("lastEvaluation", "0001").startswith("0001") for r in rules)
            return done and groups

        groups = wait_for(evaluated_groups, "every rule to be evaluated")
        rules = [r for g in groups for r in g["rules"]]
        self.assertGreaterEqual(len(rules), 20)
        for rule in rules:
            with self.subTest(rule=rule["name"]):
                self.assertEqual(rule["health"], "ok", rule.get("lastError"))
                self.prometheus.query(rule["query"])  # and on its own, through the query API
                if rule["type"] == "recording":
                    self.assertTrue(wait_for(lambda: self.prometheus.query(rule["name"]), rule["name"]))


if __name__ == "__main__":
    unittest.main()
