// Could a newer oneDNN make float16 pay on a CPU with avx512_fp16? (issue 40)
// Times oneDNN 3's matmul at the models' Linear shapes in float32, float16 and bfloat16 (inputs
// and output in that type, float32 accumulation as oneDNN does it) and prints GFLOP/s and the
// ratio to float32. Built against the oneDNN 3 wheel from PyPI by bench/onednn3_f16 (not part of
// the normlab build, which links Debian's oneDNN 2.6, whose matmul has no float16).
//   onednn3_f16 [--reps R] [--min-ms MS]
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Shape {
  const char* name;
  long m, n, k;  // C(m,n) = A(m,k) B(k,n)
};

const Shape kShapes[] = {
    {"char_small up", 768, 512, 128}, {"char_small down", 768, 128, 512}, {"mid up", 2048, 2048, 512},
    {"mid down", 2048, 512, 2048},    {"mid q", 2048, 512, 512},          {"gpt2 up", 1024, 3072, 768},
};

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median seconds per call of one matmul, each repetition timing at least min_ms of calls.
double time_matmul(dnnl::engine& eng, dnnl::stream& strm, const Shape& s, dt type, int reps, double min_ms) {
  const dnnl::memory::desc a_md({s.m, s.k}, type, tag::ab), b_md({s.k, s.n}, type, tag::ab),
      c_md({s.m, s.n}, type, tag::ab);
  const dnnl::matmul::primitive_desc pd(eng, a_md, b_md, c_md);
  const dnnl::matmul prim(pd);
  dnnl::memory a(pd.src_desc(), eng), b(pd.weights_desc(), eng), c(pd.dst_desc(), eng);
  // Small values that every type holds: bytes 0x3c00-ish in 16-bit, 0.5 in float32.
  std::memset(a.get_data_handle(), 0x30, a_md.get_size());
  std::memset(b.get_data_handle(), 0x30, b_md.get_size());
  auto run = [&] {
    prim.execute(strm, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    strm.wait();
  };
  run();
  std::vector<double> per_call;
  for (int r = 0; r < reps; ++r) {
    int calls = 0;
    const double start = seconds_now();
    do {
      run();
      ++calls;
    } while ((seconds_now() - start) * 1e3 < min_ms);
    per_call.push_back((seconds_now() - start) / calls);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  double min_ms = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--reps") reps = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--min-ms") min_ms = std::atof(argv[i + 1]);
  }
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const dnnl::version_t* v = dnnl_version();
  std::printf("oneDNN %d.%d.%d, %s; median of %d repetitions of >= %.0f ms\n", v->major, v->minor, v->patch,
              v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other runtime", reps, min_ms);
  std::printf("| shape | m, n, k | f32 GFLOP/s | f16 GFLOP/s | bf16 GFLOP/s | f16 / f32 | bf16 / f32 |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Shape& s : kShapes) {
    const double flop = 2.0 * s.m * s.n * s.k;
    const double f32 = time_matmul(eng, strm, s, dt::f32, reps, min_ms);
    const double f16 = time_matmul(eng, strm, s, dt::f16, reps, min_ms);
    const double bf16 = time_matmul(eng, strm, s, dt::bf16, reps, min_ms);
    std::printf("| %s | %ld, %ld, %ld | %.0f | %.0f | %.0f | %.2f | %.2f |\n", s.name, s.m, s.n, s.k, flop / f32 / 1e9,
                flop / f16 / 1e9, flop / bf16 / 1e9, f32 / f16, f32 / bf16);
  }
  return 0;
}
