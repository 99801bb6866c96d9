// open_world_communicator() of a build without MPI (NORMLAB_MPI=OFF, or MPI not found).
#include "core/error.h"
#include "dist/communicator.h"

namespace normlab {

bool built_with_mpi() { return false; }

std::unique_ptr<Communicator> open_world_communicator() {
  const int launched = launcher_process_count();
  NL_CHECK(launched <= 1, "mpi",
           "started by an MPI launcher with {} processes, but this normlab was built without MPI "
           "(install libopenmpi-dev and configure with -DNORMLAB_MPI=ON); each process would train "
           "alone into the same run directory", launched);
  return nullptr;
}

}  // namespace normlab
