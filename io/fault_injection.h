// A test hook for the durable writers (AtomicFile and the checkpoint switch), in the spirit of
// SQLite's crash tests. Every file-system step they take (create, write, fsync, rename, remove) is a
// numbered fault point, counted from 1 over the whole process. The environment variable
//   NORMLAB_FAULT_INJECT=kill@N     the process SIGKILLs itself just before step N
//   NORMLAB_FAULT_INJECT=enospc@N   step N fails with ENOSPC, as on a full disk
//   NORMLAB_FAULT_INJECT=trace      every step is printed to stderr ("fault point N: <step> <path>")
// selects a fault; without it fault points only count. Used by tests/train/crash_resume_test.cpp.
#pragma once
#include <cstdint>
#include <string>

namespace normlab {

// Call just before a file-system step. Returns true when the step must fail as on a full disk:
// errno is then ENOSPC and the caller reports the failure as it would a real one.
bool inject_fault(const char* step, const std::string& path);

}  // namespace normlab

namespace normlab {

// A test hook for data-parallel training: NORMLAB_FAULT_RANK=R@S makes the process of rank R
// SIGKILL itself at the start of training step S (tests/train/mpi_train_test.cpp checks that
// the other ranks then end with an error instead of waiting forever).
void inject_rank_fault(int rank, int64_t step);

}  // namespace normlab
