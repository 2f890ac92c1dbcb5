"""Tiny random models for tests and benchmarks, built offline from a config plus a real tokenizer.

They are saved like real checkpoints, so the code under test loads them through the same
path. Their outputs are noise: they exercise the machinery, never the quality. torch and
transformers are imported inside the builders.
"""

from __future__ import annotations

from pathlib import Path

QWEN_STYLE_CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}"
)
"""A Qwen3-style chat template with the ``enable_thinking`` switch."""


def _tokenizer(source: str | Path):  # noqa: ANN202 - a transformers tokenizer
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(source), model_input_names=["input_ids", "attention_mask"])


def build_tiny_t5(tokenizer_source: str | Path, out: Path, *, seed: int = 0) -> Path:
    """A tiny random T5 (seq2seq) with the tokenizer of ``tokenizer_source``, saved to ``out``."""
    import torch
    import transformers

    tok = _tokenizer(tokenizer_source)
    cfg = transformers.T5Config(
        vocab_size=tok.vocab_size,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.sep_token_id,
        decoder_start_token_id=tok.pad_token_id,
    )
    torch.manual_seed(seed)
    model = transformers.T5ForConditionalGeneration(cfg)
    model.generation_config.max_new_tokens = 16
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def build_tiny_causal_lm(tokenizer_source: str | Path, out: Path, *, seed: int = 0, max_positions: int = 512) -> Path:
    """A tiny random Qwen3-architecture causal LM with a Qwen3-style chat template, saved to ``out``.

    Qwen3, not Qwen2: transformers 5 loads a ``qwen2`` checkpoint's tokenizer as
    ``Qwen2Tokenizer`` whatever the checkpoint declares, which garbles a WordPiece tokenizer.
    Untied input/output embeddings make the random model continue with varied words instead
    of repeating its last special token.
    """
    import torch
    import transformers

    tok = _tokenizer(tokenizer_source)
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>", "<think>", "</think>"]})
    tok.chat_template = QWEN_STYLE_CHAT_TEMPLATE
    tok.eos_token = "<|im_end|>"
    cfg = transformers.Qwen3Config(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=max_positions,
        eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    transformers.Qwen3ForCausalLM(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out
