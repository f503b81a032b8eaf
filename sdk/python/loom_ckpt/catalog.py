"""The catalog of a checkpoint directory: committed checkpoints, their
verification, the one a job restores, and retention (doc/loom-ckpt-protocol.md
sections 4, 5 and 7.3)."""

import errno
import hashlib
import os
import stat
import time

from .protocol import (FORMAT, MANIFEST, MANIFEST_MAX_BYTES, MANIFEST_MISSING, MANIFEST_REFUSED, NOT_DIRECTORY,
                       FILE_MISSING, FILE_REFUSED, SIZE_MISMATCH, HASH_MISMATCH, IO_ERROR, STAGING, TRASH,
                       CheckpointError, check_job, check_parts_complete, check_relative_name, manifest_files,
                       parse_checkpoint_name, parse_manifest, rank_dir)
from .store import _host, remove_tree

# Verification levels. FULL hashes every file before a checkpoint is offered;
# QUICK checks the manifest and the sizes (listing, retention); LOAD is QUICK
# for a reader that then hashes every byte it loads during its one read of it
# (hashio.read_verified) and refuses the checkpoint on a mismatch.
FULL, QUICK, LOAD = "full", "quick", "load"
LEVELS = (FULL, QUICK, LOAD)


class Checkpoint:
    """A committed checkpoint found in a directory. For a checkpoint of
    several ranks (layout "ranks") 'rank' selects whose files read() and
    read_all() give, by the names that rank saved."""

    def __init__(self, path, step, manifest=None, problem="", reason=None):
        self.path, self.step, self.manifest, self.problem = path, step, manifest, problem
        self.reason = reason  # None, or why it is refused (MANIFEST_INVALID, ...)
        self.rank = 0

    @property
    def world_size(self):
        return self.manifest["world_size"] if self.manifest else 0

    def _prefix(self):
        m = self.manifest or {}
        return rank_dir(self.rank) + "/" if m.get("layout") == "ranks" else ""

    def names(self):
        """The names of the files this rank saved (every file for one process)."""
        m = self.manifest
        if m["format"] == FORMAT:
            return [f["path"] for f in m["files"]]
        prefix = self._prefix()
        if not prefix:
            return [f["path"] for f in manifest_files(m)]
        part = [p for p in m["ranks"] if p["rank"] == self.rank]
        return [f["path"][len(prefix):] for f in (part[0]["files"] if part else [])]

    def file_path(self, name):
        check_relative_name(name)
        return os.path.join(self.path, self._prefix() + name)

    def read(self, name):
        check_relative_name(name)
        fd = _open_in_checkpoint(self.path, self._prefix() + name)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise CheckpointError("%s: is not a regular file" % self.file_path(name), FILE_REFUSED)
        with os.fdopen(fd, "rb") as f:
            return f.read()

    def read_all(self):
        return {n: self.read(n) for n in self.names()}

    def __repr__(self):
        return "Checkpoint(%r, step=%d)" % (self.path, self.step)


