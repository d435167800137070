// SPDX-License-Identifier: Apache-2.0
// The binding step of `plancert certify --target ...`: profiles, a binding pass, the gate.
#include "cli/bind_cmd.h"

#include "cli/io.h"
#include "core/diag.h"
#include "passes/bind/bind.h"
#include "passes/emit/emit.h"
#include "spec/checked.h"

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <ostream>
#include <sstream>

namespace plancert::cli {

std::string gib_text(const Expr& bytes) {
  auto v = bytes.constant();
  if (!v) return bytes.str();
  Int hundredths = plancert::floor(*v / Rat(Int(1) << 30) * Rat(100) + make_rat(1, 2));
  std::ostringstream os;
  os << hundredths / 100 << "." << std::setw(2) << std::setfill('0') << hundredths % 100;
  return os.str();
}

bool is_bind_target(std::string_view t) { return t == "reference-queue" || t == "reference-slot" || t == "queue"; }

BindOutcome bind_and_commit(const Committed<PortablePlanIR>& portable, const DistributedTaskIR* distributed, const frontend::SystemConfig& system,
                            const frontend::StrategyConfig& strategy, const std::string& target, const std::string& out_dir, std::ostream& log) {
  if (!is_bind_target(target))
    throw InputError("CONFIG-6", "", "--target " + target + ": expected reference-queue, reference-slot or queue");
  prepare_large_run(kLargeRunHeap);  // a bound plan can take hundreds of MB of heap and of text to hash (README, Performance)
  const auto t0 = std::chrono::steady_clock::now();
  BindOutcome out;
  const bind::TargetProfile tp = bind::target_profile(system);
  const bind::DeploymentProfile dp = bind::deployment_profile(system, strategy);
  const char* pass = target == "queue" ? "BindQueueTargetPass" : target == "reference-queue" ? "BindReferenceQueueTargetPass" : "BindReferenceSlotTargetPass";
  if (auto problems = bind::deployment_problems(dp, strategy); !problems.empty()) {
    log << "rejected: the deployment cannot run the strategy (" << pass << ")\n";
    for (const auto& p : problems) log << "  " << p << "\n";
    out.exit = static_cast<int>(Exit::Rejected);
    return out;
  }
  ConcretePlanIR plan;
  try {
    const bind::SymbolValues values;  // the portable plans of certify have constant sizes
    if (target == "queue") plan = bind::bind_queue(portable.payload(), tp, dp, bind::QueueOptions{distributed, values});
    else if (target == "reference-queue") plan = bind::bind_reference_queue(portable.payload(), tp, dp, values);
    else plan = bind::bind_reference_slot(portable.payload(), tp, dp, values);
  } catch (const bind::BindError& e) {
    log << "rejected: " << pass << " cannot bind the portable plan: " << e.what() << "\n";
    out.exit = static_cast<int>(Exit::Rejected);
    return out;
  }
  auto result = Gate::commit(portable, unsealed_snapshot(std::move(plan), {portable.digest()}));
  if (const auto* r = std::get_if<Rejection>(&result)) {
    log << "rejected: the gate refused the output of " << pass << " (" << r->diagnostics.count() << " finding(s))\n";
    constexpr std::size_t kShown = 20;  // the first findings; the rest are usually the same requirement again
    for (std::size_t i = 0; i < r->diagnostics.all().size() && i < kShown; ++i) log << to_text(r->diagnostics.all()[i]) << "\n";
    if (r->diagnostics.count() > kShown) log << "... and " << r->diagnostics.count() - kShown << " more finding(s)\n";
    out.exit = static_cast<int>(Exit::Rejected);
    return out;
  }
  const auto& c = std::get<Committed<ConcretePlanIR>>(result);
  const ConcretePlanIR& p = c.payload();
  out.digest = c.digest();
  out.obligations = obligations_checked(3, true);
  out.committed = c;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // naive / peak with two decimals, rounded half up (exact integer arithmetic); "-" without a peak.
  auto factor = [](const bind::DeviceFigures& f) {
    if (f.peak_bytes <= 0) return std::string("-");
    const Int h = (f.naive_bytes * 200 + f.peak_bytes) / (f.peak_bytes * 2);
    std::ostringstream os;
    os << h / 100 << "." << std::setw(2) << std::setfill('0') << h % 100;
    return os.str();
  };
  nlohmann::json memory = nlohmann::json::array();
  for (const auto& f : bind::figures(p))
    memory.push_back({{"device", p.devices[static_cast<std::size_t>(f.device)].id},
                      {"peak_bytes", to_string(f.peak_bytes)},
                      {"lower_bound_bytes", to_string(f.lower_bound)},
                      {"capacity_bytes", to_string(f.capacity_bytes)},
                      {"naive_bytes", to_string(f.naive_bytes)},
                      {"reuse_factor", factor(f)}});
  out.report["concrete"] = {{"target", target},
                            {"digest", out.digest},
                            {"commands", p.commands.size()},
                            {"queues", p.queue ? p.queue->queues.size() : 0},
                            {"tokens", p.tokens.size()},
                            {"buffers", p.buffers.size()},
                            {"memory", memory}};
  log << "  " << pass << ": " << p.devices.size() << " devices, " << p.commands.size() << " commands, " << (p.queue ? p.queue->queues.size() : 0) << " queues, "
      << p.tokens.size() << " tokens, " << p.buffers.size() << " buffers\n";
  auto gib = [](const Int& b) { return gib_text(Expr(b)); };
  log << "    device          peak GiB  lower bound  no reuse  capacity  no reuse / peak\n";
  for (const auto& f : bind::figures(p))
    log << "    " << std::left << std::setw(14) << p.devices[static_cast<std::size_t>(f.device)].id << std::right << std::setw(10) << gib(f.peak_bytes) << std::setw(13)
        << gib(f.lower_bound) << std::setw(10) << gib(f.naive_bytes) << std::setw(10) << gib(f.capacity_bytes) << std::setw(15) << factor(f) << "x\n";
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    write_file_atomic(std::filesystem::path(out_dir) / "concrete.json", encode_snapshot(c.snapshot()));
  }
  return out;
}

int write_certified(const std::string& out_dir, const std::string& report_path, const nlohmann::json& report, const Committed<ModelIR>& model,
                    const Committed<DistributedTaskIR>& distributed, const Committed<PortablePlanIR>& portable, const BindOutcome& bound) {
  if (!out_dir.empty()) {
    const std::filesystem::path dir(out_dir);
    std::filesystem::create_directories(dir);
    write_file_atomic(dir / "model.json", encode_snapshot(model.snapshot()));
    write_file_atomic(dir / "distributed.json", encode_snapshot(distributed.snapshot()));
    write_file_atomic(dir / "portable.json", encode_snapshot(portable.snapshot()));
    if (bound.committed) write_file_atomic(dir / "concrete.json", encode_snapshot(bound.committed->snapshot()));
    std::cout << "  snapshots written to " << out_dir << "/{model,distributed,portable" << (bound.committed ? ",concrete" : "") << "}.json\n";
  }
  if (!report_path.empty()) write_file_atomic(report_path, report.dump(2) + "\n");
  std::cout << "certified\n";
  return static_cast<int>(Exit::Accepted);
}

}  // namespace plancert::cli
