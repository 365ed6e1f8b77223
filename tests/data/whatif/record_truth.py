"""Truth for `memscope whatif`'s model-level changes (issue 28).

    PYTHONUNBUFFERED=1 python3 record_truth.py OUTDIR

Needs a CUDA GPU, torch, torchvision and transformers (random weights from configs, no
downloads). For three small models (a Qwen2-style decoder from a transformers config, a
torchvision ResNet-18, a torchvision ViT) it records a base training run (3 steps, fp32, AdamW,
foreach) with torch.cuda.memory._record_memory_history, then runs the same training under each
change (checkpointing all / N blocks, precision, optimizer, accumulation, batch, sequence) and
combinations, and keeps torch's max_memory_allocated / max_memory_reserved of each (the truth).
TRUTH_STACKS=all records with C++ frames (torch's default), whose ATen op names the what-if reads.
TRUTH_MODELS=llama,effnet TRUTH_FILE=truth_heldout2.json records the second held-out set (a Llama
with tied embeddings, an EfficientNet-B0), added after the first set's lessons were in the model.
TRUTH_MODELS=convnext,swin,t5 TRUTH_FILE=truth_heldout3.json records the third held-out set (ConvNeXt-T,
Swin-T, a T5 encoder-decoder), recorded before the second set's misses were worked on.
TRUTH_MODELS=neox,distilbert,resnet50 TRUTH_FILE=truth_heldout4.json records the fourth held-out set
(a GPT-NeoX decoder, a DistilBERT classifier, a ResNet-50), recorded before any of its runs was
looked at, to measure the model on models it never saw.
TRUTH_MODELS=llm,gpt2,bert,llama,neox,t5,plmistral,plmobilenet TRUTH_SET=frameworks
TRUTH_FILE=truth_frameworks.json records the fifth held-out set, the changes made the way frameworks
make them: transformers' own gradient_checkpointing_enable() (its default, reentrant, and
non-reentrant) on the decoders, encoders and T5 above, and two models trained by Lightning's
Trainer (a Mistral decoder, its loss in training_step; torchvision's MobileNetV3), whose precision
is Trainer(precision=...) and whose accumulation is accumulate_grad_batches.
TRUTH_MODELS=hfopt,hfvit TRUTH_FILE=truth_trainer.json records two models trained by transformers'
Trainer (the changes are TrainingArguments); TRUTH_MODELS=cllm TRUTH_FILE=truth_compiled.json the
first decoder under torch.compile; TRUTH_MODELS=lora TRUTH_FILE=truth_lora.json that decoder
fine-tuned with LoRA; TRUTH_BASE_PRECISION=amp-bf16 TRUTH_MODELS=gpt2,convnext,plmistral
TRUTH_FILE=truth_amp.json runs the base and every change under autocast unless the change names a
precision (bases in amp_base/).
TRUTH_MODELS=qwen TRUTH_FILE=truth_scale.json records the seventh held-out set, a 170M Qwen2 with
its real vocabulary at 1,024 tokens (a peak of tens of GB, the scale users run), in a plain loop;
TRUTH_MODELS=qwentr TRUTH_FILE=truth_scale_trainer.json the same model trained by transformers' Trainer.
TRUTH_BASE_PRECISION=amp-bf16 TRUTH_MODELS=plgpt,qwen TRUTH_FILE=truth_scale_amp.json records the eighth,
bases under autocast at that scale: a GPT-2 small trained by Lightning (bf16-mixed, the loss in
training_step) and the Qwen2 above (bases in amp_base/).
TRUTH_MODELS=qwen16 TRUTH_FILE=truth_scale16.json records the ninth, shaped like the issue's hidden
run: a 220M Qwen2 of 16 layers at 8 x 512 tokens.
TRUTH_MODELS=qwen3,mnv2,regnet TRUTH_FILE=truth_heldout5.json records the tenth, held out like the
fourth (recorded before any of its runs was looked at): a Qwen3 decoder, torchvision's MobileNetV2
and RegNetY-400MF.
TRUTH_MODELS=gemma,bloom,densenet TRUTH_FILE=truth_heldout6.json records the eleventh, held out the
same way: a Gemma decoder (one key/value head, a 65,536-token vocabulary), a BLOOM decoder (ALiBi
attention in plain matmuls) and torchvision's DenseNet-121.
TRUTH_MODELS=falcon,whisper,deeplab TRUTH_FILE=truth_heldout7.json records the twelfth: a Falcon
decoder (parallel attention and MLP), a Whisper speech-to-text model and torchvision's DeepLabV3.
TRUTH_MODELS=mixtral,lstm,shufflenet TRUTH_FILE=truth_heldout8.json records the thirteenth: a
Mixtral mixture-of-experts decoder, an LSTM language model and torchvision's ShuffleNetV2.
TRUTH_MODELS=nanogpt,phi3,unet TRUTH_FILE=truth_heldout9.json records the fourteenth: a GPT written as
nanoGPT writes it, a Phi-3 decoder and a U-Net of its own code (skip connections, two loops of blocks).
TRUTH_MODELS=deberta,bart,maxvit TRUTH_FILE=truth_heldout10.json records the fifteenth: a DeBERTa-v2
classifier, a BART encoder-decoder and torchvision's MaxViT.
TRUTH_MODELS=peft,timmvit,coatnet TRUTH_FILE=truth_heldout11.json records the sixteenth: a Llama
fine-tuned with peft's LoRA, timm's ViT-S/16 and timm's CoAtNet-nano.
TRUTH_MODELS=gemma2,biencoder,effnetv2 TRUTH_FILE=truth_heldout12.json records the seventeenth: a
Gemma-2 decoder with eager attention, a BERT bi-encoder with in-batch negatives and timm's
EfficientNetV2.
TRUTH_MODELS=bigcode,vgg,wav2vec TRUTH_FILE=truth_heldout13.json records the eighteenth, recorded
before any of its runs was looked at: a GPTBigCode (StarCoder) decoder with multi-query attention,
torchvision's VGG-11 with batch norm (a 411 MB Linear weight in its head) and a Wav2Vec2 audio
classifier (convolutions over raw samples, then a transformer encoder).
TRUTH_MODELS=stablelm,starcoder2,roberta TRUTH_FILE=truth_heldout14.json records the nineteenth,
recorded before any of its runs was looked at: a StableLM decoder (partial rotary), a Starcoder2
decoder with a sliding window of 128 tokens and a RoBERTa masked language model.
TRUTH_MODELS=r3d,mamba,segformer TRUTH_FILE=truth_heldout15.json records the twentieth, recorded
before any of its runs was looked at: torchvision's R3D-18 video classifier (3D convolutions), a
Mamba state-space decoder (its scan token by token in PyTorch) and a SegFormer segmenter.
TRUTH_MODELS=accllm,accconvnext TRUTH_FILE=truth_accelerate.json records the twenty-first: a Qwen2
decoder and ConvNeXt-T trained by accelerate's Accelerator (its mixed precision, its accumulation).
TRUTH_MODELS=mambaw TRUTH_FILE=truth_mamba_wide.json records a Mamba of another shape, after the
reference scan's rule (session 24) was written.
TRUTH_MODELS=inception,torchtx,clip TRUTH_FILE=truth_heldout16.json records the twenty-third,
recorded before any of its runs was looked at: torchvision's Inception v3 with its auxiliary
classifier, a decoder of PyTorch's own nn.TransformerEncoderLayer and a CLIP trained on its
contrastive loss.
TRUTH_MODELS=googlenet,dinov2,gptj TRUTH_FILE=truth_heldout17.json records the twenty-fourth,
recorded before any of its runs was looked at and after the rule for blocks called one statement
each was written: torchvision's GoogLeNet with its two auxiliary classifiers, a DINOv2 image
classifier and a GPT-J decoder.
TRUTH_MODELS=swinv2,olmo2,convnextv2 TRUTH_FILE=truth_heldout18.json records the twenty-fifth,
recorded before any of its runs was looked at: torchvision's Swin V2-T, an OLMo-2 decoder and a
ConvNeXt V2 classifier from transformers.
TRUTH_MODELS=gptneo,mnasnet,electra TRUTH_FILE=truth_heldout19.json records the twenty-sixth,
recorded before any of its runs was looked at and after session 26's accumulation rules: a
GPT-Neo decoder (global and local attention in turn), torchvision's MNASNet 1.0 and an ELECTRA
discriminator (a binary loss per token).
TRUTH_MODELS=granite,modernbert,squeezenet TRUTH_FILE=truth_heldout20.json records the
twenty-seventh, recorded before any of its runs was looked at (session 29): a Granite decoder
(embedding, residual, attention and logits multipliers), a ModernBERT masked language model
(local attention in two layers of three, a gated GELU) and torchvision's SqueezeNet 1.1.
TRUTH_MODELS=qwen2moe,cohere,resnext TRUTH_FILE=truth_heldout21.json records the twenty-eighth,
recorded before any of its runs was looked at (session 29): a Qwen2-MoE decoder (eight experts,
two a token, and a shared expert), a Cohere decoder (attention and MLP in parallel from one layer
norm, scaled logits) and torchvision's ResNeXt-50 32x4d (grouped convolutions).
TRUTH_MODELS=marian,phi,convmixer TRUTH_FILE=truth_heldout22.json records the twenty-ninth,
recorded before any of its runs was looked at (session 29): a Marian translation model
(sinusoidal positions, an encoder and a decoder), a Phi decoder (parallel attention and MLP,
partial rotary) and timm's ConvMixer-768/32 (32 identical blocks of a depthwise and a
pointwise convolution).
TRUTH_MODELS=gemma3,mobilevit,xlmr TRUTH_FILE=truth_heldout23.json records the thirtieth,
recorded before any of its runs was looked at (session 30): a Gemma-3 text decoder (five
sliding-window layers to one global), a MobileViT-S (convolutions and transformers over unfolded
patches) and an XLM-RoBERTa masked language model with its 250,002-token vocabulary.
TRUTH_MODELS=nemotron,pvtv2,longformer TRUTH_FILE=truth_heldout24.json records the
thirty-first, recorded before any of its runs was looked at (session 30): a Nemotron decoder
(squared-ReLU MLP, partial rotary), a PVT-v2-b1 (attention over keys of reduced resolution)
and a Longformer masked language model (sliding-window attention in overlapping chunks).
TRUTH_MODELS=qwen3moe,beit,vitmae TRUTH_FILE=truth_heldout25.json records the thirty-second,
recorded before any of its runs was looked at (session 30): a Qwen3-MoE decoder, a BEiT
classifier (relative position bias, layer scale) and a ViT masked autoencoder pretrained on
random images (three patches in four masked).
TRUTH_MODELS=gpt2,bert TRUTH_FILE=truth_heldout.json records the two held-out models (a GPT-2
and a BERT classifier, added after the model was written). Then a batch sweep under a cap
(set_per_process_memory_fraction) for the base and for checkpointing. Every run starts from an
empty allocator (empty_cache, the cuBLAS workspaces cleared, peak stats reset), so each is
comparable with a replay of the recording from its first event. Writes OUTDIR/NAME.pickle for
the recorded runs and OUTDIR/truth.json.

    python3 record_truth.py OUTDIR --record RUN...

records only the named changed runs (e.g. vit_bf16+ckpt_all+batch_x2), each with its own
history, to OUTDIR/whatif_RUN.pickle, and their counters to OUTDIR/recorded.json: the real
trace of a change, to set against the replayed prediction category by category.
"""
import contextlib
import gc
import json
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
ONLY = sys.argv[sys.argv.index("--record") + 1:] if "--record" in sys.argv else None
MODELS = os.environ.get("TRUTH_MODELS", "llm,cnn,vit").split(",")
TRUTH_FILE = os.environ.get("TRUTH_FILE", "truth.json")
# "all": C++ frames too (torch's default), the ATen op of each; "none": no stacks at all
STACKS = os.environ.get("TRUTH_STACKS", "python")
os.makedirs(OUT, exist_ok=True)
DEV = "cuda"
STEPS = 3


class Ckpt(nn.Module):
    """Checkpoints the wrapped block (non-reentrant: its activations are recomputed in backward)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, *args, **kwargs):
        # a list argument is copied: DenseNet's block appends to the list it passed, and the
        # recompute in backward must see the list the forward saw
        args = [list(a) if isinstance(a, list) else a for a in args]
        return checkpoint(self.inner, *args, use_reentrant=False, **kwargs)

    def __getattr__(self, name):
        # the model may read its layers' attributes (ModernBERT's attention_type)
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(super().__getattr__("inner"), name)


def in_order(*containers):
    """The blocks of each container, in the order the forward runs them: (container, index)."""
    return [(c, i) for c in containers for i in range(len(c))]


def checkpoint_first(blocks, n):
    """Wraps the first n of a model's blocks (n < 0: all of them) in Ckpt."""
    for container, i in blocks if n < 0 else blocks[:n]:
        container[i] = Ckpt(container[i])


