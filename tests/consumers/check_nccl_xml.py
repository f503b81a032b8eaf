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

MAX_STR_LEN = 255          # xml.h
MAX_ATTR_COUNT = 16        # xml.h
MAX_SUBS = 640             # xml.h
TOPO_XML_MAX_NODES = 256   # topo.h NCCL_TOPO_XML_MAX_NODES
NODE_HEADROOM = 32
TOPO_XML_VERSION = 1       # xml.h NCCL_TOPO_XML_VERSION
CPU_SET_WORDS = 1024 // 32  # cpuset.h CPU_SET_N_U32 (CPU_SETSIZE 1024)

NONE, OPEN, CLOSE, SINGLE = 0, 1, 2, 3

# xml.cc: ncclTopoGetXmlFromFile and ncclTopoXmlLoad* handler tables
HANDLERS = {
    None: ("system",),
    "system": ("cpu",),
    "cpu": ("pci", "nic"),
    "pci": ("pci", "gpu", "nic", "pcilink"),
    "gpu": ("nvlink", "c2c"),
    "nic": ("net",),
    "net": (), "nvlink": (), "c2c": (), "pcilink": (),
}
KNOWN = set(HANDLERS) - {None}

# Attributes NCCL may add to an element after loading (see L9).
ADDED_LATER = {
    "cpu": ("host_hash", "affinity", "arch", "vendor", "familyid", "modelid"),
    "pci": ("class", "vendor", "device", "subsystem_vendor", "subsystem_device", "link_speed", "link_width"),
    "gpu": ("dev", "sm", "keep", "rank", "gdr", "mlopart"),
    "nvlink": ("tclass",),
    "net": ("keep", "dev", "latency", "speed", "port", "guid", "rail", "plane", "maxconn", "gdr", "net"),
}

# topo.cc kvDictPciClass (prefix match, first hit wins; default PCI)
PCI_CLASS_DICT = (("0x060400", "PCI"), ("0x080100", "PCI"), ("0x068000", "NVS"),
                  ("0x068001", "CPU"), ("0x03", "GPU"), ("0x02", "NIC"))
# topo.cc kvDictPciGen (prefix match; default 60)
PCI_GEN_DICT = (("2.5 GT/s", 15), ("5 GT/s", 30), ("8 GT/s", 60), ("16 GT/s", 120), ("32 GT/s", 240),
                ("2.5 GT/s PCIe", 15), ("5.0 GT/s PCIe", 30), ("8.0 GT/s PCIe", 60),
                ("16.0 GT/s PCIe", 120), ("32.0 GT/s PCIe", 240), ("64.0 GT/s PCIe", 480))
CPU_ARCH_DICT = ("x86_64", "arm64", "ppc64")
CPU_VENDOR_DICT = ("GenuineIntel", "AuthenticAMD", "CentaurHauls", "  Shanghai  ")

BUSID_RE = re.compile(r"^([0-9a-f]{4,}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-9a-f])$")
BUSID_ANYCASE_RE = re.compile(r"^([0-9a-fA-F]{4,}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-9a-fA-F])$")
AFFINITY_RE = re.compile(r"^[0-9a-fA-F]{1,8}(,[0-9a-fA-F]{1,8})*$")
CLASS_RE = re.compile(r"^0x[0-9a-f]{6}$")
GUID_RE = re.compile(r"^0x[0-9a-fA-F]{1,16}$")
FLOAT_RE = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def kv_prefix(value, table, default):
    """topo.cc kvConvertToInt: strncmp(str, d->str, strlen(d->str))."""
    for key, val in table:
        if value.startswith(key):
            return val
    return default


def pci_type(cls):
    return kv_prefix(cls or "", PCI_CLASS_DICT, "PCI")


def c_strtol(s, base=0):
    """strtol/strtoul: returns (value, number of characters used); (0, 0) if none."""
    i, n = 0, len(s)
    while i < n and s[i] in " \t\n\v\f\r":
        i += 1
    neg = False
    if i < n and s[i] in "+-":
        neg = s[i] == "-"
        i += 1
    hexd = "0123456789abcdefABCDEF"
    if base in (0, 16) and s[i:i + 2] in ("0x", "0X") and i + 2 < n and s[i + 2] in hexd:
        base, i = 16, i + 2
    elif base == 0:
        base = 8 if i < n and s[i] == "0" else 10
    digits = "0123456789abcdef"[:base]
    j, v = i, 0
    while j < n and s[j].lower() in digits:
        v = v * base + int(s[j], base)
        j += 1
    if j == i:
        return 0, 0
    return (-v if neg else v), j


