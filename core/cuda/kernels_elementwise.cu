// Elementwise kernels: fill, strided copy with dtype conversion, unary ops and their derivatives
// (the formulas of core/cpu/cpu_elementwise.cpp, in the same order of operations), broadcasting
// binary ops, axpy and the dropout mask. One thread per element, grid-stride loops.
#include <type_traits>

#include "core/cuda/device_utils.cuh"

namespace normlab::cuda {

namespace {

constexpr double kGeluK = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kGeluC = 0.044715;

template <typename T>
__global__ void fill_kernel(T* out, int64_t n, T value) {
  NL_GRID_STRIDE(i, n) out[i] = value;
}

// v as D. The 16-bit types convert through float: exact from them, rounded to nearest even into
// them (from double that is two roundings, double -> float -> 16-bit; the trainer never casts
// float64 to 16 bits).
template <typename D, typename S>
__device__ D convert_value(S v) {
  if constexpr (std::is_same_v<S, D>) return v;
  else if constexpr (std::is_same_v<S, __half>) return convert_value<D>(__half2float(v));
  else if constexpr (std::is_same_v<S, __nv_bfloat16>) return convert_value<D>(__bfloat162float(v));
  else if constexpr (std::is_same_v<D, __half>) return __float2half_rn(static_cast<float>(v));
  else if constexpr (std::is_same_v<D, __nv_bfloat16>) return __float2bfloat16_rn(static_cast<float>(v));
  else return static_cast<D>(v);
}

template <typename S, typename D>
__global__ void copy_strided_kernel(const S* src, Dims dims, D* dst, int64_t n) {
  NL_GRID_STRIDE(i, n) {
    int64_t rest = i, offset = 0;
    for (int d = dims.nd - 1; d >= 0; --d) {
      const int64_t size = dims.shape[d];
      offset += (rest % size) * dims.stride[d];
      rest /= size;
    }
    dst[i] = convert_value<D>(src[offset]);
  }
}

template <typename T, UOp OP>
__device__ inline T unary_value(T x, T alpha) {
  if constexpr (OP == UOp::Neg) return -x;
  if constexpr (OP == UOp::Exp) return d_exp(x);
  if constexpr (OP == UOp::Log) return d_log(x);
  if constexpr (OP == UOp::Sqrt) return d_sqrt(x);
  if constexpr (OP == UOp::Square) return x * x;
  if constexpr (OP == UOp::Tanh) return d_tanh(x);
  if constexpr (OP == UOp::Relu) return x > T(0) ? x : T(0);
  if constexpr (OP == UOp::Gelu) return T(0.5) * x * (T(1) + d_tanh(T(kGeluK) * (x + T(kGeluC) * x * x * x)));
  if constexpr (OP == UOp::Silu) return x / (T(1) + d_exp(-x));
  if constexpr (OP == UOp::Scale) return alpha * x;
  if constexpr (OP == UOp::AddScalar) return x + alpha;
  return T(0);
}

// dx = dy * f'(x), with y = f(x) where that is cheaper.
template <typename T, UOp OP>
__device__ inline T unary_derivative(T x, T y, T dy, T alpha) {
  if constexpr (OP == UOp::Neg) return -dy;
  if constexpr (OP == UOp::Exp) return dy * y;
  if constexpr (OP == UOp::Log) return dy / x;
  if constexpr (OP == UOp::Sqrt) return dy / (T(2) * y);
  if constexpr (OP == UOp::Square) return T(2) * x * dy;
  if constexpr (OP == UOp::Tanh) return dy * (T(1) - y * y);
  if constexpr (OP == UOp::Relu) return x > T(0) ? dy : T(0);
  if constexpr (OP == UOp::Gelu) {
    const T t = d_tanh(T(kGeluK) * (x + T(kGeluC) * x * x * x));
    const T dt = T(kGeluK) * (T(1) + T(3 * kGeluC) * x * x);
    return dy * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * dt);
  }
  if constexpr (OP == UOp::Silu) {
    const T s = T(1) / (T(1) + d_exp(-x));
    return dy * s * (T(1) + x * (T(1) - s));
  }
  if constexpr (OP == UOp::Scale) return alpha * dy;
  if constexpr (OP == UOp::AddScalar) return dy;
  return T(0);
}

template <typename T, UOp OP>
__global__ void unary_kernel(const T* x, T* y, int64_t n, T alpha) {
  NL_GRID_STRIDE(i, n) y[i] = unary_value<T, OP>(x[i], alpha);
}

template <typename T, UOp OP>
__global__ void unary_backward_kernel(const T* x, const T* y, const T* dy, T* dx, int64_t n, T alpha) {
  NL_GRID_STRIDE(i, n) {
    const T xi = x ? x[i] : T(0), yi = y ? y[i] : T(0);
    dx[i] = unary_derivative<T, OP>(xi, yi, dy[i], alpha);
  }
}

template <typename T>
struct UnaryLaunch {
  const T* x;
  T* y;
  int64_t n;
  T alpha;
  cudaStream_t stream;
  template <UOp OP>
  void run() const {
    unary_kernel<T, OP><<<grid_for(n), kThreads, 0, stream>>>(x, y, n, alpha);
  }
};

template <typename T>
struct UnaryBackwardLaunch {
  const T *x, *y, *dy;
  T* dx;
  int64_t n;
  T alpha;
  cudaStream_t stream;
  template <UOp OP>
  void run() const {
    unary_backward_kernel<T, OP><<<grid_for(n), kThreads, 0, stream>>>(x, y, dy, dx, n, alpha);
  }
};

// Calls launch.run<OP>() for the run-time op: the switch lives in one place.
template <typename L>
cudaError_t with_unary_op(UOp op, const L& launch) {
  switch (op) {
    case UOp::Neg:
      launch.template run<UOp::Neg>();
      break;
    case UOp::Exp:
      launch.template run<UOp::Exp>();
      break;
    case UOp::Log:
      launch.template run<UOp::Log>();
      break;
    case UOp::Sqrt:
      launch.template run<UOp::Sqrt>();
      break;
    case UOp::Square:
      launch.template run<UOp::Square>();
      break;
    case UOp::Tanh:
      launch.template run<UOp::Tanh>();
      break;
    case UOp::Relu:
      launch.template run<UOp::Relu>();
      break;
    case UOp::Gelu:
      launch.template run<UOp::Gelu>();
      break;
    case UOp::Silu:
      launch.template run<UOp::Silu>();
      break;
    case UOp::Scale:
      launch.template run<UOp::Scale>();
      break;
    case UOp::AddScalar:
      launch.template run<UOp::AddScalar>();
      break;
  }
  return cudaGetLastError();
}

template <typename T, BOp OP>
__device__ inline T binary_value(T a, T b) {
  if constexpr (OP == BOp::Add) return a + b;
  if constexpr (OP == BOp::Sub) return a - b;
  if constexpr (OP == BOp::Mul) return a * b;
  if constexpr (OP == BOp::Div) return a / b;
  return T(0);
}

template <typename T, BOp OP, BinaryIndexing IX>
__global__ void binary_kernel(const T* a, const T* b, T* out, int64_t n, int64_t na, int64_t nb, Dims dims,
                              Dims b_dims) {
  NL_GRID_STRIDE(i, n) {
    int64_t ia = i, ib = i;
    if constexpr (IX == BinaryIndexing::BSuffix) ib = i % nb;
    if constexpr (IX == BinaryIndexing::ASuffix) ia = i % na;
    if constexpr (IX == BinaryIndexing::General) {
      int64_t rest = i;
      ia = 0;
      ib = 0;
      for (int d = dims.nd - 1; d >= 0; --d) {
        const int64_t index = rest % dims.shape[d];
        rest /= dims.shape[d];
        ia += index * dims.stride[d];
        ib += index * b_dims.stride[d];
      }
    }
    out[i] = binary_value<T, OP>(a[ia], b[ib]);
  }
}

template <typename T, BOp OP>
void launch_binary(BinaryIndexing ix, const T* a, const T* b, T* out, int64_t n, int64_t na, int64_t nb,
                   const Dims& dims, const Dims& b_dims, cudaStream_t stream) {
  const unsigned grid = grid_for(n);
  switch (ix) {
    case BinaryIndexing::Same:
      binary_kernel<T, OP, BinaryIndexing::Same><<<grid, kThreads, 0, stream>>>(a, b, out, n, na, nb, dims, b_dims);
      break;
    case BinaryIndexing::BSuffix:
      binary_kernel<T, OP, BinaryIndexing::BSuffix><<<grid, kThreads, 0, stream>>>(a, b, out, n, na, nb, dims, b_dims);
      break;
    case BinaryIndexing::ASuffix:
      binary_kernel<T, OP, BinaryIndexing::ASuffix><<<grid, kThreads, 0, stream>>>(a, b, out, n, na, nb, dims, b_dims);
      break;
    case BinaryIndexing::General:
      binary_kernel<T, OP, BinaryIndexing::General><<<grid, kThreads, 0, stream>>>(a, b, out, n, na, nb, dims, b_dims);
      break;
  }
}

template <typename T>
__global__ void axpy_kernel(T alpha, const T* x, T* y, int64_t n) {
  NL_GRID_STRIDE(i, n) y[i] += alpha * x[i];
}

// core/random.cpp's counter_uniform, bit for bit: SplitMix64 twice over seed ^ (counter * K).
__device__ inline uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
__device__ inline double counter_uniform(uint64_t seed, uint64_t counter) {
  uint64_t x = seed ^ (counter * 0xD1B54A32D192ED03ull);
  uint64_t z = splitmix64(x);
  z = splitmix64(z);
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);  // 2^-53
}

