// Fused per-row normalization kernels: LayerNorm, GroupNorm, RMSNorm, forward and backward
// (BatchNorm, whose statistics run over rows, is in cpu_batch_norm.cpp). Derivations:
// docs/derivations.md. Notation per normalized segment of n values:
//   mean = sum x / n,  var = sum (x - mean)^2 / n  (biased),  rstd = 1 / sqrt(var + eps),
//   xhat = (x - mean) rstd,  y = gamma xhat + beta,  dxhat = dy gamma.
//   Centered backward (LayerNorm, GroupNorm per group):
//     dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
//   RMSNorm (no centering, rstd = 1/sqrt(mean(x^2) + eps), xhat = x rstd):
//     dx = rstd (dxhat - xhat mean(dxhat xhat))
//   dgamma = sum over rows of dy xhat,  dbeta = sum over rows of dy.
//
// Speed (bench/kernels_bench.cpp measures these against memcpy of the same bytes): every kernel
// reads each row once from memory and works on it while it sits in L1. Forward: two reductions
// (mean, then centered squares) and the output pass. Backward: one pass makes both row sums and
// adds the row's dy xhat and dy into per-chunk weight-gradient partials; a second pass writes dx.
// Row statistics and row sums are accumulated in double (`omp simd` reductions, so they vectorise);
// weight-gradient sums are staged in the compute type over at most 16 rows, then carried in
// double (WeightGradPartials); the element-wise output passes run in the compute type.
//
// Storage and compute types: each kernel is a template on the storage type S of x, y, dy, dx and
// the weights and their gradients. float32 and float64 compute in themselves; bfloat16 and float16
// rows are converted to float32 one row at a time (read_row), computed in float32 and stored
// rounded (write_row); nothing of the whole tensor is staged. Statistics (mean, rstd) are stored in the compute type: float32 for the
// 16-bit types. RMSNorm's cast order for the 16-bit types follows unit_offset (core/backend.h).
//
// Determinism: rows are cut into chunks whose size depends only on the shape; each chunk's
// weight-gradient partial sums its rows in order, and the partials are added in chunk order. So
// results are bitwise the same for any thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/cpu/cpu_backend.h"
#include "core/cpu/half_convert.h"

