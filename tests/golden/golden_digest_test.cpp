// SPDX-License-Identifier: Apache-2.0
// Golden digests: four fixed, hand-built snapshots (a chain ModelIR -> DistributedTaskIR ->
// PortablePlanIR with a symbolic size -> ConcretePlanIR) whose canonical bytes and digests
// are pinned here. A change to the canonical encoding, to the digest construction or to an
// IR field list shows up as a diff against these constants (external tools depend on them:
// ARCHITECTURE.md, "Canonical encoding and digests"). One digest is recomputed by Python's
// hashlib as an implementation-independent cross-check.
#include <gtest/gtest.h>

#include "core/snapshot.h"
#include "passes/emit/emit.h"
#include "verifiers/gate.h"
#include "verifiers/verify.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace plancert {
namespace {

Lineage introduced() { return Lineage{LineageKind::introduced, "model.define", {}}; }
Lineage derived(std::string rule, codec::List<std::string> sources) { return Lineage{LineageKind::derived, std::move(rule), std::move(sources)}; }

Snapshot<ModelIR> golden_model() {
  const Expr B = Expr::symbol("B"), S = Expr::symbol("S");
  ModelIR m;
  m.name = "golden-mlp";
  m.rules = {"model.define"};
  Symbol b;
  b.name = "B";
  b.max = Int(4096);
  Symbol s;
  s.name = "S";
  s.divisible_by = 8;
  s.min = 8;
  m.symbols = {b, s};
  m.values = {
      ModelValue{"bf16", "v:x", introduced(), ValueRole::input, {B, S, Expr(64LL)}},
      ModelValue{"bf16", "v:w", introduced(), ValueRole::weight, {Expr(64LL), Expr(256LL)}},
      ModelValue{"bf16", "v:h", introduced(), ValueRole::activation, {B, S, Expr(256LL)}},
      ModelValue{"bf16", "v:y", introduced(), ValueRole::output, {B, S, Expr(256LL)}},
  };
  Operation mm;
  mm.id = "op:fc";
  mm.kind = "matmul";
  mm.lineage = introduced();
  mm.inputs = {0, 1};
  mm.outputs = {2};
  mm.work.matrix_ops = Expr(32768LL) * B * S;  // 2 * 64 * 256 per token
  mm.work.read_bytes = Expr(128LL) * B * S + Expr(32768LL);
  mm.work.write_bytes = Expr(512LL) * B * S;
  mm.work.persistent_bytes = Expr(32768LL);
  // escapes: quote, backslash, newline, a control character and raw UTF-8
  mm.attrs["note"] = "fc \"layer\" \\ 1\n\x01 \xc3\xa9";
  Operation act;
  act.id = "op:gelu";
  act.kind = "gelu";
  act.lineage = introduced();
  act.inputs = {2};
  act.outputs = {3};
  act.work.vector_ops = Expr(make_rat(15, 2)) * B * S * Expr(256LL);  // a rational coefficient
  act.work.read_bytes = Expr(512LL) * B * S;
  act.work.write_bytes = Expr(512LL) * B * S;
  m.operations = {mm, act};
  return make_snapshot(std::move(m), {});
}

Snapshot<DistributedTaskIR> golden_distributed(const Snapshot<ModelIR>& parent) {
  const Expr B = Expr::symbol("B"), S = Expr::symbol("S");
  DistributedTaskIR d;
  d.mesh.axes = {{"tp", 2}, {"pp", 1}, {"dp", 1}};
  d.rules = {"dist.shard", "dist.collective"};
  d.symbols = parent.payload.symbols;
  DistTask fc;
  fc.id = "t:op:fc";
  fc.lineage = derived("dist.shard", {"op:fc"});
  fc.ranks = {0, 1};
  fc.work = parent.payload.operations[0].work;
  fc.work.matrix_ops = Expr(16384LL) * B * S;  // per rank: the two ranks add up to the model's work
  fc.phase = Phase::forward;
  DistTask ar;
  ar.id = "t:op:fc:coll";
  ar.kind = TaskKind::collective;
  ar.lineage = derived("dist.collective", {"op:fc"});
  ar.dependencies = {0};
  ar.ranks = {0, 1};
  ar.collective = Collective{{0, 1}, CollectiveKind::all_reduce, Expr(512LL) * B * S, Reduction::sum, ""};
  ar.phase = Phase::forward;
  ar.value = "v:h";  // bf16 [B, S, 256]: 512*B*S bytes
  ar.work.message_bytes = Expr(512LL) * B * S;
  DistTask gelu;
  gelu.id = "t:op:gelu";
  gelu.lineage = derived("dist.shard", {"op:gelu"});
  gelu.dependencies = {1};
  gelu.ranks = {0, 1};
  gelu.work = parent.payload.operations[1].work;
  gelu.attrs["shard"] = "replicated";
  gelu.phase = Phase::forward;
  d.tasks = {fc, ar, gelu};
  return make_snapshot(std::move(d), {parent.digest});
}

Snapshot<PortablePlanIR> golden_portable(const Snapshot<DistributedTaskIR>& parent) {
  const Expr B = Expr::symbol("B"), S = Expr::symbol("S");
  PortablePlanIR p;
  p.rules = {"portable.task", "portable.buffer"};
  p.symbols = parent.payload.symbols;
  const auto& dt = parent.payload.tasks;
  PortableTask fc;
  fc.id = "p:t:op:fc";
  fc.lineage = derived("portable.task", {dt[0].id});
  fc.group = "g0";
  fc.inputs = {0};
  fc.outputs = {1};
  fc.ranks = {0, 1};
  fc.requires_ = {Capability{std::nullopt, "bf16", CapabilityKind::matrix, std::nullopt}};
  fc.work = dt[0].work;
  fc.phase = dt[0].phase;
  PortableTask ar;
  ar.id = "p:t:op:fc:coll";
  ar.kind = TaskKind::collective;
  ar.lineage = derived("portable.task", {dt[1].id});
  ar.dependencies = {0};
  ar.group = "g0";
  ar.inputs = {1};
  ar.outputs = {2};
  ar.ranks = {0, 1};
  ar.requires_ = {Capability{CollectiveKind::all_reduce, "", CapabilityKind::collective, Reduction::sum}};
  ar.work = dt[1].work;
  ar.phase = dt[1].phase;
  PortableTask gelu;
  gelu.id = "p:t:op:gelu";
  gelu.lineage = derived("portable.task", {dt[2].id});
  gelu.dependencies = {1};
  gelu.group = "g1";
  gelu.inputs = {2};
  gelu.ranks = {0, 1};
  gelu.requires_ = {Capability{std::nullopt, "bf16", CapabilityKind::vector, std::nullopt}};
  gelu.work = dt[2].work;
  gelu.phase = dt[2].phase;
  p.tasks = {fc, ar, gelu};
  p.buffers = {
      PortableBuffer{256, {0}, "b:x", derived("portable.buffer", {dt[0].id}), std::nullopt, BufferRole::input, Expr(128LL) * B * S, Storage::input},
      PortableBuffer{256, {1}, "b:h", derived("portable.buffer", {dt[0].id}), 0, BufferRole::activation, Expr(256LL) * B * S, Storage::transient},
      PortableBuffer{64, {2}, "b:h.reduced", derived("portable.buffer", {dt[1].id}), 1, BufferRole::message, Expr(256LL) * B * S + Expr(64LL), Storage::transient},
  };
  return make_snapshot(std::move(p), {parent.digest});
}

Snapshot<ConcretePlanIR> golden_concrete(const Snapshot<PortablePlanIR>& parent) {
  ConcretePlanIR c;
  c.rules = {"concrete.bind", "concrete.place"};
  c.devices = {Device{"dev:0", "gpu", Int("85899345920"), {}}, Device{"dev:1", "gpu", Int("85899345920"), {}}};
  c.regions = {Region{256, Int(1) << 20, 0, "r:0:hbm", Int(0), "hbm"}, Region{256, Int(1) << 20, 1, "r:1:hbm", Int(4096), "hbm"}};
  // B = 2, S = 16: 4096, 8192 and 8256 bytes
  c.buffers = {
      ConcreteBuffer{256, "cb:b:x", derived("concrete.place", {"b:x"}), Int(0), 0, Int(4096), Storage::input},
      ConcreteBuffer{256, "cb:b:h", derived("concrete.place", {"b:h"}), Int(4096), 0, Int(8192), Storage::transient},
      ConcreteBuffer{64, "cb:b:h.reduced", derived("concrete.place", {"b:h.reduced"}), Int(0), 1, Int(8256), Storage::transient},
  };
  Command fc;
  fc.id = "c:p:t:op:fc";
  fc.implementation = "cublas.gemm";
  fc.lineage = derived("concrete.bind", {"p:t:op:fc"});
  fc.reads = {0};
  fc.writes = {1};
  fc.attrs["kernel"] = "sm90_gemm";
  fc.work = parent.payload.tasks[0].work;
  Command ar;
  ar.id = "c:p:t:op:fc:coll";
  ar.kind = CommandKind::collective;
  ar.device = 1;
  ar.implementation = "nccl.all_reduce";
  ar.lineage = derived("concrete.bind", {"p:t:op:fc:coll"});
  ar.dependencies = {0};
  ar.reads = {1};
  ar.writes = {2};
  ar.waits = {0};
  ar.work = parent.payload.tasks[1].work;
  fc.signals = {0};
  Command gelu;
  gelu.id = "c:p:t:op:gelu";
  gelu.device = 1;
  gelu.implementation = "triton.gelu";
  gelu.lineage = derived("concrete.bind", {"p:t:op:gelu"});
  gelu.dependencies = {1};
  gelu.reads = {2};
  gelu.work = parent.payload.tasks[2].work;
  c.commands = {fc, ar, gelu};
  c.tokens = {Token{"tok:fc.coll"}};
  c.queue = QueueSchedule{{Queue{{0}, 0, "q:0:compute", QueueKind::compute}, Queue{{1}, 1, "q:1:collective", QueueKind::collective},
                           Queue{{2}, 1, "q:1:compute", QueueKind::compute}}};
  c.target = TargetKind::queue;
  // the shape the sizes are bound for, and what the implementations and engines provide
  c.bindings = {SymbolBinding{"B", Int(2)}, SymbolBinding{"S", Int(16)}};
  const Capability gemm{std::nullopt, "bf16", CapabilityKind::matrix, std::nullopt};
  const Capability allreduce{CollectiveKind::all_reduce, "", CapabilityKind::collective, Reduction::sum};
  const Capability vec{std::nullopt, "bf16", CapabilityKind::vector, std::nullopt};
  c.implementations = {Implementation{"cublas.gemm", {gemm}}, Implementation{"nccl.all_reduce", {allreduce}}, Implementation{"triton.gelu", {vec}}};
  c.engines = {Engine{{gemm}, 0, "eng:0:tensor"}, Engine{{allreduce, vec}, 1, "eng:1:sm"}};
  return make_snapshot(std::move(c), {parent.digest});
}

struct Golden {
  Snapshot<ModelIR> model = golden_model();
  Snapshot<DistributedTaskIR> dist = golden_distributed(model);
  Snapshot<PortablePlanIR> portable = golden_portable(dist);
  Snapshot<ConcretePlanIR> concrete = golden_concrete(portable);
};

// ---- pinned constants (canonical snapshot files) -----------------------------------------

constexpr std::string_view kModelDigest = "38296e99e11b519b0835ab5214be64e6e5fb632cf4992dcd3cc552544636a046";
constexpr std::string_view kDistDigest = "6b96b8302ced9562e801ee34db4c4f0c6e4a431c61c34c0be19e8d65bae76f6e";
constexpr std::string_view kPortableDigest = "a18dd1a5dc8ea509d07636093f3174f1eb5678c98748320f7d5794e2a3358cb3";
constexpr std::string_view kConcreteDigest = "4e9345573dab85706a61d75ac785c93b2b3ec6963fce180d2211a376001c90ce";

constexpr std::string_view kModelFile = R"json({"digest":"38296e99e11b519b0835ab5214be64e6e5fb632cf4992dcd3cc552544636a046","parents":[],"payload":{"name":"golden-mlp","operations":[{"attrs":{"note":"fc \"layer\" \\ 1\n\u0001 é"},"effects":[],"id":"op:fc","inputs":[0,1],"kind":"matmul","lineage":{"kind":"introduced","rule":"model.define","sources":[]},"outputs":[2],"work":{"matrix_ops":"32768*B*S","message_bytes":"0","persistent_bytes":"32768","read_bytes":"128*B*S+32768","temporary_bytes":"0","vector_ops":"0","write_bytes":"512*B*S"}},{"attrs":{},"effects":[],"id":"op:gelu","inputs":[2],"kind":"gelu","lineage":{"kind":"introduced","rule":"model.define","sources":[]},"outputs":[3],"work":{"matrix_ops":"0","message_bytes":"0","persistent_bytes":"0","read_bytes":"512*B*S","temporary_bytes":"0","vector_ops":"1920*B*S","write_bytes":"512*B*S"}}],"rules":["model.define"],"symbols":[{"axis":"workload","divisible_by":"1","integer":true,"max":"4096","min":"1","name":"B"},{"axis":"workload","divisible_by":"8","integer":true,"max":null,"min":"8","name":"S"}],"values":[{"dtype":"bf16","id":"v:x","lineage":{"kind":"introduced","rule":"model.define","sources":[]},"role":"input","shape":["B","S","64"]},{"dtype":"bf16","id":"v:w","lineage":{"kind":"introduced","rule":"model.define","sources":[]},"role":"weight","shape":["64","256"]},{"dtype":"bf16","id":"v:h","lineage":{"kind":"introduced","rule":"model.define","sources":[]},"role":"activation","shape":["B","S","256"]},{"dtype":"bf16","id":"v:y","lineage":{"kind":"introduced","rule":"model.define","sources":[]},"role":"output","shape":["B","S","256"]}]},"schema":"ModelIR","version":"1.0.0"})json";
constexpr std::string_view kDistFile = R"json({"digest":"6b96b8302ced9562e801ee34db4c4f0c6e4a431c61c34c0be19e8d65bae76f6e","parents":["38296e99e11b519b0835ab5214be64e6e5fb632cf4992dcd3cc552544636a046"],"payload":{"inference":null,"mesh":{"axes":[{"name":"tp","size":2},{"name":"pp","size":1},{"name":"dp","size":1}]},"microbatches":1,"rules":["dist.shard","dist.collective"],"schedule":[],"shards":[],"symbols":[{"axis":"workload","divisible_by":"1","integer":true,"max":"4096","min":"1","name":"B"},{"axis":"workload","divisible_by":"8","integer":true,"max":null,"min":"8","name":"S"}],"tasks":[{"attrs":{},"collective":null,"dependencies":[],"effects":[],"id":"t:op:fc","kind":"compute","lineage":{"kind":"derived","rule":"dist.shard","sources":["op:fc"]},"peer":null,"phase":"forward","ranks":[0,1],"repeat":1,"replication":1,"value":"","work":{"matrix_ops":"16384*B*S","message_bytes":"0","persistent_bytes":"32768","read_bytes":"128*B*S+32768","temporary_bytes":"0","vector_ops":"0","write_bytes":"512*B*S"}},{"attrs":{},"collective":{"axis":"","group":[0,1],"kind":"all_reduce","message_bytes":"512*B*S","reduction":"sum"},"dependencies":[0],"effects":[],"id":"t:op:fc:coll","kind":"collective","lineage":{"kind":"derived","rule":"dist.collective","sources":["op:fc"]},"peer":null,"phase":"forward","ranks":[0,1],"repeat":1,"replication":1,"value":"v:h","work":{"matrix_ops":"0","message_bytes":"512*B*S","persistent_bytes":"0","read_bytes":"0","temporary_bytes":"0","vector_ops":"0","write_bytes":"0"}},{"attrs":{"shard":"replicated"},"collective":null,"dependencies":[1],"effects":[],"id":"t:op:gelu","kind":"compute","lineage":{"kind":"derived","rule":"dist.shard","sources":["op:gelu"]},"peer":null,"phase":"forward","ranks":[0,1],"repeat":1,"replication":1,"value":"","work":{"matrix_ops":"0","message_bytes":"0","persistent_bytes":"0","read_bytes":"512*B*S","temporary_bytes":"0","vector_ops":"1920*B*S","write_bytes":"512*B*S"}}]},"schema":"DistributedTaskIR","version":"1.0.0"})json";
constexpr std::string_view kPortableFile = R"json({"digest":"a18dd1a5dc8ea509d07636093f3174f1eb5678c98748320f7d5794e2a3358cb3","parents":["6b96b8302ced9562e801ee34db4c4f0c6e4a431c61c34c0be19e8d65bae76f6e"],"payload":{"buffers":[{"alignment":256,"consumers":[0],"id":"b:x","lineage":{"kind":"derived","rule":"portable.buffer","sources":["t:op:fc"]},"producer":null,"role":"input","size":"128*B*S","storage":"input"},{"alignment":256,"consumers":[1],"id":"b:h","lineage":{"kind":"derived","rule":"portable.buffer","sources":["t:op:fc"]},"producer":0,"role":"activation","size":"256*B*S","storage":"transient"},{"alignment":64,"consumers":[2],"id":"b:h.reduced","lineage":{"kind":"derived","rule":"portable.buffer","sources":["t:op:fc:coll"]},"producer":1,"role":"message","size":"256*B*S+64","storage":"transient"}],"memory":[],"rules":["portable.task","portable.buffer"],"symbols":[{"axis":"workload","divisible_by":"1","integer":true,"max":"4096","min":"1","name":"B"},{"axis":"workload","divisible_by":"8","integer":true,"max":null,"min":"8","name":"S"}],"tasks":[{"attrs":{},"dependencies":[],"effects":[],"group":"g0","id":"p:t:op:fc","inputs":[0],"kind":"compute","lineage":{"kind":"derived","rule":"portable.task","sources":["t:op:fc"]},"outputs":[1],"phase":"forward","ranks":[0,1],"repeat":1,"replication":1,"requires":[{"collective":null,"dtype":"bf16","kind":"matrix","reduction":null}],"work":{"matrix_ops":"16384*B*S","message_bytes":"0","persistent_bytes":"32768","read_bytes":"128*B*S+32768","temporary_bytes":"0","vector_ops":"0","write_bytes":"512*B*S"}},{"attrs":{},"dependencies":[0],"effects":[],"group":"g0","id":"p:t:op:fc:coll","inputs":[1],"kind":"collective","lineage":{"kind":"derived","rule":"portable.task","sources":["t:op:fc:coll"]},"outputs":[2],"phase":"forward","ranks":[0,1],"repeat":1,"replication":1,"requires":[{"collective":"all_reduce","dtype":"","kind":"collective","reduction":"sum"}],"work":{"matrix_ops":"0","message_bytes":"512*B*S","persistent_bytes":"0","read_bytes":"0","temporary_bytes":"0","vector_ops":"0","write_bytes":"0"}},{"attrs":{},"dependencies":[1],"effects":[],"group":"g1","id":"p:t:op:gelu","inputs":[2],"kind":"compute","lineage":{"kind":"derived","rule":"portable.task","sources":["t:op:gelu"]},"outputs":[],"phase":"forward","ranks":[0,1],"repeat":1,"replication":1,"requires":[{"collective":null,"dtype":"bf16","kind":"vector","reduction":null}],"work":{"matrix_ops":"0","message_bytes":"0","persistent_bytes":"0","read_bytes":"512*B*S","temporary_bytes":"0","vector_ops":"1920*B*S","write_bytes":"512*B*S"}}]},"schema":"PortablePlanIR","version":"1.0.0"})json";
constexpr std::string_view kConcreteFile = R"json({"digest":"4e9345573dab85706a61d75ac785c93b2b3ec6963fce180d2211a376001c90ce","parents":["a18dd1a5dc8ea509d07636093f3174f1eb5678c98748320f7d5794e2a3358cb3"],"payload":{"bindings":[{"symbol":"B","value":"2"},{"symbol":"S","value":"16"}],"buffers":[{"alignment":256,"id":"cb:b:x","lineage":{"kind":"derived","rule":"concrete.place","sources":["b:x"]},"offset":"0","region":0,"size":"4096","storage":"input"},{"alignment":256,"id":"cb:b:h","lineage":{"kind":"derived","rule":"concrete.place","sources":["b:h"]},"offset":"4096","region":0,"size":"8192","storage":"transient"},{"alignment":64,"id":"cb:b:h.reduced","lineage":{"kind":"derived","rule":"concrete.place","sources":["b:h.reduced"]},"offset":"0","region":1,"size":"8256","storage":"transient"}],"commands":[{"attrs":{"kernel":"sm90_gemm"},"dependencies":[],"device":0,"id":"c:p:t:op:fc","implementation":"cublas.gemm","kind":"launch","lineage":{"kind":"derived","rule":"concrete.bind","sources":["p:t:op:fc"]},"reads":[0],"repeat":1,"signals":[0],"waits":[],"work":{"matrix_ops":"16384*B*S","message_bytes":"0","persistent_bytes":"32768","read_bytes":"128*B*S+32768","temporary_bytes":"0","vector_ops":"0","write_bytes":"512*B*S"},"writes":[1]},{"attrs":{},"dependencies":[0],"device":1,"id":"c:p:t:op:fc:coll","implementation":"nccl.all_reduce","kind":"collective","lineage":{"kind":"derived","rule":"concrete.bind","sources":["p:t:op:fc:coll"]},"reads":[1],"repeat":1,"signals":[],"waits":[0],"work":{"matrix_ops":"0","message_bytes":"512*B*S","persistent_bytes":"0","read_bytes":"0","temporary_bytes":"0","vector_ops":"0","write_bytes":"0"},"writes":[2]},{"attrs":{},"dependencies":[1],"device":1,"id":"c:p:t:op:gelu","implementation":"triton.gelu","kind":"launch","lineage":{"kind":"derived","rule":"concrete.bind","sources":["p:t:op:gelu"]},"reads":[2],"repeat":1,"signals":[],"waits":[],"work":{"matrix_ops":"0","message_bytes":"0","persistent_bytes":"0","read_bytes":"512*B*S","temporary_bytes":"0","vector_ops":"1920*B*S","write_bytes":"512*B*S"},"writes":[]}],"devices":[{"id":"dev:0","kind":"gpu","memory_bytes":"85899345920","ranks":[]},{"id":"dev:1","kind":"gpu","memory_bytes":"85899345920","ranks":[]}],"engines":[{"capabilities":[{"collective":null,"dtype":"bf16","kind":"matrix","reduction":null}],"device":0,"id":"eng:0:tensor"},{"capabilities":[{"collective":"all_reduce","dtype":"","kind":"collective","reduction":"sum"},{"collective":null,"dtype":"bf16","kind":"vector","reduction":null}],"device":1,"id":"eng:1:sm"}],"implementations":[{"id":"cublas.gemm","provides":[{"collective":null,"dtype":"bf16","kind":"matrix","reduction":null}]},{"id":"nccl.all_reduce","provides":[{"collective":"all_reduce","dtype":"","kind":"collective","reduction":"sum"}]},{"id":"triton.gelu","provides":[{"collective":null,"dtype":"bf16","kind":"vector","reduction":null}]}],"memory":[],"queue":{"queues":[{"commands":[0],"device":0,"id":"q:0:compute","kind":"compute"},{"commands":[1],"device":1,"id":"q:1:collective","kind":"collective"},{"commands":[2],"device":1,"id":"q:1:compute","kind":"compute"}]},"regions":[{"alignment":256,"capacity":"1048576","device":0,"id":"r:0:hbm","offset":"0","space":"hbm"},{"alignment":256,"capacity":"1048576","device":1,"id":"r:1:hbm","offset":"4096","space":"hbm"}],"rules":["concrete.bind","concrete.place"],"slot":null,"target":"queue","tokens":[{"id":"tok:fc.coll"}],"world_size":0},"schema":"ConcretePlanIR","version":"1.0.0"})json";

