"""timm (PyTorch Image Models) classifiers for probe_zoo.py's "timm ..." rows: the architectures
users fine-tune today beyond torchvision's (MetaFormers, hybrid CNN-transformers, MLP mixers,
efficient mobile models, normalizer-free nets), each at a small configuration that keeps its
blocks (fewer blocks a stage, narrower where timm lets a model be built so), random weights
(nothing downloaded), 10 classes. Needs PyTorch 2.x with timm installed (the benches' venv)."""
import contextlib

ONES4 = (1, 1, 1, 1)


def timm_available():
    try:
        import timm  # noqa: F401
        return True
    except Exception:  # (not installed, or too old for this PyTorch)
        return False


@contextlib.contextmanager
def unfused_attention():
    """timm's attention as its explicit matmul, softmax, matmul (EVA-02's fused one passes a
    tensor is_causal that the TorchScript exporter refuses)."""
    from timm.layers import set_fused_attn
    set_fused_attn(False)
    try:
        yield
    finally:
        set_fused_attn(True)


def _create(name, **kw):
    import timm
    return timm.create_model(name, pretrained=False, num_classes=10, **kw)


def _class(module, cls, **kw):
    import importlib
    return getattr(importlib.import_module(f"timm.models.{module}"), cls)(num_classes=10, **kw)


def _deterministic(model):
    """`model` with its dropout and stochastic depth off (rate 0): a one-step gradient check needs
    the same step on both sides, and the random masks are not PyTorch's."""
    import torch.nn as nn
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
        if hasattr(m, "drop_prob"):  # timm's DropPath
            m.drop_prob = 0.0
    return model


def _eva02():
    with unfused_attention():
        return _create("eva02_tiny_patch14_224", img_size=32, patch_size=4, depth=2)


def _metaformer_pool():
    from timm.models import metaformer
    return metaformer.MetaFormer(depths=(1, 1, 1, 1), dims=(16, 32, 48, 64),
                                 token_mixers=metaformer.Pooling,
                                 norm_layers=metaformer.GroupNorm1NoBias, num_classes=10)


def _metaformer_conv(attention_stages=0):
    """ConvFormer (separable convolutions as token mixers), CAFormer with its last stages'
    mixers attention (layer norms over channels-last tokens there)."""
    from timm.models import metaformer
    conv = 4 - attention_stages
    return metaformer.MetaFormer(
        depths=ONES4, dims=(32, 64, 96, 128),
        token_mixers=[metaformer.SepConv] * conv + [metaformer.Attention] * attention_stages,
        norm_layers=([metaformer.LayerNorm2dNoBias] * conv
                     + [metaformer.LayerNormNoBias] * attention_stages), num_classes=10)


def _mixer(**kw):
    from timm.models import mlp_mixer
    import timm.layers
    block = {"resmlp": dict(mlp_ratio=4, block_layer=mlp_mixer.ResBlock,
                            norm_layer=mlp_mixer.Affine),
             "gmlp": dict(mlp_ratio=6, block_layer=mlp_mixer.SpatialGatingBlock,
                          mlp_layer=timm.layers.GatedMlp)}.get(kw.pop("kind", ""), {})
    return mlp_mixer.MlpMixer(num_classes=10, img_size=32, patch_size=4, num_blocks=2,
                              embed_dim=64, **block)



