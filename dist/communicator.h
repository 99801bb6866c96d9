// The processes that train one model together (data parallel), behind a small interface:
//   rank/size        this process's index in the job and the job's process count
//   allreduce_sum    every process's buffer summed elementwise; each gets the same sum
//   broadcast        root's bytes copied to every process
//   barrier, abort   wait for all; end the whole job (never returns)
// Two implementations: single_process() (size 1: every call is the identity) and MPI's world
// (dist/mpi/, built with -DNORMLAB_MPI=AUTO|ON when MPI is found; dist/no_mpi/
// otherwise). open_world_communicator() opens MPI's world when an MPI launcher (mpirun, srun)
// started this process; a process started alone never initialises MPI. Every collective must be
// called by every rank in the same order.
#pragma once
#include <cstddef>
#include <memory>

namespace normlab {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void allreduce_sum(float* data, size_t count) = 0;
  virtual void allreduce_sum(double* data, size_t count) = 0;
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  virtual void barrier() = 0;
  // Ends every process of the job with exit_code (MPI_Abort); the single process just exits.
  [[noreturn]] virtual void abort(int exit_code) = 0;
  bool is_root() const { return rank() == 0; }
};

// The communicator of a process that trains alone.
Communicator& single_process();

// The number of processes an MPI launcher started this job with (OMPI_COMM_WORLD_SIZE, PMI_SIZE
// or PMIX_SIZE in the environment), 0 when no launcher started it.
int launcher_process_count();

// Whether this binary was built with MPI (NORMLAB_MPI).
bool built_with_mpi();

// MPI's world communicator (MPI_Init on creation, MPI_Finalize on destruction) when a launcher
// started this process, else nullptr (use single_process()). A build without MPI started by a
// launcher with more than one process throws: N independent runs would fight over one run directory.
std::unique_ptr<Communicator> open_world_communicator();

}  // namespace normlab
