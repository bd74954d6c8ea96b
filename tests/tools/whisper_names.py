"""Whisper's tensor names: openai/whisper's state-dict name -> transformers'
WhisperForConditionalGeneration name, as transformers' convert_openai_to_hf.py maps them
(WHISPER_MAPPING, then 'model.'). Standard library only: whisper_fuzz_seeds.py runs
without torch, whisper_ref.py with it."""

HF_MAP = [("blocks", "layers"), ("mlp.0", "fc1"), ("mlp.2", "fc2"),
          ("mlp_ln", "final_layer_norm"), (".attn.query", ".self_attn.q_proj"),
          (".attn.key", ".self_attn.k_proj"), (".attn.value", ".self_attn.v_proj"),
          (".attn_ln", ".self_attn_layer_norm"), (".attn.out", ".self_attn.out_proj"),
          (".cross_attn.query", ".encoder_attn.q_proj"),
          (".cross_attn.key", ".encoder_attn.k_proj"),
          (".cross_attn.value", ".encoder_attn.v_proj"),
          (".cross_attn_ln", ".encoder_attn_layer_norm"),
          (".cross_attn.out", ".encoder_attn.out_proj"),
          ("decoder.ln.", "decoder.layer_norm."), ("encoder.ln_post.", "encoder.layer_norm."),
          ("token_embedding", "embed_tokens"),
          ("encoder.positional_embedding", "encoder.embed_positions.weight"),
          ("decoder.positional_embedding", "decoder.embed_positions.weight")]


def hf_name(name):
    for a, b in HF_MAP:
        name = name.replace(a, b)
    return "model." + name
