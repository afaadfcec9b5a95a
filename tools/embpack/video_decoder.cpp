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

}  // namespace

VideoInfo decode_video(const std::string& path, int height, int width, int threads,
                       const std::function<void(int64_t, const uint8_t*)>& on_frame) {
  av_log_set_level(AV_LOG_FATAL);
  AVFormatContext* raw = nullptr;
  int rc = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
  EMB_CHECK(rc >= 0, path, ": cannot open video (", av_message(rc), ")");
  std::unique_ptr<AVFormatContext, FormatCloser> fmt(raw);
  rc = avformat_find_stream_info(fmt.get(), nullptr);
  EMB_CHECK(rc >= 0, path, ": unreadable video (", av_message(rc), ")");
  const AVCodec* codec = nullptr;
  int stream = av_find_best_stream(fmt.get(), AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  EMB_CHECK(stream >= 0 && codec, path, ": no decodable video stream");
  std::unique_ptr<AVCodecContext, CodecCloser> dec(avcodec_alloc_context3(codec));
  avcodec_parameters_to_context(dec.get(), fmt->streams[stream]->codecpar);
  dec->thread_count = threads;
  dec->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
  rc = avcodec_open2(dec.get(), codec, nullptr);
  EMB_CHECK(rc >= 0, path, ": cannot open decoder (", av_message(rc), ")");

  std::unique_ptr<AVFrame, FrameCloser> frame(av_frame_alloc());
  std::unique_ptr<AVPacket, PacketCloser> packet(av_packet_alloc());
  std::unique_ptr<SwsContext, ScaleCloser> scale;
  std::vector<uint8_t> rgb(size_t(height) * width * 3);
  VideoInfo info;
  auto drain = [&]() {
    while (true) {
      int r = avcodec_receive_frame(dec.get(), frame.get());
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return;
      EMB_CHECK(r >= 0, path, ": decode error at frame ", info.frames, " (", av_message(r), ")");
      if (!scale) {
        info.src_height = frame->height, info.src_width = frame->width;
        scale.reset(sws_getContext(frame->width, frame->height, AVPixelFormat(frame->format), width, height,
                                   AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr, nullptr, nullptr));
        EMB_CHECK(scale, path, ": cannot convert pixel format");
      }
      uint8_t* dst[1] = {rgb.data()};
      int dst_stride[1] = {width * 3};
      sws_scale(scale.get(), frame->data, frame->linesize, 0, frame->height, dst, dst_stride);
      on_frame(info.frames++, rgb.data());
      av_frame_unref(frame.get());
    }
  };
  while ((rc = av_read_frame(fmt.get(), packet.get())) >= 0) {
    if (packet->stream_index == stream) {
      int s = avcodec_send_packet(dec.get(), packet.get());
      EMB_CHECK(s >= 0 || s == AVERROR(EAGAIN), path, ": corrupt packet near frame ", info.frames, " (", av_message(s), ")");
      drain();
    }
    av_packet_unref(packet.get());
  }
  EMB_CHECK(rc == AVERROR_EOF, path, ": read error after frame ", info.frames, " (", av_message(rc), ")");
  avcodec_send_packet(dec.get(), nullptr);
  drain();
  EMB_CHECK(info.frames > 0, path, ": no frames decoded (truncated or empty video)");
  return info;
}

}  // namespace emb
