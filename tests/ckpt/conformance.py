#!/usr/bin/env python3
"""The checkpoint conformance corpus (tests/ckpt/conformance/*.json, format in
its README.md) run against the Python SDK, sdk/python/loom_ckpt/. Each case
is built in a temporary directory, read with list_checkpoints/verify/
find_latest and Checkpointer.restore(), pruned, and compared with the verdict
a person wrote. Exit 1 naming every case and difference."""

import hashlib
import io
import json
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import time

SRC = os.environ.get("LOOM_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(SRC, "sdk", "python"))
import loom_ckpt  # noqa: E402

TEMPLATE = re.compile(r"\{\{(outside|host|repeat:(\d+):(.*?)|sha256:(.*?)|byte:([0-9a-fA-F]{2}))\}\}", re.S)


def expand(s, outside, allow_bytes=False):
    """The bytes a case string stands for, templates applied."""
    out = bytearray()
    pos = 0
    for m in TEMPLATE.finditer(s):
        out += s[pos:m.start()].encode("utf-8", "surrogatepass")
        word = m.group(1)
        if word == "outside":
            out += outside.encode()
        elif word == "host":
            out += socket.gethostname().replace(".", "_").replace("/", "_").encode()
        elif word.startswith("repeat:"):
            out += m.group(3).encode("utf-8") * int(m.group(2))
        elif word.startswith("sha256:"):
            out += hashlib.sha256(m.group(4).encode("utf-8")).hexdigest().encode()
        else:
            if not allow_bytes:
                raise ValueError("{{byte:}} outside a text")
            out.append(int(m.group(5), 16))
        pos = m.end()
    out += s[pos:].encode("utf-8", "surrogatepass")
    return bytes(out)


def expand_str(s, outside):
    return expand(s, outside).decode("utf-8", "surrogatepass")


def expand_json(v, outside):
    if isinstance(v, str):
        return expand_str(v, outside)
    if isinstance(v, list):
        return [expand_json(x, outside) for x in v]
    if isinstance(v, dict):
        return {k: expand_json(x, outside) for k, x in v.items()}
    return v


def file_objects(v, outside):
    """A manifest's files, the {"path", "content"} shorthand applied."""
    if not isinstance(v, list):
        return expand_json(v, outside)
    files = []
    for f in v:
        if isinstance(f, dict) and set(f) == {"path", "content"}:
            data = expand(f["content"], outside)
            files.append({"path": expand_str(f["path"], outside), "size": len(data),
                          "sha256": hashlib.sha256(data).hexdigest()})
        else:
            files.append(expand_json(f, outside))
    return files


def parts(v, step, outside):
    """The parts of a loom-ckpt/2 manifest: each part's step is the
    directory's unless given, its files take the shorthand."""
    if not isinstance(v, list):
        return expand_json(v, outside)
    out = []
    for p in v:
        if not isinstance(p, dict):
            out.append(expand_json(p, outside))
            continue
        q = {"rank": p.get("rank"), "step": step}
        for k, x in p.items():
            q[k] = file_objects(x, outside) if k == "files" else expand_json(x, outside)
        out.append({k: x for k, x in q.items() if x is not None})
    return out


def manifest_bytes(spec, path, outside):
    ranks = "ranks" in spec
    m = {"format": "loom-ckpt/2" if ranks else "loom-ckpt/1"}
    step = loom_ckpt.parse_checkpoint_name(os.path.basename(os.path.dirname(path)))
    if step is not None:
        m["step"] = step
    m.update({"world_size": len(spec["ranks"]) if ranks else 1, "created": 1700000000, "write_seconds": 0.5})
    if ranks:
        m["layout"] = "ranks"
    for k, v in spec.items():
        if k == "files":
            m[k] = file_objects(v, outside)
        elif k == "ranks":
            m[k] = parts(v, step, outside)
        else:
            m[k] = expand_json(v, outside)
    m = {k: v for k, v in m.items() if v is not None}
    return json.dumps(m, indent=2).encode("utf-8", "surrogatepass") + b"\n"


def build(case, ckpt, outside):
    made_outside = {}
    for e in case["tree"]:
        kind = next(k for k in ("dir", "file", "symlink", "fifo") if k in e)
        rel = expand(e[kind], outside)
        p = rel if rel.startswith(outside.encode() + b"/") else os.path.join(ckpt.encode(), rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if kind == "dir":
            os.makedirs(p, exist_ok=True)
        elif kind == "symlink":
            os.symlink(expand(e["to"], outside), p)
        elif kind == "fifo":
            os.mkfifo(p)
        elif "sparse" in e:
            with open(p, "wb") as f:
                f.truncate(e["sparse"])
        else:
            data = manifest_bytes(e["manifest"], p.decode("utf-8", "surrogateescape"), outside) \
                if "manifest" in e else expand(e["text"], outside, allow_bytes=True)
            with open(p, "wb") as f:
                f.write(data)
            if p.startswith(outside.encode()):
                made_outside[p] = data
        if "age_s" in e:
            t = time.time() - e["age_s"]
            os.utime(p, (t, t), follow_symlinks=False)
    return made_outside


def remaining(ckpt):
    out = [n for n in os.listdir(ckpt) if loom_ckpt.parse_checkpoint_name(n) is not None]
    for sub in (".staging", ".trash"):
        if os.path.isdir(os.path.join(ckpt, sub)):
            out += [sub + "/" + n for n in os.listdir(os.path.join(ckpt, sub))]
    return sorted(out)


def verdict_of(c, world):
    if c.manifest is None:
        return c.reason, c.problem
    try:
        loom_ckpt.verify(c, "full")
        loom_ckpt.check_job(c.manifest, world, c.path)
        return "ok", ""
    except loom_ckpt.CheckpointError as e:
        return e.reason, str(e)


def run_case(name, case, tmp):
    errs = []
    ckpt, outside = os.path.join(tmp, "ckpt"), os.path.join(tmp, "outside")
    os.makedirs(ckpt)
    os.makedirs(outside)
    made_outside = build(case, ckpt, outside)
    want = case["expect"]
    job = case.get("job", {})
    world, rank = job.get("world_size", 1), job.get("rank", 0)
    # Every checkpoint's verdict.
    got = {os.path.basename(c.path): c for c in loom_ckpt.list_checkpoints(ckpt)}
    for n in sorted(set(got) | set(want["checkpoints"])):
        if n not in got:
            errs.append("%s: expected %r, but the reader does not list it" % (n, want["checkpoints"][n]))
            continue
        reason, problem = verdict_of(got[n], world)
        if n not in want["checkpoints"]:
            errs.append("%s: listed (%s), but the case names no verdict for it" % (n, reason))
            continue
        words = want["checkpoints"][n].split(" ", 1)
        if reason != words[0]:
            errs.append("%s: expected %s, got %s (%s)" % (n, want["checkpoints"][n], reason, problem))
        elif len(words) > 1 and words[1] not in problem:
            errs.append("%s: %s, but the message does not name %s: %s" % (n, reason, words[1], problem))
    # What restore takes: find_latest and the SDK's Checkpointer.
    skipped = []
    latest = loom_ckpt.find_latest(ckpt, "full", skipped, world, rank)
    step = latest.step if latest else None
    if step != want["restore"]:
        errs.append("find_latest: expected step %s, got %s" % (want["restore"], step))
    for s in skipped:
        n = os.path.basename(s.path)
        exp = want["checkpoints"].get(n, "").split(" ")[0]
        if s.reason != exp:
            errs.append("find_latest skipped %s as %s, expected %s" % (n, s.reason, exp or "?"))
    saved = sys.stderr
    sys.stderr = io.StringIO()  # restore() tells what it skipped
    try:
        ck = loom_ckpt.Checkpointer(ckpt, signal_name="", interval=0, keep=0, world_size=world, rank=rank)
        r = ck.restore()
    finally:
        sys.stderr = saved
    if (r.step if r else None) != want["restore"]:
        errs.append("Checkpointer.restore: expected step %s, got %s" % (want["restore"], r.step if r else None))
    if r is not None:
        try:
            data = r.read_all()
            sizes = {f["path"]: f["size"] for f in loom_ckpt.manifest_files(r.manifest)}
            for name, b in data.items():
                if len(b) != sizes[r._prefix() + name]:
                    errs.append("restored %s: read %d bytes, manifest says %d" % (name, len(b), sizes[r._prefix() + name]))
            if "files" in want:
                exp = {k: expand(v, outside) for k, v in want["files"].items()}
                if data != exp:
                    errs.append("rank %d restored files %s, expected %s" % (rank, sorted(data.items()), sorted(exp.items())))
        except (OSError, loom_ckpt.CheckpointError) as e:
            errs.append("restored step %d does not read back: %s" % (r.step, e))
    # Retention.
    if "prune" in want:
        loom_ckpt.prune(ckpt, want["prune"]["keep"])
        left = remaining(ckpt)
        if left != sorted(want["prune"]["remain"]):
            errs.append("prune keep=%d: expected %s, left %s" % (want["prune"]["keep"], sorted(want["prune"]["remain"]), left))
    for p, data in made_outside.items():
        try:
            with open(p, "rb") as f:
                same = f.read() == data
        except OSError:
            same = False
        if not same:
            errs.append("%s outside the checkpoint directory was changed or removed" % p.decode(errors="replace"))
    return errs


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout("the case did not finish within 30 s (a reader blocked?)")


def main(argv):
    signal.signal(signal.SIGALRM, on_alarm)
    os.environ["LOOM_CKPT_RUN_ID"] = "conformance"  # a restore of several ranks needs no launcher
    corpus = argv[1] if len(argv) > 1 else os.path.join(SRC, "tests", "ckpt", "conformance")
    names = sorted(n for n in os.listdir(corpus) if n.endswith(".json"))
    if not names:
        print("conformance.py: FAIL: no cases in %s" % corpus)
        return 1
    failed = 0
    for n in names:
        tmp = tempfile.mkdtemp(prefix="loom-conf-py-")
        signal.alarm(30)  # a reader that blocks (a FIFO opened blocking) fails the case, not make check
        try:
            with open(os.path.join(corpus, n), encoding="utf-8") as f:
                case = json.load(f)
            errs = run_case(n, case, tmp)
        except Exception as e:  # a crash is a failure of the case, not of the runner
            errs = ["runner or reader raised %s: %s" % (type(e).__name__, e)]
        finally:
            signal.alarm(0)
            shutil.rmtree(tmp, ignore_errors=True)
        if errs:
            failed += 1
            for e in errs:
                print("FAIL %s: %s" % (n[:-5], e))
        else:
            print("ok   %s" % n[:-5])
    print("conformance.py: %d case(s), %d failed" % (len(names), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
