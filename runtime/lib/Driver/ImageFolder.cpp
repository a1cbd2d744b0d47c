//===- ImageFolder.cpp - A directory of class folders of images ----------===//
//
// torchvision's ImageFolder: DIR/CLASS/.../IMAGE, the classes the sorted
// names of DIR's folders, each folder's images in the order of a sorted walk.
// Every image is decoded once, when the data loads (PNG by libpng, JPEG by
// libjpeg), made gray or RGB for the model's channels, resized and
// center-cropped to the model's height and width as torchvision's
// Resize(S) + CenterCrop(S) do on a PIL image (PIL's antialiased bilinear
// filter in its fixed-point arithmetic, so the pixels are PIL's), and held
// as bytes, read divided by 255 (ToTensor's division).
//
//===----------------------------------------------------------------------===//

#include "FileIO.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <jpeglib.h>
#include <memory>
#ifdef _OPENMP // (the fuzz targets build it without OpenMP)
#include <omp.h>
#endif
#include <png.h>
#include <set>
#include <sys/stat.h>

namespace mgs::rt::driver {

namespace {

/// What a file in a class folder is: an image mgs reads, one it cannot
/// (torchvision's other extensions), or not an image (skipped, as there).
enum class FileKind { Readable, Unreadable, Other };

FileKind fileKind(const std::string &name) {
  const std::string n = lower(name);
  for (const char *e : {".png", ".jpg", ".jpeg"})
    if (endsWith(n, e))
      return FileKind::Readable;
  for (const char *e : {".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp"})
    if (endsWith(n, e))
      return FileKind::Unreadable;
  return FileKind::Other;
}

/// Every directory under `dir` (itself included), sorted by path as
/// Python's sorted(os.walk(dir, followlinks=True)) orders them; a directory
/// reached again through a link is not walked twice (a loop of links ends).
void walkDirectories(const std::string &dir, std::vector<std::string> &out,
                     std::set<std::pair<dev_t, ino_t>> &seen) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !seen.insert({st.st_dev, st.st_ino}).second)
    return;
  out.push_back(dir);
  std::vector<std::string> names;
  if (!listDirectory(dir, names).ok())
    return; // (its files' listing says why)
  for (const std::string &name : names)
    if (isDirectory(dir + "/" + name))
      walkDirectories(dir + "/" + name, out, seen);
}

/// The most pixels an image may have (a header may claim any size).
constexpr int64_t kMaxImagePixels = int64_t(1) << 28;

Status tooLarge(const std::string &path, int64_t width, int64_t height) {
  return badInput("image '" + path + "' is " + std::to_string(width) + " x " +
                  std::to_string(height) + " pixels, more than the " +
                  std::to_string(kMaxImagePixels) + " an image may have");
}

/// An image as decoded: interleaved 8-bit RGB.
struct Rgb {
  int64_t width = 0, height = 0;
  std::vector<unsigned char> pixels;
};

/// The decoders read `file` (open, at its start; the caller closes it);
/// `path` is for messages.
Status decodePng(const std::string &path, std::FILE *file, Rgb &image) {
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_stdio(&png, file))
    return badInput("image '" + path + "': " + png.message);
  // RGBA, its alpha then dropped: PIL's convert("RGB") (what torchvision's
  // loader does) ignores transparency; libpng's RGB would blend it.
  png.format = PNG_FORMAT_RGBA;
  image.width = png.width;
  image.height = png.height;
  if (image.width * image.height > kMaxImagePixels) {
    png_image_free(&png);
    return tooLarge(path, image.width, image.height);
  }
  std::vector<unsigned char> rgba(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, rgba.data(), 0, nullptr)) {
    std::string message = png.message;
    png_image_free(&png);
    return badInput("image '" + path + "': " + message);
  }
  const size_t pixels = static_cast<size_t>(image.width * image.height);
  image.pixels.resize(pixels * 3);
  for (size_t i = 0; i < pixels; ++i)
    std::copy_n(rgba.data() + 4 * i, 3, image.pixels.data() + 3 * i);
  return Status::success();
}