namespace normlab {

namespace {

// An element loaded into compute_t<S> (cpu_backend.h; statistics are stored in it too).
template <typename S> compute_t<S> load(S v) { return convert_element<compute_t<S>>(v); }

// The row chunking of the backward kernels: at most 64 chunks of at least 16 rows.
struct RowChunks {
  int64_t size, count;
  explicit RowChunks(int64_t rows) {
    const int64_t wanted = std::max<int64_t>(1, std::min<int64_t>(64, (rows + 15) / 16));
    size = (rows + wanted - 1) / wanted;
    count = (rows + size - 1) / size;
  }
};

// Per-chunk weight-gradient sums (`sums` of them, each (C,)). Rows add into a staging array in T,
// the compute type (cheap: the row loop stays in float32/float64 and in L1); every kStageRows rows the stage is
// folded into the chunk's double partial. So a float32 sum runs over at most 16 terms before it is
// carried in double. Buffers are scratch that the calling thread keeps between calls (a training
// step allocates nothing here).
template <typename T> class WeightGradPartials {
 public:
  static constexpr int64_t kStageRows = 16;

  WeightGradPartials(int64_t chunks, int64_t C, int sums) : C_(C), chunks_(chunks) {
    static thread_local std::vector<double> partial_scratch;
    static thread_local std::vector<T> stage_scratch;
    const size_t need = static_cast<size_t>(chunks * C * sums);
    if (partial_scratch.size() < need) partial_scratch.resize(need);
    if (stage_scratch.size() < need) stage_scratch.resize(need);
    partial_ = partial_scratch.data();
    stage_ = stage_scratch.data();
  }
  // Sum `which` of chunk k: its staging array (rows add here).
  T* stage(int which, int64_t k) { return stage_ + (which * chunks_ + k) * C_; }
  void start_chunk(int which, int64_t k) {
    std::fill(stage(which, k), stage(which, k) + C_, T(0));
    std::fill(partial(which, k), partial(which, k) + C_, 0.0);
  }
  // Call after each row (r = its index within the chunk, last = whether it ends the chunk).
  void after_row(int which, int64_t k, int64_t r, bool last) {
    if ((r + 1) % kStageRows != 0 && !last) return;
    T* st = stage(which, k);
    double* p = partial(which, k);
    for (int64_t j = 0; j < C_; ++j) {
      p[j] += st[j];
      st[j] = T(0);
    }
  }
  // out[j] = sum over chunks, in chunk order, of sum `which`, rounded once to S.
  template <typename S> void reduce_into(int which, S* out) {
    const double* p = partial(which, 0);
#pragma omp parallel for if (chunks_ * C_ > kParallelElements)
    for (int64_t j = 0; j < C_; ++j) {
      double s = 0.0;
      for (int64_t k = 0; k < chunks_; ++k) s += p[k * C_ + j];
      out[j] = convert_element<S>(s);
    }
  }

 private:
  double* partial(int which, int64_t k) { return partial_ + (which * chunks_ + k) * C_; }
  int64_t C_, chunks_;
  double* partial_;
  T* stage_;
};

// ---- rows of 16-bit storage seen as float32 ----
// A 16-bit row is converted once by the vector converters (core/cpu/half_convert.h) into scratch
// that the calling thread keeps, so the loops run on float32 and vectorise: float16's conversion
// one element at a time is a scalar instruction that kept them scalar (2.3x bfloat16's norm time
// per char_small step, bench/README.md). The conversions are exact one way and round to nearest
// even the other, as load/store do, so the results are bitwise what element-wise conversion gave.
// float32 and float64 rows are used in place.

template <typename S> const compute_t<S>* read_row(const S* row, int64_t n, std::vector<float>& scratch) {
  if constexpr (is_half_v<S>) {
    scratch.resize(static_cast<size_t>(n));
    to_float(row, scratch.data(), n);
    return scratch.data();
  } else {
    return row;
  }
}

// Where a row's output is computed: scratch for a 16-bit row (written back by write_row), the
// row itself otherwise.
template <typename S> compute_t<S>* output_row(S* row, int64_t n, std::vector<float>& scratch) {
  if constexpr (is_half_v<S>) {
    scratch.resize(static_cast<size_t>(n));
    return scratch.data();
  } else {
    return row;
  }
}
template <typename S> void write_row(const compute_t<S>* computed, S* row, int64_t n) {
  if constexpr (is_half_v<S>) from_float(computed, row, n);
}

// A (C,) weight in the compute type; `fill` where it is undefined (no affine parameters).
template <typename S, typename T = compute_t<S>>
std::vector<T> weight_in_compute_type(const Tensor& w, int64_t C, T fill) {
  std::vector<T> out(static_cast<size_t>(C), fill);
  if (!w.defined()) return out;
  if constexpr (is_half_v<S>) to_float(w.data<S>(), out.data(), C);
  else std::copy(w.data<S>(), w.data<S>() + C, out.data());
  return out;
}

// ---- per-row groups: x (rows, C) with C = groups * n; mean, rstd (rows, groups) ----
// LayerNorm is the case groups = 1, so the two share this code (and agree bitwise).

// y = round(xhat gamma + beta), computed in the compute type T and rounded once to S.
template <typename S>
void grouped_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t groups,
                     double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  using T = compute_t<S>;
  const int64_t C = x.size(-1), rows = x.numel() / C, n = C / groups;
  const S* xp = x.data<S>();
  // Without affine parameters gamma = 1 and beta = 0: (x - m) r * 1 + 0 is exact, one loop serves.
  const std::vector<T> g = weight_in_compute_type<S>(gamma, C, T(1)), b = weight_in_compute_type<S>(beta, C, T(0));
  S* yp = y.data<S>();
  T* mp = mean.data<T>();
  T* rp = rstd.data<T>();
#pragma omp parallel for if (x.numel() > kParallelElements)
  for (int64_t s = 0; s < rows * groups; ++s) {  // s = row * groups + group
    thread_local std::vector<float> x_scratch, y_scratch;
    const T* xs = read_row(xp + s * n, n, x_scratch);
    T* ys = output_row(yp + s * n, n, y_scratch);
    const int64_t c0 = (s % groups) * n;
    double sum = 0.0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) sum += xs[j];
    mp[s] = static_cast<T>(sum / static_cast<double>(n));
    const double m = mp[s];  // the stored (rounded) mean, as backward will see it
    double sq = 0.0;
#pragma omp simd reduction(+ : sq)
    for (int64_t j = 0; j < n; ++j) {
      const double d = xs[j] - m;
      sq += d * d;
    }
    rp[s] = static_cast<T>(1.0 / std::sqrt(sq / static_cast<double>(n) + eps));
    const T mt = mp[s], rt = rp[s];
    for (int64_t j = 0; j < n; ++j) ys[j] = (xs[j] - mt) * rt * g[c0 + j] + b[c0 + j];
    write_row(ys, yp + s * n, n);
  }
}