# row name (after "timm ") -> (constructor, image size)
BUILDERS = {
    # vision transformers
    "deit (distilled)": (lambda: _create("deit_tiny_distilled_patch16_224", img_size=32,
                                         patch_size=4, depth=2), 32),
    "cait": (lambda: _create("cait_xxs24_224", img_size=32, patch_size=4, depth=2,
                             depth_token_only=1), 32),
    "xcit": (lambda: _create("xcit_nano_12_p8_224", img_size=32, depth=2), 32),
    "eva02": (_eva02, 32),
    "nest (drop path 0)": (lambda: _class("nest", "Nest", img_size=32, patch_size=4,
                                          num_levels=3, embed_dims=(32, 64, 128),
                                          num_heads=(1, 2, 4), depths=(1, 1, 1),
                                          drop_path_rate=0.0), 32),
    "pvt_v2": (lambda: _create("pvt_v2_b0", depths=ONES4), 64),
    "twins": (lambda: _create("twins_svt_small", depths=ONES4, img_size=64), 64),
    "coat_lite": (lambda: _create("coat_lite_tiny", serial_depths=ONES4, img_size=64), 64),
    "davit": (lambda: _create("davit_tiny", depths=ONES4, embed_dims=(32, 64, 96, 128),
                              num_heads=(1, 2, 3, 4)), 64),
    "gcvit": (lambda: _class("gcvit", "GlobalContextVit", depths=ONES4, num_heads=(2, 4, 8, 16),
                             embed_dim=32, img_size=64), 64),
    "hiera": (lambda: _create("hiera_tiny_224", img_size=64, stages=ONES4), 64),
    # (its position-bias MLP's dropout of 0.125 is fixed in timm's code: turned off)
    "swinv2_cr (its MLP's drop 0)": (lambda: _deterministic(_create(
        "swinv2_cr_tiny_ns_224", img_size=64, depths=ONES4, window_size=4)), 64),
    "tiny_vit": (lambda: _create("tiny_vit_5m_224", depths=ONES4), 64),
    # outlook attention: F.unfold, F.fold (Col2Im: the TorchScript exporter fails on it)
    "volo (torch.export)": (lambda: _class("volo", "VOLO", layers=[1, 1, 1, 1], img_size=64,
                                           embed_dims=[64, 128, 128, 128],
                                           num_heads=[2, 4, 4, 4]), 64),
    # two branches of patch sizes 8 and 16 (images 32 and 24) fused by cross-attention
    "crossvit": (lambda: _class("crossvit", "CrossVit", img_size=32, img_scale=(1.0, 0.75),
                                patch_size=(8, 8), embed_dim=(32, 64), depth=((1, 1, 0),),
                                num_heads=(2, 2), mlp_ratio=(2, 2, 1)), 32),
    # hybrids and MetaFormers
    "efficientformerv2": (lambda: _class("efficientformer_v2", "EfficientFormerV2",
                                         depths=(1, 1, 2, 2), embed_dims=(16, 32, 48, 64),
                                         img_size=64, num_vit=1, downsamples=(False, True, True, True),
                                         mlp_ratios=(4, 4, (4, 4), (4, 4))), 64),
    "convformer": (lambda: _metaformer_conv(), 32),
    "caformer": (lambda: _metaformer_conv(attention_stages=2), 32),
    "levit": (lambda: _create("levit_128s", img_size=64, depth=(1, 1, 1)), 64),
    "efficientvit (MIT)": (lambda: _create("efficientvit_b0", depths=(1, 1, 1, 1, 1)), 64),
    "efficientvit (MSRA)": (lambda: _create("efficientvit_m0", depth=(1, 1, 1), img_size=64), 64),
    "edgenext": (lambda: _create("edgenext_xx_small", depths=ONES4), 64),
    "mobilevitv2": (lambda: _create("mobilevitv2_050"), 64),
    "fastvit": (lambda: _create("fastvit_t8", layers=ONES4), 64),
    "coatnet": (lambda: _create("coatnet_nano_rw_224", img_size=64), 64),
    "mobilenetv4 (hybrid)": (lambda: _create("mobilenetv4_hybrid_medium"), 64),
    "poolformerv2": (_metaformer_pool, 64),
    "inception_next": (lambda: _create("inception_next_atto", depths=ONES4), 64),
    "mambaout": (lambda: _create("mambaout_femto", depths=ONES4), 64),
    "focalnet (drop path 0)": (lambda: _class("focalnet", "FocalNet", depths=ONES4, embed_dim=32,
                                              focal_levels=(2, 2, 2, 2),
                                              focal_windows=(3, 3, 3, 3),
                                              drop_path_rate=0.0), 64),
    "botnet": (lambda: _create("botnet26t_256", img_size=64), 64),
    "lambda_resnet": (lambda: _create("lambda_resnet26t"), 64),
    # MLPs
    "mixer": (lambda: _mixer(), 32),
    "resmlp": (lambda: _mixer(kind="resmlp"), 32),
    "gmlp": (lambda: _mixer(kind="gmlp"), 32),
    "sequencer2d (bidirectional LSTMs)": (lambda: _create(
        "sequencer2d_s", layers=ONES4, embed_dims=(32, 64, 64, 64), hidden_sizes=(16, 16, 16, 16),
        patch_sizes=(4, 2, 1, 1)), 32),
    # CNNs
    "convnextv2": (lambda: _create("convnextv2_atto", depths=ONES4, dims=(16, 32, 48, 64)), 64),
    "convmixer": (lambda: _class("convmixer", "ConvMixer", dim=64, depth=2, kernel_size=5,
                                 patch_size=4), 32),
    "repvit": (lambda: _create("repvit_m0_9"), 64),
    "ghostnetv2 (drop rate 0)": (lambda: _create("ghostnetv2_100", drop_rate=0.0), 64),
    "rexnet (drop rate 0)": (lambda: _create("rexnet_100", width_mult=0.5, drop_rate=0.0), 64),
    "starnet": (lambda: _create("starnet_s1", depths=ONES4), 64),
    "mobilenetv4": (lambda: _create("mobilenetv4_conv_small"), 64),
    "lcnet": (lambda: _create("lcnet_050"), 64),
    "hgnetv2": (lambda: _create("hgnetv2_b0"), 64),
    "vovnet": (lambda: _create("ese_vovnet19b_dw"), 64),
    "dla": (lambda: _create("dla46_c"), 64),
    "dpn": (lambda: _create("dpn48b"), 64),
    "resnest": (lambda: _create("resnest14d"), 64),
    "skresnet": (lambda: _create("skresnet18"), 64),
    "ecaresnet": (lambda: _create("ecaresnet26t"), 64),
    "selecsls": (lambda: _create("selecsls42b"), 64),
    "tresnet": (lambda: _create("tresnet_m"), 64),
    "xception": (lambda: _create("xception41"), 64),
    "nf_resnet (weight standardization)": (lambda: _create("nf_resnet26"), 64),
    "nfnet": (lambda: _create("nfnet_l0", depths=ONES4), 64),
}
