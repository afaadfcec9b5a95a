#!/usr/bin/python3
"""Self-checks of the encoder references (quick, tiny sizes): run with /usr/bin/python3.

    tests/encoders_ref/test_encoder_references.py [-v] [TestClass[.test_name] ...]

Every value checked is either computed independently here (torch's own interpolate, PIL, a
per-head loop, exact arithmetic) or follows from a property of the upstream computation
(causality, padding invariance, which block's weights matter).
"""
import math
import os
import sys
import tempfile
import unittest
from fractions import Fraction

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import clip_reference as C  # noqa: E402
import eagle_reference as E  # noqa: E402
import make_tiny_encoders as mk  # noqa: E402
import nn_ops  # noqa: E402
import resize as R  # noqa: E402
import umt5_reference as T  # noqa: E402
import wan_vae_reference as V  # noqa: E402
from safetensors_io import load_file, save_file  # noqa: E402

torch.set_num_threads(1)


def max_rel(a, b):
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-30))


class SafetensorsIO(unittest.TestCase):
    def test_round_trip_all_dtypes(self):
        t = {"a.f32": torch.randn(3, 5), "b.bf16": torch.randn(4, 2).to(torch.bfloat16),
             "c.f64": torch.randn(2, 3, 4, dtype=torch.float64), "d.scalar": torch.tensor(1.5),
             "e.i64": torch.arange(7)}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.safetensors")
            save_file(t, path, metadata={"format": "pt"})
            back, meta = load_file(path)
            with open(path, "rb") as f:
                n = int.from_bytes(f.read(8), "little")
            self.assertEqual(n % 8, 0)
        self.assertEqual(meta, {"format": "pt"})
        self.assertEqual(set(back), set(t))
        for k in t:
            self.assertEqual(back[k].dtype, t[k].dtype, k)
            self.assertEqual(back[k].shape, t[k].shape, k)
            self.assertTrue(torch.equal(back[k], t[k]), k)


