"""A Lightning run as a user writes it, with no labeller hooks: Trainer defaults (progress bar,
logger, self.log every step, model summary), automatic optimization, AdamW, a small
transformer LM on random tokens, 5 steps. The recording is torch's default
_record_memory_history() (stacks="all") around trainer.fit, dumped with _dump_snapshot.

    python record_lightning_plain.py OUT.pickle [PRECISION]
"""
import sys
import tempfile

import torch
import torch.nn as nn

try:
    import lightning.pytorch as pl
except ImportError:
    import pytorch_lightning as pl

VOCAB, SEQ, BATCH, STEPS = 4096, 128, 8, 5


class LitLM(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 256)
        layer = nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
        self.body = nn.TransformerEncoder(layer, 4)
        self.head = nn.Linear(256, VOCAB)

    def forward(self, x):
        return self.head(self.body(self.embed(x)))

    def training_step(self, batch, i):
        logits = self(batch[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


def main():
    out = sys.argv[1]
    precision = sys.argv[2] if len(sys.argv) > 2 else "32-true"
    torch.manual_seed(0)
    data = torch.randint(0, VOCAB, (BATCH * STEPS, SEQ))
    loader = torch.utils.data.DataLoader(data, batch_size=BATCH)
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_steps=STEPS, precision=precision,
                         default_root_dir=tempfile.mkdtemp(), enable_checkpointing=False)
    torch.cuda.memory._record_memory_history(max_entries=200000)
    trainer.fit(LitLM(), loader)
    torch.cuda.memory._dump_snapshot(out)
    torch.cuda.memory._record_memory_history(enabled=None)
    print(out, "steps", trainer.global_step, "torch", torch.__version__, "lightning", pl.__version__)


if __name__ == "__main__":
    main()
