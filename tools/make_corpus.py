#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Generates the negative corpus tests/corpus/ deterministically (stdlib only).

    /usr/bin/python3 tools/make_corpus.py                 # (re)write tests/corpus/
    /usr/bin/python3 tools/make_corpus.py --out DIR       # write into DIR instead
    /usr/bin/python3 tools/make_corpus.py --check         # fail if tests/corpus/ differs

What it writes (the runner is tools/run_corpus.py, ctest label `corpus`):

- `valid-<slug>.json`: one small, non-trivial, accepted snapshot per IR layer
  (ModelIR, DistributedTaskIR, PortablePlanIR, ConcretePlanIR with the queue
  and with the slot target, TimelineBundle, MachineIR, ObservationSet). The
  layers form one consistent chain; a snapshot that has a parent carries it
  beside it as `valid-<slug>.parent.json`, so its transition obligations are
  checked too.
- `<ID>-<slug>.json`: for every obligation ID of spec/obligations/*.json at
  least one input that violates exactly that obligation: a valid snapshot,
  mutated, with its digest recomputed (except where the digest is the point).
  Transition obligations carry their parent as `<ID>-<slug>.parent.json`.
  JSON-* and SCHEMA-* inputs are byte-level mutations.
- `<ID>-<slug>.args`: a sidecar `{"args": [...], "exit": N}` for inputs that
  are not run as `plancert verify --format json FILE [--parent P]`: missing
  files and directories (IO-1), `--max-bytes` (IO-2), configuration files
  and Megatron-LM flags run through `plancert certify` (CONFIG-*). In args,
  `{corpus}` stands for the corpus directory.
- `<ID>-<slug>.witness.json`: a topological-order witness handed to the gate
  (DAG-3: only Gate::commit checks witnesses, plancert verify has none); the
  runner runs these through the `corpus_gate` driver of tests/corpus/.
- `README.md`: the index of every file and what it breaks.

Nothing here depends on time, randomness or the environment: two runs write
identical bytes, and a ctest (`corpus_generator_sync`) checks that the
committed corpus equals a fresh run.
"""
from __future__ import annotations

import argparse
import copy
import filecmp
from fractions import Fraction
import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "corpus"
# Files in the corpus directory that the generator does not own.
KEEP = {"CMakeLists.txt", "corpus_gate.cpp"}
VERSION = "1.0.0"


# ---------------------------------------------------------------------------
# canonical encoding and digests (ARCHITECTURE.md, "Canonical encoding and digests")

def canon(x) -> str:
    return json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(schema: str, payload) -> str:
    data = b"plancert/" + schema.encode() + b"\0" + canon(payload).encode("utf-8")
    return hashlib.blake2b(data, digest_size=32).hexdigest()


def snap(schema: str, payload, parents: list[str]) -> dict:
    return {"digest": digest(schema, payload), "parents": list(parents), "payload": payload, "schema": schema, "version": VERSION}


def encode(s: dict) -> bytes:
    return canon(s).encode("utf-8")


def redigest(s: dict) -> dict:
    s["digest"] = digest(s["schema"], s["payload"])
    return s


# ---------------------------------------------------------------------------
# building blocks

def work(matrix="0", message="0", persistent="0", read="0", temporary="0", vector="0", write="0") -> dict:
    return {"matrix_ops": matrix, "message_bytes": message, "persistent_bytes": persistent, "read_bytes": read,
            "temporary_bytes": temporary, "vector_ops": vector, "write_bytes": write}


def introduced(rule: str) -> dict:
    return {"kind": "introduced", "rule": rule, "sources": []}


def derived(rule: str, *sources: str) -> dict:
    return {"kind": "derived", "rule": rule, "sources": list(sources)}


def symbol(name: str, divisible_by="1", mn="1", mx=None) -> dict:
    return {"axis": "workload", "divisible_by": divisible_by, "integer": True, "max": mx, "min": mn, "name": name}


SYMBOLS = [symbol("B"), symbol("S", divisible_by="2", mn="2", mx="4096")]


# ---- ModelIR: a two-layer MLP over B x S tokens ----------------------------------------

def model() -> dict:
    def value(i, role, shape, dtype="bf16"):
        return {"dtype": dtype, "id": i, "lineage": introduced("model.build"), "role": role, "shape": shape}

    return {
        "name": "tiny-mlp",
        "rules": ["model.build"],
        "symbols": copy.deepcopy(SYMBOLS),
        "values": [
            value("x", "input", ["B", "S", "8"]),        # 0
            value("w1", "weight", ["8", "16"]),          # 1
            value("h", "activation", ["B", "S", "16"]),  # 2
            value("w2", "weight", ["16", "8"]),          # 3
            value("y", "output", ["B", "S", "8"]),       # 4
        ],
        "operations": [
            {"attrs": {"note": "first projection"}, "effects": [], "id": "fc1", "inputs": [0, 1], "kind": "matmul",
             "lineage": introduced("model.build"), "outputs": [2],
             "work": work(matrix="256*B*S", persistent="256", read="16*B*S+256", write="32*B*S")},
            {"attrs": {}, "effects": [], "id": "fc2", "inputs": [2, 3], "kind": "matmul",
             "lineage": introduced("model.build"), "outputs": [4],
             "work": work(matrix="256*B*S", persistent="256", read="32*B*S+256", vector="8*B*S", write="16*B*S")},
        ],
    }


# ---- DistributedTaskIR: pp=2 x dp=1 x tp=2, two microbatches, 1F1B ----------------------
# Ranks: stage 0 = {0, 1}, stage 1 = {2, 3}; tp is the innermost axis.

def dtask(tid, kind, phase, ranks, deps, lineage, w, repeat=2, peer=None, collective=None, value="", replication=1):
    return {"attrs": {}, "collective": collective, "dependencies": deps, "effects": [], "id": tid, "kind": kind, "lineage": lineage,
            "peer": peer, "phase": phase, "ranks": ranks, "repeat": repeat, "replication": replication, "value": value, "work": w}


def fwd(mb):
    return {"chunk": 0, "kind": "forward", "microbatch": mb}


def bwd(mb):
    return {"chunk": 0, "kind": "backward", "microbatch": mb}


def distributed() -> dict:
    S0, S1 = [0, 1], [2, 3]
    return {
        "inference": None,  # a training plan
        "mesh": {"axes": [{"name": "pp", "size": 2}, {"name": "dp", "size": 1}, {"name": "tp", "size": 2}]},
        "microbatches": 2,
        "rules": ["dist.compute", "dist.p2p", "dist.collective", "dist.optimizer"],
        "symbols": copy.deepcopy(SYMBOLS),
        "schedule": [
            {"chunks": 1, "stage": 0, "steps": [fwd(0), fwd(1), bwd(0), bwd(1)]},
            {"chunks": 1, "stage": 1, "steps": [fwd(0), bwd(0), fwd(1), bwd(1)]},
        ],
        "shards": [
            {"axis": "tp", "dim": 1, "pieces": 2, "stage": 0, "value": "w1"},
            {"axis": "tp", "dim": 0, "pieces": 2, "stage": 1, "value": "w2"},
            {"axis": "tp", "dim": 1, "pieces": 2, "stage": 0, "value": "x"},
            {"axis": "", "dim": -1, "pieces": 1, "stage": 1, "value": "y"},
        ],
        "tasks": [
            dtask("s0.fc1.fwd", "compute", "forward", S0, [], derived("dist.compute", "fc1"),
                  work(matrix="128*B*S", read="8*B*S+128", write="16*B*S")),                                    # 0
            dtask("s0.send.h", "send", "forward", S0, [0], derived("dist.p2p", "h"), work(message="16*B*S"), peer=2, value="h"),  # 1
            dtask("s1.recv.h", "recv", "forward", S1, [1], derived("dist.p2p", "h"), work(message="16*B*S"), peer=1, value="h"),  # 2
            dtask("s1.fc2.fwd", "compute", "forward", S1, [2], derived("dist.compute", "fc2"),
                  work(matrix="128*B*S", read="16*B*S+128", write="8*B*S")),                                    # 3
            dtask("s1.allreduce.y", "collective", "forward", S1, [3], derived("dist.collective", "y"), work(message="16*B*S"),
                  collective={"axis": "tp", "group": S1, "kind": "all_reduce", "message_bytes": "16*B*S", "reduction": "sum"},
                  value="y"),                                                                                   # 4
            dtask("s1.fc2.bwd_act", "compute", "backward_activation", S1, [4], derived("dist.compute", "fc2"), work(matrix="128*B*S")),  # 5
            dtask("s1.fc2.bwd_w", "compute", "backward_weight", S1, [4], derived("dist.compute", "fc2"), work(matrix="128*B*S")),        # 6
            dtask("s1.send.dh", "send", "backward_activation", S1, [5], derived("dist.p2p", "h"), work(message="16*B*S"), peer=8, value="h"),  # 7
            dtask("s0.recv.dh", "recv", "backward_activation", S0, [7], derived("dist.p2p", "h"), work(message="16*B*S"), peer=7, value="h"),  # 8
            dtask("s0.fc1.bwd_act", "compute", "backward_activation", S0, [8], derived("dist.compute", "fc1"), work(matrix="128*B*S")),  # 9
            dtask("s0.fc1.bwd_w", "compute", "backward_weight", S0, [8], derived("dist.compute", "fc1"), work(matrix="128*B*S")),        # 10
            dtask("s0.opt.w1", "compute", "optimizer", S0, [10], derived("dist.optimizer", "w1"), work(vector="1024"), repeat=1),  # 11
            dtask("s1.opt.w2", "compute", "optimizer", S1, [6], derived("dist.optimizer", "w2"), work(vector="1024"), repeat=1),   # 12
        ],
    }


def interleaved(d: dict) -> dict:
    """The same plan on a mesh whose pp axis is innermost (dp, tp, pp): stage 0 runs on ranks 0
    and 2, stage 1 on ranks 1 and 3, so the stages' rank sets interleave (their ranges overlap),
    and the tp groups are {0, 2} and {1, 3}."""
    to = {0: 0, 1: 2, 2: 1, 3: 3}
    d["mesh"]["axes"] = [{"name": "dp", "size": 1}, {"name": "tp", "size": 2}, {"name": "pp", "size": 2}]
    for t in d["tasks"]:
        t["ranks"] = sorted(to[r] for r in t["ranks"])
        if t["collective"]:
            t["collective"]["group"] = sorted(to[r] for r in t["collective"]["group"])
    return d


# ---- PortablePlanIR: the distributed tasks with buffers and memory facts -----------------

CAPS = {
    "compute": [{"collective": None, "dtype": "bf16", "kind": "matrix", "reduction": None}],
    "optimizer": [{"collective": None, "dtype": "fp32", "kind": "vector", "reduction": None}],
    "send": [{"collective": None, "dtype": "", "kind": "transfer", "reduction": None}],
    "recv": [{"collective": None, "dtype": "", "kind": "transfer", "reduction": None}],
    "collective": [{"collective": "all_reduce", "dtype": "bf16", "kind": "collective", "reduction": "sum"}],
}

# task index -> (inputs, outputs) buffer indices
TASK_IO = {0: ([0, 1], [2]), 1: ([2], []), 2: ([], [3]), 3: ([3, 4], [5]), 4: ([5], [6]), 5: ([4, 6], [7]), 6: ([6], [10]),
           7: ([7], []), 8: ([], [8]), 9: ([1, 8], []), 10: ([0, 8], [9]), 11: ([9, 11], [13]), 12: ([10, 12], [14])}


def portable() -> dict:
    d = distributed()
    tasks = []
    for i, t in enumerate(d["tasks"]):
        ins, outs = TASK_IO[i]
        cap = "optimizer" if t["phase"] == "optimizer" else t["kind"]
        tasks.append({"attrs": {}, "dependencies": list(t["dependencies"]), "effects": copy.deepcopy(t["effects"]), "group": "stage%d" % (0 if t["ranks"][0] < 2 else 1),
                      "id": "p." + t["id"], "inputs": ins, "kind": t["kind"], "lineage": derived("plan.task", t["id"]),
                      "outputs": outs, "phase": t["phase"], "ranks": list(t["ranks"]), "repeat": t["repeat"],
                      "replication": t["replication"], "requires": copy.deepcopy(CAPS[cap]), "work": copy.deepcopy(t["work"])})

    def buf(bid, storage, role, size, producer, source):
        return {"alignment": 256, "consumers": [], "id": bid, "lineage": derived("plan.buffer", source), "producer": producer,
                "role": role, "size": size, "storage": storage}

    buffers = [
        buf("buf.x.s0", "input", "input", "8*B*S", None, "s0.fc1.fwd"),                  # 0
        buf("buf.w1.s0", "state", "weight", "128", None, "s0.fc1.fwd"),                   # 1
        buf("buf.h.s0", "transient", "activation", "16*B*S", 0, "s0.fc1.fwd"),            # 2
        buf("buf.h.s1", "transient", "message", "16*B*S", 2, "s1.recv.h"),               # 3
        buf("buf.w2.s1", "state", "weight", "128", None, "s1.fc2.fwd"),                   # 4
        buf("buf.y.s1", "transient", "activation", "8*B*S", 3, "s1.fc2.fwd"),             # 5
        buf("buf.y.out", "output", "output", "8*B*S", 4, "s1.allreduce.y"),              # 6
        buf("buf.dh.s1", "transient", "gradient", "16*B*S", 5, "s1.fc2.bwd_act"),        # 7
        buf("buf.dh.s0", "transient", "gradient", "16*B*S", 8, "s0.recv.dh"),            # 8
        buf("buf.gw1.s0", "transient", "gradient", "128", 10, "s0.fc1.bwd_w"),            # 9
        buf("buf.gw2.s1", "transient", "gradient", "128", 6, "s1.fc2.bwd_w"),             # 10
        buf("buf.opt.w1", "state", "optimizer_state", "768", None, "s0.opt.w1"),          # 11
        buf("buf.opt.w2", "state", "optimizer_state", "768", None, "s1.opt.w2"),          # 12
        buf("buf.w1.new", "output", "weight", "128", 11, "s0.opt.w1"),                    # 13
        buf("buf.w2.new", "output", "weight", "128", 12, "s1.opt.w2"),                    # 14
    ]
    for t, (ins, _) in sorted(TASK_IO.items()):
        for b in ins:
            buffers[b]["consumers"].append(t)

    def fact(category, stage, bytes_, bufs=(), chunk=-1):
        return {"buffers": list(bufs), "bytes": bytes_, "category": category, "chunk": chunk, "stage": stage}

    memory = [
        fact("weights", 0, "128", [1]), fact("weight_gradients", 0, "128", [9]), fact("optimizer_state", 0, "768", [11]),
        fact("activations", 0, "16*B*S", [2], chunk=0), fact("activations_peak", 0, "32*B*S"), fact("total", 0, "32*B*S+1024"),
        fact("weights", 1, "128", [4]), fact("weight_gradients", 1, "128", [10]), fact("optimizer_state", 1, "768", [12]),
        fact("activations", 1, "24*B*S", [3, 5], chunk=0), fact("activations_peak", 1, "24*B*S"), fact("total", 1, "24*B*S+1024"),
    ]
    return {"buffers": buffers, "memory": memory, "rules": ["plan.task", "plan.buffer"], "symbols": copy.deepcopy(SYMBOLS), "tasks": tasks}


# ---- ConcretePlanIR: bound at B = 1, S = 2048 on two devices that stand for ranks {0, 1} and {2, 3}
# The reference normal form (REFBIND-1, ALIGN-3) is re-derived here exactly as
# verifiers/layers_bind.cpp does; the hand-bound plans start from it and add tokens, memory
# figures (CAP-5) and, on the slot target, a denser issue table.

BINDINGS = {"B": 1, "S": 2048}
TASK_KIND_ORDER = ["collective", "compute", "host", "recv", "send"]  # TaskKind declaration order
COMMAND_OF = {"collective": "collective", "compute": "launch", "host": "host", "recv": "recv", "send": "send"}
QUEUE_OF = {"collective": "collective", "compute": "compute", "host": "host", "recv": "transfer", "send": "transfer"}
QUEUE_ORDER = ["collective", "compute", "host", "transfer"]  # QueueKind declaration order
PINNED = {"constant", "input", "output", "persistent", "state"}
DEVICE_KIND, DEVICE_MEMORY = "gpu", "85899345920"


def eval_expr(text: str, env: dict) -> int:
    """Value of a canonical sum of integer terms such as 16*B*S+256 (the forms this file writes)."""
    total = 0
    for term in text.replace("-", "+-").split("+"):
        if not term:
            continue
        value = 1
        for f in term.split("*"):
            value *= env[f] if f in env else int(f)
        total += value
    return total


def cap(kind, dtype="", collective=None, reduction=None):
    return {"collective": collective, "dtype": dtype, "kind": kind, "reduction": reduction}


IMPLEMENTATIONS = [
    {"id": "cublas.gemm", "provides": [cap("matrix", "bf16")]},
    {"id": "fused.adam", "provides": [cap("vector", "fp32")]},
    {"id": "nccl.allreduce", "provides": [cap("collective", "bf16", "all_reduce", "sum")]},
    {"id": "nccl.p2p", "provides": [cap("transfer")]},
]


def implementation_for(task: dict) -> str:
    return {"matrix": "cublas.gemm", "vector": "fused.adam", "collective": "nccl.allreduce", "transfer": "nccl.p2p"}[task["requires"][0]["kind"]]


def reference_plan(pp: dict, target: str) -> dict:
    """BindReference{Queue,Slot}TargetPass's normal form of the PortablePlanIR payload `pp`."""
    tasks, pbufs = pp["tasks"], pp["buffers"]
    sets = sorted({tuple(t["ranks"]) for t in tasks})
    owners = [r for rs in sets for r in rs]
    assert tasks and all(sets) and len(owners) == len(set(owners)), "rank sets must be disjoint"
    dev_index = {rs: i for i, rs in enumerate(sets)}
    devices = [{"id": f"dev:r{rs[0]}", "kind": DEVICE_KIND, "memory_bytes": DEVICE_MEMORY, "ranks": list(rs)} for rs in sets]
    regions = [{"alignment": 16, "capacity": d["memory_bytes"], "device": i, "id": "r:" + d["id"], "offset": "0", "space": "hbm"}
               for i, d in enumerate(devices)]

    def dev_of(t):
        return dev_index[tuple(tasks[t]["ranks"])]

    by_source = {}
    for i, t in enumerate(tasks):
        if t["lineage"]["sources"]:
            by_source.setdefault(t["lineage"]["sources"][0], i)
    end = [0] * len(devices)
    buffers = []
    for pb in pbufs:
        src = pb["lineage"]["sources"][0] if pb["lineage"]["sources"] else None
        home = pb["producer"] if pb["producer"] is not None else pb["consumers"][0] if pb["consumers"] else by_source.get(src, -1)
        d = 0 if home < 0 else dev_of(home)
        a = max(16, pb["alignment"])
        o = (end[d] + a - 1) // a * a
        size = eval_expr(pb["size"], BINDINGS)
        buffers.append({"alignment": a, "id": "cb:" + pb["id"], "lineage": derived("bind.reference.buffer", pb["id"]), "offset": str(o),
                        "region": d, "size": str(size), "storage": pb["storage"]})
        end[d] = o + size
    commands = []
    for t in tasks:
        commands.append({"attrs": {}, "dependencies": list(t["dependencies"]), "device": dev_of(tasks.index(t)), "id": "c:" + t["id"],
                         "implementation": implementation_for(t), "kind": COMMAND_OF[t["kind"]],
                         "lineage": derived("bind.reference.task", t["id"]), "reads": list(t["inputs"]), "repeat": t["repeat"],
                         "signals": [], "waits": [], "work": copy.deepcopy(t["work"]), "writes": list(t["outputs"])})
    engines = []
    for i, d in enumerate(devices):
        engines += [{"capabilities": [cap("matrix", "bf16"), cap("vector", "fp32")], "device": i, "id": d["id"] + ":sm"},
                    {"capabilities": [cap("collective", "bf16", "all_reduce", "sum"), cap("transfer")], "device": i, "id": d["id"] + ":net"}]
    plan = {"bindings": [{"symbol": k, "value": str(v)} for k, v in sorted(BINDINGS.items())], "buffers": buffers, "commands": commands,
            "devices": devices, "engines": engines, "implementations": copy.deepcopy(IMPLEMENTATIONS), "memory": [], "queue": None,
            "regions": regions, "rules": ["bind.reference.buffer", "bind.reference.task"], "slot": None, "target": target, "tokens": [],
            "world_size": len(owners)}
    if target == "queue":
        qs = {}
        for i, t in enumerate(tasks):
            qs.setdefault((dev_of(i), QUEUE_ORDER.index(QUEUE_OF[t["kind"]])), []).append(i)
        plan["queue"] = {"queues": [{"commands": cmds, "device": d, "id": f"q:{devices[d]['id']}:{QUEUE_ORDER[k]}", "kind": QUEUE_ORDER[k]}
                                    for (d, k), cmds in sorted(qs.items())]}
    else:
        peer = [-1] * len(tasks)
        for i, t in enumerate(tasks):
            for u in t["dependencies"]:
                if t["kind"] == "recv" and tasks[u]["kind"] == "send":
                    peer[i] = dev_of(u) if peer[i] < 0 else peer[i]
                    peer[u] = dev_of(i) if peer[u] < 0 else peer[u]
        routes = []
        for i, t in enumerate(tasks):
            own = dev_of(i)
            other = own if peer[i] < 0 else peer[i]
            if t["kind"] == "send":
                routes.append({"command": i, "destination": other, "source": own})
            elif t["kind"] == "recv":
                routes.append({"command": i, "destination": own, "source": other})
        plan["slot"] = {"issue": [issue(i, 0) for i in range(len(tasks))], "routes": routes, "slots_per_cycle": 1}
    return plan


def issue(cycle, slot):
    return {"cycle": cycle, "slot": slot}


def predecessors(p: dict) -> list[list[int]]:
    """Happens-before edges into each command: dependencies, the queue predecessor, token signallers."""
    n = len(p["commands"])
    preds = [list(c["dependencies"]) for c in p["commands"]]
    if p["queue"]:
        for q in p["queue"]["queues"]:
            for a, b in zip(q["commands"], q["commands"][1:]):
                preds[b].append(a)
    signaller = {t: v for v in range(n) for t in p["commands"][v]["signals"]}
    for v in range(n):
        preds[v] += [signaller[t] for t in p["commands"][v]["waits"] if signaller.get(t, v) != v]
    return preds


def happens_before(p: dict):
    """(topological order, before(a, b)) of the plan's happens-before relation (reflexive)."""
    preds = predecessors(p)
    n = len(preds)
    succ = [[] for _ in range(n)]
    indeg = [len(x) for x in preds]
    for v in range(n):
        for u in preds[v]:
            succ[u].append(v)
    order = [v for v in range(n) if indeg[v] == 0]
    for v in order:
        for w in succ[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                order.append(w)
    assert len(order) == n, "cyclic"
    reach = [{v} for v in range(n)]  # reach[v]: commands that happen before v, and v
    for v in order:
        for u in preds[v]:
            reach[v] |= reach[u]
    return order, lambda a, b: a in reach[b]


def memory_figure(p: dict, device: int, witness) -> dict:
    """CAP-5's exact figures of one device (as verifiers/layers_bind.cpp computes them)."""
    order, before = happens_before(p)
    peak = live = 0
    for b, buf in enumerate(p["buffers"]):
        region = p["regions"][buf["region"]]
        if region["device"] != device:
            continue
        size = int(buf["size"])
        peak = max(peak, int(region["offset"]) + int(buf["offset"]) + size)
        acc = []
        for v in order:
            cmd = p["commands"][v]
            if b in cmd["writes"]:
                acc.append((v, True))
            elif b in cmd["reads"]:
                acc.append((v, False))
        head, tail, w = [], [], None
        for v, wr in acc:
            if w is None:
                head.append(v)
            if wr:
                tail, w = [], v
            else:
                tail.append(v)
        if w is not None:
            tail.append(w)
        frm = witness is not None and any(before(y, witness) for y in head)
        to = witness is not None and any(x != witness and before(witness, x) for x in tail)
        if buf["storage"] in PINNED or (frm and to):
            live += size
    return {"device": device, "lower_bound_bytes": str(live), "peak_bytes": str(peak), "witness": witness}


def hand_bound(target: str) -> dict:
    """A plan bound by hand: the reference layout plus tokens on the transfers, memory figures,
    a smaller region and, on the slot target, two issue slots per cycle."""
    p = reference_plan(portable(), target)
    p["rules"] = ["bind.buffer", "bind.command"]
    for x in p["buffers"]:
        x["lineage"]["rule"] = "bind.buffer"
    for x in p["commands"]:
        x["lineage"]["rule"] = "bind.command"
    for r in p["regions"]:
        r["capacity"], r["alignment"] = "1073741824", 256
    p["commands"][0]["attrs"] = {"tile": "128x128"}
    # the receives also wait for a token their send signals on completion
    p["tokens"] = [{"id": "tok.h"}, {"id": "tok.dh"}]
    cid = {c["id"]: i for i, c in enumerate(p["commands"])}
    for tok, (snd, rcv) in enumerate([("c:p.s0.send.h", "c:p.s1.recv.h"), ("c:p.s1.send.dh", "c:p.s0.recv.dh")]):
        p["commands"][cid[snd]]["signals"] = [tok]
        p["commands"][cid[rcv]]["waits"] = [tok]
    # a copy the binder introduces (WORK-4: derived from a portable buffer): mirror w2.new to dev:r0
    p["commands"].append({"attrs": {}, "dependencies": [cid["c:p.s1.opt.w2"]], "device": 1, "id": "c:copy.w2.new", "implementation": "cuda.memcpy",
                          "kind": "copy", "lineage": derived("bind.command", "buf.w2.new"), "reads": [14], "repeat": 1, "signals": [], "waits": [],
                          "work": work(read="128", write="128"), "writes": []})
    if target == "queue":
        next(q for q in p["queue"]["queues"] if q["id"] == "q:dev:r2:transfer")["commands"].append(len(p["commands"]) - 1)
    else:
        p["slot"]["issue"].append(issue(0, 0))
        p["slot"]["routes"].append({"command": len(p["commands"]) - 1, "destination": 0, "source": 1})
    if target == "slot":
        # level = longest chain of dependencies and token waits before the command; two slots per cycle
        preds = predecessors(p)
        level = []
        for v in range(len(p["commands"])):
            level.append(1 + max((level[u] for u in preds[v]), default=-1))
        used = {}
        for v, lv in enumerate(level):
            p["slot"]["issue"][v] = issue(lv, used.get(lv, 0))
            used[lv] = used.get(lv, 0) + 1
        p["slot"]["slots_per_cycle"] = max(used.values())
    p["memory"] = [memory_figure(p, 0, None), memory_figure(p, 1, cid["c:p.s1.fc2.fwd"])]
    return p


def concrete_queue() -> dict:
    return hand_bound("queue")


def concrete_slot() -> dict:
    return hand_bound("slot")


# ---- TimelineBundle, MachineIR, ObservationSet (parent: the hand-bound queue plan) -------

DURATION = {"launch": Fraction(1, 2), "send": Fraction(1, 4), "recv": Fraction(1, 4), "collective": Fraction(3, 8), "host": Fraction(1, 8),
            "copy": Fraction(1, 4)}


def rat(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def schedule(p: dict):
    """As-soon-as-possible intervals under happens-before, and a critical path."""
    preds = predecessors(p)
    order, _ = happens_before(p)
    start, end = {}, {}
    for v in order:
        start[v] = max((end[u] for u in preds[v]), default=Fraction(0))
        end[v] = start[v] + DURATION[p["commands"][v]["kind"]] * p["commands"][v]["repeat"]
    v = min(range(len(order)), key=lambda x: (-end[x], x))
    path = [v]
    while start[v] != 0:
        v = min(u for u in preds[v] if end[u] == start[v])
        path.append(v)
    return start, end, path[::-1], preds


def timeline() -> dict:
    start, end, path, _ = schedule(concrete_queue())
    return {"critical_path": path, "evidence": "evidence:a100-tables-v1",
            "intervals": [iv(v, rat(start[v]), rat(end[v])) for v in sorted(start)], "policy": "policy:asap"}


def iv(command, start, end):
    return {"command": command, "end": end, "start": start}


def machine() -> dict:
    p = concrete_queue()
    dialect = {"launch": "cuda", "send": "nccl", "recv": "nccl", "collective": "nccl", "host": "host", "copy": "cuda"}
    ins, last = [], {}

    def emit(iid, command, dia, op, target, deps, token=None):
        ins.append({"command": command, "dependencies": deps, "dialect": dia, "id": iid, "op": op, "target": target, "token": token})
        return len(ins) - 1

    for v, cmd in enumerate(p["commands"]):
        deps = [last[u] for u in cmd["dependencies"]]
        for t in cmd["waits"]:
            deps = [emit(f"i:{v}:wait:{t}", v, "cuda", "wait", "cudaStreamWaitEvent", deps, t)]
        prev = emit(f"i:{v}:call", v, dialect[cmd["kind"]], "call", cmd["implementation"], deps)
        for t in cmd["signals"]:
            prev = emit(f"i:{v}:signal:{t}", v, "cuda", "signal", "cudaEventRecord", [prev], t)
        last[v] = prev
    return {"dialects": ["cuda", "host", "nccl"], "entry_points": [i for i, x in enumerate(ins) if not x["dependencies"]], "instructions": ins}


def observations() -> dict:
    def obs(command, duration, source):
        return {"command": command, "duration": duration, "source": source}

    return {"observations": [
        obs("c:p.s0.fc1.fwd", "1/2", "nsys:run1"), obs("c:p.s0.fc1.fwd", "13/25", "nsys:run2"), obs("c:p.s0.send.h", "1/4", "nsys:run1"),
        obs("c:p.s1.fc2.fwd", "1", "nsys:run1"), obs("c:p.s1.allreduce.y", "3/8", "nsys:run1"), obs("c:p.s1.opt.w2", "0", "nsys:run1"),
    ]}


# ---- inference: a two-layer decoder step (b = 2 sequences, q = 1 query token, c = 128
# context tokens, H = 64, a = 8 heads, k = 2 KV heads, d = 8, F = 256, bf16) on pp = 2 x tp = 2.
# Every quantity is a constant, so the KV, WS and CAPM comparisons are decided.
# One K and one V cache of [b, c, k, d] per layer; per rank b*c*max(k/t,1)*d*e = 4096 bytes each.
# Workspace bound C_ws = bqHe + e*max(3bqH/t, b(a/t)qc, bqF/t) = 256 + 2*1024 = 2304 bytes.

INFERENCE_SHAPE = {"batch": "2", "context": "128", "dtype": "bf16", "ffn": "256", "head_dim": "8", "heads": "8", "hidden": "64",
                   "kv_heads": "2", "query": "1"}


def inf_model() -> dict:
    def value(i, role, shape):
        return {"dtype": "bf16", "id": i, "lineage": introduced("model.build"), "role": role, "shape": shape}

    def op(i, inputs, outputs, effects, matrix):
        return {"attrs": {}, "effects": [{"kind": k, "value": v} for k, v in effects], "id": i, "inputs": inputs, "kind": "attention" if i.startswith("attn") else "matmul",
                "lineage": introduced("model.build"), "outputs": outputs, "work": work(matrix=matrix)}

    kv = ["2", "128", "2", "8"]
    return {
        "name": "tiny-decoder",
        "rules": ["model.build"],
        "symbols": [],
        "values": [
            value("x0", "input", ["2", "1", "64"]),       # 0
            value("wqkv0", "weight", ["64", "96"]),       # 1
            value("qkv0", "activation", ["2", "1", "96"]),  # 2
            value("k0", "state", kv),                     # 3
            value("v0", "state", kv),                     # 4
            value("wo0", "weight", ["64", "64"]),         # 5
            value("x1", "activation", ["2", "1", "64"]),  # 6
            value("wqkv1", "weight", ["64", "96"]),       # 7
            value("qkv1", "activation", ["2", "1", "96"]),  # 8
            value("k1", "state", kv),                     # 9
            value("v1", "state", kv),                     # 10
            value("wo1", "weight", ["64", "64"]),         # 11
            value("y", "output", ["2", "1", "64"]),       # 12
        ],
        "operations": [
            op("kv0", [0, 1], [2], [("write", 3), ("write", 4)], "24576"),
            op("attn0", [2, 5], [6], [("read", 3), ("read", 4)], "81920"),
            op("kv1", [6, 7], [8], [("write", 9), ("write", 10)], "24576"),
            op("attn1", [8, 11], [12], [("read", 9), ("read", 10)], "81920"),
        ],
    }


def inf_distributed() -> dict:
    S0, S1 = [0, 1], [2, 3]

    def t(tid, kind, ranks, deps, source, w, effects=(), **kw):
        d = dtask(tid, kind, "forward", ranks, deps, derived("dist.infer", source), w, repeat=1, **kw)
        d["effects"] = [{"kind": k, "value": v} for k, v in effects]
        return d

    return {
        "inference": dict(INFERENCE_SHAPE),
        "mesh": {"axes": [{"name": "pp", "size": 2}, {"name": "tp", "size": 2}]},
        "microbatches": 1,
        "rules": ["dist.infer"],
        "schedule": [],
        "shards": [
            {"axis": "tp", "dim": 1, "pieces": 2, "stage": 0, "value": "wqkv0"},
            {"axis": "tp", "dim": 0, "pieces": 2, "stage": 0, "value": "wo0"},
            {"axis": "tp", "dim": 1, "pieces": 2, "stage": 1, "value": "wqkv1"},
            {"axis": "tp", "dim": 0, "pieces": 2, "stage": 1, "value": "wo1"},
        ],
        "symbols": [],
        "tasks": [
            t("s0.kv0", "compute", S0, [], "kv0", work(matrix="12288"), [("write", "k0"), ("write", "v0")]),       # 0
            t("s0.attn0", "compute", S0, [0], "attn0", work(matrix="40960"), [("read", "k0"), ("read", "v0")]),  # 1
            t("s0.allreduce.x1", "collective", S0, [1], "x1", work(message="256"), value="x1",
              collective={"axis": "tp", "group": S0, "kind": "all_reduce", "message_bytes": "256", "reduction": "sum"}),  # 2
            t("s0.send.x1", "send", S0, [2], "x1", work(message="256"), peer=4, value="x1"),                       # 3
            t("s1.recv.x1", "recv", S1, [3], "x1", work(message="256"), peer=3, value="x1"),                       # 4
            t("s1.kv1", "compute", S1, [4], "kv1", work(matrix="12288"), [("write", "k1"), ("write", "v1")]),      # 5
            t("s1.attn1", "compute", S1, [5], "attn1", work(matrix="40960"), [("read", "k1"), ("read", "v1")]),  # 6
        ],
    }


INF_TASK_IO = {0: ([0, 1], [2]), 1: ([2, 3], [4]), 2: ([4], [5]), 3: ([5], []), 4: ([], [9]), 5: ([9, 10], [11]), 6: ([11, 12], [13])}


def inf_portable() -> dict:
    d = inf_distributed()
    tasks = []
    for i, t in enumerate(d["tasks"]):
        ins, outs = INF_TASK_IO[i]
        tasks.append({"attrs": {}, "dependencies": list(t["dependencies"]), "effects": copy.deepcopy(t["effects"]),
                      "group": "stage%d" % (0 if t["ranks"][0] < 2 else 1), "id": "p." + t["id"], "inputs": ins, "kind": t["kind"],
                      "lineage": derived("plan.task", t["id"]), "outputs": outs, "phase": t["phase"], "ranks": list(t["ranks"]),
                      "repeat": t["repeat"], "replication": t["replication"], "requires": copy.deepcopy(CAPS[t["kind"]]),
                      "work": copy.deepcopy(t["work"])})

    def buf(bid, storage, role, size, producer, source):
        return {"alignment": 256, "consumers": [], "id": bid, "lineage": derived("plan.buffer", source), "producer": producer,
                "role": role, "size": size, "storage": storage}

    buffers = [
        buf("b.x0", "input", "input", "256", None, "s0.kv0"),                   # 0
        buf("b.wqkv0", "constant", "weight", "6144", None, "s0.kv0"),           # 1
        buf("b.qkv0", "transient", "activation", "192", 0, "s0.kv0"),           # 2
        buf("b.wo0", "constant", "weight", "4096", None, "s0.attn0"),           # 3
        buf("b.x1", "transient", "activation", "256", 1, "s0.attn0"),           # 4
        buf("b.x1.sum", "transient", "activation", "256", 2, "s0.allreduce.x1"),  # 5
        buf("b.k0", "state", "kv_cache", "4096", None, "s0.kv0"),               # 6
        buf("b.v0", "state", "kv_cache", "4096", None, "s0.kv0"),               # 7
        buf("b.ws0", "workspace", "workspace", "2304", None, "s0.attn0"),       # 8
        buf("b.x1.recv", "transient", "message", "256", 4, "s1.recv.x1"),       # 9
        buf("b.wqkv1", "constant", "weight", "6144", None, "s1.kv1"),           # 10
        buf("b.qkv1", "transient", "activation", "192", 5, "s1.kv1"),           # 11
        buf("b.wo1", "constant", "weight", "4096", None, "s1.attn1"),           # 12
        buf("b.y", "output", "output", "256", 6, "s1.attn1"),                   # 13
        buf("b.k1", "state", "kv_cache", "4096", None, "s1.kv1"),               # 14
        buf("b.v1", "state", "kv_cache", "4096", None, "s1.kv1"),               # 15
        buf("b.ws1", "workspace", "workspace", "2304", None, "s1.attn1"),       # 16
    ]
    for t, (ins, _) in sorted(INF_TASK_IO.items()):
        for b in ins:
            buffers[b]["consumers"].append(t)

    def fact(category, stage, bytes_, bufs=()):
        return {"buffers": list(bufs), "bytes": bytes_, "category": category, "chunk": -1, "stage": stage}

    memory = []
    for st, (w, kv, ws) in enumerate([([1, 3], [6, 7], [8]), ([10, 12], [14, 15], [16])]):
        memory += [fact("weights", st, "10240", w), fact("kv_cache", st, "8192", kv), fact("workspace", st, "2304", ws),
                   fact("total", st, "20736"), fact("capacity", st, "85899345920")]
    return {"buffers": buffers, "memory": memory, "rules": ["plan.task", "plan.buffer"], "symbols": [], "tasks": tasks}


# ---------------------------------------------------------------------------
# the chain

class Chain:
    def __init__(self):
        self.model = snap("ModelIR", model(), [])
        self.dist = snap("DistributedTaskIR", distributed(), [self.model["digest"]])
        self.dist_interleaved = snap("DistributedTaskIR", interleaved(distributed()), [self.model["digest"]])
        self.portable = snap("PortablePlanIR", portable(), [self.dist["digest"]])
        self.queue = snap("ConcretePlanIR", concrete_queue(), [self.portable["digest"]])
        self.slot = snap("ConcretePlanIR", concrete_slot(), [self.portable["digest"]])
        self.ref_queue = snap("ConcretePlanIR", reference_plan(portable(), "queue"), [self.portable["digest"]])
        self.ref_slot = snap("ConcretePlanIR", reference_plan(portable(), "slot"), [self.portable["digest"]])
        self.timeline = snap("TimelineBundle", timeline(), [self.queue["digest"]])
        self.machine = snap("MachineIR", machine(), [self.queue["digest"]])
        self.observations = snap("ObservationSet", observations(), [self.queue["digest"]])
        self.inf_model = snap("ModelIR", inf_model(), [])
        self.inf_dist = snap("DistributedTaskIR", inf_distributed(), [self.inf_model["digest"]])
        self.inf_portable = snap("PortablePlanIR", inf_portable(), [self.inf_dist["digest"]])
        # layer -> its parent in the chain
        self.parent_of = {"dist": "model", "dist_interleaved": "model", "portable": "dist", "queue": "portable", "slot": "portable",
                          "ref_queue": "portable", "ref_slot": "portable",
                          "timeline": "queue", "machine": "queue", "observations": "queue",
                          "inf_dist": "inf_model", "inf_portable": "inf_dist"}

    def get(self, layer: str) -> dict:
        return copy.deepcopy(getattr(self, layer))


VALID = [("model", "model"), ("distributed", "dist"), ("distributed-interleaved-stages", "dist_interleaved"), ("portable", "portable"), ("concrete-queue", "queue"),
         ("concrete-slot", "slot"), ("concrete-reference-queue", "ref_queue"), ("concrete-reference-slot", "ref_slot"),
         ("timeline", "timeline"), ("machine", "machine"), ("observations", "observations"),
         ("inference-model", "inf_model"), ("inference-distributed", "inf_dist"), ("inference-portable", "inf_portable")]


# ---------------------------------------------------------------------------
# the corpus

class Corpus:
    def __init__(self, chain: Chain):
        self.c = chain
        self.files: dict[str, bytes] = {}
        self.index: list[tuple[str, str]] = []  # (entry file, description)

    def put(self, name: str, data: bytes) -> None:
        assert name not in self.files, name
        self.files[name] = data

    def entry(self, name: str, what: str) -> None:
        self.index.append((name, what))

    # A snapshot case: mutate a copy of `layer`'s valid snapshot; `parent` True writes the
    # chain parent beside it (or a snapshot dict/layer name to use instead).
    def snapshot(self, oid: str, slug: str, layer: str, what: str, mutate=None, parent=False, envelope=None, keep_digest=False):
        s = self.c.get(layer)
        if mutate:
            mutate(s["payload"])
        if envelope:
            envelope(s)
        if not keep_digest:
            redigest(s)
        name = f"{oid}-{slug}.json"
        self.put(name, encode(s))
        if parent:
            p = parent if isinstance(parent, dict) else self.c.get(parent if isinstance(parent, str) else self.c.parent_of[layer])
            self.put(f"{oid}-{slug}.parent.json", encode(p))
        self.entry(name, what)

    # A byte-level case: `text` is the canonical bytes of `layer`; edit replaces one unique substring.
    def raw(self, oid: str, slug: str, what: str, data: bytes, parent_layer: str | None = None):
        name = f"{oid}-{slug}.json"
        self.put(name, data)
        if parent_layer:
            self.put(f"{oid}-{slug}.parent.json", encode(self.c.get(parent_layer)))
        self.entry(name, what)

    def args(self, oid: str, slug: str, what: str, args: list[str], exit_code: int, inputs: dict[str, bytes] | None = None,
             also: list[str] | None = None, why: str | None = None, generated: list[str] | None = None):
        name = f"{oid}-{slug}.args"
        side = {"args": args, "exit": exit_code}
        if generated:  # inputs too large to commit: the runner writes them (generated_input) into {generated}
            side["generated"] = generated
        if also:  # codes that every input breaking `oid` necessarily breaks too (documented exception)
            side.update(also=also, why=why)
        self.put(name, (json.dumps(side, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode())
        for fname, data in (inputs or {}).items():
            self.put(fname, data)
        self.entry(name, what)


def edit(data: bytes, old: str, new: str, expect: int = 1) -> bytes:
    """Replaces the first occurrence of `old`, which must occur exactly `expect` times."""
    o, n = old.encode("utf-8"), new.encode("utf-8")
    found = data.count(o)
    assert found == expect, f"{old!r} occurs {found} times, expected {expect}"
    return data.replace(o, n, 1)


def drop_task(p: dict, i: int) -> None:
    """Removes DistributedTaskIR task i: its dependents wait for its dependencies instead, and
    the later tasks' indices (dependencies, peers) move down by one."""
    gone = p["tasks"].pop(i)
    for t in p["tasks"]:
        deps = [d for d in t["dependencies"] if d != i] + (gone["dependencies"] if i in t["dependencies"] else [])
        t["dependencies"] = sorted({d - (d > i) for d in deps})
        if t["peer"] is not None:
            t["peer"] -= t["peer"] > i


def by_id(items: list[dict], ident: str) -> dict:
    hits = [x for x in items if x["id"] == ident]
    assert len(hits) == 1, ident
    return hits[0]


def build(chain: Chain) -> Corpus:
    k = Corpus(chain)
    c = chain

    # ---- valid snapshots ----------------------------------------------------------------
    for slug, layer in VALID:
        name = f"valid-{slug}.json"
        k.put(name, encode(c.get(layer)))
        if layer in c.parent_of:
            k.put(f"valid-{slug}.parent.json", encode(c.get(c.parent_of[layer])))
        k.entry(name, f"accepted {c.get(layer)['schema']}" + (" (with its parent)" if layer in c.parent_of else ""))

    M, D, P, Q, SL = "model", "dist", "portable", "queue", "slot"
    T, MA, O = "timeline", "machine", "observations"

    # ---- DIGEST -------------------------------------------------------------------------
    k.snapshot("DIGEST-1", "payload-edited", M, "model name changed after the digest was computed",
               mutate=lambda p: p.update(name="tiny-mlp-2"), keep_digest=True)
    k.snapshot("DIGEST-1", "stale-digest-of-parent", D, "the digest of the DistributedTaskIR is its parent's digest",
               envelope=lambda s: s.update(digest=c.model["digest"]), keep_digest=True)
    k.snapshot("DIGEST-2", "uppercase-digest", M, "digest in upper-case hex",
               envelope=lambda s: s.update(digest=s["digest"].upper()), keep_digest=True)
    k.snapshot("DIGEST-2", "short-parent-digest", D, "parent digest of 63 characters",
               envelope=lambda s: s.update(parents=[s["parents"][0][:63]]))
    k.snapshot("DIGEST-3", "parent-not-listed", D, "the child lists a well-formed digest that is not its parent's", parent=True,
               envelope=lambda s: s.update(parents=["0" * 64]))
    k.snapshot("DIGEST-4", "model-with-parent", M, "a ModelIR (a root) listing a parent digest",
               envelope=lambda s: s.update(parents=[c.dist["digest"]]))
    k.snapshot("DIGEST-4", "plan-without-parent", P, "a PortablePlanIR listing no parent digest",
               envelope=lambda s: s.update(parents=[]))
    k.snapshot("DIGEST-5", "portable-against-model", P, "a PortablePlanIR checked against a ModelIR parent", parent=M)
    k.snapshot("DIGEST-5", "timeline-against-portable", T, "a TimelineBundle checked against a PortablePlanIR parent", parent=P)

    # ---- ID -----------------------------------------------------------------------------
    def dup_op_id(p):
        p["operations"][1]["id"] = "fc1"
    k.snapshot("ID-1", "duplicate-operation-id", M, "two operations with the id fc1", mutate=dup_op_id)
    k.snapshot("ID-1", "task-and-buffer-share-id", P, "a task and a buffer with the same id (ids are unique across arrays)",
               mutate=lambda p: p["buffers"][9].update(id="p.s0.fc1.bwd_w"))
    k.snapshot("ID-2", "space-in-id", M, "value id with a space", mutate=lambda p: p["values"][4].update(id="y out"))
    k.snapshot("ID-2", "empty-command-id", Q, "empty command id", mutate=lambda p: p["commands"][12].update(id=""))

    # ---- REF ----------------------------------------------------------------------------
    k.snapshot("REF-1", "operation-input-out-of-range", M, "operation input 99 of 5 values",
               mutate=lambda p: p["operations"][1].update(inputs=[2, 99]))
    k.snapshot("REF-1", "negative-dependency", D, "task dependency -1", mutate=lambda p: p["tasks"][3].update(dependencies=[-1]))
    k.snapshot("REF-1", "queue-command-out-of-range", Q, "queue lists command 14 of 14",
               mutate=lambda p: p["queue"]["queues"][4].update(commands=[2, 7, 13, 14]))
    k.snapshot("REF-2", "command-reads-buffer-twice", Q, "command reads [3, 3]",
               mutate=lambda p: p["commands"][3].update(reads=[3, 3, 4]))
    k.snapshot("REF-2", "operation-outputs-repeat", M, "operation outputs [2, 2]",
               mutate=lambda p: p["operations"][0].update(outputs=[2, 2]))

    # ---- DAG ----------------------------------------------------------------------------
    k.snapshot("DAG-1", "self-dependency", D, "task 11 depends on itself", mutate=lambda p: p["tasks"][11].update(dependencies=[10, 11]))
    k.snapshot("DAG-1", "repeated-dependency", Q, "command depends on command 3 twice",
               mutate=lambda p: p["commands"][4].update(dependencies=[3, 3]))
    k.snapshot("DAG-2", "two-task-cycle", D, "fc2's backward tasks 5 and 6 (both on stage 1) depend on each other",
               mutate=lambda p: (p["tasks"][5].update(dependencies=[4, 6]), p["tasks"][6].update(dependencies=[4, 5])))
    mi = {x["id"]: i for i, x in enumerate(machine()["instructions"])}
    k.snapshot("DAG-2", "instruction-cycle", MA, "send.h's call depends on its own signal instruction, which follows it", parent=True,
               mutate=lambda p: p["instructions"][mi["i:1:call"]].update(dependencies=[mi["i:0:call"], mi["i:1:signal:0"]]))
    # DAG-3: the gate checks a witness an untrusted pass hands it (corpus_gate driver).
    for slug, order, what in [("witness-puts-dependency-after", [1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
                               "topological-order witness places task 1 before its dependency 0"),
                              ("witness-not-a-permutation", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 11],
                               "topological-order witness lists task 11 twice and omits 12")]:
        k.snapshot("DAG-3", slug, D, what + " (Gate::commit only)", parent=True)
        k.put(f"DAG-3-{slug}.witness.json", (canon({"topological_order": order}) + "\n").encode())

    # ---- LINEAGE ------------------------------------------------------------------------
    k.snapshot("LINEAGE-1", "undeclared-rule", M, "a value's lineage names an undeclared rule",
               mutate=lambda p: p["values"][2]["lineage"].update(rule="model.magic"))
    k.snapshot("LINEAGE-1", "introduced-in-derived-snapshot", P, "a buffer of a derived snapshot is introduced without sources",
               mutate=lambda p: p["buffers"][11].update(lineage=introduced("plan.buffer")))
    k.snapshot("LINEAGE-1", "rule-declared-twice", Q, "rule bind.buffer declared twice",
               mutate=lambda p: p.update(rules=["bind.buffer", "bind.command", "bind.buffer"]))
    k.snapshot("LINEAGE-2", "source-not-in-parent", D, "a send task derives from value h2, which the ModelIR does not have", parent=True,
               mutate=lambda p: p["tasks"][1]["lineage"].update(sources=["h2"]))
    k.snapshot("LINEAGE-2", "buffer-source-not-in-parent", Q, "a scratch buffer derives from p.s1.scratch, which the PortablePlanIR does not have",
               parent=True, mutate=lambda p: p["buffers"].append({"alignment": 256, "id": "cb:scratch", "lineage": derived("bind.buffer", "p.s1.scratch"),
                                                                  "offset": "0", "region": 1, "size": "256", "storage": "transient"}))

    # ---- ATTR ---------------------------------------------------------------------------
    k.snapshot("ATTR-1", "duration-in-model", M, "ModelIR operation attribute duration (owned by TimelineBundle)",
               mutate=lambda p: p["operations"][0]["attrs"].update(duration="3"))
    k.snapshot("ATTR-1", "device-in-portable", P, "PortablePlanIR task attribute Device (owned by ConcretePlanIR; case-insensitive)",
               mutate=lambda p: p["tasks"][0]["attrs"].update(Device="gpu0"))
    k.snapshot("ATTR-1", "rank-in-model", M, "ModelIR operation attribute tp_rank (owned by DistributedTaskIR)",
               mutate=lambda p: p["operations"][1]["attrs"].update(tp_rank="0"))
    k.snapshot("ATTR-1", "start-time-in-concrete", Q, "ConcretePlanIR command attribute start_time (owned by TimelineBundle)",
               mutate=lambda p: p["commands"][0]["attrs"].update(start_time="0"))

    # ---- SYM ----------------------------------------------------------------------------
    k.snapshot("SYM-1", "non-integer-symbol", M, "symbol B declared with integer = false",
               mutate=lambda p: p["symbols"][0].update(integer=False))
    k.snapshot("SYM-1", "symbol-declared-twice", D, "symbol S declared twice",
               mutate=lambda p: p["symbols"].append(symbol("S", divisible_by="2", mn="2", mx="4096")))
    k.snapshot("SYM-1", "divisible-by-zero", P, "symbol S with divisible_by 0",
               mutate=lambda p: p["symbols"][1].update(divisible_by="0"))
    k.snapshot("SYM-1", "min-above-max", M, "symbol S with min 8192 > max 4096",
               mutate=lambda p: p["symbols"][1].update(min="8192"))
    k.snapshot("SYM-2", "undeclared-symbol-in-shape", M, "value shape [B, T, 8] with T undeclared",
               mutate=lambda p: p["values"][4].update(shape=["B", "T", "8"]))
    k.snapshot("SYM-2", "undeclared-symbol-in-node", P, "buffer size ceil(L,8)*16 with L undeclared (inside a node)",
               mutate=lambda p: p["buffers"][14].update(size="16*ceil(L,8)"))

    # ---- FLOW ---------------------------------------------------------------------------
    k.snapshot("FLOW-1", "operation-defines-weight", M, "fc2 also outputs the weight w1",
               mutate=lambda p: p["operations"][1].update(outputs=[4, 1]))
    k.snapshot("FLOW-1", "value-defined-twice", M, "fc2 also outputs h, which fc1 defines",
               mutate=lambda p: p["operations"][1].update(outputs=[4, 2]))
    k.snapshot("FLOW-2", "use-before-definition", M, "fc2 is listed before fc1, whose output it reads",
               mutate=lambda p: p.update(operations=[p["operations"][1], p["operations"][0]]))
    k.snapshot("FLOW-3", "activation-never-defined", M, "an activation value that no operation outputs",
               mutate=lambda p: p["values"].append({"dtype": "bf16", "id": "h_unused", "lineage": introduced("model.build"),
                                                    "role": "activation", "shape": ["B", "S", "16"]}))

    # ---- MESH, COLL, P2P, SCHED, WORK-3 (DistributedTaskIR snapshot obligations) ----------
    k.snapshot("MESH-1", "unknown-axis-name", D, "mesh axis ep (of size 1)", mutate=lambda p: p["mesh"]["axes"][1].update(name="ep"))
    k.snapshot("MESH-1", "axis-size-zero", D, "mesh axis dp of size 0 (and no other finding: the MESH checks stop)",
               mutate=lambda p: p["mesh"]["axes"][1].update(size=0))
    k.snapshot("MESH-2", "ranks-not-increasing", D, "task ranks [1, 0]", mutate=lambda p: p["tasks"][11].update(ranks=[1, 0]))
    k.snapshot("MESH-2", "rank-outside-mesh", D, "task rank 4 on a mesh of 4 ranks", mutate=lambda p: p["tasks"][12].update(ranks=[2, 4]))
    k.snapshot("MESH-3", "compute-task-with-peer", D, "a compute task names a peer", mutate=lambda p: p["tasks"][0].update(peer=1))
    k.snapshot("MESH-3", "collective-task-without-collective", D, "a collective task without its collective",
               mutate=lambda p: p["tasks"][4].update(collective=None))
    k.snapshot("COLL-1", "group-differs-from-ranks", D, "collective group [2] of a task on ranks [2, 3]",
               mutate=lambda p: p["tasks"][4]["collective"].update(group=[2]))
    k.snapshot("COLL-1", "incomplete-tp-group", D, "tp collective on rank 2 alone: half of its tp group",
               mutate=lambda p: (p["tasks"][4].update(ranks=[2]), p["tasks"][4]["collective"].update(group=[2])))
    k.snapshot("COLL-2", "collective-over-pp", D, "all-reduce over the pp axis (ranks 0 and 2)",
               mutate=lambda p: (p["tasks"][4].update(ranks=[0, 2]), p["tasks"][4]["collective"].update(axis="pp", group=[0, 2])))
    k.snapshot("COLL-2", "axisless-collective-across-stages", D, "collective without axis on ranks 1 and 2 (stages 0 and 1)",
               mutate=lambda p: (p["tasks"][4].update(ranks=[1, 2]), p["tasks"][4]["collective"].update(axis="", group=[1, 2])))
    k.snapshot("P2P-1", "message-bytes-differ", D, "send of 16*B*S bytes, receive of 8*B*S bytes",
               mutate=lambda p: p["tasks"][2]["work"].update(message_bytes="8*B*S"))
    k.snapshot("P2P-1", "peer-not-reciprocal", D, "send.h names recv.dh (whose peer is send.dh) as its peer",
               mutate=lambda p: p["tasks"][1].update(peer=8))
    k.snapshot("P2P-3", "stage-1-reads-stage-0-directly", D, "fc2's forward (stage 1) depends on fc1's forward (stage 0), bypassing the transfer",
               mutate=lambda p: p["tasks"][3].update(dependencies=[0]))
    k.snapshot("P2P-3", "interleaved-stage-1-reads-stage-0-directly", "dist_interleaved",
               "pp innermost: fc2's forward (stage 1, ranks 1 and 3) depends on fc1's forward (stage 0, ranks 0 and 2); the rank ranges overlap, the sets do not",
               mutate=lambda p: p["tasks"][3].update(dependencies=[0]))
    k.snapshot("COLL-2", "axisless-collective-across-interleaved-stages", "dist_interleaved",
               "pp innermost: collective without axis on ranks 1 and 2, which are stages 1 and 0",
               mutate=lambda p: (p["tasks"][4].update(ranks=[1, 2]), p["tasks"][4]["collective"].update(axis="", group=[1, 2])))
    k.snapshot("COLL-4", "update-without-dp-reduction", D, "mesh with dp = 2: the optimizer tasks do not follow a dp all-reduce of their gradients",
               mutate=lambda p: p["mesh"]["axes"][1].update(size=2))
    k.snapshot("COLL-5", "tied-weight-updated-apart", D, "w1 is updated on stage 0 and (also) on stage 1, and neither update receives the other's gradient",
               mutate=lambda p: p["tasks"][12]["lineage"].update(sources=["w1", "w2"]))
    k.snapshot("P2P-2", "receive-without-send-dependency", D, "recv does not depend on its send",
               mutate=lambda p: p["tasks"][2].update(dependencies=[]))
    k.snapshot("SCHED-1", "backward-before-forward", D, "stage 1 runs backward of microbatch 0 before its forward",
               mutate=lambda p: p["schedule"][1].update(steps=[bwd(0), fwd(0), fwd(1), bwd(1)]))
    k.snapshot("SCHED-1", "duplicate-stage", D, "two schedules for stage 0",
               mutate=lambda p: p["schedule"][1].update(stage=0))
    k.snapshot("SCHED-1", "missing-step", D, "stage 0 never runs backward of microbatch 1",
               mutate=lambda p: p["schedule"][0].update(steps=[fwd(0), fwd(1), bwd(0)]))
    # Session 35's audit: chunks x microbatches = 2^63 wrapped around in 64 bits and passed the bound, and microbatches
    # went unchecked without schedules (WORK-2 then compares every sum with 0).
    k.snapshot("SCHED-1", "chunk-count-overflows", D, "stage 0 claims 2^62 chunks and runs no step: 2^62 x 2 microbatches is over 2^26",
               mutate=lambda p: p["schedule"][0].update(chunks=2**62, steps=[]))
    k.snapshot("SCHED-1", "no-microbatches", D, "microbatches 0, and no schedule that would have been checked",
               mutate=lambda p: p.update(microbatches=0, schedule=[]))
    # WORK-2, accepted before session 36: a forward-only plan over dp = 4 without schedules (so
    # SCHED-1 does not bound m) whose m x dp = (2^62 + 2) x 4 wrapped around in 64 bits to 8: its
    # tasks carry the work of m = 2.
    def work2_overflow(p):
        p.update(mesh={"axes": [{"name": "dp", "size": 4}]}, microbatches=2**62 + 2, schedule=[], shards=[])
        fc1, fc2 = copy.deepcopy(p["tasks"][0]), copy.deepcopy(p["tasks"][0])
        fc1.update(id="fc1.fwd", ranks=[0, 1, 2, 3])
        fc1["work"].update(matrix_ops="256*B*S", read_bytes="8*B*S+128", write_bytes="16*B*S")
        fc2.update(id="fc2.fwd", ranks=[0, 1, 2, 3], dependencies=[0])
        fc2["lineage"]["sources"] = ["fc2"]
        fc2["work"].update(matrix_ops="256*B*S", read_bytes="16*B*S+128", write_bytes="8*B*S")
        p["tasks"] = [fc1, fc2]
    k.snapshot("WORK-2", "microbatches-times-dp-past-2-63", D, "m = 2^62 + 2 over dp = 4 (m x dp wraps to 8 in 64 bits); the tasks carry the work of m = 2",
               parent=True, mutate=work2_overflow)
    k.snapshot("WORK-3", "repeat-zero", D, "task with repeat 0", mutate=lambda p: p["tasks"][11].update(repeat=0))
    k.snapshot("WORK-3", "replication-not-dividing-ranks", P, "portable task with replication 3 over 2 ranks",
               mutate=lambda p: p["tasks"][12].update(replication=3))

    # ---- WORK-2, VOL-1, SHARD (ModelIR -> DistributedTaskIR) -----------------------------
    k.snapshot("WORK-2", "forward-work-lost", D, "fc1's forward task does half the matrix work", parent=True,
               mutate=lambda p: p["tasks"][0]["work"].update(matrix_ops="64*B*S"))
    k.snapshot("WORK-2", "backward-phase-missing", D, "fc2's backward-weight task is labelled optimizer: backward work is lost", parent=True,
               mutate=lambda p: p["tasks"][6].update(phase="optimizer"))
    # COLL-3: the parent declares fc1 column-parallel and fc2 row-parallel (Megatron's MLP);
    # the plan's all-reduce of y derives from the value, not from fc2, and x's backward
    # all-reduce (f before fc1) is missing.
    tp_model = model()
    tp_model["operations"][0]["attrs"]["tp"] = "column"
    tp_model["operations"][1]["attrs"]["tp"] = "row"
    tp_parent = snap("ModelIR", tp_model, [])
    k.snapshot("COLL-3", "row-parallel-without-its-reduction", D, "fc2 (tp = row) has no all-reduce of its own, fc1 (tp = column) no backward all-reduce of x",
               parent=tp_parent, envelope=lambda s: s.update(parents=[tp_parent["digest"]]))
    # COLL-3, accepted before session 36: the same plan repaired (y's all-reduce derives from fc2,
    # x's backward all-reduce from fc1), plus a second all-reduce of y whose lineage adds the value
    # h to fc2: with two sources it was left out of the multisets, and y was reduced twice.
    def coll3_second_source(p):
        t = p["tasks"]
        t[4]["lineage"]["sources"] = ["fc2"]
        dx = copy.deepcopy(t[4])
        dx.update(id="s0.allreduce.dx", value="x", phase="backward_activation", ranks=[0, 1], dependencies=[9])
        dx["lineage"]["sources"], dx["collective"]["group"] = ["fc1"], [0, 1]
        again = copy.deepcopy(t[4])
        again.update(id="s1.allreduce.y.again", dependencies=[4])
        again["lineage"]["sources"] = ["fc2", "h"]
        t += [dx, again]
    k.snapshot("COLL-3", "second-all-reduce-with-two-sources", D, "a second tp all-reduce of fc2's output y, derived from fc2 and the value h",
               mutate=coll3_second_source, parent=tp_parent, envelope=lambda s: s.update(parents=[tp_parent["digest"]]))
    # COLL-3, accepted before session 37: the repaired plan plus a second all-reduce of y that
    # derives from the value y alone (no operation): only COLL-6's gradient sums derive from
    # values, and y is not a weight held whole.
    def coll3_value_source(p):
        coll3_second_source(p)
        p["tasks"][-1]["lineage"]["sources"] = ["y"]
    k.snapshot("COLL-3", "extra-all-reduce-derived-from-a-value", D, "a second tp all-reduce of y, derived from the value y (not a gradient sum of weights held whole)",
               mutate=coll3_value_source, parent=tp_parent, envelope=lambda s: s.update(parents=[tp_parent["digest"]]))
    # COLL-3: the parent declares fc1's layout (replicated: no collectives), so every tp
    # collective must be a conjugate operator of a declared operation; the all-reduce of y
    # derives from fc2, which declares none.
    rep_model = model()
    rep_model["operations"][0]["attrs"]["tp"] = "replicated"
    rep_parent = snap("ModelIR", rep_model, [])
    k.snapshot("COLL-3", "collective-of-undeclared-operation", D,
               "fc1 declares tp = replicated; the tp all-reduce of y derives from fc2, which declares no layout",
               mutate=lambda p: p["tasks"][4].update(lineage=derived("dist.collective", "fc2")),
               parent=rep_parent, envelope=lambda s: s.update(parents=[rep_parent["digest"]]))
    # COLL-6: sequence parallelism (fc2's output is reduce-scattered, and all-gathered for its
    # backward), w2 held whole on every tp rank, and its update without a tp sum of its gradient.
    sp_model = model()
    sp_model["operations"][1]["attrs"]["tp"] = "row"
    sp_parent = snap("ModelIR", sp_model, [])

    def sequence_parallel_w2_whole(p):
        p["tasks"][4]["collective"]["kind"] = "reduce_scatter"
        p["tasks"][4]["lineage"] = derived("dist.collective", "fc2")
        p["tasks"].append(dtask("s1.allgather.y", "collective", "backward_activation", [2, 3], [4], derived("dist.collective", "fc2"),
                                work(message="8*B*S"), value="y",
                                collective={"axis": "tp", "group": [2, 3], "kind": "all_gather", "message_bytes": "16*B*S", "reduction": "none"}))
        p["shards"][1] = {"axis": "", "dim": -1, "pieces": 1, "stage": 1, "value": "w2"}
    k.snapshot("COLL-6", "sequence-parallel-update-without-tp-sum", D,
               "sequence parallelism on tp = 2; w2 is held whole and its update does not wait for a tp all-reduce of its gradient",
               mutate=sequence_parallel_w2_whole, parent=sp_parent, envelope=lambda s: s.update(parents=[sp_parent["digest"]]))
    # COLL-6 without sequence parallelism: fc2 is a KV projection (layout kv) with fewer KV
    # heads than t, so every tp rank holds w2 whole but computes only its own head's columns
    # of the gradient, and the update does not wait for their tp sum.
    kv_model = model()
    kv_model["operations"][1]["attrs"]["tp"] = "kv"
    kv_parent = snap("ModelIR", kv_model, [])
    def kv_whole(p):  # and without the all-reduce of y, derived from the value y: a layout-kv fc2 needs none (COLL-3)
        p["shards"][1] = {"axis": "", "dim": -1, "pieces": 1, "stage": 1, "value": "w2"}
        drop_task(p, 4)
    k.snapshot("COLL-6", "replicated-kv-heads-update-without-tp-sum", D,
               "fc2 has layout kv and w2 is held whole on tp = 2; its update does not wait for a tp all-reduce of its gradient",
               mutate=kv_whole,
               parent=kv_parent, envelope=lambda s: s.update(parents=[kv_parent["digest"]]))
    # COLL-3, accepted before session 38: the same plan with w2's tp gradient sum (COLL-6 holds)
    # and a second one after it, both awaited by the update: the gradient is summed twice (t x).
    def kv_summed_twice(p):
        kv_whole(p)
        upd = next(i for i, t in enumerate(p["tasks"]) if t["id"] == "s1.opt.w2")
        coll = {"axis": "tp", "group": [2, 3], "kind": "all_reduce", "message_bytes": "8192", "reduction": "sum"}
        p["tasks"].append(dtask("s1.allreduce.dw2", "collective", "none", [2, 3], list(p["tasks"][upd]["dependencies"]), derived("dist.collective", "w2"),
                                work(message="8192", vector="2048"), repeat=1, collective=coll))
        again = copy.deepcopy(p["tasks"][-1])
        again.update(id="s1.allreduce.dw2.again", dependencies=[len(p["tasks"]) - 1])
        p["tasks"].append(again)
        p["tasks"][upd]["dependencies"] += [len(p["tasks"]) - 2, len(p["tasks"]) - 1]
    k.snapshot("COLL-3", "gradient-sum-twice", D,
               "w2 is held whole on tp = 2 (layout kv); its gradient is all-reduced (sum) by two tp collectives, both awaited by its update",
               mutate=kv_summed_twice,
               parent=kv_parent, envelope=lambda s: s.update(parents=[kv_parent["digest"]]))
    k.snapshot("VOL-1", "collective-payload-wrong", D, "all-reduce of y claims 32*B*S bytes (y is 16*B*S)", parent=True,
               mutate=lambda p: p["tasks"][4]["collective"].update(message_bytes="32*B*S"))
    k.snapshot("VOL-1", "collective-value-unknown", D, "all-reduce of a value the model does not have", parent=True,
               mutate=lambda p: p["tasks"][4].update(value="z"))
    # SYM-3: y's shape is three sums of 64 powers, so VOL-1's payload (the product of y's
    # dimensions) would have 64^3 terms: the third product (4,096 x 64 terms) is refused before
    # it is formed.
    wide_model = model()
    wide_model["symbols"] += [symbol(c) for c in "PQR"]
    by_id(wide_model["values"], "y")["shape"] = ["+".join(f"{c}^{e}" for e in range(64, 1, -1)) + "+" + c for c in "PQR"] + ["8"]
    wide_parent = snap("ModelIR", wide_model, [])
    k.snapshot("SYM-3", "payload-product-past-65536-terms", D, "y's shape is [P^64+...+P, Q^64+...+Q, R^64+...+R, 8]: VOL-1's product of its dimensions would have 262,144 terms",
               parent=wide_parent, envelope=lambda s: s.update(parents=[wide_parent["digest"]]))
    k.snapshot("SHARD-1", "sequence-not-divisible", D, "x split along S over tp=2, but S is not known to be even", parent=True,
               mutate=lambda p: p["symbols"][1].update(divisible_by="1"))
    k.snapshot("SHARD-1", "shard-of-unknown-value", D, "a shard of value w3, which the model does not have", parent=True,
               mutate=lambda p: p["shards"].append({"axis": "", "dim": -1, "pieces": 1, "stage": 0, "value": "w3"}))
    k.snapshot("SHARD-2", "pieces-differ-from-axis", D, "w1 split into 4 pieces along tp of size 2", parent=True,
               mutate=lambda p: p["shards"][0].update(pieces=4))
    k.snapshot("SHARD-2", "dim-beyond-rank", D, "w2 split along dimension 2 of a 2-d value", parent=True,
               mutate=lambda p: p["shards"][1].update(dim=2))
    k.snapshot("SHARD-2", "axis-not-in-mesh", D, "w1 split along axis foo, which the mesh does not have, into -1 pieces", parent=True,
               mutate=lambda p: p["shards"][0].update(axis="foo", pieces=-1))
    k.snapshot("SHARD-3", "weight-not-owned", D, "no shard owns weight w2", parent=True,
               mutate=lambda p: p["shards"].pop(1))
    k.snapshot("SHARD-4", "weight-not-updated-on-its-stage", D,
               "w2 is held on stage 0, but its only update (s1.opt.w2) runs on stage 1", parent=True,
               mutate=lambda p: p["shards"][1].update(stage=0))

    # ---- BUF, MEM-1, MEM-3 (PortablePlanIR snapshot obligations) -------------------------
    k.snapshot("BUF-1", "consumer-missing", P, "buffer h.s1's consumers omit the task that reads it",
               mutate=lambda p: p["buffers"][3].update(consumers=[]))
    k.snapshot("BUF-1", "output-of-foreign-producer", P, "task 3 lists buffer 7 (produced by task 5) among its outputs",
               mutate=lambda p: p["tasks"][3].update(outputs=[5, 7]))
    k.snapshot("BUF-2", "input-buffer-with-producer", P, "a produced buffer with storage input",
               mutate=lambda p: p["buffers"][2].update(storage="input"))
    k.snapshot("BUF-2", "transient-without-producer", P, "a transient buffer that nothing produces",
               mutate=lambda p: p["buffers"][11].update(storage="transient"))
    k.snapshot("BUF-3", "producer-not-a-dependency", P, "fc2.fwd reads h.s1 but does not depend on the recv that produces it",
               mutate=lambda p: p["tasks"][3].update(dependencies=[]))
    k.snapshot("BUF-3", "task-reads-own-output", P, "opt.w2 reads the buffer it produces",
               mutate=lambda p: (p["tasks"][12].update(inputs=[10, 12, 14]), p["buffers"][14].update(consumers=[12])))
    k.snapshot("BUF-4", "alignment-not-power-of-two", P, "buffer alignment 96", mutate=lambda p: p["buffers"][5].update(alignment=96))
    k.snapshot("BUF-4", "negative-size", P, "buffer of size -128 (not in a memory fact)", mutate=lambda p: p["buffers"][14].update(size="-128"))

    def mem1(p):
        p["memory"][0].update(bytes="256")          # weights of stage 0 claim 256, its buffer has 128
        p["memory"][5].update(bytes="32*B*S+1152")  # total kept consistent, so only MEM-1 fails
    k.snapshot("MEM-1", "weights-do-not-add-up", P, "stage 0 weights claim 256 bytes, their buffer has 128", mutate=mem1)
    k.snapshot("MEM-1", "activation-buffers-do-not-add-up", P, "stage 1 activations list one buffer of two",
               mutate=lambda p: p["memory"][9].update(buffers=[3]))
    k.snapshot("MEM-3", "total-wrong", P, "stage 1 total is not the sum of its parts",
               mutate=lambda p: p["memory"][11].update(bytes="24*B*S+1000"))
    k.snapshot("MEM-3", "missing-optimizer-fact", P, "stage 0 has no optimizer_state fact",
               mutate=lambda p: p["memory"].pop(2))
    # Accepted before session 36: a training stage's total left its workspace out, so CAPM-2
    # compared a total short of the stage's stated memory with the capacity.
    k.snapshot("MEM-3", "two-workspace-facts", P, "stage 0 states two workspace facts (empty: the total still adds up)",
               mutate=lambda p: p["memory"].extend({"buffers": [], "bytes": "0", "category": "workspace", "chunk": -1, "stage": 0} for _ in range(2)))
    k.snapshot("MEM-3", "workspace-left-out-of-total", P, "stage 0 states a workspace of 16*B*S bytes that its total leaves out",
               mutate=lambda p: p["memory"].append({"buffers": [2], "bytes": "16*B*S", "category": "workspace", "chunk": -1, "stage": 0}))

    # ---- WORK-1, MEM-2 (DistributedTaskIR -> PortablePlanIR) ------------------------------
    k.snapshot("WORK-1", "vector-work-changed", P, "a portable task's vector work differs from its distributed task", parent=True,
               mutate=lambda p: p["tasks"][11]["work"].update(vector_ops="2048"))
    k.snapshot("WORK-1", "task-planned-twice", P, "two portable tasks derive from the same distributed task", parent=True,
               mutate=lambda p: p["tasks"][12]["lineage"].update(sources=["s0.opt.w1"]))

    # ---- DAG-4 (DistributedTaskIR -> PortablePlanIR) ---------------------------------------
    # The parent orders s1.fc2.bwd_w after s1.fc2.bwd_act (an order that carries no data); the
    # portable plan drops that edge, which BUF-3 and every other family let through.
    ordered = redigest(k.c.get("dist"))
    ordered["payload"]["tasks"][6]["dependencies"] = [4, 5]
    redigest(ordered)
    k.snapshot("DAG-4", "order-only-dependency-dropped", P, "the distributed s1.fc2.bwd_w also waits for s1.fc2.bwd_act; its portable copy does not",
               parent=ordered, envelope=lambda s: s.update(parents=[ordered["digest"]]))

    def mem2(p):
        p["memory"][4].update(bytes="16*B*S")       # peak of stage 0 should be 2 in-flight microbatches
        p["memory"][5].update(bytes="16*B*S+1024")  # total kept consistent (MEM-3)
    k.snapshot("MEM-2", "peak-ignores-schedule", P, "stage 0 peak activations of one microbatch; its schedule has two in flight",
               parent=True, mutate=mem2)
    k.snapshot("MEM-2", "two-activations-facts-for-one-chunk", P, "a second, empty activations fact for stage 0, chunk 0", parent=True,
               mutate=lambda p: p["memory"].append({"buffers": [], "bytes": "0", "category": "activations", "chunk": 0, "stage": 0}))

    def mem2_chunk_off_schedule(p):  # accepted before session 36: the fact counted for no chunk, and the peak and total shrank with it
        p["memory"][3].update(chunk=-1)         # stage 0's only activations fact, off its schedule's chunks (0 only)
        p["memory"][4].update(bytes="0")        # the peak of a stage whose chunk 0 has no fact
        p["memory"][5].update(bytes="1024")     # total = weights + gradients + optimizer state + 0 (MEM-3 holds)
    k.snapshot("MEM-2", "activations-fact-off-the-schedule", P, "stage 0's activations fact is for chunk -1, which its schedule lacks; its peak and total leave the activations out",
               parent=True, mutate=mem2_chunk_off_schedule)

    def kv_in_training(p):  # each stage states CAPM-1's categories, so only the missing inference shape is wrong
        for f in p["memory"]:
            if f["category"] == "weights":
                f.update(buffers=[1, 13] if f["stage"] == 0 else [4, 14], bytes="256")
            elif f["category"] == "total":
                f.update(bytes="256")
        for st in (0, 1):
            p["memory"] += [{"buffers": [], "bytes": b, "category": cat, "chunk": -1, "stage": st}
                            for cat, b in (("kv_cache", "0"), ("workspace", "0"), ("capacity", "80000000000"))]
    k.snapshot("KV-2", "kv-cache-fact-in-training-plan", P, "each stage of a training plan declares a kv_cache fact, which would exempt "
               "it from MEM-3 (its total leaves out gradients, optimizer state and activations)", parent=True, mutate=kv_in_training)

    # ---- EFFECT, KV, WS, CAPM (the inference chain) --------------------------------------
    IM, ID_, IP = "inf_model", "inf_dist", "inf_portable"

    def fx(*pairs):
        return [{"kind": kk, "value": v} for kk, v in pairs]
    k.snapshot("EFFECT-1", "effects-dropped", ID_, "attn0's task does not carry the reads of its operation", parent=True,
               mutate=lambda p: p["tasks"][1].update(effects=[]))
    k.snapshot("EFFECT-1", "effect-on-transfer", ID_, "a send task (not derived from an operation) carries a read of k0", parent=True,
               mutate=lambda p: p["tasks"][3].update(effects=fx(("read", "k0")), dependencies=[2, 0]))
    k.snapshot("EFFECT-2", "read-not-after-write", ID_, "attn0 reads k0 and v0 but does not depend on kv0, which writes them",
               mutate=lambda p: p["tasks"][1].update(dependencies=[]))
    k.snapshot("EFFECT-2", "read-without-writer", IP, "a portable task reads v1 before any task writes it",
               mutate=lambda p: p["tasks"][4].update(effects=fx(("read", "v1"))))
    k.snapshot("EFFECT-3", "unordered-writers", ID_, "attn0 also writes k1, which kv1 writes later without depending on it",
               mutate=lambda p: p["tasks"][1].update(effects=fx(("read", "k0"), ("read", "v0"), ("write", "k1"))))
    k.snapshot("EFFECT-4", "effects-changed-when-planned", IP, "a portable task drops the reads of its distributed task", parent=True,
               mutate=lambda p: p["tasks"][6].update(effects=fx(("read", "k1"))))
    k.snapshot("KV-1", "context-differs-from-cache", ID_, "the inference shape says context 256, the KV caches hold 128 tokens", parent=True,
               mutate=lambda p: p["inference"].update(context="256"))
    k.snapshot("KV-1", "state-without-inference-shape", ID_, "the model has KV caches but the plan declares no inference shape", parent=True,
               mutate=lambda p: p.update(inference=None))
    k.snapshot("KV-1", "kv-heads-not-divisible", ID_, "kv_heads 3 on tp = 2 (neither divides the other)", parent=True,
               mutate=lambda p: p["inference"].update(kv_heads="3"))

    def kv2(p):
        for b in (6, 7):
            p["buffers"][b]["size"] = "2048"     # half a cache per buffer
        p["memory"][1]["bytes"] = "4096"         # the fact adds up its buffers (MEM-1)
        p["memory"][3]["bytes"] = "16640"        # and the total its parts (CAPM-1)
    k.snapshot("KV-2", "cache-half-size", IP, "stage 0 KV caches of 2048 bytes per rank (4096 expected)", parent=True, mutate=kv2)
    wide = c.get(IM)
    wide["payload"]["values"][2]["shape"] = ["2", "1", "2048"]
    redigest(wide)
    k.snapshot("WS-1", "intermediate-exceeds-bound", ID_, "kv0 materialises 4096 bytes per rank, above the workspace bound 2304",
               parent=wide, envelope=lambda s: s.update(parents=[wide["digest"]]))
    odd = c.get(IM)
    odd["payload"]["values"][2]["dtype"] = "fp64"  # not a dtype of known size (verifiers/gate.h dtype_size)
    redigest(odd)
    k.snapshot("WS-1", "activation-of-unknown-dtype", ID_, "qkv0 has dtype fp64, whose size is not known: its bytes are not decided",
               parent=odd, envelope=lambda s: s.update(parents=[odd["digest"]]))

    def ws2(p):
        p["buffers"][16]["size"] = "2048"
        p["memory"][7]["bytes"] = "2048"
        p["memory"][8]["bytes"] = "20480"
    k.snapshot("WS-2", "workspace-below-bound", IP, "stage 1 workspace of 2048 bytes, below the bound 2304", parent=True, mutate=ws2)
    k.snapshot("CAPM-1", "total-not-the-sum", IP, "stage 0 total 20000 is not weights + kv_cache + workspace (20736)",
               mutate=lambda p: p["memory"][3].update(bytes="20000"))
    k.snapshot("CAPM-1", "workspace-buffer-unclaimed", IP, "stage 1's workspace buffer is listed by no memory fact",
               mutate=lambda p: (p["memory"][7].update(buffers=[], bytes="0"), p["memory"][8].update(bytes="18432")))
    k.snapshot("CAPM-2", "total-exceeds-capacity", IP, "stage 1 needs 20736 bytes per rank, its capacity is 16384",
               mutate=lambda p: p["memory"][9].update(bytes="16384"))

    # ---- ConcretePlanIR: ALIGN, CAP, QUEUE, SLOT, ROUTE, TOKEN, DEADLOCK -----------------
    # Q (hand-bound, queue): compute queue of dev:r0 = [0 fc1.fwd, 9 fc1.bwd_act, 10 fc1.bwd_w, 11 opt.w1],
    # transfer queues [1 send.h, 8 recv.dh] and [2 recv.h, 7 send.dh]; tokens tok.h (1 -> 2), tok.dh (7 -> 8).
    k.snapshot("ALIGN-1", "misaligned-offset", Q, "buffer offset 83216 in a region aligned to 256",
               mutate=lambda p: p["buffers"][13].update(offset="83216"))
    k.snapshot("ALIGN-2", "region-alignment-not-power-of-two", Q, "region alignment 384",
               mutate=lambda p: p["regions"][1].update(alignment=384))
    k.snapshot("ALIGN-2", "buffer-alignment-zero", SL, "buffer alignment 0", mutate=lambda p: p["buffers"][4].update(alignment=0))
    k.snapshot("CAP-1", "buffer-of-1e30-bytes", Q, "a buffer claiming 10^30 bytes (checked exactly, nothing allocated)",
               mutate=lambda p: p["buffers"][5].update(size="1" + "0" * 30))
    k.snapshot("CAP-1", "buffer-past-region-end", SL, "buffer [1073741568, 1073742080) in a region of 1073741824 bytes",
               mutate=lambda p: p["buffers"][14].update(offset="1073741568", size="512"))
    k.snapshot("CAP-2", "region-beyond-device-memory", Q, "region of 2^37 bytes on a device of 80 GiB",
               mutate=lambda p: p["regions"][0].update(capacity="137438953472"))
    k.snapshot("CAP-3", "overlapping-regions", Q, "two regions of dev:r0 overlap",
               mutate=lambda p: p["regions"].append({"alignment": 256, "capacity": "4096", "device": 0, "id": "r:scratch",
                                                     "offset": "1073737728", "space": "hbm"}))
    k.snapshot("QUEUE-1", "queue-target-without-queues", Q, "target queue with a null queue extension",
               mutate=lambda p: p.update(queue=None))
    k.snapshot("QUEUE-1", "queue-target-with-slot-extension", Q, "target queue with a slot extension as well",
               mutate=lambda p: p.update(slot=concrete_slot()["slot"]))
    k.snapshot("QUEUE-2", "launch-on-transfer-queue", Q, "a launch command issued on the transfer queue",
               mutate=lambda p: (p["queue"]["queues"][0].update(commands=[0, 9, 10]), p["queue"]["queues"][1].update(commands=[1, 8, 11])))
    k.snapshot("QUEUE-2", "queue-of-other-device", Q, "a dev:r2 collective command issued on a collective queue of dev:r0",
               mutate=lambda p: p["queue"]["queues"][2].update(device=0))
    k.snapshot("QUEUE-3", "command-on-no-queue", Q, "command 11 is on no queue",
               mutate=lambda p: p["queue"]["queues"][0].update(commands=[0, 9, 10]))
    k.snapshot("QUEUE-3", "command-on-two-queues", Q, "command 12 is issued on two queues",
               mutate=lambda p: p["queue"]["queues"].append({"commands": [12], "device": 1, "id": "q:dev:r2:compute2", "kind": "compute"}))
    # QUEUE-4 cannot be broken alone: if dependency u of v is queued after v on one in-order
    # queue, the queue edges v -> ... -> u and the dependency edge u -> v close a DEADLOCK-1
    # cycle (DEADLOCK-1 is checked whenever QUEUE-1 and QUEUE-3 hold). The sidecar documents it.
    q4 = c.get(Q)
    q4["payload"]["queue"]["queues"][0]["commands"] = [0, 9, 11, 10]
    k.args("QUEUE-4", "dependency-queued-later", "opt.w1 depends on fc1.bwd_w but is queued before it "
           "(also DEADLOCK-1, necessarily)", ["verify", "--format", "json", "{corpus}/QUEUE-4-dependency-queued-later.json"], 1,
           {"QUEUE-4-dependency-queued-later.json": encode(redigest(q4))}, also=["DEADLOCK-1"],
           why="a dependency queued after its dependent on one in-order queue always closes a cycle of queue and dependency "
               "edges, which DEADLOCK-1 reports whenever QUEUE-1 and QUEUE-3 hold")

    def token_cycle(p):
        p["tokens"] += [{"id": "tok.a"}, {"id": "tok.b"}]
        p["commands"][11].update(signals=[2], waits=[3])   # opt.w1 on dev:r0
        p["commands"][12].update(signals=[3], waits=[2])   # opt.w2 on dev:r2: no dependency path either way
    k.snapshot("DEADLOCK-1", "token-cycle-only", Q,
               "opt.w1 and opt.w2 each wait for a token only the other signals: a deadlock through tokens alone "
               "(the dependency graph is acyclic)", mutate=token_cycle)
    k.snapshot("DEADLOCK-1", "token-against-queue-order", Q,
               "fc1.bwd_act, queued after fc1.fwd on one in-order queue, signals a token fc1.fwd waits for",
               mutate=lambda p: (p["tokens"].append({"id": "tok.w"}), p["commands"][0].update(waits=[2]), p["commands"][9].update(signals=[2])))
    # SL (hand-bound, slot): issue = (longest chain before the command, k-th in that cycle), two slots
    k.snapshot("SLOT-1", "issue-table-short", SL, "13 issue positions for 14 commands",
               mutate=lambda p: p["slot"]["issue"].pop())
    k.snapshot("SLOT-1", "slot-target-without-slot", SL, "target slot with a null slot extension",
               mutate=lambda p: p.update(slot=None))
    k.snapshot("SLOT-2", "position-used-twice", SL, "fc2.bwd_act and fc2.bwd_w both at (5, 0)",
               mutate=lambda p: p["slot"]["issue"][6].update(slot=0))
    k.snapshot("SLOT-2", "slot-out-of-range", SL, "slot 2 with slots_per_cycle 2",
               mutate=lambda p: p["slot"]["issue"][12].update(slot=2))
    k.snapshot("SLOT-3", "dependency-issued-later", SL, "opt.w2 issued at (4, 1), before fc2.bwd_w at (5, 1) on which it depends",
               mutate=lambda p: p["slot"]["issue"][12].update(cycle=4, slot=1))
    k.snapshot("ROUTE-1", "transfer-without-route", SL, "recv.dh has no route", mutate=lambda p: p["slot"]["routes"].pop())
    k.snapshot("ROUTE-1", "route-for-launch", SL, "a launch command has a route",
               mutate=lambda p: p["slot"]["routes"].append({"command": 3, "destination": 0, "source": 1}))
    k.snapshot("ROUTE-2", "route-to-itself", SL, "route source and destination are both dev:r0",
               mutate=lambda p: p["slot"]["routes"][0].update(destination=0))
    k.snapshot("TOKEN-1", "token-never-signalled", Q, "a token no command signals",
               mutate=lambda p: p["tokens"].append({"id": "tok.orphan"}))
    k.snapshot("TOKEN-1", "token-signalled-twice", SL, "tok.h is signalled by send.h and by fc1.fwd",
               mutate=lambda p: p["commands"][0].update(signals=[0]))
    k.snapshot("TOKEN-2", "waits-for-own-token", Q, "send.h waits for the token it signals itself",
               mutate=lambda p: p["commands"][1].update(waits=[0]))
    k.snapshot("TOKEN-2", "waiter-issued-before-signaller", SL, "opt.w2 at (6, 1) waits for a token of opt.w1 at (9, 0)",
               mutate=lambda p: (p["tokens"].append({"id": "tok.x"}), p["commands"][11].update(signals=[2]), p["commands"][12].update(waits=[2])))

    # ---- IMPL, RACE, CAP-4/5, WORK-4, ALIGN-3, REFBIND-1 (binding) --------------------------
    k.snapshot("IMPL-1", "implementation-not-declared", Q, "fc2.fwd names implementation cutlass.gemm, which is not declared", parent=True,
               mutate=lambda p: p["commands"][3].update(implementation="cutlass.gemm"))
    k.snapshot("IMPL-1", "no-engine-runs-it", Q, "no engine of dev:r0 runs the vector fp32 capability the optimizer needs", parent=True,
               mutate=lambda p: p["engines"][0].update(capabilities=[cap("matrix", "bf16")]))
    k.snapshot("IMPL-2", "rank-outside-deployment", Q, "world_size 3, but dev:r2 stands for ranks 2 and 3",
               mutate=lambda p: p.update(world_size=3))
    k.snapshot("IMPL-2", "ranks-per-device-differ", SL, "dev:r2 stands for three ranks, dev:r0 for two",
               mutate=lambda p: (p["devices"][1].update(ranks=[2, 3, 4]), p.update(world_size=5)))
    k.snapshot("RACE-1", "consumer-not-after-producer", Q, "fc2.fwd reads h.s1 without depending on recv.h, which writes it",
               mutate=lambda p: p["commands"][3].update(dependencies=[]))
    k.snapshot("RACE-1", "unordered-writers-on-two-devices", SL, "opt.w2 also writes w1.new, which opt.w1 writes: neither happens before the other",
               mutate=lambda p: p["commands"][12].update(writes=[14, 13]))
    k.snapshot("RACE-2", "pinned-buffers-overlap", Q, "state w1.s0 moved onto input x.s0 (both pinned)",
               mutate=lambda p: p["buffers"][1].update(offset="16128"))
    k.snapshot("RACE-2", "unordered-buffers-share-memory", Q, "gw2.s1 (written by fc2.bwd_w) placed inside dh.s1 (written by fc2.bwd_act, read by send.dh): "
               "fc2.bwd_w is not ordered after send.dh", mutate=lambda p: p["buffers"][10].update(offset="65792"))
    k.snapshot("RACE-2", "one-command-accesses-both", Q, "gw1.s0 placed inside dh.s0: fc1.bwd_w reads dh.s0 and writes gw1.s0 over its bytes",
               mutate=lambda p: p["buffers"][9].update(offset="81920"))
    # RACE-3 needs more than 512 MiB of live vector clocks (2^27 4-byte entries), an input of about 4 MB: it is not
    # committed; the runner writes it with generated_input() into a temporary directory.
    k.args("RACE-3", "clocks-over-limit", f"{RACE3_COMMANDS} independent host commands and one that depends on them all, on a slot target: "
           f"{RACE3_COMMANDS} chains x {RACE3_COMMANDS + 1} live commands of 4-byte vector clocks > 512 MiB (input generated by the runner)",
           ["verify", "--format", "json", "{generated}/RACE-3-clocks-over-limit.json"], 1, generated=["RACE-3-clocks-over-limit.json"])
    k.snapshot("RACE-4", "input-not-read", Q, "fc2.fwd does not read w2.s1, an input of its task", parent=True,
               mutate=lambda p: p["commands"][3].update(reads=[3]))
    k.snapshot("CAP-4", "size-not-as-planned", Q, "h.s0 bound with 32000 bytes, the portable size at B = 1, S = 2048 is 32768", parent=True,
               mutate=lambda p: p["buffers"][2].update(size="32000"))
    k.snapshot("CAP-4", "binding-not-allowed", Q, "binding S = 4097 (S is even and at most 4096)", parent=True,
               mutate=lambda p: p["bindings"][1].update(value="4097"))
    k.snapshot("CAP-4", "storage-changed", Q, "w1.s0 bound as transient (it is state)", parent=True,
               mutate=lambda p: (p["buffers"][1].update(storage="transient"), p["memory"][0].update(lower_bound_bytes="17280")))
    k.snapshot("CAP-5", "peak-wrong", Q, "dev:r0 peak_bytes one less than its highest buffer end",
               mutate=lambda p: p["memory"][0].update(peak_bytes="83327"))
    k.snapshot("CAP-5", "lower-bound-ignores-witness", Q, "dev:r2 lower bound of the pinned buffers only, but y.s1 is live at fc2.fwd",
               mutate=lambda p: p["memory"][1].update(lower_bound_bytes="17408"))
    k.snapshot("CAP-5", "two-entries-for-one-device", Q, "a second, otherwise exact, entry for dev:r0 (one entry a device)",
               mutate=lambda p: p["memory"].append(dict(p["memory"][0])))
    k.snapshot("WORK-4", "work-changed", Q, "fc1.fwd's command does half its task's matrix work", parent=True,
               mutate=lambda p: p["commands"][0]["work"].update(matrix_ops="64*B*S"))
    k.snapshot("WORK-4", "repeat-short", Q, "fc2.fwd's command runs 1 of its task's 2 instances", parent=True,
               mutate=lambda p: p["commands"][3].update(repeat=1))
    k.snapshot("DAG-5", "dependency-left-to-queue-order", Q, "opt.w2's command does not list bwd_w's (its task's dependency); only their queue orders them",
               parent=True, mutate=lambda p: p["commands"][12].update(dependencies=[]))
    RQ, RS = "ref_queue", "ref_slot"
    k.snapshot("ALIGN-3", "offset-off-the-recurrence", RQ, "w2.new at 99840; the reference recurrence places it at 99584", parent=True,
               mutate=lambda p: p["buffers"][14].update(offset="99840"))
    k.snapshot("REFBIND-1", "command-renamed", RQ, "a command id differs from the normal form (c:fc1)", parent=True,
               mutate=lambda p: p["commands"][0].update(id="c:fc1"))
    k.snapshot("REFBIND-1", "issue-table-differs", RS, "the reference slot plan issues command 1 at (1, 1), the normal form at (1, 0)",
               parent=True, mutate=lambda p: (p["slot"].update(slots_per_cycle=2), p["slot"]["issue"][1].update(slot=1)))

    # ---- TIME (TimelineBundle against the hand-bound queue plan) --------------------------
    t_start, t_end, t_path, t_preds = schedule(concrete_queue())
    qprev = {b: a for q in concrete_queue()["queue"]["queues"] for a, b in zip(q["commands"], q["commands"][1:])}

    def slack(kind):
        """A command off the critical path whose start can move before the end of a predecessor of
        `kind` (dep: a dependency or token signaller; queue: its queue predecessor) and no other."""
        for v in sorted(t_start):
            if v in t_path:
                continue
            others = [t_end[u] for u in t_preds[v] if (u == qprev.get(v)) != (kind == "queue")]
            victims = [t_end[u] for u in t_preds[v] if (u == qprev.get(v)) == (kind == "queue")]
            floor = max(others, default=Fraction(0))
            if victims and floor < max(victims):
                return v, floor
        raise AssertionError(f"no command with slack against a {kind} predecessor")
    v3, s3 = slack("dep")
    k.snapshot("TIME-1", "command-without-interval", T, "the last command has no interval", parent=True,
               mutate=lambda p: p["intervals"].pop())
    k.snapshot("TIME-1", "interval-for-unknown-command", T, "an interval for command 14 of a plan of 14", parent=True,
               mutate=lambda p: p["intervals"].append(iv(14, "0", "1")))
    k.snapshot("TIME-2", "end-before-start", T, "an interval ending before it starts", parent=True,
               mutate=lambda p: p["intervals"][12].update(end=rat(t_start[12] - Fraction(1, 8))))
    k.snapshot("TIME-2", "negative-start", T, "an interval starting at -1/2", parent=True,
               mutate=lambda p: p["intervals"][12].update(start="-1/2"))
    k.snapshot("TIME-3", "starts-before-dependency-ends", T, f"command {v3} starts at {rat(s3)}, before a dependency ends", parent=True,
               mutate=lambda p: p["intervals"][v3].update(start=rat(s3)))
    v4, s4 = slack("queue")
    k.snapshot("TIME-4", "overlap-on-in-order-queue", T, f"command {v4} starts at {rat(s4)} while its queue predecessor still runs",
               parent=True, mutate=lambda p: p["intervals"][v4].update(start=rat(s4)))
    k.snapshot("TIME-5", "path-short-of-makespan", T, "the critical path stops one command short of the makespan", parent=True,
               mutate=lambda p: p["critical_path"].pop())
    k.snapshot("TIME-5", "path-without-edge", T, "the critical path skips its second command: no edge from the first to the third", parent=True,
               mutate=lambda p: p["critical_path"].pop(1))
    k.snapshot("TIME-5", "empty-path", T, "an empty critical path for a plan with commands", parent=True,
               mutate=lambda p: p.update(critical_path=[]))

    # ---- MACHINE (one call per command; waits before, signals after) ----------------------
    k.snapshot("MACHINE-1", "command-not-lowered", MA, "the copy (the last command) is lowered to no instruction", parent=True,
               mutate=lambda p: p["instructions"].pop())
    k.snapshot("MACHINE-1", "instruction-of-unknown-command", MA, "an extra instruction traced to command 99 of 14", parent=True,
               mutate=lambda p: p["instructions"].append({"command": 99, "dependencies": [len(p["instructions"]) - 1], "dialect": "host",
                                                           "id": "i:extra", "op": "call", "target": "printf", "token": None}))
    k.snapshot("MACHINE-2", "entry-point-missing", MA, "entry points omit the first instruction", parent=True,
               mutate=lambda p: p["entry_points"].pop(0))
    k.snapshot("MACHINE-2", "entry-point-with-dependencies", MA, "an instruction with dependencies listed as an entry point", parent=True,
               mutate=lambda p: p.update(entry_points=sorted(p["entry_points"] + [1])))
    k.snapshot("MACHINE-3", "undeclared-dialect", MA, "an instruction in dialect ptx, which is not declared", parent=True,
               mutate=lambda p: p["instructions"][0].update(dialect="ptx"))
    k.snapshot("MACHINE-3", "dialect-declared-twice", MA, "dialect cuda declared twice", parent=True,
               mutate=lambda p: p.update(dialects=["cuda", "host", "nccl", "cuda"]))
    k.snapshot("MACHINE-4", "call-with-token", MA, "a call instruction names a token", parent=True,
               mutate=lambda p: p["instructions"][mi["i:1:call"]].update(token=0))
    k.snapshot("MACHINE-4", "signal-of-foreign-token", MA, "send.h's signal instruction is traced to fc1.fwd, which signals nothing",
               parent=True, mutate=lambda p: p["instructions"][mi["i:1:signal:0"]].update(command=0))
    k.snapshot("MACHINE-4", "wait-for-signalled-token", MA, "send.h's signal instruction becomes a wait for its token, which send.h signals and does not wait for",
               parent=True, mutate=lambda p: p["instructions"][mi["i:1:signal:0"]].update(op="wait"))

    # ---- OBS -----------------------------------------------------------------------------
    k.snapshot("OBS-1", "unknown-command", O, "an observation of c:bwd, which the plan does not have", parent=True,
               mutate=lambda p: p["observations"].append({"command": "c:bwd", "duration": "1", "source": "nsys:run1"}))
    k.snapshot("OBS-2", "negative-duration", O, "duration -1/2", parent=True,
               mutate=lambda p: p["observations"][2].update(duration="-1/2"))
    k.snapshot("OBS-3", "same-command-and-source", O, "c:p.s0.fc1.fwd observed twice by nsys:run1", parent=True,
               mutate=lambda p: p["observations"][1].update(source="nsys:run1"))

    # ---- IO (plancert reading the files) ------------------------------------------------
    k.args("IO-1", "missing-file", "a snapshot path that does not exist",
           ["verify", "--format", "json", "{corpus}/IO-1-missing-file.json"], 2)
    k.args("IO-1", "directory", "a directory given as the snapshot", ["verify", "--format", "json", "{corpus}"], 2)
    k.args("IO-1", "missing-parent", "a --parent path that does not exist",
           ["verify", "--format", "json", "{corpus}/valid-distributed.json", "--parent", "{corpus}/IO-1-missing-parent.json"], 2)
    k.args("IO-2", "over-max-bytes", "a valid snapshot over --max-bytes 1024",
           ["verify", "--format", "json", "--max-bytes", "1024", "{corpus}/IO-2-over-max-bytes.json"], 2,
           {"IO-2-over-max-bytes.json": encode(c.get(M))})
    k.snapshot("IO-3", "timeline-without-parent", T, "a valid TimelineBundle given without --parent")
    k.snapshot("IO-3", "observations-without-parent", O, "a valid ObservationSet given without --parent")

    # ---- JSON (byte level) -------------------------------------------------------------
    mb = encode(c.get(M))
    db = encode(c.get(D))
    k.raw("JSON-1", "empty", "an empty file", b"")
    k.raw("JSON-1", "whitespace-only", "a file of whitespace", b" \n\t\r\n")
    k.raw("JSON-1", "truncated", "the valid ModelIR cut in the middle", mb[: len(mb) // 2])
    k.raw("JSON-1", "trailing-characters", "a second value after the document", mb + b"{}")
    k.raw("JSON-1", "missing-comma", "a missing comma between two members of the payload",
          edit(mb, '"name":"tiny-mlp","operations"', '"name":"tiny-mlp" "operations"'))
    k.raw("JSON-1", "bare-word", "a bare word where a value belongs", edit(mb, '"integer":true', '"integer":yes', expect=2))
    k.raw("JSON-1", "unterminated-string", "end of input inside a string", mb[: mb.index(b"tiny-mlp") + 4])
    k.raw("JSON-2", "duplicate-key-in-operation", "an operation with two kind members",
          edit(mb, '"kind":"matmul"', '"kind":"matmul","kind":"matmul"', expect=2))
    k.raw("JSON-2", "duplicate-envelope-key", "two schema members in the envelope",
          edit(mb, '"schema":"ModelIR"', '"schema":"ModelIR","schema":"ModelIR"'))
    k.raw("JSON-2", "duplicate-attrs-key-escaped", "attrs keys note and \\u006eote (the same after unescaping)",
          edit(mb, '"attrs":{"note":"first projection"}', '"attrs":{"note":"first projection","\\u006eote":"again"}'))
    k.raw("JSON-3", "float-microbatches", "microbatches 2.0", edit(db, '"microbatches":2', '"microbatches":2.0'))
    k.raw("JSON-3", "float-for-exact-number", "a JSON float 2.5 where an exact number (a string) belongs",
          edit(mb, '"divisible_by":"2"', '"divisible_by":2.5'))
    k.raw("JSON-3", "exponent", "a number with an exponent: 1e3", edit(db, '"microbatches":2', '"microbatches":1e3'))
    k.raw("JSON-4", "leading-zero", "microbatches 02", edit(db, '"microbatches":2', '"microbatches":02'))
    k.raw("JSON-4", "negative-zero", "shard dim -0", edit(db, '"dim":-1', '"dim":-0'))
    deep = "[" * 600 + "]" * 600
    k.raw("JSON-5", "nesting-600-levels", "600 nested arrays inside an attrs value (limit 512)",
          edit(mb, '"attrs":{"note":"first projection"}', '"attrs":{"note":' + deep + "}"))
    k.raw("JSON-6", "invalid-utf8", "the byte 0xff inside the model name", mb.replace(b'"tiny-mlp"', b'"tiny-\xffmlp"', 1))
    k.raw("JSON-6", "overlong-utf8", "an overlong UTF-8 encoding of '/' (0xc0 0xaf)", mb.replace(b'"tiny-mlp"', b'"tiny\xc0\xafmlp"', 1))
    k.raw("JSON-6", "lone-surrogate", "a lone high surrogate escape", edit(mb, '"tiny-mlp"', '"tiny\\ud800mlp"'))
    k.raw("JSON-6", "control-character", "a raw tab inside a string", edit(mb, '"tiny-mlp"', '"tiny\tmlp"'))
    k.raw("JSON-6", "invalid-escape", "the escape \\x", edit(mb, '"tiny-mlp"', '"tiny\\xmlp"'))

    # ---- SCHEMA (decoding) ----------------------------------------------------------------
    k.snapshot("SCHEMA-1", "unknown-schema", M, "schema ModelIRv2", envelope=lambda s: s.update(schema="ModelIRv2"), keep_digest=True)
    k.snapshot("SCHEMA-1", "schema-wrong-case", M, "schema modelir", envelope=lambda s: s.update(schema="modelir"), keep_digest=True)
    k.snapshot("SCHEMA-2", "version-2", M, "version 2.0.0", envelope=lambda s: s.update(version="2.0.0"))
    k.snapshot("SCHEMA-2", "version-1-1", M, "version 1.1.0 (a newer minor version)", envelope=lambda s: s.update(version="1.1.0"))
    k.snapshot("SCHEMA-3", "missing-payload-field", M, "an operation without its kind",
               mutate=lambda p: p["operations"][0].pop("kind"))
    k.snapshot("SCHEMA-3", "missing-envelope-digest", M, "an envelope without digest", envelope=lambda s: s.pop("digest"), keep_digest=True)
    k.snapshot("SCHEMA-3", "optional-left-out", D, "a task without its peer (optional fields are written as null)",
               mutate=lambda p: p["tasks"][0].pop("peer"))
    k.snapshot("SCHEMA-4", "unknown-payload-field", M, "an operation with a flops member",
               mutate=lambda p: p["operations"][0].update(flops="256"))
    k.snapshot("SCHEMA-4", "unknown-envelope-field", M, "an envelope with a comment member",
               envelope=lambda s: s.update(comment="hello"))
    k.snapshot("SCHEMA-4", "capabilities-misnamed", P, "a portable task with capabilities instead of requires",
               mutate=lambda p: p["tasks"][0].update(capabilities=p["tasks"][0].pop("requires")))
    k.snapshot("SCHEMA-5", "string-for-integer", D, "microbatches \"2\"", mutate=lambda p: p.update(microbatches="2"))
    k.snapshot("SCHEMA-5", "integer-for-exact-number", M, "temporary_bytes as the JSON integer 0 (exact numbers are strings)",
               mutate=lambda p: p["operations"][0]["work"].update(temporary_bytes=0))
    k.raw("SCHEMA-5", "document-is-array", "a JSON array instead of a snapshot object", b"[" + mb + b"]")
    k.snapshot("SCHEMA-5", "null-for-required", D, "mesh is null", mutate=lambda p: p.update(mesh=None))
    k.snapshot("SCHEMA-6", "unknown-role", M, "value role weights", mutate=lambda p: p["values"][1].update(role="weights"))
    k.snapshot("SCHEMA-6", "enum-wrong-case", Q, "target Queue", mutate=lambda p: p.update(target="Queue"))
    k.snapshot("SCHEMA-7", "int-leading-zero", Q, "device memory_bytes \"085899345920\"",
               mutate=lambda p: p["devices"][0].update(memory_bytes="085899345920"))
    k.snapshot("SCHEMA-7", "expression-not-canonical", M, "matrix_ops \"S*B*256\" (canonical: \"256*B*S\")",
               mutate=lambda p: p["operations"][0]["work"].update(matrix_ops="S*B*256"))
    k.snapshot("SCHEMA-7", "rational-not-lowest-terms", T, "interval end \"2/4\"", parent=True,
               mutate=lambda p: p["intervals"][0].update(end="2/4"))
    k.snapshot("SCHEMA-7", "int-with-plus", Q, "region offset \"+0\"", mutate=lambda p: p["regions"][0].update(offset="+0"))
    k.raw("SCHEMA-8", "integer-beyond-64-bits", "microbatches 99999999999999999999 (> 2^63 - 1)",
          edit(db, '"microbatches":2', '"microbatches":99999999999999999999'))
    k.raw("SCHEMA-8", "integer-below-64-bits", "shard dim -9223372036854775809 (< -2^63)",
          edit(db, '"dim":-1', '"dim":-9223372036854775809'))
    k.snapshot("SCHEMA-8", "index-beyond-32-bits", Q, "command 1's dependency 2147483648 (indices are 32-bit: > 2^31 - 1)",
               mutate=lambda p: p["commands"][1]["dependencies"].__setitem__(0, 2147483648))

    # ---- CONFIG (plancert certify: model, strategy, system files and Megatron-LM flags) ----
    calc_model = {"hidden": 768, "feedforward": 3072, "seq_size": 2048, "attn_heads": 16, "attn_size": 48, "num_blocks": 12}

    def cj(x) -> bytes:
        return (json.dumps(x, indent=2) + "\n").encode()

    def model_case(oid, slug, what, data: bytes, ext="json", flag="--model"):
        fname = f"{oid}-{slug}.{ext}"
        k.args(oid, slug, what, ["certify", flag, "{corpus}/" + fname], 2, {fname: data})

    model_case("CONFIG-1", "truncated-model", "a Calculon model file cut short", cj(calc_model)[:40])
    model_case("CONFIG-1", "duplicate-key-hf", "a Hugging Face config.json with n_embd twice",
               b'{"model_type": "gpt2", "n_embd": 768, "n_embd": 769, "n_layer": 12, "n_head": 12}\n')
    k.args("CONFIG-1", "model-is-directory", "a directory given as the model file", ["certify", "--model", "{corpus}"], 2)
    k.args("CONFIG-6", "unknown-target", "certify --target tpu-v9 (targets: reference-queue, reference-slot, queue)",
           ["certify", "--target", "tpu-v9"], 2)
    model_case("CONFIG-2", "calculon-model-without-num-blocks", "a Calculon model without num_blocks",
               cj({kk: v for kk, v in calc_model.items() if kk != "num_blocks"}))
    model_case("CONFIG-3", "hidden-as-string", "hidden given as the string \"768\"", cj(dict(calc_model, hidden="768")))
    model_case("CONFIG-4", "negative-hidden", "hidden -768", cj(dict(calc_model, hidden=-768)))
    model_case("CONFIG-5", "heads-not-divisible-by-tp", "12 attention heads against the default strategy's tp = 8",
               cj(dict(calc_model, attn_heads=12, attn_size=64)))
    model_case("CONFIG-6", "unknown-calculon-field", "a Calculon model with an unknown field", cj(dict(calc_model, vocab=50257)))
    native = ('[model]\nname = "tiny"\nfamily = "gpt"\nhidden = 64\nffn = 256\nheads = 8\nkv_heads = 8\nhead_dim = 8\n'
              'layers = 8\nseq_length = 128\n\n[extras]\nnote = "not a plancert table"\n')
    model_case("CONFIG-6", "unknown-toml-table", "a native TOML model with an [extras] table", native.encode(), ext="toml")
    k.args("CONFIG-7", "unknown-megatron-flag", "an unknown Megatron-LM flag",
           ["certify", "--tensor-model-parallel-size", "8", "--no-such-flag", "3"], 2)
    k.args("CONFIG-7", "megatron-flag-twice", "--micro-batch-size given twice",
           ["certify", "--micro-batch-size", "1", "--micro-batch-size", "2"], 2)
    k.args("CONFIG-7", "megatron-value-not-integer", "--micro-batch-size x", ["certify", "--micro-batch-size", "x"], 2)
    model_case("CONFIG-8", "layers-beyond-any-memory", "a Calculon model of 3 x 8 x 2^34 blocks: its ModelIR alone needs at least 2.7 PiB",
               cj(dict(calc_model, num_blocks=3 * 8 * 2**34)))
    k.args("CONFIG-8", "microbatches-beyond-any-memory", "2^40 - 1 microbatches: the pipeline schedule alone needs at least 48 TiB",
           ["certify", "--tensor-model-parallel-size", "1", "--pipeline-model-parallel-size", "1", "--data-parallel-size", "1",
            "--micro-batch-size", "1", "--global-batch-size", str(2**40 - 1), "--fp16"], 2)
    return k


RACE3_COMMANDS = 12000


def race3_input() -> bytes:
    """A slot plan of RACE3_COMMANDS independent host commands and a last one that depends on them all: as many
    chains as commands, and every clock live until the last one is computed."""
    big = Chain().get("slot")
    bp, n = big["payload"], RACE3_COMMANDS
    bp["commands"] = [{"attrs": {}, "dependencies": list(range(n)) if i == n else [], "device": i % 2, "id": f"h{i}",
                       "implementation": "host", "kind": "host", "lineage": derived("bind.command", "p.s0.fc1.fwd"), "reads": [],
                       "repeat": 1, "signals": [], "waits": [], "work": work(), "writes": []} for i in range(n + 1)]
    bp.update(tokens=[], memory=[])
    bp["slot"] = {"issue": [issue(i, 0) for i in range(n + 1)], "routes": [], "slots_per_cycle": 1}
    return encode(redigest(big))


GENERATED = {"RACE-3-clocks-over-limit.json": race3_input}


def generated_input(name: str) -> bytes:
    """The bytes of an input that a sidecar lists under "generated" (too large to commit)."""
    return GENERATED[name]()


def readme(k: Corpus) -> bytes:
    lines = [
        "# Negative corpus (generated: do not edit)",
        "",
        "Written by `tools/make_corpus.py`; checked by `tools/run_corpus.py` (ctest `corpus`,",
        "label `corpus`), and `corpus_generator_sync` fails when these files differ from a",
        "fresh run of the generator. To change the corpus, change the generator and run",
        "`/usr/bin/python3 tools/make_corpus.py`.",
        "",
        "- `valid-*.json` must be accepted (`plancert verify`, with `--parent` the",
        "  `.parent.json` beside it);",
        "- `<ID>-*.json` must be rejected with exactly the code `<ID>` (for exit-code-1",
        "  families every diagnostic has that code) and the exit code of its family;",
        "- `.parent.json` is the parent snapshot (transition obligations), `.args` a",
        "  command line to run instead of `verify` (`{corpus}` = this directory),",
        "  `.witness.json` a topological-order witness for the gate (`corpus_gate`).",
        "",
        "| file | input |",
        "|---|---|",
    ]
    for name, what in k.index:
        lines.append(f"| `{name}` | {what.replace('|', '/')} |")
    return ("\n".join(lines) + "\n").encode("utf-8")


def generate() -> dict[str, bytes]:
    k = build(Chain())
    files = dict(k.files)
    files["README.md"] = readme(k)
    for name, data in k.files.items():  # every input stays small (README.md is the index, not an input)
        assert len(data) < 20 * 1024, f"{name} is {len(data)} bytes"
    return files


def write(out: Path, files: dict[str, bytes]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for p in out.iterdir():
        if p.is_file() and p.name not in KEEP and p.name not in files:
            p.unlink()
    for name, data in sorted(files.items()):
        path = out / name
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)


def check(corpus: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        write(fresh, generate())
        problems = []
        have = {p.name for p in corpus.iterdir() if p.is_file() and p.name not in KEEP}
        want = {p.name for p in fresh.iterdir()}
        for name in sorted(want - have):
            problems.append(f"missing in {corpus}: {name}")
        for name in sorted(have - want):
            problems.append(f"not produced by the generator: {name}")
        for name in sorted(have & want):
            if not filecmp.cmp(corpus / name, fresh / name, shallow=False):
                problems.append(f"differs from the generator's output: {name}")
    for p in problems:
        print(p)
    print(f"{len(want)} generated file(s), {len(problems)} difference(s)" + ("" if not problems else
          ": run /usr/bin/python3 tools/make_corpus.py and review the diff"))
    return 1 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="directory to write (default: tests/corpus)")
    ap.add_argument("--check", action="store_true", help="compare --out with a fresh run instead of writing it")
    args = ap.parse_args()
    if args.check:
        return check(args.out)
    files = generate()
    write(args.out, files)
    print(f"wrote {len(files)} file(s) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
