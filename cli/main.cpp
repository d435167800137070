// SPDX-License-Identifier: Apache-2.0
// plancert: one program, one subcommand per job (ARCHITECTURE.md, "Command line").
#include "cli/commands.h"
#include "cli/fuzz_cmd.h"
#include "cli/infer_cmd.h"
#include "cli/io.h"
#include "cli/prove_cmd.h"
#include "core/diag.h"
#include "core/expr.h"
#include "passes/emit/emit.h"
#include "passes/frontend/room.h"

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <new>

int main(int argc, char** argv) {
  using namespace plancert;
  CLI::App app{"plancert: derive, bind, simulate and certify distributed Transformer plans"};
  app.require_subcommand(1);

  cli::VerifyOptions vo;
  auto* verify = app.add_subcommand("verify", "Check a snapshot produced by anyone (the trusted path: no pass code runs)");
  verify->add_option("file", vo.file, "snapshot file")->required();
  verify->add_option("--parent", vo.parent, "parent snapshot; enables the transition obligations");
  verify->add_option("--format", vo.format, "output format")->check(CLI::IsMember({"text", "json"}));
  verify->add_option("--max-bytes", vo.max_bytes, "largest input file read (default 1 GiB)");

  cli::CertifyOptions co;
  auto* certify = app.add_subcommand("certify", "Derive and certify a training plan (no arguments: the bundled default example)");
  certify->add_option("--model", co.model, "model file: native TOML, Hugging Face config.json or Calculon model JSON");
  certify->add_option("--strategy", co.strategy, "strategy file: native TOML or Calculon execution JSON");
  certify->add_option("--system", co.system, "system file: native TOML or Calculon system JSON");
  certify->add_option("--target", co.target, "bind the portable plan to a target: reference-queue, reference-slot or queue (production binder with memory planner)");
  certify->add_option("--out", co.out, "write the committed snapshots into this directory");
  certify->add_option("--report", co.report, "write a JSON report to this file");
  cli::InferOptions io;
  certify->add_option("--phase", io.phase, "certify one inference phase instead of training: prefill | decode");
  certify->add_option("--batch", io.batch, "inference: sequences in the phase (b)");
  certify->add_option("--context", io.context, "inference: visible context tokens (c; prefill processes all c, decode one new token)");
  certify->add_option("--tp", io.tp, "inference: tensor-parallel degree (default 1)");
  certify->add_option("--pp", io.pp, "inference: pipeline stages (default 1)");
  certify->add_flag("--max-batch", io.max_batch, "inference: find the largest batch that fits device memory (exact) and certify it");
  certify->add_flag("--max-context", io.max_context, "inference: find the longest context that fits device memory (exact) and certify it");
  certify->allow_extras();
  certify->footer("Megatron-LM flags (--tensor-model-parallel-size N, --pipeline-model-parallel-size N, --data-parallel-size N, --world-size N,\n"
                  "--micro-batch-size N, --global-batch-size N, --seq-length N, --sequence-parallel, --recompute-granularity full|selective,\n"
                  "--num-layers-per-virtual-pipeline-stage N, --virtual-pipeline-size V, --use-distributed-optimizer, --bf16, --fp16)\n"
                  "may be given instead of --strategy.");

  cli::ProveOptions po;
  auto* prove = cli::add_prove_command(app, po);

  cli::FuzzOptions fo;
  auto* fuzz = cli::add_fuzz_command(app, fo);

  std::string code;
  bool list = false;
  auto* explain = app.add_subcommand("explain", "Print an obligation's rule, witness and complexity from spec/");
  explain->add_option("code", code, "obligation ID, e.g. DAG-2");
  explain->add_flag("--list", list, "list every obligation ID");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(Exit::BadInput);
  }
  try {
    if (*verify) return cli::run_verify(vo);
    if (*fuzz) return cli::run_fuzz(fo);
    if (*prove || *certify) frontend::set_memory_room(cli::limit_address_space());  // plans sized by a few numbers of a configuration file (cli/io.h, CONFIG-8)
    if (*prove) {
      po.megatron = prove->remaining();
      return cli::run_prove(po);
    }
    if (*certify) {
      co.megatron = certify->remaining();
      if (io.any()) {
        io.model = co.model, io.system = co.system, io.out = co.out, io.report = co.report;
        io.strategy = co.strategy, io.target = co.target, io.extra = co.megatron;
        return cli::run_certify_inference(io);
      }
      if (!co.megatron.empty() && !co.strategy.empty()) {
        std::cerr << "error: give either --strategy or Megatron-LM flags, not both\n";
        return static_cast<int>(Exit::BadInput);
      }
      return cli::run_certify(co);
    }
    if (*explain) {
      if (code.empty() && !list) { std::cerr << "error: explain needs a CODE or --list\n"; return static_cast<int>(Exit::BadInput); }
      return cli::run_explain(code, list);
    }
  } catch (const InputError& e) {
    std::cerr << to_text(e.diag) << "\n";
    return static_cast<int>(Exit::BadInput);
  } catch (const TooManyTerms& e) {  // a pass multiplied out quantities past SYM-3's bound: nothing is decided, nothing written
    std::cerr << "error[SYM-3] /payload: " << e.what() << "\n";
    return static_cast<int>(Exit::Rejected);
  } catch (const std::bad_alloc&) {  // no output was written: every output is renamed into place when complete
    std::cerr << "internal error: out of memory (the system refused an allocation: a memory, address-space or overcommit limit)\n";
    return static_cast<int>(Exit::Internal);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return static_cast<int>(Exit::Internal);
  }
  return static_cast<int>(Exit::Internal);
}
