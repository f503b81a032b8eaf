"""A copy of NCCL's own XML parser (xml.cc xmlGetChar .. xmlLoadSub, master),
byte for byte: the lexical rules L1-L8 and the element limits S4-S5 of
check_nccl_xml.py, which raise NcclParseError where NCCL fails. It builds the
tree of Node the checks run on, with NCCL's line numbers, and names each
node by its path (path()).
"""

MAX_STR_LEN = 255          # xml.h
MAX_ATTR_COUNT = 16        # xml.h
MAX_SUBS = 640             # xml.h
TOPO_XML_MAX_NODES = 256   # topo.h NCCL_TOPO_XML_MAX_NODES

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
