"""Gemma-2, Gemma-3 (text), Phi-3, GPT-NeoX, OLMo, OLMo-2 and Qwen3 for hf_cases.py: their classes, Auto mappings, config fields, small configs and variants.

Kept apart from hf_cases.py as the Falcon/Swin/CLIP cases are. Gemma-2, Gemma-3, OLMo, OLMo-2 and Qwen3 are LLaMA's
tree with other norms, Phi-3 LLaMA's with fused projections, GPT-NeoX a tree of its own; the
TypeScript side builds each by hand (src/core/catalog/hf/models/llamaVariants.ts, phi3.ts,
gptNeox.ts), so every class gets a small case row by row, and every variant that could change a
row (or is said to change none: soft-capping, sliding windows, clip_qkv, rotary share) gets one too.
"""

CONFIG_CLASS = {"gemma2": "Gemma2Config", "phi3": "Phi3Config", "gpt_neox": "GPTNeoXConfig", "olmo": "OlmoConfig", "olmo2": "Olmo2Config",
                "qwen3": "Qwen3Config", "gemma3_text": "Gemma3TextConfig"}

CLASSES = {
    "gemma2": ["Gemma2Model", "Gemma2ForCausalLM", "Gemma2ForSequenceClassification", "Gemma2ForTokenClassification"],
    "phi3": ["Phi3Model", "Phi3ForCausalLM", "Phi3ForSequenceClassification", "Phi3ForTokenClassification"],
    "gpt_neox": ["GPTNeoXModel", "GPTNeoXForCausalLM", "GPTNeoXForSequenceClassification", "GPTNeoXForTokenClassification",
                 "GPTNeoXForQuestionAnswering"],
    "olmo": ["OlmoModel", "OlmoForCausalLM", "OlmoForSequenceClassification"],
    "olmo2": ["Olmo2Model", "Olmo2ForCausalLM", "Olmo2ForSequenceClassification"],
    "qwen3": ["Qwen3Model", "Qwen3ForCausalLM", "Qwen3ForSequenceClassification", "Qwen3ForTokenClassification", "Qwen3ForQuestionAnswering"],
    "gemma3_text": ["Gemma3TextModel", "Gemma3ForCausalLM", "Gemma3TextForSequenceClassification"],
}

# transformers 5.18's models/auto/modeling_auto.py for these model types.
AUTO = {
    "AutoModel": {t: c[0] for t, c in CLASSES.items()},
    "AutoModelForCausalLM": {t: c[1] for t, c in CLASSES.items()},
    "AutoModelForSequenceClassification": {t: c[2] for t, c in CLASSES.items()},
    "AutoModelForTokenClassification": {"gemma2": "Gemma2ForTokenClassification", "phi3": "Phi3ForTokenClassification",
                                        "gpt_neox": "GPTNeoXForTokenClassification", "qwen3": "Qwen3ForTokenClassification"},
    "AutoModelForQuestionAnswering": {"gpt_neox": "GPTNeoXForQuestionAnswering", "qwen3": "Qwen3ForQuestionAnswering"},
}

_LLAMA_FIELDS = ["vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                 "max_position_embeddings", "num_labels", "tie_word_embeddings"]
CONFIG_FIELDS = {
    "gemma2": _LLAMA_FIELDS + ["head_dim", "hidden_activation", "attention_bias", "sliding_window", "final_logit_softcapping"],
    "phi3": _LLAMA_FIELDS + ["hidden_act", "resid_pdrop", "sliding_window"],
    "gpt_neox": ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act",
                 "max_position_embeddings", "use_parallel_residual", "attention_bias", "num_labels", "tie_word_embeddings"],
    "olmo": _LLAMA_FIELDS + ["hidden_act", "attention_bias", "clip_qkv"],
    "olmo2": _LLAMA_FIELDS + ["hidden_act", "attention_bias"],
    "qwen3": _LLAMA_FIELDS + ["head_dim", "hidden_act", "attention_bias", "use_sliding_window", "sliding_window"],
    "gemma3_text": _LLAMA_FIELDS + ["head_dim", "hidden_activation", "attention_bias", "sliding_window", "final_logit_softcapping"],
}

_TINY_LLAMA = {"vocab_size": 99, "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 4,
               "num_key_value_heads": 2}
TINY = {
    # Gemma-2's head_dim defaults to 256, not hidden_size // heads: the small config gives the derived value.
    "gemma2": {**_TINY_LLAMA, "head_dim": 8},
    # Phi3Config pads with token 32000, outside a 99-token vocabulary.
    "phi3": {**_TINY_LLAMA, "pad_token_id": 0},
    "gpt_neox": {"vocab_size": 99, "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 4,
                 "max_position_embeddings": 64},
    "olmo": dict(_TINY_LLAMA),
    "olmo2": dict(_TINY_LLAMA),
    # Qwen3's head_dim defaults to 128, not hidden_size // heads: the small config gives the derived value.
    "qwen3": {**_TINY_LLAMA, "head_dim": 8},
    "gemma3_text": {**_TINY_LLAMA, "head_dim": 8},
}


