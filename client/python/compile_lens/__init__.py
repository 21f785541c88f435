"""compile-lens capture package: the training side of compile-lens.

Records what no TORCH_TRACE log contains, into that same log, as compile-lens artifacts:

* ``check_divergence(model, inputs)`` — per-layer eager-vs-compiled comparison with the culprit
  compiler pass (``compile_lens_divergence``);
* ``track(compiled)`` — per-call state fingerprints, the cache entry that served each call, and a
  sampled eager reference check (``compile_lens_iteration``, one per call);
* ``record_sources()`` — the user's Python files the captured stacks point at
  (``compile_lens_source``);
* ``upload(server)`` — streams the session's log to a compile-lens server, within a deadline.

Run the job with ``TORCH_TRACE=<dir>`` so torch writes the log these artifacts go into.

The names above are the functions themselves, loaded from their modules on first use: importing
the package imports no torch, so that ``upload`` needs only grpcio and protobuf.
"""
import importlib
import typing

if typing.TYPE_CHECKING:  # what type checkers and editors see; at run time __getattr__ loads them
    from compile_lens._artifacts import record_sources, trace_log_path
    from compile_lens._upload import upload
    from compile_lens.divergence import check_divergence
    from compile_lens.tracking import track

# Each public name, by the module that defines it.
_PUBLIC = {
    "check_divergence": "compile_lens.divergence",
    "track": "compile_lens.tracking",
    "record_sources": "compile_lens._artifacts",
    "trace_log_path": "compile_lens._artifacts",
    "upload": "compile_lens._upload",
}

__all__ = list(_PUBLIC)


def __getattr__(name):
    """Loads a public function on first use (PEP 562); later lookups find it in the module."""
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
