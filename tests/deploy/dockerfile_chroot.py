#!/usr/bin/python3
"""Runs a Dockerfile's steps in debootstrapped Debian chroots, then checks the image like a container.

No Docker engine runs here, so this proves deploy/docker/Dockerfile on a clean Debian system the
way `docker build` would run it: each stage starts from `debootstrap --variant=minbase bookworm`
(what debian:bookworm and debian:bookworm-slim are made of), and its instructions run in order:
RUN through /bin/sh -c inside the chroot with the stage's ENV, WORKDIR and USER; COPY from the
build context (filtered by .dockerignore) or, with --from, from an earlier stage. Then, for the
last stage:

- every shared library the installed binaries need resolves (ldd inside the chroot);
- ENTRYPOINT + CMD start as the image's USER, on a read-only root with a tmpfs /tmp (what the Helm
  chart's securityContext gives the pod), in a network namespace of its own (its fixed ports
  clash with nothing);
- the HEALTHCHECK command, run as the USER inside the chroot, succeeds; /metrics answers;
- SIGTERM stops the server with exit code 0 within `docker stop`'s 10 s.

Reuse: chroots live under --root (default $CL_IMAGE_CHROOT or /var/tmp/compile-lens-image) with
the key of every step done. A step whose key (its text, the previous key, and the content of what
it copies) is unchanged is skipped. When the first changed (or unfinished) step is the stage's last
COPY or comes after it (for the build stage: the sources, then the build), the files are synced in
place and the later steps run on the same tree (ninja rebuilds what changed); a change before it
rebuilds the stage from a fresh copy of the base, so a changed setup script or package list is
always proven on a clean system. --fresh starts over.

Needs root (debootstrap, chroot, mount, unshare), debootstrap and the Debian mirror this machine's
apt uses. CA certificates added to this machine (/usr/local/share/ca-certificates: a TLS-inspecting
egress proxy's, say) are put in each stage before its first step, where Debian's ca-certificates
picks them up when setup.sh installs it, as `docker build` behind such a proxy would need. Mounts (/proc, /dev, the read-only root, /tmp) are undone on exit, on SIGTERM/SIGINT,
and at the next start if a run was killed.

  tests/deploy/dockerfile_chroot.py [--dockerfile deploy/docker/Dockerfile] [--context .]
"""
import argparse
import fcntl
import filecmp
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
import urllib.request

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUITE = "bookworm"
# Docker's default environment for RUN, and what debian:bookworm[-slim] are made of.
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IMAGES = {"debian:bookworm": "full", "debian:bookworm-slim": "slim"}
# debian:*-slim keeps these out of every package it installs (debuerreotype's slimification).
SLIM_DPKG_EXCLUDES = """path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
"""
BASE_RECIPE = 2  # bump when base() changes what it makes
# CA certificates this machine's administrator added (a TLS-inspecting egress proxy's, say). Each
# stage gets them where Debian's ca-certificates picks them up when it is installed, as a docker
# build behind such a proxy needs; nothing else of the host's trust goes in.
HOST_LOCAL_CAS = "/usr/local/share/ca-certificates"


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def die(message):
    raise SystemExit(f"dockerfile_chroot: {message}")


# ---- the Dockerfile ---------------------------------------------------------------------------

class Step:
    def __init__(self, instruction, args, text):
        self.instruction, self.args, self.text = instruction, args, text


def parse_dockerfile(path):
    """[(stage name, image, [Step])] from the Dockerfile's logical lines."""
    lines, current = [], ""
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not current and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if current and line.lstrip().startswith("#"):
                continue  # comments inside a continued instruction
            if line.endswith("\\"):
                current += line[:-1] + " "
                continue
            lines.append(current + line)
            current = ""
    if current:
        lines.append(current)
    stages = []
    for line in lines:
        instruction, _, args = line.strip().partition(" ")
        instruction, args = instruction.upper(), args.strip()
        if instruction == "FROM":
            m = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", args, re.I)
            if not m:
                die(f"cannot read FROM {args}")
            if m.group(1) not in IMAGES:
                die(f"FROM {m.group(1)}: only {', '.join(IMAGES)} can be made with debootstrap here")
            stages.append((m.group(2) or str(len(stages)), m.group(1), []))
        elif not stages:
            die(f"{instruction} before FROM")
        elif instruction in ("RUN", "COPY", "WORKDIR", "ENV", "ARG", "USER", "EXPOSE", "HEALTHCHECK",
                             "ENTRYPOINT", "CMD", "LABEL", "STOPSIGNAL"):
            stages[-1][2].append(Step(instruction, args, line.strip()))
        else:
            die(f"{instruction} is not supported by this runner (add it here, or avoid it)")
    return stages


