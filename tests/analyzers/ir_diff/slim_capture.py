"""Keeps what the IR diff reads of a capture: session, frames, compiles (ids and graph ids), graphs.

Usage: python3 slim_capture.py IN.cls.json OUT.cls.json

The importer keeps everything torch wrote (extras such as the output code, compile metrics, cache
events); the ir_diff pair tests read none of it, and a committed golden should be small enough to
review. The output is still a valid capture in the same schema.
"""
import json
import sys

KEEP_COMPILE = ("id", "frame_id", "frame_compile_id", "attempt", "status", "graph_ids")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: python3 slim_capture.py IN.cls.json OUT.cls.json")
    with open(sys.argv[1]) as f:
        capture = json.load(f)
    slim = {key: capture[key] for key in ("schema", "session", "frames", "graphs") if key in capture}
    slim["compiles"] = [{k: c[k] for k in KEEP_COMPILE if k in c} for c in capture.get("compiles", [])]
    with open(sys.argv[2], "w") as f:
        json.dump(slim, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
