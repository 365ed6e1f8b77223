#!/usr/bin/env python3
"""Does recording break a checkpointed training? (issue 26, part 5)

    python3 agent/tools/checkpoint_modes.py OUTDIR [--steps 4] [--models gpt2,resnet50]

Runs, each in its own process, two trainings with non-reentrant activation checkpointing:
  gpt2      transformers' GPT-2 from a GPT2Config with random weights (no download),
            model.gradient_checkpointing_enable(use_reentrant=False), AdamW, dropout on
  resnet50  a ResNet-50 (torchvision's when installed, else the same layers written here),
            forward through torch.utils.checkpoint.checkpoint_sequential(use_reentrant=False)
under every recording mode: none; torch's own _record_memory_history(stacks="python");
the agent's tracker, light, markers and poll modes, each agent mode also with the
checkpointing guard off (MEMSCOPE_AGENT_CKPT_GUARD=0) to show whether that mode hits the
crash. A protocol client reads each agent's stream to its end. Per run: exit status, the
last lines of stderr (a SystemError is the crash), steps done, events received, and the
agent's notes (the guard's switch, sent as ERROR in the stream). OUTDIR/checkpoint_modes.json.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.dirname(HERE)

CHILD = r'''
import os, sys, time, torch
model_name, steps, record = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if record == "torch":
    torch.cuda.memory._record_memory_history(stacks="python")
torch.manual_seed(0)
dev = "cuda"
if model_name == "gpt2":
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_layer=6, n_embd=512, n_head=8, vocab_size=8192, n_positions=256,
                     resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1)
    model = GPT2LMHeadModel(cfg).to(dev)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    def step():
        x = torch.randint(0, 8192, (8, 256), device=dev)
        loss = model(input_ids=x, labels=x).loss
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
else:
    import torch.nn as nn
    from torch.utils.checkpoint import checkpoint_sequential
    try:
        import torchvision
        net = torchvision.models.resnet50(weights=None)
    except Exception:
        class B(nn.Module):
            def __init__(s, i, m, stride, down):
                super().__init__()
                o = m * 4
                s.c1 = nn.Conv2d(i, m, 1, bias=False); s.b1 = nn.BatchNorm2d(m)
                s.c2 = nn.Conv2d(m, m, 3, stride, 1, bias=False); s.b2 = nn.BatchNorm2d(m)
                s.c3 = nn.Conv2d(m, o, 1, bias=False); s.b3 = nn.BatchNorm2d(o)
                s.r = nn.ReLU(inplace=True)
                s.d = nn.Sequential(nn.Conv2d(i, o, 1, stride, bias=False), nn.BatchNorm2d(o)) if down else None
            def forward(s, x):
                y = s.r(s.b1(s.c1(x))); y = s.r(s.b2(s.c2(y))); y = s.b3(s.c3(y))
                return s.r(y + (s.d(x) if s.d is not None else x))
        layers, i = [], 64
        for m, n, st in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for k in range(n):
                layers.append(B(i, m, st if k == 0 else 1, k == 0)); i = m * 4
        class R(nn.Module):
            def __init__(s):
                super().__init__()
                s.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False); s.bn1 = nn.BatchNorm2d(64); s.relu = nn.ReLU(inplace=True)
                s.maxpool = nn.MaxPool2d(3, 2, 1); s.layer = nn.Sequential(*layers)
                s.avgpool = nn.AdaptiveAvgPool2d(1); s.fc = nn.Linear(2048, 1000)
        net = R()
    # torchvision's ReLUs are in place: non-reentrant checkpointing then fails on its own
    # (a saved tensor modified in place), with no recording at all. Out of place, the only
    # failure left to see is the recording's.
    for m in net.modules():
        if isinstance(m, nn.ReLU):
            m.inplace = False
    net = net.to(dev).train()
    seq = nn.Sequential(*[m for name, m in net.named_children() if name not in ("avgpool", "fc")])
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    def step():
        x = torch.randn(16, 3, 224, 224, device=dev, requires_grad=True)
        y = checkpoint_sequential(seq, 4, x, use_reentrant=False)
        out = net.fc(torch.flatten(net.avgpool(y), 1))
        loss = nn.functional.cross_entropy(out, torch.randint(0, 1000, (16,), device=dev))
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
done = 0
t0 = time.time()
for i in range(steps):
    step(); done += 1
torch.cuda.synchronize()
print(json.dumps({"steps": done, "s": time.time() - t0}) if False else "STEPS %d %.2f" % (done, time.time() - t0), flush=True)
'''

MODES = {
    "none": ([], {}, "none"),
    "torch": ([], {}, "torch"),
    "tracker-noguard": (["--mode", "tracker"], {"MEMSCOPE_AGENT_CKPT_GUARD": "0"}, "none"),
    "tracker": (["--mode", "tracker"], {}, "none"),
    "markers": (["--mode", "tracker", "--markers"], {}, "none"),
    "light-noguard": (["--mode", "tracker", "--light"], {"MEMSCOPE_AGENT_CKPT_GUARD": "0"}, "none"),
    "light": (["--mode", "tracker", "--light"], {}, "none"),
    "poll-noguard": (["--mode", "poll"], {"MEMSCOPE_AGENT_CKPT_GUARD": "0"}, "none"),
    "poll": (["--mode", "poll"], {}, "none"),
}


def read_stream(sock_path, out):
    sys.path.insert(0, AGENT)
    from memscope_agent import client
    from memscope_agent import protocol as P
    errors = []
    try:
        s = client.connect(sock_path, timeout=120)

        def on_message(kind, payload, dec):
            if kind == P.ERROR:
                errors.append(json.loads(payload.decode()).get("message"))
        dec = client.receive(s, on_message=on_message, timeout=300)
        events = getattr(dec, "events", None)
        out["events"] = sum(len(v) for v in events.values()) if isinstance(events, dict) else getattr(dec, "event_count", None)
        out["end"] = dec.end if isinstance(dec.end, (dict, type(None))) else str(dec.end)
    except Exception as e:
        out["client_error"] = "%s: %s" % (type(e).__name__, e)
    out["errors"] = errors


def run(model, mode, steps, tmp):
    args, env_extra, record = MODES[mode]
    child = os.path.join(tmp, "child.py")
    env = dict(os.environ, PYTHONPATH=AGENT + os.pathsep + os.environ.get("PYTHONPATH", ""), MEMSCOPE_AGENT_LINGER="5")
    env.update(env_extra)
    res = {"model": model, "mode": mode}
    reader = None
    if mode in ("none", "torch"):
        cmd = [sys.executable, child, model, str(steps), record]
    else:
        sock = os.path.join(tmp, "%s-%s.sock" % (model, mode))
        cmd = [sys.executable, "-m", "memscope_agent", "--socket", sock] + args + [child, model, str(steps), record]
        reader = threading.Thread(target=read_stream, args=(sock, res), daemon=True)
        reader.start()
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
        res["rc"] = p.returncode
        res["stderr_tail"] = p.stderr.strip().splitlines()[-6:]
        res["systemerror"] = "SystemError: " in p.stderr  # the crash itself, not the guard note naming it
        for line in p.stdout.splitlines():
            if line.startswith("STEPS"):
                res["steps"] = int(line.split()[1])
                res["train_s"] = float(line.split()[2])
        res["guard_note"] = "non-reentrant activation checkpointing detected" in p.stderr
    except subprocess.TimeoutExpired:
        res["rc"] = "timeout"
    res["wall_s"] = round(time.time() - t0, 1)
    if reader:
        reader.join(30)
    print(json.dumps(res), flush=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--models", default="gpt2,resnet50")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--budget-s", type=float, default=300)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="ckpt-")
    os.chmod(tmp, 0o700)
    with open(os.path.join(tmp, "child.py"), "w") as f:
        f.write(CHILD)
    results = []
    t0 = time.time()
    for mode in a.modes.split(","):
        for model in a.models.split(","):
            if time.time() - t0 > a.budget_s:
                results.append({"model": model, "mode": mode, "skipped": "budget"})
                continue
            results.append(run(model, mode, a.steps, tmp))
    import torch
    meta = {"torch": torch.__version__, "python": sys.version.split()[0]}
    try:
        import transformers
        meta["transformers"] = transformers.__version__
    except Exception:
        pass
    try:
        meta["gpu"] = torch.cuda.get_device_name(0)
    except Exception:
        pass
    with open(os.path.join(a.out, "checkpoint_modes.json"), "w") as f:
        json.dump({"meta": meta, "runs": results}, f, indent=1)


if __name__ == "__main__":
    main()
