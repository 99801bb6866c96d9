// Optimizer updates in place (equations in optim/ beside each optimizer).
#include <cmath>

#include "core/cpu/cpu_backend.h"

namespace normlab {

// Adam (Kingma & Ba 2015) / AdamW (Loshchilov & Hutter 2019):
//   g' = g + wd p (Adam only);  m = b1 m + (1-b1) g';  v = b2 v + (1-b2) g'^2
//   m^ = m / (1 - b1^t);  v^ = v / (1 - b2^t)
//   p -= lr (m^ / (sqrt(v^) + eps) + wd p (AdamW only, decoupled))
void CpuBackend::adam_step(const AdamArgs& a, Tensor& param, const Tensor& grad, Tensor& m, Tensor& v) {
  dispatch_floating(param.dtype(), "adam", [&](auto t) {
    using T = decltype(t);
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* mp = m.data<T>();
    T* vp = v.data<T>();
    const int64_t n = param.numel();
    const double bc1 = 1.0 - std::pow(a.beta1, static_cast<double>(a.step));
    const double bc2 = 1.0 - std::pow(a.beta2, static_cast<double>(a.step));
    const T b1 = T(a.beta1), b2 = T(a.beta2), lr = T(a.lr), wd = T(a.weight_decay), eps = T(a.eps);
    const T step_size = T(a.lr / bc1), inv_sqrt_bc2 = T(1.0 / std::sqrt(bc2));
#pragma omp parallel for if (n > kParallelElements)
    for (int64_t i = 0; i < n; ++i) {
      T gi = g[i];
      if (!a.decoupled) gi += wd * p[i];
      mp[i] = b1 * mp[i] + (T(1) - b1) * gi;
      vp[i] = b2 * vp[i] + (T(1) - b2) * gi * gi;
      const T denom = std::sqrt(vp[i]) * inv_sqrt_bc2 + eps;
      if (a.decoupled) p[i] -= lr * wd * p[i];
      p[i] -= step_size * mp[i] / denom;
    }
  });
}

// SGD with momentum (PyTorch convention): b = mu b + (g + wd p);  p -= lr b  (b = g + wd p if mu = 0)
void CpuBackend::sgd_step(double lr, double momentum, double weight_decay, Tensor& param,
                          const Tensor& grad, Tensor& momentum_buf) {
  dispatch_floating(param.dtype(), "sgd", [&](auto t) {
    using T = decltype(t);
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* b = momentum_buf.defined() ? momentum_buf.data<T>() : nullptr;
    const int64_t n = param.numel();
    const T mu = T(momentum), wd = T(weight_decay), eta = T(lr);
    for (int64_t i = 0; i < n; ++i) {
      T d = g[i] + wd * p[i];
      if (b) d = b[i] = mu * b[i] + d;
      p[i] -= eta * d;
    }
  });
}

// RAdam (Liu et al. 2020), elementwise part (r_t comes from optim/radam.cpp):
//   g' = g + wd p;  m = b1 m + (1-b1) g';  v = b2 v + (1-b2) g'^2;  m^ = m / (1 - b1^t)
//   r_t > 0 (rho_t > 5): p -= lr r_t m^ sqrt(1 - b2^t) / (sqrt(v) + eps)
//   otherwise:           p -= lr m^   (v is still accumulated for later steps)
void CpuBackend::radam_step(const RAdamArgs& a, Tensor& param, const Tensor& grad, Tensor& m,
                            Tensor& v) {
  dispatch_floating(param.dtype(), "radam", [&](auto t) {
    using T = decltype(t);
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* mp = m.data<T>();
    T* vp = v.data<T>();
    const int64_t n = param.numel();
    const double bc1 = 1.0 - std::pow(a.beta1, static_cast<double>(a.step));
    const double bc2 = 1.0 - std::pow(a.beta2, static_cast<double>(a.step));
    const bool adaptive = a.rectification > 0.0;
    const T b1 = T(a.beta1), b2 = T(a.beta2), wd = T(a.weight_decay), eps = T(a.eps);
    const T momentum_size = T(a.lr / bc1);
    const T adaptive_size = T(a.lr * a.rectification * std::sqrt(bc2) / bc1);
#pragma omp parallel for if (n > kParallelElements)
    for (int64_t i = 0; i < n; ++i) {
      const T gi = g[i] + wd * p[i];
      mp[i] = b1 * mp[i] + (T(1) - b1) * gi;
      vp[i] = b2 * vp[i] + (T(1) - b2) * gi * gi;
      if (adaptive) p[i] -= adaptive_size * mp[i] / (std::sqrt(vp[i]) + eps);
      else p[i] -= momentum_size * mp[i];
    }
  });
}

}  // namespace normlab
