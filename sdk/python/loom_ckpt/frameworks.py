"""What the framework adapters (loom_ckpt.lightning, loom_ckpt.hf) share:
staging a save whose files a framework writes itself, adopting those files
into a loom commit (moved, not copied), reading another rank's files of a
restored checkpoint, and finding framework checkpoints that no loom commit
covers (the restart-budget trap below).

The restart-budget trap: spank_ckpt requeues a job and counts its restarts
against --ckpt-max-restarts; a restart is progress only if the job left a
loom commit (<dir>/step-N/MANIFEST.json). A program that checkpoints with its
framework's own writer (Lightning's ModelCheckpoint, HF Trainer's
checkpoint-N directories, accelerate's save_state) into LOOM_CKPT_DIR leaves
files there but no commit: every restart starts from scratch and the budget
runs out. The adapters adopt the framework's files into loom commits;
foreign_checkpoints() finds such files in a directory (`loom ckpt` tooling or
a job's epilog can call it) and warn_foreign_checkpoints() says so on stderr.
"""

import errno
import os
import re
import shutil
import sys
import time

from .checkpointer import Checkpointer
from .protocol import FORMAT, LATEST, STAGING, TRASH, CheckpointError, parse_checkpoint_name, rank_dir

# Names a framework's own checkpoint has (files and directories).
_FOREIGN_DIR = re.compile(r"^(checkpoint-\d+|checkpoints|global_step\d+|epoch=\d+.*|lightning_logs)$")
_FOREIGN_FILE = re.compile(r".*\.(ckpt|pt|pth|bin|safetensors|pkl|distcp)$")


def checkpointer(existing=None):
    """The Checkpointer an adapter uses: 'existing', else one made from the
    job's environment (collective when torch.distributed is initialized:
    call on every rank)."""
    return existing if existing is not None else Checkpointer()


def rank_prefix(ck):
    """Where this rank's files go in a checkpoint: "rank-%05d/" with several
    ranks (layout "ranks"), "" for one process."""
    return rank_dir(ck.rank) + "/" if ck.world_size > 1 else ""


class FrameworkSave:
    """One save of files that a framework writes: begin() stages step N (the
    same shared staging directory on every rank), the framework writes below
    .dir (this rank's directory in it) or adopt() moves its files in, and
    commit() hashes them and commits (rank 0, once every rank's part is
    there; an empty part is allowed)."""

    def __init__(self, ck, step, writer):
        if not ck.enabled:
            raise CheckpointError("loom checkpointing is off (no LOOM_CKPT_DIR): nothing to stage step %d in" % step)
        ck.wait()
        ck._saving()
        self.ck, self.step, self.writer = ck, int(step), writer
        self.t0 = time.monotonic()
        ck._last_save = self.t0
        self.staging = ck._stage(self.step)
        self.prefix = rank_prefix(ck)
        self.dir = os.path.join(self.staging.path, self.prefix) if self.prefix else self.staging.path
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        self._names = set()

    def adopt(self, src, name):
        """Move the file 'src' into this rank's files as 'name' (a rename: no
        copy of the bytes; a copy only across file systems)."""
        dst = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(dst), mode=0o700, exist_ok=True)
        try:
            os.rename(src, dst)
        except OSError as e:
            if e.errno != errno.EXDEV:
                raise CheckpointError("adopting %s into %s: %s" % (src, dst, e.strerror))
            shutil.copyfile(src, dst)
            os.unlink(src)
        self._names.add(name)

    def adopt_tree(self, root, keep=lambda rel: True):
        """adopt() every regular file below 'root' that keep(relative path)
        accepts, under its relative path. Returns the names adopted. The
        directories stay: another rank may be about to write its own files
        into them (remove_empty_dirs once every rank has adopted)."""
        names = []
        for top, _dirs, files in os.walk(root):
            for f in sorted(files):
                rel = os.path.relpath(os.path.join(top, f), root)
                if keep(rel) and os.path.isfile(os.path.join(top, f)):
                    self.adopt(os.path.join(top, f), rel)
                    names.append(rel)
        return names

    def commit(self):
        """Record every file below this rank's directory and commit. Returns
        the checkpoint's path on the committing rank, else None."""
        for top, _dirs, files in os.walk(self.dir):
            for f in sorted(files):
                rel = os.path.relpath(os.path.join(top, f), self.staging.path)
                self.staging.add_existing(rel)
        try:
            path = self.ck._commit(self.staging, self.t0, writer=self.writer)
        except BaseException:
            if self.ck.world_size == 1:
                self.staging.abort()
            raise
        self.ck.last_stall = self.ck.last_write = time.monotonic() - self.t0
        return path


