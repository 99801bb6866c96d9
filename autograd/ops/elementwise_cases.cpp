// Gradient-check cases for the elementwise ops (registered into autograd/gradcheck.h's registry).
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "core/random.h"

namespace normlab {

namespace {

Shape or_default(const Shape& hint, Shape fallback) { return hint.empty() ? fallback : hint; }

// A case with inputs drawn N(0,1) of the given shapes (a shape hint replaces the first input's).
OpCase make_case(std::string name, std::string description, std::vector<std::string> input_names,
                 std::vector<Shape> shapes, GradFn fn, double offset = 0.0) {
  OpCase c;
  c.name = std::move(name);
  c.description = std::move(description);
  c.input_names = input_names;
  for (size_t i = 0; i < input_names.size(); ++i) c.differentiable.push_back(static_cast<int>(i));
  c.make_inputs = [shapes, offset](uint64_t seed, const Shape& hint) {
    Generator gen(seed);
    std::vector<Tensor> t;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const Shape s = i == 0 ? or_default(hint, shapes[0]) : (hint.empty() ? shapes[i] : hint);
      t.push_back(Tensor::randn(s, gen, offset, 1.0, DType::F64));
    }
    return t;
  };
  c.fn = std::move(fn);
  return c;
}

}  // namespace

void register_elementwise_cases(std::vector<OpCase>& cases) {
  cases.push_back(make_case("add", "a + b, b broadcast over rows", {"a", "b"}, {{3, 4}, {4}},
                            [](const std::vector<Var>& v) { return add(v[0], v[1]); }));
  cases.push_back(make_case("sub", "a - b, b broadcast over columns", {"a", "b"}, {{3, 4}, {3, 1}},
                            [](const std::vector<Var>& v) { return sub(v[0], v[1]); }));
  cases.push_back(make_case("mul", "a * b, both broadcast", {"a", "b"}, {{2, 1, 4}, {3, 1}},
                            [](const std::vector<Var>& v) { return mul(v[0], v[1]); }));
  {
    OpCase c = make_case("div", "a / b, b kept away from 0", {"a", "b"}, {{3, 4}, {3, 4}},
                         [](const std::vector<Var>& v) { return div(v[0], add_scalar(square(v[1]), 1.0)); });
    cases.push_back(c);
  }
  cases.push_back(make_case("residual_add", "x + branch(x): the residual connection, x used twice",
                            {"x", "w"}, {{3, 4}, {4}}, [](const std::vector<Var>& v) {
                              return residual_add(v[0], mul(tanh(v[0]), v[1]));
                            }));
  cases.push_back(make_case("scale", "0.37 * x", {"x"}, {{3, 4}},
                            [](const std::vector<Var>& v) { return scale(v[0], 0.37); }));
  cases.push_back(make_case("add_scalar", "x + 2.5", {"x"}, {{3, 4}},
                            [](const std::vector<Var>& v) { return add_scalar(v[0], 2.5); }));
  cases.push_back(make_case("neg", "-x", {"x"}, {{3, 4}}, [](const std::vector<Var>& v) { return neg(v[0]); }));
  cases.push_back(make_case("exp", "exp(x)", {"x"}, {{3, 4}}, [](const std::vector<Var>& v) { return exp(v[0]); }));
  cases.push_back(make_case("log", "log(x), x in ~[3, 5]", {"x"}, {{3, 4}},
                            [](const std::vector<Var>& v) { return log(v[0]); }, 4.0));
  cases.push_back(make_case("sqrt", "sqrt(x), x in ~[3, 5]", {"x"}, {{3, 4}},
                            [](const std::vector<Var>& v) { return sqrt(v[0]); }, 4.0));
  cases.push_back(make_case("square", "x^2", {"x"}, {{3, 4}}, [](const std::vector<Var>& v) { return square(v[0]); }));
  cases.push_back(make_case("tanh", "tanh(x)", {"x"}, {{3, 4}}, [](const std::vector<Var>& v) { return tanh(v[0]); }));
  cases.push_back(make_case("relu", "max(x, 0) (inputs ~N(0,1): kinks are 1e-6 away with prob ~1)",
                            {"x"}, {{3, 4}}, [](const std::vector<Var>& v) { return relu(v[0]); }));
  cases.push_back(make_case("gelu", "GELU, tanh form (GPT-2)", {"x"}, {{3, 4}},
                            [](const std::vector<Var>& v) { return gelu(v[0]); }));
  cases.push_back(make_case("silu", "x * sigmoid(x)", {"x"}, {{3, 4}},
                            [](const std::vector<Var>& v) { return silu(v[0]); }));
}

}  // namespace normlab
