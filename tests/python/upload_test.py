"""compile_lens.upload() against a real cl-server on loopback (Debian python3 + python3-grpcio).

Uploads a log the capture package wrote in the torch sandbox (tests/fixtures/python) and checks the
server analyzed it; and that upload never outlasts its deadline and never raises: an unreachable
server, a peer that accepts the connection and never answers, a missing log, and the at-exit form.
"""
import os
import re
import socket
import subprocess
import sys
import textwrap
import time
import unittest

import compile_lens

FIXTURES = os.environ["CL_FIXTURES"]
SERVER = os.environ["CL_SERVER"]


class Server:
    def __enter__(self):
        self.proc = subprocess.Popen([SERVER, "--listen=127.0.0.1:0"], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        for line in self.proc.stdout:
            m = re.search(r"listening on (\S+)", line)
            if m:
                self.address = m.group(1)
                return self
        raise AssertionError("cl-server did not say where it listens")

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.stdout.close()
        self.proc.wait(timeout=30)


class SilentPeer:
    """A TCP listener that accepts and never speaks: the worst server to wait on."""

    def __enter__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.address = "127.0.0.1:%d" % self.sock.getsockname()[1]
        return self

    def __exit__(self, *exc):
        self.sock.close()


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return "127.0.0.1:%d" % port


class UploadTest(unittest.TestCase):
    def test_uploads_a_real_session_log_and_gets_the_analysis(self):
        with Server() as server:
            result = compile_lens.upload(server.address, os.path.join(FIXTURES, "stale_hook.log"),
                                         labels={"cluster": "ci", "model": "stale-hook"}, deadline=60)
        self.assertTrue(result.ok, result.error)
        report = result.response.report
        self.assertEqual(report.metadata.labels["model"], "stale-hook")
        self.assertEqual(report.raw.iterations, 4)
        stale = report.cache_stability
        self.assertEqual([f.state_key for f in stale.findings], ["model.inner._forward_hooks"])

    def test_gates_run_on_the_server_and_come_back_failed(self):
        log = os.path.join(FIXTURES, "stale_hook.log")
        with Server() as server:
            failed = compile_lens.upload(server.address, log, deadline=60,
                                         gates={"fail_on": ["stale-cache"], "max_recompiles": 100})
            passed = compile_lens.upload(server.address, log, deadline=60,
                                         gates={"max_recompiles": 100})
            bad = compile_lens.upload(server.address, log, deadline=60, gates={"max_graph_brakes": 1})
        self.assertTrue(failed.ok, failed.error)
        self.assertEqual(len(failed.failed_gates), 1, failed.failed_gates)
        self.assertIn("stale cache entry", failed.failed_gates[0])
        self.assertIn("(--fail-on stale-cache)", failed.failed_gates[0])
        self.assertTrue(passed.ok, passed.error)
        self.assertEqual(passed.failed_gates, [])
        self.assertFalse(bad.ok)
        self.assertIn("gates:", bad.error)

    def test_unreachable_server_fails_within_the_deadline(self):
        start = time.monotonic()
        result = compile_lens.upload(closed_port(), os.path.join(FIXTURES, "divergence_pass.log"), deadline=2)
        self.assertFalse(result.ok)
        self.assertIn("UNAVAILABLE", result.error)
        self.assertLess(time.monotonic() - start, 6)  # 2 s deadline + start-up slack on a loaded machine

    def test_silent_server_fails_at_the_deadline_not_later(self):
        with SilentPeer() as peer:
            start = time.monotonic()
            result = compile_lens.upload(peer.address, os.path.join(FIXTURES, "divergence_pass.log"), deadline=1.5)
            elapsed = time.monotonic() - start
        self.assertFalse(result.ok)
        self.assertIn("DEADLINE_EXCEEDED", result.error)
        self.assertLess(elapsed, 5)

    def test_missing_log_is_an_error_not_an_exception(self):
        result = compile_lens.upload("127.0.0.1:1", "/nonexistent/trace.log", deadline=1)
        self.assertFalse(result.ok)
        self.assertIn("no such log", result.error)

    def test_labels_that_are_not_strings_are_an_error_not_an_exception(self):
        result = compile_lens.upload(closed_port(), os.path.join(FIXTURES, "divergence_pass.log"),
                                     labels={"step": 3}, deadline=1)
        self.assertFalse(result.ok)
        self.assertIn("labels must map strings to strings", result.error)

    def test_at_exit_upload_does_not_hold_teardown_past_its_deadline(self):
        with SilentPeer() as peer:
            script = textwrap.dedent(f"""
                import compile_lens
                compile_lens.upload({peer.address!r}, {os.path.join(FIXTURES, 'divergence_pass.log')!r},
                                    deadline=1.0, at_exit=True)
                print("main done", flush=True)
            """)
            start = time.monotonic()
            proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
            elapsed = time.monotonic() - start
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("main done", proc.stdout)
        self.assertLess(elapsed, 5)


if __name__ == "__main__":
    unittest.main()
