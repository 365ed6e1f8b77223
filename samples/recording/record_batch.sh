#!/usr/bin/env bash
# The batch of real recordings made on the GPU machine (one H100/H200, torch 2.11):
#   bash samples/recording/record_batch.sh OUTDIR
# Each line is one fresh process. Results: OUTDIR/NAME.{pickle,labels.csv,stats.json}.
set -u
out=${1:?OUTDIR}
mkdir -p "$out"
R="python3 samples/recording/record_oracle.py"
cat > "$out/jobs.txt" <<JOBS
$R oracle_cnn_bs32 cnn 32 python $out
$R oracle_mlp_bs64_sgd mlp 64 python $out --optimizer sgd
$R oracle_deepmlp_bs128 deepmlp 128 python $out --optimizer adam
$R oracle_qwen_bs8_amp qwen 8 python $out --amp
$R oracle_qwen_bs8_ckpt qwen 8 python $out --checkpointing
$R oracle_qwen4_bs2_all qwen4 2 all $out
$R oracle_qwen_infer qwen 8 python $out --inference --steps 4
$R oracle_cnn_infer_nograd cnn 64 python $out --inference --steps 4
$R oracle_qwen_bs4_late qwen 4 python $out --late-start
$R overflow_qwen_bs4 qwen 4 python $out --max-entries 3000
env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True $R expandable_qwen_bs4 qwen 4 python $out
JOBS
xargs -P 4 -I{} bash -c '{} 2>&1 | tail -3' < "$out/jobs.txt"
