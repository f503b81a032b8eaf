#include "lib/health/kernel_log.hpp"

#include "lib/health/error_kinds.hpp"
#include "lib/util/fs.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace loom::health {
namespace {

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

// The timestamp a line starts with, in whatever form: "[Sun Feb 23 16:24:18 2025]",
// "kern  :warn  : 2025-01-21T04:41:44,283302+00:00", "2024-11-15T05:39:15,491363+00:00",
// "Aug 17 06:18:01 host". 'msg_at' is where the message proper begins.
std::string line_time(std::string_view line, size_t msg_at)
{
	std::string_view head = trim(line.substr(0, msg_at));
	// dmesg -x facility and level: "kern  :warn  : "
	size_t colon = head.rfind(" : ");
	if (colon != std::string_view::npos && head.substr(0, 4) == "kern")
		head = trim(head.substr(colon + 3));
	if (!head.empty() && head.front() == '[') {
		size_t close = head.find(']');
		if (close != std::string_view::npos)
			head = trim(head.substr(1, close - 1));
	}
	return std::string(head);
}

int64_t leading_int(std::string_view s, size_t &used)
{
	used = 0;
	int64_t v = 0;
	while (used < s.size() && std::isdigit(static_cast<unsigned char>(s[used])) && used < 9) {
		v = v * 10 + (s[used] - '0');
		used++;
	}
	return v;
}

// A /dev/kmsg record "6,1234,5678,-;message" -> message.
std::string_view strip_kmsg_record(std::string_view line)
{
	size_t semi = line.find(';');
	if (semi == std::string_view::npos || semi > 40)
		return line;
	std::string_view head = line.substr(0, semi);
	for (char c : head)
		if (!std::isdigit(static_cast<unsigned char>(c)) && c != ',' && c != '-' && c != '+' && c != 'c')
			return line;
	return line.substr(semi + 1);
}

void scan_events(std::string_view line, KernelLog &log)
{
	struct Pattern {
		const char *needle, *kind;
	};
	// OOM kills: the patterns the job-log classifier uses (error_kinds.hpp).
	if (size_t at = find_error_kind(line, ErrorKind::host_oom_kill); at != std::string_view::npos) {
		log.events.push_back({"oom_kill", line_time(line, at), std::string(trim(line.substr(at)))});
		return;
	}
	static const Pattern patterns[] = {
		{"mce: [Hardware Error]", "mce"},
		{" CE memory ", "edac_ce"},
		{" UE memory ", "edac_ue"},
		{"segfault at ", nullptr}, // only inside libnccl, below
	};
	for (const auto &p : patterns) {
		size_t at = line.find(p.needle);
		if (at == std::string_view::npos)
			continue;
		const char *kind = p.kind;
		if (!kind) {
			if (!contains(line, " in libnccl"))
				continue;
			kind = "segfault_nccl";
		}
		if ((std::strcmp(kind, "edac_ce") == 0 || std::strcmp(kind, "edac_ue") == 0) && !contains(line, "EDAC"))
			continue;
		// The message proper starts at the first word after the timestamp.
		log.events.push_back({kind, line_time(line, at), std::string(trim(line.substr(at)))});
		return;
	}
}

} // namespace

std::optional<XidEvent> parse_xid_line(std::string_view line)
{
	static constexpr std::string_view tag = "NVRM: Xid (";
	size_t at = line.find(tag);
	if (at == std::string_view::npos)
		return std::nullopt;
	std::string_view rest = line.substr(at + tag.size());
	size_t close = rest.find("):");
	if (close == std::string_view::npos)
		return std::nullopt;
	XidEvent ev;
	ev.pci_bus = normalize_pci(rest.substr(0, close));
	rest = trim(rest.substr(close + 2));
	size_t used = 0;
	int64_t xid = leading_int(rest, used);
	if (used == 0 || xid <= 0)
		return std::nullopt;
	ev.xid = static_cast<int>(xid);
	rest = rest.substr(used);
	if (!rest.empty() && rest.front() == ',')
		rest.remove_prefix(1);
	rest = trim(rest);
	if (rest.substr(0, 4) == "pid=") {
		size_t name = rest.find(", name=");
		size_t end = name == std::string_view::npos ? std::string_view::npos : rest.find(", ", name + 7);
		if (end != std::string_view::npos) {
			ev.process = std::string(rest.substr(0, end));
			rest = trim(rest.substr(end + 2));
		}
	}
	ev.message = std::string(rest);
	ev.time = line_time(line, at);
	return ev;
}

