"""The capture package as a user gets it: what `pip install client/python` put in a venv (or, run
with PYTHONPATH=build/python, the build tree's copy). install_test.sh runs it with the venv's
python; CL_PACKAGE_ROOT says where the package must come from, CL_CLIENT is a cl-client.

It checks the package imports from there without torch, that its generated compile_lens.v1 came
with it, that the public names are the functions themselves (real signatures and docstrings), and
that the schema the package writes is the one the C++ importer writes: both read it from
capture.proto's schema_version option.
"""
import inspect
import json
import os
import subprocess
import sys
import tempfile
import unittest

import compile_lens

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "python")


class InstalledPackageTest(unittest.TestCase):
    def test_the_package_and_its_protos_come_from_the_install(self):
        root = os.path.realpath(os.environ["CL_PACKAGE_ROOT"])
        from compile_lens.v1 import capture_pb2, service_pb2_grpc
        for module in (compile_lens, capture_pb2, service_pb2_grpc):
            self.assertTrue(os.path.realpath(module.__file__).startswith(root + os.sep), module.__file__)

    def test_importing_the_package_and_upload_imports_no_torch(self):
        self.assertNotIn("torch", sys.modules)
        compile_lens.upload  # noqa: B018 (loads compile_lens._upload)
        compile_lens.record_sources  # noqa: B018
        self.assertNotIn("torch", sys.modules)

    def test_public_functions_have_their_own_signatures_and_docstrings(self):
        # check_divergence and track import torch; the sandbox tests check them (test_capture.py).
        expect = {"upload": ["server", "log", "labels", "project_root", "deadline", "at_exit",
                             "credentials", "token", "gates"],
                  "record_sources": ["paths"],
                  "trace_log_path": []}
        for name, params in expect.items():
            fn = getattr(compile_lens, name)
            self.assertEqual(list(inspect.signature(fn).parameters), params, name)
            self.assertTrue(fn.__doc__, name)
        self.assertEqual(sorted(compile_lens.__all__), sorted(
            ["check_divergence", "track", "record_sources", "trace_log_path", "upload"]))
        with self.assertRaises(AttributeError):
            compile_lens.no_such_function  # noqa: B018

    def test_the_schema_it_uploads_is_the_one_the_importer_writes(self):
        from compile_lens import _upload
        schema = _upload._Protos().schema
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "s.cls.json")
            subprocess.run([os.environ["CL_CLIENT"], "import-trace",
                            os.path.join(FIXTURES, "divergence_clean.log"), "-o", out, "--no-sources"],
                           check=True, capture_output=True)
            with open(out, encoding="utf-8") as f:
                self.assertEqual(json.load(f)["schema"], schema)
        self.assertRegex(schema, r"^\d+\.\d+\.\d+$")

    def test_upload_with_the_installed_protos_fails_as_a_value(self):
        result = compile_lens.upload("127.0.0.1:1", os.path.join(FIXTURES, "divergence_clean.log"),
                                     deadline=1)
        self.assertFalse(result.ok)
        self.assertIn("UNAVAILABLE", result.error)


if __name__ == "__main__":
    unittest.main()
