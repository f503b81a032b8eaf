// topology.yaml (Slurm 25.05 and later), read with libyaml: see slurm_conf.hpp.
#include "lib/topo/slurm_conf.hpp"
#include "lib/topo/try.hpp"
#include "lib/util/fs.hpp"

#include <yaml.h>

#include <map>
#include <memory>

namespace loom::topo {

namespace {

// A YAML node as the reader needs it: a scalar, a sequence or a mapping, with
// the line it starts on (1-based).
struct Y {
	enum Kind { scalar, seq, map } kind = scalar;
	std::string value;
	std::vector<Y> items;          // a sequence's items; a mapping's values
	std::vector<std::string> keys; // a mapping's keys, items[i] the value of keys[i]
	size_t line = 0;

	const Y *get(const std::string &key) const;
};

const Y *Y::get(const std::string &key) const
{
	for (size_t i = 0; i < keys.size(); i++)
		if (keys[i] == key)
			return &items[i];
	return nullptr;
}

constexpr size_t max_depth = 64;
constexpr size_t max_nodes = 10'000'000;

struct Doc {
	yaml_document_t doc;
	bool loaded = false;
	~Doc()
	{
		if (loaded)
			yaml_document_delete(&doc);
	}
};

struct Parser {
	yaml_parser_t p;
	Parser() { yaml_parser_initialize(&p); }
	~Parser() { yaml_parser_delete(&p); }
};

expected<Y> convert(yaml_document_t *doc, yaml_node_t *n, const std::string &source, size_t depth, size_t &count)
{
	std::string where = source + ":" + std::to_string(n->start_mark.line + 1);
	if (depth > max_depth || ++count > max_nodes)
		return unexpected(where, "nested too deep or too large");
	Y y;
	y.line = n->start_mark.line + 1;
	switch (n->type) {
	case YAML_SCALAR_NODE:
		y.kind = Y::scalar;
		y.value.assign(reinterpret_cast<const char *>(n->data.scalar.value), n->data.scalar.length);
		return y;
	case YAML_SEQUENCE_NODE:
		y.kind = Y::seq;
		for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
			yaml_node_t *k = yaml_document_get_node(doc, *i);
			if (!k)
				return unexpected(where, "broken sequence");
			auto c = convert(doc, k, source, depth + 1, count);
			if (!c)
				return c;
			y.items.push_back(std::move(*c));
		}
		return y;
	case YAML_MAPPING_NODE:
		y.kind = Y::map;
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key),
				    *v = yaml_document_get_node(doc, p->value);
			if (!k || !v || k->type != YAML_SCALAR_NODE)
				return unexpected(where, "a mapping key must be a plain name");
			std::string key(reinterpret_cast<const char *>(k->data.scalar.value), k->data.scalar.length);
			if (y.get(key))
				return unexpected(source + ":" + std::to_string(k->start_mark.line + 1),
						  "key '" + key + "' given twice");
			auto c = convert(doc, v, source, depth + 1, count);
			if (!c)
				return c;
			y.keys.push_back(std::move(key));
			y.items.push_back(std::move(*c));
		}
		return y;
	default:
		return unexpected(where, "an empty YAML node");
	}
}

expected<Y> load(std::string_view text, const std::string &source)
{
	Parser parser;
	yaml_parser_set_input_string(&parser.p, reinterpret_cast<const unsigned char *>(text.data()), text.size());
	Doc d;
	if (!yaml_parser_load(&parser.p, &d.doc))
		return unexpected(source + ":" + std::to_string(parser.p.problem_mark.line + 1),
				  std::string("not YAML: ") + (parser.p.problem ? parser.p.problem : "parse error"));
	d.loaded = true;
	yaml_node_t *root = yaml_document_get_root_node(&d.doc);
	if (!root)
		return unexpected(source, "an empty YAML file");
	size_t count = 0;
	return convert(&d.doc, root, source, 0, count);
}

std::string at(const std::string &source, const Y &y) { return source + ":" + std::to_string(y.line); }

// A scalar field; "" when absent. A list where a string is wanted is an error.
expected<std::string> text_of(const Y &m, const char *key, const std::string &source)
{
	const Y *v = m.get(key);
	if (!v)
		return std::string();
	if (v->kind != Y::scalar)
		return unexpected(at(source, *v), std::string(key) + ": expected a string");
	return v->value;
}

status only_keys(const Y &m, std::initializer_list<const char *> keys, const std::string &source, const char *what)
{
	for (size_t i = 0; i < m.keys.size(); i++) {
		bool known = false;
		for (const char *want : keys)
			known = known || m.keys[i] == want;
		if (!known)
			return unexpected(at(source, m.items[i]), "unknown key '" + m.keys[i] + "' in " + what);
	}
	return ok();
}

