#include "lib/health/jobcomp.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/gres.hpp"
#include "lib/util/json.hpp"

#include <cstring>
#include <json-c/json.h>
#include <unistd.h>

namespace loom::health {

ConfigSchema jobcomp_schema(JobcompOptions &o)
{
	ConfigSchema s;
	s.integer("restart_budget", &o.restart_budget, 0, 1000, "requeues per job")
		.integer("max_drains", &o.max_drains, 0, 100000, "nodes loom may drain per drain_window")
		.duration("drain_window", &o.drain_window, 60, 30 * 86400, "window of the drain cap")
		.boolean("drain", &o.drain, "drain culprit nodes")
		.boolean("requeue", &o.requeue, "requeue infrastructure failures")
		.boolean("spares", &o.spares, "restart infrastructure failures on spares of the same domains")
		.string("spare_file", &o.spare_file,
			"select/topo's spare pool (default StateSaveLocation/loom-spares.json)")
		.string("state_dir", &o.state_dir, "backlog and statistics directory (default StateSaveLocation)")
		.string("stats_publish", &o.stats_publish,
			"a copy of the failure statistics for spank_ckpt on the nodes (absolute path)")
		.string("scontrol", &o.scontrol, "scontrol command")
		.duration("scontrol_timeout", &o.scontrol_timeout, 1, 600, "time limit of one scontrol call")
		.size("log_max_bytes", &o.log_max_bytes, "tail of each job output file that is scanned")
		.integer("max_backlog", &o.max_backlog, 1, 10000000, "queued jobs kept");
	return s;
}

expected<JobcompOptions> parse_jobcomp_options(std::string_view words, const std::string &where)
{
	JobcompOptions o;
	ConfigSchema s = jobcomp_schema(o);
	// Slurm's convention for *Params is commas ("a=1,b=2"); spaces work too
	// where the value can hold them (JobCompLoc).
	std::string spaced(words);
	for (char &c : spaced)
		if (c == ',')
			c = ' ';
	if (auto st = s.parse_words(spaced, where); !st)
		return unexpected(st.error());
	if (!o.spare_file.empty() && o.spare_file[0] != '/')
		return unexpected(where, "spare_file='" + o.spare_file + "': expected an absolute path");
	if (!o.stats_publish.empty() && o.stats_publish[0] != '/')
		return unexpected(where, "stats_publish='" + o.stats_publish + "': expected an absolute path");
	return o;
}

namespace {

Json strings(const std::vector<std::string> &v)
{
	Json a = Json::array();
	for (const auto &s : v)
		a.push(Json::string(s));
	return a;
}

Json string_map(const std::map<std::string, std::string> &m)
{
	Json o = Json::object();
	for (const auto &[k, v] : m)
		o.set(k.c_str(), Json::string(v));
	return o;
}

status read_strings(json_object *arr, const std::string &where, std::vector<std::string> &out)
{
	size_t n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(e, json_type_string))
			return unexpected(ObjectReader::index_path(where, i), "expected a string");
		out.emplace_back(json_object_get_string(e));
	}
	return ok();
}

status read_map(json_object *obj, const std::string &where, std::map<std::string, std::string> &out)
{
	json_object_object_foreach(obj, key, val)
	{
		if (!json_object_is_type(val, json_type_string))
			return unexpected(where + "." + key, "expected a string");
		out[key] = json_object_get_string(val);
	}
	return ok();
}

} // namespace

