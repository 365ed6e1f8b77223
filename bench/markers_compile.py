# Does markers mode (agent/memscope_agent/markers.py) work under torch.compile? A compiled
# MLP trained 12 steps (AdamW), recorded by torch itself, one process per mode: "full"
# (context="all", Python stacks, no markers) or "markers" (context=None, markers installed).
#   CUDA_VISIBLE_DEVICES=0 python3 bench/markers_compile.py full|markers OUTDIR   (from the repository root)
# Writes OUTDIR/compile_MODE.pickle and compile_MODE.json (step times, annotations by name,
# torch's requested peak). The pair recorded on an H200 is tests/data/markers/compile_*.
import os, sys, json, time
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "agent"))
mode, out = sys.argv[1], sys.argv[2]
if mode == "markers":
    from memscope_agent import markers
    print("installed", markers.install(torch))
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 4096), torch.nn.GELU(),
                        torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.AdamW(m.parameters())
cm = torch.compile(m)
torch.cuda.memory._record_memory_history(enabled="all", context=None if mode == "markers" else "all", stacks="python")
t0 = time.time()
steps = []
for i in range(12):
    s = time.time()
    x = torch.randn(512, 1024, device="cuda")
    loss = cm(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    torch.cuda.synchronize()
    steps.append(time.time() - s)
torch.cuda.memory._dump_snapshot(f"{out}/compile_{mode}.pickle")
snap = torch.cuda.memory._snapshot()
torch.cuda.memory._record_memory_history(enabled=None)
ann = {}
for a in snap.get("external_annotations", []) or []:
    ann[a.get("name")] = ann.get(a.get("name"), 0) + 1
st = torch.cuda.memory_stats()
json.dump({"mode": mode, "steps_s": steps, "annotations": ann, "requested_peak": st["requested_bytes.all.peak"],
           "entries": sum(len(t) for t in snap["device_traces"])}, open(f"{out}/compile_{mode}.json", "w"), indent=1)
print(mode, "ok", ann)