# ---------------------------------------------------------------- models
# Each model: name, batch, seq (None: no sequence), build(dtype), blocks(m) (the repeated blocks
# checkpointing wraps), batch_of(b, seq, dtype) and loss(m, batch).
class CausalLM:
    """A decoder from a transformers config trained on random tokens, its loss inside the model."""
    batch = 8
    seq = 256

    def batch_of(self, b, seq, dtype):
        return torch.randint(0, self.vocab, (b, seq), device=DEV)

    def loss(self, m, ids):
        return m(input_ids=ids, labels=ids, use_cache=False).loss

    def blocks(self, m):
        return in_order(m.model.layers)


class HFDecoder(CausalLM):
    """A decoder of transformers' built from its config class and model class (their names) with
    the arguments in `config`, seeded, so that every run starts from the same weights."""
    config_class = model_class = None
    config = {}

    def build(self, dtype):
        import transformers

        cfg = getattr(transformers, self.config_class)(vocab_size=self.vocab, **self.config)
        torch.manual_seed(0)
        return getattr(transformers, self.model_class)(cfg).to(device=DEV, dtype=dtype)


class SequenceClassifier:
    """An encoder from a transformers config with a 4-class head, its loss inside the model."""
    batch = 16
    seq = 128
    vocab = 30522

    def batch_of(self, b, seq, dtype):
        ids = torch.randint(0, self.vocab, (b, seq), device=DEV)
        y = torch.randint(0, 4, (b,), device=DEV)
        return (ids, y)

    def loss(self, m, xy):
        ids, y = xy
        return m(input_ids=ids, labels=y).loss


class NextTokenLM(CausalLM):
    """A decoder whose loss is computed outside the model on the ids shifted by one, as a
    custom loop or a Lightning training_step computes it."""

    def batch_of(self, b, seq, dtype):
        ids = torch.randint(0, self.vocab, (b, seq + 1), device=DEV)
        return ids

    def loss(self, m, ids):
        x, y = ids[:, :-1], ids[:, 1:]
        logits = m(input_ids=x, use_cache=False).logits
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


class Qwen2Decoder:
    """A Qwen2 decoder from a transformers config, its shape in the class's attributes."""
    hidden = 512
    intermediate = 1408
    layers = 4
    heads = 8
    kv_heads = 4
    positions = 2048
    tied = False

    def build(self, dtype):
        from transformers import AutoModelForCausalLM, Qwen2Config

        cfg = Qwen2Config(vocab_size=self.vocab, hidden_size=self.hidden, intermediate_size=self.intermediate,
                          num_hidden_layers=self.layers, num_attention_heads=self.heads,
                          num_key_value_heads=self.kv_heads, max_position_embeddings=self.positions,
                          tie_word_embeddings=self.tied)
        cfg.use_cache = False
        torch.manual_seed(0)
        return AutoModelForCausalLM.from_config(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.model.layers)


class LLM(Qwen2Decoder, NextTokenLM):
    name = "llm"
    vocab = 8000


class GPT2(HFDecoder):
    """Held out: recorded after the model was written, to check it on a model it never saw."""
    name = "gpt2"
    vocab = 16384

    config_class = "GPT2Config"
    model_class = "GPT2LMHeadModel"
    config = dict(n_positions=1024, n_embd=512, n_layer=6, n_head=8, use_cache=False)

    def blocks(self, m):
        return in_order(m.transformer.h)

    def loss(self, m, ids):
        # the loss inside the model's forward (labels=), as Hugging Face models compute it
        return m(input_ids=ids, labels=ids).loss


class BERT(SequenceClassifier):
    """Held out: an encoder with a classification head (sequence classification)."""
    name = "bert"

    def build(self, dtype):
        from transformers import BertConfig, BertForSequenceClassification

        cfg = BertConfig(vocab_size=self.vocab, hidden_size=512, num_hidden_layers=6, num_attention_heads=8,
                         intermediate_size=2048, num_labels=4)
        torch.manual_seed(0)
        return BertForSequenceClassification(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.bert.encoder.layer)


class Llama(HFDecoder):
    """Held out (second set): a Llama decoder with tied embeddings, its loss inside the model."""
    name = "llama"
    vocab = 32000

    config_class = "LlamaConfig"
    model_class = "LlamaForCausalLM"
    config = dict(hidden_size=512, intermediate_size=1376, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=8, max_position_embeddings=2048, tie_word_embeddings=True, use_cache=False)


class ImageClassifier:
    """A torchvision classifier of 100 classes trained on random images (batch 32 at 128 x 128)."""
    batch = 32
    seq = None
    size = 128

    def batch_of(self, b, seq, dtype):
        x = torch.randn(b, 3, self.size, self.size, device=DEV, dtype=dtype)
        y = torch.randint(0, 100, (b,), device=DEV)
        return (x, y)

    def loss(self, m, xy):
        x, y = xy
        return F.cross_entropy(m(x), y)


class HFImageClassifier(ImageClassifier):
    """A classifier of transformers' (or a segmenter): its loss inside the model."""

    def loss(self, m, xy):
        x, y = xy
        return m(pixel_values=x, labels=y).loss


class StagedImageClassifier(ImageClassifier):
    """Its blocks in the Sequential stages features[1], [3], [5], [7] (ConvNeXt's and Swin's)."""

    def blocks(self, m):
        return in_order(*(m.features[s] for s in (1, 3, 5, 7)))


class EffNet(ImageClassifier):
    """Held out (second set): torchvision's EfficientNet-B0 (depthwise convolutions, SiLU,
    squeeze-excitation, batch norm), its MBConv blocks nested in Sequential stages."""
    name = "effnet"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.efficientnet_b0(num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(*list(m.features)[1:-1])


class CNN(ImageClassifier):
    name = "cnn"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.resnet18(num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.layer1, m.layer2, m.layer3, m.layer4)


class ViT(ImageClassifier):
    name = "vit"
    size = 64

    def build(self, dtype):
        from torchvision.models import VisionTransformer

        torch.manual_seed(0)
        return VisionTransformer(image_size=self.size, patch_size=8, num_layers=6, num_heads=8, hidden_dim=384,
                                 mlp_dim=1536, num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.encoder.layers)


class ConvNeXt(StagedImageClassifier):
    """Held out (third set): torchvision's ConvNeXt-T (7x7 depthwise convolutions, a channels-last
    LayerNorm, Linear layers and GELU inside each block, layer scale, stochastic depth)."""
    name = "convnext"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.convnext_tiny(num_classes=100).to(device=DEV, dtype=dtype)


class Swin(StagedImageClassifier):
    """Held out (third set): torchvision's Swin-T (shifted-window attention, relative position
    bias, its blocks in Sequential stages between patch merging)."""
    name = "swin"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.swin_t(num_classes=100).to(device=DEV, dtype=dtype)


class T5:
    """Held out (third set): an encoder-decoder (transformers' T5 from a config: relative position
    bias, two stacks of blocks run by one loop), its loss inside the model."""
    name = "t5"
    batch = 8
    seq = 256
    vocab = 32128

    def build(self, dtype):
        from transformers import T5Config, T5ForConditionalGeneration

        cfg = T5Config(vocab_size=self.vocab, d_model=512, d_kv=64, d_ff=2048, num_layers=4, num_decoder_layers=4,
                       num_heads=8, use_cache=False, decoder_start_token_id=0, pad_token_id=0)
        torch.manual_seed(0)
        return T5ForConditionalGeneration(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.encoder.block, m.decoder.block)

    def batch_of(self, b, seq, dtype):
        src = torch.randint(0, self.vocab, (b, seq), device=DEV)
        tgt = torch.randint(0, self.vocab, (b, seq), device=DEV)
        return (src, tgt)

    def loss(self, m, st):
        src, tgt = st
        return m(input_ids=src, labels=tgt, use_cache=False).loss


class NeoX(HFDecoder):
    """Held out (fourth set): a GPT-NeoX decoder (Pythia's: parallel attention and MLP residual,
    partial rotary, GELU), its loss inside the model."""
    name = "neox"
    vocab = 16384

    config_class = "GPTNeoXConfig"
    model_class = "GPTNeoXForCausalLM"
    config = dict(hidden_size=512, intermediate_size=2048, num_hidden_layers=6, num_attention_heads=8, rotary_pct=0.25,
                  max_position_embeddings=2048, use_parallel_residual=True, use_cache=False)

    def blocks(self, m):
        return in_order(m.gpt_neox.layers)


class DistilBERT(SequenceClassifier):
    """Held out (fourth set): a DistilBERT encoder with a classification head (its own
    attention module, no token types), its loss inside the model."""
    name = "distilbert"

    def build(self, dtype):
        from transformers import DistilBertConfig, DistilBertForSequenceClassification

        cfg = DistilBertConfig(vocab_size=self.vocab, dim=512, hidden_dim=2048, n_layers=6, n_heads=8, num_labels=4)
        torch.manual_seed(0)
        return DistilBertForSequenceClassification(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.distilbert.transformer.layer)


class ResNet50(CNN):
    """Held out (fourth set): torchvision's ResNet-50 (bottleneck blocks, 1x1 convolutions,
    batch norm), 16 blocks in four stages."""
    name = "resnet50"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.resnet50(num_classes=100).to(device=DEV, dtype=dtype)


class PLMistral(NextTokenLM):
    """Held out (fifth set), trained by Lightning: a Mistral decoder (grouped-query attention,
    SwiGLU), its loss computed in training_step, outside the model's forward."""
    name = "plmistral"
    vocab = 16000
    lightning = True

    def build(self, dtype):
        from transformers import MistralConfig, MistralForCausalLM

        cfg = MistralConfig(vocab_size=self.vocab, hidden_size=512, intermediate_size=1536, num_hidden_layers=4,
                            num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=2048,
                            sliding_window=None, use_cache=False)
        torch.manual_seed(0)
        return MistralForCausalLM(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.model.layers)


class PLMobileNet(ImageClassifier):
    """Held out (fifth set), trained by Lightning: torchvision's MobileNetV3-Large (depthwise
    convolutions, hardswish, squeeze-excitation), batch 64 at 128 x 128."""
    name = "plmobilenet"
    batch = 64
    lightning = True

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.mobilenet_v3_large(num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.features)[1:-1]


class LoRALinear(nn.Module):
    """A frozen linear layer plus a rank-r update, as peft's LoRA layer computes it."""

    def __init__(self, base, r=8, alpha=16):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False, device=base.weight.device, dtype=base.weight.dtype)
        self.lora_B = nn.Linear(r, base.out_features, bias=False, device=base.weight.device, dtype=base.weight.dtype)
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = alpha / r

    def forward(self, x):
        result = self.base_layer(x)
        return result + self.lora_B(self.lora_A(x)) * self.scaling


class LoRALLM(LLM):
    """The first set's decoder fine-tuned with LoRA: every weight frozen, rank-8 adapters on the
    attention's q and v projections (the only trainable parameters)."""
    name = "lora"

    def build(self, dtype):
        m = super().build(dtype)
        for p in m.parameters():
            p.requires_grad_(False)
        for layer in m.model.layers:
            layer.self_attn.q_proj = LoRALinear(layer.self_attn.q_proj)
            layer.self_attn.v_proj = LoRALinear(layer.self_attn.v_proj)
        return m


class CompiledLLM(LLM):
    """The decoder of the first set under torch.compile (inductor, default mode): its forward and
    backward run as generated kernels, whose allocations carry the generated code's frames."""
    name = "cllm"
    compiled = True


class HFOPT(HFDecoder):
    """Held out (sixth set), trained by transformers' Trainer: an OPT decoder (learned positions,
    LayerNorm, ReLU), its loss inside the model; the changes are TrainingArguments."""
    name = "hfopt"
    vocab = 16384
    trainer = True

    config_class = "OPTConfig"
    model_class = "OPTForCausalLM"
    config = dict(hidden_size=512, ffn_dim=2048, num_hidden_layers=6, num_attention_heads=8,
                  max_position_embeddings=1024, word_embed_proj_dim=512, use_cache=False)

    def blocks(self, m):
        return in_order(m.model.decoder.layers)

    def example(self, seq):
        ids = torch.randint(0, self.vocab, (seq,))
        return {"input_ids": ids, "labels": ids}


