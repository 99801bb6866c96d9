// Optimizer updates in place, one thread per element, in the order of operations of
// core/cpu/cpu_optim.cpp (equations there and in optim/). Constants come from the host in double
// and are rounded to T once, as the CPU loop does.
#include "core/cuda/device_utils.cuh"

namespace normlab::cuda {

namespace {

template <typename T>
struct AdamT {
  T b1, b2, lr, wd, eps, step_size, inv_sqrt_bc2;
  bool decoupled;
};

// g' = g + wd p (Adam only); m = b1 m + (1-b1) g'; v = b2 v + (1-b2) g'^2;
// p -= lr wd p (AdamW only); p -= (lr / bc1) m / (sqrt(v) / sqrt(bc2) + eps)
template <typename T>
__global__ void adam_kernel(AdamT<T> c, T* p, const T* g, T* m, T* v, int64_t n) {
  NL_GRID_STRIDE(i, n) {
    T gi = g[i];
    if (!c.decoupled) gi += c.wd * p[i];
    const T mi = c.b1 * m[i] + (T(1) - c.b1) * gi;
    const T vi = c.b2 * v[i] + (T(1) - c.b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const T denom = d_sqrt(vi) * c.inv_sqrt_bc2 + c.eps;
    T pi = p[i];
    if (c.decoupled) pi -= c.lr * c.wd * pi;
    p[i] = pi - c.step_size * mi / denom;
  }
}

// d = g + wd p;  with momentum: d = buf = mu buf + d;  p -= lr d
template <typename T>
__global__ void sgd_kernel(T lr, T mu, T wd, T* p, const T* g, T* buf, int64_t n) {
  NL_GRID_STRIDE(i, n) {
    T d = g[i] + wd * p[i];
    if (buf) d = buf[i] = mu * buf[i] + d;
    p[i] -= lr * d;
  }
}

template <typename T>
struct RAdamT {
  T b1, b2, wd, eps, momentum_size, adaptive_size;
  bool adaptive;
};

// g' = g + wd p; m, v as Adam; rectified: p -= lr r_t sqrt(bc2) / bc1 m / (sqrt(v) + eps),
// else p -= lr / bc1 m.
template <typename T>
__global__ void radam_kernel(RAdamT<T> c, T* p, const T* g, T* m, T* v, int64_t n) {
  NL_GRID_STRIDE(i, n) {
    const T gi = g[i] + c.wd * p[i];
    const T mi = c.b1 * m[i] + (T(1) - c.b1) * gi;
    const T vi = c.b2 * v[i] + (T(1) - c.b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    if (c.adaptive)
      p[i] -= c.adaptive_size * mi / (d_sqrt(vi) + c.eps);
    else
      p[i] -= c.momentum_size * mi;
  }
}

}  // namespace

template <typename T>
cudaError_t adam_step(const AdamConstants& c, T* param, const T* grad, T* m, T* v, int64_t n, cudaStream_t stream) {
  const AdamT<T> t{T(c.beta1), T(c.beta2),     T(c.lr),           T(c.weight_decay),
                   T(c.eps),   T(c.step_size), T(c.inv_sqrt_bc2), c.decoupled};
  if (n > 0) adam_kernel<<<grid_for(n), kThreads, 0, stream>>>(t, param, grad, m, v, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t sgd_step(double lr, double momentum, double weight_decay, T* param, const T* grad, T* buf, int64_t n,
                     cudaStream_t stream) {
  if (n > 0) sgd_kernel<<<grid_for(n), kThreads, 0, stream>>>(T(lr), T(momentum), T(weight_decay), param, grad, buf, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t radam_step(const RAdamConstants& c, T* param, const T* grad, T* m, T* v, int64_t n, cudaStream_t stream) {
  const RAdamT<T> t{T(c.beta1),         T(c.beta2),         T(c.weight_decay), T(c.eps),
                    T(c.momentum_size), T(c.adaptive_size), c.adaptive};
  if (n > 0) radam_kernel<<<grid_for(n), kThreads, 0, stream>>>(t, param, grad, m, v, n);
  return cudaGetLastError();
}

#define NL_FLOATING(T)                                                                                  \
  template cudaError_t adam_step<T>(const AdamConstants&, T*, const T*, T*, T*, int64_t, cudaStream_t); \
  template cudaError_t sgd_step<T>(double, double, double, T*, const T*, T*, int64_t, cudaStream_t);    \
  template cudaError_t radam_step<T>(const RAdamConstants&, T*, const T*, T*, T*, int64_t, cudaStream_t);
NL_FLOATING(float)
NL_FLOATING(double)
#undef NL_FLOATING

}  // namespace normlab::cuda
