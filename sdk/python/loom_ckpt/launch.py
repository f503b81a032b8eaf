"""What the launcher tells a rank, and how the ranks of a job agree
(doc/loom-ckpt-protocol.md section 7.4 and 7.5): the rank and world size, the
run id that names a save's shared staging directory, the request file that
spank_ckpt writes, and the one decision to checkpoint, through a process
group or through rank 0's stamped step."""

import json
import math
import os
import re
import signal as _signal
import stat
import sys
import time

from .protocol import CheckpointError

REQUEST = ".loom-request"
REQUEST_MAX_BYTES = 4096
STAMP_PREFIX = ".loom-save-at."

# The environment spank_ckpt gives each task (spank_ckpt(8), TASK
# ENVIRONMENT), read with lib/exchange/ckpt_task_env.cpp's rules; both SDKs run the
# cases of tests/ckpt/conformance/task-env.json.
TASK_ENV_DEFAULT_KEEP = 3
TASK_ENV_MAX_KEEP = 1000
_SIGNAL_NAMES = {"HUP": 1, "INT": 2, "QUIT": 3, "USR1": 10, "USR2": 12, "ALRM": 14, "TERM": 15, "CONT": 18,
                 "URG": 23, "WINCH": 28, "PWR": 30, "KILL": 9, "STOP": 19}
_WHOLE = re.compile(r"[+-]?[0-9]+\Z")


def _whole(name, v, lo, hi, default):
    if not v:
        return default
    n = int(v) if _WHOLE.match(v) else None
    if n is None:
        raise CheckpointError("%s='%s': expected a whole number" % (name, v))
    if not lo <= n <= hi:
        raise CheckpointError("%s='%s': must be between %d and %d" % (name, v, lo, hi))
    return n


def parse_signal(text):
    """"USR2", "SIGUSR2" or a number -> the signal's number; KILL and STOP are
    refused (CheckpointError naming the value)."""
    s = text[3:] if text.startswith("SIG") else text
    sig = _SIGNAL_NAMES.get(s)
    if sig is None:
        if not _WHOLE.match(s) or not 1 <= int(s) <= _signal.SIGRTMAX:
            raise CheckpointError("LOOM_CKPT_SIGNAL='%s': expected a signal name such as USR2 or a number" % text)
        sig = int(s)
    if sig in (9, 19):
        raise CheckpointError("LOOM_CKPT_SIGNAL='%s': KILL and STOP cannot be caught: a checkpoint signal must be"
                              % text)
    return sig


def read_task_env(env=None):
    """{"dir", "latest", "signal", "interval_s", "keep", "restart_count"} from
    spank_ckpt's variables; CheckpointError naming the first that does not read."""
    env = os.environ if env is None else env
    sig = env.get("LOOM_CKPT_SIGNAL", "")
    return {"dir": env.get("LOOM_CKPT_DIR", ""), "latest": env.get("LOOM_CKPT_LATEST", ""),
            "signal": parse_signal(sig) if sig else 0,
            "interval_s": _whole("LOOM_CKPT_INTERVAL", env.get("LOOM_CKPT_INTERVAL", ""), 0, 2 ** 63 - 1, 0),
            "keep": _whole("LOOM_CKPT_KEEP", env.get("LOOM_CKPT_KEEP", ""), 1, TASK_ENV_MAX_KEEP,
                           TASK_ENV_DEFAULT_KEEP),
            "restart_count": _whole("LOOM_RESTART_COUNT", env.get("LOOM_RESTART_COUNT", ""), 0, 2 ** 63 - 1, 0)}