class HFViT(ImageClassifier):
    """Held out (sixth set), trained by transformers' Trainer: transformers' ViT image classifier
    (8 layers, hidden 384, 64 x 64 images in 8 x 8 patches, batch 32)."""
    name = "hfvit"
    size = 64
    trainer = True

    def build(self, dtype):
        from transformers import ViTConfig, ViTForImageClassification

        cfg = ViTConfig(image_size=self.size, patch_size=8, hidden_size=384, num_hidden_layers=8, num_attention_heads=6,
                        intermediate_size=1536, num_labels=100)
        torch.manual_seed(0)
        return ViTForImageClassification(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.vit.layers)

    def example(self, seq):
        return {"pixel_values": torch.randn(3, self.size, self.size), "labels": torch.randint(0, 100, ()).item()}


class Qwen(Qwen2Decoder, CausalLM):
    """Held out (seventh set), at the scale users run: a Qwen2 decoder of 170M parameters with
    Qwen2's own vocabulary (151,936 tokens, tied embeddings), 1,024 tokens a sequence, its loss
    inside the model, so the logits and the loss's copies of them are most of the peak."""
    name = "qwen"
    vocab = 151936
    seq = 1024
    hidden = 768
    intermediate = 2048
    layers = 8
    heads = 12
    positions = 4096
    tied = True


class Qwen16(Qwen):
    """Held out (ninth set), shaped like the issue's hidden run: a Qwen2 of 16 layers (220M
    parameters, Qwen2's vocabulary, tied embeddings) at 8 x 512 tokens, where the layers'
    activations, not the logits, are most of the peak."""
    name = "qwen16"
    seq = 512
    layers = 16


class PLGPT(NextTokenLM):
    """Held out (eighth set), trained by Lightning at the scale users run: a GPT-2 small (124M,
    its real vocabulary of 50,257 tokens) at 1,024 tokens, its loss in training_step."""
    name = "plgpt"
    vocab = 50257
    seq = 1024
    lightning = True

    def build(self, dtype):
        from transformers import GPT2Config, GPT2LMHeadModel

        cfg = GPT2Config(vocab_size=self.vocab, n_positions=2048, n_embd=768, n_layer=12, n_head=12, use_cache=False)
        torch.manual_seed(0)
        return GPT2LMHeadModel(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.transformer.h)


class QwenTrainer(Qwen):
    """Held out (seventh set): the same Qwen2 trained by transformers' Trainer (the changes are
    TrainingArguments)."""
    name = "qwentr"
    trainer = True

    def example(self, seq):
        ids = torch.randint(0, self.vocab, (seq,))
        return {"input_ids": ids, "labels": ids}


class Qwen3(HFDecoder):
    """Held out (sixth set): a Qwen3 decoder from a transformers config (grouped-query attention,
    RMS norms on each head's queries and keys), its loss inside the model."""
    name = "qwen3"
    vocab = 16000

    config_class = "Qwen3Config"
    model_class = "Qwen3ForCausalLM"
    config = dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=2, head_dim=64, max_position_embeddings=2048, tie_word_embeddings=False,
                  use_cache=False)


class MobileNetV2(ImageClassifier):
    """Held out (sixth set): torchvision's MobileNetV2 (inverted residuals, depthwise
    convolutions, ReLU6, residual adds of their own)."""
    name = "mnv2"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.mobilenet_v2(num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.features)[1:-1]


class RegNet(ImageClassifier):
    """Held out (sixth set): torchvision's RegNetY-400MF (grouped convolutions,
    squeeze-excitation, residual bottlenecks in four stages)."""
    name = "regnet"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.regnet_y_400mf(num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(*m.trunk_output)


class Gemma(HFDecoder):
    """Held out (eleventh set): a Gemma decoder from a transformers config (one key/value head for
    eight query heads, GeGLU, tied embeddings, a large vocabulary), its loss inside the model."""
    name = "gemma"
    vocab = 65536

    config_class = "GemmaConfig"
    model_class = "GemmaForCausalLM"
    config = dict(hidden_size=512, intermediate_size=2048, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=1, head_dim=64, max_position_embeddings=2048, use_cache=False)


class Bloom(HFDecoder):
    """Held out (eleventh set): a BLOOM decoder from a transformers config (ALiBi attention computed
    with baddbmm and its own softmax, no fused kernel), its loss inside the model."""
    name = "bloom"
    vocab = 16384

    config_class = "BloomConfig"
    model_class = "BloomForCausalLM"
    config = dict(hidden_size=512, n_layer=4, n_head=8, use_cache=False)

    def blocks(self, m):
        return in_order(m.transformer.h)


class DenseNet(ImageClassifier):
    """Held out (eleventh set): torchvision's DenseNet-121 (each layer concatenates every earlier
    feature map of its block), its 58 dense layers the blocks."""
    name = "densenet"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.densenet121(num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        # a dense block is a ModuleDict: its layers by name
        return [(b, k) for b in (m.features.denseblock1, m.features.denseblock2, m.features.denseblock3,
                                 m.features.denseblock4) for k in list(b.keys())]


class Falcon(HFDecoder):
    """Held out (twelfth set): a Falcon decoder from a transformers config (attention and MLP in
    parallel from one layer norm, one key/value head, a fused query/key/value projection), its loss
    inside the model."""
    name = "falcon"
    vocab = 16384

    config_class = "FalconConfig"
    model_class = "FalconForCausalLM"
    config = dict(hidden_size=512, num_hidden_layers=4, num_attention_heads=8, multi_query=True, parallel_attn=True,
                  new_decoder_architecture=False, alibi=False, bias=False, use_cache=False)

    def blocks(self, m):
        return in_order(m.transformer.h)


class Whisper:
    """Held out (twelfth set): a Whisper speech-to-text model from a transformers config (two
    convolutions over 80 x 3000 log-mel frames, a 1,500-frame encoder, a decoder with cross
    attention over 64 tokens), its loss inside the model. No sequence change: the encoder's
    length is fixed by the model."""
    name = "whisper"
    batch = 8
    seq = None
    vocab = 8000

    def build(self, dtype):
        from transformers import WhisperConfig, WhisperForConditionalGeneration

        cfg = WhisperConfig(vocab_size=self.vocab, d_model=384, encoder_layers=4, decoder_layers=4,
                            encoder_attention_heads=6, decoder_attention_heads=6, encoder_ffn_dim=1536,
                            decoder_ffn_dim=1536, num_mel_bins=80, max_source_positions=1500, max_target_positions=448,
                            pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, use_cache=False)
        torch.manual_seed(0)
        return WhisperForConditionalGeneration(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.model.encoder.layers, m.model.decoder.layers)

    def batch_of(self, b, seq, dtype):
        x = torch.randn(b, 80, 3000, device=DEV, dtype=dtype)
        y = torch.randint(3, self.vocab, (b, 64), device=DEV)
        return (x, y)

    def loss(self, m, xy):
        x, y = xy
        return m(input_features=x, labels=y, use_cache=False).loss


class DeepLab(ImageClassifier):
    """Held out (twelfth set): torchvision's DeepLabV3 with a ResNet-50 backbone (dilated
    convolutions, atrous spatial pyramid pooling, an auxiliary head), a per-pixel loss over 21
    classes, batch 16 at 128 x 128; its blocks the backbone's 16 bottlenecks."""
    name = "deeplab"
    batch = 16

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.segmentation.deeplabv3_resnet50(weights=None, weights_backbone=None, num_classes=21,
                                                                  aux_loss=True).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        b = m.backbone
        return in_order(b.layer1, b.layer2, b.layer3, b.layer4)

    def batch_of(self, b, seq, dtype):
        x = torch.randn(b, 3, self.size, self.size, device=DEV, dtype=dtype)
        y = torch.randint(0, 21, (b, self.size, self.size), device=DEV)
        return (x, y)

    def loss(self, m, xy):
        x, y = xy
        o = m(x)
        return F.cross_entropy(o["out"], y) + 0.5 * F.cross_entropy(o["aux"], y)


class Mixtral(HFDecoder):
    """Held out (thirteenth set): a Mixtral decoder from a transformers config (a mixture of 8
    experts, 2 per token, grouped-query attention), its loss inside the model."""
    name = "mixtral"
    vocab = 16384

    config_class = "MixtralConfig"
    model_class = "MixtralForCausalLM"
    config = dict(hidden_size=512, intermediate_size=1024, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=2, num_local_experts=8, num_experts_per_tok=2, max_position_embeddings=2048,
                  use_cache=False)


class LSTMLM(nn.Module):
    """A word-level LSTM language model: an embedding, 3 single-layer LSTMs in a ModuleList
    (cuDNN's RNN), a head over the vocabulary."""

    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList([nn.LSTM(hidden, hidden, batch_first=True) for _ in range(3)])
        self.head = nn.Linear(hidden, vocab)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)[0]
        return self.head(x)


class LSTM(NextTokenLM):
    """Held out (thirteenth set): the LSTM language model above, its loss outside the model."""
    name = "lstm"
    vocab = 16384
    batch = 32

    def build(self, dtype):
        torch.manual_seed(0)
        return LSTMLM(self.vocab, 768).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.layers)

    def loss(self, m, ids):
        x, y = ids[:, :-1], ids[:, 1:]
        logits = m(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


class ShuffleNet(ImageClassifier):
    """Held out (thirteenth set): torchvision's ShuffleNetV2 x1.0 (channel split, shuffle and
    concatenation, depthwise convolutions), its blocks the 16 units of its three stages."""
    name = "shufflenet"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.shufflenet_v2_x1_0(num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.stage2, m.stage3, m.stage4)


class NanoBlock(nn.Module):
    """A GPT block written the way nanoGPT writes it: one fused query/key/value Linear, torch's
    scaled_dot_product_attention (causal), a GELU MLP, pre-norm residuals."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.c_proj(y)
        x = x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x))))
        return x


class NanoGPTModel(nn.Module):
    """nanoGPT's GPT: token and position embeddings, the blocks, a final norm, the head tied to
    the token embedding, the loss inside forward."""

    def __init__(self, vocab, d, layers, heads, positions):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(positions, d)
        self.h = nn.ModuleList([NanoBlock(d, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, idx, targets):
        pos = torch.arange(0, idx.shape[1], dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class NanoGPT(NextTokenLM):
    """Held out (fourteenth set): a GPT written as nanoGPT writes it (own code, SDPA attention,
    tied head, GPT-2's padded vocabulary of 50,304), its loss inside its forward."""
    name = "nanogpt"
    vocab = 50304

    def build(self, dtype):
        torch.manual_seed(0)
        return NanoGPTModel(self.vocab, 512, 6, 8, 1024).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.h)

    def batch_of(self, b, seq, dtype):
        # nanoGPT's get_batch: inputs and targets, each its own contiguous tensor
        ids = torch.randint(0, self.vocab, (b, seq + 1), device=DEV)
        return (ids[:, :-1].contiguous(), ids[:, 1:].contiguous())

    def loss(self, m, xy):
        return m(*xy)


class Phi3(HFDecoder):
    """Held out (fourteenth set): a Phi-3 decoder from a transformers config (fused query/key/value
    and gate/up projections, Phi-3's vocabulary of 32,064), its loss inside the model."""
    name = "phi3"
    vocab = 32064

    config_class = "Phi3Config"
    model_class = "Phi3ForCausalLM"
    config = dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=4, max_position_embeddings=2048, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                  use_cache=False)


class DoubleConv(nn.Module):
    """U-Net's stage: two 3 x 3 convolutions, each with batch norm and ReLU."""

    def __init__(self, cin, cout):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                                  nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.body(x)


class UNetModel(nn.Module):
    """A U-Net as segmentation code writes it: four down stages whose outputs are kept for the
    skip connections, a middle stage, four up stages (transposed convolution, concatenation)."""

    def __init__(self, c=32, classes=10):
        super().__init__()
        widths = [c, 2 * c, 4 * c, 8 * c]
        self.downs = nn.ModuleList([DoubleConv(i, o) for i, o in zip([3] + widths[:-1], widths)])
        self.mid = DoubleConv(8 * c, 16 * c)
        self.ups = nn.ModuleList([nn.ConvTranspose2d(2 * w, w, 2, stride=2) for w in reversed(widths)])
        self.decs = nn.ModuleList([DoubleConv(2 * w, w) for w in reversed(widths)])
        self.head = nn.Conv2d(c, classes, 1)

    def forward(self, x):
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.mid(x)
        for up, dec in zip(self.ups, self.decs):
            x = dec(torch.cat([up(x), skips.pop()], dim=1))
        return self.head(x)


