// Half-precision GEMM through oneDNN's matmul primitive: bfloat16/float16 A, B, C, float32
// accumulation, alpha as an output scale and beta as a sum post-op (dst = alpha A B + beta dst,
// the old dst read in its half dtype). Creating a primitive costs far more than a small GEMM, so
// primitives are cached by everything they depend on: dtype, transposes, sizes, strides, alpha, beta.
//
// Layout: every operand is a 3-d (batch, rows, cols) memory descriptor with explicit strides, so
// transposes are strides (never copies) and a zero batch stride becomes a batch dimension of 1,
// which matmul broadcasts over dst's batch.
#include <omp.h>

#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string_view>
#include <tuple>

#include "core/cpu/f32_gemm.h"
#include "core/cpu/half_gemm.h"

namespace normlab {

namespace {

using dnnl::memory;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

memory::data_type onednn_type(DType dtype) {
  switch (dtype) {
    case DType::BF16: return memory::data_type::bf16;
    case DType::F16: return memory::data_type::f16;
    case DType::F32: return memory::data_type::f32;  // bench/gemm_precision's comparison with sgemm
    default: fail("gemm", "oneDNN's matmul takes bfloat16, float16 or float32, got {}", dtype_name(dtype));
  }
}

// The logical (count, rows, cols) operand, stored row-major as (rows, cols) or, transposed, as
// (cols, rows); count 1 with batch_stride 0 is one matrix broadcast over the batch.
memory::desc operand_desc(DType dtype, int64_t batch, int64_t batch_stride, int64_t rows, int64_t cols,
                          bool transposed) {
  const int64_t count = batch_stride == 0 ? 1 : batch;
  const int64_t stride = batch_stride == 0 ? rows * cols : batch_stride;
  const memory::dims strides = transposed ? memory::dims{stride, 1, rows} : memory::dims{stride, cols, 1};
  return memory::desc({count, rows, cols}, onednn_type(dtype), strides);
}

struct MatmulKey {
  DType dtype;
  bool trans_a, trans_b;
  int64_t batch, m, n, k, stride_a, stride_b, stride_c;
  double alpha, beta;
  auto operator<=>(const MatmulKey&) const = default;
};

dnnl::matmul::primitive_desc make_primitive_desc(const MatmulKey& key) {
  const memory::desc a = operand_desc(key.dtype, key.batch, key.stride_a, key.m, key.k, key.trans_a);
  const memory::desc b = operand_desc(key.dtype, key.batch, key.stride_b, key.k, key.n, key.trans_b);
  const memory::desc c({key.batch, key.m, key.n}, onednn_type(key.dtype),
                       memory::dims{key.stride_c, key.n, 1});
  dnnl::primitive_attr attr;
  if (key.alpha != 1.0) attr.set_output_scales(0, {static_cast<float>(key.alpha)});
  if (key.beta != 0.0) {
    dnnl::post_ops post;
    post.append_sum(static_cast<float>(key.beta));
    attr.set_post_ops(post);
  }
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, cpu_engine());
}

// oneDNN's reference kernels ("ref:any") are plain loops, far slower than the float32 fallback.
bool is_reference_kernel(const dnnl::matmul::primitive_desc& pd) {
  return std::string_view(pd.impl_info_str()).starts_with("ref");
}

struct CachedMatmul {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul matmul;
};

CachedMatmul cached_matmul(const MatmulKey& key) {
  static std::mutex mutex;
  static std::map<MatmulKey, CachedMatmul> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() >= 1024) cache.clear();  // a bound, far above the shapes of one model
    const dnnl::matmul::primitive_desc pd = make_primitive_desc(key);
    it = cache.emplace(key, CachedMatmul{pd, dnnl::matmul(pd)}).first;
  }
  return it->second;
}

// The CPU's instruction set as oneDNN sees it (ONEDNN_MAX_CPU_ISA can lower it) includes isa.
bool effective_isa_has(dnnl_cpu_isa_t isa) {
  const auto effective = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  return (effective & static_cast<unsigned>(isa)) == static_cast<unsigned>(isa);
}

// Whether oneDNN runs dtype natively here: avx512_bf16 at least, and a non-reference kernel for a
// plain GEMM of that dtype.
bool probe_native_kernel(DType dtype) {
  if (!effective_isa_has(dnnl_cpu_isa_avx512_core_bf16)) return false;
  try {
    const MatmulKey probe{dtype, false, true, 1, 64, 64, 64, 64 * 64, 64 * 64, 64 * 64, 1.0, 0.0};
    return !is_reference_kernel(make_primitive_desc(probe));
  } catch (const dnnl::error&) {  // no implementation at all for this dtype
    return false;
  }
}

}  // namespace

bool onednn_gemm_available(DType dtype) {
  static const bool bf16 = probe_native_kernel(DType::BF16);
  static const bool f16 = probe_native_kernel(DType::F16);
  return dtype == DType::BF16 ? bf16 : dtype == DType::F16 ? f16 : false;
}

