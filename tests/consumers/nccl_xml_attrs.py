"""The per-element rules of check_nccl_xml.py: each element's room for the
attributes NCCL adds later (L9), and its attributes as topo.cc converts them
(A1-A10), with the C library's reading of numbers and PCI addresses
(strtol, busIdToInt64, kvConvertToInt). ElementChecks collects the FAIL and
warn lines.
"""
import re

from nccl_xml_parser import MAX_ATTR_COUNT, path

TOPO_XML_VERSION = 1       # xml.h NCCL_TOPO_XML_VERSION
CPU_SET_WORDS = 1024 // 32  # cpuset.h CPU_SET_N_U32 (CPU_SETSIZE 1024)

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


class ElementChecks(object):
    """The checks of one element at a time; fails and warns are their lines."""

    def __init__(self):
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