def _read_manifest(path):
    """The manifest's bytes: a regular file, never through a symlink, of at most
    MANIFEST_MAX_BYTES. CheckpointError with MANIFEST_MISSING or MANIFEST_REFUSED."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        raise CheckpointError("%s: no manifest (an uncommitted or torn checkpoint)" % path, MANIFEST_MISSING)
    except OSError as e:
        why = "is a symlink: refused" if e.errno == errno.ELOOP else "cannot open: %s" % e.strerror
        raise CheckpointError("%s: %s" % (path, why), MANIFEST_REFUSED)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MANIFEST_MAX_BYTES:
        os.close(fd)
        why = "is not a regular file" if not stat.S_ISREG(st.st_mode) else "larger than %d bytes" % MANIFEST_MAX_BYTES
        raise CheckpointError("%s: %s: refused" % (path, why), MANIFEST_REFUSED)
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MANIFEST_MAX_BYTES + 1)
        except OSError as e:
            raise CheckpointError("%s: read error: %s" % (path, e.strerror), MANIFEST_REFUSED)
    if len(data) > MANIFEST_MAX_BYTES:
        raise CheckpointError("%s: larger than %d bytes: refused" % (path, MANIFEST_MAX_BYTES), MANIFEST_REFUSED)
    return data


def _open_in_checkpoint(checkpoint_path, name):
    """A read-only descriptor of 'name' inside the checkpoint, opened one
    component at a time without following a symlink. CheckpointError with
    FILE_MISSING, FILE_REFUSED or IO_ERROR."""
    path = os.path.join(checkpoint_path, name)
    try:
        fd = os.open(checkpoint_path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as e:
        raise CheckpointError("%s: cannot open the checkpoint: %s" % (path, e.strerror), IO_ERROR)
    parts = name.split("/")
    for i, comp in enumerate(parts):
        last = i == len(parts) - 1
        flags = os.O_RDONLY | os.O_NOFOLLOW | ((os.O_NONBLOCK | os.O_NOCTTY) if last else os.O_DIRECTORY)
        try:
            nxt = os.open(comp, flags, dir_fd=fd)
        except FileNotFoundError:
            raise CheckpointError("%s: is missing" % path, FILE_MISSING)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                why = "is a symlink: refused" if last else "is reached through a symlink or a non-directory: refused"
                raise CheckpointError("%s: %s" % (path, why), FILE_REFUSED)
            raise CheckpointError("%s: cannot open: %s" % (path, e.strerror), IO_ERROR)
        finally:
            os.close(fd)
        fd = nxt
    return fd


def list_checkpoints(directory):
    """Committed checkpoints, newest first; manifests read, not verified."""
    out = []
    for name in os.listdir(directory):
        step = parse_checkpoint_name(name)
        if step is None:
            continue
        path = os.path.join(directory, name)
        if os.path.islink(path) or not os.path.isdir(path):
            out.append(Checkpoint(path, step, None, "not a directory (symlinks are not followed)", NOT_DIRECTORY))
            continue
        try:
            source = os.path.join(path, MANIFEST)
            m = parse_manifest(_read_manifest(source), source)
            check_parts_complete(m, step, source)
            out.append(Checkpoint(path, step, m))
        except CheckpointError as e:
            out.append(Checkpoint(path, step, None, str(e), e.reason))
        except OSError as e:
            out.append(Checkpoint(path, step, None, str(e), IO_ERROR))
    out.sort(key=lambda c: c.step, reverse=True)
    return out



def _verify_file(checkpoint, f, full):
    path = os.path.join(checkpoint.path, f["path"])
    fd = _open_in_checkpoint(checkpoint.path, f["path"])
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise CheckpointError("%s: is not a regular file" % path, FILE_REFUSED)
    with os.fdopen(fd, "rb") as fh:
        if st.st_size != f["size"]:
            raise CheckpointError("%s: size %d differs from the manifest's %d" % (path, st.st_size, f["size"]),
                                  SIZE_MISMATCH)
        if not full:
            return
        h = hashlib.sha256()
        try:
            while True:
                block = fh.read(4 << 20)
                if not block:
                    break
                h.update(block)
        except OSError as e:
            raise CheckpointError("%s: read error: %s" % (path, e.strerror), IO_ERROR)
        if h.hexdigest() != f["sha256"]:
            raise CheckpointError("%s: checksum differs from the manifest (corrupt)" % path, HASH_MISMATCH)


def verify(checkpoint, level="full", ranks=None):
    """Raise CheckpointError (with its reason) unless every file of every part
    matches the manifest ("quick": sizes only). With 'ranks' (a set), full
    verification hashes those ranks' parts only and checks the others' sizes.
    Files are opened without following symlinks."""
    if level not in LEVELS:
        raise ValueError("verification level %r: not one of %s" % (level, ", ".join(LEVELS)))
    m = checkpoint.manifest
    if m is None:
        raise CheckpointError("%s: %s" % (checkpoint.path, checkpoint.problem), checkpoint.reason)
    if m["format"] == FORMAT:
        for f in m["files"]:
            _verify_file(checkpoint, f, level == "full")
        return
    for p in m["ranks"]:
        full = level == "full" and (ranks is None or p["rank"] in ranks)
        for f in p["files"]:
            _verify_file(checkpoint, f, full)


def judge(c, level="full", world_size=1, rank=0, ranks=None):
    """Verify 'c' and check it against a job of 'world_size' ranks (7.3);
    on failure set c.problem and c.reason and return False."""
    try:
        verify(c, level, ranks)
        check_job(c.manifest, world_size, c.path)
        c.rank = rank
        return True
    except CheckpointError as e:
        c.problem = str(e)
        c.reason = e.reason or IO_ERROR
        return False


def find_latest(directory, level="full", skipped=None, world_size=1, rank=0, below=None):
    """The newest checkpoint (of a step below 'below' when given) that verifies
    (every part) and that a job of 'world_size' ranks can restore, set up for
    'rank'; or None. Failures go to 'skipped'."""
    for c in list_checkpoints(directory):
        if below is not None and c.step >= below:
            continue
        if judge(c, level, world_size, rank):
            return c
        if skipped is not None:
            skipped.append(c)
    return None


def parse_staging_name(name):
    """(host, pid) of a staging name step-N.<host>.<pid>.<seq>, or None (the
    shared staging of several ranks, step-N.run-<run>.<seq>, has neither)."""
    if len(name) < 18 or parse_checkpoint_name(name[:17]) is None or name[17] != ".":
        return None
    head, dot, _seq = name[18:].rpartition(".")
    if not dot:
        return None
    host, dot, pid = head.rpartition(".")
    if not dot or not host or not pid or len(pid) > 9 or not (pid.isdigit() and pid.isascii()):
        return None
    return host, int(pid)


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
        return pid > 0
    except PermissionError:
        return pid > 0
    except OSError:
        return False


def prune(directory, keep, stale_seconds=86400, dry_run=False):
    """Keep the newest 'keep' (>= 1) complete checkpoints (quick verification);
    remove older complete ones and broken ones older than the oldest kept
    (broken newer ones stay for inspection). Staging and trash debris of
    writers that are gone goes too (this host: a dead pid; otherwise older
    than stale_seconds). Returns the removed checkpoints' paths."""
    if keep < 1:
        raise CheckpointError("%s: keep must be at least 1" % directory)
    kept, broken, removed = [], [], []
    for c in list_checkpoints(directory):
        try:
            verify(c, "quick")
        except CheckpointError:
            broken.append(c)
            continue
        (kept if len(kept) < keep else removed).append(c)
    if kept:
        removed += [c for c in broken if c.step < kept[-1].step]
    debris = []
    me, now = _host(), time.time()
    for sub in (STAGING, TRASH):
        sdir = os.path.join(directory, sub)
        try:
            names = os.listdir(sdir)
        except OSError:
            continue
        for n in names:
            p = os.path.join(sdir, n)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            owner = parse_staging_name(n) if sub == STAGING else None
            if owner and owner[0] == me:
                gone = not _pid_alive(owner[1])
            else:
                gone = now - st.st_mtime > stale_seconds
            if gone:
                debris.append(p)
    if dry_run:
        return [c.path for c in removed]
    for c in removed:
        os.makedirs(os.path.join(directory, TRASH), mode=0o700, exist_ok=True)
        tmp = os.path.join(directory, TRASH, "%s.%d" % (os.path.basename(c.path), os.getpid()))
        os.rename(c.path, tmp)
        remove_tree(tmp)
    for p in debris:
        try:
            remove_tree(p)
        except OSError:
            pass
    return [c.path for c in removed]


