"""Sequence models: the recurrent nets (LSTM, GRU, bidirectional, the LSTM language model) and
the transformers (encoder classifiers, GPT-style and Llama-style decoders, seq2seq);
scripts/export_models.py builds and exports them."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class DigitsLSTM(nn.Module):
    """The digits as sequences: an image's 8 rows, one per step, into an LSTM
    (8 -> 32, sequence first), its last hidden state into a linear classifier.
    A recurrent model mgs trains; lstmlm (TokenLSTM) is the language model,
    with an embedding and token data."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        seq = x.reshape(-1, 8, 8).transpose(0, 1)
        _, (h, _) = self.lstm(seq)
        return self.fc(h[-1])


class DigitsGRU(nn.Module):
    """DigitsLSTM with a GRU (8 -> 32, sequence first; PyTorch's GRU exports
    linear_before_reset = 1): the last hidden state into a linear classifier."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        seq = x.reshape(-1, 8, 8).transpose(0, 1)
        _, h = self.gru(seq)
        return self.fc(h[-1])


class DigitsRNN(nn.Module):
    """The digits' rows as a sequence through nn.RNN (ONNX RNN, which mgs unrolls): a
    bidirectional tanh layer (8 -> 12 each way, batch first), then a relu layer (24 -> 16)
    whose initial state is learned (a parameter expanded over the batch); its last state
    and the first layer's last step into a linear classifier."""

    def __init__(self):
        super().__init__()
        self.rnn1 = nn.RNN(8, 12, batch_first=True, bidirectional=True)
        self.rnn2 = nn.RNN(24, 16, nonlinearity="relu")
        self.h0 = nn.Parameter(torch.linspace(-0.2, 0.2, 16).reshape(1, 1, 16))
        self.fc = nn.Linear(16 + 24, 10)

    def forward(self, x):
        y1, _ = self.rnn1(x.reshape(-1, 8, 8))
        h0 = self.h0.expand(1, y1.shape[0], 16).contiguous()
        _, h = self.rnn2(y1.transpose(0, 1), h0)
        return self.fc(torch.cat([h[0], y1[:, -1]], dim=1))


class DigitsEncoderDecoder(nn.Module):
    """Recurrent layers that start from a given state: a 2-layer LSTM encoder
    (8 -> 16) over the digits' first 4 rows hands its last (h, c) to a 2-layer
    LSTM decoder over the last 4 (ONNX LSTM's initial_h and initial_c, a
    computed value sliced per layer); a bidirectional GRU (8 -> 12 each way,
    batch first) over all 8 rows starts from a learned state (a parameter
    expanded over the batch). The decoder's last step and the GRU's last
    states into a linear classifier."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.LSTM(8, 16, num_layers=2)
        self.decoder = nn.LSTM(8, 16, num_layers=2)
        self.gru = nn.GRU(8, 12, batch_first=True, bidirectional=True)
        self.h0 = nn.Parameter(torch.linspace(-0.3, 0.3, 24).reshape(2, 1, 12))
        self.fc = nn.Linear(16 + 24, 10)

    def forward(self, x):
        rows = x.reshape(-1, 8, 8)
        seq = rows.transpose(0, 1)
        _, state = self.encoder(seq[:4])
        y, _ = self.decoder(seq[4:], state)
        _, h = self.gru(rows, self.h0.expand(2, rows.shape[0], 12).contiguous())
        return self.fc(torch.cat([y[-1], h.transpose(0, 1).reshape(-1, 24)], dim=1))


class DigitsBiLSTM(nn.Module):
    """DigitsLSTM bidirectional (8 -> 16 each way): both directions' last
    hidden states (y_h) and both directions' outputs at the last step (y),
    side by side, into a linear classifier."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, bidirectional=True)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        seq = x.reshape(-1, 8, 8).transpose(0, 1)
        y, (h, _) = self.lstm(seq)
        return self.fc(torch.cat([h.transpose(0, 1).reshape(-1, 32), y[-1]], 1))


