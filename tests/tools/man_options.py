#!/usr/bin/env python3
"""The job options the SPANK plugins register, as sbatch --help lists them
under "Options provided by plugins:", are those their man pages document,
and nothing else: spank_place(8) OPTIONS (one .TP entry per option) and the
--ckpt options of spank_ckpt(8)'s SYNOPSIS.

    man_options.py HELP_FILE SRCDIR     (HELP_FILE: sbatch --help's output; - for stdin)

Run by tests/cluster/scenarios/05_place_options.sh with the real sbatch and
both plugins in its plugstack.conf.
"""
import os
import re
import sys


def help_options(text):
    """Option names in the block under "Options provided by plugins:" (Slurm's
    _spank_opt_print: a left pad, then --NAME[=ARGINFO], a long one after a
    blank line), which ends at the next unindented line (the next group of
    sbatch's own options)."""
    _, found, tail = text.partition("Options provided by plugins:")
    if not found:
        return None
    names = set()
    for line in tail.split("\n")[1:]:
        if line.strip() and not line[0].isspace():
            break
        m = re.match(r"\s+--([a-z][a-z0-9-]*)", line)
        if m:
            names.add(m.group(1))
    return names


def section(page, name):
    out, inside = [], False
    for line in open(page).read().split("\n"):
        if line.startswith(".SH "):
            inside = line[4:].strip().strip('"') == name
        elif inside:
            out.append(line)
    return out


def man_options(line_text):
    return set(m.replace("\\-", "-") for m in re.findall(r"\\-\\-((?:[a-z0-9]|\\-)+)", line_text))


def page_options(src):
    """{option: page} of spank_place(8) OPTIONS heads and spank_ckpt(8) SYNOPSIS."""
    out = {}
    lines = section(os.path.join(src, "doc", "spank_place.8"), "OPTIONS")
    for i, line in enumerate(lines):
        if line.startswith(".TP") and i + 1 < len(lines):
            found = man_options(lines[i + 1])
            if len(found) != 1:
                sys.exit("man_options: FAIL: spank_place.8 OPTIONS: entry %r names %d options, expected one" %
                         (lines[i + 1], len(found)))
            out[found.pop()] = "spank_place.8"
    for o in man_options("\n".join(section(os.path.join(src, "doc", "spank_ckpt.8"), "SYNOPSIS"))):
        out[o] = "spank_ckpt.8"
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: man_options.py HELP_FILE SRCDIR")
    text = sys.stdin.read() if sys.argv[1] == "-" else open(sys.argv[1]).read()
    registered = help_options(text)
    if not registered:
        print("man_options: FAIL: sbatch --help lists no plugin options")
        return 1
    documented = page_options(sys.argv[2])
    problems = ["sbatch --help lists --%s, which no man page documents" % o for o in sorted(registered - set(documented))]
    problems += ["%s documents --%s, which sbatch --help does not list" % (documented[o], o)
                 for o in sorted(set(documented) - registered)]
    for p in problems:
        print("man_options: FAIL: " + p)
    if not problems:
        print("man_options: ok, %d plugin options in sbatch --help, each in its man page" % len(registered))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