def exec_form(args):
    """An exec-form (JSON array) argument list, or a shell-form one as /bin/sh -c."""
    if args.startswith("["):
        return json.loads(args)
    return ["/bin/sh", "-c", args]


def parse_env(args):
    """ENV k=v k2="v 2" (or the old ENV k v) as a dict."""
    parts = shlex.split(args)
    if parts and "=" not in parts[0]:
        return {parts[0]: args.split(None, 1)[1] if len(parts) > 1 else ""}
    return dict(p.split("=", 1) for p in parts)


def parse_healthcheck(args):
    options, command = {}, None
    tokens = args.split(None)
    while tokens and tokens[0].startswith("--"):
        key, _, value = tokens.pop(0)[2:].partition("=")
        options[key] = value
    rest = args.split(None, len(options))[-1] if options else args
    kind, _, command = rest.partition(" ")
    if kind.upper() == "NONE":
        return options, None
    if kind.upper() != "CMD":
        die(f"cannot read HEALTHCHECK {args}")
    return options, exec_form(command.strip())


# ---- the build context (.dockerignore) ------------------------------------------------------------

def dockerignore_matcher(context):
    """A function path -> excluded, with Docker's rules: patterns relative to the context, `**`, `!`
    exceptions, the last matching pattern winning, a directory's pattern covering what is inside."""
    rules = []
    path = os.path.join(context, ".dockerignore")
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            pattern = os.path.normpath(line.lstrip("!").strip().lstrip("/"))
            regex = ""
            i = 0
            while i < len(pattern):
                if pattern.startswith("**/", i):  # any number of directories, none included
                    regex += "(?:.*/)?"
                    i += 3
                    continue
                if pattern.startswith("**", i):
                    regex += ".*"
                    i += 2
                    continue
                c = pattern[i]
                regex += "[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c)
                i += 1
            rules.append((re.compile(regex + "(?:/.*)?$"), negate))

    def excluded(rel):
        result = False
        for regex, negate in rules:
            if regex.match(rel):
                result = not negate
        return result
    return excluded


def context_files(context, excluded):
    """Relative paths of every file and symlink in the context that .dockerignore keeps."""
    out = []
    for dirpath, dirnames, filenames in os.walk(context):
        rel_dir = os.path.relpath(dirpath, context)
        rel_dir = "" if rel_dir == "." else rel_dir
        kept = []
        for d in dirnames:
            rel = os.path.join(rel_dir, d)
            if os.path.islink(os.path.join(dirpath, d)):
                if not excluded(rel):
                    out.append(rel)
            elif not excluded(rel):
                kept.append(d)
        dirnames[:] = sorted(kept)
        out.extend(os.path.join(rel_dir, f) for f in sorted(filenames) if not excluded(os.path.join(rel_dir, f)))
    return out


