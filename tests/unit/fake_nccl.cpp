// A stand-in for NCCL, for the GPU probe tests (test_health_gpu_probe): the
// "device" buffers of fake_cudart are host memory, and an all-reduce sums
// them when its group ends. Only float sums are accepted, which also checks
// the enum values loom declares for itself (ncclFloat 7, ncclSum 0).
//   LOOM_FAKE_FAIL=NAME     the entry point NAME fails (ncclUnhandledCudaError)
//   LOOM_FAKE_CORRUPT=R     one element of rank R's result is off by one
//   LOOM_FAKE_ASYNC=CODE    ncclCommGetAsyncError reports CODE
#include <cstdlib>
#include <cstring>
#include <vector>

struct Clique {
	int n = 0, live = 0;
};

struct ncclComm {
	int rank;
	Clique *clique;
};

struct Posted {
	ncclComm *comm;
	const float *send;
	float *recv;
	size_t count;
};

namespace {

int group_depth = 0;
std::vector<Posted> posted;

bool fails(const char *name)
{
	const char *e = std::getenv("LOOM_FAKE_FAIL");
	return e && std::strcmp(e, name) == 0;
}

// Every rank of the clique must have posted the same count.
int run_posted()
{
	if (posted.empty())
		return 0;
	Clique *c = posted.front().comm->clique;
	size_t count = posted.front().count;
	if (static_cast<int>(posted.size()) != c->n)
		return 5; // ncclInvalidUsage
	std::vector<float> sum(count, 0.0f);
	for (const auto &p : posted) {
		if (p.count != count || p.comm->clique != c)
			return 5;
		for (size_t i = 0; i < count; i++)
			sum[i] += p.send[i];
	}
	const char *corrupt = std::getenv("LOOM_FAKE_CORRUPT");
	for (const auto &p : posted) {
		std::memcpy(p.recv, sum.data(), count * sizeof(float));
		if (corrupt && std::atoi(corrupt) == p.comm->rank)
			p.recv[count / 2] += 1.0f;
	}
	posted.clear();
	return 0;
}

void release(ncclComm *comm)
{
	Clique *c = comm->clique;
	delete comm;
	if (--c->live == 0)
		delete c;
}

} // namespace

extern "C" {

int ncclGetVersion(int *v)
{
	*v = 22805;
	return 0;
}

int ncclCommInitAll(ncclComm **comms, int n, const int *)
{
	if (fails("ncclCommInitAll"))
		return 1;
	auto *c = new Clique;
	c->n = c->live = n;
	for (int i = 0; i < n; i++)
		comms[i] = new ncclComm{i, c};
	return 0;
}

int ncclCommDestroy(ncclComm *comm)
{
	release(comm);
	return 0;
}

int ncclCommAbort(ncclComm *comm)
{
	release(comm);
	return 0;
}

int ncclCommGetAsyncError(ncclComm *, int *err)
{
	const char *e = std::getenv("LOOM_FAKE_ASYNC");
	*err = e ? std::atoi(e) : 0;
	return 0;
}

int ncclGroupStart()
{
	group_depth++;
	return 0;
}

int ncclGroupEnd()
{
	if (group_depth == 0)
		return 5;
	if (--group_depth > 0)
		return 0;
	if (fails("ncclGroupEnd")) {
		posted.clear();
		return 1;
	}
	return run_posted();
}

int ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, ncclComm *comm, void *)
{
	if (fails("ncclAllReduce"))
		return 1;
	if (type != 7 || op != 0)
		return 4; // ncclInvalidArgument
	posted.push_back({comm, static_cast<const float *>(send), static_cast<float *>(recv), count});
	return group_depth ? 0 : run_posted();
}

const char *ncclGetErrorString(int r)
{
	switch (r) {
	case 1:
		return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case 4:
		return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case 5:
		return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case 6:
		return "remote process exited or there was a network error";
	}
	return "unknown result code";
}

const char *ncclGetLastError(ncclComm *) { return ""; }

} // extern "C"
