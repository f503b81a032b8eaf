#include "plugins/select_topo/explain.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace loom::select_topo {
namespace {

struct Item {
	std::string path;
	std::string text;
	bool remove = false; // unlink path instead of writing it
};

constexpr size_t k_keep = 500;
constexpr size_t k_queue_max = 10000; // drop, never grow without bound, if the disk stalls

std::mutex g_mu;
std::condition_variable g_cv;
std::deque<Item> g_queue;
std::deque<std::string> g_written; // decision file stems, oldest first
std::thread g_thread;
bool g_stop = false;
bool g_running = false;

void writer()
{
	std::unique_lock<std::mutex> lock(g_mu);
	while (true) {
		g_cv.wait(lock, [] { return g_stop || !g_queue.empty(); });
		if (g_queue.empty() && g_stop)
			return;
		Item it = std::move(g_queue.front());
		g_queue.pop_front();
		lock.unlock();
		if (it.remove) {
			::unlink(it.path.c_str());
		} else {
			size_t slash = it.path.find_last_of('/');
			status st = slash == std::string::npos ? ok() : make_dirs(it.path.substr(0, slash), 0750);
			if (st)
				st = write_file_atomic(it.path, it.text, 0640);
			if (!st)
				log_error("explain: %s", st.error().str().c_str());
		}
		lock.lock();
	}
}

void enqueue(std::vector<Item> items)
{
	std::lock_guard<std::mutex> g(g_mu);
	if (!g_running) {
		g_stop = false;
		g_thread = std::thread(writer);
		g_running = true;
	}
	if (g_queue.size() + items.size() > k_queue_max)
		return;
	for (auto &i : items)
		g_queue.push_back(std::move(i));
	g_cv.notify_one();
}

} // namespace

void explain_fabric(const std::string &dir, std::string cluster_json)
{
	enqueue({{dir + "/cluster.json", std::move(cluster_json)}});
}

void explain_decision(const std::string &dir, uint32_t job_id, std::string request, std::string state,
		      std::string decision)
{
	std::string stem = dir + "/job_" + std::to_string(job_id);
	std::vector<Item> items{{stem + ".request", std::move(request)},
				{stem + ".state", std::move(state)},
				{stem + ".decision", std::move(decision)}};
	std::string old;
	{
		std::lock_guard<std::mutex> g(g_mu);
		g_written.push_back(stem);
		if (g_written.size() > k_keep) {
			old = g_written.front();
			g_written.pop_front();
		}
	}
	if (!old.empty())
		for (const char *ext : {".request", ".state", ".decision"})
			items.push_back({old + ext, {}, true});
	enqueue(std::move(items));
}

void write_async(const std::string &path, std::string text) { enqueue({{path, std::move(text)}}); }

void explain_stop()
{
	{
		std::lock_guard<std::mutex> g(g_mu);
		if (!g_running)
			return;
		g_stop = true;
		g_cv.notify_one();
	}
	g_thread.join();
	std::lock_guard<std::mutex> g(g_mu);
	g_running = false;
}

} // namespace loom::select_topo
