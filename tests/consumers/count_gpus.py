#!/usr/bin/env python3
"""Count the GPUs in a machine file the way a person counts them, without loom.

  count_gpus.py FILE

Prints the number of GPUs and exits 0; exits 1 with a message on stderr when
the file is neither of the forms below, or when its two ways of naming a GPU
disagree.

- hwloc XML (<topology>): the NVIDIA PCI display/3D controllers, i.e. PCIDev
  objects whose pci_type is class 03xx from vendor 10de ("0302 [10de:1db8]
  ..."). Cross-checked with the GPU OS devices: when the file has any, the
  distinct PCI devices they hang under must be exactly those (a GPU shows as
  several OS devices, cuda0, opencl0d0 and nvml0 for one P100, so the OS
  devices themselves are not counted). osdev_type is a bitmask in hwloc 3
  files (GPU = 4, COPROC = 8) and an enum in hwloc 2 (GPU = 1, COPROC = 5).
- NCCL topology XML (<system>): the GPUs NCCL's loader makes, i.e. the <pci>
  elements of class 0x03... (kvDictPciClass: "0x03" is GPU), together with
  any <pci> that holds a <gpu> element (NCCL's own dumps write both).
"""
import sys
import xml.etree.ElementTree as ET


def fail(msg):
    sys.stderr.write("count_gpus.py: %s\n" % msg)
    sys.exit(1)


def hwloc_gpus(root):
    version = root.get("version", "2.0")
    major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else 2
    pci_gpus, osdev_parents = set(), set()

    def is_gpu_osdev(obj):
        t = obj.get("osdev_type", "")
        if not t.isdigit():
            return False
        t = int(t)
        return bool(t & (4 | 8)) if major >= 3 else t in (1, 5)

    def walk(obj, pci_parent):
        kind = obj.get("type")
        if kind == "PCIDev":
            words = obj.get("pci_type", "").split()
            cls = words[0] if words else ""
            vendor = words[1].strip("[]").split(":")[0] if len(words) > 1 else ""
            if cls[:2] == "03" and vendor.lower() == "10de":
                pci_gpus.add(obj.get("pci_busid"))
            pci_parent = obj.get("pci_busid")
        elif kind == "OSDev" and is_gpu_osdev(obj) and pci_parent:
            osdev_parents.add(pci_parent)
        for child in obj.findall("object"):
            walk(child, pci_parent)

    for obj in root.findall("object"):
        walk(obj, None)
    if osdev_parents and osdev_parents != pci_gpus:
        fail("the GPU OS devices hang under %d PCI devices (%s), the NVIDIA 03xx PCI devices are %d (%s)" %
             (len(osdev_parents), ",".join(sorted(osdev_parents)), len(pci_gpus), ",".join(sorted(pci_gpus))))
    return len(pci_gpus)


def nccl_gpus(root):
    n = 0
    for pci in root.iter("pci"):
        if pci.get("class", "").lower().startswith("0x03") or pci.find("gpu") is not None:
            n += 1
    stray = sum(1 for p in root.iter() for g in p.findall("gpu") if p.tag != "pci")
    if stray:
        fail("%d <gpu> elements outside a <pci>" % stray)
    return n


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    try:
        root = ET.parse(argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        fail("%s: %s" % (argv[1], e))
    if root.tag == "topology":
        print(hwloc_gpus(root))
    elif root.tag == "system":
        print(nccl_gpus(root))
    else:
        fail("%s: <%s> is neither hwloc XML (<topology>) nor NCCL topology XML (<system>)" % (argv[1], root.tag))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
