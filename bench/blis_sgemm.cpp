#include "blis_sgemm.h"

#include <dlfcn.h>

#include <cstdlib>

namespace normlab {

namespace {
constexpr int kNoTranspose = 0;  // BLIS_NO_TRANSPOSE; transposes are expressed by the strides below
}  // namespace

std::unique_ptr<BlisSgemm> BlisSgemm::load() {
  const char* given = std::getenv("NORMLAB_BLIS_LIBRARY");
  const std::string path = given ? given : "/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return nullptr;
  std::unique_ptr<BlisSgemm> blis(new BlisSgemm);
  blis->handle_ = handle;
  blis->sgemm_ = reinterpret_cast<decltype(blis->sgemm_)>(dlsym(handle, "bli_sgemm"));
  blis->set_threads_ = reinterpret_cast<decltype(blis->set_threads_)>(dlsym(handle, "bli_thread_set_num_threads"));
  blis->arch_id_ = reinterpret_cast<decltype(blis->arch_id_)>(dlsym(handle, "bli_arch_query_id"));
  blis->arch_name_ = reinterpret_cast<decltype(blis->arch_name_)>(dlsym(handle, "bli_arch_string"));
  if (!blis->sgemm_ || !blis->set_threads_ || !blis->arch_id_ || !blis->arch_name_) return nullptr;
  return blis;
}

BlisSgemm::~BlisSgemm() {
  if (handle_) dlclose(handle_);
}

std::string BlisSgemm::kernel_set() const { return arch_name_(arch_id_()); }

void BlisSgemm::set_threads(int threads) const { set_threads_(threads); }

void BlisSgemm::gemm(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c) const {
  const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
  // op(A) is (m, k): A stored (m, k) has strides (k, 1); stored (k, m) and transposed, (1, m).
  const int64_t rsa = g.trans_a ? 1 : g.k, csa = g.trans_a ? g.m : 1;
  const int64_t rsb = g.trans_b ? 1 : g.n, csb = g.trans_b ? g.k : 1;
  for (int64_t i = 0; i < g.batch; ++i)
    sgemm_(kNoTranspose, kNoTranspose, g.m, g.n, g.k, &alpha, a.data<float>() + i * g.stride_a, rsa, csa,
           b.data<float>() + i * g.stride_b, rsb, csb, &beta, c.data<float>() + i * g.stride_c, g.n, 1);
}

}  // namespace normlab
