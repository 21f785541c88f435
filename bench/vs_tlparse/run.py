#!/usr/bin/python3
"""Times compile-lens against tlparse (or, without one, a naive scan) on the same logs, side by side.

Every case is a whole process, as a user runs it, so start-up is in the figures. The cases of one
log run alternately, round after round (a slow moment of the machine lands on all of them alike),
and each figure is the median over the rounds: wall time and CPU time (user + system, from wait4).
Each run starts after os.sync(), so that what one case wrote is not written back during the next.
The peak RSS comes from one more run under GNU time (peak_rss_kib says why; the upload client's is
wait4's). The ratios are against the baseline of the same run: tlparse --plain-text, tlparse's
fastest mode, when --tlparse names its binary; else `wc -l` over the log, a naive scan that reads
every byte once. A benchmark, not a test: it asserts nothing and prints figures.

Cases (--cases, comma-separated; default all but upload):
  analyze  cl-client analyze LOG --html R.html          (the one-page report, in-process)
  pb       cl-client import-trace LOG -o x.cls.pb
  json     cl-client import-trace LOG -o x.cls.json
  site     cl-client analyze LOG --html-dir DIR          (the per-compile site)
  upload   cl-client upload LOG --server ADDR, to a cl-server started here on a free port; the
           server's peak RSS is read from its /proc status (VmHWM) after each upload, and the
           server is restarted for every round so that each peak is one upload's (and each upload
           is a fresh server's first: its heap, threads and lazily built tables new)
  upload-warm  the same upload to one cl-server kept for all the rounds, which took one untimed
           upload of the log first: a service's steady state (its peak is not one upload's, and
           is not reported)

Output goes under ${TMPDIR:-/var/tmp}/compile-lens-vs-tlparse, never inside the repository.
Figures and what they were measured on: bench/README.md ("Against tlparse").

Usage: run.py [--tlparse PATH] [--runs N] [--cases LIST] [--build DIR] LOG [LOG...]
"""

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


GNU_TIME = "/usr/bin/time"