expected<std::vector<SwitchRecord>> switches_of(const Y &tree, const std::string &source)
{
	const Y *sw = tree.get("switches");
	if (!sw || sw->kind != Y::seq)
		return unexpected(at(source, tree), "tree: expected a list 'switches'");
	std::vector<SwitchRecord> out;
	for (const Y &s : sw->items) {
		if (s.kind != Y::map)
			return unexpected(at(source, s), "a switch must be a mapping (switch:, children:, nodes:)");
		LOOM_CHECK(only_keys(s, {"switch", "children", "nodes"}, source, "a switch"));
		SwitchRecord r;
		r.where = at(source, s);
		LOOM_TRY(name, text_of(s, "switch", source));
		LOOM_TRY(kids, text_of(s, "children", source));
		LOOM_TRY(nodes, text_of(s, "nodes", source));
		if (name.empty())
			return unexpected(r.where, "a switch without 'switch:' (its name)");
		r.name = name;
		r.switches = kids;
		r.nodes = nodes;
		out.push_back(std::move(r));
	}
	return out;
}

expected<std::vector<BlockRecord>> blocks_of(const Y &block, const std::string &source, std::vector<int> &sizes,
					     std::string &sizes_where)
{
	if (const Y *bs = block.get("block_sizes")) {
		sizes_where = at(source, *bs);
		std::vector<std::string> words;
		if (bs->kind == Y::seq) {
			for (const Y &v : bs->items)
				words.push_back(v.kind == Y::scalar ? v.value : "?");
		} else if (bs->kind == Y::scalar) {
			for (size_t p = 0; p <= bs->value.size();) {
				size_t c = bs->value.find(',', p);
				words.push_back(
					bs->value.substr(p, c == std::string::npos ? std::string::npos : c - p));
				if (c == std::string::npos)
					break;
				p = c + 1;
			}
		}
		for (const std::string &w : words) {
			char *end = nullptr;
			long n = std::strtol(w.c_str(), &end, 10);
			if (w.empty() || *end || n <= 0 || n > (1 << 24))
				return unexpected(sizes_where, "block_sizes: not a node count: '" + shown(w) + "'");
			sizes.push_back(static_cast<int>(n));
		}
	}
	const Y *bl = block.get("blocks");
	if (!bl || bl->kind != Y::seq)
		return unexpected(at(source, block), "block: expected a list 'blocks'");
	std::vector<BlockRecord> out;
	for (const Y &b : bl->items) {
		if (b.kind != Y::map)
			return unexpected(at(source, b), "a block must be a mapping (block:, nodes:)");
		LOOM_CHECK(only_keys(b, {"block", "nodes"}, source, "a block"));
		LOOM_TRY(name, text_of(b, "block", source));
		LOOM_TRY(nodes, text_of(b, "nodes", source));
		if (name.empty())
			return unexpected(at(source, b), "a block without 'block:' (its name)");
		out.push_back(BlockRecord{name, nodes, at(source, b)});
	}
	return out;
}

} // namespace