// Backward in the compute type T; a 16-bit rounding of the forward counts as the identity.
template <typename S>
void grouped_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                      const Tensor& rstd, int64_t groups, Tensor& dx, Tensor& dgamma,
                      Tensor& dbeta) {
  using T = compute_t<S>;
  const int64_t C = x.size(-1), rows = x.numel() / C, n = C / groups;
  const S* dyp = dy.data<S>();
  const S* xp = x.data<S>();
  const T* mp = mean.data<T>();
  const T* rp = rstd.data<T>();
  S* dxp = data_or_null<S>(dx);
  const std::vector<T> g = weight_in_compute_type<S>(gamma, C, T(1));
  const bool want_dg = dgamma.defined(), want_db = dbeta.defined();
  const RowChunks chunks(rows);
  WeightGradPartials<T> partial(chunks.count, C, 2);
#pragma omp parallel for if (x.numel() > kParallelElements)
  for (int64_t k = 0; k < chunks.count; ++k) {
    thread_local std::vector<float> dy_scratch, x_scratch, dx_scratch;
    T* sdg = partial.stage(0, k);
    T* sdb = partial.stage(1, k);
    if (want_dg) partial.start_chunk(0, k);
    if (want_db) partial.start_chunk(1, k);
    const int64_t r0 = k * chunks.size, r_end = std::min(rows, r0 + chunks.size);
    for (int64_t r = r0; r < r_end; ++r) {
      for (int64_t grp = 0; grp < groups; ++grp) {
        const int64_t s = r * groups + grp, c0 = grp * n;
        const T* dys = read_row(dyp + s * n, n, dy_scratch);
        const T* xs = read_row(xp + s * n, n, x_scratch);
        const T* gs = g.data() + c0;
        const T m = mp[s], rs = rp[s];
        double sum_dxhat = 0.0, sum_dxhat_xhat = 0.0;
#pragma omp simd reduction(+ : sum_dxhat, sum_dxhat_xhat)
        for (int64_t j = 0; j < n; ++j) {
          const T xhat = (xs[j] - m) * rs, dxhat = dys[j] * gs[j];
          sum_dxhat += double(dxhat);
          sum_dxhat_xhat += double(dxhat * xhat);
        }
        if (want_dg)
          for (int64_t j = 0; j < n; ++j) sdg[c0 + j] += dys[j] * ((xs[j] - m) * rs);
        if (want_db)
          for (int64_t j = 0; j < n; ++j) sdb[c0 + j] += dys[j];
        if (dxp) {
          const T a = static_cast<T>(sum_dxhat / static_cast<double>(n));
          const T b = static_cast<T>(sum_dxhat_xhat / static_cast<double>(n));
          T* dxs = output_row(dxp + s * n, n, dx_scratch);
          for (int64_t j = 0; j < n; ++j) dxs[j] = rs * (dys[j] * gs[j] - a - (xs[j] - m) * rs * b);
          write_row(dxs, dxp + s * n, n);
        }
      }
      if (want_dg) partial.after_row(0, k, r - r0, r + 1 == r_end);
      if (want_db) partial.after_row(1, k, r - r0, r + 1 == r_end);
    }
  }
  if (want_dg) partial.reduce_into(0, dgamma.data<S>());
  if (want_db) partial.reduce_into(1, dbeta.data<S>());
}

}  // namespace

