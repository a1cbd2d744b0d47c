"""Hugging Face transformers models (PyTorch 2.x with `transformers`; probe_zoo.py's "hf ..."
rows, and hf_llama in export_models.py). Tiny configurations (width 32, 2 layers), random weights
(nothing downloaded), every dropout 0 unless asked; the wrapper takes the ids (or pixels) only."""
import sys

import torch
import torch.nn as nn


def transformers_available():
    try:
        import transformers  # noqa: F401
        return True
    except Exception:  # (not installed, or too old for this PyTorch)
        return False


def _transformers():
    if not transformers_available():
        sys.exit("export_models.py: the hf_* models need Hugging Face transformers (and PyTorch "
                 "2.x): run with a Python that has them")
    import transformers
    return transformers


class HFLogits(nn.Module):
    """forward(x) -> a transformers model's logits, 2-D ([N, classes] or [N*T, vocab]). how:
    "ids" (input_ids), "nocache" (input_ids, use_cache=False), "seq2seq" (T5: the decoder reads
    the same ids, causally, and predicts the next one), "pixels" (pixel_values), "audio"
    (input_values: Wav2Vec2's logits per frame), "features" (Whisper's input_features). mask_ones: an all-ones attention_mask built
    inside forward (the TorchScript exporter cannot export transformers 5's mask code without
    one: it calls torch.diff). mask_pad: attention_mask = (ids != mask_pad) built inside forward
    (padded batches)."""

    def __init__(self, model, how, width, mask_ones=False, mask_pad=None):
        super().__init__()
        self.m, self.how, self.width, self.mask_ones = model, how, width, mask_ones
        self.mask_pad = mask_pad
        self.extra_inputs = []  # names of forward's inputs after the ids (hf_inputs)

    def forward(self, x, attention_mask=None, token_type_ids=None):
        kw = {"attention_mask": torch.ones_like(x)} if self.mask_ones else {}
        if self.mask_pad is not None:  # a padding mask, as a user's collator makes it
            kw = {"attention_mask": (x != self.mask_pad).long()}
        if attention_mask is not None:  # given as inputs (hf_inputs' export)
            kw["attention_mask"] = attention_mask
        if token_type_ids is not None:
            kw["token_type_ids"] = token_type_ids
        if self.how == "ids":
            out = self.m(input_ids=x, return_dict=False, **kw)
        elif self.how == "nocache":
            out = self.m(input_ids=x, use_cache=False, return_dict=False, **kw)
        elif self.how == "seq2seq":
            out = self.m(input_ids=x, decoder_input_ids=x, use_cache=False, return_dict=False)
        elif self.how == "audio":
            out = self.m(input_values=x, return_dict=False)
        elif self.how == "features":  # Whisper's log-mel features
            out = self.m(input_features=x, return_dict=False)
        else:
            out = self.m(pixel_values=x, return_dict=False)
        return out[0].reshape(-1, self.width)


def hf_bert(vocab, dropout=0.0, pad=0):
    """BertForSequenceClassification, 4 classes; the pad id's embedding row is padding_idx."""
    hf = _transformers()
    c = hf.BertConfig(vocab_size=max(vocab, pad + 1), pad_token_id=pad, hidden_size=32,
                      num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                      max_position_embeddings=64, num_labels=4, hidden_dropout_prob=dropout,
                      attention_probs_dropout_prob=dropout, classifier_dropout=dropout)
    return HFLogits(hf.BertForSequenceClassification(c), "ids", 4)


def hf_distilbert(vocab, pad=0):
    hf = _transformers()
    c = hf.DistilBertConfig(vocab_size=max(vocab, pad + 1), pad_token_id=pad, dim=32, n_layers=2,
                            n_heads=2, hidden_dim=64, max_position_embeddings=64, num_labels=4,
                            dropout=0.0, attention_dropout=0.0, seq_classif_dropout=0.0)
    return HFLogits(hf.DistilBertForSequenceClassification(c), "ids", 4)