def remove_empty_dirs(root):
    """Remove the empty directories below 'root' and root itself if it ends
    up empty; directories that still hold something (another rank's files)
    stay."""
    for top, _dirs, _files in sorted(os.walk(root, topdown=False), key=lambda t: -len(t[0])):
        try:
            os.rmdir(top)
        except OSError:
            pass


def part_files(checkpoint):
    """(rank, name, path) of every file of a restored checkpoint: each rank's
    files by the names that rank saved (rank 0 for one process)."""
    m = checkpoint.manifest
    if m["format"] == FORMAT:
        return [(0, f["path"], os.path.join(checkpoint.path, f["path"])) for f in m["files"]]
    out = []
    for p in m["ranks"]:
        prefix = rank_dir(p["rank"]) + "/" if m.get("layout") == "ranks" else ""
        for f in p["files"]:
            out.append((p["rank"], f["path"][len(prefix):], os.path.join(checkpoint.path, f["path"])))
    return out


def rank_file(checkpoint, rank, name):
    """The path of 'name' as rank 'rank' saved it in a restored checkpoint
    (e.g. the framework file that only rank 0 writes, read on every rank)."""
    for r, n, path in part_files(checkpoint):
        if r == rank and n == name:
            return path
    raise CheckpointError("%s: rank %d saved no file %r" % (checkpoint.path, rank, name))


def link_or_copy(src, dst):
    """Place 'src' at 'dst' without copying its bytes where the file system
    allows (a hard link), else a copy; an existing 'dst' of the same size
    (placed by another rank of this node) is kept."""
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    try:
        os.link(src, dst)
    except FileExistsError:
        if os.path.getsize(dst) != os.path.getsize(src):
            raise CheckpointError("%s exists and differs from %s: remove it" % (dst, src))
    except OSError as e:
        if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
            raise CheckpointError("placing %s at %s: %s" % (src, dst, e.strerror))
        shutil.copyfile(src, dst)


def foreign_checkpoints(directory):
    """The entries of a checkpoint directory that look like a framework's own
    checkpoints (checkpoint-N/, *.ckpt, *.pt, *.safetensors, lightning_logs/,
    ...) rather than loom's (step-N/, latest, .staging, .loom-*): files that
    no restart will ever restore. Relative names, sorted; [] when none or no
    directory."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = []
    for n in sorted(names):
        if parse_checkpoint_name(n) is not None or n in (LATEST, STAGING, TRASH) or n.startswith(".loom"):
            continue
        path = os.path.join(directory, n)
        if os.path.isdir(path) and (_FOREIGN_DIR.match(n) or _holds_checkpoint_files(path)):
            found.append(n + "/")
        elif os.path.isfile(path) and _FOREIGN_FILE.match(n):
            found.append(n)
    return found


def _holds_checkpoint_files(path, depth=2):
    for top, dirs, files in os.walk(path):
        if top[len(path):].count(os.sep) >= depth:
            dirs[:] = []
        if any(_FOREIGN_FILE.match(f) for f in files):
            return True
    return False


def warn_foreign_checkpoints(directory, out=None):
    """Say on stderr (or 'out') which framework checkpoints sit in 'directory'
    without a loom commit; returns them."""
    found = foreign_checkpoints(directory)
    if found:
        shown = ", ".join(found[:8]) + (" ..." if len(found) > 8 else "")
        (out or sys.stderr).write(
            "loom_ckpt: %s holds checkpoints of a framework's own (%s) that loom never restores: a restart "
            "resumes only from loom commits (step-N/). Use loom_ckpt.lightning.LoomCheckpoint, "
            "loom_ckpt.hf.LoomCallback or the Checkpointer, or write them elsewhere.\n" % (directory, shown))
    return found