template <typename T>
__global__ void dropout_kernel(uint64_t seed, double p, T keep_scale, T* mask, int64_t n) {
  NL_GRID_STRIDE(i, n) mask[i] = counter_uniform(seed, static_cast<uint64_t>(i)) >= p ? keep_scale : T(0);
}

}  // namespace

template <typename T>
cudaError_t fill(T* out, int64_t n, T value, cudaStream_t stream) {
  if (n > 0) fill_kernel<<<grid_for(n), kThreads, 0, stream>>>(out, n, value);
  return cudaGetLastError();
}

template <typename S, typename D>
cudaError_t copy_strided(const S* src, const Dims& src_dims, D* dst, int64_t n, cudaStream_t stream) {
  if (n > 0) copy_strided_kernel<<<grid_for(n), kThreads, 0, stream>>>(src, src_dims, dst, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t unary(UOp op, const T* x, T* y, int64_t n, T alpha, cudaStream_t stream) {
  if (n == 0) return cudaGetLastError();
  return with_unary_op(op, UnaryLaunch<T>{x, y, n, alpha, stream});
}

template <typename T>
cudaError_t unary_backward(UOp op, const T* x, const T* y, const T* dy, T* dx, int64_t n, T alpha,
                           cudaStream_t stream) {
  if (n == 0) return cudaGetLastError();
  return with_unary_op(op, UnaryBackwardLaunch<T>{x, y, dy, dx, n, alpha, stream});
}

template <typename T>
cudaError_t binary(BOp op, BinaryIndexing indexing, const T* a, const T* b, T* out, int64_t n, int64_t na, int64_t nb,
                   const Dims& dims, const Dims& b_dims, cudaStream_t stream) {
  if (n == 0) return cudaGetLastError();
  switch (op) {
    case BOp::Add:
      launch_binary<T, BOp::Add>(indexing, a, b, out, n, na, nb, dims, b_dims, stream);
      break;
    case BOp::Sub:
      launch_binary<T, BOp::Sub>(indexing, a, b, out, n, na, nb, dims, b_dims, stream);
      break;
    case BOp::Mul:
      launch_binary<T, BOp::Mul>(indexing, a, b, out, n, na, nb, dims, b_dims, stream);
      break;
    case BOp::Div:
      launch_binary<T, BOp::Div>(indexing, a, b, out, n, na, nb, dims, b_dims, stream);
      break;
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t axpy(T alpha, const T* x, T* y, int64_t n, cudaStream_t stream) {
  if (n > 0) axpy_kernel<<<grid_for(n), kThreads, 0, stream>>>(alpha, x, y, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t dropout_mask(uint64_t seed, double p, T keep_scale, T* mask, int64_t n, cudaStream_t stream) {
  if (n > 0) dropout_kernel<<<grid_for(n), kThreads, 0, stream>>>(seed, p, keep_scale, mask, n);
  return cudaGetLastError();
}

#define NL_FLOATING(T)                                                                                                \
  template cudaError_t unary<T>(UOp, const T*, T*, int64_t, T, cudaStream_t);                                         \
  template cudaError_t unary_backward<T>(UOp, const T*, const T*, const T*, T*, int64_t, T, cudaStream_t);            \
  template cudaError_t binary<T>(BOp, BinaryIndexing, const T*, const T*, T*, int64_t, int64_t, int64_t, const Dims&, \
                                 const Dims&, cudaStream_t);                                                          \
  template cudaError_t axpy<T>(T, const T*, T*, int64_t, cudaStream_t);                                               \
  template cudaError_t dropout_mask<T>(uint64_t, double, T, T*, int64_t, cudaStream_t);
NL_FLOATING(float)
NL_FLOATING(double)
#undef NL_FLOATING

template cudaError_t fill<float>(float*, int64_t, float, cudaStream_t);
template cudaError_t fill<double>(double*, int64_t, double, cudaStream_t);
template cudaError_t fill<int32_t>(int32_t*, int64_t, int32_t, cudaStream_t);
template cudaError_t fill<__half>(__half*, int64_t, __half, cudaStream_t);
template cudaError_t fill<__nv_bfloat16>(__nv_bfloat16*, int64_t, __nv_bfloat16, cudaStream_t);

#define NL_COPY(S, D) template cudaError_t copy_strided<S, D>(const S*, const Dims&, D*, int64_t, cudaStream_t);
#define NL_COPY_FROM(S) \
  NL_COPY(S, float) NL_COPY(S, double) NL_COPY(S, int32_t) NL_COPY(S, __half) NL_COPY(S, __nv_bfloat16)
NL_COPY_FROM(float)
NL_COPY_FROM(double)
NL_COPY_FROM(int32_t)
NL_COPY_FROM(__half)
NL_COPY_FROM(__nv_bfloat16)
#undef NL_COPY_FROM
#undef NL_COPY

}  // namespace normlab::cuda