class UNet(ImageClassifier):
    """Held out (fourteenth set): the U-Net above, segmenting 10 classes per pixel (batch 16 at
    128 x 128), its eight stages of the down and up paths the blocks (two loops)."""
    name = "unet"
    batch = 16

    def build(self, dtype):
        torch.manual_seed(0)
        return UNetModel().to(device=DEV, dtype=dtype)

    def batch_of(self, b, seq, dtype):
        x = torch.randn(b, 3, self.size, self.size, device=DEV, dtype=dtype)
        y = torch.randint(0, 10, (b, self.size, self.size), device=DEV)
        return (x, y)

    def blocks(self, m):
        return in_order(m.downs, m.decs)


class DeBERTa(SequenceClassifier):
    """Held out (fifteenth set): a DeBERTa-v2 classifier from a transformers config (disentangled
    attention: content-to-position and position-to-content scores over 256 relative buckets), its
    loss inside the model."""
    name = "deberta"
    vocab = 32000

    def build(self, dtype):
        from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

        cfg = DebertaV2Config(vocab_size=self.vocab, hidden_size=384, num_hidden_layers=6, num_attention_heads=6,
                              intermediate_size=1536, max_position_embeddings=512, relative_attention=True,
                              position_buckets=256, pos_att_type=["p2c", "c2p"], max_relative_positions=-1,
                              position_biased_input=False, num_labels=4, pad_token_id=0)
        torch.manual_seed(0)
        return DebertaV2ForSequenceClassification(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.deberta.encoder.layer)


class BART:
    """Held out (fifteenth set): a BART encoder-decoder from a transformers config, shaped like a
    summarisation job (a target a quarter of the source's length, tied embeddings), its loss inside
    the model."""
    name = "bart"
    batch = 8
    seq = 256
    vocab = 16000

    def build(self, dtype):
        from transformers import BartConfig, BartForConditionalGeneration

        cfg = BartConfig(vocab_size=self.vocab, d_model=512, encoder_layers=4, decoder_layers=4,
                         encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048,
                         decoder_ffn_dim=2048, max_position_embeddings=1024, pad_token_id=1, bos_token_id=0,
                         eos_token_id=2, decoder_start_token_id=2, use_cache=False)
        torch.manual_seed(0)
        return BartForConditionalGeneration(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.model.encoder.layers, m.model.decoder.layers)

    def batch_of(self, b, seq, dtype):
        src = torch.randint(3, self.vocab, (b, seq), device=DEV)
        tgt = torch.randint(3, self.vocab, (b, seq // 4), device=DEV)
        return (src, tgt)

    def loss(self, m, st):
        src, tgt = st
        return m(input_ids=src, labels=tgt, use_cache=False).loss


class MaxViT(ImageClassifier):
    """Held out (fifteenth set): torchvision's MaxViT (MBConv, block and grid attention in every
    layer, relative position bias) at 128 x 128 with a partition of 4, its 11 layers the blocks."""
    name = "maxvit"

    def build(self, dtype):
        from torchvision.models import MaxVit

        torch.manual_seed(0)
        return MaxVit(input_size=(self.size, self.size), stem_channels=64, partition_size=4,
                      block_channels=[64, 128, 256, 512], block_layers=[2, 2, 5, 2], head_dim=32,
                      stochastic_depth_prob=0.2, num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(*(b.layers for b in m.blocks))


class PeftLlama(CausalLM):
    """Held out (sixteenth set): a Llama decoder from a transformers config fine-tuned with peft's
    own LoRA (rank 16 on every projection of attention and MLP, dropout 0.05), its loss inside
    the model."""
    name = "peft"
    lora = True
    vocab = 16000

    def build(self, dtype):
        from peft import LoraConfig, get_peft_model
        from transformers import LlamaConfig, LlamaForCausalLM

        cfg = LlamaConfig(vocab_size=self.vocab, hidden_size=512, intermediate_size=1376, num_hidden_layers=6,
                          num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=2048, use_cache=False)
        torch.manual_seed(0)
        m = LlamaForCausalLM(cfg).to(device=DEV, dtype=dtype)
        lc = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, task_type="CAUSAL_LM",
                        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
        return get_peft_model(m, lc)

    def blocks(self, m):
        return in_order(m.base_model.model.model.layers)


class TimmViT(ImageClassifier):
    """Held out (sixteenth set): timm's ViT-S/16 (fused query/key/value, timm's attention) at
    128 x 128, its 12 blocks."""
    name = "timmvit"

    def build(self, dtype):
        import timm

        torch.manual_seed(0)
        return timm.create_model("vit_small_patch16_224", pretrained=False, img_size=self.size,
                                 num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.blocks)


class CoAtNet(ImageClassifier):
    """Held out (sixteenth set): timm's CoAtNet-nano (MBConv stages, then transformer stages with
    relative position bias), its blocks those of every stage."""
    name = "coatnet"

    def build(self, dtype):
        import timm

        torch.manual_seed(0)
        try:
            m = timm.create_model("coatnet_nano_rw_224", pretrained=False, img_size=self.size, num_classes=100)
        except Exception:  # noqa: BLE001 - a model that only takes its own size
            self.size = 224
            m = timm.create_model("coatnet_nano_rw_224", pretrained=False, num_classes=100)
        return m.to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(*(s.blocks for s in m.stages))


class Gemma2(HFDecoder):
    """Held out (seventeenth set): a Gemma-2 decoder from a transformers config with eager attention
    (what Gemma-2 asks for: logit soft-capping, a sliding window on every other layer; the
    softmax upcast to fp32), its loss inside the model."""
    name = "gemma2"
    vocab = 32000

    config_class = "Gemma2Config"
    model_class = "Gemma2ForCausalLM"
    config = dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=4, head_dim=64, sliding_window=128, max_position_embeddings=2048, pad_token_id=0,
                  bos_token_id=1, eos_token_id=2, use_cache=False, attn_implementation="eager")


class BiEncoder:
    """Held out (seventeenth set): a BERT bi-encoder trained as sentence-transformers trains one
    (mean pooling, in-batch negatives: a B x B similarity and cross-entropy computed outside the
    model), on pairs of 128 tokens, batch 32."""
    name = "biencoder"
    batch = 32
    seq = 128
    vocab = 30522

    def build(self, dtype):
        from transformers import BertConfig, BertModel

        cfg = BertConfig(vocab_size=self.vocab, hidden_size=384, num_hidden_layers=6, num_attention_heads=6,
                         intermediate_size=1536, max_position_embeddings=512)
        torch.manual_seed(0)
        return BertModel(cfg, add_pooling_layer=False).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.encoder.layer)

    def batch_of(self, b, seq, dtype):
        a = torch.randint(0, self.vocab, (b, seq), device=DEV)
        p = torch.randint(0, self.vocab, (b, seq), device=DEV)
        return (a, p)

    def loss(self, m, ap):
        def embed(ids):
            h = m(input_ids=ids).last_hidden_state
            return F.normalize(h.mean(dim=1), dim=-1)

        a, p = ap
        scores = embed(a) @ embed(p).T * 20.0
        return F.cross_entropy(scores, torch.arange(scores.shape[0], device=DEV))


class EffNetV2(ImageClassifier):
    """Held out (seventeenth set): timm's EfficientNetV2 (fused MBConv in the early stages, MBConv
    with squeeze-excitation after), its blocks those of every stage."""
    name = "effnetv2"

    def build(self, dtype):
        import timm

        torch.manual_seed(0)
        return timm.create_model("efficientnetv2_rw_t", pretrained=False, num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(*m.blocks)


class BigCode(HFDecoder):
    """Held out (eighteenth set): a GPTBigCode (StarCoder) decoder from a transformers config:
    multi-query attention (one key/value head) from one fused projection, a tanh GELU MLP,
    learned positions, its loss inside the model."""
    name = "bigcode"
    vocab = 16384

    config_class = "GPTBigCodeConfig"
    model_class = "GPTBigCodeForCausalLM"
    config = dict(n_positions=1024, n_embd=512, n_layer=4, n_head=8, multi_query=True, use_cache=False)

    def blocks(self, m):
        return in_order(m.transformer.h)


class VGG(ImageClassifier):
    """Held out (eighteenth set): torchvision's VGG-11 with batch norm (plain 3 x 3 convolutions,
    and a head of two 4096-wide Linear layers whose first weight is 411 MB), its blocks its eight
    convolutions, each with what follows it."""
    name = "vgg"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        m = torchvision.models.vgg11_bn(num_classes=100)
        # its flat features as one block per convolution (with its norm, in-place ReLU and pool),
        # the blocks checkpointing wraps: one in-place ReLU alone in a checkpoint would modify
        # the input the checkpoint saved
        groups, cur = [], []
        for layer in m.features:
            if isinstance(layer, nn.Conv2d) and cur:
                groups.append(nn.Sequential(*cur))
                cur = []
            cur.append(layer)
        groups.append(nn.Sequential(*cur))
        m.features = nn.Sequential(*groups)
        return m.to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.features)


class Wav2Vec2:
    """Held out (eighteenth set): a Wav2Vec2 audio classifier from a transformers config (a
    convolutional feature extractor over the raw samples, then a transformer encoder), on one
    second of 16 kHz audio; its sequence is the samples. Layer drop and SpecAugment's masks off:
    every run makes the same allocations."""
    name = "wav2vec"
    batch = 16
    seq = 16000

    def build(self, dtype):
        from transformers import Wav2Vec2Config, Wav2Vec2ForSequenceClassification

        cfg = Wav2Vec2Config(hidden_size=384, num_hidden_layers=4, num_attention_heads=6, intermediate_size=1536,
                             num_labels=4, layerdrop=0.0, apply_spec_augment=False, mask_time_prob=0.0)
        torch.manual_seed(0)
        return Wav2Vec2ForSequenceClassification(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.wav2vec2.encoder.layers)

    def batch_of(self, b, seq, dtype):
        x = torch.randn(b, seq, device=DEV, dtype=dtype)
        y = torch.randint(0, 4, (b,), device=DEV)
        return (x, y)

    def loss(self, m, xy):
        x, y = xy
        return m(input_values=x, labels=y).loss


class StableLM(HFDecoder):
    """Held out (nineteenth set): a StableLM decoder from a transformers config: layer norms with
    biases, rotary embeddings on a quarter of each head, a SwiGLU MLP, its loss inside the model."""
    name = "stablelm"
    vocab = 16384

    config_class = "StableLmConfig"
    model_class = "StableLmForCausalLM"
    config = dict(hidden_size=512, intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=8, partial_rotary_factor=0.25, max_position_embeddings=1024, use_cache=False)


class Starcoder2(HFDecoder):
    """Held out (nineteenth set): a Starcoder2 decoder from a transformers config: grouped-query
    attention (2 key/value heads of 8) inside a sliding window of 128 tokens (a mask, not the
    causal flag), biases, a GELU MLP, its loss inside the model."""
    name = "starcoder2"
    vocab = 16384

    config_class = "Starcoder2Config"
    model_class = "Starcoder2ForCausalLM"
    config = dict(hidden_size=512, intermediate_size=2048, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=2, sliding_window=128, max_position_embeddings=1024, use_cache=False)


class TokenLabelled:
    """An encoder from a transformers config trained on random tokens (16 x 128 of a 16,384-token
    vocabulary) with a label per token, its loss inside the model."""
    vocab = 16384
    batch = 16
    seq = 128

    def labels(self, ids, g):
        """The labels of `ids`, drawn from the generator `g`."""
        raise NotImplementedError

    def batch_of(self, b, seq, dtype):
        g = torch.Generator(device=DEV).manual_seed(0)
        ids = torch.randint(3, self.vocab, (b, seq), device=DEV, generator=g)
        return (ids, self.labels(ids, g))

    def loss(self, m, xy):
        ids, labels = xy
        return m(input_ids=ids, labels=labels).loss


class RobertaMLM(TokenLabelled):
    """Held out (nineteenth set): a RoBERTa masked language model from a transformers config, a
    sixth of the tokens masked and predicted over the vocabulary (the others labelled -100), its
    loss inside the model."""
    name = "roberta"

    def build(self, dtype):
        from transformers import RobertaConfig, RobertaForMaskedLM

        cfg = RobertaConfig(vocab_size=self.vocab, hidden_size=512, num_hidden_layers=6, num_attention_heads=8,
                            intermediate_size=2048, max_position_embeddings=1026, pad_token_id=1)
        torch.manual_seed(0)
        return RobertaForMaskedLM(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.roberta.encoder.layer)

    def labels(self, ids, g):
        return torch.where(torch.rand(ids.shape, device=DEV, generator=g) < 1 / 6, ids, torch.full_like(ids, -100))


class R3D(ImageClassifier):
    """Held out (twentieth set): torchvision's R3D-18 video classifier, 3D convolutions over
    8 frames of 112 x 112 (cuDNN's 3D algorithms and workspaces), batch norm, its BasicBlocks in
    four stages."""
    name = "r3d"
    batch = 8
    frames = 8
    size = 112

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.video.r3d_18(num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.layer1, m.layer2, m.layer3, m.layer4)

    def batch_of(self, b, seq, dtype):
        x = torch.randn(b, 3, self.frames, self.size, self.size, device=DEV, dtype=dtype)
        y = torch.randint(0, 100, (b,), device=DEV)
        return (x, y)


class Mamba(HFDecoder):
    """Held out (twentieth set): a Mamba state-space decoder from a transformers config, no
    attention: a causal depthwise convolution and a selective scan run token by token in
    PyTorch (transformers' path without the fused kernels), its loss inside the model."""
    name = "mamba"
    vocab = 16384
    seq = 128

    config_class = "MambaConfig"
    model_class = "MambaForCausalLM"
    config = dict(hidden_size=512, state_size=16, num_hidden_layers=4, expand=2, conv_kernel=4, use_cache=False)

    def blocks(self, m):
        return in_order(m.backbone.layers)


class MambaWide(Mamba):
    """The Mamba's rule held out: another shape (hidden 768, a state of 8, 3 layers, 4 x 256
    tokens), recorded after the reference scan's rule was written."""
    name = "mambaw"
    batch = 4
    seq = 256

    def build(self, dtype):
        from transformers import MambaConfig, MambaForCausalLM

        cfg = MambaConfig(vocab_size=self.vocab, hidden_size=768, state_size=8, num_hidden_layers=3, expand=2,
                          conv_kernel=4, use_cache=False)
        torch.manual_seed(0)
        return MambaForCausalLM(cfg).to(device=DEV, dtype=dtype)


class SegFormer(HFImageClassifier):
    """Held out (twentieth set): a SegFormer semantic segmentation model from a transformers
    config: four stages of efficient self-attention (keys and values from a reduced map), an MLP
    decoder over all stages, the logits upsampled to the labels' size inside the model's loss
    (19 classes, 128 x 128)."""
    name = "segformer"
    batch = 16

    def build(self, dtype):
        from transformers import SegformerConfig, SegformerForSemanticSegmentation

        cfg = SegformerConfig(num_labels=19, depths=[2, 2, 2, 2], hidden_sizes=[32, 64, 160, 256],
                              decoder_hidden_size=256)
        torch.manual_seed(0)
        return SegformerForSemanticSegmentation(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        # the SegformerLayers of each stage's ModuleList, wherever the transformers version keeps
        # the stages (segformer.encoder.block in 4.x)
        return [(c, i) for c in m.modules() if isinstance(c, nn.ModuleList)
                for i in range(len(c)) if type(c[i]).__name__ == "SegformerLayer"]

    def batch_of(self, b, seq, dtype):
        x = torch.randn(b, 3, self.size, self.size, device=DEV, dtype=dtype)
        y = torch.randint(0, 19, (b, self.size, self.size), device=DEV)
        return (x, y)


class AccLLM(Qwen2Decoder, CausalLM):
    """Held out (twenty-first set), trained by accelerate's Accelerator: a Qwen2 decoder with a
    32,000-token vocabulary, its loss inside the model; mixed precision and accumulation are
    the Accelerator's (mixed_precision=, gradient_accumulation_steps=)."""
    name = "accllm"
    vocab = 32000
    accelerate = True


class AccConvNeXt(StagedImageClassifier):
    """Held out (twenty-first set): torchvision's ConvNeXt-T trained by accelerate's Accelerator."""
    name = "accconvnext"
    accelerate = True

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.convnext_tiny(num_classes=100).to(device=DEV, dtype=dtype)


class Attrs:
    """A model's named submodules as a container of blocks, for checkpoint_first()."""

    def __init__(self, m, names):
        self.m, self.names = m, names

    def __len__(self):
        return len(self.names)

    def __getitem__(self, i):
        return getattr(self.m, self.names[i])

    def __setitem__(self, i, block):
        setattr(self.m, self.names[i], block)


class AuxHeadClassifier(ImageClassifier):
    """A torchvision classifier with auxiliary heads (training returns every head's logits): its
    blocks named submodules, its loss the main head's plus a weighted share of each auxiliary
    head's."""
    factory = None  # the torchvision.models function
    block_names = ()
    aux = ()  # (the output's attribute, its weight) per auxiliary head

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        make = getattr(torchvision.models, self.factory)
        return make(num_classes=100, aux_logits=True, init_weights=True).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(Attrs(m, self.block_names))

    def loss(self, m, xy):
        x, y = xy
        out = m(x)
        loss = F.cross_entropy(out.logits, y)
        for attribute, weight in self.aux:
            loss = loss + weight * F.cross_entropy(getattr(out, attribute), y)
        return loss


class Inception(AuxHeadClassifier):
    """Held out (twenty-third set): torchvision's Inception v3 with its auxiliary classifier
    (training returns both logits; the loss adds 0.4 of the auxiliary one), factorised and
    asymmetric convolutions in eleven Mixed blocks, batch 16 at its own 299 x 299 (the auxiliary
    head's 5 x 5 convolution needs a map of 17 x 17 before it)."""
    name = "inception"
    batch = 16
    size = 299
    factory = "inception_v3"
    block_names = ("Mixed_5b", "Mixed_5c", "Mixed_5d", "Mixed_6a", "Mixed_6b", "Mixed_6c", "Mixed_6d", "Mixed_6e",
                   "Mixed_7a", "Mixed_7b", "Mixed_7c")
    aux = (("aux_logits", 0.4),)


class TorchTxModel(nn.Module):
    """A pre-norm causal decoder of nn.TransformerEncoderLayer (PyTorch's own multi-head
    attention, GELU, dropout), learned positions, an untied head."""

    def __init__(self, vocab, d, layers, heads, positions):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(positions, d)
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, activation="gelu",
                                                                batch_first=True, norm_first=True)
                                     for _ in range(layers)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids, targets):
        t = ids.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=ids.device, dtype=self.emb.weight.dtype)
        x = self.emb(ids) + self.pos(torch.arange(t, device=ids.device))
        for layer in self.layers:
            x = layer(x, src_mask=mask, is_causal=True)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))