struct JpegErrors {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void onJpegError(j_common_ptr info) {
  auto *errors = reinterpret_cast<JpegErrors *>(info->err);
  (*info->err->format_message)(info, errors->message);
  std::longjmp(errors->jump, 1);
}

// A warning (corrupt data libjpeg would fill in, a truncated file) is an
// error, as PIL makes it; trace messages are dropped.
void onJpegMessage(j_common_ptr info, int level) {
  if (level < 0)
    onJpegError(info);
}

Status decodeJpeg(const std::string &path, std::FILE *file, Rgb &image) {
  jpeg_decompress_struct jpeg;
  JpegErrors errors;
  jpeg.err = jpeg_std_error(&errors.manager);
  errors.manager.error_exit = onJpegError;
  errors.manager.emit_message = onJpegMessage;
  // Nothing with a destructor is created between here and the last
  // longjmp: `image` is the caller's.
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&jpeg);
    return badInput("image '" + path + "': " + errors.message);
  }
  jpeg_create_decompress(&jpeg);
  jpeg_stdio_src(&jpeg, file);
  jpeg_read_header(&jpeg, TRUE);
  if (static_cast<int64_t>(jpeg.image_width) * jpeg.image_height > kMaxImagePixels) {
    const int64_t w = jpeg.image_width, h = jpeg.image_height;
    jpeg_destroy_decompress(&jpeg);
    return tooLarge(path, w, h);
  }
  jpeg.out_color_space = JCS_RGB;
  jpeg_start_decompress(&jpeg);
  image.width = jpeg.output_width;
  image.height = jpeg.output_height;
  image.pixels.resize(static_cast<size_t>(image.width * image.height * 3));
  while (jpeg.output_scanline < jpeg.output_height) {
    JSAMPROW row = image.pixels.data() +
                   static_cast<size_t>(jpeg.output_scanline) * static_cast<size_t>(image.width) * 3;
    jpeg_read_scanlines(&jpeg, &row, 1);
  }
  jpeg_finish_decompress(&jpeg);
  jpeg_destroy_decompress(&jpeg);
  return Status::success();
}

/// Decodes by content (PNG or JPEG signature), whatever the extension says;
/// the file is opened once.
Status decodeImage(const std::string &path, Rgb &image) {
  unsigned char magic[4] = {};
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return ioError("image '" + path + "': " + std::strerror(errno));
  const size_t got = std::fread(magic, 1, sizeof(magic), file);
  std::rewind(file);
  Status s;
  if (got >= 4 && magic[0] == 0x89 && magic[1] == 'P' && magic[2] == 'N' && magic[3] == 'G')
    s = decodePng(path, file, image);
  else if (got >= 3 && magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF)
    s = decodeJpeg(path, file, image);
  else
    s = badInput("image '" + path + "' is neither PNG nor JPEG (its first bytes are not " +
                 "either signature)");
  std::fclose(file);
  return s;
}

} // namespace

//===--- PIL's resampling -------------------------------------------------===//

namespace {

// PIL's fixed point for 8-bit images: 32 bits less 8 for the pixel and 2
// for the sign and the sums' headroom.
constexpr int kPrecisionBits = 32 - 8 - 2;

/// One axis of PIL's antialiased bilinear resampling, `in` values to `out`:
/// for each output position its first input and its fixed-point weights.
struct AxisWeights {
  int64_t taps = 0;
  std::vector<int64_t> first, count;
  std::vector<int32_t> weights; // taps a position
};

AxisWeights bilinearWeights(int64_t in, int64_t out) {
  AxisWeights a;
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  const double filterScale = std::max(scale, 1.0);
  const double support = 1.0 * filterScale; // the bilinear filter's support is 1
  const double inverse = 1.0 / filterScale;
  a.taps = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  a.first.resize(static_cast<size_t>(out));
  a.count.resize(static_cast<size_t>(out));
  a.weights.assign(static_cast<size_t>(out * a.taps), 0);
  std::vector<double> w(static_cast<size_t>(a.taps));
  for (int64_t o = 0; o < out; ++o) {
    const double center = (static_cast<double>(o) + 0.5) * scale;
    int64_t lo = static_cast<int64_t>(center - support + 0.5);
    int64_t hi = static_cast<int64_t>(center + support + 0.5);
    lo = std::max<int64_t>(lo, 0);
    hi = std::min(hi, in) - lo;
    double sum = 0;
    for (int64_t x = 0; x < hi; ++x) {
      const double d = std::fabs((static_cast<double>(x + lo) - center + 0.5) * inverse);
      w[x] = d < 1.0 ? 1.0 - d : 0.0;
      sum += w[x];
    }
    for (int64_t x = 0; x < hi; ++x) {
      const double k = sum != 0.0 ? w[x] / sum : w[x];
      const double fixed = k * static_cast<double>(1 << kPrecisionBits);
      a.weights[o * a.taps + x] = static_cast<int32_t>(k < 0 ? fixed - 0.5 : fixed + 0.5);
    }
    a.first[o] = lo;
    a.count[o] = hi;
  }
  return a;
}

unsigned char clip8(int32_t sum) {
  const int32_t v = sum >> kPrecisionBits;
  return static_cast<unsigned char>(std::clamp(v, 0, 255));
}

/// One plane, `height` x `width`, resampled to `toHeight` x `toWidth`:
/// horizontally, then vertically, each pass rounded to 8 bits (PIL's order).
std::vector<unsigned char> resamplePlane(std::vector<unsigned char> rows, int64_t height,
                                         int64_t width, int64_t toHeight, int64_t toWidth) {
  if (toWidth != width) {
    const AxisWeights a = bilinearWeights(width, toWidth);
    std::vector<unsigned char> out(static_cast<size_t>(height * toWidth));
    for (int64_t y = 0; y < height; ++y)
      for (int64_t x = 0; x < toWidth; ++x) {
        int32_t sum = 1 << (kPrecisionBits - 1);
        const unsigned char *in = rows.data() + y * width + a.first[x];
        const int32_t *k = a.weights.data() + x * a.taps;
        for (int64_t t = 0; t < a.count[x]; ++t)
          sum += static_cast<int32_t>(in[t]) * k[t];
        out[y * toWidth + x] = clip8(sum);
      }
    rows = std::move(out);
    width = toWidth;
  }
  if (toHeight != height) {
    const AxisWeights a = bilinearWeights(height, toHeight);
    std::vector<unsigned char> out(static_cast<size_t>(toHeight * width));
    for (int64_t y = 0; y < toHeight; ++y) {
      const int32_t *k = a.weights.data() + y * a.taps;
      for (int64_t x = 0; x < width; ++x) {
        int32_t sum = 1 << (kPrecisionBits - 1);
        for (int64_t t = 0; t < a.count[y]; ++t)
          sum += static_cast<int32_t>(rows[(a.first[y] + t) * width + x]) * k[t];
        out[y * width + x] = clip8(sum);
      }
    }
    rows = std::move(out);
  }
  return rows;
}

} // namespace