# Launchers and the variables that carry a rank and the world size, in the
# order they are believed (torchrun inside srun sets both RANK and
# SLURM_PROCID), and a variable that must be set too: a batch script has
# SLURM_PROCID=0 and the job's SLURM_NTASKS but no SLURM_STEP_ID, and a
# program it runs itself is one process, not rank 0 of N.
LAUNCHERS = (
    ("torchrun", "RANK", "WORLD_SIZE", None),
    ("srun", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_STEP_ID"),
    ("srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_ID"),
    ("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", None),
    ("PMIx", "PMIX_RANK", "PMIX_SIZE", None),
    ("PMI", "PMIX_RANK", "PMI_SIZE", None),
)


def launch_ranks(env=None):
    """(rank, world_size, launcher) from the launcher's variables; (0, 1, None)
    when none is set. CheckpointError naming the variable when one is bad."""
    env = os.environ if env is None else env
    for launcher, rvar, wvar, within in LAUNCHERS:
        r, w = env.get(rvar), env.get(wvar)
        if r is None or w is None or (within and within not in env):
            continue
        try:
            rank, world = int(r), int(w)
        except ValueError:
            raise CheckpointError("%s=%r, %s=%r: not integers (%s)" % (rvar, r, wvar, w, launcher))
        if not (world >= 1 and 0 <= rank < world):
            raise CheckpointError("%s=%d, %s=%d: not a rank of that world (%s)" % (rvar, rank, wvar, world, launcher))
        return rank, world, launcher
    return 0, 1, None


def launch_run_id(env=None):
    """The id of this launch, the same on every rank of it (7.4); "" when the
    environment has none."""
    env = os.environ if env is None else env
    if env.get("SLURM_JOB_ID"):
        restarts = env.get("LOOM_RESTART_COUNT") or env.get("SLURM_RESTART_COUNT") or "0"
        run = "j%s_r%s_s%s" % (env["SLURM_JOB_ID"], restarts, env.get("SLURM_STEP_ID", "batch"))
        if env.get("TORCHELASTIC_RESTART_COUNT"):
            run += "_e" + env["TORCHELASTIC_RESTART_COUNT"]
    else:
        run = env.get("PMIX_NAMESPACE") or env.get("OMPI_MCA_orte_ess_jobid") or env.get("LOOM_CKPT_RUN_ID") or ""
    return re.sub(r"[^A-Za-z0-9_-]", "_", run)


def _read_small_json(path, limit):
    """A small JSON object from a regular file, never through a symlink, never
    blocking on a FIFO; None when absent. CheckpointError when unusable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CheckpointError("%s: cannot open: %s" % (path, e.strerror))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise CheckpointError("%s: not a regular file" % path)
        data = f.read(limit + 1)
    if len(data) > limit:
        raise CheckpointError("%s: larger than %d bytes" % (path, limit))
    try:
        v = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise CheckpointError("%s: not JSON: %s" % (path, e))
    if not isinstance(v, dict):
        raise CheckpointError("%s: not a JSON object" % path)
    return v


def _int_field(v, key, path, low):
    x = v.get(key)
    if isinstance(x, bool) or not isinstance(x, int) or x < low:
        raise CheckpointError("%s: %s: bad value %r" % (path, key, x))
    return x


def read_request(directory):
    """The request file (7.5): {"seq", "reason", "time"}, or None."""
    path = os.path.join(directory, REQUEST)
    v = _read_small_json(path, REQUEST_MAX_BYTES)
    if v is None:
        return None
    if _int_field(v, "seq", path, 1) > (1 << 53) - 1:
        raise CheckpointError("%s: seq: bad value %r" % (path, v["seq"]))
    if not isinstance(v.get("reason"), str):
        raise CheckpointError("%s: reason: bad value %r" % (path, v.get("reason")))
    t = v.get("time")
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or not 0 <= t < 1e11:
        raise CheckpointError("%s: time: bad value %r" % (path, t))
    extra = set(v) - {"seq", "reason", "time"}
    if extra:
        raise CheckpointError("%s: %s: unknown field" % (path, sorted(extra)[0]))
    return v


class RequestWatch:
    """Whether spank_ckpt asked for a checkpoint since the program started or
    last saved; the file is read at most once per 'period' seconds."""

    def __init__(self, directory, period=1.0):
        self.dir, self.period = directory, period
        self._warned = False
        self.latest = 0
        self.seen = self.latest = self._seq()
        self._next = time.monotonic() + period

    def _seq(self):
        try:
            v = read_request(self.dir) if self.dir else None
        except CheckpointError as e:
            if not self._warned:
                self._warned = True
                sys.stderr.write("loom_ckpt: ignoring the checkpoint request file: %s\n" % e)
            return self.latest
        return v["seq"] if v else 0

    def pending(self):
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.period
            self.latest = max(self.latest, self._seq())
        return self.latest > self.seen

    def served(self):
        """A save starts: every request written so far is served. The file is
        read again: spank_ckpt writes it, then signals, and the request that
        came with the signal must not ask for a second save."""
        self.latest = max(self.latest, self._seq())
        self.seen = self.latest
        self._next = time.monotonic() + self.period