class TorchTx(NanoGPT):
    """Held out (twenty-third set): a decoder of PyTorch's own nn.TransformerEncoderLayer
    (F.multi_head_attention_forward, a float causal mask), 6 layers of 512, a vocabulary of
    16,384, its loss inside its forward."""
    name = "torchtx"
    vocab = 16384

    def build(self, dtype):
        torch.manual_seed(0)
        return TorchTxModel(self.vocab, 512, 6, 8, 1024).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.layers)


class CLIP:
    """Held out (twenty-third set): a CLIP from a transformers config trained on its contrastive
    loss (a ViT image tower of 6 layers at 128 x 128, a text tower of 4 layers over 32 tokens,
    the loss over the batch's image-text similarities)."""
    name = "clip"
    batch = 32
    seq = None
    tokens = 32
    vocab = 8192
    size = 128

    def build(self, dtype):
        from transformers import CLIPConfig, CLIPModel

        cfg = CLIPConfig(text_config=dict(vocab_size=self.vocab, hidden_size=256, intermediate_size=1024,
                                          num_hidden_layers=4, num_attention_heads=4, max_position_embeddings=64,
                                          pad_token_id=1, bos_token_id=0, eos_token_id=2),
                         vision_config=dict(hidden_size=384, intermediate_size=1536, num_hidden_layers=6,
                                            num_attention_heads=6, image_size=self.size, patch_size=16),
                         projection_dim=256)
        torch.manual_seed(0)
        return CLIPModel(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.vision_model.encoder.layers, m.text_model.encoder.layers)

    def batch_of(self, b, seq, dtype):
        x = torch.randn(b, 3, self.size, self.size, device=DEV, dtype=dtype)
        ids = torch.randint(0, self.vocab, (b, self.tokens), device=DEV)
        return (x, ids)

    def loss(self, m, xy):
        x, ids = xy
        return m(input_ids=ids, pixel_values=x, return_loss=True).loss


class GoogLeNet(AuxHeadClassifier):
    """Held out (twenty-fourth set): torchvision's GoogLeNet with its two auxiliary classifiers
    (training returns three logits; the loss adds 0.3 of each auxiliary one), nine Inception
    blocks called one statement each from its `_forward`, batch 32 at 160 x 160."""
    name = "googlenet"
    size = 160
    factory = "googlenet"
    block_names = ("inception3a", "inception3b", "inception4a", "inception4b", "inception4c", "inception4d",
                   "inception4e", "inception5a", "inception5b")
    aux = (("aux_logits1", 0.3), ("aux_logits2", 0.3))


class DINOv2(HFImageClassifier):
    """Held out (twenty-fourth set): a DINOv2 image classifier from a transformers config (layer
    scale, a class token and the patches' mean into the head), 6 layers of 384 at 128 x 128."""
    name = "dinov2"

    def build(self, dtype):
        from transformers import Dinov2Config, Dinov2ForImageClassification

        cfg = Dinov2Config(hidden_size=384, num_hidden_layers=6, num_attention_heads=6, intermediate_size=1536,
                           image_size=self.size, patch_size=16, num_labels=100)
        torch.manual_seed(0)
        return Dinov2ForImageClassification(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.dinov2.encoder.layer)


class GPTJ(HFDecoder):
    """Held out (twenty-fourth set): a GPT-J decoder from a transformers config (attention and MLP
    in parallel off one layer norm, partial rotary), its loss inside the model."""
    name = "gptj"
    vocab = 16384

    config_class = "GPTJConfig"
    model_class = "GPTJForCausalLM"
    config = dict(n_embd=512, n_layer=4, n_head=8, rotary_dim=32, n_positions=1024, use_cache=False)

    def blocks(self, m):
        return in_order(m.transformer.h)


class SwinV2(StagedImageClassifier):
    """Held out (twenty-fifth set): torchvision's Swin V2-T (cosine attention with a learned
    logit scale, a continuous position bias from a small MLP, post-norm blocks)."""
    name = "swinv2"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.swin_v2_t(num_classes=100).to(device=DEV, dtype=dtype)


class OLMo2(HFDecoder):
    """Held out (twenty-fifth set): an OLMo-2 decoder from a transformers config (RMS norms after
    attention and MLP, on the whole queries and keys), its loss inside the model."""
    name = "olmo2"
    vocab = 16384

    config_class = "Olmo2Config"
    model_class = "Olmo2ForCausalLM"
    config = dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=8, max_position_embeddings=2048, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                  use_cache=False)