template <class P>
std::string payload_of(const Snapshot<P>& s) { return codec::to_canonical(s.payload); }

TEST(GoldenDigest, ModelIR) {
  const Golden g;
  EXPECT_EQ(encode_snapshot(g.model), kModelFile);
  EXPECT_EQ(g.model.digest, kModelDigest);
  EXPECT_EQ(digest_bytes("ModelIR", payload_of(g.model)), kModelDigest);
}

TEST(GoldenDigest, DistributedTaskIR) {
  const Golden g;
  EXPECT_EQ(encode_snapshot(g.dist), kDistFile);
  EXPECT_EQ(g.dist.digest, kDistDigest);
  EXPECT_EQ(g.dist.parents, std::vector<std::string>{std::string(kModelDigest)});
}

TEST(GoldenDigest, PortablePlanIRWithSymbolicSizes) {
  const Golden g;
  EXPECT_EQ(encode_snapshot(g.portable), kPortableFile);
  EXPECT_EQ(g.portable.digest, kPortableDigest);
  EXPECT_EQ(g.portable.payload.buffers[2].size.str(), "256*B*S+64");  // a symbolic size, canonical text
}

TEST(GoldenDigest, ConcretePlanIR) {
  const Golden g;
  EXPECT_EQ(encode_snapshot(g.concrete), kConcreteFile);
  EXPECT_EQ(g.concrete.digest, kConcreteDigest);
}

