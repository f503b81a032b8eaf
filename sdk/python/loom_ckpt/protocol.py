"""The checkpoint format (doc/loom-ckpt-protocol.md): names, limits, the
refusal categories and the strict manifest reader of "loom-ckpt/1" (one
process) and "loom-ckpt/2" (several ranks), the same rules as lib/ckpt."""

import json

FORMAT = "loom-ckpt/1"
FORMAT_RANKS = "loom-ckpt/2"
LAYOUTS = ("ranks", "dcp")
MANIFEST = "MANIFEST.json"
LATEST = "latest"
STAGING = ".staging"
TRASH = ".trash"
MAX_STEP = 999999999999
# Limits of the format (doc/loom-ckpt-protocol.md), the same as lib/ckpt/manifest.hpp.
MANIFEST_MAX_BYTES = 64 << 20
MAX_FILES = 1000000
MAX_FILE_SIZE = 1 << 62
MAX_WORLD_SIZE = 100000000
MAX_RESTART_COUNT = 1000000
MAX_NAME_BYTES = 4096

# Why a checkpoint is refused (Checkpoint.reason, CheckpointError.reason): the
# categories of the protocol, the same as lib/ckpt/catalog.hpp's Problem.
NOT_DIRECTORY = "not-directory"
MANIFEST_MISSING = "manifest-missing"
MANIFEST_REFUSED = "manifest-refused"
MANIFEST_INVALID = "manifest-invalid"
STEP_MISMATCH = "step-mismatch"
FILE_MISSING = "file-missing"
FILE_REFUSED = "file-refused"
SIZE_MISMATCH = "size-mismatch"
HASH_MISMATCH = "hash-mismatch"
IO_ERROR = "io-error"

RANK_MISSING = "rank-missing"
WORLD_SIZE_MISMATCH = "world-size-mismatch"
PARTS = ".parts"


class CheckpointError(Exception):
    """A checkpoint could not be written, read or verified; 'reason' is the
    refusal's category (MANIFEST_INVALID, HASH_MISMATCH, ...) where there is one."""

    def __init__(self, message, reason=None):
        super().__init__(message)
        self.reason = reason


def checkpoint_name(step):
    return "step-%012d" % step


def parse_checkpoint_name(name):
    if len(name) == 17 and name.startswith("step-") and name[5:].isdigit() and name[5:].isascii():
        return int(name[5:])
    return None


def rank_dir(rank):
    """The directory of a rank's files in a layout-"ranks" checkpoint."""
    return "rank-%05d" % rank


def check_relative_name(name):
    if not isinstance(name, str) or not name:
        raise CheckpointError("bad file name %r" % (name,))
    try:
        size = len(name.encode("utf-8"))  # strict: a lone surrogate is refused
    except UnicodeEncodeError:
        raise CheckpointError("file name %r is not valid UTF-8" % name)
    if size > MAX_NAME_BYTES:
        raise CheckpointError("file name longer than %d bytes" % MAX_NAME_BYTES)
    if name.startswith("/") or any(ord(c) < 0x20 or c == "\x7f" for c in name):
        raise CheckpointError("file name %r must be relative, without control characters" % name)
    if any(c in ("", ".", "..") for c in name.split("/")):
        raise CheckpointError("file name %r has an empty, '.' or '..' component" % name)
    if name == MANIFEST:
        raise CheckpointError("file name %r is reserved for the manifest" % name)


def _has_lone_surrogate(text):
    """A \\uD800-\\uDFFF escape that is not half of a surrogate pair (refused
    by every reader: json-c would turn it into U+FFFD)."""
    def escape_at(i):
        if text[i:i + 2] != "\\u" or len(text) < i + 6:
            return None
        digits = text[i + 2:i + 6]
        return int(digits, 16) if all(c in "0123456789abcdefABCDEF" for c in digits) else None
    i = 0
    while i < len(text):
        if text[i] != "\\":
            i += 1
            continue
        v = escape_at(i)
        if v is None:
            i += 2
            continue
        if 0xDC00 <= v <= 0xDFFF:
            return True
        if 0xD800 <= v <= 0xDBFF:
            w = escape_at(i + 6)
            if w is None or not 0xDC00 <= w <= 0xDFFF:
                return True
            i += 6
        i += 6
    return False



def _decode(text, bad):
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")  # strict, and never UTF-16/32 as json.loads(bytes) would
        except UnicodeDecodeError:
            raise bad("not valid UTF-8")
    if any(c < " " and c not in "\t\n\r" for c in text):
        raise bad("a raw control character (JSON allows only tab, CR and LF between tokens)")
    if _has_lone_surrogate(text):
        raise bad("a \\u escape of half a surrogate pair")
    try:
        m = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise bad("invalid JSON: %s" % e)
    if not isinstance(m, dict):
        raise bad("$: expected an object")
    return m


def _field(obj, where, key, types, check, bad, required=True):
    if key not in obj:
        if required:
            raise bad("%s: missing required field '%s'" % (where, key))
        return None
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, types) or not check(v):
        raise bad("%s.%s: bad value %r" % (where, key, v))
    return v