bool onednn_gemm_preferred(DType dtype) {
  static const bool amx = effective_isa_has(dnnl_cpu_isa_avx512_core_amx);
  return amx && onednn_gemm_available(dtype);
}

void onednn_gemm(const GemmArgs& g, const Tensor& a, const Tensor& b, Tensor& c) {
  const MatmulKey key{c.dtype(), g.trans_a, g.trans_b, g.batch,    g.m,     g.n,
                      g.k,       g.stride_a, g.stride_b, g.stride_c, g.alpha, g.beta};
  const CachedMatmul cached = cached_matmul(key);
  dnnl::stream stream(cpu_engine());
  memory a_mem(cached.pd.src_desc(), cpu_engine(), const_cast<void*>(a.raw_data()));
  memory b_mem(cached.pd.weights_desc(), cpu_engine(), const_cast<void*>(b.raw_data()));
  memory c_mem(cached.pd.dst_desc(), cpu_engine(), c.raw_data());
  cached.matmul.execute(stream, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
  stream.wait();
}

// ---- float32 pieces (core/cpu/f32_gemm.h) ----

namespace {

// A 2-d float32 operand, logically (rows, cols), stored row-major with leading dimension ld as
// (rows, cols) or, transposed, as (cols, rows).
memory::desc f32_operand(int64_t rows, int64_t cols, int64_t ld, bool transposed) {
  return memory::desc({rows, cols}, memory::data_type::f32,
                      transposed ? memory::dims{1, ld} : memory::dims{ld, 1});
}

struct SgemmKey {
  bool trans_a, trans_b;
  int64_t m, n, k, lda, ldb, ldc;
  float alpha, beta;
  auto operator<=>(const SgemmKey&) const = default;
};

dnnl::matmul::primitive_desc make_sgemm_desc(const SgemmKey& key) {
  dnnl::primitive_attr attr;
  if (key.alpha != 1.0f) attr.set_output_scales(0, {key.alpha});
  if (key.beta != 0.0f) {
    dnnl::post_ops post;
    post.append_sum(key.beta);
    attr.set_post_ops(post);
  }
  const dnnl::matmul::desc desc(f32_operand(key.m, key.k, key.lda, key.trans_a),
                                f32_operand(key.k, key.n, key.ldb, key.trans_b),
                                f32_operand(key.m, key.n, key.ldc, false));
  return dnnl::matmul::primitive_desc(desc, attr, cpu_engine());
}

// A primitive with its operands' memory objects (their data handles set per call).
struct SgemmPrimitive {
  dnnl::matmul matmul;
  memory a, b, c;
};

// Primitives per thread: oneDNN plans a primitive for the thread count it sees when created, so
// each is created (and run) with OpenMP's thread count set to 1 on the calling thread. The
// memory objects and the stream are made once too: at char_small's (64, 64, 32) products their
// creation per call cost more than the product.
SgemmPrimitive& cached_sgemm(const SgemmKey& key) {
  thread_local std::map<SgemmKey, SgemmPrimitive> cache;
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() >= 1024) cache.clear();  // a bound, far above the shapes of one model
    const dnnl::matmul::primitive_desc pd = make_sgemm_desc(key);
    SgemmPrimitive p{dnnl::matmul(pd), memory(pd.src_desc(), cpu_engine(), nullptr),
                     memory(pd.weights_desc(), cpu_engine(), nullptr), memory(pd.dst_desc(), cpu_engine(), nullptr)};
    it = cache.emplace(key, std::move(p)).first;
  }
  return it->second;
}

// Sets OpenMP's thread count for regions this thread opens to 1, restoring it on scope exit.
class OneOpenMpThread {
 public:
  OneOpenMpThread() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneOpenMpThread() { omp_set_num_threads(saved_); }
  OneOpenMpThread(const OneOpenMpThread&) = delete;
  OneOpenMpThread& operator=(const OneOpenMpThread&) = delete;

 private:
  int saved_;
};

}  // namespace

bool onednn_f32_available() {
  static const bool available = [] {
    try {
      const SgemmKey probe{false, true, 64, 64, 64, 64, 64, 64, 1.0f, 0.0f};
      return !is_reference_kernel(make_sgemm_desc(probe));
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}

void onednn_sgemm_one_thread(const SgemmPiece& p) {
  const OneOpenMpThread one_thread;
  const SgemmKey key{p.trans_a, p.trans_b, p.m, p.n, p.k, p.lda, p.ldb, p.ldc, p.alpha, p.beta};
  SgemmPrimitive& primitive = cached_sgemm(key);
  thread_local dnnl::stream stream(cpu_engine());
  primitive.a.set_data_handle(const_cast<float*>(p.a));
  primitive.b.set_data_handle(const_cast<float*>(p.b));
  primitive.c.set_data_handle(p.c);
  primitive.matmul.execute(stream, {{DNNL_ARG_SRC, primitive.a}, {DNNL_ARG_WEIGHTS, primitive.b}, {DNNL_ARG_DST, primitive.c}});
  stream.wait();
}

}  // namespace normlab
