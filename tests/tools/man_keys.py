#!/usr/bin/env python3
"""Every key a loom file format registers is listed in the man page that
owns the format, with its default, and every key the page lists is
registered. The registered keys come from the real programs: `loom health
config --keys`, and the "known keys" list of the error a bogus key draws
from `loom sim --topo-conf` and `loom place --weights`.

    man_keys.py LOOM SRCDIR
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
    """{key: paragraph} of the .TP entries of SECTION (through its .SS)."""
    text = open(page).read().split("\n")
    out, inside, i = {}, False, 0
    while i < len(text):
        line = text[i]
        if line.startswith(".SH "):
            inside = line[4:].strip().strip('"') == section
        elif inside and line.startswith(".TP") and i + 1 < len(text):
            head = text[i + 1]
            j = i + 2
            para = []
            while j < len(text) and not text[j].startswith((".TP", ".SH", ".SS")):
                para.append(text[j])
                j += 1
            for k in head_keys(head):
                out[k] = head + "\n" + "\n".join(para)
            i = j
            continue
        i += 1
    return out


def known_from_error(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    m = re.search(r"known keys: ([^)]*)\)", r.stderr + r.stdout)
    if not m:
        sys.exit("man_keys: FAIL: %s printed no list of known keys: %s" % (" ".join(cmd), (r.stderr + r.stdout)[:400]))
    return set(k.strip() for k in m.group(1).split(","))


def main():
    loom, src = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="loom-man-keys.") as tmp:
        return check(loom, src, tmp)


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


def check(loom, src, tmp):
    bogus = os.path.join(tmp, "bogus.conf")
    with open(bogus, "w") as f:
        f.write("loom_man_keys_bogus=1\n")
    r = subprocess.run([loom, "health", "config", "--keys"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit("man_keys: FAIL: loom health config --keys exited %d: %s" % (r.returncode, r.stderr[:400]))
    health = set(line.split()[0] for line in r.stdout.splitlines() if line.strip())
    formats = [
        ("loom-health.conf.5", "KEYS", health, "loom health config --keys"),
        ("loom-topo.conf.5", "KEYS", known_from_error([loom, "sim", "--topo-conf", bogus]),
         "loom sim --topo-conf"),
        ("loom-place.1", "WEIGHTS", known_from_error([loom, "place", "--weights", bogus, "--cluster", bogus,
                                                      "--request", "nodes=1"]), "loom place --weights"),
    ]
    problems = []
    for page, section, known, source in formats:
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
        print("man_keys: %s %s: %d keys registered (%s), %d listed" % (page, section, len(known), source, len(listed)))
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
