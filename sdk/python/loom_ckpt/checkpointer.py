"""Checkpointer: when to checkpoint, saving (in the background or not) and
restoring, for one process or for every rank of a distributed job."""

import os
import signal as _signal
import sys
import threading
import time

from . import restorer, torch_io
from .agree import GroupAgreement, StampAgreement
from .catalog import prune
from .launch import RequestWatch, launch_ranks, launch_run_id, parse_signal, read_task_env
from .progress import ENV as _PROGRESS_ENV, Reporter
from .protocol import CheckpointError, check_relative_name
from .snapshot import TORCH_ASYNC, _byte_view, _dist, _prefault, _snapshot_memory, _torch
from .store import RankStaging, Staging

_told_no_torch = False


def _env_float(env, name, default):
    v = env.get(name)
    try:
        return float(v) if v else default
    except ValueError:
        raise CheckpointError("%s=%r: not a number" % (name, v))


class Checkpointer:
    """Decides when to checkpoint, saves (async or not), restores.

    The rank and world size come from the launcher (torchrun, srun, MPI:
    launch_ranks()). With several ranks every rank constructs a Checkpointer
    and calls should_checkpoint() once per step: the answer is the same on
    every rank (through the torch.distributed process group when one is
    initialized, else through rank 0's stamped step), each rank saves its own
    state, and rank 0 commits once every rank has written its part."""

    def __init__(self, directory=None, signal_name=None, interval=None, keep=None, world_size=None,
                 install_signal_handler=True, rank=None, process_group=None, commit_timeout=None):
        env = os.environ
        task = read_task_env(env)  # spank_ckpt's variables; CheckpointError naming a bad one
        self.dir = directory if directory is not None else task["dir"]
        sig = parse_signal(signal_name) if signal_name else task["signal"] if signal_name is None else 0
        self.interval = float(interval if interval is not None else task["interval_s"])
        self.keep = int(keep if keep is not None else task["keep"])
        r, w, self.launcher = launch_ranks()
        self.rank = int(rank if rank is not None else r)
        self.world_size = int(world_size if world_size is not None else w)
        if not (self.world_size >= 1 and 0 <= self.rank < self.world_size):
            raise CheckpointError("rank %d of %d: not a rank of that world" % (self.rank, self.world_size))
        self.commit_timeout = float(commit_timeout if commit_timeout is not None else
                                    _env_float(env, "LOOM_CKPT_COMMIT_TIMEOUT", 600.0))
        self.restart_count = task["restart_count"]
        self.job_id = env.get("SLURM_JOB_ID", "")
        self._signalled = threading.Event()
        self._last_save = time.monotonic()
        self._last_call = None
        self.step_seconds = 0.0
        self._thread = None
        self._error = None
        self._snapshot = {}  # name -> snapshot memory, reused by the next save
        self.huge_pages = env.get("LOOM_CKPT_HUGE_PAGES", "").lower() in ("1", "yes", "true", "on")
        self._reserver = None
        self._stop_reserve = threading.Event()
        self.last_stall = 0.0
        self.last_write = 0.0
        self._saves = 0
        self.group = None
        self.dcp_group = None
        self._own_group = None
        self.signal = None
        self.requests = RequestWatch(self.dir) if self.dir else None
        # Progress reports for spank_ckpt's keeper (a job with standby nodes).
        self.progress = Reporter(self.dir, self.rank, self.world_size) if self.dir and env.get(_PROGRESS_ENV) == "1" else None
        self._steps = 0
        if sig and install_signal_handler:
            self._install_handler(sig)
        self._setup_ranks(process_group, env)
        self._tell_torch()

    def _install_handler(self, sig):
        self.signal = _signal.Signals(sig)
        previous = _signal.getsignal(self.signal)

        def handler(signum, frame):
            self._signalled.set()
            if callable(previous):
                previous(signum, frame)
        _signal.signal(self.signal, handler)

    def _setup_ranks(self, process_group, env):
        """The agreement of several ranks: a gloo group of torch.distributed
        when it is initialized (created here, collectively, when the default
        group is not gloo), else rank 0's stamps."""
        self.run = launch_run_id()
        self.agreement = None
        if self.world_size == 1 or not self.enabled:
            return
        dist_up = _dist is not None and _dist.is_available() and _dist.is_initialized()
        if process_group is not None or dist_up:
            # Groups of loom's own (new_group is collective: every rank is here):
            # DCP's background save and the agreement run collectives beside
            # the training's, and collectives of two threads on one group
            # would pair up differently on different ranks.
            self.group = process_group if process_group is not None else _dist.new_group(backend="gloo")
            self._own_group = self.group if process_group is None else None
            self.dcp_group = _dist.new_group(backend="gloo") if TORCH_ASYNC else None
            if _dist.get_world_size(self.group) != self.world_size:
                raise CheckpointError("the process group has %d ranks, the launcher says %d" %
                                      (_dist.get_world_size(self.group), self.world_size))
            if not self.run:  # no launch id: rank 0's, for everyone
                box = ["p%s_%d_%d" % (os.uname().nodename, os.getpid(), int(time.time()))]
                _dist.broadcast_object_list(box, src=0, group=self.group)
                self.run = "".join(c if c.isalnum() or c in "_-" else "_" for c in box[0])
            self.agreement = GroupAgreement(_torch, _dist, self.group,
                                            _env_float(env, "LOOM_CKPT_AGREE_SECONDS", 1.0))
        else:
            if not self.run:
                raise CheckpointError("%d ranks and no launch id to name a save's shared staging directory: "
                                      "launch with srun, torchrun under srun or MPI, or set LOOM_CKPT_RUN_ID "
                                      "(the same on every rank)" % self.world_size)
            self.agreement = StampAgreement(self.dir, self.run, self.rank,
                                            lead_seconds=_env_float(env, "LOOM_CKPT_STAMP_LEAD", 2.0))

    def _tell_torch(self):
        global _told_no_torch
        if self.enabled and not _told_no_torch and self.rank == 0:
            _told_no_torch = True
            # Without PyTorch nothing is said: a program that saves bytes
            # needs none, and save_torch_async() raises, naming it.
            if _torch is not None and not TORCH_ASYNC:
                sys.stderr.write("loom_ckpt: torch %s has no torch.distributed.checkpoint.async_save: "
                                 "save_torch_async() copies tensors to CPU memory and saving with torch.save "
                                 "happens in the background\n" % _torch.__version__)

    @property
    def torch_writer(self):
        """How save_torch_async() saves: "torch-dcp" (torch.distributed.checkpoint
        async_save), "torch-save" (CPU snapshot + torch.save in the background), or
        None without PyTorch."""
        return "torch-dcp" if TORCH_ASYNC else "torch-save" if _torch is not None else None

    @property
    def enabled(self):
        return bool(self.dir)

    def _wish(self):
        if self._signalled.is_set():
            return True
        if self.requests is not None and self.requests.pending():
            return True
        return self.interval > 0 and time.monotonic() - self._last_save >= self.interval

    def request(self):
        """Ask for a checkpoint from this rank (the program's own reason): the
        next should_checkpoint() that the ranks agree on says yes."""
        self._signalled.set()

    def should_checkpoint(self, step=None):
        """Whether to save now: the signal was seen, spank_ckpt's request file
        asks, or the interval is due. With several ranks call it on every rank
        at every step: the answer is the same on all of them (without a process
        group, pass the step you would save)."""
        if not self.enabled:
            return False
        now = time.monotonic()
        if self._last_call is not None:
            dt = now - self._last_call
            self.step_seconds = dt if self.step_seconds == 0 else 0.8 * self.step_seconds + 0.2 * dt
            if self.progress is not None:
                self.progress.step(step if step is not None else self._steps, dt)
        self._last_call = now
        self._steps += 1
        wish = self._wish()
        if self.agreement is None:
            return wish
        return self.agreement.decide(wish, step, self.step_seconds)

    def _saving(self):
        """A save starts: what asked for it is served."""
        self._signalled.clear()
        if self.requests is not None:
            self.requests.served()
        self._saves += 1

    def _stage(self, step, layout="ranks"):
        if self.world_size == 1:
            return Staging(self.dir, step)
        # 7.4 step 1: every rank names the save alike. Saves agreed through
        # rank 0's stamp are numbered by the stamp (a rank past a stamped
        # step skips that save but not its number); the others are counted.
        if isinstance(self.agreement, StampAgreement):
            self._saves = max(self._saves, self.agreement.done)
        return RankStaging(self.dir, step, self.rank, self.world_size, self.run, self._saves, layout)

    def _commit(self, st, started, writer="loom-sdk-python"):
        """Commit a staged save: one process commits; a rank writes its part and
        rank 0 commits once every part is there. Then retention (the committer)."""
        seconds = time.monotonic() - started
        if self.world_size == 1:
            path = st.commit(seconds, 1, self.job_id, self.restart_count, writer)
        else:
            st.finish(seconds)
            if self.rank != 0:
                return None
            path = st.commit(seconds, self.job_id, self.restart_count, writer, self.commit_timeout)
        if self.keep > 0:
            prune(self.dir, self.keep)
        return path

    def _commit_files(self, step, files, started):
        st = self._stage(step)
        try:
            for name, data in files.items():
                st.write_file(name, data)
            return self._commit(st, started)
        except BaseException:
            if self.world_size == 1:
                st.abort()
            raise

    def save(self, step, files):
        """Write and commit on the calling thread; returns the checkpoint's path
        (None on a rank other than 0 of several: rank 0 commits)."""
        self.wait()
        self._saving()
        self._last_save = t0 = time.monotonic()
        path = self._commit_files(step, files, t0)
        self.last_stall = self.last_write = time.monotonic() - t0
        return path

    def reserve(self, files):
        """Prepare snapshot memory for 'files' (name -> bytes-like, or name -> size in
        bytes) in a background thread, and return at once. A save_async() that comes
        before it is done stops it (within 16 MiB) and faults the rest in with its
        copy. Memory already large enough is kept; a larger save later gets more."""
        if not self.enabled:
            return
        sizes = {name: (v if isinstance(v, int) else _byte_view(v).nbytes) for name, v in files.items()}
        for name, n in sizes.items():
            check_relative_name(name)
            if n < 0:
                raise ValueError("reserve: %r: negative size %d" % (name, n))
        before = self._reserver

        def run():
            if before is not None:
                before.join()
            fresh = {}
            for name, n in sizes.items():
                mem = self._snapshot.get(name)
                if mem is None or len(mem) < n:
                    mem = _snapshot_memory(n, self.huge_pages)
                    _prefault(mem, self._stop_reserve)
                    fresh[name] = mem
            # Only a save reads the table, and it joins this thread first.
            table = dict(self._snapshot)
            table.update(fresh)
            self._snapshot = table
        self._reserver = threading.Thread(target=run, name="loom-ckpt-reserve", daemon=True)
        self._reserver.start()

    def _wait_reserve(self, cut_short=False):
        if self._reserver is not None:
            if cut_short:
                self._stop_reserve.set()
            self._reserver.join()
            self._reserver = None
            self._stop_reserve.clear()

    def _take_snapshot(self, files):
        """Copy 'files' into the kept snapshot memory; name -> memoryview of the copy."""
        kept, snapshot = {}, {}
        for name, data in files.items():
            view = _byte_view(data)
            n = view.nbytes
            mem = self._snapshot.get(name)
            if mem is None or len(mem) < n:
                mem = None  # the smaller one goes before the larger one is mapped
                self._snapshot.pop(name, None)
                mem = _snapshot_memory(n, self.huge_pages)
            target = memoryview(mem)[:n]
            target[:] = view
            kept[name] = mem
            snapshot[name] = target
        self._snapshot = kept  # files no longer saved give their memory back
        return snapshot


    def save_async(self, step, files):
        """Snapshot 'files' (name -> bytes-like) and write them in the background."""
        t0 = time.monotonic()
        self._wait_reserve(cut_short=True)
        self.wait()
        self._saving()
        snapshot = self._take_snapshot(files)
        self._last_save = time.monotonic()
        self.last_stall = self._last_save - t0
        st = self._stage(step)

        def run():
            w0 = time.monotonic()
            try:
                for name, data in snapshot.items():
                    st.write_file(name, data)
                self._commit(st, w0)
                self.last_write = time.monotonic() - w0
            except BaseException as e:  # reported by wait()
                if self.world_size == 1:
                    st.abort()
                self._error = e
        self._thread = threading.Thread(target=run, name="loom-ckpt-writer", daemon=False)
        self._thread.start()

    def save_torch_async(self, step, state_dict):
        """Save a PyTorch state dict (model, optimizer, step...) asynchronously and
        commit it like any checkpoint: with torch.distributed.checkpoint.async_save
        (PyTorch >= 2.3) DCP into the staging directory (every rank of the job
        together, through a gloo group); with an older PyTorch every tensor is
        copied to CPU memory here (the stall) and a background thread writes the
        copy with torch.save (each rank its own). load_torch() reads either.
        DCP takes a plain tensor that every rank saves under one name for a
        replicated one and keeps a single copy: state that differs per rank
        is a DTensor (FSDP2, tensor parallel) or is keyed by rank."""
        torch_io.save_torch_async(self, step, state_dict)

    def load_torch(self, template=None, checkpoint=None, map_location="cpu"):
        """The state dict of the newest verified checkpoint (or of 'checkpoint'),
        this rank's, or None when there is none. A DCP checkpoint is loaded into
        'template' (as torch.distributed.checkpoint.load requires; or a function
        that makes it, called only when there is one) and returned. Every byte
        is read once and checked against the manifest as it is read; a corrupt
        newest checkpoint is reported on stderr and the one before it loaded."""
        return torch_io.load_torch(self, template, checkpoint, map_location)

    def wait(self):
        """Wait for the save (and reserve) in flight; raise the save's error if it failed."""
        self._wait_reserve()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            e, self._error = self._error, None
            raise CheckpointError("background checkpoint failed: %s" % e)

    def close(self):
        """Wait for the save in flight, then give back the process groups this
        Checkpointer made (collective: every rank calls it, before the program
        destroys its own process group)."""
        self.wait()
        if self.progress is not None:
            self.progress.close()
        for g in (self.dcp_group, self._own_group):
            if g is not None:
                _dist.destroy_process_group(g)
        self.dcp_group = self._own_group = None

    def restore(self, level="full", below=None):
        """The newest verified checkpoint this job can restore (a Checkpoint set
        up for this rank), or None. Every rank gets the same step.

        level "full" hashes every file first; "load" checks only the manifest,
        the sizes and the ranks, for a caller that verifies the bytes during
        its one read of them (load_torch() does, and falls back to an older
        checkpoint on a mismatch). 'below': only steps below it (a fallback)."""
        return restorer.restore(self, level, below)
