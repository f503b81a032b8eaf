#!/usr/bin/env python3
"""doc/ARCHITECTURE.md's module graph against the build files and the sources.

1. The table "What links what" names, per consumer, the local.mk that links
   it and the lib/ modules it links: each row must equal what that file's
   LIBADD/LDADD line links, its $(LOOM_*_LIBS) variables expanded from
   lib/local.mk ("none": no lib/ module; "all": every one).
2. Every module's sources include only modules its own $(LOOM_<M>_LIBS)
   links (a module's include of another it does not link is a dependency the
   graph does not show).
3. The modules named in lib/local.mk's noinst_LTLIBRARIES are the lib/
   directories, and each has a row in ARCHITECTURE.md's source layout.
4. Every quoted #include of every C/C++ file names a file of the tree (from
   the including file's directory or the top, as -I$(top_srcdir) finds it),
   or one configure writes. Run by distcheck on the unpacked tarball, this
   says the tarball carries every header, also of the programs distcheck
   does not build.

    module_graph.py SRCDIR"""

import os
import re
import sys

# The table's consumers and the variable that links each one.
LINK_VARS = {
    "SDK": "sdk_libloom_ckpt_la_LIBADD",
    "spank_ckpt": "plugins_spank_ckpt_spank_ckpt_la_LIBADD",
    "jobcomp/health": "plugins_jobcomp_health_jobcomp_health_la_LIBADD",
    "select/topo": "plugins_select_topo_select_topo_la_LIBADD",
    "spank_place": "plugins_spank_place_spank_place_la_LIBADD",
    "loom_fabric.so": "plugins_spank_place_loom_fabric_la_LIBADD",
    "loom": "tools_loom_LDADD",
}


def read_vars(path):
    """VAR = value definitions of a makefile (continuations joined; += appended)."""
    out = {}
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    for m in re.finditer(r"^([A-Za-z_][A-Za-z0-9_]*)[ \t]*(\+?=)[ \t]*(.*)$", text, re.M):
        name, op, value = m.groups()
        out[name] = (out.get(name, "") + " " + value) if op == "+=" else value
    return out


def expand(value, defs, depth=0):
    if depth > 20:
        raise SystemExit("module_graph: variables nest too deep: %s" % value)
    return re.sub(r"\$\((\w+)\)", lambda m: expand(defs.get(m.group(1), ""), defs, depth + 1), value)


def modules_of(value, defs):
    return set(re.findall(r"lib/libloom_(\w+)\.la", expand(value, defs)))


# Written by configure into the build tree, never shipped; and Slurm's own
# headers, from its configured source tree (--with-slurm-src) or prefix.
GENERATED = {"loom_config.h", "loom_slurm.h"}
SLURM_HEADERS = ("config.h", "src/", "slurm/")
SOURCE_DIRS = ("lib", "plugins", "tools", "sdk", "tests", "bench")


def unresolved_includes(src):
    """(file, [quoted includes found neither beside it nor from the top]) per C/C++ file."""
    for top in SOURCE_DIRS:
        for root, dirs, files in os.walk(os.path.join(src, top)):
            dirs[:] = [d for d in dirs if not d.startswith((".", "_build"))]
            for name in sorted(files):
                if not name.endswith((".c", ".h", ".cpp", ".hpp")):
                    continue
                path = os.path.join(root, name)
                with open(path, errors="replace") as f:
                    incs = re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read(), re.M)
                missing = [i for i in incs if i not in GENERATED and not i.startswith(SLURM_HEADERS)
                           and not os.path.isfile(os.path.join(root, i))
                           and not os.path.isfile(os.path.join(src, i))]
                yield os.path.relpath(path, src), missing


def main(src):
    bad = []
    lib_defs = read_vars(os.path.join(src, "lib", "local.mk"))
    modules = modules_of(lib_defs.get("noinst_LTLIBRARIES", ""), lib_defs)
    dirs = {d for d in os.listdir(os.path.join(src, "lib")) if os.path.isdir(os.path.join(src, "lib", d))}
    if modules != dirs:
        bad.append("lib/local.mk builds modules %s, lib/ has directories %s" % (sorted(modules), sorted(dirs)))
    arch = open(os.path.join(src, "doc", "ARCHITECTURE.md")).read()
    for m in sorted(dirs):
        if not re.search(r"^    lib/%s/" % m, arch, re.M):
            bad.append("doc/ARCHITECTURE.md: the source layout has no row for lib/%s/" % m)
    rows = re.findall(r"^\| (.+?) \(`([\w/.]+local\.mk)`\) \| (.+?) \|$", arch, re.M)
    if len(rows) != len(LINK_VARS):
        bad.append("doc/ARCHITECTURE.md: %d rows in 'What links what', %d consumers known" % (len(rows), len(LINK_VARS)))
    for consumer, mk, cell in rows:
        key = next((k for k in LINK_VARS if re.search(r"(^|[ `(])%s($|[ `)])" % re.escape(k), consumer)), None)
        if key is None:
            bad.append("doc/ARCHITECTURE.md: unknown consumer '%s'" % consumer)
            continue
        defs = dict(lib_defs)
        defs.update(read_vars(os.path.join(src, mk)))
        has = modules_of(defs.get(LINK_VARS[key], ""), defs)
        if cell.startswith("none"):
            says = set()
        elif cell == "all":
            says = set(modules)
        else:
            says = {re.sub(r"\W.*", "", item.strip()) for item in re.sub(r"\([^)]*\)", "", cell).split(",")}
        if says != has:
            bad.append("doc/ARCHITECTURE.md: %s links %s by the table, %s by %s (%s)"
                       % (consumer, sorted(says), sorted(has), mk, LINK_VARS[key]))
    for m in sorted(dirs):
        allowed = modules_of(lib_defs.get("LOOM_%s_LIBS" % m.upper(), ""), lib_defs) or {m}
        for name in sorted(os.listdir(os.path.join(src, "lib", m))):
            if not name.endswith((".cpp", ".hpp")):
                continue
            with open(os.path.join(src, "lib", m, name)) as f:
                for used in re.findall(r'^#include "lib/(\w+)/', f.read(), re.M):
                    if used not in allowed:
                        bad.append("lib/%s/%s includes lib/%s/, which LOOM_%s_LIBS does not link (%s)"
                                   % (m, name, used, m.upper(), " ".join(sorted(allowed))))
    sources = 0
    for path, missing in unresolved_includes(src):
        sources += 1
        for inc in missing:
            bad.append("%s includes \"%s\", which is not in the tree" % (path, inc))
    for b in bad:
        print("FAIL: " + b)
    print("module_graph: %d modules, %d consumers, %d C/C++ files' includes, %d problems"
          % (len(modules), len(rows), sources, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")))