def hf_roberta(vocab, pad=1):
    """RobertaForSequenceClassification, 4 classes. RoBERTa numbers each sequence's positions
    from its ids at run time (cumsum(ids != pad) * (ids != pad) + pad: a pad id anywhere takes
    position pad, the others count from pad + 1), which mgs computes in the graph. Both
    embeddings' padding_idx is cleared: ONNX's Gather has none, so mgs trains the pad rows, and
    PyTorch, the reference, then does too (probe_zoo.py's data hold the pad id)."""
    hf = _transformers()
    c = hf.RobertaConfig(vocab_size=max(vocab, pad + 1), pad_token_id=pad, hidden_size=32,
                         num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                         max_position_embeddings=64, num_labels=4, hidden_dropout_prob=0.0,
                         attention_probs_dropout_prob=0.0, classifier_dropout=0.0)
    model = hf.RobertaForSequenceClassification(c)
    model.roberta.embeddings.word_embeddings.padding_idx = None
    model.roberta.embeddings.position_embeddings.padding_idx = None
    return HFLogits(model, "ids", 4)


def hf_no_padding_idx(model):
    """Clears every embedding's padding_idx: ONNX's Gather has none, so mgs trains the pad rows;
    PyTorch, the reference, then does too."""
    for module in model.modules():
        if isinstance(module, nn.Embedding):
            module.padding_idx = None
    return model


# Encoders classifying the ids (4 classes): transformers class, config class, the config's own
# options beside the shared ones (width 32, 2 layers, 2 heads, MLP 64, dropout 0).
HF_CLASSIFIERS = {
    "albert": ("AlbertForSequenceClassification", "AlbertConfig",
               dict(embedding_size=16, classifier_dropout_prob=0.0)),
    "electra": ("ElectraForSequenceClassification", "ElectraConfig",
                dict(embedding_size=16, classifier_dropout=0.0)),
    "xlm-roberta": ("XLMRobertaForSequenceClassification", "XLMRobertaConfig",
                    dict(classifier_dropout=0.0, pad_token_id=1)),
    # (MPNet's relative attention has 32 buckets: transformers hard-codes them)
    "mpnet": ("MPNetForSequenceClassification", "MPNetConfig",
              dict(relative_attention_num_buckets=32, pad_token_id=1)),
    "deberta-v2": ("DebertaV2ForSequenceClassification", "DebertaV2Config",
                   dict(pooler_dropout=0.0, relative_attention=True, position_buckets=8,
                        max_relative_positions=-1, pos_att_type=["p2c", "c2p"],
                        position_biased_input=False, norm_rel_ebd="layer_norm",
                        share_att_key=True, pooler_hidden_size=32)),
    # (ModernBERT: rotary embeddings, GeGLU, no biases, a local window of 8 of the 12 tokens
    # on every other layer; its special ids moved into the vocabulary)
    "modernbert": ("ModernBertForSequenceClassification", "ModernBertConfig",
                   dict(local_attention=8, global_attn_every_n_layers=2, pad_token_id=1,
                        bos_token_id=2, eos_token_id=3, cls_token_id=2, sep_token_id=3,
                        embedding_dropout=0.0, mlp_dropout=0.0, attention_dropout=0.0,
                        classifier_dropout=0.0)),
    "mobilebert": ("MobileBertForSequenceClassification", "MobileBertConfig",
                   dict(embedding_size=16, intra_bottleneck_size=16, true_hidden_size=16,
                        num_feedforward_networks=2, classifier_dropout=0.0)),
}


def hf_classifier(family, vocab):
    """HF_CLASSIFIERS' `family`, its embeddings' padding_idx cleared (hf_no_padding_idx)."""
    hf = _transformers()
    cls, cfg, extra = HF_CLASSIFIERS[family]
    c = getattr(hf, cfg)(vocab_size=vocab, hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                         num_labels=4, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                         **extra)
    return HFLogits(hf_no_padding_idx(getattr(hf, cls)(c)), "ids", 4)


def hf_funnel(vocab):
    """FunnelForSequenceClassification (2 blocks of 1 layer, pooling between; its relative
    attention written with einsum "td,dnh->tnh"), 4 classes."""
    hf = _transformers()
    c = hf.FunnelConfig(vocab_size=vocab, block_sizes=[1, 1], d_model=32, n_head=2, d_head=16,
                        d_inner=64, hidden_dropout=0.0, attention_dropout=0.0,
                        activation_dropout=0.0, num_labels=4)
    return HFLogits(hf_no_padding_idx(hf.FunnelForSequenceClassification(c)), "ids", 4)


