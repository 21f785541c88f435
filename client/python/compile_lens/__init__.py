"""compile-lens capture package: the training side of compile-lens.

Records what no TORCH_TRACE log contains, into that same log, as compile-lens artifacts:

* ``check_divergence(model, inputs)`` — per-layer eager-vs-compiled comparison with the culprit
  compiler pass (``compile_lens_divergence``);
* ``track(compiled)`` — per-call state fingerprints, the cache entry that served each call, and a
  sampled eager reference check (``compile_lens_iteration``, one per call);
* ``record_sources()`` — the user's Python files the captured stacks point at
  (``compile_lens_source``);
* ``upload(server)`` — streams the session's log to a compile-lens server, within a deadline.

Run the job with ``TORCH_TRACE=<dir>`` so torch writes the log these artifacts go into. torch is
imported lazily: ``upload`` needs only grpcio and protobuf, not torch.
"""
import os as _os

# Generated gRPC/protobuf modules (compile_lens.v1.*) live in the build tree; see _upload.py.
_generated = _os.environ.get("COMPILE_LENS_PROTO_DIR") or _os.path.join(
    _os.path.dirname(_os.path.abspath(__file__)), "..", "..", "..", "build", "python", "compile_lens")
if _os.path.isdir(_generated):
    __path__.append(_os.path.abspath(_generated))  # noqa: F821 (a package's own __path__)

__all__ = ["check_divergence", "track", "record_sources", "upload", "trace_log_path"]


def check_divergence(*args, **kwargs):
    from compile_lens.divergence import check_divergence as impl
    return impl(*args, **kwargs)


def track(*args, **kwargs):
    from compile_lens.tracking import track as impl
    return impl(*args, **kwargs)


def record_sources(*args, **kwargs):
    from compile_lens._artifacts import record_sources as impl
    return impl(*args, **kwargs)


def trace_log_path():
    from compile_lens._artifacts import trace_log_path as impl
    return impl()


def upload(*args, **kwargs):
    from compile_lens._upload import upload as impl
    return impl(*args, **kwargs)