// The pinned files decode, re-encode to the same bytes, and carry their digests.
TEST(GoldenDigest, PinnedFilesRoundTrip) {
  for (std::string_view file : {kModelFile, kDistFile, kPortableFile, kConcreteFile}) {
    const AnySnapshot s = decode_snapshot(file);
    EXPECT_EQ(std::visit([](const auto& x) { return encode_snapshot(x); }, s), file);
    EXPECT_EQ(recompute_digest(s), std::visit([](const auto& x) { return x.digest; }, s));
  }
}

// The golden snapshots are a valid chain: they commit through the Gate.
TEST(GoldenDigest, ChainCommitsThroughTheGate) {
  const Golden g;
  auto render = [](const Rejection& r) {
    std::string out;
    for (const auto& d : r.diagnostics.all()) out += to_text(d) + "\n";
    return out;
  };
  auto m = Gate::commit_root(g.model);
  ASSERT_TRUE(std::holds_alternative<Committed<ModelIR>>(m)) << render(std::get<Rejection>(m));
  auto d = Gate::commit(std::get<Committed<ModelIR>>(m), g.dist);
  ASSERT_TRUE(std::holds_alternative<Committed<DistributedTaskIR>>(d)) << render(std::get<Rejection>(d));
  auto p = Gate::commit(std::get<Committed<DistributedTaskIR>>(d), g.portable);
  ASSERT_TRUE(std::holds_alternative<Committed<PortablePlanIR>>(p)) << render(std::get<Rejection>(p));
  auto k = Gate::commit(std::get<Committed<PortablePlanIR>>(p), g.concrete);
  ASSERT_TRUE(std::holds_alternative<Committed<ConcretePlanIR>>(k)) << render(std::get<Rejection>(k));
}