def hf_fnet(vocab):
    """FNetForSequenceClassification (its attention replaced by the real part of a 2-D Fourier
    transform: two ONNX DFTs, which only the torch.export-based exporter writes), 4 classes."""
    hf = _transformers()
    c = hf.FNetConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, intermediate_size=64,
                      hidden_dropout_prob=0.0, max_position_embeddings=64, num_labels=4,
                      use_tpu_fourier_optimizations=False)
    return HFLogits(hf_no_padding_idx(hf.FNetForSequenceClassification(c)), "ids", 4)


def hf_xlnet(vocab):
    """XLNetForSequenceClassification (relative attention with einsum "ibh,hnd->ibnd", its ids
    transposed to time-major before the embedding), 4 classes."""
    hf = _transformers()
    c = hf.XLNetConfig(vocab_size=vocab, d_model=32, n_layer=2, n_head=2, d_inner=64,
                       dropout=0.0, summary_last_dropout=0.0, num_labels=4, mem_len=None)
    return HFLogits(hf_no_padding_idx(hf.XLNetForSequenceClassification(c)), "ids", 4)


def hf_padded(family, vocab):
    """A model of `family` (bert, roberta: ...ForTokenClassification, a label per token; llama,
    gpt2: the causal LMs) given attention_mask = (ids != 0) built inside forward: padded batches
    (probe_zoo.py's "padded" data, pad id 0), every padding_idx cleared."""
    hf = _transformers()
    if family in ("bert", "roberta"):
        cls, cfg = {"bert": ("BertForTokenClassification", "BertConfig"),
                    "roberta": ("RobertaForTokenClassification", "RobertaConfig")}[family]
        c = getattr(hf, cfg)(vocab_size=vocab, pad_token_id=0, hidden_size=32, num_hidden_layers=2,
                             num_attention_heads=2, intermediate_size=64,
                             max_position_embeddings=64, num_labels=vocab, hidden_dropout_prob=0.0,
                             attention_probs_dropout_prob=0.0, classifier_dropout=0.0)
        return HFLogits(hf_no_padding_idx(getattr(hf, cls)(c)), "ids", vocab, mask_pad=0)
    wrapped = hf_decoder(family, vocab)
    wrapped.mask_pad = 0
    return wrapped


def hf_inputs(family, vocab):
    """hf_padded's model as users export it: attention_mask (and BERT's token_type_ids) graph
    inputs beside input_ids (mgsc --bind-input gives them their values); called with the ids
    alone (PyTorch's reference) it builds them as --bind-input does: ids != 0, zeros."""
    model = hf_padded(family, vocab)
    model.extra_inputs = ["attention_mask"] + (["token_type_ids"] if family == "bert" else [])
    return model


