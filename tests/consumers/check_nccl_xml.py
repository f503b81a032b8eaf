#!/usr/bin/env python3
"""Check that NCCL topology XML files (NCCL_TOPO_FILE) would be accepted by NCCL.

  check_nccl_xml.py [-q] FILE...

For each FILE prints "ok: FILE: N gpus, N nics, ..." or one
"FAIL: FILE: line L: /element/path: what [NCCL source]" per violation, plus
"warn: FILE: ..." lines for things NCCL accepts but silently changes (-q hides
them). Exits 1 if any file failed.

The file is parsed twice: with xml.etree (it must be well-formed XML) and with
a byte-for-byte re-implementation of NCCL's own parser, because NCCL's parser
is much simpler than XML and rejects or mis-reads things etree accepts. All
later checks run on the tree NCCL's parser builds, with its line numbers.

Sources: NVIDIA/nccl, master of 2026 (src/graph/xml.cc, xml.h, topo.cc,
topo.h, src/include/cpuset.h, src/misc/utils.cc), and the 2022 (2.1x)
xml.cc/topo.cc where the older code is stricter; "old NCCL" below means
that. Functions are named, not line numbers, because those move.

FAIL means NCCL returns an error, or part of the file is thrown away.
warn means NCCL accepts it but falls back to a default, or fills the value in
from the machine it runs on.

Lexical rules (xml.cc xmlGetNode / xmlGetToken / xmlGetValue / xmlSkipComment)
  L1  Outside tags only ' ', '\\n' and '\\r' may appear. Any other character
      (text content, TAB indentation, CDATA text, a UTF-8 BOM) -> FAIL
      "XML Parse error : expecting '<'"  [xmlGetNode]
  L2  An element name ends at ' ', '>', '/', '\\n' or '\\r'. It may be followed
      only by ' ', '>' or '/': attributes on the next line, or a TAB after the
      name -> FAIL "expected >" / "Unexpected value with name"
      [xmlGetNode, xmlGetToken]
  L3  Attributes are separated by ' ' only (no newline or TAB), with no spaces
      around '='. A doubled space makes an empty attribute, which still uses
      one of the 16 slots.  [xmlGetNode attribute loop, xmlGetToken]
  L4  Values must be quoted -> "Expected (double) quote" (INT_OK is never
      defined) [xmlGetValue]. Single quotes: master accepts them, but old NCCL
      reads a '...' value up to the next '"' -> FAIL. Entities (&amp; ...)
      are not decoded -> warn.
  L5  Closing tags must be exactly "</name>": "</name >" -> FAIL "unexpected
      trailing" [xmlGetNode]. Self-closing "<x/>" and "<x .../>" are fine.
  L6  "<?xml ...?>" declarations, other <?...?> and <!DOCTYPE> -> FAIL: NCCL
      reads them as elements ("expected >, got '?'", or it ignores them and
      swallows the rest of the file into them: "unterminated").
      [xmlGetNode, xmlLoadSub]
  L7  Comments "<!-- -->" are skipped [xmlSkipComment]. But the comment
      opener is read as an element name, so "<!--a=b -->" (a '=' before the
      first space) -> FAIL "Unexpected value with name".
  L8  MAX_STR_LEN 255 [xml.h]: an element name over 253 characters, an
      attribute name over 254, or a value over 253 -> FAIL "too long"
      [xmlGetToken, xmlGetValue; old NCCL does not even check value length].
  L9  MAX_ATTR_COUNT 16 [xml.h]: attributes past the 16th are dropped ("Ignoring
      extra attributes") -> FAIL [xmlGetNode]. NCCL also adds attributes
      later through xmlSetAttr*/xmlInitAttr*, which fail at 16 ("too many XML
      attributes (max 16)", xml.h xmlGetNextAttrIndex). So each element must
      leave room for the ones NCCL may add: cpu: host_hash affinity arch
      vendor familyid modelid [topo.cc ncclTopoGetSystem, xml.cc
      ncclTopoGetXmlFromCpu]; pci: class vendor device subsystem_vendor
      subsystem_device link_speed link_width [ncclTopoGetXmlFromSys]; gpu: dev
      sm keep rank gdr mlopart [ncclTopoGetXmlFromGpu, ncclTopoGetSystem];
      nvlink: tclass; net: keep dev latency speed port guid rail plane maxconn
      gdr net [topo.cc ncclTopoPopulateNics].

Structure (xml.cc handler tables: ncclTopoGetXmlFromFile, ncclTopoXmlLoad*)
  S1  top level: system;  system: cpu;  cpu: pci nic;  pci: pci gpu nic pcilink
      (pcilink is master only);  gpu: nvlink c2c;  nic: net;  net, nvlink, c2c,
      pcilink: nothing.
  S2  Anything else is skipped with its whole subtree (xmlLoadSub "Ignoring
      element X"; leaf handlers skip children without a message). A known
      topology element in the wrong place (e.g. <gpu> under <cpu>) -> FAIL
      (it is lost); an unknown element -> warn.
  S3  No <system> at the top level -> FAIL: NCCL loads nothing and detects
      everything itself. A second <system> -> FAIL: only the first is used
      (topo.cc ncclTopoGetSystemFromXml, xml.h xmlFindTag).
  S4  Node limit: NCCL_TOPO_XML_MAX_NODES 256 (topo.h; xmlAlloc in
      ncclTopoGetSystem). xmlLoadSub fails once 256 elements are kept,
      checked before each read: 256 or more -> FAIL "XML parser is limited to
      256 nodes". NCCL then adds gpu/nvlink/nic/net nodes itself, and xmlAddNode
      fails at 256 -> warn above 224. (Old NCCL: fixed 1024.)
  S5  MAX_SUBS 640 [xml.h]: more children than that -> FAIL [xmlLoadSub].

Attributes, as topo.cc converts the XML (ncclTopoGetSystemFromXml and friends).
xmlGetAttrStr/xmlGetAttrInt fail with "Attribute X of node Y not found" when an
attribute is missing. xmlGetAttrInt is strtol(s, NULL, 0): a leading 0 means
octal, trailing junk is ignored, and no digits at all reads as 0.
  A1  system: version required, strtol(...)==NCCL_TOPO_XML_VERSION (1) else
      FAIL "XML Topology has wrong version" [xml.cc ncclTopoXmlLoadSystem; the
      check runs while parsing]. name optional.
  A2  cpu [ncclTopoAddCpu]: numaid required int. arch required, matched by
      prefix against x86_64/arm64/ppc64 (kvConvertToInt; other -> warn, UNDEF).
      If x86_64: vendor required (GenuineIntel/AuthenticAMD/CentaurHauls/
      "  Shanghai  ", other -> warn). Intel and Zhaoxin: familyid and modelid
      required; AMD: familyid required (master). affinity optional:
      comma-separated 32-bit hex words, highest first, no "0x", at most
      CPU_SETSIZE/32 = 32 words (cpuset.h ncclStrToCpuset; strtoul(...,16) in
      master, a hex-digit loop in old NCCL that overruns past 32 words).
      host_hash is always overwritten (ncclTopoGetSystem). NCCL fills in a
      missing arch/vendor/familyid/modelid only for the CPU above a GPU or NIC
      it finds in sysfs on the machine it runs on (ncclTopoGetXmlFromCpu);
      anywhere else the error stands, so they count as required here.
  A3  pci [ncclTopoAddPci]: busid, class, link_width and link_speed are
      required (master reads link_* for every pci; old NCCL only for pci that
      become nodes). NCCL fills in a missing link_speed/link_width only on the
      local GPU/NIC path, and writes "" (which means 8 GT/s x16) for devices
      that are not in sysfs, such as the ffff:ff:xx.x switches
      (ncclTopoGetXmlFromSys).
      busid: lowercase "dddd:bb:dd.f". NCCL matches the local GPU and NICs
      against it with strcmp to the lowercase id it prints ("%04lx:%02lx:%02lx.
      %01lx", utils.cc int64ToBusId; xml.cc ncclTopoGetPciNode /
      xmlFindTagKv) and converts it with busIdToInt64 (hex digits, skipping
      ':' and '.', stopping at anything else). Other forms -> FAIL; a domain
      of more than 4 digits -> warn (getPciPath copies 12 characters).
      class: "0x" + 6 hex digits as in sysfs, matched by prefix
      (kvDictPciClass): 0x060400 and 0x080100 are PCI, 0x068000 NVS,
      0x068001 CPU, 0x03 GPU, 0x02 NIC, anything else PCI -> warn when not of
      that form. link_speed is matched by prefix against kvDictPciGen:
      "2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s", "2.5 GT/s PCIe",
      "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe",
      "64.0 GT/s PCIe"; anything else -> warn (falls back to 60 = 8 GT/s).
      link_width: int, 0 or "" means 16 -> warn. vendor/device/subsystem_*:
      optional, strtol(...,0) (ncclTopoGetIntDevice).
  A4  pci children [ncclTopoAddPci]. The pci's type comes from class, but is
      NIC if it has a <nic> child. Only the first <nic> is used (xmlGetSub)
      -> FAIL for more. Child <pci> are read only when the type is PCI,
      otherwise they are lost -> FAIL. In master, a PCI-type pci reads all its
      children except pcilink as pci, so a <gpu> under a bridge-class pci ->
      FAIL "Attribute class of node gpu not found". <pcilink> needs a
      PCI-type parent -> FAIL "Add PCI Link error : could not find PCI SW"
      (ncclTopoAddPciLinks). A GPU busid whose function has bit 0 or 1 set ->
      FAIL "non-zero bits in MLOPart mask" (master ncclTopoCheckMloPartBusId).
      More than one <gpu> in a pci: master handles it (MLOPart), old NCCL uses
      the first -> warn.
  A5  gpu [ncclTopoAddGpu]: rank, sm, dev and gdr are required there, but NCCL
      sets them for each rank's own GPU before converting: dev and sm from NVML
      if missing, gdr if missing, rank always (xml.cc ncclTopoGetXmlFromGpu,
      topo.cc ncclTopoGetSystem). So they are optional here, and must be ints
      when present. A missing dev/sm -> warn; dev="-1" -> warn (GPU skipped).
      mlopart below 2 (NCCL_TOPO_MLOPART_DEV_MAX). When a gpu has any <nvlink>,
      NCCL does not ask NVML for NVLinks.
  A6  nvlink [ncclTopoAddNvLinks]: count required int. tclass required; a
      missing one is filled from the target's sysfs class
      (ncclTopoGetXmlFromGpu) -> warn, but that reads target, so with neither
      -> FAIL (NULL busid). A tclass of GPU type (0x03...) needs target,
      converted with busIdToInt64; a target GPU that is not in the file means
      the link is dropped -> warn. tclass 0x068001 -> link to the CPU; anything
      else -> link to the NVSwitch.
  A7  c2c [ncclTopoAddC2c]: count and bw required ints.
  A8  pcilink [ncclTopoAddPciLinks]: target required.
  A9  net [ncclTopoAddNic/ncclTopoAddNet, ncclTopoPopulateNics]: NCCL matches
      a net to a network-plugin device by name (xml.cc ncclTopoFillNet,
      xmlFindTagKv); a net without name is never matched, keeps no keep="1",
      and is trimmed (ncclTopoTrimXml) -> FAIL. dev, speed, port, gdr,
      maxconn, coll, net: ints when present (dev is overwritten with the
      plugin index). latency: float. guid: "0x" hex (old NCCL: sscanf "0x%lx";
      master strtoull(...,16)). rail/plane present -> warn: master fails with
      "Inconsistent rail/plane" unless they equal what it computes.
  A10 Duplicate pci busid, cpu numaid or net name -> warn: NCCL's lookups
      (xmlFindTagKv, ncclTopoGetNode) take the first.
"""
import re
import sys
import xml.etree.ElementTree as ET

