#!/usr/bin/env python3
"""Writes a TORCH_TRACE log of many compiles for the site benchmark, from a real one: the records of
every compile of LOG (headers and payloads as torch wrote them) repeated COPIES times, each copy's
frame_compile_id moved past the last copy's, so that 4 compiles of a real log become 4 x COPIES
compiles of one frame (each copy's recompile reasons still name the first copy's ids).

  make_many_compiles.py LOG COPIES OUT     (LOG may be gzipped)
"""
import gzip
import re
import sys

FCID = re.compile(r'"frame_compile_id": (\d+)')


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, copies, out = argv[1], int(argv[2]), argv[3]
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt", encoding="utf-8", newline="\n") as f:
        lines = f.read().split("\n")
    # Split into records: a header line and the tab-prefixed payload lines after it.
    records, prelude = [], []
    for line in lines:
        if line.startswith("\t") and records:
            records[-1].append(line)
        elif line:
            (records if '"frame_compile_id"' in line or records else prelude).append([line])
    span = 1 + max(int(m.group(1)) for r in records for m in [FCID.search(r[0])] if m)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for r in prelude:
            f.write("\n".join(r) + "\n")
        for i in range(copies):
            for r in records:
                head = FCID.sub(lambda m: f'"frame_compile_id": {int(m.group(1)) + i * span}', r[0])
                f.write("\n".join([head] + r[1:]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
