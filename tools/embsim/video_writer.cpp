#include "video_writer.hpp"

#include <filesystem>
#include <memory>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>
}

#include "core/error.hpp"

namespace emb {

namespace {

struct Cleanup {
  AVFormatContext* format = nullptr;
  AVCodecContext* codec = nullptr;
  AVFrame* frame = nullptr;
  AVPacket* packet = nullptr;
  SwsContext* sws = nullptr;
  std::string tmp;  // removed unless the video was completed
  bool complete = false;
  ~Cleanup() {
    if (format && format->pb) avio_closep(&format->pb);
    avformat_free_context(format);
    avcodec_free_context(&codec);
    av_frame_free(&frame);
    av_packet_free(&packet);
    sws_freeContext(sws);
    std::error_code ignored;
    if (!complete && !tmp.empty()) std::filesystem::remove(tmp, ignored);
  }
};

void check(int rc, const std::string& path, const char* what) {
  if (rc < 0) {
    char msg[AV_ERROR_MAX_STRING_SIZE] = "";
    av_strerror(rc, msg, sizeof msg);
    throw Error(str(path, ": cannot write video: ", what, ": ", msg));
  }
}

void drain(Cleanup& c, AVStream* stream, const std::string& path) {
  for (;;) {
    int rc = avcodec_receive_packet(c.codec, c.packet);
    if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
    check(rc, path, "encode");
    av_packet_rescale_ts(c.packet, c.codec->time_base, stream->time_base);
    c.packet->stream_index = stream->index;
    check(av_interleaved_write_frame(c.format, c.packet), path, "write frame");
  }
}

}  // namespace

void write_mp4(const std::string& path, const std::vector<std::vector<uint8_t>>& frames, int height, int width,
               int fps, int scale) {
  EMB_CHECK(!frames.empty(), path, ": no frames to write");
  const std::string tmp = path + ".tmp";
  const int H = height * scale, W = width * scale;
  Cleanup c;
  c.tmp = tmp;
  check(avformat_alloc_output_context2(&c.format, nullptr, "mp4", tmp.c_str()), path, "mp4 muxer");
  const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
  EMB_CHECK(codec, path, ": FFmpeg has no MPEG-4 encoder");
  c.codec = avcodec_alloc_context3(codec);
  c.codec->width = W, c.codec->height = H;
  c.codec->time_base = AVRational{1, fps};
  c.codec->framerate = AVRational{fps, 1};
  c.codec->pix_fmt = AV_PIX_FMT_YUV420P;
  c.codec->bit_rate = 2000000;
  c.codec->gop_size = 12;
  if (c.format->oformat->flags & AVFMT_GLOBALHEADER) c.codec->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  check(avcodec_open2(c.codec, codec, nullptr), path, "open encoder");
  AVStream* stream = avformat_new_stream(c.format, nullptr);
  EMB_CHECK(stream, path, ": cannot add a video stream");
  check(avcodec_parameters_from_context(stream->codecpar, c.codec), path, "stream parameters");
  stream->time_base = c.codec->time_base;
  check(avio_open(&c.format->pb, tmp.c_str(), AVIO_FLAG_WRITE), path, "open file");
  check(avformat_write_header(c.format, nullptr), path, "header");
  c.frame = av_frame_alloc();
  c.packet = av_packet_alloc();
  c.frame->format = AV_PIX_FMT_YUV420P, c.frame->width = W, c.frame->height = H;
  check(av_frame_get_buffer(c.frame, 0), path, "frame buffer");
  c.sws = sws_getContext(width, height, AV_PIX_FMT_RGB24, W, H, AV_PIX_FMT_YUV420P, SWS_POINT, nullptr, nullptr, nullptr);
  EMB_CHECK(c.sws, path, ": cannot convert RGB to YUV");
  for (size_t i = 0; i < frames.size(); ++i) {
    EMB_ASSERT(frames[i].size() == size_t(height) * width * 3);
    check(av_frame_make_writable(c.frame), path, "frame");
    const uint8_t* src[1] = {frames[i].data()};
    const int stride[1] = {width * 3};
    sws_scale(c.sws, src, stride, 0, height, c.frame->data, c.frame->linesize);
    c.frame->pts = int64_t(i);
    check(avcodec_send_frame(c.codec, c.frame), path, "encode");
    drain(c, stream, path);
  }
  check(avcodec_send_frame(c.codec, nullptr), path, "flush");
  drain(c, stream, path);
  check(av_write_trailer(c.format), path, "trailer");
  avio_closep(&c.format->pb);
  std::filesystem::rename(tmp, path);
  c.complete = true;
}

}  // namespace emb