def peak_rss_kib(argv):
    """argv's peak RSS, from GNU time running it; None without /usr/bin/time (Debian's `time`).

    Not from the timed runs' wait4: a process this script starts is forked from it, and Linux counts
    the forking Python's own ~15 MiB into the child's ru_maxrss (the memory it had until exec), a
    floor under every small log's figure. GNU time's child is forked from GNU time, whose floor is
    about 1 MiB; GNU time's own start-up is kept out of the timed runs."""
    if not os.path.exists(GNU_TIME):
        return None
    out = os.path.join(os.environ.get("TMPDIR", "/var/tmp"), f"vs-tlparse.{os.getpid()}.rss")
    subprocess.run([GNU_TIME, "-f", "%M", "-o", out] + argv, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(out) as f:
        # "Command exited with non-zero status N" comes first when it failed.
        rss = int(f.read().split()[-1])
    os.unlink(out)
    return rss


def run_once(argv, stdout=subprocess.DEVNULL):
    """Runs argv to completion: (wall seconds, CPU seconds, peak RSS KiB, exit status); the RSS is
    wait4's, which peak_rss_kib replaces where it can."""
    # What the last case wrote is flushed first, outside the timing: otherwise its writeback lands
    # on whichever case runs next (on a slow disk, half a second of system time for a large file).
    os.sync()
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, proc.returncode


class Server:
    """A cl-server on a free loopback port, for the upload case."""

    def __init__(self, binary):
        self.proc = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0", "--analysis_threads", "2"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # The bound address is on stderr's first line: "cl-server: listening on 127.0.0.1:PORT".
        first = self.proc.stderr.readline()
        self.address = first.strip().rsplit(" ", 1)[-1]
        if ":" not in self.address:
            self.stop()
            sys.exit(f"run.py: cl-server did not say where it listens: {first!r}")

    def peak_rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    def cpu_seconds(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tlparse", help="a tlparse binary (else the baseline is `wc -l` of the log)")
    ap.add_argument("--runs", type=int, default=5, help="rounds per log (default 5)")
    ap.add_argument("--cases", default="analyze,pb,json,site",
                    help="comma-separated: analyze, pb, json, site, upload, upload-warm")
    ap.add_argument("--build", default=os.path.join(HERE, "..", "..", "build"),
                    help="the build tree with client/cl-client and service/cl-server")
    ap.add_argument("logs", nargs="+", metavar="LOG")
    args = ap.parse_args()

    client = os.path.abspath(os.path.join(args.build, "client", "cl-client"))
    server_bin = os.path.abspath(os.path.join(args.build, "service", "cl-server"))
    cases = [c for c in args.cases.split(",") if c]
    unknown = set(cases) - {"analyze", "pb", "json", "site", "upload", "upload-warm"}
    if unknown:
        sys.exit(f"run.py: unknown case(s): {', '.join(sorted(unknown))}")
    out = os.path.join(os.environ.get("TMPDIR", "/var/tmp"), "compile-lens-vs-tlparse")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)

    def argv_of(case, log):
        if case == "base":
            if args.tlparse:
                return [args.tlparse, log, "-o", os.path.join(out, "tlparse"), "--no-browser",
                        "--overwrite", "--plain-text"]
            return ["wc", "-l", log]
        if case == "analyze":
            return [client, "analyze", log, "--html", os.path.join(out, "r.html"), "--quiet"]
        if case == "pb":
            return [client, "import-trace", log, "-o", os.path.join(out, "x.cls.pb")]
        if case == "json":
            return [client, "import-trace", log, "-o", os.path.join(out, "x.cls.json")]
        if case == "site":
            site = os.path.join(out, "site")
            shutil.rmtree(site, ignore_errors=True)
            return [client, "analyze", log, "--html-dir", site, "--quiet"]
        raise AssertionError(case)

    base_name = "tlparse --plain-text" if args.tlparse else "wc -l (naive scan)"
    print(f"baseline: {base_name}; {args.runs} alternating rounds; medians; "
          f"CPU = user + system; ratios are compile-lens / baseline")
    ratios = {case: [] for case in cases}  # (CPU ratio, log) per case, for the summary
    for log in args.logs:
        log = os.path.abspath(log)
        figures = {name: [] for name in ["base"] + cases}
        server_figures = []  # (server CPU, server peak RSS KiB) per upload round
        warm = None
        if "upload-warm" in cases:
            warm = Server(server_bin)
            run_once([client, "upload", log, "--server", warm.address, "--quiet"])
        warm_cpu = []  # the warm server's CPU per upload
        for _ in range(args.runs):
            for case in ["base"] + cases:
                if case == "upload-warm":
                    cpu0 = warm.cpu_seconds()
                    figures[case].append(run_once(
                        [client, "upload", log, "--server", warm.address, "--quiet"]))
                    warm_cpu.append(warm.cpu_seconds() - cpu0)
                    continue
                if case == "upload":
                    server = Server(server_bin)
                    try:
                        cpu0 = server.cpu_seconds()
                        figures[case].append(run_once(
                            [client, "upload", log, "--server", server.address, "--quiet"]))
                        server_figures.append((server.cpu_seconds() - cpu0, server.peak_rss_kib()))
                    finally:
                        server.stop()
                    continue
                figures[case].append(run_once(argv_of(case, log)))
        if warm is not None:
            warm.stop()
        size = os.path.getsize(log)
        print(f"\n{os.path.basename(log)} ({size / 1e6:.2f} MB)")
        print(f"  {'case':<24}{'wall s':>9}{'CPU s':>9}{'peak MiB':>10}"
              f"{'wall x':>9}{'CPU x':>8}{'RSS x':>8}  exit")
        med = {}
        for case, runs in figures.items():
            med[case] = tuple(statistics.median(r[i] for r in runs) for i in range(3))
            # One more run of each case for its peak RSS (upload: the client's), outside the timing.
            if not case.startswith("upload"):
                rss = peak_rss_kib(argv_of(case, log))
                if rss is not None:
                    med[case] = med[case][:2] + (rss,)
        for case, runs in figures.items():
            wall, cpu, rss = med[case]
            bw, bc, br = med["base"]
            name = base_name if case == "base" else case
            codes = ",".join(str(c) for c in sorted({r[3] for r in runs}))
            if case != "base":
                ratios[case].append((cpu / max(bc, 1e-3), os.path.basename(log)))
            print(f"  {name:<24}{wall:9.3f}{cpu:9.3f}{rss / 1024:10.1f}"
                  f"{wall / bw:9.2f}{cpu / max(bc, 1e-3):8.2f}{rss / br:8.2f}  {codes}")
        if server_figures:
            cpu = statistics.median(s[0] for s in server_figures)
            rss = statistics.median(s[1] for s in server_figures)
            aw, ac, ar = med.get("analyze", (0, 0, 0))
            uw = med["upload"][0]
            line = f"  upload: server CPU {cpu:.3f} s, server peak {rss / 1024:.1f} MiB"
            if ar:
                line += (f"; upload wall / analyze wall {uw / aw:.2f}, "
                         f"server peak / analyze peak {rss / ar:.2f}")
            print(line)
        if warm_cpu:
            aw = med.get("analyze", (0, 0, 0))[0]
            line = f"  upload-warm: server CPU {statistics.median(warm_cpu):.3f} s"
            if aw:
                line += f"; upload-warm wall / analyze wall {med['upload-warm'][0] / aw:.2f}"
            print(line)

    if len(args.logs) > 1:
        print(f"\nover {len(args.logs)} logs, CPU ratio to the baseline:")
        for case, rs in ratios.items():
            worst = max(rs)
            print(f"  {case:<10} median {statistics.median(r[0] for r in rs):.2f}, "
                  f"worst {worst[0]:.2f} ({worst[1]}), "
                  f"{sum(r[0] <= 1.0 for r in rs)} of {len(rs)} at or under 1.0")


if __name__ == "__main__":
    main()