def hf_bart(vocab):
    """BartForConditionalGeneration as a language model (decoder_input_ids = the ids), as T5;
    its final_logits_bias is a float buffer (freeze it)."""
    hf = _transformers()
    c = hf.BartConfig(vocab_size=vocab, d_model=32, encoder_layers=2, decoder_layers=2,
                      encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                      decoder_ffn_dim=64, max_position_embeddings=64, dropout=0.0,
                      attention_dropout=0.0, activation_dropout=0.0, classifier_dropout=0.0,
                      encoder_layerdrop=0.0, decoder_layerdrop=0.0, pad_token_id=1,
                      bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
    return HFLogits(hf_no_padding_idx(hf.BartForConditionalGeneration(c)), "seq2seq", vocab)


def hf_vision(family):
    """ConvNextForImageClassification, SegformerForImageClassification (two small stages),
    RegNet, MobileViT, LeViT, CLIPForImageClassification or Dinov2ForImageClassification (its position embeddings for
    32x32 images, bicubically interpolated for others) on images, 10 classes."""
    hf = _transformers()
    if family == "clip":  # CLIPForImageClassification: the vision tower, patches of 8
        c = hf.CLIPConfig(text_config=dict(vocab_size=64, hidden_size=32, intermediate_size=64,
                                           num_hidden_layers=2, num_attention_heads=2,
                                           max_position_embeddings=64),
                          vision_config=dict(image_size=32, patch_size=8, hidden_size=32,
                                             intermediate_size=64, num_hidden_layers=2,
                                             num_attention_heads=2, attention_dropout=0.0),
                          num_labels=10)
        return HFLogits(hf.CLIPForImageClassification(c), "pixels", 10)
    if family == "beit":  # BeitForImageClassification with relative position bias
        c = hf.BeitConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=64, hidden_dropout_prob=0.0,
                          attention_probs_dropout_prob=0.0, drop_path_rate=0.0,
                          use_relative_position_bias=True, num_labels=10)
        return HFLogits(hf.BeitForImageClassification(c), "pixels", 10)
    if family == "dinov2":  # Dinov2ForImageClassification: patches of 8, 4x4 positions
        c = hf.Dinov2Config(image_size=32, patch_size=8, num_channels=3, hidden_size=32,
                            num_hidden_layers=2, num_attention_heads=2, mlp_ratio=2,
                            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                            drop_path_rate=0.0, num_labels=10)
        return HFLogits(hf.Dinov2ForImageClassification(c), "pixels", 10)
    if family == "regnet":  # RegNetForImageClassification (X blocks: grouped convs, BatchNorm)
        c = hf.RegNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                            groups_width=8, layer_type="x", num_labels=10)
        return HFLogits(hf.RegNetForImageClassification(c), "pixels", 10)
    if family == "mobilevit":  # MobileViTForImageClassification (convs with BatchNorm, attention)
        c = hf.MobileViTConfig(image_size=32, patch_size=2, hidden_sizes=[16, 24, 32],
                               neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64], num_attention_heads=2,
                               hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                               classifier_dropout_prob=0.0, num_labels=10)
        return HFLogits(hf.MobileViTForImageClassification(c), "pixels", 10)
    if family == "levit":  # LevitForImageClassification (convolutions and attention, BatchNorm)
        c = hf.LevitConfig(image_size=32, hidden_sizes=[32, 48, 64], num_attention_heads=[2, 2, 2],
                           depths=[1, 1, 1], key_dim=[8, 8, 8], drop_path_rate=0,
                           mlp_ratio=[2, 2, 2], attention_ratio=[2, 2, 2], num_labels=10)
        return HFLogits(hf.LevitForImageClassification(c), "pixels", 10)
    if family == "convnext":
        c = hf.ConvNextConfig(num_channels=3, patch_size=4, num_stages=2, hidden_sizes=[16, 32],
                              depths=[1, 1], drop_path_rate=0.0, image_size=32, num_labels=10)
        return HFLogits(hf.ConvNextForImageClassification(c), "pixels", 10)
    c = hf.SegformerConfig(num_channels=3, num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                           hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2],
                           num_attention_heads=[1, 2], mlp_ratios=[2, 2], hidden_dropout_prob=0.0,
                           attention_probs_dropout_prob=0.0, classifier_dropout_prob=0.0,
                           drop_path_rate=0.0, decoder_hidden_size=32, num_labels=10)
    return HFLogits(hf.SegformerForImageClassification(c), "pixels", 10)


def hf_t5(vocab):
    """T5ForConditionalGeneration as a language model (decoder_input_ids = the ids)."""
    hf = _transformers()
    c = hf.T5Config(vocab_size=vocab, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                    num_decoder_layers=2, num_heads=4, dropout_rate=0.0, decoder_start_token_id=0,
                    tie_word_embeddings=False)
    return HFLogits(hf.T5ForConditionalGeneration(c), "seq2seq", vocab)


def hf_vit():
    """ViTForImageClassification on 32x32 images, patches of 8, 10 classes."""
    hf = _transformers()
    c = hf.ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32,
                     num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, num_labels=10)
    return HFLogits(hf.ViTForImageClassification(c), "pixels", 10)