// ---- LayerNorm: one group per row ----

void CpuBackend::layer_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  dispatch_floating_or_half(x.dtype(), "layer_norm", [&](auto t) {
    grouped_forward<decltype(t)>(x, gamma, beta, 1, eps, y, mean, rstd);
  });
}

void CpuBackend::layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& mean, const Tensor& rstd, Tensor& dx,
                                     Tensor& dgamma, Tensor& dbeta) {
  dispatch_floating_or_half(x.dtype(), "layer_norm_backward", [&](auto t) {
    grouped_backward<decltype(t)>(dy, x, gamma, mean, rstd, 1, dx, dgamma, dbeta);
  });
}

// ---- GroupNorm ----

void CpuBackend::group_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    int64_t groups, double eps, Tensor& y, Tensor& mean,
                                    Tensor& rstd) {
  NL_CHECK(groups > 0 && x.size(-1) % groups == 0, "group_norm", "{} groups do not divide C = {}",
           groups, x.size(-1));
  dispatch_floating_or_half(x.dtype(), "group_norm", [&](auto t) {
    grouped_forward<decltype(t)>(x, gamma, beta, groups, eps, y, mean, rstd);
  });
}

void CpuBackend::group_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& mean, const Tensor& rstd, int64_t groups,
                                     Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  NL_CHECK(groups > 0 && x.size(-1) % groups == 0, "group_norm", "{} groups do not divide C = {}",
           groups, x.size(-1));
  dispatch_floating_or_half(x.dtype(), "group_norm_backward", [&](auto t) {
    grouped_backward<decltype(t)>(dy, x, gamma, mean, rstd, groups, dx, dgamma, dbeta);
  });
}

// ---- RMSNorm: y = x rstd g, g = w or 1 + w (unit_offset); rstd (rows,) ----

namespace {

// g = w, 1 + w, or ones when there is no weight: (C,), in the compute type T.
template <typename S, typename T = compute_t<S>>
std::vector<T> rms_gain(const Tensor& weight, bool unit_offset, int64_t C) {
  std::vector<T> g(static_cast<size_t>(C), T(1));
  if (weight.defined()) {
    const S* wp = weight.data<S>();
    const T offset = unit_offset ? T(1) : T(0);
    for (int64_t j = 0; j < C; ++j) g[j] = offset + load(wp[j]);
  }
  return g;
}

// One row of y, from x's row in the compute type. The cast order (core/backend.h) matters only when
// S is a 16-bit type: LLaMA (w): y = round(round(x rstd) w); Gemma (1 + w): y = round(x rstd (1 + w)).
// The inner rounding is a store and a load of the whole row (bitwise the per-element round trip).
template <typename S, typename T = compute_t<S>>
void rms_output_row(const T* xr, T r, const T* g, int64_t C, bool unit_offset, S* yr, std::vector<float>& scratch) {
  T* y = output_row(yr, C, scratch);
  if (unit_offset) {
    for (int64_t j = 0; j < C; ++j) y[j] = xr[j] * r * g[j];
  } else {
    for (int64_t j = 0; j < C; ++j) y[j] = xr[j] * r;
    if constexpr (is_half_v<S>) {
      from_float(y, yr, C);
      to_float(yr, y, C);
    }
    for (int64_t j = 0; j < C; ++j) y[j] *= g[j];
  }
  write_row(y, yr, C);
}

}  // namespace

