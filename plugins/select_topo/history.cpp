#include "plugins/select_topo/history.hpp"

#include "lib/exchange/failure_stats.hpp"
#include "lib/util/log.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <sys/stat.h>
#include <thread>

namespace loom::select_topo {
namespace {

std::mutex g_mu; // guards everything below
std::condition_variable g_cv;
std::thread g_thread;
bool g_stop = false;
std::string g_path;
int64_t g_poll_s = 0;
uint64_t g_generation = 0;
std::shared_ptr<const HealthWeights> g_weights = std::make_shared<HealthWeights>();

void publish(std::map<std::string, double> w)
{
	auto hw = std::make_shared<HealthWeights>();
	hw->weight = std::move(w);
	std::lock_guard<std::mutex> g(g_mu);
	hw->generation = ++g_generation;
	g_weights = std::move(hw);
}

void watch(std::string path, int64_t poll_s)
{
	struct timespec seen_mtime = {-1, 0};
	off_t seen_size = -1;
	bool missing_told = false;
	std::unique_lock<std::mutex> lock(g_mu);
	while (!g_stop) {
		lock.unlock();
		struct stat st;
		if (::stat(path.c_str(), &st) != 0) {
			if (!missing_told)
				log_info("no failure statistics at %s yet: every node at health weight 1",
					 path.c_str());
			missing_told = true;
			if (seen_size != -1) {
				publish({});
				seen_size = -1;
				seen_mtime = {-1, 0};
			}
		} else if (st.st_mtim.tv_sec != seen_mtime.tv_sec || st.st_mtim.tv_nsec != seen_mtime.tv_nsec ||
			   st.st_size != seen_size) {
			seen_mtime = st.st_mtim;
			seen_size = st.st_size;
			missing_told = false;
			try {
				auto s = exchange::load_failure_stats(path);
				if (s) {
					auto w = exchange::node_health_weights(*s);
					size_t below = 0;
					for (const auto &[n, v] : w)
						below += v < 1.0;
					log_info("failure statistics %s: %zu node(s) weighted below 1", path.c_str(),
						 below);
					publish(std::move(w));
				} else {
					log_error("failure statistics unusable, every node at health weight 1: %s",
						  s.error().str().c_str());
					publish({});
				}
			} catch (const std::exception &e) {
				log_error("failure statistics %s: %s", path.c_str(), e.what());
			}
		}
		lock.lock();
		g_cv.wait_for(lock, std::chrono::seconds(poll_s), [] { return g_stop; });
	}
}

void stop_locked(std::unique_lock<std::mutex> &lock)
{
	if (!g_thread.joinable())
		return;
	g_stop = true;
	g_cv.notify_all();
	std::thread t = std::move(g_thread);
	lock.unlock();
	t.join();
	lock.lock();
	g_stop = false;
	g_path.clear();
}

} // namespace

void history_start(const std::string &path, int64_t poll_s)
{
	std::unique_lock<std::mutex> lock(g_mu);
	if (g_thread.joinable() && path == g_path && poll_s == g_poll_s)
		return;
	stop_locked(lock);
	if (path.empty()) {
		g_weights = std::make_shared<HealthWeights>(HealthWeights{++g_generation, {}});
		return;
	}
	g_path = path;
	g_poll_s = poll_s > 0 ? poll_s : 10;
	g_thread = std::thread(watch, g_path, g_poll_s);
}

void history_stop()
{
	std::unique_lock<std::mutex> lock(g_mu);
	stop_locked(lock);
}

std::shared_ptr<const HealthWeights> history_weights()
{
	std::lock_guard<std::mutex> g(g_mu);
	return g_weights;
}

} // namespace loom::select_topo