class ConvNeXtV2(HFImageClassifier):
    """Held out (twenty-fifth set): a ConvNeXt V2 classifier from a transformers config (global
    response normalisation in each block), the tiny shape at 128 x 128."""
    name = "convnextv2"

    def build(self, dtype):
        from transformers import ConvNextV2Config, ConvNextV2ForImageClassification

        cfg = ConvNextV2Config(depths=[3, 3, 9, 3], hidden_sizes=[96, 192, 384, 768], num_labels=100)
        torch.manual_seed(0)
        return ConvNextV2ForImageClassification(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return [(c, i) for c in m.modules() if isinstance(c, (nn.ModuleList, nn.Sequential))
                for i in range(len(c)) if type(c[i]).__name__ == "ConvNextV2Layer"]


class GPTNeo(HFDecoder):
    """Held out (twenty-sixth set): a GPT-Neo decoder from a transformers config: global and local
    attention in turn (a window of 64 tokens), learned positions, its loss inside the model."""
    name = "gptneo"
    vocab = 16384

    config_class = "GPTNeoConfig"
    model_class = "GPTNeoForCausalLM"
    config = dict(hidden_size=512, num_layers=4, num_heads=8, attention_types=[[["global", "local"], 2]],
                  window_size=64, max_position_embeddings=1024, intermediate_size=2048, use_cache=False)

    def blocks(self, m):
        return in_order(m.transformer.h)


class MNASNet(ImageClassifier):
    """Held out (twenty-sixth set): torchvision's MNASNet 1.0 (inverted residuals with 3 x 3 and
    5 x 5 depthwise convolutions), its blocks the 16 inverted residuals of its six stacks."""
    name = "mnasnet"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.mnasnet1_0(num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return [(c, i) for c in m.modules() if isinstance(c, nn.Sequential)
                for i in range(len(c)) if type(c[i]).__name__ == "_InvertedResidual"]


class Electra(TokenLabelled):
    """Held out (twenty-sixth set): an ELECTRA discriminator from a transformers config (embeddings
    of 128 projected to the hidden 512), trained to tell replaced tokens, a loss per token (binary
    cross-entropy) inside the model."""
    name = "electra"

    def build(self, dtype):
        from transformers import ElectraConfig, ElectraForPreTraining

        cfg = ElectraConfig(vocab_size=self.vocab, embedding_size=128, hidden_size=512, num_hidden_layers=6,
                            num_attention_heads=8, intermediate_size=2048, max_position_embeddings=512)
        torch.manual_seed(0)
        return ElectraForPreTraining(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.electra.encoder.layer)

    def labels(self, ids, g):
        return (torch.rand(ids.shape, device=DEV, generator=g) < 0.15).long()


class Granite(HFDecoder):
    """Held out (twenty-seventh set): a Granite decoder from a transformers config (a Llama with
    multipliers on its embeddings, residuals, attention scores and logits; grouped-query
    attention), its loss inside the model."""
    name = "granite"
    vocab = 16384

    config_class = "GraniteConfig"
    model_class = "GraniteForCausalLM"
    config = dict(hidden_size=512, intermediate_size=1376, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=4, embedding_multiplier=12.0, residual_multiplier=0.22,
                  attention_multiplier=0.0078125, logits_scaling=8.0, max_position_embeddings=1024, use_cache=False)


class ModernBert(TokenLabelled):
    """Held out (twenty-seventh set): a ModernBERT masked language model from a transformers config
    (global attention every third layer, a 64-token window in the others, a gated GELU, no
    biases), a sixth of the tokens masked, its loss inside the model. Its reference compile of
    the head is off: an eager run."""
    name = "modernbert"

    def build(self, dtype):
        from transformers import ModernBertConfig, ModernBertForMaskedLM

        cfg = ModernBertConfig(vocab_size=self.vocab, hidden_size=512, intermediate_size=1024, num_hidden_layers=6,
                               num_attention_heads=8, global_attn_every_n_layers=3, local_attention=64,
                               max_position_embeddings=512, pad_token_id=0, reference_compile=False)
        torch.manual_seed(0)
        return ModernBertForMaskedLM(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.model.layers)

    def labels(self, ids, g):
        return torch.where(torch.rand(ids.shape, device=DEV, generator=g) < 1 / 6, ids, torch.full_like(ids, -100))


class SqueezeNet(ImageClassifier):
    """Held out (twenty-seventh set): torchvision's SqueezeNet 1.1 (Fire modules: a 1 x 1 squeeze,
    then 1 x 1 and 3 x 3 expands concatenated; a convolutional classifier), its blocks the eight
    Fire modules."""
    name = "squeezenet"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.squeezenet1_1(num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return [(m.features, i) for i in range(len(m.features)) if type(m.features[i]).__name__ == "Fire"]


class Qwen2Moe(HFDecoder):
    """Held out (twenty-eighth set): a Qwen2-MoE decoder from a transformers config (eight experts
    of which the router picks two a token, and a shared expert; grouped-query attention), its loss
    inside the model (no router loss)."""
    name = "qwen2moe"
    vocab = 16384

    config_class = "Qwen2MoeConfig"
    model_class = "Qwen2MoeForCausalLM"
    config = dict(hidden_size=512, intermediate_size=1376, moe_intermediate_size=256,
                  shared_expert_intermediate_size=512, num_experts=8, num_experts_per_tok=2, num_hidden_layers=4,
                  num_attention_heads=8, num_key_value_heads=4, decoder_sparse_step=1, max_position_embeddings=1024,
                  output_router_logits=False, use_cache=False)


class Cohere(HFDecoder):
    """Held out (twenty-eighth set): a Cohere decoder from a transformers config (attention and
    MLP in parallel from one layer norm without bias, logits scaled), its loss inside the model."""
    name = "cohere"
    vocab = 16384

    config_class = "CohereConfig"
    model_class = "CohereForCausalLM"
    config = dict(hidden_size=512, intermediate_size=1376, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=8, logit_scale=0.0625, max_position_embeddings=1024, use_cache=False)


class ResNeXt(CNN):
    """Held out (twenty-eighth set): torchvision's ResNeXt-50 32x4d (bottlenecks whose 3 x 3
    convolutions have 32 groups), 16 blocks in four stages."""
    name = "resnext"

    def build(self, dtype):
        import torchvision

        torch.manual_seed(0)
        return torchvision.models.resnext50_32x4d(num_classes=100).to(device=DEV, dtype=dtype)


class Marian(T5):
    """Held out (twenty-ninth set): a Marian translation model from a transformers config
    (sinusoidal positions, three encoder and three decoder layers), its loss inside the model."""
    name = "marian"
    vocab = 16384

    def build(self, dtype):
        from transformers import MarianConfig, MarianMTModel

        cfg = MarianConfig(vocab_size=self.vocab, d_model=512, encoder_layers=3, decoder_layers=3,
                           encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048,
                           decoder_ffn_dim=2048, max_position_embeddings=512, pad_token_id=0, decoder_start_token_id=0,
                           use_cache=False)
        torch.manual_seed(0)
        return MarianMTModel(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.model.encoder.layers, m.model.decoder.layers)


class Phi(HFDecoder):
    """Held out (twenty-ninth set): a Phi decoder from a transformers config (attention and MLP in
    parallel from one layer norm, rotary on half of each head, a tanh GELU), its loss inside the
    model."""
    name = "phi"
    vocab = 16384

    config_class = "PhiConfig"
    model_class = "PhiForCausalLM"
    config = dict(hidden_size=512, intermediate_size=2048, num_hidden_layers=4, num_attention_heads=8,
                  partial_rotary_factor=0.5, max_position_embeddings=1024, use_cache=False)


class ConvMixer(ImageClassifier):
    """Held out (twenty-ninth set): timm's ConvMixer-768/32 at 128 x 128 (a 7 x 7 patch embedding,
    then 32 blocks of a residual depthwise 7 x 7 convolution and a pointwise one, GELU and batch
    norm), its 32 blocks."""
    name = "convmixer"

    def build(self, dtype):
        import timm

        torch.manual_seed(0)
        return timm.create_model("convmixer_768_32", pretrained=False, num_classes=100).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.blocks)


class Gemma3(HFDecoder):
    """Held out (thirtieth set): a Gemma-3 text decoder from a transformers config (five
    sliding-window layers of 128 tokens to one global, norms on the queries and keys and around
    each sublayer, grouped-query attention, tied embeddings), its loss inside the model."""
    name = "gemma3"
    vocab = 16384

    config_class = "Gemma3TextConfig"
    model_class = "Gemma3ForCausalLM"
    config = dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=6, num_attention_heads=8,
                  num_key_value_heads=4, head_dim=64, sliding_window=128, max_position_embeddings=1024,
                  use_cache=False)


class MobileViT(HFImageClassifier):
    """Held out (thirtieth set): a MobileViT-S classifier from a transformers config at 128 x 128
    (inverted residuals, then three stages that unfold the feature map into patches for a small
    transformer and fold it back), its blocks the inverted residuals and the transformer layers."""
    name = "mobilevit"

    def build(self, dtype):
        from transformers import MobileViTConfig, MobileViTForImageClassification

        cfg = MobileViTConfig(image_size=128, num_labels=100)
        torch.manual_seed(0)
        return MobileViTForImageClassification(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return [(c, i) for c in m.modules() if isinstance(c, nn.ModuleList) for i in range(len(c))
                if type(c[i]).__name__ in ("MobileViTInvertedResidual", "MobileViTTransformerLayer")]


class XLMRoberta(TokenLabelled):
    """Held out (thirtieth set): an XLM-RoBERTa masked language model from a transformers config
    with its real 250,002-token vocabulary (the tied embedding is most of the parameters, the
    logits over the vocabulary most of the activations), a sixth of the tokens masked, its loss
    inside the model."""
    name = "xlmr"
    vocab = 250002

    def build(self, dtype):
        from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM

        cfg = XLMRobertaConfig(vocab_size=self.vocab, hidden_size=384, num_hidden_layers=6, num_attention_heads=6,
                               intermediate_size=1536, max_position_embeddings=514, pad_token_id=1)
        torch.manual_seed(0)
        return XLMRobertaForMaskedLM(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.roberta.encoder.layer)

    def labels(self, ids, g):
        return torch.where(torch.rand(ids.shape, device=DEV, generator=g) < 1 / 6, ids, torch.full_like(ids, -100))


class Nemotron(HFDecoder):
    """Held out (thirty-first set): a Nemotron decoder from a transformers config (a squared-ReLU
    MLP without a gate, layer norms with a one-plus weight, rotary on half of each head,
    grouped-query attention), its loss inside the model."""
    name = "nemotron"
    vocab = 16384

    config_class = "NemotronConfig"
    model_class = "NemotronForCausalLM"
    config = dict(hidden_size=512, intermediate_size=2048, num_hidden_layers=4, num_attention_heads=8,
                  num_key_value_heads=4, partial_rotary_factor=0.5, max_position_embeddings=1024, use_cache=False)


class PvtV2(HFImageClassifier):
    """Held out (thirty-first set): a PVT-v2-b1 classifier from a transformers config at 128 x 128
    (four stages of overlapping patch embeddings and transformer blocks whose attention reduces
    the keys' resolution, and a depthwise convolution in each MLP), its blocks the eight
    transformer blocks."""
    name = "pvtv2"

    def build(self, dtype):
        from transformers import PvtV2Config, PvtV2ForImageClassification

        cfg = PvtV2Config(image_size=128, hidden_sizes=[64, 128, 320, 512], depths=[2, 2, 2, 2], num_labels=100)
        torch.manual_seed(0)
        return PvtV2ForImageClassification(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return [(c, i) for c in m.modules() if isinstance(c, nn.ModuleList) for i in range(len(c))
                if "Block" in type(c[i]).__name__]


class Longformer(TokenLabelled):
    """Held out (thirty-first set): a Longformer masked language model from a transformers config
    (sliding-window attention of 64 tokens computed in overlapping chunks), a sixth of the tokens
    masked, its loss inside the model."""
    name = "longformer"

    def build(self, dtype):
        from transformers import LongformerConfig, LongformerForMaskedLM

        cfg = LongformerConfig(vocab_size=self.vocab, hidden_size=512, num_hidden_layers=6, num_attention_heads=8,
                               intermediate_size=2048, attention_window=64, max_position_embeddings=1026,
                               pad_token_id=1)
        torch.manual_seed(0)
        return LongformerForMaskedLM(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return in_order(m.longformer.encoder.layer)

    def labels(self, ids, g):
        return torch.where(torch.rand(ids.shape, device=DEV, generator=g) < 1 / 6, ids, torch.full_like(ids, -100))


class Qwen3Moe(HFDecoder):
    """Held out (thirty-second set): a Qwen3-MoE decoder from a transformers config (eight experts
    of which the router picks two a token, no shared expert; norms on the queries and keys;
    grouped-query attention), its loss inside the model (no router loss)."""
    name = "qwen3moe"
    vocab = 16384

    config_class = "Qwen3MoeConfig"
    model_class = "Qwen3MoeForCausalLM"
    config = dict(hidden_size=512, intermediate_size=1376, moe_intermediate_size=256, num_experts=8,
                  num_experts_per_tok=2, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=4,
                  head_dim=64, decoder_sparse_step=1, max_position_embeddings=1024, output_router_logits=False,
                  use_cache=False)


class BEiT(HFImageClassifier):
    """Held out (thirty-second set): a BEiT classifier from a transformers config at 128 x 128
    (patches of 16, a relative position bias in each layer, layer scale, mean pooling), its six
    layers the blocks."""
    name = "beit"

    def build(self, dtype):
        from transformers import BeitConfig, BeitForImageClassification

        cfg = BeitConfig(image_size=128, patch_size=16, hidden_size=384, num_hidden_layers=6, num_attention_heads=6,
                         intermediate_size=1536, use_relative_position_bias=True, num_labels=100)
        torch.manual_seed(0)
        return BeitForImageClassification(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return [(c, i) for c in m.modules() if isinstance(c, nn.ModuleList) for i in range(len(c))
                if type(c[i]).__name__ == "BeitLayer"]


class ViTMAE(ImageClassifier):
    """Held out (thirty-second set): a ViT masked autoencoder pretrained from a transformers config
    at 128 x 128 (three patches in four masked at random, an encoder over the rest, a decoder over
    all of them, the loss on the masked patches' pixels inside the model), its encoder's six and
    decoder's four layers the blocks."""
    name = "vitmae"

    def build(self, dtype):
        from transformers import ViTMAEConfig, ViTMAEForPreTraining

        cfg = ViTMAEConfig(image_size=128, patch_size=16, hidden_size=384, num_hidden_layers=6, num_attention_heads=6,
                           intermediate_size=1536, decoder_hidden_size=256, decoder_num_hidden_layers=4,
                           decoder_num_attention_heads=8, decoder_intermediate_size=1024, mask_ratio=0.75)
        torch.manual_seed(0)
        return ViTMAEForPreTraining(cfg).to(device=DEV, dtype=dtype)

    def blocks(self, m):
        return [(c, i) for c in m.modules() if isinstance(c, nn.ModuleList) for i in range(len(c))
                if type(c[i]).__name__ == "ViTMAELayer"]

    def loss(self, m, xy):
        x, _ = xy
        return m(pixel_values=x).loss


def all_specs():
    return {s.name: s for s in (LLM(), CNN(), ViT(), GPT2(), BERT(), Llama(), EffNet(), ConvNeXt(), Swin(), T5(), NeoX(),
                                DistilBERT(), ResNet50(), PLMistral(), PLMobileNet(), HFOPT(), HFViT(), CompiledLLM(),
                                LoRALLM(), Qwen(), QwenTrainer(), PLGPT(), Qwen16(), Qwen3(), MobileNetV2(), RegNet(), Gemma(), Bloom(),
                                DenseNet(), Falcon(), Whisper(), DeepLab(), Mixtral(), LSTM(),
                                ShuffleNet(), NanoGPT(), Phi3(), UNet(), DeBERTa(), BART(), MaxViT(),
                                PeftLlama(), TimmViT(), CoAtNet(), Gemma2(), BiEncoder(),
                                EffNetV2(), BigCode(), VGG(), Wav2Vec2(), StableLM(), Starcoder2(),
                                RobertaMLM(), R3D(), Mamba(), SegFormer(), AccLLM(),
                                AccConvNeXt(), MambaWide(), Inception(), TorchTx(), CLIP(), GoogLeNet(),
                                DINOv2(), GPTJ(), SwinV2(), OLMo2(), ConvNeXtV2(), GPTNeo(), MNASNet(), Electra(), Granite(), ModernBert(),
                                SqueezeNet(), Qwen2Moe(), Cohere(), ResNeXt(), Marian(), Phi(),
                                ConvMixer(), Gemma3(), MobileViT(), XLMRoberta(), Nemotron(), PvtV2(),
                                Longformer(), Qwen3Moe(), BEiT(), ViTMAE())}


# ---------------------------------------------------------------- one run
def make_optimizer(kind, params):
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, foreach=True)
    if kind == "adamw-fused":
        return torch.optim.AdamW(params, lr=1e-4, fused=True)
    if kind == "adam":
        return torch.optim.Adam(params, lr=1e-4, foreach=True)
    if kind == "sgd":
        return torch.optim.SGD(params, lr=1e-3, foreach=True)
    if kind == "sgd-momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=True)
    if kind == "adafactor":
        return torch.optim.Adafactor(params, lr=1e-3, foreach=True)
    raise ValueError(kind)


def clean():
    gc.collect()
    torch.cuda.synchronize()
    if hasattr(torch._C, "_cuda_clearCublasWorkspaces"):
        torch._C._cuda_clearCublasWorkspaces()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def begin(record, entries):
    """An empty allocator, its reserved bytes, and the history recorded when `record` names it."""
    clean()
    if torch.cuda.memory_allocated():
        # an earlier run that failed left tensors alive: every peak from here would be off by them
        raise RuntimeError("%d bytes still allocated from an earlier run" % torch.cuda.memory_allocated())
    start_reserved = torch.cuda.memory_reserved()
    if record:
        if STACKS == "none":  # no stacks: what a checkpointed run records when stack capture fails
            torch.cuda.memory._record_memory_history(max_entries=entries, context=None)
        else:
            torch.cuda.memory._record_memory_history(max_entries=entries, stacks=STACKS)
    return start_reserved


def finish(start_reserved, record, **extra):
    """torch's counters of the run (and `extra`), its history dumped to OUT/RECORD.pickle."""
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    res = {
        "max_allocated": torch.cuda.max_memory_allocated(),
        "max_reserved": torch.cuda.max_memory_reserved(),
        "requested_peak": stats.get("requested_bytes.all.peak", 0),
        "start_reserved": start_reserved,
    }
    res.update(extra)
    if record:
        torch.cuda.memory._dump_snapshot(os.path.join(OUT, record + ".pickle"))
        torch.cuda.memory._record_memory_history(enabled=None)
        res["recording"] = record + ".pickle"
    return res


def train(spec, cfg, record=None):
    """cfg: batch, seq, precision (fp32|bf16|fp16|amp-bf16|amp-fp16), optimizer, accumulate, ckpt (0: none, -1: all)."""
    start_reserved = begin(record, 200000)
    prec = cfg.get("precision", "fp32")
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec, torch.float32)
    m = spec.build(dtype)
    m.train()
    ck = cfg.get("ckpt", 0)
    if ck and cfg.get("ckpt_mode") == "hf":  # transformers' own, with its default (reentrant)
        m.gradient_checkpointing_enable()
    elif ck and cfg.get("ckpt_mode") == "hf-nr":
        m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    elif ck:
        checkpoint_first(spec.blocks(m), ck)
    if getattr(spec, "compiled", False):
        m = torch.compile(m)
    opt = make_optimizer(cfg.get("optimizer", "adamw"), m.parameters())
    amp_dtype = {"amp-bf16": torch.bfloat16, "amp-fp16": torch.float16}.get(prec)
    # fp16 autocast with a loss scale of 1024, not the default 65536: that one overflows the fp16
    # gradients of ResNet-50 and EfficientNet in each of the 3 steps, every step is skipped and
    # Adam never makes its state, so the run's peak would be no training step's
    scaler = torch.amp.GradScaler("cuda", init_scale=2.0 ** 10) if prec == "amp-fp16" else None
    skipped = 0
    K = cfg.get("accumulate", 1)
    B = cfg["batch"]
    mb = B // K
    for _ in range(STEPS):
        for _k in range(K):
            data = spec.batch_of(mb, cfg.get("seq"), dtype)
            ctx = torch.autocast("cuda", dtype=amp_dtype) if amp_dtype else contextlib.nullcontext()
            with ctx:
                loss = spec.loss(m, data)
            if K > 1:
                loss = loss / K
            if scaler:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            del loss, data
        if scaler:
            scale = scaler.get_scale()
            scaler.step(opt)
            scaler.update()
            skipped += scaler.get_scale() < scale
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)
    res = finish(start_reserved, record, **({"steps_skipped": skipped} if scaler else {}))
    del m, opt, scaler
    return res


def train_accelerate(spec, cfg, record=None):
    """The same training run by accelerate's Accelerator: mixed_precision="no"|"bf16"|"fp16" (its
    autocast around the model's forward, whose outputs it converts to fp32), a model built in
    bf16 for pure bf16, gradient_accumulation_steps=K under accelerator.accumulate (the loss
    divided by K, the optimizer's step and zero_grad only on the last micro-batch)."""
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState, GradientState
    from accelerate.utils import GradScalerKwargs

    AcceleratorState._reset_state(True)  # one process, a new Accelerator per run
    GradientState._reset_state()
    start_reserved = begin(record, 200000)
    prec = cfg.get("precision", "fp32")
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec, torch.float32)
    K = cfg.get("accumulate", 1)
    # the loss scale of train()'s fp16 runs (the default one skips every step of some CNNs)
    acc = Accelerator(mixed_precision={"amp-bf16": "bf16", "amp-fp16": "fp16"}.get(prec, "no"),
                      gradient_accumulation_steps=K, kwargs_handlers=[GradScalerKwargs(init_scale=2.0 ** 10)])
    m = spec.build(dtype)
    m.train()
    if cfg.get("ckpt", 0):
        checkpoint_first(spec.blocks(m), cfg["ckpt"])
    opt = make_optimizer(cfg.get("optimizer", "adamw"), m.parameters())
    m, opt = acc.prepare(m, opt)
    mb = cfg["batch"] // K
    for _ in range(STEPS):
        for _k in range(K):
            with acc.accumulate(m):
                data = spec.batch_of(mb, cfg.get("seq"), dtype)
                loss = spec.loss(m, data)
                acc.backward(loss)
                opt.step()
                opt.zero_grad(set_to_none=True)
                del loss, data
    res = finish(start_reserved, record)
    acc.free_memory()
    del m, opt, acc
    return res


def train_lightning(spec, cfg, record=None):
    """The same training run by Lightning's Trainer: precision=32-true|bf16-true|16-true|bf16-mixed|
    16-mixed, accumulate_grad_batches=K over micro-batches of B/K from a DataLoader of CPU batches
    (Lightning moves them to the GPU), the optimizer from configure_optimizers."""
    try:
        import lightning.pytorch as pl
    except ImportError:
        import pytorch_lightning as pl

    K = cfg.get("accumulate", 1)
    mb = cfg["batch"] // K
    prec = cfg.get("precision", "fp32")
    torch.manual_seed(1)
    batches = [spec.batch_of(mb, cfg.get("seq"), torch.float32) for _ in range(STEPS * K)]
    batches = [tuple(t.cpu() for t in b) if isinstance(b, tuple) else b.cpu() for b in batches]

    class Module(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.m = spec.build(torch.float32)
            if cfg.get("ckpt", 0):
                checkpoint_first(spec.blocks(self.m), cfg["ckpt"])

        def training_step(self, batch, i):
            return spec.loss(self.m, batch)

        def configure_optimizers(self):
            return make_optimizer(cfg.get("optimizer", "adamw"), self.parameters())

    start_reserved = begin(record, 400000)
    module = Module()
    module.m.train()
    precision = {"fp32": "32-true", "bf16": "bf16-true", "fp16": "16-true", "amp-bf16": "bf16-mixed",
                 "amp-fp16": "16-mixed"}[prec]
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_steps=STEPS, precision=precision, accumulate_grad_batches=K,
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, num_sanity_val_steps=0, limit_val_batches=0)
    loader = torch.utils.data.DataLoader(batches, batch_size=None, shuffle=False)
    trainer.fit(module, loader)
    res = finish(start_reserved, record,
                 trainer={"precision": precision, "accumulate_grad_batches": K, "global_step": trainer.global_step})
    del trainer, module
    return res


HF_OPTIM = {"adamw": "adamw_torch", "adamw-fused": "adamw_torch_fused", "sgd": "sgd", "adafactor": "adafactor"}


def train_hf(spec, cfg, record=None):
    """The same training run by transformers' Trainer: TrainingArguments(bf16=, fp16=,
    gradient_checkpointing=, gradient_accumulation_steps=K, per_device_train_batch_size=B/K,
    optim=), its default max_grad_norm and scheduler; pure bf16 is the model in bf16."""
    import tempfile

    from transformers import Trainer, TrainingArguments

    K = cfg.get("accumulate", 1)
    mb = cfg["batch"] // K
    prec = cfg.get("precision", "fp32")
    torch.manual_seed(1)
    data = [spec.example(cfg.get("seq")) for _ in range(mb * K * STEPS)]
    start_reserved = begin(record, 400000)
    m = spec.build(torch.bfloat16 if prec == "bf16" else torch.float32)
    if cfg.get("ckpt", 0) > 0:  # the first N blocks: ours (the Trainer's flag checkpoints all)
        checkpoint_first(spec.blocks(m), cfg["ckpt"])
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, per_device_train_batch_size=mb, gradient_accumulation_steps=K,
                                 max_steps=STEPS, learning_rate=1e-4, bf16=prec == "amp-bf16", fp16=prec == "amp-fp16",
                                 gradient_checkpointing=cfg.get("ckpt", 0) < 0,
                                 optim=HF_OPTIM[cfg.get("optimizer", "adamw")], report_to="none", save_strategy="no",
                                 logging_strategy="no", dataloader_num_workers=0, dataloader_pin_memory=False,
                                 disable_tqdm=True, seed=0)
        trainer = Trainer(model=m, args=args, train_dataset=data)
        trainer.train()
        info = {"bf16": args.bf16, "fp16": args.fp16, "gradient_accumulation_steps": K, "optim": str(args.optim),
                "gradient_checkpointing": args.gradient_checkpointing, "global_step": trainer.state.global_step}
        scaler = getattr(trainer.accelerator, "scaler", None)
        if scaler is not None:  # fp16: each skipped step halves the scale from 65536
            info["final_scale"] = scaler.get_scale()
        res = finish(start_reserved, record, trainer=info)
    del trainer, m
    return res