class Resize(unittest.TestCase):
    def _torch_weights(self, n, o):
        eye = torch.eye(n).reshape(n, 1, 1, n)
        w = torch.nn.functional.interpolate(eye, size=(1, o), mode="bilinear", align_corners=False, antialias=True)
        return w[:, 0, 0, :].T.numpy()

    def test_aa_weights_bit_exact_against_torch(self):
        for n, o in [(243, 224), (608, 224), (456, 224), (41, 17), (20, 31)]:
            xmin, w = R.aa_bilinear_table(n, o)
            mine = np.zeros((o, n), np.float32)
            for i in range(o):
                for j in range(w.shape[1]):
                    if xmin[i] + j < n:
                        mine[i, xmin[i] + j] += w[i, j]
            self.assertTrue(np.array_equal(mine, self._torch_weights(n, o)), f"{n}->{o}")

    def test_aa_weights_hand_values(self):
        # 4 -> 2: scale 2, support 2, output 0 centred at 1.0: taps 0..2 at distances 0.5, 0.5, 1.5
        # (x 1/2): triangle 0.75, 0.75, 0.25 -> normalised 3/7, 3/7, 1/7.
        xmin, w = R.aa_bilinear_table(4, 2)
        self.assertEqual(int(xmin[0]), 0)
        np.testing.assert_array_equal(w[0, :3], np.float32([3 / 7, 3 / 7, 1 / 7]))

    def test_gr00t_demo_resize_bit_exact(self):
        # 256x256 frames (the GR00T demo data): crop 243 -> 224 is bit-exact with torch's kernel
        g = torch.Generator().manual_seed(1)
        x = torch.randint(0, 256, (2, 3, 243, 243), generator=g, dtype=torch.uint8).float() / 255.0
        ref = torch.nn.functional.interpolate(x, size=(224, 224), mode="bilinear", align_corners=False, antialias=True)
        self.assertTrue(torch.equal(R.resize_aa_bilinear_f32(x, 224, 224), ref))

    def test_wide_downscale_within_one_ulp(self):
        # 640x480 frames crop to 608x456: windows of 5-7 taps, where torch 1.13's accumulation is
        # not a plain per-tap FMA chain; the reference stays within 2 ulp and <= 1e-4 of the
        # uint8 pixels move by one level
        g = torch.Generator().manual_seed(2)
        x = torch.randint(0, 256, (1, 3, 456, 608), generator=g, dtype=torch.uint8).float() / 255.0
        ref = torch.nn.functional.interpolate(x, size=(224, 224), mode="bilinear", align_corners=False, antialias=True)
        mine = R.resize_aa_bilinear_f32(x, 224, 224)
        self.assertLessEqual(float((mine - ref).abs().max()), 2.4e-7)
        flips = ((mine * 255).to(torch.uint8) != (ref * 255).to(torch.uint8)).float().mean()
        self.assertLessEqual(float(flips), 1e-4)

    def test_pil_agrees_within_one_level(self):
        from PIL import Image     # python3-pil (scripts/install_deps.sh)
        g = torch.Generator().manual_seed(3)
        u8 = torch.randint(0, 256, (243, 243, 3), generator=g, dtype=torch.uint8)
        pil = np.asarray(Image.fromarray(u8.numpy()).resize((224, 224), Image.BILINEAR)).astype(np.int32)
        mine = R.resize_aa_bilinear_f32(u8.permute(2, 0, 1)[None].float(), 224, 224)[0].permute(1, 2, 0)
        diff = np.abs(mine.round().numpy().astype(np.int32) - pil)
        self.assertLessEqual(int(diff.max()), 1)       # PIL rounds its 8-bit intermediate rows

    def test_plain_bilinear_and_bicubic_match_torch(self):
        g = torch.Generator().manual_seed(4)
        x = torch.rand(1, 3, 30, 41, generator=g, dtype=torch.float64) * 2 - 1
        for size in [(12, 17), (224, 224), (31, 27)]:
            for fn, mode in [(R.resize_bilinear, "bilinear"), (R.resize_bicubic, "bicubic")]:
                ref = torch.nn.functional.interpolate(x, size=size, mode=mode, align_corners=False)
                self.assertLess(float((fn(x, *size) - ref).abs().max()), 1e-12, f"{mode} {size}")

    def test_cubic_coefficients_sum_to_one(self):
        for t in (0.0, 0.25, 0.5, 0.9):
            self.assertAlmostEqual(sum(R.cubic_coefficients(t)), 1.0, places=14)
        self.assertEqual(R.cubic_coefficients(0.0), (0.0, 1.0, 0.0, 0.0))