void imageToSample(const unsigned char *rgb, int64_t height, int64_t width, int64_t channels,
                   int64_t toHeight, int64_t toWidth, unsigned char *out) {
  // Planes of the model's channels: RGB, or PIL's "L" (ITU-R 601-2 luma in
  // its fixed point; a gray image's value exactly).
  std::vector<std::vector<unsigned char>> planes(static_cast<size_t>(channels));
  const int64_t pixels = height * width;
  for (auto &p : planes)
    p.resize(static_cast<size_t>(pixels));
  for (int64_t i = 0; i < pixels; ++i) {
    const unsigned char *px = rgb + 3 * i;
    if (channels == 1)
      planes[0][i] =
          static_cast<unsigned char>((px[0] * 19595 + px[1] * 38470 + px[2] * 7471 + 0x8000) >> 16);
    else
      for (int64_t c = 0; c < 3; ++c)
        planes[c][i] = px[c];
  }
  // Resize(S): the side that limits the cover to toHeight x toWidth, as
  // torchvision sizes it (the other side truncated); then CenterCrop.
  int64_t rh, rw;
  if (width * toHeight <= height * toWidth) {
    rw = toWidth;
    rh = std::max(toHeight, static_cast<int64_t>(static_cast<double>(toWidth * height) /
                                                 static_cast<double>(width)));
  } else {
    rh = toHeight;
    rw = std::max(toWidth, static_cast<int64_t>(static_cast<double>(toHeight * width) /
                                                static_cast<double>(height)));
  }
  const int64_t top = static_cast<int64_t>(std::nearbyint((rh - toHeight) / 2.0));
  const int64_t left = static_cast<int64_t>(std::nearbyint((rw - toWidth) / 2.0));
  for (int64_t c = 0; c < channels; ++c) {
    const std::vector<unsigned char> resized =
        resamplePlane(std::move(planes[c]), height, width, rh, rw);
    unsigned char *o = out + c * toHeight * toWidth;
    for (int64_t y = 0; y < toHeight; ++y)
      std::copy_n(resized.data() + (y + top) * rw + left, toWidth, o + y * toWidth);
  }
}

//===--- The folder -------------------------------------------------------===//

