"""The training executable's random draws in NumPy, so a test can compute what it trains on:
its --augment (the same draws from its splitmix64 streams, and the same transforms), each
epoch's sample order, and a model's random draws (mgsrt_random_normal, mgsrt_random_uniform).

    draw(spec, seed, epoch, sample) -> (dy, dx, hflip, vflip)
    augment(values, spec, seed, epoch, fill=0) -> values transformed sample by sample
    epoch_order(n, seed, epoch) -> the sample indices in the order epoch `epoch` takes them
    RandomStream(seed).normal(shape), .uniform(shape, low, high) -> a model's next draws

`spec` is --augment's value ("flip,crop=2"); `values` has the samples on its first axis and
their height and width on its last two, sample i being data-set sample i (the executable keys
each draw on the sample's index in the data file, not its place in a batch).
"""

import numpy as np

_M = (1 << 64) - 1


def _splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & _M
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M
    return state, z ^ (z >> 31)


def _stream_state(seed, tag, index):
    s = seed ^ ((tag * 0xD1B54A32D192ED03) & _M)
    s, _ = _splitmix64(s)
    s ^= (index * 0x8CB92BA72F3D8DD7) & _M
    _, z = _splitmix64(s)
    return z


def _below(state, bound):
    threshold = ((1 << 64) - bound) % bound
    while True:
        state, r = _splitmix64(state)
        if r >= threshold:
            return state, r % bound


def parse(spec):
    """(crop padding, hflip, vflip) of an --augment value."""
    crop, hflip, vflip = 0, False, False
    for item in spec.split(","):
        if item == "flip":
            hflip = True
        elif item == "vflip":
            vflip = True
        elif item.startswith("crop="):
            crop = int(item[5:])
        else:
            raise ValueError(f"unknown --augment item {item!r}")
    return crop, hflip, vflip


def draw(spec, seed, epoch, sample):
    crop, hflip, vflip = parse(spec)
    state = _stream_state(_stream_state(seed, 3, epoch), 4, sample)
    dy = dx = 0
    if crop:
        state, r = _below(state, 2 * crop + 1)
        dy = r - crop
        state, r = _below(state, 2 * crop + 1)
        dx = r - crop
    h = v = False
    if hflip:
        state, z = _splitmix64(state)
        h = bool(z >> 63)
    if vflip:
        state, z = _splitmix64(state)
        v = bool(z >> 63)
    return dy, dx, h, v


def transform(image, dy, dx, hflip, vflip, fill=0):
    """out[..., y, x] = image[..., Y + dy, X + dx] (Y, X flipped where asked), `fill` outside."""
    height, width = image.shape[-2:]
    ys = (np.arange(height)[::-1] if vflip else np.arange(height)) + dy
    xs = (np.arange(width)[::-1] if hflip else np.arange(width)) + dx
    out = np.full_like(image, fill)
    rows, cols = (ys >= 0) & (ys < height), (xs >= 0) & (xs < width)
    out[..., np.flatnonzero(rows)[:, None], np.flatnonzero(cols)[None, :]] = \
        image[..., ys[rows][:, None], xs[cols][None, :]]
    return out


def augment(values, spec, seed, epoch, fill=0):
    values = np.asarray(values)
    return np.stack([transform(values[i], *draw(spec, seed, epoch, i), fill=fill)
                     for i in range(values.shape[0])])


def epoch_order(n, seed, epoch):
    """The executable's sample order in `epoch` (0-based) with --holdout 0 and --seed `seed`
    (runtime/lib/Driver/Data.cpp's shuffleForEpoch: Fisher-Yates over stream tag 1)."""
    state = _stream_state(seed, 1, epoch)
    order = list(range(n))
    for i in range(n, 1, -1):
        state, j = _below(state, i)
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


class RandomStream:
    """The executable's context random stream at --seed `seed` (that of dropout), as a model's
    draws read it in the order the step makes them: normal(shape) as mgsrt_random_normal at mean
    0, scale 1 (Box-Muller on the halves of splitmix64's mix(state + (i + 1) gamma), in double),
    uniform(shape, low, high) as mgsrt_random_uniform (the top 24 bits); each moves the state on
    by its count."""

    def __init__(self, seed):
        self.state = seed

    def _next(self, n):
        gamma = 0x9E3779B97F4A7C15
        with np.errstate(over="ignore"):
            z = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(gamma) + np.uint64(self.state)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
        self.state = (self.state + n * gamma) & _M
        return z

    def normal(self, shape):
        z = self._next(int(np.prod(shape)))
        u1 = ((z >> np.uint64(32)).astype(np.float64) + 1.0) * 2.0**-32
        u2 = (z & np.uint64(0xFFFFFFFF)).astype(np.float64) * 2.0**-32
        values = np.sqrt(-2.0 * np.log(u1)) * np.cos(2 * np.pi * u2)
        return values.astype(np.float32).reshape(tuple(shape))

    def uniform(self, shape, low=0.0, high=1.0):
        u = (self._next(int(np.prod(shape))) >> np.uint64(40)).astype(np.float64) * 2.0**-24
        values = (low + (high - low) * u).astype(np.float32)
        values = np.where(values < np.float32(high), values,
                          np.nextafter(np.float32(high), np.float32(-np.inf)))
        return values.reshape(tuple(shape))