# TRUTH_BASE_PRECISION=amp-bf16: the base run and every change run under autocast unless the
# change names a precision (the recording a user of mixed precision makes)
BASE_PRECISION = os.environ.get("TRUTH_BASE_PRECISION", "fp32")


def run(spec, name, cfg, record=None):
    full = dict(cfg)
    if BASE_PRECISION != "fp32":
        full.setdefault("precision", BASE_PRECISION)
    full.setdefault("batch", spec.batch)
    if spec.seq is not None:
        full.setdefault("seq", spec.seq)
    t = time.time()
    out = {"model": spec.name, "name": name, "config": full}
    try:
        how = train_lightning if getattr(spec, "lightning", False) else train_hf if getattr(spec, "trainer", False) \
            else train_accelerate if getattr(spec, "accelerate", False) else train
        out.update(how(spec, full, record))
        out["ok"] = True
        out["oom"] = False
    except torch.cuda.OutOfMemoryError as e:
        out["ok"] = False
        out["oom"] = True
        out["error"] = str(e).splitlines()[0][:300]
        if record:
            torch.cuda.memory._record_memory_history(enabled=None)
    except Exception as e:  # noqa: BLE001 - a failing configuration is recorded, not fatal
        out["ok"] = False
        out["oom"] = False
        out["error"] = (type(e).__name__ + ": " + str(e)).splitlines()[0][:300]
        traceback.print_exc()
        if record:
            torch.cuda.memory._record_memory_history(enabled=None)
    out["seconds"] = round(time.time() - t, 2)
    gc.collect()
    print(json.dumps({k: v for k, v in out.items() if k != "config"}), full, flush=True)
    return out