def bus_id_to_int64(s):
    """utils.cc busIdToInt64."""
    hexs = ""
    for c in s:
        if len(hexs) >= 16:
            break
        if c in ".:":
            continue
        if c in "0123456789abcdefABCDEF":
            hexs += c
        else:
            break
    return int(hexs, 16) if hexs else 0


class NcclParseError(Exception):
    def __init__(self, line, msg):
        Exception.__init__(self, msg)
        self.line = line
        self.msg = msg


class Node(object):
    def __init__(self):
        self.name = ""
        self.attrs = []        # [(key, value)], at most MAX_ATTR_COUNT
        self.dropped = []      # keys past MAX_ATTR_COUNT
        self.type = NONE
        self.line = 0
        self.parent = None
        self.subs = []
        self.quotes = set()

    def get(self, key):
        for k, v in self.attrs:   # xml.h xmlGetAttrIndex: first match
            if k == key:
                return v
        return None


class NcclParser(object):
    """A copy of xml.cc's parser: xmlGetChar .. xmlLoadSub (master)."""

    def __init__(self, data):
        self.data = data.decode("latin-1")   # one char per byte, as fread does
        self.pos = 0
        self.line = 1
        self.max_index = 0
        self.nodes = []        # kept nodes, in file order
        self.ignored = []      # (node, parent, nHandlers)

    def err(self, msg):
        raise NcclParseError(self.line, msg)

    def getc(self):
        if self.pos >= len(self.data):
            self.err("XML Parse : Unexpected EOF [xml.cc xmlGetChar]")
        c = self.data[self.pos]
        self.pos += 1
        if c == "\n":
            self.line += 1
        return c

    def get_value(self, node):
        c = self.getc()
        if c != '"' and c != "'":
            self.err("XML Parse : Expected (double) quote, got %r [xml.cc xmlGetValue]" % c)
        quote = c
        node.quotes.add(quote)
        buf = []
        while True:
            c = self.getc()
            if len(buf) == MAX_STR_LEN - 1:
                self.err("value %r... too long (max %d chars) [xml.cc xmlGetValue]"
                         % ("".join(buf[:20]), MAX_STR_LEN - 2))
            buf.append(c)
            if c == quote:
                break
        return "".join(buf[:-1]), self.getc()

    def get_token(self, node, want_value):
        buf = []
        while True:
            c = self.getc()
            if c == "=":
                if not want_value:
                    self.err("XML Parse : Unexpected value with name %r [xml.cc xmlGetToken]" % "".join(buf))
                value, last = self.get_value(node)
                return "".join(buf), value, last
            if len(buf) == MAX_STR_LEN - 1:
                self.err("name %r... too long (max %d chars) [xml.cc xmlGetToken]"
                         % ("".join(buf[:20]), MAX_STR_LEN - 2))
            buf.append(c)
            if c in " >/\n\r":
                break
        return "".join(buf[:-1]), "", c

    def skip_comment(self, start, nxt):
        end = "..."
        for ch in start + nxt:
            end = end[1:] + ch
        while end != "-->":
            if self.pos >= len(self.data):
                self.err("XML Parse error : unterminated comment [xml.cc xmlSkipComment]")
            end = end[1:] + self.getc()

    def get_node(self):
        node = Node()
        c = " "
        while c in " \n\r":
            if self.pos >= len(self.data):
                return node                      # NODE_TYPE_NONE
            c = self.getc()
        node.line = self.line
        if c != "<":
            what = {"\t": "TAB", "\ufeff": "BOM", "\xef": "UTF-8 BOM/non-ASCII byte"}.get(c, repr(c))
            self.err("XML Parse error : expecting '<', got %s (only ' ', '\\n', '\\r' may appear between "
                     "tags: no text, TABs or CDATA) [xml.cc xmlGetNode]" % what)
        node.name, _, c = self.get_token(node, False)
        if node.name.startswith("!--"):
            self.skip_comment(node.name[3:], c)
            return self.get_node()
        if node.name == "" and c == "/":
            node.type = CLOSE
            node.name, _, c = self.get_token(node, False)
            if c != ">":
                self.err("XML Parse error : unexpected trailing %r in closing tag %s [xml.cc xmlGetNode]"
                         % (c, node.name))
            return node
        node.type = OPEN
        while c == " ":
            key, value, c = self.get_token(node, True)
            if len(node.attrs) == MAX_ATTR_COUNT:
                node.dropped.append(key)
            else:
                node.attrs.append((key, value))
        if c == "/":
            node.type = SINGLE
            _, _, c = self.get_token(node, False)
        if c != ">":
            hint = " (a start tag must be on one line, its attributes separated by single spaces)" \
                if c in "\n\r\t" else ""
            self.err("XML Parse : expected >, got %r in <%s>%s [xml.cc xmlGetNode]" % (c, node.name, hint))
        return node

    def check_room(self):
        if self.max_index == TOPO_XML_MAX_NODES:
            self.err("Error : XML parser is limited to %d nodes [xml.cc xmlLoadSub, topo.h "
                     "NCCL_TOPO_XML_MAX_NODES]" % TOPO_XML_MAX_NODES)

    def load_sub(self, head, handlers):
        if head is not None and head.type == SINGLE:
            return
        while True:
            self.check_room()
            node = self.get_node()
            if node.type == NONE:
                if head is not None:
                    self.err("XML Parse : unterminated %s [xml.cc xmlLoadSub]" % head.name)
                return
            if head is not None and node.type == CLOSE:
                if node.name != head.name:
                    self.err("XML Mismatch : %s / %s [xml.cc xmlLoadSub]" % (head.name, node.name))
                return
            if node.name in handlers:
                if head is not None:
                    if len(head.subs) == MAX_SUBS:
                        self.err("Error : XML parser is limited to %d subnodes [xml.cc xmlLoadSub]" % MAX_SUBS)
                    head.subs.append(node)
                node.parent = head
                self.max_index += 1
                self.nodes.append(node)
                self.load_sub(node, HANDLERS[node.name])
            else:
                node.parent = head
                self.ignored.append((node, head, len(handlers)))
                self.skip_ignored(node)

    def skip_ignored(self, head):
        # xmlLoadSub(file, xml, node, NULL, 0) on a node that was not kept: it reads
        # into the same slot as head, so any closing tag ends it.
        if head.type == SINGLE:
            return
        while True:
            self.check_room()
            node = self.get_node()
            if node.type == NONE:
                self.err("XML Parse : unterminated %s [xml.cc xmlLoadSub]" % head.name)
            if node.type == CLOSE:
                return
            self.skip_ignored(node)