namespace {

Json job_record_object(const JobRecord &r)
{
	Json o = Json::object();
	const JobEnd &e = r.end;
	o.set("job_id", Json::integer(e.job_id));
	o.set("state", Json::string(e.state));
	o.set("exit_code", Json::integer(e.exit_code));
	o.set("signal", Json::integer(e.signal));
	o.set("nodes", strings(e.nodes));
	o.set("node_state", string_map(e.node_state));
	o.set("node_reason", string_map(e.node_reason));
	o.set("requeue_allowed", Json::boolean(e.requeue_allowed));
	o.set("checkpointed", Json::boolean(e.checkpointed));
	o.set("restart_count", Json::integer(e.restart_count));
	o.set("start_time", Json::integer(e.start_time));
	o.set("end_time", Json::integer(e.end_time));
	o.set("uid", Json::integer(r.uid));
	o.set("user", Json::string(r.user));
	o.set("job_name", Json::string(r.job_name));
	o.set("work_dir", Json::string(r.work_dir));
	o.set("std_out", Json::string(r.std_out_pattern));
	o.set("std_err", Json::string(r.std_err_pattern));
	o.set("array_job_id", Json::integer(r.array_job_id));
	o.set("array_task_id", Json::integer(r.array_task_id));
	o.set("gpu_class", Json::string(r.gpu_class));
	o.set("already_requeued", Json::boolean(r.already_requeued));
	o.set("ckpt_max_restarts", Json::integer(r.ckpt_max_restarts));
	o.set("time_limit_s", Json::integer(r.time_limit_s));
	o.set("pinned", Json::boolean(r.pinned));
	o.set("placed_class", Json::string(r.placed.gpu_class));
	o.set("tier", Json::string(r.placed.tier));
	o.set("price_per_h", Json::number(r.placed.price_per_h));
	o.set("admin_comment", Json::string(r.admin_comment));
	return o;
}

} // namespace

std::string job_record_json(const JobRecord &r) { return job_record_object(r).dump(false); }

namespace {

// The first error of these reads, in their order; nullptr when all went well.
template <typename... T>
const Error *first_error(const expected<T> &...v)
{
	const Error *err = nullptr;
	((err = err ? err : v ? nullptr : &v.error()), ...);
	return err;
}

// The arrays and objects of a JobEnd, read once the whole record is known good.
struct EndLists {
	json_object *nodes = nullptr, *state = nullptr, *reason = nullptr;
};

// JobEnd's fields but its node lists ('lists').
status read_job_end(ObjectReader &r, JobEnd &e, EndLists &lists)
{
	auto id = r.integer("job_id", 1, UINT32_MAX);
	auto state = r.str("state");
	auto exit_code = r.integer("exit_code", 0, 255);
	auto sig = r.integer("signal", 0, 255);
	auto nodes = r.array("nodes");
	auto nstate = r.object("node_state");
	auto nreason = r.object("node_reason");
	auto rq = r.boolean("requeue_allowed");
	auto ck = r.boolean("checkpointed");
	auto rc = r.integer("restart_count", 0, UINT32_MAX);
	auto st = r.integer("start_time", 0);
	auto et = r.integer("end_time", 0);
	if (const Error *err = first_error(id, state, exit_code, sig, nodes, nstate, nreason, rq, ck, rc, st, et))
		return unexpected(*err);
	e.job_id = static_cast<uint32_t>(*id);
	e.state = *state;
	e.exit_code = static_cast<int>(*exit_code);
	e.signal = static_cast<int>(*sig);
	lists = {*nodes, *nstate, *nreason};
	e.requeue_allowed = *rq;
	e.checkpointed = *ck;
	e.restart_count = static_cast<uint32_t>(*rc);
	e.start_time = *st;
	e.end_time = *et;
	return ok();
}

// The record's fields around its JobEnd.
status read_job_fields(ObjectReader &r, JobRecord &rec)
{
	auto uid = r.integer("uid", 0, UINT32_MAX);
	auto user = r.str("user");
	auto name = r.str("job_name");
	auto wd = r.str("work_dir");
	auto so = r.str("std_out");
	auto se = r.str("std_err");
	auto aj = r.integer("array_job_id", 0, UINT32_MAX);
	auto at = r.integer("array_task_id", 0, UINT32_MAX);
	auto gc = r.str("gpu_class");
	auto ar = r.boolean("already_requeued");
	// ckpt_max_restarts: since the budget travels with the job; a backlog
	// written before then has ckpt_from_comment instead (read, not used).
	auto cc = r.integer_or("ckpt_max_restarts", -1, -1, 1000000);
	auto old_comment = r.boolean_or("ckpt_from_comment", false);
	auto tl = r.integer_or("time_limit_s", 0, 0, INT64_MAX); // absent in older backlogs
	auto pin = r.boolean_or("pinned", false);
	auto pcls = r.str_or("placed_class", ""); // absent in older backlogs
	auto ptier = r.str_or("tier", "");
	auto pprice = r.number_or("price_per_h", -1);
	auto admin = r.str_or("admin_comment", ""); // absent in older backlogs
	if (const Error *err = first_error(uid, user, name, wd, so, se, aj, at, gc, ar, cc, old_comment, tl, pin, pcls,
					   ptier, pprice, admin))
		return unexpected(*err);
	rec.uid = static_cast<uint32_t>(*uid);
	rec.user = *user;
	rec.job_name = *name;
	rec.work_dir = *wd;
	rec.std_out_pattern = *so;
	rec.std_err_pattern = *se;
	rec.array_job_id = static_cast<uint32_t>(*aj);
	rec.array_task_id = static_cast<uint32_t>(*at);
	rec.gpu_class = *gc;
	rec.placed.gpu_class = *pcls;
	rec.placed.tier = *ptier;
	rec.placed.price_per_h = *pprice;
	rec.already_requeued = *ar;
	rec.ckpt_max_restarts = *cc;
	rec.time_limit_s = *tl;
	rec.pinned = *pin;
	rec.admin_comment = *admin;
	return ok();
}

} // namespace

