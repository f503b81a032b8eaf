// spank_ckpt in srun: a step of a job with standbys starts again inside the
// allocation without a loop in the user's script.
//
// srun runs no SPANK exit hook inside an allocation (it calls spank_fini
// only for an allocation of its own), so arm() registers an atexit handler
// when the step is launched (local_user_init). When srun exits, the handler
// says the step ended (ended.<step> in LOOM_CKPT_STANDBY_DIR) and waits for
// the batch step's keeper (standby_keeper.hpp) to answer. On "relaunch" it
// sets the new layout's environment and executes srun again with the same
// arguments (plus --exclude for a failed batch host): the same process, so
// the batch script waiting on it sees one srun that succeeded or failed.
// Without an answer in time, or on "no relaunch", srun exits as it would
// have.
#pragma once

#include <cstdint>
#include <string>

namespace loom::spank_ckpt {

// Arm the handler for this srun's step; false (and nothing armed) outside a
// job with standbys. 'job'/'step': S_JOB_ID / S_JOB_STEPID.
bool arm_standby_relaunch(uint32_t job, uint32_t step);

// How long srun waits for the keeper's answer.
inline constexpr int standby_answer_timeout_s = 60;

} // namespace loom::spank_ckpt