class EaglePreprocessing(unittest.TestCase):
    def test_crop_sizes_and_offsets(self):
        self.assertEqual(E.crop_size(256, 256), (243, 243))
        self.assertEqual(E.center_crop_offsets(256, 256, 243, 243), (6, 6))      # round(6.5) = 6
        self.assertEqual(E.crop_size(480, 640), (456, 608))
        self.assertEqual(E.center_crop_offsets(480, 640, 456, 608), (12, 16))
        self.assertEqual(E.crop_size(720, 1280), (684, 1216))

    def test_eval_pipeline_equals_torch_composition(self):
        g = torch.Generator().manual_seed(5)
        frames = torch.randint(0, 256, (3, 256, 256, 3), generator=g, dtype=torch.uint8)
        x = frames.permute(0, 3, 1, 2).float() / 255.0
        x = x[:, :, 6:249, 6:249]
        x = torch.nn.functional.interpolate(x, size=(224, 224), mode="bilinear", align_corners=False, antialias=True)
        ref = (x * 255).to(torch.uint8).permute(0, 2, 3, 1)
        self.assertTrue(torch.equal(E.frames_to_uint8(frames), ref))

    def test_pixel_values(self):
        u8 = torch.tensor([0, 128, 255], dtype=torch.uint8).reshape(1, 1, 1, 3).expand(1, 224, 224, 3).contiguous()
        pv = E.uint8_to_pixel_values(u8)
        self.assertEqual(tuple(pv.shape), (1, 3, 224, 224))
        self.assertEqual(pv.dtype, torch.float32)
        self.assertEqual(float(pv[0, 0, 0, 0]), -1.0)
        self.assertEqual(float(pv[0, 2, 5, 7]), 1.0)
        self.assertEqual(float(pv[0, 1, 0, 0]), float(np.float32(0.5) / np.float32(127.5)))

    def test_train_crop_offset_bounds(self):
        frames = torch.zeros(1, 256, 256, 3, dtype=torch.uint8)
        E.frames_to_uint8(frames, crop_offset=(13, 0))
        with self.assertRaises(ValueError):
            E.frames_to_uint8(frames, crop_offset=(14, 0))

    def test_jitter_identity_and_hand_values(self):
        g = torch.Generator().manual_seed(6)
        x = torch.rand(2, 3, 8, 8, generator=g)
        same = E.color_jitter(x, E.ColorJitter())
        self.assertLess(float((same - x).abs().max()), 1e-6)   # hue 0: an HSV round trip in float32
        red = torch.tensor([1.0, 0.0, 0.0]).reshape(1, 3, 1, 1)
        green = E.color_jitter(red, E.ColorJitter(hue=1 / 3, order=[3, 0, 1, 2]))
        self.assertLess(float((green - torch.tensor([0.0, 1.0, 0.0]).reshape(1, 3, 1, 1)).abs().max()), 1e-6)
        flat = E.color_jitter(x, E.ColorJitter(contrast=0.0, order=[1, 0, 2, 3]))
        luma = (x[:, 0] * 0.2989 + x[:, 1] * 0.587 + x[:, 2] * 0.114).mean(dim=(1, 2))
        self.assertLess(float((flat - luma.reshape(2, 1, 1, 1)).abs().max()), 1e-6)
        dark = E.color_jitter(x, E.ColorJitter(brightness=0.5))
        self.assertLess(float((dark - x * 0.5).abs().max()), 1e-6)

    def test_jitter_draw_ranges(self):
        g = torch.Generator().manual_seed(7)
        for _ in range(50):
            j = E.ColorJitter.sample(g)
            self.assertEqual(sorted(j.order), [0, 1, 2, 3])
            self.assertTrue(0.7 <= j.brightness <= 1.3 and 0.6 <= j.contrast <= 1.4)
            self.assertTrue(0.5 <= j.saturation <= 1.5 and -0.08 <= j.hue <= 0.08)


