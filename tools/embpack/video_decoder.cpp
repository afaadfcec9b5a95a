#include "video_decoder.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>
}

#include <memory>
#include <vector>

#include "core/error.hpp"

namespace emb {

namespace {

std::string av_message(int code) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(code, buf, sizeof buf);
  return buf;
}

struct FormatCloser {
  void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
};
struct CodecCloser {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameCloser {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketCloser {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct ScaleCloser {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};

// A video stream opened with its decoder.
struct OpenVideo {
  std::unique_ptr<AVFormatContext, FormatCloser> fmt;
  std::unique_ptr<AVCodecContext, CodecCloser> dec;
  int stream = -1;
  AVRational time_base{0, 1}, frame_rate{0, 1};
  int64_t start = 0;  // the stream's first timestamp
};

OpenVideo open_video(const std::string& path, int threads) {
  av_log_set_level(AV_LOG_FATAL);
  OpenVideo v;
  AVFormatContext* raw = nullptr;
  int rc = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
  EMB_CHECK(rc >= 0, path, ": cannot open video (", av_message(rc), ")");
  v.fmt.reset(raw);
  rc = avformat_find_stream_info(v.fmt.get(), nullptr);
  EMB_CHECK(rc >= 0, path, ": unreadable video (", av_message(rc), ")");
  const AVCodec* codec = nullptr;
  v.stream = av_find_best_stream(v.fmt.get(), AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  EMB_CHECK(v.stream >= 0 && codec, path, ": no decodable video stream");
  const AVStream* st = v.fmt->streams[v.stream];
  v.time_base = st->time_base, v.frame_rate = st->avg_frame_rate;
  v.start = st->start_time == AV_NOPTS_VALUE ? 0 : st->start_time;
  v.dec.reset(avcodec_alloc_context3(codec));
  avcodec_parameters_to_context(v.dec.get(), st->codecpar);
  v.dec->thread_count = threads;
  v.dec->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
  rc = avcodec_open2(v.dec.get(), codec, nullptr);
  EMB_CHECK(rc >= 0, path, ": cannot open decoder (", av_message(rc), ")");
  return v;
}

// Moves the demuxer to the keyframe at or before frame `first`; false where it stays at the
// start (frame 0 wanted, no frame rate to place the frame by, or a stream that cannot seek).
bool seek_before(OpenVideo& v, int64_t first) {
  if (first <= 0 || v.frame_rate.num <= 0 || v.frame_rate.den <= 0) return false;
  int64_t at = v.start + av_rescale_q(first, av_inv_q(v.frame_rate), v.time_base);
  return av_seek_frame(v.fmt.get(), v.stream, at, AVSEEK_FLAG_BACKWARD) >= 0;
}

// The frame index of a timestamp, at the stream's average frame rate.
int64_t frame_at(const OpenVideo& v, int64_t timestamp) {
  return av_rescale_q_rnd(timestamp - v.start, v.time_base, av_inv_q(v.frame_rate), AV_ROUND_NEAR_INF);
}

// Decodes `range` from where the demuxer stands: at frame 0, or (seeked) at a keyframe whose
// index the first frame's timestamp gives. False where a seek landed past range.first (the
// caller decodes from the start instead).
bool decode_range(const std::string& path, OpenVideo& v, bool seeked, int height, int width, FrameRange range,
                  const std::function<void(int64_t, const uint8_t*)>& on_frame, VideoInfo& info) {
  std::unique_ptr<AVFrame, FrameCloser> frame(av_frame_alloc());
  std::unique_ptr<AVPacket, PacketCloser> packet(av_packet_alloc());
  std::unique_ptr<SwsContext, ScaleCloser> scale;
  std::vector<uint8_t> rgb(size_t(height) * width * 3);
  bool indexed = !seeked, missed = false, done = false;
  auto drain = [&]() {
    while (!done) {
      int r = avcodec_receive_frame(v.dec.get(), frame.get());
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return;
      EMB_CHECK(r >= 0, path, ": decode error at frame ", info.frames, " (", av_message(r), ")");
      if (!indexed) {
        const int64_t ts = frame->best_effort_timestamp;
        info.frames = ts == AV_NOPTS_VALUE ? range.first + 1 : frame_at(v, ts), indexed = true;
        missed = done = info.frames > range.first;
        if (missed) return;
      }
      if (info.frames >= range.first) {
        if (!scale) {
          info.src_height = frame->height, info.src_width = frame->width;
          scale.reset(sws_getContext(frame->width, frame->height, AVPixelFormat(frame->format), width, height,
                                     AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr, nullptr, nullptr));
          EMB_CHECK(scale, path, ": cannot convert pixel format");
        }
        uint8_t* dst[1] = {rgb.data()};
        int dst_stride[1] = {width * 3};
        sws_scale(scale.get(), frame->data, frame->linesize, 0, frame->height, dst, dst_stride);
        on_frame(info.frames, rgb.data());
      }
      done = ++info.frames >= range.end;
      av_frame_unref(frame.get());
    }
  };
  int rc = 0;
  while (!done && (rc = av_read_frame(v.fmt.get(), packet.get())) >= 0) {
    if (packet->stream_index == v.stream) {
      int s = avcodec_send_packet(v.dec.get(), packet.get());
      EMB_CHECK(s >= 0 || s == AVERROR(EAGAIN), path, ": corrupt packet near frame ", info.frames, " (", av_message(s), ")");
      drain();
    }
    av_packet_unref(packet.get());
  }
  if (!done) {
    EMB_CHECK(rc == AVERROR_EOF, path, ": read error after frame ", info.frames, " (", av_message(rc), ")");
    avcodec_send_packet(v.dec.get(), nullptr);
    drain();
  }
  return !missed;
}

}  // namespace

VideoInfo decode_video(const std::string& path, int height, int width, int threads, FrameRange range,
                       const std::function<void(int64_t, const uint8_t*)>& on_frame) {
  VideoInfo info;
  OpenVideo v = open_video(path, threads);
  if (!decode_range(path, v, seek_before(v, range.first), height, width, range, on_frame, info)) {
    info = VideoInfo{};
    OpenVideo from_start = open_video(path, threads);
    decode_range(path, from_start, false, height, width, range, on_frame, info);
  }
  EMB_CHECK(info.frames > 0, path, ": no frames decoded (truncated or empty video)");
  return info;
}

}  // namespace emb