def hf_decoder(family, vocab, mask_ones=False, **kw):
    """A causal LM of `family` (llama, qwen2, mistral, phi, phi3, gptneox, falcon, gpt2): 4 query
    heads sharing 2 key/value heads where the family has grouped-query attention (Falcon: its
    default multi-query attention, one), the LM head not tied; its rotary inv_freq is a float buffer
    (the torch.export-based exporter keeps it: freeze it, mgsc --freeze '*.rotary_emb.inv_freq').
    Phi-3's embedding has a padding_idx (pad_token_id): it is put outside the ids (vocab, one
    more row). mask_ones: see HFLogits."""
    hf = _transformers()
    if family == "gpt2":  # its own config names; 4 heads (no grouped-query attention)
        c = hf.GPT2Config(vocab_size=vocab, n_embd=32, n_inner=64, n_layer=2, n_head=4,
                          n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                          tie_word_embeddings=False, **kw)
        return HFLogits(hf.GPT2LMHeadModel(c), "nocache", vocab, mask_ones)
    # Families with their own config names: OPT (learned positions), BLOOM (ALiBi), GPT-J
    # (rotary on 4 of each head's 8 dims, parallel attention and MLP).
    if family == "mamba":  # selective state spaces (Softplus time steps), no attention
        c = hf.MambaConfig(vocab_size=vocab, hidden_size=32, state_size=8, num_hidden_layers=2,
                           expand=2, conv_kernel=4, time_step_rank=4, use_cache=False,
                           tie_word_embeddings=False, **kw)
        return HFLogits(hf.MambaForCausalLM(c), "nocache", vocab, mask_ones)
    if family == "opt":
        c = hf.OPTConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, ffn_dim=64,
                         num_attention_heads=4, max_position_embeddings=64, dropout=0.0,
                         attention_dropout=0.0, layerdrop=0.0, word_embed_proj_dim=32,
                         tie_word_embeddings=False, pad_token_id=1, **kw)
        return HFLogits(hf_no_padding_idx(hf.OPTForCausalLM(c)), "nocache", vocab, mask_ones)
    if family == "bloom":
        c = hf.BloomConfig(vocab_size=vocab, hidden_size=32, n_layer=2, n_head=4,
                           hidden_dropout=0.0, attention_dropout=0.0, tie_word_embeddings=False,
                           **kw)
        return HFLogits(hf.BloomForCausalLM(c), "nocache", vocab, mask_ones)
    if family == "gptj":
        c = hf.GPTJConfig(vocab_size=vocab, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                          rotary_dim=4, n_inner=64, resid_pdrop=0.0, embd_pdrop=0.0,
                          attn_pdrop=0.0, tie_word_embeddings=False, **kw)
        return HFLogits(hf.GPTJForCausalLM(c), "nocache", vocab, mask_ones)
    cls, cfg = {"llama": ("LlamaForCausalLM", "LlamaConfig"),
                "qwen2": ("Qwen2ForCausalLM", "Qwen2Config"),
                "mistral": ("MistralForCausalLM", "MistralConfig"),
                "phi": ("PhiForCausalLM", "PhiConfig"),
                "phi3": ("Phi3ForCausalLM", "Phi3Config"),
                "gemma": ("GemmaForCausalLM", "GemmaConfig"),
                "gemma2": ("Gemma2ForCausalLM", "Gemma2Config"),
                "stablelm": ("StableLmForCausalLM", "StableLmConfig"),
                "gptneox": ("GPTNeoXForCausalLM", "GPTNeoXConfig"),
                "falcon": ("FalconForCausalLM", "FalconConfig"),
                "qwen3": ("Qwen3ForCausalLM", "Qwen3Config"),
                "gemma3": ("Gemma3ForCausalLM", "Gemma3TextConfig"),
                "olmo2": ("Olmo2ForCausalLM", "Olmo2Config"),
                "smollm3": ("SmolLM3ForCausalLM", "SmolLM3Config"),
                "granite": ("GraniteForCausalLM", "GraniteConfig"),
                "qwen3moe": ("Qwen3MoeForCausalLM", "Qwen3MoeConfig"),
                "gptoss": ("GptOssForCausalLM", "GptOssConfig"),
                "glm4": ("Glm4ForCausalLM", "Glm4Config"),
                "cohere2": ("Cohere2ForCausalLM", "Cohere2Config"),
                "ernie45": ("Ernie4_5ForCausalLM", "Ernie4_5Config"),
                "exaone4": ("Exaone4ForCausalLM", "Exaone4Config"),
                "olmo3": ("Olmo3ForCausalLM", "Olmo3Config"),
                "apertus": ("ApertusForCausalLM", "ApertusConfig"),
                "seedoss": ("SeedOssForCausalLM", "SeedOssConfig"),
                "deepseekv3": ("DeepseekV3ForCausalLM", "DeepseekV3Config"),
                "lfm2": ("Lfm2ForCausalLM", "Lfm2Config"),
                "mixtral": ("MixtralForCausalLM", "MixtralConfig"),
                "qwen2moe": ("Qwen2MoeForCausalLM", "Qwen2MoeConfig")}[family]
    base = dict(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=4, max_position_embeddings=64, attention_dropout=0.0,
                tie_word_embeddings=False)
    if family not in ("gptneox", "falcon"):
        base["num_key_value_heads"] = 2
    if family == "falcon":
        del base["intermediate_size"]
    if family == "phi3":
        base.update(vocab_size=vocab + 1, pad_token_id=vocab, eos_token_id=vocab)
    # Mixtures of experts: each token routed to 2 of 4 experts by TopK
    if family == "mixtral":
        base.update(num_local_experts=4, num_experts_per_tok=2, router_jitter_noise=0.0,
                    sliding_window=None)
    if family in ("smollm3", "glm4"):
        base.update(pad_token_id=0)  # (their defaults are past this vocabulary)
    if family == "seedoss":
        base.update(residual_dropout=0.0)
    if family == "gptoss":
        base.update(num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
                    layer_types=["sliding_attention", "full_attention"])
    if family == "deepseekv3":
        # multi-head latent attention (queries and keys/values through low ranks, a rotary
        # part of each head), 4 routed experts, 2 a token, one group, the first layer dense
        base.update(q_lora_rank=16, kv_lora_rank=16, qk_rope_head_dim=4, qk_nope_head_dim=4,
                    v_head_dim=8, n_routed_experts=4, num_experts_per_tok=2, n_group=1,
                    topk_group=1, moe_intermediate_size=32, first_k_dense_replace=1,
                    n_shared_experts=1, head_dim=4)
    if family == "qwen3moe":
        base.update(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                    decoder_sparse_step=1)
    if family == "qwen2moe":
        base.update(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                    shared_expert_intermediate_size=32, decoder_sparse_step=1)
    base.update(kw)
    width = base["vocab_size"]
    # (Gemma's pad id 0 is in the data: its padding_idx cleared, hf_no_padding_idx)
    model = hf_no_padding_idx(getattr(hf, cls)(getattr(hf, cfg)(**base)))
    if family in ("mixtral", "qwen2moe", "qwen3moe", "gptoss", "deepseekv3"):
        # The experts as one batched product of each token's routed experts' stacked weights
        # (TopK, a Gather at its indices, MatMul). The eager default loops over the experts
        # that received tokens (torch.where, index_add_): a data-dependent number of steps,
        # which neither exporter writes as a static graph.
        model.set_experts_implementation("batched_mm")
    return HFLogits(model, "nocache", width, mask_ones)


