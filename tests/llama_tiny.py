"""A Llama decoder from paddleformers (real model code), from a tiny config with random weights."""

from __future__ import annotations

from typing import Any

import paddle


def tiny_llama(
    *, recompute: bool = False, layers: int = 2, reentrant: bool = True
) -> tuple[Any, Any]:
    """(LlamaForCausalLM, input ids). ``recompute``: every decoder layer under
    ``paddle.distributed.fleet.utils.recompute`` (paddleformers' own "full" granularity)."""
    from paddleformers.transformers import LlamaConfig, LlamaForCausalLM

    # paddleformers recomputes whenever these three say so, whatever `recompute` says.
    schedule = dict(
        recompute_granularity="full", recompute_method="uniform", recompute_num_layers=1
    )
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        fuse_rms_norm=False,  # the fused kernel is GPU-only
        recompute=recompute,
        recompute_use_reentrant=reentrant,
        **(schedule if recompute else {}),
    )
    model = LlamaForCausalLM(config)
    model.train()
    return model, paddle.randint(0, config.vocab_size, [2, 8])
