"""Writes an image folder for test/e2e/image-folder.test and what torchvision makes of it.

    image_folder.py OUT_DIR SIZE CHANNELS [--per-class N]

OUT_DIR/train/{ankle, bag, coat}/...: N images a class of assorted sizes (larger and smaller
than SIZE, square and not), PNG (RGB, gray, palette, RGB with alpha) and JPEG (RGB, gray), one
in a nested folder, and a text file (skipped); OUT_DIR/test/{bag, coat}: a few more. Then, for
each split, OUT_DIR/SPLIT-x.npy and SPLIT-y.npy: torchvision.datasets.ImageFolder's samples
through Grayscale (CHANNELS 1), Resize(SIZE), CenterCrop(SIZE) and ToTensor, the labels its
class_to_idx gives (the test split's by the training split's class names).
"""
import os
import sys

import numpy as np
from PIL import Image
import torchvision
import torchvision.transforms as T

out, size, channels = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per_class = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--per-class" else 12
rng = np.random.default_rng(7)
SHAPES = [(size, size), (2 * size + 3, 2 * size - 1), (size + 5, 3 * size), (size // 2 + 1, size),
          (5 * size, 4 * size + 3), (size - 2, size + 1)]


def image(k, label):
    h, w = SHAPES[k % len(SHAPES)]
    # smooth class-dependent patterns plus noise: the resampling's sums are exercised
    yy, xx = np.mgrid[0:h, 0:w]
    base = 127 + 100 * np.sin(xx / (2.0 + label) + yy / 3.0 + k)
    rgb = np.stack([base, 255 - base, base * 0.5 + 60 * label], -1) + rng.normal(0, 20, (h, w, 3))
    return np.clip(rgb, 0, 255).astype(np.uint8)


def write(path, pixels, k):
    kind = k % 6
    im = Image.fromarray(pixels, "RGB")
    if kind == 0:
        im.save(path + ".png")
    elif kind == 1:
        im.convert("L").save(path + ".png")
    elif kind == 2:
        im.convert("P", palette=Image.ADAPTIVE, colors=32).save(path + ".png")
    elif kind == 3:
        rgba = np.concatenate([pixels, rng.integers(0, 256, pixels.shape[:2] + (1,))
                               .astype(np.uint8)], -1)
        Image.fromarray(rgba, "RGBA").save(path + ".PNG")
    elif kind == 4:
        im.save(path + ".jpg", quality=85)
    else:
        im.convert("L").save(path + ".jpeg", quality=90)


for split, classes, n in (("train", ["ankle", "bag", "coat"], per_class),
                          ("test", ["bag", "coat"], 4)):
    for label, name in enumerate(classes):
        folder = os.path.join(out, split, name)
        os.makedirs(os.path.join(folder, "more"), exist_ok=True)
        for k in range(n):
            sub = "more" if k == n - 1 else ""
            write(os.path.join(folder, sub, f"img{k:03d}"), image(k + 7 * label, label), k + label)
    with open(os.path.join(out, split, classes[0], "notes.txt"), "w") as f:
        f.write("not an image\n")

transform = T.Compose(([T.Grayscale(1)] if channels == 1 else []) +
                      [T.Resize(size), T.CenterCrop(size), T.ToTensor()])
train = torchvision.datasets.ImageFolder(os.path.join(out, "train"), transform=transform)
test = torchvision.datasets.ImageFolder(os.path.join(out, "test"), transform=transform)
for split, ds, to_train in (("train", train, None), ("test", test, train.class_to_idx)):
    xs = np.stack([x.numpy() for x, _ in ds]).astype(np.float32)
    names = {v: k for k, v in ds.class_to_idx.items()}
    ys = np.array([to_train[names[y]] if to_train else y for _, y in ds], dtype=np.int64)
    np.save(os.path.join(out, f"{split}-x.npy"), xs)
    np.save(os.path.join(out, f"{split}-y.npy"), ys)
    print(split, xs.shape, np.bincount(ys).tolist())