# The sibling modules are imported from this directory; no bytecode is left
# in the source tree (tests/consumers is shipped as a whole).
sys.dont_write_bytecode = True
from nccl_xml_attrs import ElementChecks, pci_type  # noqa: E402
from nccl_xml_parser import (CLOSE, HANDLERS, KNOWN, TOPO_XML_MAX_NODES,  # noqa: E402
                             NcclParseError, NcclParser, path)

NODE_HEADROOM = 32


class Checker(ElementChecks):
    """One file: read twice (xml.etree, NCCL's parser), then every check."""

    def __init__(self, fname):
        ElementChecks.__init__(self)
        self.fname = fname

    # whole file ----------------------------------------------------------
    def prescan(self, text):
        """Name the XML constructs NCCL's parser cannot read (its own error is often a later one)."""
        body = re.sub(r"<!--.*?-->", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
        for pat, what in ((r"<\?", "<?...?> (XML declaration or processing instruction): NCCL reads it as an "
                           "element and fails on the '?' or swallows the rest of the file"),
                          (r"<!\[CDATA\[", "CDATA section: NCCL reads it as an element and skips what follows"),
                          (r"<!DOCTYPE", "<!DOCTYPE>: NCCL reads it as an element and skips what follows")):
            for m in re.finditer(pat, body):
                self.fails.append("line %d: %s [xml.cc xmlGetNode, xmlLoadSub]"
                                  % (body.count("\n", 0, m.start()) + 1, what))

    def run(self):
        try:
            with open(self.fname, "rb") as f:
                data = f.read()
        except (IOError, OSError) as e:
            self.fails.append("cannot read: %s" % e)
            return None
        try:
            ET.fromstring(data)
        except ET.ParseError as e:
            line = e.position[0] if hasattr(e, "position") else "?"
            self.fails.append("line %s: not well-formed XML: %s" % (line, e))
        self.prescan(data.decode("latin-1"))
        parser = NcclParser(data)
        try:
            parser.load_sub(None, HANDLERS[None])
        except NcclParseError as e:
            self.fails.append("line %d: NCCL's parser fails: %s" % (e.line, e.msg))
            return None
        for node, head, nhandlers in parser.ignored:
            where = path(head) if head is not None else "top level"
            if node.type == CLOSE:
                self.fails.append("line %d: stray </%s> at the top level" % (node.line, node.name))
            elif node.name in KNOWN:
                allowed = ", ".join("<%s>" % h for h in HANDLERS[head.name if head is not None else None]) or "nothing"
                self.fails.append("line %d: %s: <%s> is not allowed here (allowed: %s); NCCL ignores it with its "
                                  "subtree (\"Ignoring element %s\") [xml.cc xmlLoadSub, ncclTopoXmlLoad%s]"
                                  % (node.line, where, node.name, allowed, node.name,
                                     (head.name.capitalize() if head is not None else "System")))
            elif node.name.lower() in KNOWN:
                self.fails.append("line %d: %s: <%s> is ignored with its subtree: NCCL's element names are "
                                  "lowercase and compared with strcmp [xml.cc xmlLoadSub]" % (node.line, where, node.name))
            elif node.name.startswith("!") or node.name.startswith("?"):
                self.fails.append("line %d: %s: <%s ...> is read by NCCL as an element and ignored with what "
                                  "follows [xml.cc xmlGetNode]" % (node.line, where, node.name))
            else:
                self.warns.append("line %d: %s: unknown element <%s> is ignored with its subtree [xml.cc xmlLoadSub]"
                                  % (node.line, where, node.name))
        nodes = parser.nodes
        systems = [n for n in nodes if n.name == "system" and n.parent is None]
        if not systems:
            self.fails.append("no <system> at the top level: NCCL loads nothing from this file and detects the "
                              "topology itself [xml.cc ncclTopoGetXmlFromFile]")
        for extra in systems[1:]:
            self.fail(extra, "second <system>: ncclTopoGetSystemFromXml uses only the first (xml.h xmlFindTag)")
        if len(nodes) > TOPO_XML_MAX_NODES - NODE_HEADROOM:
            self.warns.append("%d elements: NCCL adds gpu/nvlink/nic/net nodes after loading and xmlAddNode fails "
                              "at %d [xml.h xmlAddNode]" % (len(nodes), TOPO_XML_MAX_NODES))
        gpu_busids = set()
        for n in nodes:
            self.check_capacity(n)
        for n in nodes:
            if n.name == "pci":
                self.check_pci(n, gpu_busids)
        for n in nodes:
            {"system": self.check_system, "cpu": self.check_cpu, "gpu": self.check_gpu,
             "c2c": self.check_c2c, "pcilink": self.check_pcilink, "net": self.check_net,
             "nvlink": lambda x: self.check_nvlink(x, gpu_busids)}.get(n.name, lambda x: None)(n)
        for name, key in (("pci", "busid"), ("cpu", "numaid"), ("net", "name")):
            seen = {}
            for n in nodes:
                if n.name == name and n.get(key) is not None:
                    v = n.get(key)
                    if v in seen:
                        self.warn(n, 'duplicate %s="%s" (first on line %d): NCCL\'s lookups take the first '
                                  '(xml.h xmlFindTagKv, topo.cc ncclTopoGetNode)' % (key, v, seen[v]))
                    else:
                        seen[v] = n.line
        return self.summary(nodes)

    @staticmethod
    def summary(nodes):
        gpus = nics = 0
        for n in nodes:
            if n.name == "pci":
                g = sum(1 for s in n.subs if s.name == "gpu")
                has_nic = any(s.name == "nic" for s in n.subs)
                t = pci_type(n.get("class"))
                gpus += g if g else (1 if t == "GPU" and not has_nic else 0)
                nics += 1 if (has_nic or (t == "NIC" and not g)) else 0
            elif n.name == "nic" and n.parent is not None and n.parent.name == "cpu":
                nics += 1
        count = lambda name: sum(1 for n in nodes if n.name == name)
        return ("%d gpus, %d nics, %d nets, %d cpus, %d pci, %d nvlinks, %d/%d xml nodes"
                % (gpus, nics, count("net"), count("cpu"), count("pci"), count("nvlink"), len(nodes),
                   TOPO_XML_MAX_NODES))


def main(argv):
    quiet = False
    files = []
    for a in argv[1:]:
        if a in ("-q", "--quiet"):
            quiet = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            files.append(a)
    if not files:
        sys.stderr.write("usage: check_nccl_xml.py [-q] FILE...\n")
        return 2
    bad = False
    for fname in files:
        c = Checker(fname)
        summary = c.run()
        if not quiet:
            for w in c.warns:
                print("warn: %s: %s" % (fname, w))
        if c.fails:
            bad = True
            for f in c.fails:
                print("FAIL: %s: %s" % (fname, f))
        else:
            print("ok: %s: %s" % (fname, summary))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))