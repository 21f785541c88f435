"""upload: stream this session's TORCH_TRACE log to a compile-lens server.

The log (torch's own events and the compile_lens_* artifacts) goes to CompileLens.Analyze as raw
TORCH_TRACE bytes in pieces under the server's message budget, after the options and a header
whose session fields (labels, host, ...) override what the log says, then the end marker. The
server imports and analyzes it; the response's report comes back.

Needs grpcio and protobuf (Debian: python3-grpcio, python3-protobuf) and the subpackage
``compile_lens.v1`` generated from proto/: an installed package has it (``pip install
client/python`` runs protoc), and so has the build tree's copy of the package (build/python, which
the build stages whole). torch is not needed: a job's teardown, or any process holding a finished
log, can upload it. ``upload(..., at_exit=True)`` defers the upload to interpreter exit.
Whatever happens it never blocks longer than ``deadline`` seconds and never raises: it returns an
UploadResult whose ``ok`` says whether the server analyzed the session.
"""
import atexit
import json
import os
import socket
import sys
import time

CHUNK_BYTES = 512 << 10  # raw log bytes per message; the server's limit is 1 MiB


class UploadResult:
    """What upload() did: ``ok`` (also its truth value) says whether the server analyzed the log.

    error: why not, when not ok; response: the server's AnalyzeResponse (its ``report``) when ok;
    log: the log that was (or would have been) uploaded; failed_gates: the line of every gate
    (``upload(..., gates=...)``) the session failed, empty when none failed or none was asked.
    """

    def __init__(self, ok, error=None, response=None, log=None):
        self.ok, self.error, self.response, self.log = ok, error, response, log
        self.failed_gates = ([g.message for g in response.report.health.gates if not g.passed]
                             if response is not None else [])

    def __repr__(self):
        return f"<upload ok={self.ok} log={self.log} error={self.error!r}>"

    def __bool__(self):
        return self.ok


def _chunks(pb, f, path, session, deadline_at, read_errors, gates=None):
    """The call's messages, reading the open log ``f``. A read that fails ends the stream without
    the end marker (nothing is analyzed) and lands in ``read_errors``: raised here, grpc would
    only say "Exception iterating requests"."""
    options = pb.service.AnalyzeOptions(render_html=False)
    if gates:
        options.gates.CopyFrom(gates)
    yield pb.service.AnalyzeChunk(options=options)
    # One session, no base: the server keeps only the post-grad graphs' nodes, all its passes read.
    header = pb.service.CaptureHeader(schema=pb.schema, session=session, source_name=os.path.basename(path),
                                      post_grad_nodes_only=True)
    parts = 1
    yield pb.service.AnalyzeChunk(part=pb.service.CapturePart(side=pb.service.HEAD, header=header))
    while True:
        if time.monotonic() > deadline_at:
            return  # the call's own deadline ends the stream; no end marker, nothing analyzed
        try:
            data = f.read(CHUNK_BYTES)
        except OSError as e:
            read_errors.append(e)
            return
        if not data:
            break
        parts += 1
        yield pb.service.AnalyzeChunk(part=pb.service.CapturePart(side=pb.service.HEAD, torch_trace=data))
    yield pb.service.AnalyzeChunk(end=pb.service.EndOfCapture(parts=parts))


class _Protos:
    """The generated modules, imported when an upload starts (ImportError when absent)."""

    def __init__(self):
        from compile_lens.v1 import capture_pb2, service_pb2, service_pb2_grpc
        self.capture, self.service, self.grpc = capture_pb2, service_pb2, service_pb2_grpc
        # The capture schema this package writes: capture.proto's one definition, which the C++
        # importer reads too (capture/schema.h).
        self.schema = capture_pb2.DESCRIPTOR.GetOptions().Extensions[capture_pb2.schema_version]


def upload(server, log=None, *, labels=None, project_root=None, deadline=30.0, at_exit=False,
           credentials=None, token=None, gates=None):
    """Streams ``log`` to ``server`` ("host:port", or a gRPC target such as "dns:///svc:50051")
    for analysis; returns an UploadResult, and never raises.

    log: a TORCH_TRACE log file; default this process's own (flushed first).
    labels: session labels (cluster, model, ...), strings to strings.
    project_root: the root the report's source locations are given under.
    deadline: seconds for the whole upload, connecting included; it never takes longer.
    at_exit: register the upload to run at interpreter exit instead, and return None now.
    credentials: grpc.ChannelCredentials for TLS; default an insecure channel.
    token: a bearer token, for servers started with --token_file.
    gates: gates the server applies, as cl-client check names them with '_' for '-'
        ({"max_graph_breaks": 2, "fail_on": ["failures"], "max_recompiles": 8}): the result's
        ``failed_gates`` lists the ones that failed, so a job's teardown can fail the job.
    """
    if at_exit:
        atexit.register(upload, server, log, labels=labels, project_root=project_root, deadline=deadline,
                        credentials=credentials, token=token, gates=gates)
        return None
    start = time.monotonic()
    try:
        import grpc
        pb = _Protos()
    except (ImportError, AttributeError) as e:  # AttributeError: modules generated before the option
        return UploadResult(False, f"cannot upload: {e} (needs python3-grpcio and the package's "
                                   "generated compile_lens.v1: pip install client/python, or "
                                   "build/python on PYTHONPATH)")
    if log is None:
        from compile_lens import _artifacts
        _artifacts.flush_trace()
        log = _artifacts.trace_log_path()
        if log is None:
            return UploadResult(False, "no TORCH_TRACE log to upload (run with TORCH_TRACE=<dir>)")
    if not os.path.isfile(log):
        return UploadResult(False, f"no such log: {log}", log=log)
    try:
        session = pb.capture.Session(host=socket.gethostname(), labels=dict(labels or {}),
                                     project_root=project_root or "")
    except (TypeError, ValueError) as e:
        return UploadResult(False, f"labels must map strings to strings: {e}", log=log)
    try:
        gate_message = pb.service.Gates(**(gates or {}))
    except (TypeError, ValueError) as e:
        return UploadResult(False, f"gates: {e}", log=log)
    torch = sys.modules.get("torch")
    if torch is not None:
        session.torch_version = str(torch.__version__)
    try:
        f = open(log, "rb")  # before the call: a log that does not open costs no upload
    except OSError as e:
        return UploadResult(False, f"cannot read {log}: {e}", log=log)
    # Every address the target resolves to (dns:///svc:50051 over a headless Service), in turn.
    options = [("grpc.service_config", json.dumps({"loadBalancingConfig": [{"round_robin": {}}]}))]
    read_errors = []
    try:
        with f:
            channel = (grpc.secure_channel(server, credentials, options=options) if credentials is not None
                       else grpc.insecure_channel(server, options=options))
            with channel:
                stub = pb.grpc.CompileLensStub(channel)
                remaining = max(0.0, deadline - (time.monotonic() - start))
                metadata = [("authorization", f"Bearer {token}")] if token else None
                response = stub.Analyze(_chunks(pb, f, log, session, start + deadline, read_errors,
                                                gate_message if gates else None),
                                        timeout=remaining, metadata=metadata)
        return UploadResult(True, response=response, log=log)
    except grpc.RpcError as e:
        if read_errors:
            return UploadResult(False, f"cannot read {log}: {read_errors[0]}", log=log)
        return UploadResult(False, f"{e.code().name}: {e.details()}", log=log)
    except Exception as e:  # never raises: a job's teardown must go on
        return UploadResult(False, f"upload failed: {type(e).__name__}: {e}", log=log)