Status loadImageFolder(const std::string &path, int64_t channels, int64_t height, int64_t width,
                       Dataset &data, const std::vector<std::string> *knownClasses) {
  data = Dataset();
  data.source = path;
  if (channels != 1 && channels != 3)
    return badInput("image folder '" + path + "': the model's input has " +
                    std::to_string(channels) +
                    " channels a sample; images are read as gray (1) or RGB (3)");
  std::vector<std::string> names;
  if (Status s = listDirectory(path, names); !s.ok())
    return ioError("image folder '" + path + "': " + s.message);
  std::vector<std::string> classDirs;
  for (const std::string &name : names)
    if (isDirectory(path + "/" + name))
      classDirs.push_back(name);
  if (classDirs.empty())
    return badInput("image folder '" + path +
                    "' has no class folders (it should hold one folder of images a class: "
                    "DIR/CLASS/IMAGE.png)");
  // The files, class by class; the labels by class name (a test set's
  // against the training set's classes).
  std::vector<std::string> files;
  int64_t skipped = 0;
  for (const std::string &cls : classDirs) {
    int64_t label = static_cast<int64_t>(data.classNames.size());
    if (knownClasses) {
      auto it = std::find(knownClasses->begin(), knownClasses->end(), cls);
      if (it == knownClasses->end())
        return badInput("image folder '" + path + "': class folder '" + cls +
                        "' is not a class of the training data (its classes: the folders of "
                        "--data)");
      label = it - knownClasses->begin();
    }
    std::vector<std::string> dirs;
    std::set<std::pair<dev_t, ino_t>> seen;
    walkDirectories(path + "/" + cls, dirs, seen);
    std::sort(dirs.begin(), dirs.end());
    const size_t before = files.size();
    for (const std::string &dir : dirs) {
      std::vector<std::string> entries;
      if (Status s = listDirectory(dir, entries); !s.ok())
        return ioError("image folder '" + path + "': " + s.message);
      for (const std::string &entry : entries) {
        const std::string file = dir + "/" + entry;
        if (isDirectory(file))
          continue;
        switch (fileKind(entry)) {
        case FileKind::Readable:
          files.push_back(file);
          data.labels.push_back(label);
          break;
        case FileKind::Unreadable:
          return badInput("image '" + file +
                          "': mgs reads PNG and JPEG images; convert it "
                          "(e.g. with PIL: Image.open(f).save(f + '.png'))");
        case FileKind::Other:
          ++skipped;
          break;
        }
      }
    }
    if (files.size() == before)
      return badInput("image folder '" + path + "': class folder '" + cls +
                      "' holds no PNG or JPEG image");
    data.classNames.push_back(cls);
  }
  if (knownClasses)
    data.classNames = *knownClasses;
  data.skippedFiles = skipped;

  // Decoded in parallel; the first failure (in file order) is the error.
  const int64_t n = static_cast<int64_t>(files.size());
  data.sampleSize = channels * height * width;
  // Held as bytes (a quarter of float32), read divided by 255.
  auto bytes =
      std::make_shared<std::vector<unsigned char>>(static_cast<size_t>(n * data.sampleSize));
  std::vector<Status> failures(static_cast<size_t>(n));
  std::atomic<int64_t> done{0};
  const auto start = std::chrono::steady_clock::now();
  std::atomic<double> lastReport{0.0};
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 4)
#endif
  for (int64_t i = 0; i < n; ++i) {
    Status s;
    try { // (nothing may leave an OpenMP loop)
      Rgb image;
      s = decodeImage(files[i], image);
      if (s.ok() && (image.width <= 0 || image.height <= 0))
        s = badInput("image '" + files[i] + "' has no pixels");
      if (s.ok())
        imageToSample(image.pixels.data(), image.height, image.width, channels, height, width,
                      bytes->data() + i * data.sampleSize);
    } catch (const std::bad_alloc &) {
      s = ioError("image '" + files[i] + "': out of memory decoding it");
    }
    if (!s.ok())
      failures[i] = std::move(s);
    const int64_t count = ++done;
#ifdef _OPENMP
    const bool reporter = omp_get_thread_num() == 0;
#else
    const bool reporter = true;
#endif
    if (reporter) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (seconds - lastReport.load() >= 10.0) {
        lastReport = seconds;
        std::printf("reading '%s': %lld of %lld images (%.0f s)\n", path.c_str(),
                    static_cast<long long>(count), static_cast<long long>(n), seconds);
        std::fflush(stdout);
      }
    }
  }
  for (Status &s : failures)
    if (!s.ok())
      return s;
  StoredNumbers &stored = data.storedSamples;
  stored.data = bytes->data();
  stored.kind = 'u';
  stored.itemSize = 1;
  stored.count = bytes->size();
  stored.divisor = 255.0f;
  stored.owner = std::move(bytes);
  return Status::success();
}

} // namespace mgs::rt::driver
