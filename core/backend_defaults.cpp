// The defaults of Backend's optional kernels (core/norm_kernels.h): a backend that has not
// implemented one says so, naming the kernel and the device.
#include "core/backend.h"
#include "core/error.h"

namespace normlab {

#define NORMLAB_DEFINE_NORM_DEFAULT(name, params) \
  void Backend::name params { fail(#name, "not implemented on {}", device().str()); }
NORMLAB_NORM_KERNELS(NORMLAB_DEFINE_NORM_DEFAULT)
#undef NORMLAB_DEFINE_NORM_DEFAULT

}  // namespace normlab
