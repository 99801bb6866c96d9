// Gradient checks of every norm's composed forward (nn/norm_kinds.h), in the op registry's format:
// x (2, 3, 6) and each of its parameters (moved off their initial values) are inputs. A norm that
// exists only as a composed forward (dyt) is then checked as every op it is made of is, plus whole
// tiny models with it in both placements.
#include <fmt/format.h>

#include "core/random.h"
#include "nn/model_cases.h"
#include "nn/norm_kinds.h"

namespace normlab {

namespace {

constexpr int64_t kChannels = 6;

OpCase composed_norm_case(const NormKind& kind) {
  ModelConfig config;
  config.norm_type = kind.type;
  config.bias = true;
  const std::vector<NormParam> params = norm_params(config);
  OpCase c;
  c.name = "norm_" + kind.name + "_composed";
  c.description = std::string(kind.formula) + ", composed of plain ops";
  c.input_names = {"x"};
  for (const NormParam& p : params) c.input_names.emplace_back(p.name);
  for (size_t i = 0; i < c.input_names.size(); ++i) c.differentiable.push_back(static_cast<int>(i));
  c.make_inputs = [params](uint64_t seed, const Shape& hint) {
    Generator gen(seed);
    std::vector<Tensor> t = {Tensor::randn(hint.empty() ? Shape{2, 3, kChannels} : hint, gen, 0.3, 1.0, DType::F64)};
    for (const NormParam& p : params)
      t.push_back(Tensor::randn({p.per_channel ? kChannels : 1}, gen, p.initial, 0.2, DType::F64));
    return t;
  };
  c.fn = [&kind, params](const std::vector<Var>& v) {
    NormCall call;
    for (size_t i = 0; i < params.size(); ++i) call.params.emplace_back(params[i].name, v[i + 1]);
    call.groups = kind.grouped ? 2 : 1;
    return kind.composed(v[0], call);
  };
  c.options.step = 1e-5;
  c.options.tolerance = 1e-6;
  return c;
}

}  // namespace

void register_norm_kind_cases(std::vector<OpCase>& cases) {
  for (const NormKind* kind : norm_kinds())
    if (!kind->params.empty()) cases.push_back(composed_norm_case(*kind));
  for (const NormPlacement placement : {NormPlacement::Pre, NormPlacement::Post}) {
    ModelConfig c = tiny_model_config(placement);
    c.norm_type = NormType::DynamicTanh;
    cases.push_back(make_model_case(fmt::format("model_{}_dyt", enum_name(placement)),
                                    fmt::format("tiny {}-norm TransformerLM with Dynamic Tanh in place of the norms",
                                                enum_name(placement)),
                                    c));
  }
}

}  // namespace normlab
