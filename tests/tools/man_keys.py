#!/usr/bin/env python3
"""Every key a loom file format or plugin argument list registers is listed
in the man page that owns it, with its default, and every key the page lists
is registered. The registered keys come from the real programs: `loom health
config --keys`, the "known keys" list of the error a bogus key draws from
`loom sim --topo-conf` and `loom place --weights`, and, for the plugins'
arguments (spank_ckpt, spank_place, jobcomp/health), the schema the plugin
parses them with, through tests/tools/schema_values. Where a page states a
default as "key=VALUE", VALUE is parsed by the reader's own setter and must
give the reader's default ("300s" and "5min" agree).

    man_keys.py LOOM SRCDIR SCHEMA_VALUES
"""
import os
import re
import subprocess
import sys
import tempfile

KEY = re.compile(r"^[a-z][a-z0-9_]*(\.NAME)?$")


def roff_words(line):
    """The words of a macro line (.B, .BR, .BI, .IR ...), roff escapes undone,
    quoted separators (", ") dropped, an alternating font's parts joined."""
    body = line.split(None, 1)[1] if " " in line else ""
    body = body.replace("\\-", "-").replace("\\(em", " ")
    parts = re.findall(r'"[^"]*"|\S+', body)
    macro = line.split()[0]
    if macro in (".BI", ".IB", ".BR", ".RB", ".IR", ".RI"):
        joined = "".join(p.strip('"') for p in parts)
        return re.split(r"[ ,|]+", joined)
    return [p.strip('"') for p in parts]


def head_keys(head):
    """The keys an entry's head line names: the word before each '=' when
    there is one ("placement= topo|cons_tres", "gpu_class. NAME = ..."),
    else every word ("gpu_temp_suspect, gpu_temp_drain")."""
    words = roff_words(head)
    joined = " ".join(words)
    if "=" in joined:
        glued = re.sub(r"\s*=\s*", "=", re.sub(r"\.\s+NAME", ".NAME", joined))
        return [k for k in re.findall(r"([a-z][a-z0-9_]*(?:\.NAME)?)=", glued) if KEY.match(k)]
    return [w for w in words if KEY.match(w)]


def has_default(head, para):
    """A default stated in the paragraph, or given in a .B key=VALUE head."""
    return bool(re.search(r"default", para, re.I) or re.match(r"\.B\s+[a-z_]+=\S", head) or
                re.match(r"\.BR\s+[a-z_]+=[0-9]", head))


def listed_keys(page, section):
    """{key: head + paragraph} of the .TP entries of SECTION (through its
    .SS); heads joined by .TQ share the paragraph that follows them."""
    text = open(page).read().split("\n")
    out, inside, i = {}, False, 0
    while i < len(text):
        line = text[i]
        if line.startswith(".SH "):
            inside = line[4:].strip().strip('"') == section
        elif inside and line.startswith(".TP") and i + 1 < len(text):
            heads = [text[i + 1]]
            j = i + 2
            while j + 1 < len(text) and text[j].startswith(".TQ"):
                heads.append(text[j + 1])
                j += 2
            para = []
            while j < len(text) and not text[j].startswith((".TP", ".SH", ".SS")):
                para.append(text[j])
                j += 1
            for head in heads:
                for k in head_keys(head):
                    out[k] = head + "\n" + "\n".join(para)
            i = j
            continue
        i += 1
    return out


def stated_default(head, key):
    """VALUE of "key=VALUE" in a .B or .BR head (".B class_order=v100,a100",
    ".BR link_heavy=400 \", \" link_normal=40"): one word, not a list of
    choices ("rank_order= yes|no" states none)."""
    if not re.match(r"\.BR?\s", head):
        return None
    for word in re.findall(r'"[^"]*"|\S+', head.replace("\\-", "-"))[1:]:
        k, eq, v = word.strip('"').partition("=")
        if k == key and eq and v and "|" not in v:
            return v
    return None


def schema_values(prog, fmt, words=()):
    """({key: default}, {key: value after parsing its word}) from schema_values."""
    r = subprocess.run([prog, fmt] + list(words), capture_output=True, text=True, timeout=60)
    defaults, parsed = {}, {}
    for line in r.stdout.splitlines():
        if line.startswith("= "):
            k, _, v = line[2:].partition("=")
            parsed[k] = v
        elif line.startswith("! "):
            parsed[line[2:].split("=", 1)[0]] = "(refused: %s)" % line[2:]
        elif "=" in line:
            k, _, v = line.partition("=")
            defaults[k] = v
    if r.returncode not in (0, 1) or not defaults:
        sys.exit("man_keys: FAIL: %s %s exited %d: %s" % (prog, fmt, r.returncode, r.stderr[:400]))
    return defaults, parsed


