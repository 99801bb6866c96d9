// The Communicator over MPI's world (built when NORMLAB_WITH_MPI). Errors are fatal
// (MPI_ERRORS_ARE_FATAL, MPI's default): a failed collective, or a rank that dies, ends the
// whole job through the launcher instead of leaving the other ranks waiting.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "core/error.h"
#include "dist/communicator.h"

namespace normlab {
namespace {

// MPI counts are int: a longer buffer goes in pieces of at most INT_MAX elements.
template <typename T, typename Call>
void in_int_pieces(T* data, size_t count, Call call) {
  for (size_t done = 0; done < count;) {
    const size_t piece = std::min<size_t>(count - done, INT_MAX);
    call(data + done, static_cast<int>(piece));
    done += piece;
  }
}

class MpiWorld final : public Communicator {
 public:
  MpiWorld() {
    int provided = 0;
    // FUNNELED: only the main thread calls MPI; OpenMP workers only compute.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiWorld() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(float* data, size_t count) override {
    in_int_pieces(data, count, [](float* p, int n) {
      MPI_Allreduce(MPI_IN_PLACE, p, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
  }
  void allreduce_sum(double* data, size_t count) override {
    in_int_pieces(data, count, [](double* p, int n) {
      MPI_Allreduce(MPI_IN_PLACE, p, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    });
  }
  void broadcast(void* data, size_t bytes, int root) override {
    in_int_pieces(static_cast<char*>(data), bytes, [root](char* p, int n) {
      MPI_Bcast(p, n, MPI_BYTE, root, MPI_COMM_WORLD);
    });
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  [[noreturn]] void abort(int exit_code) override {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

bool built_with_mpi() { return true; }

std::unique_ptr<Communicator> open_world_communicator() {
  if (launcher_process_count() == 0) return nullptr;  // no MPI_Init (nor its start-up) for a lone run
  return std::make_unique<MpiWorld>();
}

}  // namespace normlab