// An implementation-independent cross-check: Python's hashlib BLAKE2b-256 over the same
// bytes gives the pinned digest, and json.dumps(sort_keys, compact, ensure_ascii=False)
// reproduces the canonical payload bytes.
TEST(GoldenDigest, PythonHashlibAgrees) {
  const char* python = "/usr/bin/python3";
  if (access(python, X_OK) != 0) GTEST_SKIP() << python << " is not available";
  const Golden g;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("plancert-golden-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  struct Case {
    std::string schema, payload, digest;
  };
  const Case cases[] = {{"ModelIR", payload_of(g.model), std::string(kModelDigest)},
                        {"DistributedTaskIR", payload_of(g.dist), std::string(kDistDigest)},
                        {"PortablePlanIR", payload_of(g.portable), std::string(kPortableDigest)},
                        {"ConcretePlanIR", payload_of(g.concrete), std::string(kConcreteDigest)}};
  for (const auto& c : cases) {
    const auto file = dir / (c.schema + ".json");
    {
      std::ofstream out(file, std::ios::binary);
      out << c.payload;
    }
    const std::string cmd = std::string(python) +
                            " -c \"import hashlib, json, sys; d = open(sys.argv[1], 'rb').read(); "
                            "h = hashlib.blake2b(b'plancert/' + sys.argv[2].encode() + b'\\0' + d, digest_size=32).hexdigest(); "
                            "c = json.dumps(json.loads(d), sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode() == d; "
                            "print(h, 'canonical' if c else 'NOT-canonical')\" " +
                            file.string() + " " + c.schema;
    FILE* pipe = popen(cmd.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    char buf[256] = {};
    std::string out;
    while (std::fgets(buf, sizeof buf, pipe)) out += buf;
    ASSERT_EQ(pclose(pipe), 0) << cmd;
    EXPECT_EQ(out, c.digest + " canonical\n") << c.schema;
  }
  std::filesystem::remove_all(dir);
}

TEST(GoldenDump, DISABLED_Print) {
  const Golden g;
  std::printf("%s\n%s\n%s\n%s\n", encode_snapshot(g.model).c_str(), encode_snapshot(g.dist).c_str(), encode_snapshot(g.portable).c_str(),
              encode_snapshot(g.concrete).c_str());
}

}  // namespace
}  // namespace plancert
