#!/usr/bin/python3
"""Writes a TORCH_TRACE log of about SIZE bytes by repeating a real one, each copy a new set of
frames: the scale benchmark's input (bench/large_trace/README.md, "Scale").

Copy k adds k * F to every frame id, where F is one more than the log's largest: in the record
headers ("frame_id": N) and in the payloads that name a compile ("compile_id": "N/M..." in
compilation_metrics, chromium events and the like), whose md5 ("has_payload") is computed again.
So the copies are distinct compiles of distinct frames, as a long job with many compiled
functions would log them, and nothing is a duplicate for the importer to fold.

With --recompiles, copy k instead adds k * C to every frame compile id ("frame_compile_id": M,
"compile_id": "N/M"), C one more than the log's largest: the same frames compiled again and again,
as a long job whose frames keep recompiling (past torch's default cache_size_limit) would log them.

Usage: repeat_trace.py [--recompiles] LOG OUT SIZE_MB
"""

import hashlib
import json
import re
import sys

FRAME_ID = re.compile(r'"frame_id": (\d+)')
COMPILE_ID = re.compile(r'"compile_id": "(\d+)/')
FRAME_COMPILE_ID = re.compile(r'"frame_compile_id": (\d+)')
COMPILE_ID_COMPILE = re.compile(r'"compile_id": "\d+/(\d+)')
HAS_PAYLOAD = re.compile(r'"has_payload": "[0-9a-f]*"')


def records(path):
    """(header line, [payload lines without their tab]) for each record of the log."""
    header, payload = None, []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("\t"):
                payload.append(line[1:])
                continue
            if header is not None:
                yield header, payload
            header, payload = line, []
    if header is not None:
        yield header, payload


def main():
    args = sys.argv[1:]
    recompiles = args[:1] == ["--recompiles"]
    if recompiles:
        args = args[1:]
    if len(args) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    src, out, size_mb = args[0], args[1], float(args[2])
    recs = list(records(src))
    # What each copy moves on: the frame ids, or (--recompiles) the frame compile ids.
    header_id, payload_id = (FRAME_COMPILE_ID, COMPILE_ID_COMPILE) if recompiles else (FRAME_ID,
                                                                                      COMPILE_ID)
    frames = 1 + max((int(m.group(1)) for h, _ in recs for m in header_id.finditer(h)), default=0)
    target = size_mb * 1e6
    written = copies = 0
    with open(out, "w", encoding="utf-8", errors="surrogateescape") as f:
        while written < target:
            offset = copies * frames
            shift = lambda m: m.group(0).replace(m.group(1), str(int(m.group(1)) + offset), 1)
            for header, payload in recs:
                header = header_id.sub(shift, header)
                if payload and offset:
                    changed = [payload_id.sub(shift, p) for p in payload]
                    if changed != payload:
                        payload = changed
                        md5 = hashlib.md5("\n".join(payload).encode("utf-8", "surrogateescape"))
                        header = HAS_PAYLOAD.sub(f'"has_payload": "{md5.hexdigest()}"', header)
                text = header + "\n" + "".join("\t" + p + "\n" for p in payload)
                f.write(text)
                written += len(text.encode("utf-8", "surrogateescape"))
            copies += 1
    per_copy = "frame_compile_ids_per_copy" if recompiles else "frames_per_copy"
    print(json.dumps({"copies": copies, per_copy: frames, "bytes": written}))


if __name__ == "__main__":
    main()
