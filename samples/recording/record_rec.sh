#!/usr/bin/env bash
# The second batch of real recordings on the GPU machine (one H100, torch 2.11), all jobs in
# fresh processes, 4 at a time, each failure leaving the others running:
#   bash samples/recording/record_rec.sh OUTDIR
# Results: OUTDIR/NAME.{pickle,labels.csv,stats.json}, OUTDIR/sweep.json, OUTDIR/logs/NAME.log,
# OUTDIR/meta.jsonl (one line per run: what ran, its settings, torch's counters).
set -u
out=${1:?OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/logs"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
F="python3 $here/record_frameworks.py"
R="python3 $here/record_oracle.py"
cat > "$out/jobs.txt" <<JOBS
sweep python3 $here/record_sweep.py $out --cap-gib 6
fw_compile_qwen $F compile_qwen $out
fw_compile_mlp $F compile_mlp $out
fw_compile_mlp_acts $F compile_mlp_acts $out
fw_hf_trainer $F hf_trainer $out
fw_pl_auto $F pl_auto $out
fw_pl_auto_bf16 $F pl_auto_bf16 $out
fw_pl_auto_clip $F pl_auto_clip $out
fw_pl_auto_accum2 $F pl_auto_accum2 $out
fw_pl_manual $F pl_manual $out
fw_lbfgs $F lbfgs $out --steps 2
fw_closure_adam $F closure_adam $out
fw_frozen_adapter $F frozen_adapter $out
fw_accum_plain $F accum_plain $out
fw_ema $F ema $out
llm_bs2 $R llm_bs2 qwen 2 python $out --no-labels --max-entries 200000
cmp_qwen_bs8_fp32 $R cmp_qwen_bs8_fp32 qwen 8 python $out
cmp_qwen_bs8_amp $R cmp_qwen_bs8_amp qwen 8 python $out --amp
cmp_qwen_bs8_ckpt $R cmp_qwen_bs8_ckpt qwen 8 python $out --checkpointing
alloc_default env -u PYTORCH_CUDA_ALLOC_CONF $R alloc_default qwen 4 python $out --no-labels
alloc_expandable env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True $R alloc_expandable qwen 4 python $out --no-labels
alloc_maxsplit64 env PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:64 $R alloc_maxsplit64 qwen 4 python $out --no-labels
alloc_roundup4 env PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:4 $R alloc_roundup4 qwen 4 python $out --no-labels
alloc_gc06_maxsplit128 env PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.6,max_split_size_mb:128 $R alloc_gc06_maxsplit128 qwen 4 python $out --no-labels
JOBS
# one line = NAME COMMAND...; a job's log is logs/NAME.log, its status a line in status.txt
run_job() {
    name=$1; shift
    start=$(date +%s)
    timeout "${JOB_TIMEOUT:-330}" "$@" > "$out/logs/$name.log" 2>&1
    rc=$?
    echo "$name rc=$rc s=$(( $(date +%s) - start ))" | tee -a "$out/status.txt"
}
export -f run_job
export out
xargs -P "${JOBS_P:-4}" -L 1 bash -c 'run_job "$@"' _ < "$out/jobs.txt"
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
with open(os.path.join(out, "meta.jsonl"), "w") as f:
    for p in sorted(glob.glob(os.path.join(out, "*.stats.json"))):
        d = json.load(open(p))
        d.pop("memory_stats", None)
        f.write(json.dumps(d, sort_keys=True) + "\n")
PY
