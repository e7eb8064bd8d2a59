"""The small transformers configs behind ``tiny:<model_type>`` specs: random weights, no download
(transformers is imported when they are built, not with this module)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _text(**kw):
    base = dict(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=2,
    )
    base.update(kw)
    return base


def _vision(**kw):
    base = dict(
        image_size=32,
        patch_size=8,
        num_channels=3,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
    )
    base.update(kw)
    return base


def tiny_configs() -> dict[str, Callable[[], Any]]:
    """Each tiny architecture's config builder, by name (in a fixed order: the tiny revision hashes them)."""
    return {**_language_configs(), **_vision_and_audio_configs(), **_paired_configs()}


# ignore[call-arg] below: transformers' config classes accept extra keyword arguments at run time
# (wrap_init_to_accept_kwargs passes them on to __post_init__), but their dataclass signatures omit **kwargs


def _language_configs() -> dict[str, Callable[[], Any]]:
    import transformers as T

    return {
        "bert": lambda: T.BertConfig(**_text()),
        # decoders: prompt (128) + forced new tokens (16) must fit their positions
        "llama": lambda: T.LlamaConfig(**_text(num_key_value_heads=2, max_position_embeddings=256)),
        "qwen2": lambda: T.Qwen2Config(**_text(num_key_value_heads=2, max_position_embeddings=256)),
        "t5": lambda: T.T5Config(  # type: ignore[call-arg]
            vocab_size=100,
            d_model=32,
            d_kv=16,
            d_ff=64,
            num_layers=2,
            num_heads=2,
            decoder_start_token_id=0,
            pad_token_id=0,
            eos_token_id=1,
        ),
    }


def _vision_and_audio_configs() -> dict[str, Callable[[], Any]]:
    import transformers as T

    return {
        "vit": lambda: T.ViTConfig(**_vision()),
        "detr": lambda: T.DetrConfig(  # type: ignore[call-arg]
            backbone_config=T.ResNetConfig(  # type: ignore[call-arg]
                num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], out_features=["stage2"]
            ),
            use_timm_backbone=False,
            use_pretrained_backbone=False,
            d_model=32,
            encoder_layers=1,
            decoder_layers=1,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            num_queries=10,
            num_labels=5,
        ),
        "wav2vec2": lambda: T.Wav2Vec2Config(
            vocab_size=32,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            conv_dim=(16, 16),
            conv_stride=(5, 4),
            conv_kernel=(10, 8),
            num_conv_pos_embeddings=16,
            num_conv_pos_embedding_groups=2,
        ),
        "whisper": lambda: T.WhisperConfig(
            vocab_size=100,
            d_model=32,
            encoder_layers=1,
            decoder_layers=1,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            num_mel_bins=16,
            max_source_positions=32,
            max_target_positions=64,
            pad_token_id=0,
            eos_token_id=1,
            decoder_start_token_id=2,
            bos_token_id=2,
            begin_suppress_tokens=None,
            suppress_tokens=None,
        ),
    }


def _paired_configs() -> dict[str, Callable[[], Any]]:
    """Two towers: text with vision, video or audio, and the vision-language decoders."""
    import transformers as T

    def llava():
        return T.LlavaConfig(
            vision_config=T.CLIPVisionConfig(**_vision()),  # type: ignore[call-arg]
            text_config=T.LlamaConfig(**_text(vocab_size=120, num_key_value_heads=2, max_position_embeddings=256)),
            image_token_index=110,
            projector_hidden_act="gelu",
            vision_feature_select_strategy="default",
            vision_feature_layer=-1,
            image_seq_length=16,
            pad_token_id=0,
        )

    def llava_next():
        return T.LlavaNextConfig(
            vision_config=T.CLIPVisionConfig(**_vision()),  # type: ignore[call-arg]
            text_config=T.LlamaConfig(**_text(vocab_size=120, num_key_value_heads=2, max_position_embeddings=512)),
            image_token_index=110,
            image_grid_pinpoints=[[32, 32]],
            vision_feature_select_strategy="default",
            vision_feature_layer=-1,
            image_seq_length=16,
            pad_token_id=0,
        )

    # Text towers fit benchdb's defaults (--seq-len 128, --gen-tokens 16) with room to spare: 256
    # positions (CLAP's RoBERTa-style text model needs seq_len + 2). BERT keeps 128 (128 fits).
    clip_text = dict(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=256,
        bos_token_id=2,
        eos_token_id=1,
        pad_token_id=0,
    )
    return {
        "clip": lambda: T.CLIPConfig(text_config=clip_text, vision_config=_vision(), projection_dim=16),
        "xclip": lambda: T.XCLIPConfig(
            text_config=clip_text,
            vision_config=_vision(
                num_frames=4,
                mit_hidden_size=32,
                mit_num_hidden_layers=1,
                mit_num_attention_heads=2,
                mit_intermediate_size=64,
            ),
            projection_dim=32,
            prompt_layers=1,
            prompt_num_attention_heads=2,
            prompt_hidden_act="quick_gelu",
        ),
        "clap": lambda: T.ClapConfig(
            text_config=clip_text,
            # audio hidden_size = patch_embeds_hidden_size * 2 ** (len(depths) - 1)
            audio_config=dict(
                spec_size=64,
                patch_size=4,
                num_mel_bins=16,
                window_size=4,
                depths=[1, 1],
                num_attention_heads=[2, 2],
                patch_embeds_hidden_size=16,
                hidden_size=32,
                num_hidden_layers=2,
                enable_fusion=False,
                flatten_patch_embeds=True,
            ),
            projection_dim=16,
        ),
        "llava": llava,
        "llava_next": llava_next,
    }