void CpuBackend::rms_norm_forward(const Tensor& x, const Tensor& weight, double eps,
                                  bool unit_offset, Tensor& y, Tensor& rstd) {
  dispatch_floating_or_half(x.dtype(), "rms_norm", [&](auto t) {
    using S = decltype(t);
    using T = compute_t<S>;
    const int64_t C = x.size(-1), rows = x.numel() / C;
    const std::vector<T> gain = rms_gain<S>(weight, unit_offset, C);
    const S* xp = x.data<S>();
    S* yp = y.data<S>();
    T* rp = rstd.data<T>();
#pragma omp parallel for if (x.numel() > kParallelElements)
    for (int64_t row = 0; row < rows; ++row) {
      thread_local std::vector<float> x_scratch, y_scratch;
      const T* xr = read_row(xp + row * C, C, x_scratch);
      double sq = 0.0;
#pragma omp simd reduction(+ : sq)
      for (int64_t j = 0; j < C; ++j) {
        const double v = xr[j];
        sq += v * v;
      }
      rp[row] = static_cast<T>(1.0 / std::sqrt(sq / static_cast<double>(C) + eps));
      rms_output_row(xr, rp[row], gain.data(), C, unit_offset, yp + row * C, y_scratch);
    }
  });
}

// Backward in the compute type T; the forward's 16-bit roundings count as the identity.
void CpuBackend::rms_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& weight,
                                   const Tensor& rstd, bool unit_offset, Tensor& dx,
                                   Tensor& dweight) {
  dispatch_floating_or_half(x.dtype(), "rms_norm_backward", [&](auto t) {
    using S = decltype(t);
    using T = compute_t<S>;
    const int64_t C = x.size(-1), rows = x.numel() / C;
    const std::vector<T> gain = rms_gain<S>(weight, unit_offset, C);
    const T* g = gain.data();
    const S* dyp = dy.data<S>();
    const S* xp = x.data<S>();
    const T* rp = rstd.data<T>();
    S* dxp = data_or_null<S>(dx);
    const bool want_dw = dweight.defined();
    const RowChunks chunks(rows);
    WeightGradPartials<T> partial(chunks.count, C, 1);
#pragma omp parallel for if (x.numel() > kParallelElements)
    for (int64_t k = 0; k < chunks.count; ++k) {
      T* sdw = partial.stage(0, k);
      if (want_dw) partial.start_chunk(0, k);
      const int64_t r0 = k * chunks.size, r_end = std::min(rows, r0 + chunks.size);
      for (int64_t row = r0; row < r_end; ++row) {
        thread_local std::vector<float> dy_scratch, x_scratch, dx_scratch;
        const T* dyr = read_row(dyp + row * C, C, dy_scratch);
        const T* xr = read_row(xp + row * C, C, x_scratch);
        const T r = rp[row];
        double sum_dxhat_xhat = 0.0;
#pragma omp simd reduction(+ : sum_dxhat_xhat)
        for (int64_t j = 0; j < C; ++j)
          sum_dxhat_xhat += double(dyr[j] * g[j] * (xr[j] * r));
        if (want_dw)
          for (int64_t j = 0; j < C; ++j) sdw[j] += dyr[j] * (xr[j] * r);
        if (dxp) {
          const T b = static_cast<T>(sum_dxhat_xhat / static_cast<double>(C));
          T* dxr = output_row(dxp + row * C, C, dx_scratch);
          for (int64_t j = 0; j < C; ++j) dxr[j] = r * (dyr[j] * g[j] - xr[j] * r * b);
          write_row(dxr, dxp + row * C, C);
        }
        if (want_dw) partial.after_row(0, k, row - r0, row + 1 == r_end);
      }
    }
    if (want_dw) partial.reduce_into(0, dweight.data<S>());
  });
}

}  // namespace normlab