def hf_whisper(classes):
    """WhisperForAudioClassification (its encoder, 2 layers 32 wide, and a classifier) on 8 mel
    bins of 16 frames (its convolutions halve them to max_source_positions, 8)."""
    hf = _transformers()
    c = hf.WhisperConfig(vocab_size=64, num_mel_bins=8, d_model=32, encoder_layers=2,
                         decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
                         encoder_ffn_dim=64, decoder_ffn_dim=64, max_source_positions=8,
                         max_target_positions=16, dropout=0.0, attention_dropout=0.0,
                         activation_dropout=0.0, encoder_layerdrop=0.0, decoder_layerdrop=0.0,
                         classifier_proj_size=16, num_labels=classes, use_weighted_layer_sum=False,
                         mask_time_prob=0.0, mask_feature_prob=0.0)
    return HFLogits(hf.WhisperForAudioClassification(c), "features", classes)


def hf_wav2vec2(classes, layers=2, family="Wav2Vec2"):
    """Wav2Vec2ForCTC (or, family "Hubert", HubertForCTC) as a per-frame classifier: its logits
    [N*T', classes], T' = samples / 8 (a feature extractor of 2 convolutions, kernels and
    strides 4 and 2, GroupNorm after the first, as feat_extract_norm="group"), `layers`
    transformer layers 32 wide; no masking."""
    hf = _transformers()
    c = getattr(hf, family + "Config")(vocab_size=classes, hidden_size=32, num_hidden_layers=layers,
                          num_attention_heads=2, intermediate_size=64, conv_dim=(16, 16),
                          conv_stride=(4, 2), conv_kernel=(4, 2), num_feat_extract_layers=2,
                          num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                          hidden_dropout=0.0, activation_dropout=0.0, attention_dropout=0.0,
                          feat_proj_dropout=0.0, final_dropout=0.0, layerdrop=0.0,
                          mask_time_prob=0.0, mask_feature_prob=0.0, do_stable_layer_norm=False,
                          feat_extract_norm="group")
    return HFLogits(getattr(hf, family + "ForCTC")(c), "audio", classes)