class EagleModel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.params, frag = mk.eagle_checkpoint(seed=11)
        cls.d = E.EagleDims.from_configs(frag["eagle_config"], frag["backbone_cfg"])

    def test_config_round_trip(self):
        self.assertEqual(self.d, mk.TINY_EAGLE)
        self.assertEqual(set(self.params), set(E.param_shapes(self.d)))
        self.assertNotIn(E.LM + f"layers.{self.d.select_layer}.input_layernorm.weight", self.params)

    def test_rope_tables(self):
        cos, sin = E.rope_cos_sin(torch.arange(600), 128, 1e6)
        pos, i = 517, 5
        exact = pos * 1e6 ** (-2 * i / 128)
        # upstream's angle is a float32 product of a float32 inverse frequency: at position 517
        # it is off the exact angle by up to half an ulp of 176 rad (7.6e-6)
        inv32 = np.float32(1.0) / np.float32(1e6) ** (np.float32(2 * i) / np.float32(128))
        angle = float(np.float32(pos) * np.float32(inv32))
        self.assertAlmostEqual(float(cos[pos, i]), math.cos(angle), delta=1e-6)
        self.assertAlmostEqual(float(sin[pos, i + 64]), math.sin(angle), delta=1e-6)
        self.assertAlmostEqual(angle, exact, delta=1.6e-5)
        self.assertEqual(cos.dtype, torch.float32)
        self.assertTrue(torch.equal(cos[:, :64], cos[:, 64:]))
        # rotate-half: pair (i, i + 64) rotates by the angle
        q = torch.zeros(128, dtype=torch.float64)
        q[i] = 1.0
        rq = q * cos[pos].double() + E.rotate_half(q) * sin[pos].double()
        self.assertAlmostEqual(float(rq[i]), math.cos(angle), delta=2e-6)
        self.assertAlmostEqual(float(rq[i + 64]), math.sin(angle), delta=2e-6)

    def test_patch_embedding_is_a_linear_on_c_ky_kx(self):
        d, p = self.d, self.params
        x = torch.randn(1, 3, 224, 224, dtype=torch.float64)
        w = p[E.VISION + "embeddings.patch_embedding.weight"].double()
        conv = torch.nn.functional.conv2d(x, w, stride=14).flatten(2).transpose(1, 2)
        patches = x.reshape(1, 3, 16, 14, 16, 14).permute(0, 2, 4, 1, 3, 5).reshape(1, 256, 3 * 14 * 14)
        self.assertLess(float((patches @ w.reshape(d.vision_hidden, -1).T - conv).abs().max()), 1e-12)

    def _layer_by_loops(self, x, L, cos, sin):
        """One Qwen3 layer, one query head at a time (an independent check of GQA and RoPE)."""
        d, p = self.d, lambda n: self.params[L + n].double()
        n = x.shape[1]
        h = nn_ops.rms_norm(x[0], p("input_layernorm.weight"), d.rms_eps)
        out = torch.zeros(n, d.llm_heads * d.head_dim, dtype=torch.float64)
        for head in range(d.llm_heads):
            kv = head // (d.llm_heads // d.llm_kv_heads)
            sl_q = slice(head * d.head_dim, (head + 1) * d.head_dim)
            sl_k = slice(kv * d.head_dim, (kv + 1) * d.head_dim)
            q = nn_ops.rms_norm(h @ p("self_attn.q_proj.weight")[sl_q].T, p("self_attn.q_norm.weight"), d.rms_eps)
            k = nn_ops.rms_norm(h @ p("self_attn.k_proj.weight")[sl_k].T, p("self_attn.k_norm.weight"), d.rms_eps)
            v = h @ p("self_attn.v_proj.weight")[sl_k].T
            half = d.head_dim // 2
            c, s = cos.double(), sin.double()
            rot = lambda t: torch.cat([t[:, :half] * c[:, :half] - t[:, half:] * s[:, :half],  # noqa: E731
                                       t[:, half:] * c[:, half:] + t[:, :half] * s[:, half:]], 1)
            q, k = rot(q), rot(k)
            for t in range(n):
                w = torch.softmax((k[:t + 1] @ q[t]) / math.sqrt(d.head_dim), 0)
                out[t, sl_q] = w @ v[:t + 1]
        y = x[0] + out @ p("self_attn.o_proj.weight").T
        h = nn_ops.rms_norm(y, p("post_attention_layernorm.weight"), d.rms_eps)
        g = h @ p("mlp.gate_proj.weight").T
        return y + (g * torch.sigmoid(g) * (h @ p("mlp.up_proj.weight").T)) @ p("mlp.down_proj.weight").T

    def test_qwen3_layer_against_loops(self):
        d = self.d
        x = torch.randn(1, 9, d.llm_hidden, dtype=torch.float64)
        cos, sin = E.rope_cos_sin(torch.arange(9), d.head_dim, d.rope_theta)
        key_mask = torch.ones(9, 9, dtype=torch.bool).tril()[None, None]
        L = E.LM + "layers.1."
        fast = E.qwen3_layer(self.params, L, d, x, cos, sin, key_mask, torch.float64)
        self.assertLess(float((fast[0] - self._layer_by_loops(x, L, cos, sin)).abs().max()), 1e-12)

    def test_hidden_states_and_final_norm(self):
        d = self.d
        x = torch.randn(1, 7, d.llm_hidden, dtype=torch.float64)
        out, hidden = E.language_features(self.params, d, x, return_hidden_states=True)
        self.assertEqual(len(hidden), d.select_layer + 1)
        self.assertTrue(torch.equal(hidden[0], x))
        cos, sin = E.rope_cos_sin(torch.arange(7), d.head_dim, d.rope_theta)
        mask = torch.ones(7, 7, dtype=torch.bool).tril()[None, None]
        last = E.qwen3_layer(self.params, E.LM + f"layers.{d.select_layer - 1}.", d, hidden[-2], cos, sin, mask,
                             torch.float64)
        normed = nn_ops.rms_norm(last, self.params[E.LM + "norm.weight"].double(), d.rms_eps)
        self.assertTrue(torch.equal(out, normed))
        self.assertTrue(torch.equal(hidden[-1], out))

    def test_left_padding_changes_only_by_rounding(self):
        d = self.d
        x = torch.randn(1, 6, d.llm_hidden, dtype=torch.float64)
        padded = torch.cat([torch.randn(1, 3, d.llm_hidden, dtype=torch.float64), x], 1)
        mask = torch.tensor([[0, 0, 0, 1, 1, 1, 1, 1, 1]])
        a = E.language_features(self.params, d, x)
        b = E.language_features(self.params, d, padded, attention_mask=mask)
        # real tokens sit at positions 3..8 instead of 0..5: RoPE is relative, and its float32
        # tables make the only difference
        self.assertLess(max_rel(b[:, 3:], a), 1e-5)

    def test_vl_features_scatter_and_dtypes(self):
        d = self.d
        frames = torch.randint(0, 256, (2, 64, 80, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(8))
        pv = E.preprocess(frames)
        n_img = d.tokens_per_image
        ids = torch.tensor([[151644, 8948, 198] + [d.image_token_index] * n_img + [27, 1805]
                            + [d.image_token_index] * n_img + [151645]])
        out64 = E.vl_features(self.params, d, ids, pv)
        out32 = E.vl_features(self.params, d, ids, pv, dtype=torch.float32)
        self.assertEqual(tuple(out64.shape), (1, ids.shape[1], d.llm_hidden))
        self.assertLess(max_rel(out32.double(), out64), 1e-4)
        with self.assertRaises(ValueError):
            E.vl_features(self.params, d, ids, pv[:1])

    def test_flops_at_released_size(self):
        d = E.EagleDims()
        self.assertEqual(d.tokens_per_image, 256)
        self.assertAlmostEqual(E.flops_per_image(d) / 1e12, 0.2, delta=0.03)
        self.assertAlmostEqual(E.flops_per_token(d, 0) / 1e9, 1.2, delta=0.05)


class WanVae(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ck = mk.wan_checkpoints(seed=21)
        cls.p21, cls.p22 = ck["Wan2.1_VAE"][0], ck["Wan2.2_VAE"][0]

    def _video(self, t, h=32, w=48, seed=9):
        g = torch.Generator().manual_seed(seed)
        return torch.rand(1, 3, t, h, w, generator=g, dtype=torch.float64) * 2 - 1

    def test_chunked_equals_one_pass(self):
        for params, d in [(self.p21, mk.TINY_VAE21), (self.p22, mk.TINY_VAE22)]:
            for t in (1, 5, 9, 13):
                v = self._video(t)
                a = V.encode(params, d, v, chunked=True)
                b = V.encode(params, d, v, chunked=False)
                f = d.spatial_factor
                self.assertEqual(tuple(a.shape), (1, d.z, 1 + (t - 1) // 4, 32 // f, 48 // f))
                self.assertLess(max_rel(a, b), 1e-12, f"{d.kind} T={t}")

    def test_causality_and_dropped_frames(self):
        for params, d in [(self.p21, mk.TINY_VAE21), (self.p22, mk.TINY_VAE22)]:
            v = self._video(9)
            w = v.clone()
            w[:, :, 5:] = self._video(4, seed=10)          # frames 5..8 only reach latent frame 2
            a, b = V.encode(params, d, v), V.encode(params, d, w)
            self.assertTrue(torch.equal(a[:, :, :2], b[:, :, :2]))
            self.assertFalse(torch.equal(a[:, :, 2], b[:, :, 2]))
            first = V.encode(params, d, v[:, :, :1])
            self.assertTrue(torch.equal(first[:, :, 0], a[:, :, 0]))
            longer = torch.cat([v, self._video(3, seed=11)], 2)   # T = 12: frames 9..11 are never encoded
            self.assertTrue(torch.equal(V.encode(params, d, longer), a))

    def test_patchify_channel_order(self):
        x = torch.zeros(1, 2, 1, 4, 4)
        x[0, 1, 0, 3, 0] = 1.0     # channel 1, row 3 = 2*1 + 1, column 0 = 2*0 + 0
        x[0, 0, 0, 0, 3] = 2.0     # channel 0, row 0, column 3 = 2*1 + 1
        y = V.patchify(x)
        self.assertEqual(float(y[0, 1 * 4 + 0 * 2 + 1, 0, 1, 0]), 1.0)   # c*4 + col*2 + row
        self.assertEqual(float(y[0, 0 * 4 + 1 * 2 + 0, 0, 0, 1]), 2.0)
        self.assertEqual(float(y.sum()), 3.0)

    def test_avg_down_zero_frame_and_grouping(self):
        x = torch.ones(1, 2, 3, 4, 4)
        y = V.avg_down(x, 4, 2, 2)                # T = 3 -> one zero frame in front -> 2 frames
        self.assertEqual(tuple(y.shape), (1, 4, 2, 2, 2))
        # output channel 2c + dt holds input channel c at time offset dt, averaged over 2x2 pixels:
        # the zero frame lands in the even channels of output frame 0, not in a temporal mean
        self.assertTrue(torch.equal(y[:, 0::2, 0], torch.zeros_like(y[:, 0::2, 0])))
        self.assertTrue(torch.equal(y[:, 1::2, 0], torch.ones_like(y[:, 1::2, 0])))
        self.assertTrue(torch.equal(y[:, :, 1], torch.ones_like(y[:, :, 1])))
        ramp = torch.arange(16.0).reshape(1, 1, 1, 4, 4)
        pooled = V.avg_down(ramp, 1, 1, 2)       # one channel: a 2x2 average pool
        self.assertTrue(torch.equal(pooled[0, 0, 0], torch.tensor([[2.5, 4.5], [10.5, 12.5]])))
        z = torch.arange(2.0).reshape(1, 2, 1, 1, 1).expand(1, 2, 2, 2, 2).contiguous()
        g = V.avg_down(z, 1, 2, 2)                 # 2 channels x 8 positions -> one group of 16
        self.assertAlmostEqual(float(g.flatten()[0]), 0.5)

    def test_i2v_condition(self):
        frame = self._video(1)[:, :, 0]
        y = V.i2v_condition(self.p21, mk.TINY_VAE21, frame, num_frames=9)
        self.assertEqual(tuple(y.shape), (1, 20, 3, 4, 6))
        self.assertTrue(torch.equal(y[:, :4, 0], torch.ones_like(y[:, :4, 0])))
        self.assertTrue(torch.equal(y[:, :4, 1:], torch.zeros_like(y[:, :4, 1:])))
        clip = torch.cat([frame[:, :, None], torch.zeros(1, 3, 8, 32, 48, dtype=torch.float64)], 2)
        self.assertTrue(torch.equal(y[:, 4:], V.encode(self.p21, mk.TINY_VAE21, clip)))

    def test_normalisation_constants(self):
        mean, std = mk.TINY_VAE21.constants()
        self.assertEqual((len(mean), mean[0], std[0]), (16, -0.7571, 2.8184))
        mean, std = mk.TINY_VAE22.constants()
        self.assertEqual((len(mean), len(std)), (48, 48))

    def test_op_list_counts_the_convolutions_it_runs(self):
        for params, d in [(self.p21, mk.TINY_VAE21), (self.p22, mk.TINY_VAE22)]:
            counted = []
            real = {n: getattr(torch.nn.functional, n) for n in ("conv2d", "conv3d")}

            def counting(name):
                def conv(x, w, b=None, *args, **kw):
                    y = real[name](x, w, b, *args, **kw)
                    counted.append(2 * y.numel() * w[0].numel())
                    return y
                return conv
            try:
                torch.nn.functional.conv2d, torch.nn.functional.conv3d = counting("conv2d"), counting("conv3d")
                V.encode(params, d, self._video(9), chunked=False)
            finally:
                torch.nn.functional.conv2d, torch.nn.functional.conv3d = real["conv2d"], real["conv3d"]
            listed = V.encoder_ops(d, 9, 32, 48)
            attention = [o for o in listed if o[0] == "encoder.middle.1"][0]
            qkv_proj = 2 * 4 * d.stage_dims[-1] ** 2 * 3 * (32 // d.spatial_factor) * (48 // d.spatial_factor)
            self.assertEqual(sum(o[2] for o in listed) - attention[2] + qkv_proj, sum(counted), d.kind)

    def test_released_layout(self):
        s = V.param_shapes(V.VaeDims.wan21())
        self.assertEqual(s["encoder.downsamples.5.time_conv.weight"], (192, 192, 3, 1, 1))
        self.assertEqual(s["encoder.downsamples.8.time_conv.weight"], (384, 384, 3, 1, 1))
        self.assertEqual(s["encoder.downsamples.3.shortcut.weight"], (192, 96, 1, 1, 1))
        self.assertEqual(s["encoder.head.2.weight"], (32, 384, 3, 3, 3))
        self.assertNotIn("encoder.downsamples.2.time_conv.weight", s)   # stage 0 downsamples in space only
        s = V.param_shapes(V.VaeDims.wan22())
        self.assertEqual(s["encoder.conv1.weight"], (160, 12, 3, 3, 3))
        self.assertEqual(s["encoder.downsamples.1.downsamples.2.time_conv.weight"], (320, 320, 3, 1, 1))
        self.assertEqual(s["decoder.head.2.weight"], (12, 256, 3, 3, 3))


class UmT5(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.params = mk.wan_checkpoints(seed=31)["models_t5_umt5-xxl-enc-bf16"][0]

    def test_buckets_match_exact_arithmetic(self):
        b = T.relative_buckets(300, 300)
        for q in (0, 150, 299):
            for k in range(300):
                n = abs(k - q)
                want = T.bucket_of_distance(n) + (16 if k > q else 0)
                self.assertEqual(int(b[q, k]), want, f"q={q} k={k}")

    def test_bucket_hand_values(self):
        b = T.relative_buckets(1, 400)[0]      # query 0: keys after it
        want = {0: 0, 1: 17, 7: 23, 8: 24, 11: 24, 12: 25, 15: 25, 16: 26, 22: 26, 23: 27, 31: 27, 32: 28,
                45: 28, 46: 29, 63: 29, 64: 30, 90: 30, 91: 31, 128: 31, 399: 31}
        for k, v in want.items():
            self.assertEqual(int(b[k]), v, k)
        self.assertEqual(int(T.relative_buckets(400, 1)[399, 0]), 15)   # far before the query

    def test_gelu_is_tanh_approximation(self):
        x = torch.tensor([1.0], dtype=torch.float64)
        want = 0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * (1 + 0.044715)))
        self.assertAlmostEqual(float(nn_ops.gelu_tanh(x)), want, places=15)
        self.assertGreater(abs(float(nn_ops.gelu_erf(x)) - want), 1e-4)

    def test_padding_does_not_reach_real_rows(self):
        d = mk.TINY_T5
        g = torch.Generator().manual_seed(12)
        ids = torch.randint(0, d.vocab, (1, 5), generator=g)
        short = T.encode(self.params, d, ids, torch.ones(1, 5))
        padded_ids = torch.cat([ids, torch.zeros(1, 7, dtype=torch.long)], 1)
        mask = torch.tensor([[1] * 5 + [0] * 7])
        long = T.encode(self.params, d, padded_ids, mask)
        self.assertLess(max_rel(long[:, :5], short), 1e-13)
        ctx = T.context_rows(long, mask, d.text_len)
        self.assertEqual(tuple(ctx.shape), (1, 512, d.dim))
        self.assertTrue(torch.equal(ctx[:, :5], long[:, :5]))
        self.assertEqual(float(ctx[:, 5:].abs().sum()), 0.0)

    def test_every_block_has_its_own_position_bias(self):
        d = mk.TINY_T5
        ids = torch.randint(0, d.vocab, (1, 6), generator=torch.Generator().manual_seed(13))
        mask = torch.ones(1, 6)
        base = T.encode(self.params, d, ids, mask)
        changed = dict(self.params)
        name = f"blocks.{d.layers - 1}.pos_embedding.embedding.weight"
        changed[name] = changed[name] + 1.0 * torch.arange(d.buckets).reshape(-1, 1).to(changed[name].dtype)
        self.assertGreater(max_rel(T.encode(changed, d, ids, mask), base), 1e-3)


class Clip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.params = mk.wan_checkpoints(seed=41)["models_clip_open-clip-xlm-roberta-large-vit-huge-14"][0]

    def test_output_is_block_31_of_32(self):
        d = mk.TINY_CLIP
        pix = C.preprocess(torch.rand(1, 3, 40, 56, generator=torch.Generator().manual_seed(14)) * 2 - 1, d)
        base = C.visual_features(self.params, d, pix)
        self.assertEqual(tuple(base.shape), (1, 257, d.dim))
        last = dict(self.params)
        last[f"visual.transformer.{d.layers - 1}.mlp.2.weight"] = last[f"visual.transformer.{d.layers - 1}.mlp.2.weight"] * 3
        last["visual.post_norm.weight"] = last["visual.post_norm.weight"] * 3
        self.assertTrue(torch.equal(C.visual_features(last, d, pix), base))
        used = dict(self.params)
        used[f"visual.transformer.{d.layers - 2}.mlp.2.weight"] = used[f"visual.transformer.{d.layers - 2}.mlp.2.weight"] * 3
        self.assertGreater(max_rel(C.visual_features(used, d, pix), base), 1e-3)

    def test_preprocess_constant_frame(self):
        frame = torch.full((1, 3, 30, 50), -0.2, dtype=torch.float64)
        pix = C.preprocess(frame)
        want = [(0.4 - m) / s for m, s in zip(C.OPENAI_MEAN, C.OPENAI_STD)]
        for c in range(3):
            self.assertAlmostEqual(float(pix[0, c].min()), want[c], places=12)
            self.assertAlmostEqual(float(pix[0, c].max()), want[c], places=12)

    def test_flops_at_released_size(self):
        self.assertAlmostEqual(C.flops_per_image(C.ClipDims()) / 1e12, 0.32, delta=0.03)


class TinyFiles(unittest.TestCase):
    def test_cli_writes_upstream_names(self):
        with tempfile.TemporaryDirectory() as out:
            mk.main(["--out", out, "--which", "eagle,vae21,vae22,t5,clip", "--seed", "3"])
            tensors, meta = load_file(os.path.join(out, "eagle", "model.safetensors"))
            self.assertEqual({k: tuple(v.shape) for k, v in tensors.items()},
                             {k: tuple(v) for k, v in E.param_shapes(mk.TINY_EAGLE).items()})
            import json
            with open(os.path.join(out, "eagle", "config.json")) as f:
                cfg = json.load(f)
            with open(os.path.join(out, "eagle", "eagle2_hg_model", "config.json")) as f:
                ecfg = json.load(f)
            self.assertEqual(E.EagleDims.from_configs(ecfg, cfg["backbone_cfg"]), mk.TINY_EAGLE)
            self.assertIsNone(cfg["backbone_cfg"]["project_to_dim"])
            expect = {"Wan2.1_VAE": V.param_shapes(mk.TINY_VAE21), "Wan2.2_VAE": V.param_shapes(mk.TINY_VAE22),
                      "models_t5_umt5-xxl-enc-bf16": T.param_shapes(mk.TINY_T5),
                      "models_clip_open-clip-xlm-roberta-large-vit-huge-14": C.param_shapes(mk.TINY_CLIP)}
            for stem, shapes in expect.items():
                pth = torch.load(os.path.join(out, "wan", stem + ".pth"))
                st, _ = load_file(os.path.join(out, "wan", stem + ".safetensors"))
                self.assertEqual({k: tuple(v.shape) for k, v in pth.items()}, {k: tuple(v) for k, v in shapes.items()})
                for k in pth:
                    self.assertTrue(torch.equal(pth[k], st[k]), f"{stem} {k}")
                want_dtype = torch.bfloat16 if "t5" in stem else torch.float32
                self.assertTrue(all(v.dtype == want_dtype for v in pth.values()), stem)

    def test_cli_rejects_unknown_encoder(self):
        with self.assertRaises(SystemExit):
            mk.main(["--out", "/nonexistent", "--which", "vae3"])


class ExactBuckets(unittest.TestCase):
    def test_thresholds(self):
        starts = [n for n in range(9, 200) if T.bucket_of_distance(n) != T.bucket_of_distance(n - 1)]
        self.assertEqual(starts, [12, 16, 23, 32, 46, 64, 91])
        self.assertEqual(T.bucket_of_distance(16), 10)
        self.assertTrue(Fraction(16, 8) ** 8 == Fraction(16) ** 2)


if __name__ == "__main__":
    unittest.main()