expected<ClusterSpec> parse_topology_yaml(std::string_view text, const std::string &source)
{
	LOOM_TRY(root, load(text, source));
	if (root.kind != Y::seq || root.items.empty())
		return unexpected(at(source, root), "expected a list of topologies (- topology: NAME ...)");
	const Y *chosen = nullptr;
	std::vector<const Y *> block_topologies;
	std::map<std::string, size_t> names;
	for (const Y &t : root.items) {
		if (t.kind != Y::map)
			return unexpected(
				at(source, t),
				"a topology must be a mapping (topology:, cluster_default:, tree:|block:|flat:)");
		LOOM_CHECK(only_keys(t, {"topology", "cluster_default", "tree", "block", "flat", "ring", "torus3d"},
				     source, "a topology"));
		LOOM_TRY(name, text_of(t, "topology", source));
		if (name.empty())
			return unexpected(at(source, t), "a topology without 'topology:' (its name)");
		if (!names.emplace(name, t.line).second)
			return unexpected(at(source, t), "topology '" + name + "' given twice");
		int kinds = (t.get("tree") != nullptr) + (t.get("block") != nullptr) + (t.get("flat") != nullptr) +
			    (t.get("ring") != nullptr) + (t.get("torus3d") != nullptr);
		if (kinds != 1)
			return unexpected(at(source, t), "topology '" + name +
								 "' must have exactly one of tree, block, flat, "
								 "ring, torus3d");
		LOOM_TRY(def, text_of(t, "cluster_default", source));
		if (!def.empty() && def != "true" && def != "false")
			return unexpected(at(source, t),
					  "cluster_default: expected true or false, not '" + shown(def) + "'");
		if (def == "true" && !chosen)
			chosen = &t;
		if (t.get("block"))
			block_topologies.push_back(&t);
	}
	if (!chosen)
		chosen = &root.items[0]; // Slurm's default without cluster_default: the first
	std::string name = chosen->get("topology")->value;
	ClusterSpec spec;
	if (const Y *tree = chosen->get("tree")) {
		LOOM_TRY(sw, switches_of(*tree, source));
		LOOM_TRY(s, tree_spec(sw, source));
		spec = std::move(s);
	} else if (const Y *block = chosen->get("block")) {
		std::vector<int> sizes;
		std::string sizes_where = at(source, *block);
		LOOM_TRY(bl, blocks_of(*block, source, sizes, sizes_where));
		LOOM_TRY(s, block_spec(bl, sizes, sizes_where, source));
		return s;
	} else if (chosen->get("flat")) {
		return spec; // no fabric: every node alone
	} else {
		return unexpected(at(source, *chosen),
				  "topology '" + name +
					  "' is a ring or torus3d, which loom does not "
					  "model (give cluster_default to a tree or block topology)");
	}
	// The cluster's default is a tree: blocks of the other topologies are its
	// NVLink domains (an NVL72 rack is a block and sits under a switch).
	std::map<std::string, size_t> node_at;
	for (size_t i = 0; i < spec.nodes.size(); i++)
		node_at[spec.nodes[i].name] = i;
	for (const Y *t : block_topologies) {
		std::vector<int> sizes;
		std::string sizes_where;
		LOOM_TRY(bl, blocks_of(*t->get("block"), source, sizes, sizes_where));
		LOOM_TRY(bspec, block_spec(bl, sizes, sizes_where.empty() ? at(source, *t) : sizes_where, source));
		for (const NvlinkDomainSpec &v : bspec.nvlink_domains)
			spec.nvlink_domains.push_back(v);
		for (const NodeSpec &n : bspec.nodes) {
			auto it = node_at.find(n.name);
			if (it == node_at.end())
				return unexpected(
					n.where, "node '" + n.name + "' of topology '" + t->get("topology")->value +
							 "' is under no switch of the default topology '" + name + "'");
			NodeSpec &into = spec.nodes[it->second];
			if (!into.nvlink_domain.empty() && into.nvlink_domain != n.nvlink_domain)
				return unexpected(n.where, "node '" + n.name + "' is in two blocks: '" +
								   into.nvlink_domain + "' and '" + n.nvlink_domain +
								   "'");
			into.nvlink_domain = n.nvlink_domain;
		}
	}
	return spec;
}

namespace {

// A YAML double-quoted scalar.
std::string yq(const std::string &s)
{
	std::string out = "\"";
	for (char ch : s) {
		if (ch == '"' || ch == '\\')
			out += '\\';
		out += ch;
	}
	return out + "\"";
}

} // namespace

std::string write_topology_yaml(const Cluster &c)
{
	std::string out = "# topology.yaml (Slurm 25.05 and later), written by loom: the switch tree as\n"
			  "# topology \"fabric\" (tree), the NVLink domains as topology \"nvlink\" (block)\n---\n";
	std::vector<std::string> skipped;
	auto switches = tree_switches(c, &skipped);
	if (!switches.empty()) {
		out += "- topology: fabric\n  cluster_default: true\n  tree:\n    switches:\n";
		for (const TreeSwitch &sw : switches) {
			if (!sw.comment.empty())
				out += "      # " + sw.comment + "\n";
			out += "      - switch: " + yq(sw.name) + "\n";
			if (!sw.nodes.empty())
				out += "        nodes: " + yq(sw.nodes) + "\n";
			if (!sw.children.empty())
				out += "        children: " + yq(sw.children) + "\n";
		}
		if (!skipped.empty())
			out += "    # left out, no nodes below them: " + join(skipped, ", ") + "\n";
	}
	std::vector<int> sizes;
	if (auto blocks = slurm_blocks(c, &sizes)) {
		out += std::string("- topology: nvlink\n  cluster_default: ") + (switches.empty() ? "true" : "false") +
		       "\n  block:\n    block_sizes:\n";
		for (int v : sizes)
			out += "      - " + std::to_string(v) + "\n";
		out += "    blocks:\n";
		for (const SlurmBlock &b : *blocks)
			out += "      - block: " + yq(b.name) + "\n        nodes: " + yq(b.nodes) + "\n";
	}
	if (switches.empty() && c.nvlink_domains.empty())
		out += "- topology: flat\n  cluster_default: true\n  flat: true\n";
	return out;
}

} // namespace loom::topo