def digest_tree(root, rels):
    h = hashlib.sha256()
    for rel in rels:
        full = os.path.join(root, rel)
        st = os.lstat(full)
        h.update(f"{rel}\0{stat.S_IMODE(st.st_mode):o}\0".encode())
        if stat.S_ISLNK(st.st_mode):
            h.update(b"L" + os.readlink(full).encode())
        else:
            with open(full, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        h.update(b"\0")
    return h.hexdigest()


# ---- mounts --------------------------------------------------------------------------------------

class Mounts:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.stack = []

    def leftovers(self):
        """Mounts under root left by a run that was killed; deepest first."""
        found = []
        with open("/proc/self/mounts") as f:
            for line in f:
                target = line.split()[1].replace("\\040", " ")
                if target == self.root or target.startswith(self.root + "/"):
                    found.append(target)
        return sorted(found, key=len, reverse=True)

    def clean_leftovers(self):
        for target in self.leftovers():
            log(f"unmounting {target}, left by an earlier run")
            subprocess.run(["umount", "-l", target], check=False)

    def mount(self, *args, remount=False):
        subprocess.run(["mount", *args], check=True)
        if not remount:
            self.stack.append(args[-1])

    def unmount_all(self):
        while self.stack:
            target = self.stack.pop()
            if subprocess.run(["umount", target], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", target], check=False)


# ---- the chroots ---------------------------------------------------------------------------------

def host_apt_sources():
    """The host's Debian sources (deb.debian.org or a mirror), used in the chroots like Docker's
    debian images use deb.debian.org: bookworm, bookworm-updates, bookworm-security."""
    path = "/etc/apt/sources.list.d/debian.sources"
    if os.path.exists(path):
        text = open(path).read()
        m = re.search(r"^URIs:\s*(\S+)", text, re.M)
        if m:
            return m.group(1), ("debian.sources", text)
    for line in open("/etc/apt/sources.list") if os.path.exists("/etc/apt/sources.list") else []:
        parts = line.split()
        if parts and parts[0] == "deb":
            return parts[1], None
    die("no Debian mirror found in this machine's apt sources")


class Runner:
    def __init__(self, args):
        self.args = args
        self.root = os.path.realpath(args.root)
        self.mounts = Mounts(self.root)
        self.context = os.path.realpath(args.context)
        self.excluded = dockerignore_matcher(self.context)
        self.stage_dirs = {}

    # -- base

    def base(self):
        mirror, sources = host_apt_sources()
        key = hashlib.sha256(f"{BASE_RECIPE} {SUITE} minbase {mirror} {sources}".encode()).hexdigest()
        base = os.path.join(self.root, "base")
        if self.read(os.path.join(self.root, "base.key")) == key and os.path.isdir(base):
            log(f"base: reusing {base} (debootstrap --variant=minbase {SUITE})")
            return base
        tmp = base + ".new"
        self.remove(tmp)
        log(f"base: debootstrap --variant=minbase {SUITE} {tmp} {mirror}")
        t = time.monotonic()
        subprocess.run(["debootstrap", "--variant=minbase", SUITE, tmp, mirror], check=True,
                       stdout=subprocess.DEVNULL if not self.args.verbose else None)
        # What Docker's debian images hold beyond debootstrap's tree: the same apt sources
        # (updates and security included), no service started by package scripts, empty apt lists.
        if sources:
            with open(os.path.join(tmp, "etc/apt/sources.list.d", sources[0]), "w") as f:
                f.write(sources[1])
            if os.path.exists(os.path.join(tmp, "etc/apt/sources.list")):
                os.remove(os.path.join(tmp, "etc/apt/sources.list"))
        with open(os.path.join(tmp, "usr/sbin/policy-rc.d"), "w") as f:
            f.write("#!/bin/sh\nexit 101\n")
        os.chmod(os.path.join(tmp, "usr/sbin/policy-rc.d"), 0o755)
        subprocess.run(["chroot", tmp, "apt-get", "clean"], check=True)
        shutil.rmtree(os.path.join(tmp, "var/lib/apt/lists"), ignore_errors=True)
        os.makedirs(os.path.join(tmp, "var/lib/apt/lists/partial"))
        self.remove(base)
        os.rename(tmp, base)
        self.write(os.path.join(self.root, "base.key"), key)
        log(f"base: made in {time.monotonic() - t:.0f} s")
        return base

    # -- stages

    def build(self, stages):
        base = self.base()
        for name, image, steps in stages:
            self.stage_dirs[name] = self.build_stage(base, name, image, steps)
        return self.stage_dirs[stages[-1][0]]

    def build_stage(self, base, name, image, steps):
        stage_dir = os.path.join(self.root, "stages", name)
        keys_path = stage_dir + ".keys"
        done = json.loads(self.read(keys_path) or "[]") if os.path.isdir(stage_dir) else []
        last_copy = max((i for i, s in enumerate(steps) if s.instruction == "COPY"), default=-1)

        # Every step's key, chained from the image.
        local_cas = sorted(f for f in os.listdir(HOST_LOCAL_CAS) if f.endswith(".crt")) \
            if os.path.isdir(HOST_LOCAL_CAS) else []
        key = hashlib.sha256(f"FROM {image} {self.read(os.path.join(self.root, 'base.key'))} "
                             f"{digest_tree(HOST_LOCAL_CAS, local_cas) if local_cas else ''}".encode()).hexdigest()
        keys = []
        for step in steps:
            extra = self.copy_digest(step) if step.instruction == "COPY" else ""
            key = hashlib.sha256(f"{key}\n{step.text}\n{extra}".encode()).hexdigest()
            keys.append(key)
        first_changed = next((i for i, k in enumerate(keys) if i >= len(done) or done[i] != k), len(keys))
        if first_changed == len(keys):
            log(f"stage {name}: all {len(steps)} steps unchanged, reusing {stage_dir}")
        elif done and first_changed >= last_copy:
            # The sources (or what is built from them) changed: sync and build on the same tree.
            log(f"stage {name}: steps 1-{first_changed} unchanged; from step {first_changed + 1} on, in place")
        else:
            if done:
                log(f"stage {name}: step {first_changed + 1} changed, starting again from the base")
            self.remove(stage_dir)
            os.makedirs(os.path.dirname(stage_dir), exist_ok=True)
            log(f"stage {name}: FROM {image} (a copy of the base)")
            subprocess.run(["cp", "-a", "--reflink=auto", base, stage_dir], check=True)
            if IMAGES[image] == "slim":
                with open(os.path.join(stage_dir, "etc/dpkg/dpkg.cfg.d/docker-slim"), "w") as f:
                    f.write(SLIM_DPKG_EXCLUDES)
            for ca in local_cas:
                log(f"stage {name}: trusting this machine's {HOST_LOCAL_CAS}/{ca}")
                target = os.path.join(stage_dir, HOST_LOCAL_CAS.lstrip("/"), ca)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(os.path.join(HOST_LOCAL_CAS, ca), target)
            first_changed = 0
            done = []
        self.write(keys_path, json.dumps(done[:first_changed]))

        env = {"PATH": DEFAULT_PATH, "HOME": "/root"}
        workdir, user = "/", "0:0"
        config = {"env": env, "workdir": "/", "user": "0:0", "entrypoint": [], "cmd": [], "healthcheck": None,
                  "expose": []}
        for i, step in enumerate(steps):
            skip = i < first_changed
            if step.instruction == "ENV" or (step.instruction == "ARG" and "=" in step.args):
                env.update(parse_env(step.args))  # an ARG without a default sets nothing
            elif step.instruction == "WORKDIR":
                workdir = os.path.join(workdir, step.args)
                os.makedirs(self.inside(stage_dir, workdir), exist_ok=True)
            elif step.instruction == "USER":
                user = step.args
            elif step.instruction == "ENTRYPOINT":
                config["entrypoint"] = exec_form(step.args)
                config["cmd"] = []
            elif step.instruction == "CMD":
                config["cmd"] = exec_form(step.args)
            elif step.instruction == "HEALTHCHECK":
                config["healthcheck"] = parse_healthcheck(step.args)
            elif step.instruction == "EXPOSE":
                config["expose"] += step.args.split()
            elif not skip:
                log(f"stage {name}: step {i + 1}/{len(steps)}: {step.text}")
                t = time.monotonic()
                if step.instruction == "RUN":
                    self.run_step(stage_dir, step.args, env, workdir, user)
                else:
                    self.copy_step(stage_dir, step, workdir)
                log(f"stage {name}: step {i + 1} done in {time.monotonic() - t:.0f} s")
            if not skip:
                self.write(keys_path, json.dumps(keys[: i + 1]))
        config.update(env=env, workdir=workdir, user=user)
        self.config = config  # the image's configuration: the last stage's
        return stage_dir

    def run_step(self, stage_dir, command, env, workdir, user):
        # What `docker build` gives a RUN: the host's resolver, /proc, /dev.
        resolv = os.path.join(stage_dir, "etc/resolv.conf")
        if os.path.islink(resolv):
            os.remove(resolv)
        shutil.copyfile("/etc/resolv.conf", resolv)
        depth = len(self.mounts.stack)
        try:
            self.mounts.mount("-t", "proc", "proc", os.path.join(stage_dir, "proc"))
            self.mounts.mount("--bind", "/dev", os.path.join(stage_dir, "dev"))
            proc = subprocess.run(["/bin/sh", "-c", command], env=env,
                                  preexec_fn=self.enter(stage_dir, workdir, user))
        finally:
            while len(self.mounts.stack) > depth:
                target = self.mounts.stack.pop()
                subprocess.run(["umount", target], check=False)
        if proc.returncode != 0:
            die(f"RUN {command!r} failed with exit code {proc.returncode}")

    def copy_sources(self, step):
        """(root it copies from, [source paths relative to that root], dest) of a COPY."""
        tokens = shlex.split(step.args)
        source_stage = None
        while tokens and tokens[0].startswith("--"):
            option = tokens.pop(0)
            if option.startswith("--from="):
                source_stage = option.split("=", 1)[1]
            else:
                die(f"COPY {option} is not supported by this runner")
        if len(tokens) < 2:
            die(f"cannot read COPY {step.args}")
        *sources, dest = tokens
        if source_stage is not None:
            if source_stage not in self.stage_dirs:
                die(f"COPY --from={source_stage}: no such stage before this one")
            return self.stage_dirs[source_stage], [s.lstrip("/") for s in sources], dest, True
        return self.context, [os.path.normpath(s).lstrip("/") for s in sources], dest, False

    def copy_digest(self, step):
        """The content of what a COPY copies: part of its key."""
        root, sources, _, from_stage = self.copy_sources(step)
        rels = []
        for source in sources:
            full = os.path.join(root, source)
            if os.path.isdir(full) and not os.path.islink(full):
                files = context_files(full, (lambda rel, s=source: self.excluded(os.path.normpath(os.path.join(s, rel))))
                                      if not from_stage else (lambda rel: False))
                rels += [os.path.normpath(os.path.join(source, f)) for f in files]
            elif os.path.lexists(full):
                rels.append(source)
            else:
                return f"missing {source}"  # reported when the step runs
        return digest_tree(root, rels)

    def copy_step(self, stage_dir, step, workdir):
        root, sources, dest, from_stage = self.copy_sources(step)
        dest_path = os.path.join(workdir, dest)
        many = len(sources) > 1
        if many and not dest.endswith("/"):
            die(f"COPY with several sources needs a destination ending in /: {step.text}")
        for source in sources:
            full = os.path.join(root, source)
            if not os.path.lexists(full) or (not from_stage and source != "." and self.excluded(source)):
                die(f"COPY: {source} is not in the {'stage' if from_stage else 'build context'}")
            if os.path.isdir(full) and not os.path.islink(full):
                files = context_files(full, (lambda rel, s=source: self.excluded(os.path.normpath(os.path.join(s, rel))))
                                      if not from_stage else (lambda rel: False))
                self.sync_dir(full, files, self.inside(stage_dir, dest_path), source, from_stage)
            else:
                target = dest_path if not (dest.endswith("/") or many) else os.path.join(dest_path, os.path.basename(source))
                self.copy_file(full, self.inside(stage_dir, target))

    def sync_dir(self, src_dir, files, dest_dir, source, from_stage):
        """Copies `files` (relative to src_dir) into dest_dir and removes what the source no longer
        has, except paths the build context excludes (the build's own outputs, e.g. build/)."""
        os.makedirs(dest_dir, exist_ok=True)
        wanted = set(files)
        copied = 0
        for rel in files:
            copied += self.copy_file(os.path.join(src_dir, rel), os.path.join(dest_dir, rel))
        removed = 0
        for dirpath, dirnames, filenames in os.walk(dest_dir, topdown=True):
            rel_dir = os.path.relpath(dirpath, dest_dir)
            rel_dir = "" if rel_dir == "." else rel_dir
            keep_dirs = []
            for d in dirnames:
                rel = os.path.join(rel_dir, d)
                ctx_rel = os.path.normpath(os.path.join(source, rel))
                if not from_stage and self.excluded(ctx_rel):
                    continue  # not the context's: left alone
                if os.path.islink(os.path.join(dirpath, d)):
                    filenames.append(d)
                else:
                    keep_dirs.append(d)
            dirnames[:] = keep_dirs
            for f in filenames:
                rel = os.path.join(rel_dir, f)
                if rel not in wanted and (from_stage or not self.excluded(os.path.normpath(os.path.join(source, rel)))):
                    os.remove(os.path.join(dirpath, f))
                    removed += 1
        log(f"  {copied} file(s) copied, {removed} removed, {len(files) - copied} unchanged")

    @staticmethod
    def copy_file(src, dest):
        """Copies one file or symlink, keeping its mode; 0 if the copy there already has the same
        content (left alone, mtime included, so that ninja does not rebuild what a checkout merely
        touched). A copied file gets the current time, not the source's (COPY keeps the source's):
        a file that went back to older content must still look newer than what was built from it."""
        s = os.lstat(src)
        try:
            d = os.lstat(dest)
            if stat.S_ISLNK(s.st_mode) and stat.S_ISLNK(d.st_mode) and os.readlink(src) == os.readlink(dest):
                return 0
            if (stat.S_ISREG(s.st_mode) and stat.S_ISREG(d.st_mode) and s.st_size == d.st_size
                    and s.st_mode == d.st_mode
                    and (s.st_mtime_ns == d.st_mtime_ns or filecmp.cmp(src, dest, shallow=False))):
                return 0
            if os.path.isdir(dest) and not os.path.islink(dest):
                shutil.rmtree(dest)
            else:
                os.remove(dest)
        except FileNotFoundError:
            pass
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if stat.S_ISLNK(s.st_mode):
            os.symlink(os.readlink(src), dest)
        else:
            shutil.copy2(src, dest)
            os.chown(dest, 0, 0)
            os.utime(dest)
        return 1

    # -- the image, run

    def check_image(self, stage_dir):
        config = self.config
        command = config["entrypoint"] + config["cmd"]
        if not command:
            die("the last stage has no ENTRYPOINT or CMD")
        if config["healthcheck"] is None or config["healthcheck"][1] is None:
            die("the last stage has no HEALTHCHECK")
        uid, _, gid = config["user"].partition(":")
        if not uid.isdigit() or int(uid) == 0:
            die(f"USER {config['user']}: the image must run as a numeric non-root user")
        if os.path.exists(os.path.join(stage_dir, "usr/bin/g++")) or os.path.exists(os.path.join(stage_dir, "usr/bin/cmake")):
            die("the runtime stage holds a compiler or CMake: build tools belong in the build stage")

        # Every shared library resolves.
        binaries = [p for p in (command[0], config["healthcheck"][1][0]) if p.startswith("/")]
        for binary in dict.fromkeys(binaries):
            proc = subprocess.run(["ldd", binary], capture_output=True, text=True,
                                  preexec_fn=self.enter(stage_dir, "/", "0:0"))
            missing = [line.strip() for line in proc.stdout.splitlines() if "not found" in line]
            if proc.returncode != 0 or missing:
                die(f"{binary}: missing shared libraries in the runtime image: {missing or proc.stderr}")
            log(f"image: {binary}: {len(proc.stdout.splitlines())} shared libraries, all found")

        size = subprocess.run(["du", "-sm", "--exclude=proc", "--exclude=dev", stage_dir], capture_output=True,
                              text=True).stdout.split()[0]
        log(f"image: the runtime tree is {size} MB")
        # The rest runs in a network namespace of its own (the image's fixed ports), as root on
        # the host side, the image's user inside.
        spec = json.dumps({"stage": stage_dir, "root": self.root, "config": config})
        proc = subprocess.run(["unshare", "--net", sys.executable, os.path.abspath(__file__), "--container-phase", spec])
        if proc.returncode != 0:
            die("the image did not pass its health check (above)")

    # -- helpers

    @staticmethod
    def enter(stage_dir, workdir, user):
        uid, _, gid = user.partition(":")
        uid, gid = int(uid or 0), int(gid or uid or 0)

        def preexec():
            os.chroot(stage_dir)
            os.chdir(workdir)
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        return preexec

    @staticmethod
    def inside(stage_dir, path):
        return os.path.join(stage_dir, path.lstrip("/"))

    @staticmethod
    def read(path):
        try:
            with open(path) as f:
                return f.read().strip()
        except FileNotFoundError:
            return None

    @staticmethod
    def write(path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "w") as f:
            f.write(text + "\n")
        os.replace(path + ".tmp", path)

    def remove(self, path):
        if os.path.lexists(path):
            if any(m == path or m.startswith(path + "/") for m in self.mounts.leftovers()):
                die(f"{path} still has something mounted; refusing to delete it")
            subprocess.run(["rm", "-rf", "--one-file-system", path], check=True)


def container_phase(spec):
    """Inside `unshare --net`: start the image's command on a read-only root as its user, run its
    HEALTHCHECK, scrape /metrics, SIGTERM it."""
    spec = json.loads(spec)
    stage, config = spec["stage"], spec["config"]
    mounts = Mounts(spec["root"])
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    ro_root = os.path.join(spec["root"], "run-root")
    os.makedirs(ro_root, exist_ok=True)
    server = None
    try:
        mounts.mount("--bind", stage, ro_root)
        mounts.mount("-o", "remount,bind,ro", ro_root, remount=True)
        mounts.mount("-t", "proc", "proc", os.path.join(ro_root, "proc"))
        mounts.mount("--bind", "/dev", os.path.join(ro_root, "dev"))
        mounts.mount("-t", "tmpfs", "-o", "size=64m,mode=1777", "tmpfs", os.path.join(ro_root, "tmp"))
        command = config["entrypoint"] + config["cmd"]
        env = dict(config["env"])
        env["HOME"] = "/nonexistent" if config["user"] != "0:0" else "/root"
        user = Runner.enter(ro_root, config["workdir"], config["user"])
        log(f"container: {' '.join(command)} (user {config['user']}, read-only root)")
        server = subprocess.Popen(command, env=env, preexec_fn=user, stderr=subprocess.PIPE, text=True)
        first = server.stderr.readline().strip()
        log(f"container: {first}")
        if "listening on" not in first:
            rest = server.stderr.read() if server.poll() is not None else ""
            raise SystemExit(f"container: cl-server did not start: {first} {rest}")

        options, check = config["healthcheck"]
        log(f"container: HEALTHCHECK {' '.join(check)}")
        deadline = time.monotonic() + 30
        while True:
            proc = subprocess.run(check, env=env, preexec_fn=user, capture_output=True, text=True, timeout=30)
            if proc.returncode == 0:
                log(f"container: health check passed: {proc.stdout.strip()}")
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"container: the health check kept failing: exit {proc.returncode}: {proc.stderr.strip()}")
            time.sleep(0.5)

        metrics = [a.split("=", 1)[1] for a in command if a.startswith("--metrics_listen=")]
        for address in metrics:
            port = address.rsplit(":", 1)[1]
            if port not in [p.split("/")[0] for p in config["expose"]]:
                raise SystemExit(f"container: the metrics port {port} is not EXPOSEd")
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
            if "grpc_server_handled_total" not in body:
                raise SystemExit(f"container: /metrics on port {port} has no grpc_server_handled_total")
            log(f"container: /metrics on port {port} answers ({len(body.splitlines())} lines)")

        started = time.monotonic()
        server.send_signal(signal.SIGTERM)
        rc = server.wait(timeout=10)  # docker stop's default before SIGKILL
        if rc != 0:
            raise SystemExit(f"container: cl-server exited {rc} on SIGTERM")
        log(f"container: SIGTERM: drained and exited 0 in {time.monotonic() - started:.1f} s")
    finally:
        if server is not None and server.poll() is None:
            server.kill()
            server.wait()
        mounts.unmount_all()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dockerfile", default=os.path.join(SOURCE_DIR, "deploy/docker/Dockerfile"))
    parser.add_argument("--context", default=SOURCE_DIR)
    parser.add_argument("--root", default=os.environ.get("CL_IMAGE_CHROOT") or "/var/tmp/compile-lens-image")
    parser.add_argument("--fresh", action="store_true", help="delete the chroots and start over")
    parser.add_argument("--verbose", action="store_true", help="show debootstrap's output")
    parser.add_argument("--container-phase", help=argparse.SUPPRESS)
    args = parser.parse_args()

    # SIGTERM (ctest's timeout) and SIGHUP unwind like Ctrl-C, so that the finally blocks unmount.
    def interrupt(signum, _):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGHUP, interrupt)

    if args.container_phase:
        container_phase(args.container_phase)
        return
    if os.geteuid() != 0:
        die("needs root (debootstrap, chroot, mount, unshare)")
    for tool in ("debootstrap", "unshare", "ip"):
        if shutil.which(tool) is None:
            die(f"{tool} is not installed (scripts/setup.sh installs debootstrap)")
    os.makedirs(args.root, exist_ok=True)
    lock = open(os.path.join(args.root, ".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # one run at a time per root
    runner = Runner(args)
    runner.mounts.clean_leftovers()
    started = time.monotonic()
    try:
        if args.fresh:
            for name in ("base", "base.key", "stages"):
                runner.remove(os.path.join(runner.root, name))
        stages = parse_dockerfile(args.dockerfile)
        log(f"{args.dockerfile}: {len(stages)} stage(s): "
            + ", ".join(f"{n} (FROM {i}, {len(s)} steps)" for n, i, s in stages))
        final = runner.build(stages)
        runner.check_image(final)
    finally:
        runner.mounts.unmount_all()
        runner.mounts.clean_leftovers()
    log(f"done in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
