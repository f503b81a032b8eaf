// loom checkpoint SDK: the C++ application side, over lib/ckpt.
#include "sdk/cpp/loom/ckpt.hpp"

#include "lib/ckpt/agree.hpp"
#include "lib/ckpt/async_writer.hpp"
#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/options.hpp"
#include "lib/ckpt/ranks.hpp"
#include "lib/exchange/ckpt_task_env.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"
#include "sdk/cpp/progress.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace loom::sdk {
namespace {

volatile std::sig_atomic_t g_signalled = 0;
struct sigaction g_previous;

void on_signal(int sig)
{
	g_signalled = 1;
	if (!(g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_handler != SIG_DFL &&
	    g_previous.sa_handler != SIG_IGN && g_previous.sa_handler != nullptr)
		g_previous.sa_handler(sig);
}

std::string env(const char *name)
{
	const char *v = std::getenv(name);
	return v ? v : "";
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void set_error(std::string *out, const std::string &msg)
{
	if (out)
		*out = msg;
}

// Seconds from the environment; a value that does not read is the config's error.
void env_seconds(const char *name, double *out, Config *c)
{
	std::string v = env(name);
	if (v.empty())
		return;
	if (auto s = parse_real(v, 0, 1e7); s)
		*out = *s;
	else if (c->error.empty())
		c->error = std::string(name) + "='" + v + "': expected seconds (0 to 1e7)";
}

} // namespace

Config Config::from_env()
{
	Config c;
	// spank_ckpt's variables, read as lib/exchange/ckpt_task_env.hpp (and the Python SDK) does.
	if (auto t = exchange::read_task_env([](const char *name) { return env(name); }); t) {
		c.dir = t->dir;
		c.signal = t->signal;
		c.interval_s = t->interval_s;
		c.keep = t->keep;
		c.restart_count = t->restart_count;
	} else {
		c.dir = env("LOOM_CKPT_DIR");
		c.error = t.error().str();
	}
	auto launcher = ckpt::process_env();
	if (auto l = ckpt::launch_ranks(launcher); l) {
		c.rank = l->rank;
		c.world_size = l->world_size;
	} else if (c.error.empty()) {
		c.error = l.error().str();
	}
	c.run = ckpt::launch_run_id(launcher);
	if (auto t = parse_real(env("LOOM_CKPT_COMMIT_TIMEOUT"), 0.001, 1e7); t)
		c.commit_timeout_s = *t;
	env_seconds("LOOM_CKPT_STAMP_LEAD", &c.stamp_lead_s, &c);
	env_seconds("LOOM_CKPT_AGREE_SECONDS", &c.agree_period_s, &c);
	c.job_id = env("SLURM_JOB_ID");
	return c;
}

struct Checkpointer::Impl {
	Config cfg;
	std::unique_ptr<ckpt::AsyncWriter> writer;
	double last_save = now_s();
	double stall = 0, write = 0;
	bool handler = false;
	// Section 7.5: the request file, and how several ranks agree (one of
	// the two, or neither with one rank).
	std::unique_ptr<ckpt::RequestWatch> requests;
	std::unique_ptr<ckpt::StampAgreement> stamps;
	std::unique_ptr<ckpt::GroupAgreement> group;
	std::unique_ptr<ProgressReporter> progress; // LOOM_CKPT_PROGRESS=1 (a job with standbys)
	double last_call = 0;
	int64_t calls = 0;
	bool told = false;  // the one line of should_checkpoint() without what it needs
	bool asked = false; // request(): the program's own reason, until the next save

	void setup_agreement();
	// Saves agreed through rank 0's stamp take the stamp's number.
	void number_save()
	{
		if (stamps && writer)
			writer->number_next_save(static_cast<uint64_t>(stamps->done()));
	}
	bool wish();
	bool decide(const int64_t *step);
	void report(const int64_t *step);
	void tell_once(const std::string &line);
	void saving();
};

void Checkpointer::Impl::setup_agreement()
{
	if (cfg.dir.empty())
		return;
	requests.reset(new ckpt::RequestWatch(cfg.dir));
	if (cfg.world_size <= 1)
		return;
	if (cfg.allreduce_max)
		group.reset(new ckpt::GroupAgreement(cfg.allreduce_max, cfg.agree_period_s));
	else if (!cfg.run.empty())
		stamps.reset(new ckpt::StampAgreement(cfg.dir, cfg.run, cfg.rank, cfg.stamp_lead_s));
}

bool Checkpointer::Impl::wish()
{
	if (g_signalled || asked)
		return true;
	if (requests && requests->pending())
		return true;
	return cfg.interval_s > 0 && now_s() - last_save >= static_cast<double>(cfg.interval_s);
}

void Checkpointer::Impl::tell_once(const std::string &line)
{
	if (!told)
		std::fprintf(stderr, "loom_ckpt: %s\n", line.c_str());
	told = true;
}

// The answer of every rank alike (7.5): the wish of one process, the
// group's through allreduce_max, or rank 0's stamped step.
bool Checkpointer::Impl::decide(const int64_t *step)
{
	if (cfg.world_size <= 1)
		return wish();
	if (group)
		return group->decide(wish());
	std::string who = "rank " + std::to_string(cfg.rank) + " of " + std::to_string(cfg.world_size);
	if (!stamps) {
		tell_once(who + ": no launch id names the stamped step (launch with srun or MPI, or set "
				"LOOM_CKPT_RUN_ID, the same on every rank): should_checkpoint() is false");
		return false;
	}
	if (!step) {
		tell_once(who + " without allreduce_max: the ranks agree on a step number: call "
				"should_checkpoint(step) with the step you would save; should_checkpoint() is false");
		return false;
	}
	return stamps->decide(wish(), *step);
}

// Each call of should_checkpoint() is a completed step: its report.
void Checkpointer::Impl::report(const int64_t *step)
{
	double now = now_s();
	if (progress && last_call > 0)
		progress->step(step ? *step : calls, now - last_call);
	last_call = now;
	calls++;
}

// A save starts: what asked for it is served.
void Checkpointer::Impl::saving()
{
	g_signalled = 0;
	asked = false;
	last_save = now_s();
	if (requests)
		requests->served();
}

Checkpointer::Checkpointer() : Checkpointer(Config::from_env()) {}

Checkpointer::Checkpointer(Config c, bool install_signal_handler) : impl_(new Impl)
{
	impl_->cfg = std::move(c);
	ckpt::WriterSettings s;
	s.dir = impl_->cfg.dir;
	s.keep = impl_->cfg.keep;
	s.world_size = impl_->cfg.world_size;
	s.rank = impl_->cfg.rank;
	s.run = impl_->cfg.run;
	s.commit_timeout_s = impl_->cfg.commit_timeout_s;
	s.restart_count = impl_->cfg.restart_count;
	s.job_id = impl_->cfg.job_id;
	if (auto h = parse_bool(env("LOOM_CKPT_HUGE_PAGES")); h)
		s.huge_pages = *h;
	impl_->writer.reset(new ckpt::AsyncWriter(s));
	impl_->setup_agreement();
	if (!impl_->cfg.dir.empty() && env(exchange::progress_env) == "1")
		impl_->progress.reset(new ProgressReporter(impl_->cfg.dir, impl_->cfg.rank, impl_->cfg.world_size,
							   env("SLURMD_NODENAME")));
	if (install_signal_handler && impl_->cfg.signal > 0) {
		struct sigaction sa;
		std::memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		impl_->handler = ::sigaction(impl_->cfg.signal, &sa, &g_previous) == 0;
	}
}

Checkpointer::~Checkpointer()
{
	impl_->writer.reset();
	if (impl_->handler)
		::sigaction(impl_->cfg.signal, &g_previous, nullptr);
}

const Config &Checkpointer::config() const { return impl_->cfg; }
bool Checkpointer::enabled() const { return !impl_->cfg.dir.empty(); }

bool Checkpointer::usable(std::string *error) const
{
	if (!enabled())
		set_error(error, "no checkpoint directory (LOOM_CKPT_DIR is not set)");
	else if (!impl_->cfg.error.empty())
		set_error(error, impl_->cfg.error);
	return enabled() && impl_->cfg.error.empty();
}

bool Checkpointer::should_checkpoint()
{
	impl_->report(nullptr);
	return enabled() && impl_->decide(nullptr);
}

void Checkpointer::request() { impl_->asked = true; }

bool Checkpointer::should_checkpoint(int64_t step)
{
	impl_->report(&step);
	return enabled() && impl_->decide(&step);
}

static std::vector<ckpt::BufferView> views(const std::vector<Buffer> &b)
{
	std::vector<ckpt::BufferView> v;
	for (const auto &x : b)
		v.push_back({x.name, x.data, x.size});
	return v;
}

bool Checkpointer::save_async(int64_t step, const std::vector<Buffer> &buffers, std::string *error)
{
	if (!usable(error))
		return false;
	impl_->saving();
	impl_->number_save();
	auto st = impl_->writer->save_async(step, views(buffers));
	if (!st) {
		set_error(error, st.error().str());
		return false;
	}
	return true;
}

bool Checkpointer::reserve(const std::vector<Buffer> &buffers, std::string *error)
{
	std::vector<size_t> sizes;
	for (const auto &b : buffers)
		sizes.push_back(b.size);
	return reserve(sizes, error);
}

bool Checkpointer::reserve(const std::vector<size_t> &sizes, std::string *error)
{
	if (!enabled()) {
		set_error(error, "no checkpoint directory (LOOM_CKPT_DIR is not set)");
		return false;
	}
	auto st = impl_->writer->reserve(sizes);
	if (!st) {
		set_error(error, st.error().str());
		return false;
	}
	return true;
}

bool Checkpointer::save(int64_t step, const std::vector<Buffer> &buffers, std::string *error)
{
	if (!usable(error))
		return false;
	impl_->saving();
	impl_->number_save();
	auto r = impl_->writer->save(step, views(buffers));
	if (!r) {
		set_error(error, r.error().str());
		return false;
	}
	impl_->stall = r->stall_s;
	impl_->write = r->write_s;
	return true;
}

bool Checkpointer::wait(std::string *error)
{
	auto r = impl_->writer->wait();
	if (!r) {
		set_error(error, r.error().str());
		return false;
	}
	impl_->stall = r->stall_s;
	impl_->write = r->write_s;
	return true;
}

double Checkpointer::last_stall_seconds() const { return impl_->stall; }
double Checkpointer::last_write_seconds() const { return impl_->write; }

Restored Checkpointer::restore() const
{
	Restored r;
	const Config &c = impl_->cfg;
	if (!enabled())
		return r;
	if (!c.error.empty()) {
		r.error = c.error;
		return r;
	}
	ckpt::Job job{c.world_size, c.rank};
	auto l = c.world_size > 1 && c.allreduce_min ? ckpt::find_latest_agreed(c.dir, job, c.allreduce_min)
						     : ckpt::find_latest(c.dir, ckpt::Verify::full, job);
	if (!l) {
		r.error = l.error().str();
		return r;
	}
	if (!l->has_value())
		return r;
	for (const auto &s : (*l)->skipped)
		r.skipped.push_back(s.name + ": " + s.problem);
	const ckpt::Entry &e = (*l)->entry;
	r.found = true;
	r.step = e.step;
	r.path = e.path;
	r.world_size = e.manifest->version == 1 ? 1 : e.manifest->world_size;
	for (const auto &f : ckpt::rank_files(*e.manifest, c.rank))
		r.files.push_back(f.path);
	r.files_dir = ckpt::rank_files_dir(e.path, *e.manifest, c.rank);
	return r;
}

bool Restored::read(const std::string &name, std::vector<char> *out, std::string *error) const
{
	if (!found) {
		set_error(error, "nothing was restored");
		return false;
	}
	return Checkpointer::read_file(files_dir, name, out, error);
}

bool Checkpointer::read_file(const std::string &checkpoint_path, const std::string &name, std::vector<char> *out,
			     std::string *error)
{
	if (auto st = ckpt::check_relative_name(name); !st) {
		set_error(error, st.error().str());
		return false;
	}
	auto data = loom::read_file(path_join(checkpoint_path, name), UINT64_MAX);
	if (!data) {
		set_error(error, data.error().str());
		return false;
	}
	out->assign(data->begin(), data->end());
	return true;
}

} // namespace loom::sdk