// The first bad field in the order of the record's fields, then a field
// that is not one of them, then a bad element of a node list.
expected<JobRecord> job_record_from_json(json_object *obj, const std::string &where)
{
	ObjectReader r(obj, where);
	if (!r.ok())
		return unexpected(r.error());
	JobRecord rec;
	JobEnd &e = rec.end;
	EndLists lists;
	if (auto st = read_job_end(r, e, lists); !st)
		return unexpected(st.error());
	if (auto st = read_job_fields(r, rec); !st)
		return unexpected(st.error());
	if (auto fin = r.finish(); !fin)
		return unexpected(fin.error());
	if (auto s1 = read_strings(lists.nodes, r.field_path("nodes"), e.nodes); !s1)
		return unexpected(s1.error());
	if (auto s2 = read_map(lists.state, r.field_path("node_state"), e.node_state); !s2)
		return unexpected(s2.error());
	if (auto s3 = read_map(lists.reason, r.field_path("node_reason"), e.node_reason); !s3)
		return unexpected(s3.error());
	return rec;
}

std::string gpu_class_of_request(std::string_view tres)
{
	GresGpu g = gres_gpu(tres);
	return !g.gpus ? std::string() : g.type.empty() ? std::string("gpu") : g.type;
}

void DrainLimiter::expire(int64_t now)
{
	while (!times_.empty() && times_.front() <= now - window_)
		times_.pop_front();
}

bool DrainLimiter::allow(int64_t now)
{
	expire(now);
	return static_cast<int64_t>(times_.size()) < max_;
}

std::string backlog_json(const Backlog &b)
{
	Json drains = Json::array();
	for (int64_t t : b.drains)
		drains.push(Json::integer(t));
	Json pending = Json::array();
	for (const auto &r : b.pending)
		pending.push(job_record_object(r));
	Json o = Json::object();
	o.set("version", Json::integer(1));
	o.set("drains", std::move(drains));
	o.set("pending", std::move(pending));
	return o.dump(true);
}

expected<Backlog> load_backlog(const std::string &path)
{
	Backlog b;
	if (::access(path.c_str(), F_OK) != 0)
		return b;
	auto j = json_parse_file(path, 256u << 20);
	if (!j)
		return unexpected(j.error());
	ObjectReader r(j->get(), "$");
	if (!r.ok())
		return unexpected(r.error().within(path));
	auto ver = r.integer("version", 1, 1);
	auto drains = r.array("drains");
	auto pending = r.array("pending");
	if (!ver)
		return unexpected(ver.error().within(path));
	if (!drains)
		return unexpected(drains.error().within(path));
	if (!pending)
		return unexpected(pending.error().within(path));
	if (auto st = r.finish(); !st)
		return unexpected(st.error().within(path));
	for (size_t i = 0; i < json_object_array_length(*drains); i++) {
		json_object *e = json_object_array_get_idx(*drains, i);
		if (!json_object_is_type(e, json_type_int))
			return unexpected(path, ObjectReader::index_path("$.drains", i) + ": expected an integer");
		b.drains.push_back(json_object_get_int64(e));
	}
	for (size_t i = 0; i < json_object_array_length(*pending); i++) {
		auto rec = job_record_from_json(json_object_array_get_idx(*pending, i),
						ObjectReader::index_path("$.pending", i));
		if (!rec)
			return unexpected(rec.error().within(path));
		b.pending.push_back(std::move(*rec));
	}
	return b;
}

} // namespace loom::health
