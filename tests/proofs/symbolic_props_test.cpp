// SPDX-License-Identifier: Apache-2.0
// Law: a symbolic derivation is the family of its concrete instances. For random shapes
// inside the declared set, every symbolic fact (shapes, work vectors, buffer sizes, memory
// facts, stage totals) evaluated there with Expr::eval equals the concrete derivation's fact
// exactly (label `props`).
#include "passes/frontend/loaders.h"
#include "passes/symbolic/symbolic.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace plancert::passes::symbolic {
namespace {

Inputs load(const std::string& model, const std::string& strategy, const std::string& system) {
  const std::string root = std::string(PLANCERT_SOURCE_DIR) + "/examples/calculon/";
  return Inputs{frontend::load_model(root + "models/" + model), frontend::load_strategy(root + "strategies/" + strategy),
                frontend::load_system(root + "systems/" + system)};
}

// First difference between the symbolic facts at (b, s) and the concrete facts, or "".
std::string compare(const Derivation& sym, const Derivation& con, const Shape& shape, std::int64_t b, std::int64_t s) {
  auto env = [&](std::string_view n) -> std::optional<Rat> {
    if (n == shape.batch) return Rat(b);
    if (n == shape.seq) return Rat(s);
    return std::nullopt;
  };
  auto same = [&](const Expr& x, const Expr& c, const std::string& what) -> std::string {
    auto v = x.eval(env);
    auto w = c.constant();
    if (!v || !w || *v != *w) return what + ": symbolic " + x.str() + " gives " + (v ? to_string(*v) : "?") + ", concrete " + c.str();
    return "";
  };
  if (!con.plan) return "the concrete derivation stopped at " + con.stopped_at;
  const auto &sm = sym.model->payload(), &cm = con.model->payload();
  if (sm.values.size() != cm.values.size()) return "value count";
  for (std::size_t i = 0; i < sm.values.size(); ++i)
    for (std::size_t k = 0; k < sm.values[i].shape.size(); ++k)
      if (auto d = same(sm.values[i].shape[k], cm.values[i].shape[k], "shape of " + sm.values[i].id); !d.empty()) return d;
  auto work = [&](const Work& x, const Work& c, const std::string& id) -> std::string {
    for (auto [p, q] : {std::pair{&x.matrix_ops, &c.matrix_ops}, {&x.vector_ops, &c.vector_ops}, {&x.read_bytes, &c.read_bytes}, {&x.write_bytes, &c.write_bytes},
                        {&x.message_bytes, &c.message_bytes}, {&x.temporary_bytes, &c.temporary_bytes}, {&x.persistent_bytes, &c.persistent_bytes}})
      if (auto d = same(*p, *q, "work of " + id); !d.empty()) return d;
    return "";
  };
  const auto &sd = sym.dist->payload(), &cd = con.dist->payload();
  if (sd.tasks.size() != cd.tasks.size()) return "distributed task count";
  for (std::size_t i = 0; i < sd.tasks.size(); ++i) {
    if (sd.tasks[i].id != cd.tasks[i].id) return "task id " + sd.tasks[i].id;
    if (auto d = work(sd.tasks[i].work, cd.tasks[i].work, sd.tasks[i].id); !d.empty()) return d;
    if (sd.tasks[i].collective)
      if (auto d = same(sd.tasks[i].collective->message_bytes, cd.tasks[i].collective->message_bytes, "payload of " + sd.tasks[i].id); !d.empty()) return d;
  }
  const auto &sp = sym.plan->payload(), &cp = con.plan->payload();
  if (sp.tasks.size() != cp.tasks.size() || sp.buffers.size() != cp.buffers.size() || sp.memory.size() != cp.memory.size()) return "plan sizes";
  for (std::size_t i = 0; i < sp.tasks.size(); ++i)
    if (auto d = work(sp.tasks[i].work, cp.tasks[i].work, sp.tasks[i].id); !d.empty()) return d;
  for (std::size_t i = 0; i < sp.buffers.size(); ++i)
    if (sp.buffers[i].id != cp.buffers[i].id) return "buffer id " + sp.buffers[i].id;
    else if (auto d = same(sp.buffers[i].size, cp.buffers[i].size, "size of " + sp.buffers[i].id); !d.empty()) return d;
  for (std::size_t i = 0; i < sp.memory.size(); ++i)
    if (sp.memory[i].stage != cp.memory[i].stage || sp.memory[i].category != cp.memory[i].category) return "memory fact order";
    else if (auto d = same(sp.memory[i].bytes, cp.memory[i].bytes, "memory fact " + std::to_string(i)); !d.empty()) return d;
  if (sym.stage_totals.size() != con.stage_totals.size()) return "stage count";
  for (std::size_t i = 0; i < sym.stage_totals.size(); ++i)
    if (auto d = same(sym.stage_totals[i], con.stage_totals[i], "stage total " + std::to_string(i)); !d.empty()) return d;
  return "";
}

void law(const Inputs& in, const Shape& shape, std::int64_t bmax, std::int64_t smax, std::int64_t step) {
  static std::map<std::string, Derivation> cache;  // one symbolic derivation per configuration
  auto key = in.model.name + "/" + in.strategy.name;
  if (!cache.count(key)) cache.emplace(key, derive_symbolic(in, shape));
  const Derivation& sym = cache.at(key);
  RC_ASSERT(sym.plan.has_value());
  const auto b = *rc::gen::inRange<std::int64_t>(1, bmax + 1);
  const auto s = *rc::gen::inRange<std::int64_t>(1, smax / step + 1) * step;
  Derivation con = derive_concrete(in, shape, {{shape.batch, Int(b)}, {shape.seq, Int(s)}});
  std::string diff = compare(sym, con, shape, b, s);
  RC_ASSERT(diff == std::string());
}

RC_GTEST_PROP(SymbolicShapes, DefaultExampleFactsEqualConcreteFacts, ()) {
  static const Inputs in = load("gpt3-175B.json", "gpt3-175B_seqsel.json", "a100_80g.json");
  static const Shape shape = parse_shape("B,S", {"S % 8 == 0", "1 <= B <= 8", "8 <= S <= 4096"});
  law(in, shape, 8, 4096, 8);
}

RC_GTEST_PROP(SymbolicShapes, FullRecomputationFactsEqualConcreteFacts, ()) {
  static const Inputs in = load("megatron-22B.json", "megatron-22B_full.json", "a100_80g.json");
  static const Shape shape = parse_shape("B,S", {"S % 8 == 0", "1 <= B <= 16", "8 <= S <= 8192"});
  law(in, shape, 16, 8192, 8);
}

TEST(SymbolicShapes, ParsesDeclaredFacts) {
  Shape s = parse_shape("B,S", {"S % 8 == 0", "1 <= B <= 64", "S >= 128", "S<=8192", "B*S <= 65536"});
  ASSERT_EQ(s.symbols.size(), 2u);
  EXPECT_EQ(s.batch, "B");
  EXPECT_EQ(s.seq, "S");
  EXPECT_EQ(s.symbols[0].min, 1);
  EXPECT_EQ(*s.symbols[0].max, 64);
  EXPECT_EQ(s.symbols[1].divisible_by, 8);
  EXPECT_EQ(s.symbols[1].min, 128);
  EXPECT_EQ(*s.symbols[1].max, 8192);
  ASSERT_EQ(s.relations.size(), 1u);
  EXPECT_EQ(s.relations[0].op, "<=");
  EXPECT_THROW(parse_shape("B,S", {"T <= 3"}), InputError);
  EXPECT_THROW(parse_shape("B,S", {"S % 8"}), InputError);
  EXPECT_THROW(parse_shape("", {}), InputError);
}

}  // namespace
}  // namespace plancert::passes::symbolic
