"""Builds the capture package together with its generated subpackage compile_lens.v1.

pyproject.toml holds the metadata. The one step it cannot declare is here: protoc (Debian's
protobuf-compiler, with protobuf-compiler-grpc's grpc_python_plugin) turns the repository's
proto/compile_lens/v1/*.proto into compile_lens/v1/*_pb2.py beside the package's own modules, so
that what upload() sends is the same contract the server of this checkout reads. The build tree's
copy of the package (build/python) is made by CMake from the same files (CMakeLists.txt here).
"""
import glob
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

PROTO_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto")


class BuildWithProtos(build_py):
    """build_py, then protoc into the built package."""

    def run(self):
        super().run()
        protoc, plugin = shutil.which("protoc"), shutil.which("grpc_python_plugin")
        if protoc is None or plugin is None:
            raise SystemExit("compile-lens: building the package needs protoc and grpc_python_plugin "
                             "(Debian: protobuf-compiler protobuf-compiler-grpc)")
        protos = sorted(glob.glob(os.path.join(PROTO_ROOT, "compile_lens", "v1", "*.proto")))
        if not protos:
            raise SystemExit(f"compile-lens: no protos under {PROTO_ROOT} (install from a checkout "
                             "of the repository)")
        subprocess.run([protoc, f"--proto_path={PROTO_ROOT}", f"--python_out={self.build_lib}",
                        f"--grpc_out={self.build_lib}", f"--plugin=protoc-gen-grpc={plugin}", *protos],
                       check=True)
        open(os.path.join(self.build_lib, "compile_lens", "v1", "__init__.py"), "w").close()


setup(cmdclass={"build_py": BuildWithProtos})
