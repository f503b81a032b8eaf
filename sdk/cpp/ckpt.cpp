// loom checkpoint SDK: the C++ application side, over lib/ckpt.
#include "sdk/cpp/loom/ckpt.hpp"

#include "lib/ckpt/async_writer.hpp"
#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/options.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
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

} // namespace

Config Config::from_env()
{
	Config c;
	c.dir = env("LOOM_CKPT_DIR");
	if (auto s = ckpt::parse_signal(env("LOOM_CKPT_SIGNAL")); s)
		c.signal = *s;
	if (auto i = parse_int(env("LOOM_CKPT_INTERVAL"), 0, INT64_MAX); i)
		c.interval_s = *i;
	if (auto k = parse_int(env("LOOM_CKPT_KEEP"), 1, 1000); k)
		c.keep = static_cast<int>(*k);
	if (auto r = parse_int(env("LOOM_RESTART_COUNT"), 0, INT64_MAX); r)
		c.restart_count = *r;
	if (auto w = parse_int(env("SLURM_NTASKS"), 1, INT64_MAX); w)
		c.world_size = *w;
	c.job_id = env("SLURM_JOB_ID");
	return c;
}

struct Checkpointer::Impl {
	Config cfg;
	std::unique_ptr<ckpt::AsyncWriter> writer;
	double last_save = now_s();
	double stall = 0, write = 0;
	bool handler = false;
};

Checkpointer::Checkpointer() : Checkpointer(Config::from_env()) {}

Checkpointer::Checkpointer(Config c, bool install_signal_handler) : impl_(new Impl)
{
	impl_->cfg = std::move(c);
	ckpt::WriterSettings s;
	s.dir = impl_->cfg.dir;
	s.keep = impl_->cfg.keep;
	s.world_size = impl_->cfg.world_size;
	s.restart_count = impl_->cfg.restart_count;
	s.job_id = impl_->cfg.job_id;
	if (auto h = parse_bool(env("LOOM_CKPT_HUGE_PAGES")); h)
		s.huge_pages = *h;
	impl_->writer.reset(new ckpt::AsyncWriter(s));
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

bool Checkpointer::should_checkpoint()
{
	if (!enabled())
		return false;
	if (g_signalled)
		return true;
	return impl_->cfg.interval_s > 0 && now_s() - impl_->last_save >= static_cast<double>(impl_->cfg.interval_s);
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
	if (!enabled()) {
		set_error(error, "no checkpoint directory (LOOM_CKPT_DIR is not set)");
		return false;
	}
	g_signalled = 0;
	impl_->last_save = now_s();
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
	if (!enabled()) {
		set_error(error, "no checkpoint directory (LOOM_CKPT_DIR is not set)");
		return false;
	}
	g_signalled = 0;
	impl_->last_save = now_s();
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
	if (!enabled())
		return r;
	auto l = ckpt::find_latest(impl_->cfg.dir, ckpt::Verify::full);
	if (!l) {
		r.error = l.error().str();
		return r;
	}
	if (!l->has_value())
		return r;
	for (const auto &s : (*l)->skipped)
		r.skipped.push_back(s.name + ": " + s.problem);
	r.found = true;
	r.step = (*l)->entry.step;
	r.path = (*l)->entry.path;
	return r;
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