class TokenLSTM(nn.Module):
    """A language model (the shape of the paper's 2-layer LSTM on PTB, small):
    token ids [N, T] into an embedding (50 -> 16), two LSTM layers (16 -> 32,
    sequence first) and a linear layer back to the 50 tokens at every
    position: logits [N * T, 50], one row per (sample, position), sample-major."""

    def __init__(self, vocab=50, embed=16, hidden=32, rows=True):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=2)
        self.out = nn.Linear(hidden, vocab)
        self.rows = rows

    def forward(self, tokens):
        x = self.embed(tokens).transpose(0, 1)
        y, _ = self.lstm(x)
        if not self.rows:  # logits [N, T, 50], as Hugging Face's LM heads give them
            return self.out(y.transpose(0, 1))
        return self.out(y.transpose(0, 1).reshape(-1, y.shape[-1]))


class OneHotGRU(nn.Module):
    """TokenLSTM's language model on one-hot tokens instead of an embedding, as
    character-level models are written: F.one_hot(ids, 50).float() (ONNX OneHot of the INT64
    graph input, then Cast) into a GRU (50 -> 32, batch first) and a linear layer back to the
    50 tokens at every position: logits [N * T, 50]."""

    def __init__(self, vocab=50, hidden=32):
        super().__init__()
        self.vocab = vocab
        self.gru = nn.GRU(vocab, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        # (.to the weights' dtype: float32 when exported, float64 for the gradient check)
        y, _ = self.gru(F.one_hot(tokens, self.vocab).to(self.out.weight.dtype))
        return self.out(y.reshape(-1, y.shape[-1]))


class TokenBags(nn.Module):
    """A bag-of-tokens classifier (PyTorch's text classification tutorial's model): three
    nn.EmbeddingBag of each sequence's 12 tokens (mean, sum and max over the bag; the
    TorchScript exporter writes each as a Loop over the bags that slices the flattened ids),
    concatenated into a linear map to 4 classes."""

    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.bags = nn.ModuleList([nn.EmbeddingBag(vocab, dim, mode=m)
                                   for m in ("mean", "sum", "max")])
        self.out = nn.Linear(3 * dim, 4)

    def forward(self, tokens):
        return self.out(torch.cat([bag(tokens) for bag in self.bags], dim=1))


class TokenTransformer(nn.Module):
    """An nn.TransformerEncoder classifier over token ids [N, T]: an
    embedding (50 -> 32) plus a learned position embedding, two encoder
    layers (4 heads, feed-forward 64, ReLU, dropout 0, batch first), the mean
    over the positions and a linear layer to 4 classes (make_token_data.py's
    progression steps: steps.npy)."""

    def __init__(self, vocab=50, width=32, heads=4, layers=2, length=12, classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.randn(1, length, width) * 0.1)
        layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=2 * width, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.fc = nn.Linear(width, classes)

    def forward(self, tokens):
        return self.fc(self.encoder(self.embed(tokens) + self.pos).mean(1))


class PaddedAttention(nn.Module):
    """nn.MultiheadAttention over token ids [N, T] with padding: an embedding
    (50 -> 32) plus a learned position embedding, one attention layer (4
    heads, batch first) whose key_padding_mask is computed from the ids
    (id 0 is padding: `tokens == 0`, a mask made at run time), the mean over
    the positions and a linear layer to 4 classes (make_token_data.py's
    steps.npy)."""

    def __init__(self, vocab=50, width=32, heads=4, length=12, classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.randn(1, length, width) * 0.1)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.fc = nn.Linear(width, classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        y = self.attn(x, x, x, key_padding_mask=tokens == 0, need_weights=False)[0]
        return self.fc(y.mean(1))


class HFMaskedAttention(nn.Module):
    """Causal attention over token ids [N, T] under a padding mask built as Hugging Face's
    masking code builds it (id 0 is padding): attention_mask = (ids != 0) as INT64, back to
    BOOL, flattened and read at batch * T + key (constant indices), And-ed with the causal mask,
    the scores' bias Where(mask, 0, -inf), and the probabilities guarded by
    Where(isnan(p), 0, p); an embedding 50 -> 32 plus learned positions, one head, a linear
    layer to the next token (50)."""

    def __init__(self, vocab=50, width=32, length=12):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.randn(1, length, width) * 0.1)
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.attend(tokens, (tokens != 0).long(), self.embed(tokens) + self.pos)

    def attend(self, tokens, attention_mask, x):
        n, t = tokens.shape
        batch = torch.arange(n).view(n, 1, 1, 1)
        query, key = torch.arange(t).view(1, 1, t, 1), torch.arange(t).view(1, 1, 1, t)
        padding = attention_mask.bool().flatten()[(batch * t + key).flatten()].view(n, 1, 1, t)
        mask = padding & (key <= query)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        bias = torch.where(mask, torch.tensor(0.0), torch.tensor(float("-inf")))
        p = torch.softmax(scores.unsqueeze(1) + bias, dim=-1)
        p = torch.where(torch.isnan(p), torch.tensor(0.0), p)
        return self.out(p.squeeze(1) @ v).reshape(n * t, -1)


class HFMaskedInputs(HFMaskedAttention):
    """HFMaskedAttention as users export Hugging Face models: attention_mask and token_type_ids
    are graph inputs beside the ids (MULTI_INPUT; mgsc --bind-input
    attention_mask=input!=0,token_type_ids=0), batch and sequence dynamic, and a token type
    embedding (2 -> 32) is added. Called with the ids alone (the reference) it builds both as
    --bind-input does."""

    def __init__(self):
        super().__init__()
        self.types = nn.Embedding(2, 32)

    def forward(self, tokens, attention_mask=None, token_type_ids=None):
        if attention_mask is None:
            attention_mask = (tokens != 0).long()
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(tokens)
        return self.attend(tokens, attention_mask,
                           self.embed(tokens) + self.pos + self.types(token_type_ids))


class RobertaPositions(nn.Module):
    """RoBERTa's embeddings over token ids [N, T] as a classifier: a word embedding (50 -> 32)
    plus a position embedding read at position ids made at run time from the ids, as
    transformers' create_position_ids_from_input_ids writes them (a pad id anywhere takes
    position `pad`, the others count from pad + 1: cumsum(mask) * mask + pad), LayerNorm, the
    mean over the positions and a linear layer to 4 classes."""

    def __init__(self, vocab=50, width=32, length=12, classes=4, pad=1):
        super().__init__()
        self.pad = pad
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(length + pad + 1, width)
        self.ln = nn.LayerNorm(width)
        self.fc = nn.Linear(width, classes)

    def forward(self, tokens):
        mask = tokens.ne(self.pad).int()
        positions = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + self.pad
        x = self.ln(self.embed(tokens) + self.pos(positions))
        return self.fc(x.mean(1))


class GPTBlock(nn.Module):
    """A pre-LayerNorm decoder block: x + attention(LN(x)) under the causal
    mask, then x + MLP(LN(x)) with GELU."""

    def __init__(self, width, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 4 * width)
        self.fc2 = nn.Linear(4 * width, width)

    def forward(self, x, mask):
        y = self.ln1(x)
        x = x + self.attn(y, y, y, attn_mask=mask, need_weights=False)[0]
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TokenGPT(nn.Module):
    """A GPT-style causal language model: token ids [N, T] into an embedding
    (50 -> 32) plus a position embedding (a table of T rows read at the
    position ids 0..T-1, an INT64 buffer: a constant in ONNX), two decoder
    blocks (4 heads) under a causal mask, a final LayerNorm and a linear layer
    back to the 50 tokens at every position: logits [N * T, 50], sample-major,
    as TokenLSTM's. The causal mask is a float buffer (0 on and below the
    diagonal, -inf above), added to the attention scores: an ONNX
    initializer like the weights, so mgsc is told to keep it (--freeze mask)."""

    def __init__(self, vocab=50, width=32, heads=4, layers=2, length=12, masked=float("-inf")):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(length, width)
        self.blocks = nn.ModuleList([GPTBlock(width, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(width)
        self.out = nn.Linear(width, vocab)
        self.register_buffer("pos_ids", torch.arange(length))
        self.register_buffer("mask", torch.triu(torch.full((length, length), masked), 1))

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos(self.pos_ids)
        for block in self.blocks:
            x = block(x, self.mask)
        return self.out(self.ln(x)).reshape(-1, self.out.out_features)


class TokenDecoder(nn.Module):
    """nn.TransformerDecoder as a language model: token ids [N, T] into an
    embedding (50 -> 32), two decoder layers (4 heads, feed-forward 64, ReLU,
    dropout 0, batch first) under the causal mask nn.Transformer generates
    in forward (torch.triu of a -inf square: ConstantOfShape and Trilu,
    evaluated at import), their memory a linear map of the embeddings, read
    under the same mask (else every position sees the next token), and a
    linear layer back to the 50 tokens at every position: logits [N * T, 50],
    sample-major, as TokenGPT's."""

    def __init__(self, vocab=50, width=32, heads=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.memory = nn.Linear(width, width)
        layer = nn.TransformerDecoderLayer(width, heads, dim_feedforward=2 * width, dropout=0.0,
                                           batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, layers)
        self.out = nn.Linear(width, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        causal = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
        y = self.decoder(x, self.memory(x), tgt_mask=causal, memory_mask=causal)
        return self.out(y).reshape(-1, self.out.out_features)


class TokenSeq2Seq(nn.Module):
    """nn.Transformer (one encoder and one decoder layer, 4 heads, feed-forward
    64, ReLU, dropout 0, batch first) as a language model over token ids
    [N, T] with padding (id 0): the embedded tokens (50 -> 32) are the source
    and the target; every attention reads under the causal mask nn.Transformer
    generates (src_mask, tgt_mask and memory_mask: float, 0 and -inf) and the
    key-padding mask `tokens == 0` (src_, tgt_ and memory_key_padding_mask: a
    mask made at run time), which PyTorch merges into the float mask (torch
    1.13: masked_fill with -inf, a Where whose other branch holds many values;
    2.x: the padding mask made float and added); a linear layer back to the 50
    tokens at every position: logits [N * T, 50], sample-major, as TokenGPT's.
    A sequence must not start with padding (its first position would see no
    key: NaN, in PyTorch too)."""

    def __init__(self, vocab=50, width=32, heads=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.transformer = nn.Transformer(width, heads, 1, 1, dim_feedforward=2 * width,
                                          dropout=0.0, batch_first=True)
        self.out = nn.Linear(width, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        causal = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
        pad = tokens == 0
        y = self.transformer(x, x, src_mask=causal, tgt_mask=causal, memory_mask=causal,
                             src_key_padding_mask=pad, tgt_key_padding_mask=pad,
                             memory_key_padding_mask=pad)
        return self.out(y).reshape(-1, self.out.out_features)


class RMSNormReference(nn.Module):
    """torch.nn.RMSNorm's arithmetic (x / sqrt(mean(x^2) + eps) * weight over the last axis)
    where PyTorch lacks it (before 2.4: Debian's torch 1.13, the gradient tests' reference)."""

    def __init__(self, width, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rms_norm(width, eps=1e-6):
    """torch.nn.RMSNorm where PyTorch has it, else its reference; `weight` either way."""
    return nn.RMSNorm(width, eps=eps) if hasattr(nn, "RMSNorm") else RMSNormReference(width, eps)


def rotate_half(x):
    """Hugging Face's rotate_half: the last axis's halves swapped, the second negated."""
    x1 = x[..., :x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaAttention(nn.Module):
    """Hugging Face's LlamaAttention, small: q/k/v/o projections without bias, `heads` query
    heads sharing `kv_heads` key/value heads (grouped-query), rotary position embeddings on q
    and k, causal. `sdpa`: F.scaled_dot_product_attention(is_causal=True, enable_gqa=True)
    (PyTorch 2.5+); else the eager form: k and v repeated per query head
    (repeat_interleave), scores, the causal mask made in forward, softmax. `onnx_ops`: the
    rotary embeddings and the attention as torch.onnx.ops.rotary_embedding and .attention
    (PyTorch 2.8+), which export as ONNX's RotaryEmbedding and Attention (opset 23): the caches
    cos and sin of the positions' angles (positions x half the head size), read at position
    ids 0..T-1; the same sums as the eager form, which is the reference without them."""

    def __init__(self, width, heads, kv_heads, sdpa, onnx_ops=False):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, width // heads
        self.sdpa = sdpa
        self.onnx_ops = onnx_ops
        self.q_proj = nn.Linear(width, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, width, bias=False)

    def forward(self, x, cos, sin):
        n, t, _ = x.shape
        q = self.q_proj(x).view(n, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(n, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(n, t, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.onnx_ops and hasattr(torch.onnx, "ops"):
            half = self.head_dim // 2
            positions = torch.arange(t).unsqueeze(0).expand(n, t)
            rope = lambda z: torch.onnx.ops.rotary_embedding(z, cos[0, :, :half],
                                                             sin[0, :, :half], positions)
            y = torch.onnx.ops.attention(rope(q), rope(k), v, is_causal=True)[0]
            return self.o_proj(y.transpose(1, 2).reshape(n, t, -1))
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if self.sdpa and hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:  # (also the reference of the sdpa form where PyTorch lacks it: the same sums)
            rep = self.heads // self.kv_heads
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
            scores = q @ k.transpose(2, 3) / self.head_dim**0.5
            causal = torch.triu(torch.full((t, t), float("-inf"), dtype=q.dtype), 1)
            y = torch.softmax(scores + causal, dim=-1) @ v
        return self.o_proj(y.transpose(1, 2).reshape(n, t, -1))


class LlamaBlock(nn.Module):
    """A Llama decoder layer: x + attention(RMSNorm(x)), then x + down(silu(gate(h)) * up(h))
    with h = RMSNorm(x) (SwiGLU, no biases)."""

    def __init__(self, width, heads, kv_heads, hidden, sdpa, onnx_ops=False):
        super().__init__()
        self.input_layernorm = rms_norm(width)
        self.self_attn = LlamaAttention(width, heads, kv_heads, sdpa, onnx_ops)
        self.post_attention_layernorm = rms_norm(width)
        self.gate_proj = nn.Linear(width, hidden, bias=False)
        self.up_proj = nn.Linear(width, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, width, bias=False)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class TokenLlama(nn.Module):
    """A Llama-style causal language model (Hugging Face's LlamaForCausalLM, tiny): token ids
    [N, T] into an embedding (64 -> 32), two decoder layers (RMSNorm before attention and
    MLP; 4 query heads sharing 2 key/value heads; rotary embeddings as Hugging Face computes
    them in forward: inv_freq, a float buffer, times the positions 0..T-1, cos and sin of the
    angles repeated twice; a SwiGLU MLP of 64), a final RMSNorm and an LM head (`tied`: the
    embedding's weight) back to the 64 tokens at every position: logits [N * T, 64],
    sample-major, as TokenGPT's. inv_freq is an ONNX initializer like the weights that reaches
    the loss through Cos and Sin: mgsc is told to keep it (--freeze '*inv_freq')."""

    def __init__(self, vocab=64, width=32, heads=4, kv_heads=2, layers=2, hidden=64,
                 sdpa=False, tied=False, base=10000.0, onnx_ops=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, width)
        self.layers = nn.ModuleList([LlamaBlock(width, heads, kv_heads, hidden, sdpa, onnx_ops)
                                     for _ in range(layers)])
        self.norm = rms_norm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        if tied:
            self.lm_head.weight = self.embed_tokens.weight
        dim = width // heads
        self.register_buffer("inv_freq",
                             1.0 / base**(torch.arange(0, dim, 2, dtype=torch.int64).float() / dim),
                             persistent=False)

    def forward(self, tokens):
        n, t = tokens.shape
        positions = torch.arange(t).unsqueeze(0).to(self.inv_freq.dtype)
        freqs = (self.inv_freq[None, :, None] @ positions[:, None, :]).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        x = self.embed_tokens(tokens)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.norm(x)).reshape(-1, self.lm_head.out_features)
