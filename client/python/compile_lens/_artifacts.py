"""Writing compile-lens artifacts into torch's own TORCH_TRACE log.

Every record goes through ``torch._logging.trace_structured("artifact", ...)``, so it lands in the
log torch is writing for this process, between torch's own events, as
``{"artifact": {"name": "compile_lens_<kind>", "encoding": "json"}}`` with a JSON payload: the
proto3 JSON form of the capture message (compile_lens.v1.Iteration, Divergence, SourceFile) that
the compile-lens importer reads back. Without ``TORCH_TRACE`` torch writes no log, and neither do
we: the results are still returned to the caller.
"""
import contextlib
import hashlib
import json
import logging
import os
import sys
import warnings

_TRACE_LOGGER = "torch.__trace"
_source_files = {}  # path -> None: the user files seen, in order
_warned_no_trace = False


def trace_enabled():
    return logging.getLogger(_TRACE_LOGGER).isEnabledFor(logging.DEBUG)


def emit(kind, message):
    """Writes one ``compile_lens_<kind>`` artifact; returns whether a log took it."""
    global _warned_no_trace
    if not trace_enabled():
        if not _warned_no_trace:
            warnings.warn("compile_lens: TORCH_TRACE is not set, so no log records this session's "
                          "compile-lens artifacts (results are still returned)", stacklevel=3)
            _warned_no_trace = True
        return False
    from torch._logging import trace_structured
    payload = json.dumps(message, sort_keys=True, allow_nan=False, default=str)
    trace_structured("artifact",
                     metadata_fn=lambda: {"name": f"compile_lens_{kind}", "encoding": "json"},
                     payload_fn=lambda: payload)
    return True


@contextlib.contextmanager
def quiet_trace():
    """Keeps the compiles compile-lens makes for its own checks out of the session's log.

    Those compiles (one per layer and toggle) are not the session's: in the log they would read
    as extra frames and recompiles of the user's model.
    """
    logger = logging.getLogger(_TRACE_LOGGER)
    was = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = was


def trace_log_path():
    """The TORCH_TRACE log torch writes for this process, or None before it has one."""
    try:
        from torch._logging import _internal
    except ImportError:
        return None
    stream = getattr(_internal.LOG_TRACE_HANDLER, "stream", None)
    return getattr(stream, "name", None)


def flush_trace():
    try:
        from torch._logging import _internal
    except ImportError:
        return
    handler = _internal.LOG_TRACE_HANDLER
    if handler is not None and getattr(handler, "stream", None) is not None:
        handler.flush()


def _is_user_file(path):
    if not path or path.startswith("<") or not os.path.isfile(path):
        return False
    real = os.path.realpath(path)
    roots = {os.path.realpath(p) for p in sys.path if p and ("site-packages" in p or "dist-packages" in p)}
    roots.add(os.path.realpath(os.path.dirname(os.__file__)))
    here = os.path.realpath(os.path.dirname(__file__))
    if real.startswith(here + os.sep):
        return False
    return not any(real.startswith(r + os.sep) for r in roots)


def note_source(path):
    """Remembers a user file a compiled frame's code comes from, for record_sources()."""
    if path not in _source_files and _is_user_file(path):
        _source_files[path] = None


def note_module_sources(module):
    for m in module.modules():
        forward = getattr(type(m), "forward", None)
        code = getattr(forward, "__code__", None)
        if code is not None:
            note_source(code.co_filename)


def record_sources(paths=None):
    """Writes the user's source files into the log (``compile_lens_source``), once each.

    Default: every user file that a model passed to check_divergence() or track() takes code from,
    plus the ``__main__`` script. Paths are written as the code objects name them, which is how
    torch's stacks name them too. Returns the paths written.
    """
    if paths is None:
        main = getattr(sys.modules.get("__main__"), "__file__", None)
        if main:
            note_source(os.path.abspath(main))
        paths = list(_source_files)
    written = []
    for path in paths:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            warnings.warn(f"compile_lens: cannot read source {path}: {e}", stacklevel=2)
            continue
        text = data.decode("utf-8", errors="replace")
        message = {"path": path, "text": text, "sha256": hashlib.sha256(data).hexdigest()}
        if emit("source", message):
            written.append(path)
    return written
