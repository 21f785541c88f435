"""The chart's pod, as the kubelet sees it: cl-server started with the arguments the chart renders,
probed the way the kubelet's native gRPC probes probe it, then sent SIGTERM.

- Readiness (grpc.health.v1 Check, service "") and liveness (service "liveness") both answer
  SERVING once the server is up; the metrics port serves the gauge the HPA scales on.
- On SIGTERM, readiness goes NOT_SERVING at once while liveness stays SERVING (a liveness failure
  during the drain would have the kubelet kill the pod early), and the server exits 0 well
  within the rendered terminationGracePeriodSeconds.

The ports are free loopback ports passed to the chart as values (server.bindAddress=127.0.0.1),
and the correctness DB is the checkout's lint/correctness.toml (the image's copy); everything else
is the chart's defaults but a short drain.

Environment: HELM, CL_SERVER (the binary), CL_SOURCE_DIR.
"""
import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.request

import grpc

import chart_test  # helm_template, node_validate

SERVER = os.environ["CL_SERVER"]
SERVING, NOT_SERVING = 1, 2  # grpc.health.v1.HealthCheckResponse.ServingStatus
DRAIN_DELAY, DRAIN_GRACE = 3, 5


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def health(port, service):
    """grpc.health.v1.Health/Check as the kubelet sends it: the status, or the gRPC code's name."""
    request = service.encode()
    request = (b"\x0a" + bytes([len(request)]) + request) if request else b""  # field 1, string
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        check = channel.unary_unary("/grpc.health.v1.Health/Check")
        try:
            response = check(request, timeout=2)
        except grpc.RpcError as e:
            return e.code().name
    return response[1] if response[:1] == b"\x08" else 0  # field 1, varint (absent: UNKNOWN)


class ProbesTest(unittest.TestCase):
    def test_probes_and_drain(self):
        grpc_port, metrics_port = free_port(), free_port()
        proc = chart_test.helm_template(
            "-s", "templates/deployment.yaml",
            "--set", f"server.bindAddress=127.0.0.1,server.grpcPort={grpc_port},server.metricsPort={metrics_port}",
            "--set", f"server.drainDelaySeconds={DRAIN_DELAY},server.drainGraceSeconds={DRAIN_GRACE}",
            # The image's copy of the correctness DB, here.
            "--set", f"server.correctnessDb.path={chart_test.SOURCE_DIR}/lint/correctness.toml")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        deployment = yaml_documents(proc.stdout)[0]
        pod = deployment["spec"]["template"]["spec"]
        container = pod["containers"][0]
        readiness, liveness = container["readinessProbe"]["grpc"], container["livenessProbe"]["grpc"]
        self.assertEqual(readiness["port"], grpc_port)

        server = subprocess.Popen([SERVER, *container["args"]], stderr=subprocess.PIPE, text=True)
        try:
            self.assertIn("listening on", server.stderr.readline())
            status = {}
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                status = {name: health(p["port"], p.get("service", "")) for name, p in
                          (("readiness", readiness), ("liveness", liveness))}
                if status["readiness"] == SERVING:
                    break
                time.sleep(0.2)
            self.assertEqual(status, {"readiness": SERVING, "liveness": SERVING},
                             "liveness asks for service \"liveness\": cl-server must register it SERVING at start-up")
            metrics = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).read().decode()
            self.assertIn("\ncompile_lens_sessions_inflight ", metrics)

            started = time.monotonic()
            server.send_signal(signal.SIGTERM)
            # Readiness flips at once; new calls are still served for --drain_delay, so liveness
            # can be asked right after.
            while health(grpc_port, readiness.get("service", "")) == SERVING:
                self.assertLess(time.monotonic() - started, DRAIN_DELAY, "readiness did not go NOT_SERVING")
            self.assertEqual(health(grpc_port, readiness.get("service", "")), NOT_SERVING)
            self.assertEqual(health(grpc_port, liveness["service"]), SERVING,
                             "liveness must stay SERVING while the pod drains")
            self.assertLess(time.monotonic() - started, DRAIN_DELAY, "checked after the drain delay")
            rc = server.wait(timeout=pod["terminationGracePeriodSeconds"])
            self.assertEqual(rc, 0)
            self.assertLess(time.monotonic() - started, pod["terminationGracePeriodSeconds"])
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
            server.stderr.close()


def yaml_documents(text):
    """The rendered YAML as objects, through the validator's js-yaml (Debian's python has no yaml)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(text)
        f.flush()
        _, out = chart_test.node_validate("--parse", f.name)
    return out["documents"]


if __name__ == "__main__":
    unittest.main()