def seg(node):
    key = {"cpu": "numaid", "pci": "busid", "gpu": "dev", "net": "name", "nvlink": "target",
           "pcilink": "target"}.get(node.name)
    if key and node.get(key) is not None:
        return "%s[%s=%s]" % (node.name, key, node.get(key))
    if node.parent is not None:
        same = [s for s in node.parent.subs if s.name == node.name]
        if len(same) > 1 and node in same:
            return "%s[%d]" % (node.name, same.index(node) + 1)
    return node.name


def path(node):
    parts = []
    while node is not None:
        parts.append(seg(node))
        node = node.parent
    return "/" + "/".join(reversed(parts))


class Checker(object):
    def __init__(self, fname):
        self.fname = fname
        self.fails = []
        self.warns = []

    def fail(self, node, msg, line=None):
        where = "line %d: %s" % (node.line, path(node)) if node is not None else "line %s" % line
        self.fails.append("%s: %s" % (where, msg))

    def warn(self, node, msg):
        self.warns.append("line %d: %s: %s" % (node.line, path(node), msg))

    # attribute helpers ---------------------------------------------------
    def need(self, node, key, src, hint=None):
        v = node.get(key)
        if v is None:
            self.fail(node, 'missing required attribute %s ("Attribute %s of node %s not found") [%s]%s'
                      % (key, key, node.name, src, "; " + hint if hint else ""))
        return v

    def int_attr(self, node, key, src, required=False, empty_ok=None, base=0):
        v = self.need(node, key, src) if required else node.get(key)
        if v is None:
            return None
        val, used = c_strtol(v, base)
        if used == 0:
            if empty_ok is not None and v.strip() == "":
                self.warn(node, '%s="" reads as 0, %s [%s]' % (key, empty_ok, src))
                return 0
            self.fail(node, '%s="%s" is not a number: NCCL\'s strtol(...,%d) reads 0 [%s]' % (key, v, base, src))
            return None
        rest = v[used:]
        s = v.strip().lstrip("+-")
        if base == 0 and len(s) > 1 and s[0] == "0" and s[1] not in "xX" and s != "0" * len(s):
            self.warn(node, '%s="%s" has a leading 0: strtol(...,0) reads it as octal, = %d [%s]'
                      % (key, v, val, src))
        elif rest.strip():
            self.warn(node, '%s="%s": NCCL reads %d and ignores "%s" (strtol) [%s]' % (key, v, val, rest, src))
        return val

    # per element -----------------------------------------------------------
    def check_capacity(self, node):
        n = len(node.attrs)
        if node.dropped:
            self.fail(node, "%d attributes: NCCL keeps the first %d and drops %s (\"Ignoring extra attributes\") "
                      "[xml.cc xmlGetNode, xml.h MAX_ATTR_COUNT]"
                      % (n + len(node.dropped), MAX_ATTR_COUNT, ", ".join(node.dropped)))
            return
        empty = sum(1 for k, _ in node.attrs if k == "")
        later = [k for k in ADDED_LATER.get(node.name, ()) if node.get(k) is None]
        if n + len(later) > MAX_ATTR_COUNT:
            self.fail(node, "%d attributes%s, and NCCL may add %s: more than %d -> \"too many XML attributes\" "
                      "[xml.h xmlGetNextAttrIndex]"
                      % (n, " (%d of them empty, from extra spaces in the tag)" % empty if empty else "",
                         " ".join(later), MAX_ATTR_COUNT))
        if "'" in node.quotes:
            self.fail(node, "single-quoted attribute value: old NCCL reads it up to the next '\"' "
                      "[xml.cc xmlGetValue, before 2.2x]")
        for k, v in node.attrs:
            if "&" in v:
                self.warn(node, '%s="%s": NCCL does not decode XML entities, it sees the text as written '
                          '[xml.cc xmlGetValue]' % (k, v))
            if "\n" in v or "\r" in v or "\t" in v:
                self.warn(node, "%s has a newline or TAB in its value; NCCL keeps it as is, XML readers "
                          "turn it into a space" % k)

    def check_system(self, node):
        src = "xml.cc ncclTopoXmlLoadSystem"
        v = self.int_attr(node, "version", src, required=True)
        if v is not None and v != TOPO_XML_VERSION:
            self.fail(node, 'version="%s": "XML Topology has wrong version %d, %d needed" [%s]'
                      % (node.get("version"), v, TOPO_XML_VERSION, src))
        if not [s for s in node.subs if s.name == "cpu"]:
            self.warn(node, "no <cpu>: NCCL detects the whole topology itself")

    def check_cpu(self, node):
        src = "topo.cc ncclTopoAddCpu"
        self.int_attr(node, "numaid", src, required=True)
        aff = node.get("affinity")
        if aff is not None:
            if not AFFINITY_RE.match(aff):
                self.fail(node, 'affinity="%s": must be comma-separated 32-bit hex words without 0x, like '
                          'sysfs cpumap (cpuset.h ncclStrToCpuset)' % aff)
            elif aff.count(",") + 1 > CPU_SET_WORDS:
                self.fail(node, 'affinity has %d words, more than CPU_SETSIZE/32 = %d: master drops the lowest '
                          'CPUs, old NCCL writes out of bounds (cpuset.h ncclStrToCpuset)'
                          % (aff.count(",") + 1, CPU_SET_WORDS))
        self.int_attr(node, "affinity_offset", src)
        arch = self.need(node, "arch", src, "NCCL fills it in only for the CPU above a local GPU/NIC "
                         "(xml.cc ncclTopoGetXmlFromCpu)")
        if arch is None:
            return
        if not any(arch.startswith(a) for a in CPU_ARCH_DICT):
            self.warn(node, 'arch="%s" is none of %s: NCCL uses UNDEF [%s, kvDictCpuArch]'
                      % (arch, "/".join(CPU_ARCH_DICT), src))
        if not arch.startswith("x86_64"):
            return
        vendor = self.need(node, "vendor", src)
        if vendor is None:
            return
        if vendor.startswith("GenuineIntel") or vendor.startswith("CentaurHauls") or vendor.startswith("  Shanghai  "):
            self.int_attr(node, "familyid", src, required=True)
            self.int_attr(node, "modelid", src, required=True)
        elif vendor.startswith("AuthenticAMD"):
            self.int_attr(node, "familyid", src, required=True)
        else:
            self.warn(node, 'vendor="%s" is none of %s: NCCL uses 0 [%s, kvDictCpuVendor]'
                      % (vendor, "/".join(v.strip() for v in CPU_VENDOR_DICT), src))

    def check_busid(self, node, key, value, src):
        if BUSID_RE.match(value):
            if len(value) > 12:
                self.warn(node, '%s="%s": a PCI domain over 4 digits; getPciPath copies only 12 characters '
                          '[xml.cc getPciPath]' % (key, value))
            return True
        if BUSID_ANYCASE_RE.match(value):
            self.fail(node, '%s="%s" has uppercase hex: NCCL matches busids with strcmp against the lowercase '
                      'form it prints (utils.cc int64ToBusId; xml.cc ncclTopoGetPciNode) [%s]' % (key, value, src))
        else:
            self.fail(node, '%s="%s" is not a PCI address "dddd:bb:dd.f"; busIdToInt64 reads it as 0x%x '
                      '(utils.cc busIdToInt64) [%s]' % (key, value, bus_id_to_int64(value), src))
        return False

    def check_pci(self, node, gpu_busids):
        src = "topo.cc ncclTopoAddPci"
        busid = self.need(node, "busid", src)
        if busid is not None:
            self.check_busid(node, "busid", busid, src)
        cls = self.need(node, "class", src)
        if cls is not None and not CLASS_RE.match(cls):
            self.warn(node, 'class="%s" is not "0x" + 6 lowercase hex digits as sysfs writes it; NCCL matches '
                      'it by prefix and reads it as %s [%s, kvDictPciClass]' % (cls, pci_type(cls), src))
        self.int_attr(node, "link_width", src, required=True, empty_ok="which NCCL treats as 16")
        speed = self.need(node, "link_speed", src, 'NCCL fills it in only on the local GPU/NIC sysfs path, '
                          'as "" (= 8 GT/s) for devices not in sysfs (xml.cc ncclTopoGetXmlFromSys)')
        if speed is not None and kv_prefix(speed, PCI_GEN_DICT, None) is None:
            self.warn(node, 'link_speed="%s" is not in kvDictPciGen: NCCL falls back to 8 GT/s (60) [%s]'
                      % (speed, src))
        for k in ("vendor", "device", "subsystem_vendor", "subsystem_device"):
            self.int_attr(node, k, "topo.cc ncclTopoGetIntDevice")

        ptype = pci_type(cls)
        gpus = [s for s in node.subs if s.name == "gpu"]
        nics = [s for s in node.subs if s.name == "nic"]
        if nics:
            ptype = "NIC"
            for extra in nics[1:]:
                self.fail(extra, "second <nic> in one <pci>: ncclTopoAddPci uses only the first "
                          "(xml.h xmlGetSub) [%s]" % src)
        for sub in node.subs:
            if sub.name == "pci" and ptype != "PCI":
                self.fail(sub, "<pci> inside a %s-type <pci> (class %s%s) is dropped: ncclTopoAddPci reads "
                          "child pci only for PCI-type parents [%s]"
                          % (ptype, cls, ", with a <nic>" if nics else "", src))
            if sub.name == "pcilink" and ptype != "PCI":
                self.fail(sub, "<pcilink> inside a %s-type <pci>: \"Add PCI Link error : could not find PCI SW\" "
                          "[topo.cc ncclTopoAddPciLinks]" % ptype)
        if gpus and ptype == "PCI":
            self.fail(node, '<gpu> inside a PCI-type <pci> (class "%s"): master reads it as a pci -> "Attribute '
                      'class of node gpu not found"; a GPU\'s pci needs class 0x03xxxx [%s]' % (cls, src))
        if len(gpus) > 1:
            self.warn(node, "%d <gpu> in one <pci>: master treats them as MLOPart partitions, old NCCL uses "
                      "only the first [%s]" % (len(gpus), src))
        if (gpus or ptype == "GPU") and busid is not None and BUSID_ANYCASE_RE.match(busid):
            if bus_id_to_int64(busid) & 0x3:
                self.fail(node, 'GPU busid "%s": function bits 0-1 must be 0 ("non-zero bits in MLOPart mask") '
                          '[topo.cc ncclTopoCheckMloPartBusId]' % busid)
        if gpus or ptype == "GPU":
            if busid is not None:
                gpu_busids.add(bus_id_to_int64(busid))

    def check_gpu(self, node):
        src = "topo.cc ncclTopoAddGpu"
        for k in ("dev", "sm"):
            if node.get(k) is None:
                self.warn(node, "no %s: NCCL asks NVML for it (xml.cc ncclTopoGetXmlFromGpu)" % k)
        dev = self.int_attr(node, "dev", src)
        if dev == -1:
            self.warn(node, 'dev="-1": ncclTopoGetXmlFromGpu skips this GPU')
        self.int_attr(node, "sm", src)
        self.int_attr(node, "rank", src)
        self.int_attr(node, "gdr", src)
        mlo = self.int_attr(node, "mlopart", "topo.cc ncclTopoAddGpuSub")
        if mlo is not None and mlo >= 2:
            self.fail(node, 'mlopart="%s": "MLOPart index out of range (max 1)" [topo.cc ncclTopoAddGpuSub]'
                      % node.get("mlopart"))

    def check_nvlink(self, node, gpu_busids):
        src = "topo.cc ncclTopoAddNvLinks"
        count = self.int_attr(node, "count", src, required=True)
        if count is not None and count <= 0:
            self.warn(node, 'count="%s": a link of zero bandwidth [%s]' % (node.get("count"), src))
        tclass = node.get("tclass")
        target = node.get("target")
        if tclass is None:
            if target is None:
                self.fail(node, "<nvlink> with neither tclass nor target: NCCL fills tclass from the target's "
                          "sysfs class and reads a NULL busid (xml.cc ncclTopoGetXmlFromGpu)")
                return
            self.warn(node, "no tclass: NCCL reads it from the target's sysfs class, 0x068000 (NVSwitch) when "
                      "the target is not visible (xml.cc ncclTopoGetXmlFromGpu)")
            return
        ttype = pci_type(tclass)
        if ttype == "GPU":
            target = self.need(node, "target", src, "needed because tclass is a GPU class")
            if target is None:
                return
            if not BUSID_ANYCASE_RE.match(target):
                self.warn(node, 'target="%s" is not a PCI address; busIdToInt64 reads 0x%x' %
                          (target, bus_id_to_int64(target)))
            if bus_id_to_int64(target) not in gpu_busids:
                self.warn(node, 'target GPU "%s" is not in the file: NCCL drops this link [%s]' % (target, src))

    def check_c2c(self, node):
        src = "topo.cc ncclTopoAddC2c"
        self.int_attr(node, "count", src, required=True)
        self.int_attr(node, "bw", src, required=True)

    def check_pcilink(self, node):
        t = self.need(node, "target", "topo.cc ncclTopoAddPciLinks")
        if t is not None and not BUSID_ANYCASE_RE.match(t):
            self.warn(node, 'target="%s" is not a PCI address; busIdToInt64 reads 0x%x' % (t, bus_id_to_int64(t)))

    def check_net(self, node):
        src = "topo.cc ncclTopoAddNet"
        if node.get("name") is None:
            self.fail(node, "<net> without name: NCCL matches nets to network-plugin devices by name "
                      "(xml.cc ncclTopoFillNet), so this one gets no keep=\"1\" and is trimmed (ncclTopoTrimXml)")
        for k in ("dev", "speed", "port", "gdr", "maxconn", "coll", "net"):
            self.int_attr(node, k, src)
        lat = node.get("latency")
        if lat is not None and not FLOAT_RE.match(lat):
            self.warn(node, 'latency="%s" is not a number: strtof reads 0 [%s]' % (lat, src))
        guid = node.get("guid")
        if guid is not None and not GUID_RE.match(guid):
            self.warn(node, 'guid="%s" is not "0x" + hex: old NCCL uses sscanf("0x%%lx"), master strtoull(...,16) '
                      '[topo.cc ncclTopoAddNetAsic]' % guid)
        for k in ("rail", "plane"):
            if node.get(k) is not None:
                self.warn(node, '%s="%s" in the file: master fails with "Inconsistent rail/plane" unless it equals '
                          'the value NCCL computes [topo.cc ncclTopoPopulateNics]' % (k, node.get(k)))

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