def check_defaults(prog, fmt, page, listed, problems):
    """Each "key=VALUE" head read by the reader's setter gives its default."""
    defaults, _ = schema_values(prog, fmt)
    stated = {}
    for k, entry in listed.items():
        head = entry.partition("\n")[0]
        v = stated_default(head, k)
        if v is not None and k in defaults:
            stated[k] = v
    _, parsed = schema_values(prog, fmt, ["%s=%s" % kv for kv in sorted(stated.items())])
    for k, v in sorted(stated.items()):
        if parsed.get(k) != defaults[k]:
            problems.append("%s: documents %s=%s, which reads as %s; the program's default is %s" %
                            (page, k, v, parsed.get(k, "(nothing)"), defaults[k]))
    return len(stated)


def known_from_error(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    m = re.search(r"known keys: ([^)]*)\)", r.stderr + r.stdout)
    if not m:
        sys.exit("man_keys: FAIL: %s printed no list of known keys: %s" % (" ".join(cmd), (r.stderr + r.stdout)[:400]))
    return set(k.strip() for k in m.group(1).split(","))


def main():
    loom, src, values = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory(prefix="loom-man-keys.") as tmp:
        return check(loom, src, values, tmp)


def examples(page):
    """The lines of the page's example blocks (.EX ... .EE)."""
    out, inside = [], False
    for line in open(page).read().split("\n"):
        if line.startswith(".EX"):
            inside = True
        elif line.startswith(".EE"):
            inside = False
        elif inside:
            out.append(line.replace("\\-", "-"))
    return out


def check(loom, src, values, tmp):
    bogus = os.path.join(tmp, "bogus.conf")
    with open(bogus, "w") as f:
        f.write("loom_man_keys_bogus=1\n")
    r = subprocess.run([loom, "health", "config", "--keys"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit("man_keys: FAIL: loom health config --keys exited %d: %s" % (r.returncode, r.stderr[:400]))
    health = set(line.split()[0] for line in r.stdout.splitlines() if line.strip())
    def plugin(fmt):
        return set(schema_values(values, fmt)[0])
    # (page, section, registered keys, where they come from, schema_values format or None)
    formats = [
        ("loom-health.conf.5", "KEYS", health, "loom health config --keys", "health"),
        ("loom-topo.conf.5", "KEYS", known_from_error([loom, "sim", "--topo-conf", bogus]),
         "loom sim --topo-conf", "topo"),
        ("loom-place.1", "WEIGHTS", known_from_error([loom, "place", "--weights", bogus, "--cluster", bogus,
                                                      "--request", "nodes=1"]), "loom place --weights", "weights"),
        ("spank_ckpt.8", "CONFIGURATION", plugin("spank_ckpt"), "spank_ckpt's schema", "spank_ckpt"),
        ("spank_place.8", "CONFIGURATION", plugin("spank_place"), "spank_place's schema", "spank_place"),
        ("jobcomp_health.8", "OPTIONS", plugin("jobcomp_health"), "jobcomp/health's schema", "jobcomp_health"),
    ]
    problems = []
    for page, section, known, source, fmt in formats:
        listed = listed_keys(os.path.join(src, "doc", page), section)
        for k in sorted(known - set(listed)):
            problems.append("%s %s: key %s (%s knows it) is not listed" % (page, section, k, source))
        for k in sorted(set(listed) - known):
            problems.append("%s %s: lists %s, which %s does not know" % (page, section, k, source))
        for k in sorted(known & set(listed)):
            if k.endswith(".NAME"):
                continue
            head, _, para = listed[k].partition("\n")
            if not has_default(head, para):
                problems.append("%s %s: key %s has no default" % (page, section, k))
        compared = check_defaults(values, fmt, page, listed, problems) if fmt else 0
        print("man_keys: %s %s: %d keys registered (%s), %d listed, %d stated defaults compared" %
              (page, section, len(known), source, len(listed), compared))
    # The health page's example lines, loaded by the reader they are for.
    sample = os.path.join(tmp, "examples.conf")
    lines = examples(os.path.join(src, "doc", "loom-health.conf.5"))
    with open(sample, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = subprocess.run([loom, "health", "config", sample], capture_output=True, text=True, timeout=60)
    if not lines or r.returncode != 0:
        problems.append("loom-health.conf.5: its example lines (%d) are refused by loom health config: %s" %
                        (len(lines), (r.stderr + r.stdout).strip()[:400]))
    else:
        print("man_keys: loom-health.conf.5: %d example line(s) loaded by loom health config" % len(lines))
    for p in problems:
        print("man_keys: FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