KernelLog parse_kernel_log(std::string_view text)
{
	KernelLog log;
	size_t start = 0;
	while (start < text.size()) {
		size_t nl = text.find('\n', start);
		std::string_view line =
			text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
		start = nl == std::string_view::npos ? text.size() : nl + 1;
		if (!line.empty() && line.back() == '\r')
			line.remove_suffix(1);
		line = strip_kmsg_record(line);
		if (line.empty())
			continue;
		log.lines.emplace_back(line);
		if (auto x = parse_xid_line(line)) {
			log.xids.push_back(std::move(*x));
			continue;
		}
		static constexpr std::string_view gpu_at = "NVRM: GPU at PCI:";
		size_t g = line.find(gpu_at);
		if (g != std::string_view::npos) {
			std::string_view rest = line.substr(g + gpu_at.size());
			size_t sep = rest.find(": GPU-");
			if (sep != std::string_view::npos) {
				std::string pci = normalize_pci(rest.substr(0, sep));
				std::string_view uuid = trim(rest.substr(sep + 2));
				if (!pci.empty() && !uuid.empty())
					log.uuid_by_pci[pci] = std::string(uuid.substr(0, uuid.find(' ')));
			}
			continue;
		}
		scan_events(line, log);
	}
	return log;
}

size_t map_xids_to_gpus(std::vector<XidEvent> &xids, const std::vector<GpuState> &gpus)
{
	size_t mapped = 0;
	for (auto &x : xids) {
		x.gpu_index = -1;
		for (const auto &g : gpus)
			if (!x.pci_bus.empty() && g.pci_bus == x.pci_bus) {
				x.gpu_index = g.index;
				mapped++;
				break;
			}
	}
	return mapped;
}

expected<std::string> read_kernel_log(const std::string &root, const std::string &path, uint64_t *cursor,
				      uint64_t max_bytes)
{
	std::string full = root.empty() ? path : path_join(root, path);
	struct stat st;
	if (::stat(full.c_str(), &st) != 0)
		return unexpected(full, std::string("cannot read kernel log: ") + std::strerror(errno));
	ReadBounds b;
	b.deadline_ms = kernel_log_deadline_ms;
	if (!S_ISCHR(st.st_mode)) {
		// A file: its last max_bytes, from the first whole line. Anything
		// else (a FIFO, a socket, a block device) read_file_bounded refuses.
		b.max_bytes = max_bytes + 1;
		b.over = ReadBounds::Over::keep_tail;
		auto text = read_file_bounded(full, b);
		if (!text)
			return text;
		if (text->size() > max_bytes) {
			size_t cut = text->find('\n', text->size() - max_bytes);
			text->erase(0, cut == std::string::npos ? text->size() : cut + 1);
		}
		return text;
	}
	// /dev/kmsg: what is there now, without blocking (read_file_bounded stops
	// at EAGAIN and skips EPIPE, a record overwritten before we read it). One
	// record per read(): "pri,seq,usec,flags;message\n", then " KEY=value"
	// dictionary lines, which are left out.
	b.max_bytes = max_bytes;
	b.over = ReadBounds::Over::keep_head;
	b.allow_char_device = true;
	auto raw = read_file_bounded(full, b);
	if (!raw)
		return raw;
	if (!raw->empty() && raw->back() != '\n') { // cut short by the cap: whole records only
		size_t nl = raw->rfind('\n');
		raw->erase(nl == std::string::npos ? 0 : nl + 1);
	}
	std::string out;
	uint64_t last = cursor ? *cursor : 0;
	for (std::string_view rec : split_lines(*raw)) {
		if (rec.empty() || rec.front() == ' ')
			continue;
		size_t c1 = rec.find(',');
		uint64_t seq = 0;
		if (c1 != std::string_view::npos) {
			size_t used = 0;
			std::string_view s = rec.substr(c1 + 1);
			while (used < s.size() && used < 19 && std::isdigit(static_cast<unsigned char>(s[used])))
				seq = seq * 10 + static_cast<uint64_t>(s[used++] - '0');
		}
		if (cursor && seq <= *cursor && *cursor != 0)
			continue;
		last = seq > last ? seq : last;
		out.append(rec);
		out.push_back('\n');
	}
	if (cursor)
		*cursor = last;
	return out;
}

} // namespace loom::health