def _check_files(files, where, bad, seen, prefix=""):
    """Check a list of file objects; 'seen' holds the paths of the whole
    manifest; a path of a rank's part must start with 'prefix'."""
    for i, f in enumerate(files):
        at = "%s[%d]" % (where, i)
        if not isinstance(f, dict):
            raise bad("%s: expected an object" % at)
        for key in ("path", "size", "sha256"):
            if key not in f:
                raise bad("%s: missing required field '%s'" % (at, key))
        try:
            check_relative_name(f["path"])
        except CheckpointError as e:
            raise bad("%s.path: %s" % (at, e))
        if prefix and not f["path"].startswith(prefix):
            raise bad("%s.path: %r is not below %s (a rank's files are in its own directory)" % (at, f["path"], prefix))
        size = f["size"]
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= MAX_FILE_SIZE:
            raise bad("%s.size: bad value %r" % (at, size))
        h = f["sha256"]
        if not isinstance(h, str) or len(h) != 64 or any(c not in "0123456789abcdef" for c in h):
            raise bad("%s.sha256: expected 64 lower-case hex digits" % at)
        for key in f:
            if key not in ("path", "size", "sha256"):
                raise bad("%s.%s: unknown field" % (at, key))
        if f["path"] in seen:
            raise bad("%s: file %r listed twice" % (at, f["path"]))
        seen.add(f["path"])


def _check_parts(m, bad):
    world, layout = m["world_size"], m["layout"]
    ranks, seen, count = set(), set(), 0
    for i, p in enumerate(m["ranks"]):
        at = "$.ranks[%d]" % i
        if not isinstance(p, dict):
            raise bad("%s: expected an object" % at)
        r = _field(p, at, "rank", int, lambda v: 0 <= v < world, bad)
        if r in ranks:
            raise bad("%s.rank: rank %d given twice" % (at, r))
        ranks.add(r)
        _field(p, at, "step", int, lambda v: 0 <= v <= MAX_STEP, bad)
        _field(p, at, "host", str, lambda v: True, bad, required=False)
        _field(p, at, "write_seconds", (int, float), lambda v: 0 <= v < 1e7, bad, required=False)
        files = _field(p, at, "files", list, lambda v: True, bad)
        count += len(files)
        if count > MAX_FILES:
            raise bad("%s.files: more than %d files in the manifest" % (at, MAX_FILES))
        _check_files(files, at + ".files", bad, seen, rank_dir(r) + "/" if layout == "ranks" else "")
        for key in p:
            if key not in ("rank", "step", "host", "write_seconds", "files"):
                raise bad("%s.%s: unknown field" % (at, key))


def parse_manifest(text, source="manifest"):
    """Parse and check a manifest strictly (either format); raises
    CheckpointError (reason MANIFEST_INVALID) naming the field. 'text' is
    bytes (UTF-8) or str."""
    def bad(msg):
        return CheckpointError("%s: %s" % (source, msg), MANIFEST_INVALID)
    m = _decode(text, bad)
    fmt = _field(m, "$", "format", str, lambda v: True, bad)
    if fmt not in (FORMAT, FORMAT_RANKS):
        raise bad("$.format: unsupported format %r (expected %s or %s)" % (fmt, FORMAT, FORMAT_RANKS))
    finite = (int, float)
    _field(m, "$", "step", int, lambda v: 0 <= v <= MAX_STEP, bad)
    world = _field(m, "$", "world_size", int, lambda v: 1 <= v <= MAX_WORLD_SIZE, bad)
    _field(m, "$", "created", finite, lambda v: 0 <= v < 1e11, bad)
    _field(m, "$", "write_seconds", finite, lambda v: 0 <= v < 1e7, bad)
    _field(m, "$", "job_id", str, lambda v: True, bad, required=False)
    _field(m, "$", "restart_count", int, lambda v: 0 <= v <= MAX_RESTART_COUNT, bad, required=False)
    _field(m, "$", "writer", str, lambda v: True, bad, required=False)
    known = ["format", "step", "world_size", "created", "write_seconds", "job_id", "restart_count", "writer"]
    if fmt == FORMAT:
        files = _field(m, "$", "files", list, lambda v: len(v) <= MAX_FILES, bad)
        _check_files(files, "$.files", bad, set())
        known.append("files")
    else:
        _field(m, "$", "layout", str, lambda v: v in LAYOUTS, bad)
        _field(m, "$", "ranks", list, lambda v: len(v) <= world, bad)
        _check_parts(m, bad)
        known += ["layout", "ranks"]
    for k in m:
        if k not in known:
            raise bad("$.%s: unknown field" % k)
    return m


def manifest_files(m):
    """Every file object of a manifest of either format."""
    if m["format"] == FORMAT:
        return m["files"]
    return [f for p in m["ranks"] for f in p["files"]]


def check_parts_complete(m, step, source):
    """After parsing: the manifest is of step 'step', every part is of it,
    and every rank has a part. CheckpointError (STEP_MISMATCH, RANK_MISSING)."""
    if m["step"] != step:
        raise CheckpointError("%s: manifest says step %d" % (source, m["step"]), STEP_MISMATCH)
    if m["format"] == FORMAT:
        return
    for i, p in enumerate(m["ranks"]):
        if p["step"] != m["step"]:
            raise CheckpointError("%s: $.ranks[%d].step: rank %d's part is of step %d, the checkpoint's is %d"
                                  % (source, i, p["rank"], p["step"], m["step"]), STEP_MISMATCH)
    have = {p["rank"] for p in m["ranks"]}
    for r in range(m["world_size"]):
        if r not in have:
            raise CheckpointError("%s: rank %d has no part (%d of %d ranks): torn" %
                                  (source, r, len(have), m["world_size"]), RANK_MISSING)


def check_job(m, world_size, source):
    """Section 7.3: whether a job of 'world_size' ranks can restore this
    checkpoint. CheckpointError (WORLD_SIZE_MISMATCH) when not."""
    if m["format"] == FORMAT:
        if world_size != 1:
            raise CheckpointError("%s: written by one process (%s), this job has %d ranks" %
                                  (source, FORMAT, world_size), WORLD_SIZE_MISMATCH)
    elif m["layout"] == "ranks" and m["world_size"] != world_size:
        raise CheckpointError("%s: written by %d ranks, this job has %d" % (source, m["world_size"], world_size),
                              WORLD_SIZE_MISMATCH)
