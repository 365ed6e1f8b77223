#!/usr/bin/env bash
# device-side wrapper: record everything into /tmp/rec, then pack it into $OUT
set -u
export PYTHONUNBUFFERED=1
{ date; nvidia-smi -L; python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, torch.cuda.get_device_name())"
  python3 -c "import lightning; print('lightning', lightning.__version__)"; python3 -c "import pytorch_lightning as p; print('pytorch_lightning', p.__version__)"
  python3 -c "import peft; print('peft', peft.__version__)"; python3 -c "import accelerate; print('accelerate', accelerate.__version__)"; } > /tmp/env.txt 2>&1
cat /tmp/env.txt
mkdir -p /tmp/rec && cp /tmp/env.txt /tmp/rec/env.txt
JOB_TIMEOUT=${JOB_TIMEOUT:-330} timeout ${TOTAL_TIMEOUT:-520} bash .rec/record_rec.sh /tmp/rec
echo "record_rec rc=$?"
cat /tmp/rec/status.txt
for f in /tmp/rec/logs/*.log; do echo "== $f"; tail -4 "$f"; done
cd /tmp/rec && tar czf /tmp/rec.tar.gz . && ls -la /tmp/rec.tar.gz
cd /tmp && split -b 15M -d rec.tar.gz "$OUT/rec.tar.gz.part" && cp /tmp/rec/status.txt /tmp/rec/meta.jsonl "$OUT/" ; ls -la "$OUT"