def add_variants(tiny, add):
    """The variants that change rows, and those said to change none: `tiny(model_type, class, case_id, sample=..., config=..., options=...)`."""
    tiny("gemma2", "Gemma2ForCausalLM", "untied-headdim16", config={"tie_word_embeddings": False, "head_dim": 16})
    tiny("gemma2", "Gemma2Model", "attention-bias-relu-T9", sample=[9], config={"attention_bias": True, "hidden_activation": "relu"})
    tiny("gemma2", "Gemma2ForCausalLM", "sliding4-eager-T20", sample=[20], config={"sliding_window": 4},
         options={"attn_implementation": "eager"})
    tiny("gemma2", "Gemma2ForCausalLM", "no-softcapping", config={"final_logit_softcapping": None, "attn_logit_softcapping": None})
    tiny("gemma2", "Gemma2Model", "mha", config={"num_key_value_heads": 4})
    add("tiny/AutoModelForCausalLM/gemma2", {"className": "AutoModelForCausalLM", "configClass": "Gemma2Config", "config": TINY["gemma2"]}, [7])

    tiny("phi3", "Phi3ForCausalLM", "tied-relu-T9", sample=[9], config={"tie_word_embeddings": True, "hidden_act": "relu"})
    tiny("phi3", "Phi3Model", "mha", config={"num_key_value_heads": None})
    tiny("phi3", "Phi3ForCausalLM", "dropout-sliding4-T20", sample=[20], config={"resid_pdrop": 0.1, "sliding_window": 4})
    tiny("phi3", "Phi3ForSequenceClassification", "labels3", options={"num_labels": 3})
    add("tiny/AutoModelForCausalLM/phi3", {"className": "AutoModelForCausalLM", "configClass": "Phi3Config", "config": TINY["phi3"]}, [7])

    tiny("gpt_neox", "GPTNeoXForCausalLM", "sequential-T20", sample=[20], config={"use_parallel_residual": False})
    tiny("gpt_neox", "GPTNeoXModel", "no-attention-bias-relu", config={"attention_bias": False, "hidden_act": "relu"})
    tiny("gpt_neox", "GPTNeoXForCausalLM", "tied-rotary-full", config={"tie_word_embeddings": True, "rotary_pct": 1.0})
    tiny("gpt_neox", "GPTNeoXModel", "eager-dropout", config={"hidden_dropout": 0.1, "attention_dropout": 0.1},
         options={"attn_implementation": "eager"})
    tiny("gpt_neox", "GPTNeoXForTokenClassification", "labels5", options={"num_labels": 5})
    add("tiny/AutoModelForCausalLM/gpt_neox",
        {"className": "AutoModelForCausalLM", "configClass": "GPTNeoXConfig", "config": TINY["gpt_neox"]}, [7])

    tiny("olmo", "OlmoForCausalLM", "tied-relu-T9", sample=[9], config={"tie_word_embeddings": True, "hidden_act": "relu"})
    tiny("olmo", "OlmoModel", "clip-qkv-attention-bias", config={"clip_qkv": 8.0, "attention_bias": True})
    tiny("olmo", "OlmoModel", "mha", config={"num_key_value_heads": None})
    add("tiny/AutoModelForCausalLM/olmo", {"className": "AutoModelForCausalLM", "configClass": "OlmoConfig", "config": TINY["olmo"]}, [7])

    tiny("olmo2", "Olmo2ForCausalLM", "tied-relu-T9", sample=[9], config={"tie_word_embeddings": True, "hidden_act": "relu"})
    tiny("olmo2", "Olmo2Model", "attention-bias", config={"attention_bias": True})
    tiny("olmo2", "Olmo2Model", "mha", config={"num_key_value_heads": None})
    add("tiny/AutoModelForCausalLM/olmo2", {"className": "AutoModelForCausalLM", "configClass": "Olmo2Config", "config": TINY["olmo2"]}, [7])

    # head_dim apart from the width (as every published Qwen3 but 8B and 14B has), a tied head, attention bias, sliding windows.
    tiny("qwen3", "Qwen3ForCausalLM", "tied-headdim16", config={"tie_word_embeddings": True, "head_dim": 16})
    tiny("qwen3", "Qwen3Model", "attention-bias-relu-T9", sample=[9], config={"attention_bias": True, "hidden_act": "relu"})
    tiny("qwen3", "Qwen3ForCausalLM", "sliding4-eager-T20", sample=[20], config={"use_sliding_window": True, "sliding_window": 4, "max_window_layers": 1},
         options={"attn_implementation": "eager"})
    tiny("qwen3", "Qwen3Model", "mha", config={"num_key_value_heads": None})
    tiny("qwen3", "Qwen3ForSequenceClassification", "labels3", options={"num_labels": 3})
    add("tiny/AutoModelForCausalLM/qwen3", {"className": "AutoModelForCausalLM", "configClass": "Qwen3Config", "config": TINY["qwen3"]}, [7])

    # Gemma-3's text model: untied with head_dim 16, attention bias with ReLU, its 5:1 window pattern at a window of 4 with eager attention, soft-capping, multi-head.
    tiny("gemma3_text", "Gemma3ForCausalLM", "untied-headdim16", config={"tie_word_embeddings": False, "head_dim": 16})
    tiny("gemma3_text", "Gemma3TextModel", "attention-bias-relu-T9", sample=[9], config={"attention_bias": True, "hidden_activation": "relu"})
    tiny("gemma3_text", "Gemma3ForCausalLM", "sliding4-eager-T20", sample=[20], config={"sliding_window": 4, "num_hidden_layers": 7},
         options={"attn_implementation": "eager"})
    tiny("gemma3_text", "Gemma3ForCausalLM", "softcapping", config={"final_logit_softcapping": 30.0, "attn_logit_softcapping": 50.0})
    tiny("gemma3_text", "Gemma3TextModel", "mha", config={"num_key_value_heads": 4})
    add("tiny/AutoModelForCausalLM/gemma3_text",
        {"className": "AutoModelForCausalLM", "configClass": "Gemma3TextConfig", "config": TINY["gemma3_text"]}, [7])
