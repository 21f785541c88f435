"""The capture package against real PyTorch (run inside the torch sandbox by run_sandbox_tests.sh).

Each scene in scenes/ runs in its own process under TORCH_TRACE with a cold Inductor cache; the
test checks what the scene returned and what went into the log. With CL_FIXTURE_OUT set, the logs
are kept there (tests/fixtures/python/ holds the committed ones the C++ pass tests read).
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.environ.get("CL_PYTHON_PATH", os.path.join(HERE, "..", "..", "client", "python"))


def run_scene(name):
    """Runs scenes/<name>.py; returns (its JSON output, the text of its TORCH_TRACE log)."""
    work = tempfile.mkdtemp(prefix=f"cl-{name}-")
    try:
        env = dict(os.environ, TORCH_TRACE=os.path.join(work, "trace"), PYTHONPATH=PACKAGE_DIR,
                   TORCHINDUCTOR_CACHE_DIR=os.path.join(work, "inductor"), PYTHONWARNINGS="ignore")
        proc = subprocess.run([sys.executable, os.path.join(HERE, "scenes", f"{name}.py")], env=env,
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise AssertionError(f"{name} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        logs = glob.glob(os.path.join(work, "trace", "*.log"))
        if len(logs) != 1:
            raise AssertionError(f"{name}: expected one trace log, found {logs}")
        with open(logs[0], encoding="utf-8") as f:
            log = f.read()
        out = os.environ.get("CL_FIXTURE_OUT")
        if out:
            os.makedirs(out, exist_ok=True)
            shutil.copyfile(logs[0], os.path.join(out, f"{name}.log"))
        return json.loads(proc.stdout.strip().splitlines()[-1]), log
    finally:
        shutil.rmtree(work, ignore_errors=True)


def artifacts(log, name):
    return log.count(f'"name": "compile_lens_{name}"')


class DivergenceTest(unittest.TestCase):
    def test_wrong_custom_pass_is_the_cause_and_its_layer_diverges_first(self):
        result, log = run_scene("divergence_pass")
        self.assertEqual(result["first"], "norm")
        self.assertEqual(result["cause"], "pass: post_grad_custom_post_pass")
        self.assertGreater(result["max_abs_diff"], 1.0)
        self.assertEqual([l["name"] for l in result["layers"]], ["up", "norm"])
        self.assertFalse(result["layers"][0]["diverged"])
        self.assertEqual(result["steps"][-1], {"toggle": "post_grad_custom_post_pass=None",
                                               "diverged": False, "detail": "max abs diff 0"})
        self.assertEqual(artifacts(log, "divergence"), 1)
        self.assertEqual(artifacts(log, "source"), 1)
        # The check's own compiles stay out of the session's log.
        self.assertNotIn('"dynamo_start"', log)

    def test_clean_model_has_no_divergence(self):
        result, log = run_scene("divergence_clean")
        self.assertIsNone(result["first"])
        self.assertIsNone(result["cause"])
        self.assertEqual(len(result["layers"]), 5)  # four leaves, then the Sequential itself
        self.assertTrue(all(not l["diverged"] for l in result["layers"]))
        self.assertEqual(artifacts(log, "divergence"), 1)

    def test_rng_only_difference_is_fallback_random(self):
        result, _ = run_scene("divergence_rng")
        self.assertEqual(result["first"], "<root>")
        self.assertEqual(result["cause"], "config: fallback_random")
        self.assertEqual([s["toggle"] for s in result["steps"]][-1], "fallback_random=True")


class TrackingTest(unittest.TestCase):
    def test_hook_added_after_compile_goes_stale_without_a_recompile(self):
        iterations, log = run_scene("stale_hook")
        self.assertEqual([i["recompiled"] for i in iterations], [True, False, False, False])
        self.assertEqual(len({i["compile_id"] for i in iterations}), 1)
        self.assertEqual([i["output_diverged"] for i in iterations], [False, False, True, True])
        before, after = iterations[1]["state"], iterations[2]["state"]
        changed = sorted(k for k in before if before[k] != after.get(k) and not k.startswith("rng."))
        self.assertEqual(changed, ["model.inner._forward_hooks"])
        self.assertEqual(after["model.inner._forward_hooks"], "1 hook: amplify")
        self.assertEqual(artifacts(log, "iteration"), 4)
        self.assertEqual(log.count('"dynamo_start"'), 1)

    def test_rebound_global_recompiles_and_matches_eager(self):
        iterations, _ = run_scene("guarded_global")
        self.assertEqual([i["recompiled"] for i in iterations], [True, True, False])
        self.assertEqual([i["output_diverged"] for i in iterations], [False, False, False])
        self.assertNotEqual(iterations[0]["compile_id"], iterations[1]["compile_id"])
        self.assertNotEqual(iterations[0]["state"]["globals.activation"], iterations[1]["state"]["globals.activation"])


class PackageTest(unittest.TestCase):
    def test_public_names_are_the_functions_themselves(self):
        code = ("import inspect, json, compile_lens\n"
                "print(json.dumps({n: [list(inspect.signature(getattr(compile_lens, n)).parameters),\n"
                "                      getattr(compile_lens, n).__module__]\n"
                "                  for n in compile_lens.__all__}))")
        proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=PACKAGE_DIR),
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr[-4000:])
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        self.assertEqual(got["check_divergence"],
                         [["model", "inputs", "kwargs", "layers", "stop_at_first", "bisect", "seed",
                           "options", "record"], "compile_lens.divergence"])
        self.assertEqual(got["track"], [["compiled", "sample_every", "name", "compile_kwargs"],
                                        "compile_lens.tracking"])
        self.assertEqual(got["upload"][1], "compile_lens._upload")


if __name__ == "__main__":
    unittest.main()
