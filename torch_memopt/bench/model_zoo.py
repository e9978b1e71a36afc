"""Real architectures with random weights, built from configs (nothing downloaded), for
the e2e suite and the drop-in tests (tests/test_real_models.py): Hugging Face Llama,
GPT-2 and BERT, and timm ViT-B/16. ``small=True`` shrinks each to a few layers of width
64-128, for the CPU. transformers and timm are imported by the builders only.

Each entry gives the model (eval mode) and a function making its input batch.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import torch


@dataclasses.dataclass
class RealModel:
    name: str
    model: torch.nn.Module
    make_input: Callable[[int, int], dict]  # (batch, tokens) -> forward kwargs
    logits: Callable[[object], torch.Tensor]  # the forward's output -> a [*, classes] tensor


def _token_input(vocab: int, device):
    def make(batch: int, tokens: int) -> dict:
        generator = torch.Generator().manual_seed(batch * 1000 + tokens)
        ids = torch.randint(0, vocab, (batch, tokens), generator=generator)
        return {"input_ids": ids.to(device)}
    return make


def llama(small: bool, device, dtype) -> RealModel:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=1000 if small else 32000, hidden_size=64 if small else 2048,
        intermediate_size=176 if small else 5632, num_hidden_layers=2 if small else 8,
        num_attention_heads=4 if small else 16, num_key_value_heads=4 if small else 16,
        max_position_embeddings=2048, attn_implementation="eager")
    model = LlamaForCausalLM(config).to(device=device, dtype=dtype).eval()
    return RealModel("llama", model, _token_input(config.vocab_size, device), lambda o: o.logits)


def gpt2(small: bool, device, dtype) -> RealModel:
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=1000 if small else 50257, n_embd=64 if small else 768,
                        n_layer=2 if small else 12, n_head=4 if small else 12,
                        attn_implementation="eager")
    model = GPT2LMHeadModel(config).to(device=device, dtype=dtype).eval()
    return RealModel("gpt2", model, _token_input(config.vocab_size, device), lambda o: o.logits)


def bert(small: bool, device, dtype) -> RealModel:
    from transformers import BertConfig, BertForMaskedLM

    config = BertConfig(vocab_size=1000 if small else 30522, hidden_size=64 if small else 768,
                        num_hidden_layers=2 if small else 12, num_attention_heads=4 if small else 12,
                        intermediate_size=128 if small else 3072, attn_implementation="eager")
    model = BertForMaskedLM(config).to(device=device, dtype=dtype).eval()
    return RealModel("bert", model, _token_input(config.vocab_size, device), lambda o: o.logits)


def vit(small: bool, device, dtype) -> RealModel:
    import timm

    kwargs = dict(img_size=32, patch_size=16, embed_dim=64, depth=2, num_heads=4) if small else {}
    model = timm.create_model("vit_base_patch16_224", pretrained=False, **kwargs)
    model = model.to(device=device, dtype=dtype).eval()
    size = 32 if small else 224

    def make(batch: int, tokens: int) -> dict:  # tokens unused: the image fixes them
        generator = torch.Generator().manual_seed(batch)
        return {"x": torch.randn(batch, 3, size, size, generator=generator).to(device, dtype)}

    return RealModel("vit", model, make, lambda o: o)


BUILDERS = {"llama": llama, "gpt2": gpt2, "bert": bert, "vit": vit}