CHANGES = [
    ("ckpt_all", {"ckpt": -1}),
    ("ckpt_2", {"ckpt": 2}),
    ("bf16", {"precision": "bf16"}),
    ("amp_bf16", {"precision": "amp-bf16"}),
    ("amp_fp16", {"precision": "amp-fp16"}),
    ("sgd", {"optimizer": "sgd"}),
    ("sgd_momentum", {"optimizer": "sgd-momentum"}),
    ("adam", {"optimizer": "adam"}),
    ("adamw_fused", {"optimizer": "adamw-fused"}),
    ("adafactor", {"optimizer": "adafactor"}),
    ("accum2", {"accumulate": 2}),
    ("accum4", {"accumulate": 4}),
    ("batch_x2", {"batch_mult": 2}),
    ("batch_half", {"batch_div": 2}),
    ("ckpt_all+amp_bf16", {"ckpt": -1, "precision": "amp-bf16"}),
    ("ckpt_all+accum2", {"ckpt": -1, "accumulate": 2}),
    ("amp_bf16+sgd_momentum+accum2", {"precision": "amp-bf16", "optimizer": "sgd-momentum", "accumulate": 2}),
    ("bf16+ckpt_all+batch_x2", {"precision": "bf16", "ckpt": -1, "batch_mult": 2}),
]
SEQ_CHANGES = [
    ("seq_x2", {"seq_mult": 2}),
    ("seq_x2+batch_half", {"seq_mult": 2, "batch_div": 2}),
    ("seq_half", {"seq_div": 2}),
]


def named_changes(*names):
    """The changes of CHANGES with these names, in CHANGES' order."""
    return [c for c in CHANGES if c[0] in names]


# transformers' own checkpointing (gradient_checkpointing_enable), set against --checkpoint all
HF_CHANGES = [
    ("hfckpt", {"ckpt": -1, "ckpt_mode": "hf"}),
    ("hfckpt_nr", {"ckpt": -1, "ckpt_mode": "hf-nr"}),
    ("hfckpt+amp_bf16", {"ckpt": -1, "ckpt_mode": "hf", "precision": "amp-bf16"}),
]
# what a Lightning user changes: Trainer(precision=...), accumulate_grad_batches, the optimizer,
# the batch, wrapped blocks
PL_CHANGES = named_changes(
    "ckpt_all", "ckpt_2", "bf16", "amp_bf16", "amp_fp16", "sgd_momentum", "adafactor", "accum2", "accum4", "batch_x2",
    "batch_half", "ckpt_all+amp_bf16", "ckpt_all+accum2", "amp_bf16+sgd_momentum+accum2") + [
    ("amp_bf16+accum2", {"precision": "amp-bf16", "accumulate": 2}),
]


# what a transformers Trainer user changes: TrainingArguments' bf16/fp16, gradient_checkpointing,
# gradient_accumulation_steps, optim, per_device_train_batch_size; a model loaded in bf16
TRAINER_CHANGES = named_changes(
    "ckpt_all", "ckpt_2", "bf16", "amp_bf16", "amp_fp16", "sgd", "adamw_fused", "adafactor", "accum2", "accum4", "batch_x2",
    "batch_half", "ckpt_all+amp_bf16", "ckpt_all+accum2", "bf16+ckpt_all+batch_x2") + [
    ("amp_bf16+accum2", {"precision": "amp-bf16", "accumulate": 2}),
]


# from a recording made under autocast: the changes a mixed-precision user makes, and back to
# fp32 or on to pure bf16
FROM_AMP_CHANGES = named_changes(
    "ckpt_all", "ckpt_2", "bf16", "sgd", "sgd_momentum", "adafactor", "accum2", "accum4", "batch_x2", "batch_half",
    "ckpt_all+accum2") + [("fp32", {"precision": "fp32"})]


def parse_changes(name, named):
    """A '+'-joined list of named changes and batch_xK (any K: a sweep's batch), as one config."""
    cfg = {}
    for part in name.split("+"):
        if part.startswith("batch_x") and part not in named:
            cfg["batch_mult"] = float(part[len("batch_x"):])
        else:
            cfg.update(named[part])
    return cfg


def resolve(spec, cfg):
    c = dict(cfg)
    b = int(spec.batch * c.pop("batch_mult", 1) // c.pop("batch_div", 1))
    c["batch"] = b
    if spec.seq is not None:
        c["seq"] = spec.seq * c.pop("seq_mult", 1) // c.pop("seq_div", 1)
    return c


def main():
    assert torch.cuda.is_available()
    total = torch.cuda.get_device_properties(0).total_memory
    info = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "total_memory": total, "steps": STEPS,
            "runs": [], "sweeps": []}
    # warm-up outside any recording: CUDA context, cuBLAS/cuDNN handles, kernels' lazy loading
    w = torch.randn(256, 256, device=DEV, requires_grad=True)
    (w @ w).sum().backward()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        (w @ w).float().sum().backward()
    del w
    if ONLY:
        specs = all_specs()
        named = dict(CHANGES + SEQ_CHANGES + HF_CHANGES + PL_CHANGES + TRAINER_CHANGES + FROM_AMP_CHANGES)
        for full_name in ONLY:
            model, change = full_name.split("_", 1)
            spec = specs[model]
            cfg = {} if change == "base" else named.get(change) or parse_changes(change, named)
            info["runs"].append(run(spec, full_name, resolve(spec, cfg), record="whatif_" + full_name))
        with open(os.path.join(OUT, "recorded.json"), "w") as f:
            json.dump(info, f, indent=1)
        return
    if os.environ.get("TRUTH_RERUN"):
        # runs of an earlier truth file that failed with an error (not an OOM) again, and the
        # sweeps whose runs did, under the same cap; and the runs named TRUTH_RERUN_NAMES
        # (name suffixes: amp_fp16)
        path = os.environ["TRUTH_RERUN"]
        info = json.load(open(path))
        specs = all_specs()
        again = [n for n in os.environ.get("TRUTH_RERUN_NAMES", "").split(",") if n]
        for i, r in enumerate(info["runs"]):
            if (not r["ok"] and not r["oom"]) or any(r["name"].endswith("_" + n) for n in again):
                cfg = {k: v for k, v in r["config"].items()}
                info["runs"][i] = run(specs[r["model"]], r["name"], cfg)
        for sweep in info["sweeps"]:
            if all(x["ok"] or x["oom"] for x in sweep["runs"]):
                continue
            spec = specs[sweep["model"]]
            torch.cuda.set_per_process_memory_fraction(sweep["cap_bytes"] / total)
            extra = {"ckpt": -1} if sweep["variant"] == "ckpt_all" else {}
            sweep["runs"] = []
            for mult in [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10, 12, 16]:
                b = int(spec.batch * mult)
                r = run(spec, "%s_sweep_%s_b%d" % (spec.name, sweep["variant"], b), dict(extra, batch=b))
                sweep["runs"].append({"batch": b, "ok": r["ok"], "oom": r["oom"], "max_reserved": r.get("max_reserved"),
                                      "max_allocated": r.get("max_allocated")})
                if not r["ok"]:
                    break
            torch.cuda.set_per_process_memory_fraction(1.0)
            clean()
        with open(os.path.join(OUT, os.path.basename(path)), "w") as f:
            json.dump(info, f, indent=1)
        return
    budget = float(os.environ.get("TRUTH_BUDGET_S", "420")) / len(MODELS)
    specs = all_specs()
    for spec in (specs[m] for m in MODELS):
        deadline = time.time() + budget
        base = run(spec, spec.name + "_base", {}, record="whatif_" + spec.name + "_base")
        info["runs"].append(base)
        if spec.name == "llm":
            info["runs"].append(run(spec, "llm_amp_bf16_recorded", {"precision": "amp-bf16"},
                                    record="whatif_llm_amp_bf16"))
        changes = CHANGES + (SEQ_CHANGES if spec.seq is not None else [])
        if os.environ.get("TRUTH_SET") == "frameworks":
            changes = PL_CHANGES + (SEQ_CHANGES if spec.seq is not None else []) if getattr(spec, "lightning", False) \
                else HF_CHANGES
        if getattr(spec, "trainer", False):
            changes = TRAINER_CHANGES + (SEQ_CHANGES if spec.seq is not None else [])
        if getattr(spec, "accelerate", False):  # what an accelerate user changes
            changes = named_changes(
                "ckpt_all", "ckpt_2", "bf16", "amp_bf16", "amp_fp16", "sgd_momentum", "adafactor", "accum2", "accum4",
                "batch_x2", "batch_half", "ckpt_all+amp_bf16", "ckpt_all+accum2", "amp_bf16+sgd_momentum+accum2",
                "bf16+ckpt_all+batch_x2") + [("amp_bf16+accum2", {"precision": "amp-bf16", "accumulate": 2})] + (
                SEQ_CHANGES if spec.seq is not None else [])
        if BASE_PRECISION != "fp32":
            changes = FROM_AMP_CHANGES + (SEQ_CHANGES if spec.seq is not None else [])
        if spec.name == "lora" or getattr(spec, "lora", False):  # what a LoRA fine-tune changes
            changes = named_changes(
                "ckpt_all", "ckpt_2", "bf16", "amp_bf16", "sgd_momentum", "adafactor", "accum2", "batch_x2", "batch_half",
                "ckpt_all+amp_bf16", "bf16+ckpt_all+batch_x2") + SEQ_CHANGES
        if getattr(spec, "compiled", False):  # each run compiles anew: the changes people make most
            changes = named_changes("batch_x2", "batch_half", "amp_bf16", "bf16", "sgd_momentum", "accum2", "ckpt_all",
                                    "ckpt_all+amp_bf16")
        for name, cfg in changes:
            if time.time() > deadline:
                break
            info["runs"].append(run(spec, spec.name + "_" + name, resolve(spec, cfg)))
        # batch sweep under a cap: base and every block checkpointed
        if not base.get("ok") or getattr(spec, "compiled", False) or BASE_PRECISION != "fp32" or (
                os.environ.get("TRUTH_SET") == "frameworks" and not getattr(spec, "lightning", False)
                and not getattr(spec, "trainer", False)):
            continue
        cap = int(base["max_reserved"] * 2.5) // (2 << 20) * (2 << 20)
        torch.cuda.set_per_process_memory_fraction(cap / total)
        for label, extra in (("base", {}), ("ckpt_all", {"ckpt": -1})):
            sweep = {"model": spec.name, "variant": label, "cap_bytes": cap, "recorded_batch": spec.batch, "runs": []}
            mults = [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10, 12, 16]
            for mult in mults:
                if time.time() > deadline:
                    break
                b = int(spec.batch * mult)
                r = run(spec, "%s_sweep_%s_b%d" % (spec.name, label, b), dict(extra, batch=b))
                sweep["runs"].append({"batch": b, "ok": r["ok"], "oom": r["oom"], "max_reserved": r.get("max_reserved"),
                                      "max_allocated": r.get("max_allocated")})
                if not r["ok"]:
                    break
            info["sweeps"].append(sweep)
        torch.cuda.set_per_process_memory_fraction(1.0)
        clean()
        with open(os.path.join(OUT, TRUTH_FILE), "w") as f:
            json.dump(info, f, indent=1)
    with open(os.path.join(OUT, TRUTH_FILE), "w") as f:
        json.dump(info, f, indent=1)
    print("done", len(info["runs"]), "runs", flush=True)


if __name__ == "__main__":
    main()
