#!/usr/bin/python3
"""Self-checks of the float64 upstream references (run: /usr/bin/python3 tests/upstream/test_references.py).

- gradients against central finite differences, one random direction per parameter tensor, on the
  tiny models (GR00T with dropout masks and two embodiments; DreamZero with a window that cuts a block)
- invariances the loss combinations imply: sample order, splitting a step's samples
- hand-computed values: the diffusers and action sinusoids, the float32 timestep bucket, the shift-5
  sigma table's ends, the loss-weight table (min 0 at id 0, mean 1), the block timestep rule
- DreamZero's teacher-forcing mask against hand-written masks (F = 1 + 2*2 frames, one token per frame)
- the tiny checkpoints: safetensors layout, dtypes, index, and both references run on them
- the released presets: 314 GR00T action-head tensors with 1,068,806,144 parameters (UPSTREAM.md)
"""
import math
import os
import sys
import tempfile
import unittest

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dreamzero_reference as dz  # noqa: E402
import gr00t_n15_reference as gr  # noqa: E402
import make_tiny_checkpoint  # noqa: E402
import safetensors_io  # noqa: E402
import upstream_presets as presets  # noqa: E402

F64 = torch.float64
FD_STEP = 1e-5
FD_TOL = 1e-6


def random_params(shapes, seed):
    gen = torch.Generator().manual_seed(seed)
    return {n: make_tiny_checkpoint.random_tensor(n, s, gen).to(F64) for n, s in shapes.items()}


def check_directional_fd(test, loss_of, params, grads, seed):
    """For every tensor, (L(p + h u) - L(p - h u)) / 2h against <grad, u> for a random unit-scale u."""
    gen = torch.Generator().manual_seed(seed)
    worst = (0.0, "")
    for name, value in params.items():
        direction = torch.randn(value.shape, generator=gen, dtype=F64)
        analytic = float((grads[name] * direction).sum())
        with torch.no_grad():
            plus = {**params, name: value + FD_STEP * direction}
            minus = {**params, name: value - FD_STEP * direction}
            numeric = (loss_of(plus) - loss_of(minus)) / (2 * FD_STEP)
        err = abs(numeric - analytic) / max(abs(analytic), abs(numeric), 1e-3)
        worst = max(worst, (err, name))
        test.assertLess(err, FD_TOL, f"{name}: finite difference {numeric:.10g} vs autograd {analytic:.10g}")
    return worst


# ---- GR00T-N1.5 ---------------------------------------------------------------------------------
def gr00t_samples(dims, seed, n_vl=(5, 9, 3), emb_ids=(31, 24, 31), with_dropout=True):
    gen = torch.Generator().manual_seed(seed)
    samples = []
    for i, (n, e) in enumerate(zip(n_vl, emb_ids)):
        h, a = dims.horizon, dims.action_dim
        mask = torch.ones(h, a, dtype=F64)
        mask[:, a - 2 - i:] = 0  # padded action dims of this embodiment
        sample = dict(vl=torch.randn(n, dims.d_vl, generator=gen, dtype=F64),
                      state=torch.randn(dims.state_dim, generator=gen, dtype=F64),
                      actions=2 * torch.rand(h, a, generator=gen, dtype=F64) - 1, action_mask=mask,
                      noise=torch.randn(h, a, generator=gen, dtype=F64),
                      tau=float(torch.rand(1, generator=gen)), emb_id=e)
        if with_dropout:
            sample["dropout"] = {site: (torch.rand(shape, generator=gen) > dims.dropout).to(F64)
                                 for site, shape in gr.dropout_sites(dims, n).items()}
        samples.append(sample)
    return samples


class Gr00tReference(unittest.TestCase):
    config = presets.TINY_GR00T

    def setUp(self):
        self.dims = gr.dims_from_config(self.config)
        self.params = random_params(gr.param_shapes(self.config), seed=1)

    def test_gradients_match_finite_differences_with_dropout(self):
        samples = gr00t_samples(self.dims, seed=2)
        loss, grads = gr.gr00t_loss_and_grads(self.params, self.config, samples)
        checked = [gr._Sample(s, self.dims) for s in samples]
        worst = check_directional_fd(self, lambda p: float(gr.gr00t_loss(p, self.dims, checked)),
                                     self.params, grads, seed=3)
        self.assertTrue(math.isfinite(loss) and loss > 0)
        print(f"\n  gr00t: loss {loss:.6f}, worst FD relative error {worst[0]:.2e} ({worst[1]})")

    def test_every_parameter_gets_a_gradient_and_unused_rows_get_zero(self):
        samples = gr00t_samples(self.dims, seed=4)
        _, grads = gr.gr00t_loss_and_grads(self.params, self.config, samples)
        self.assertEqual(set(grads), set(gr.param_shapes(self.config)))
        for name, g in grads.items():
            self.assertTrue(bool((g != 0).any()), f"{name} has an all-zero gradient")
        pos = grads["action_head.position_embedding.weight"]
        self.assertTrue(bool((pos[self.dims.horizon:] == 0).all()), "rows past the horizon are unused")
        state_w = grads["action_head.state_encoder.layer1.W"]
        used = {31, 24}
        for e in range(self.dims.n_embodiments):
            self.assertEqual(bool((state_w[e] != 0).any()), e in used, f"embodiment slot {e}")

    def test_dropout_off_without_masks_and_masks_change_the_loss(self):
        with_masks = gr00t_samples(self.dims, seed=5)
        without = [{k: v for k, v in s.items() if k != "dropout"} for s in with_masks]
        loss_on, _ = gr.gr00t_loss_and_grads(self.params, self.config, with_masks)
        loss_off, _ = gr.gr00t_loss_and_grads(self.params, self.config, without)
        self.assertNotAlmostEqual(loss_on, loss_off, places=6)
        bad = dict(with_masks[0], dropout={k: v for k, v in with_masks[0]["dropout"].items() if "ff_out" not in k})
        with self.assertRaises(ValueError):
            gr.gr00t_loss_and_grads(self.params, self.config, [bad])

    def test_sample_order_and_splitting(self):
        samples = gr00t_samples(self.dims, seed=6)
        loss, grads = gr.gr00t_loss_and_grads(self.params, self.config, samples)
        loss_rev, grads_rev = gr.gr00t_loss_and_grads(self.params, self.config, samples[::-1])
        self.assertAlmostEqual(loss, loss_rev, places=12)
        total_mask = sum(float(s["action_mask"].sum()) for s in samples)
        part_a = gr.gr00t_loss_and_grads(self.params, self.config, samples[:1], loss_denominator=total_mask)
        part_b = gr.gr00t_loss_and_grads(self.params, self.config, samples[1:], loss_denominator=total_mask)
        self.assertAlmostEqual(loss, part_a[0] + part_b[0], places=12)
        for name in grads:
            torch.testing.assert_close(grads[name], grads_rev[name], rtol=1e-10, atol=1e-13)
            torch.testing.assert_close(grads[name], part_a[1][name] + part_b[1][name], rtol=1e-10, atol=1e-13)

    def test_tq_override_and_beta_sample(self):
        sample = gr00t_samples(self.dims, seed=7, n_vl=(4,), emb_ids=(17,), with_dropout=False)[0]
        sample["tau"] = 0.4567
        base, _ = gr.gr00t_loss_and_grads(self.params, self.config, [sample])
        same, _ = gr.gr00t_loss_and_grads(self.params, self.config, [dict(sample, tq=456)])
        other, _ = gr.gr00t_loss_and_grads(self.params, self.config, [dict(sample, tq=100)])
        self.assertEqual(base, same)
        self.assertNotEqual(base, other)
        beta = {k: v for k, v in sample.items() if k != "tau"}
        beta["beta_sample"] = 0.25
        via_beta, _ = gr.gr00t_loss_and_grads(self.params, self.config, [beta])
        direct, _ = gr.gr00t_loss_and_grads(self.params, self.config, [dict(sample, tau=gr.tau_from_beta_sample(0.25))])
        self.assertEqual(via_beta, direct)
        self.assertAlmostEqual(gr.tau_from_beta_sample(0.25), (0.999 - 0.25) / 0.999, places=7)

    def test_float32_sinusoids_differ_only_by_rounding(self):
        samples = gr00t_samples(self.dims, seed=8, with_dropout=False)
        loss64, _ = gr.gr00t_loss_and_grads(self.params, self.config, samples)
        loss32, _ = gr.gr00t_loss_and_grads(self.params, self.config, samples, sinusoid="float32")
        self.assertLess(abs(loss64 - loss32), 1e-4 * abs(loss64))


class Gr00tHandValues(unittest.TestCase):
    def test_diffusers_timestep_sinusoid(self):
        for mode, tol in (("float64", 1e-15), ("float32", 1e-6)):
            emb = gr.timestep_sinusoid(torch.tensor([0, 1, 1000]), mode)
            self.assertEqual(tuple(emb.shape), (3, 256))
            self.assertTrue(bool((emb[0, :128] == 1).all() and (emb[0, 128:] == 0).all()))
            self.assertAlmostEqual(float(emb[1, 0]), math.cos(1.0), delta=tol)          # cos half first
            self.assertAlmostEqual(float(emb[1, 128]), math.sin(1.0), delta=tol)
            f1 = math.exp(-math.log(10000.0) / 127)                                       # divisor 127
            self.assertAlmostEqual(float(emb[1, 1]), math.cos(f1), delta=tol)
            self.assertAlmostEqual(float(emb[2, 127]), math.cos(1000 * 1e-4), delta=tol * 10)  # f_127 = 1e-4
        f1_128 = math.exp(-math.log(10000.0) / 128)
        second = float(gr.timestep_sinusoid(torch.tensor([1]), "float64")[0, 1])
        self.assertGreater(abs(second - math.cos(f1_128)), 1e-4)  # not the divisor 128

    def test_action_sinusoid_is_sin_first_with_divisor_half_width(self):
        for mode, tol in (("float64", 1e-15), ("float32", 1e-6)):
            emb = gr.action_time_sinusoid(torch.tensor([1.0]), 8, mode)[0]
            self.assertAlmostEqual(float(emb[0]), math.sin(1.0), delta=tol)
            self.assertAlmostEqual(float(emb[4]), math.cos(1.0), delta=tol)
            self.assertAlmostEqual(float(emb[1]), math.sin(math.exp(-math.log(1e4) / 4)), delta=tol)

    def test_timestep_bucket_truncates_a_float32_product(self):
        self.assertEqual(gr.timestep_bucket(0.9995, 1000), 999)
        self.assertEqual(gr.timestep_bucket(0.001, 1000), 1)
        self.assertEqual(gr.timestep_bucket(-0.0005, 1000), 0)   # tau < 0 when the Beta sample > 0.999
        self.assertEqual(gr.timestep_bucket(0.1234567, 1000), 123)


# ---- DreamZero ----------------------------------------------------------------------------------
TINY_CLIP_DIM = 16  # the finite-difference model shrinks CLIP's 1280 (the checkpoint test keeps 1280)


def dreamzero_samples(dims, seed, count=2, clip_dim=TINY_CLIP_DIM):
    gen = torch.Generator().manual_seed(seed)
    n_f = 1 + 2 * dims.fpb
    gh = gw = int(math.isqrt(dims.frame_seqlen))
    h, w = gh * dims.patch[1], gw * dims.patch[2]
    n_act = 2 * dims.actions_per_block
    samples = []
    for i in range(count):
        mask = torch.ones(n_act, dims.action_dim, dtype=F64)
        mask[:, dims.action_dim - 1 - i:] = 0
        samples.append(dict(
            latents=torch.randn(dims.out_dim, n_f, h, w, generator=gen, dtype=F64),
            noise=torch.randn(dims.out_dim, n_f, h, w, generator=gen, dtype=F64),
            y=torch.randn(dims.in_dim - dims.out_dim, n_f, h, w, generator=gen, dtype=F64),
            timestep_id=torch.randint(1, 1000, (n_f,), generator=gen),
            text=torch.randn(5 + 3 * i, dims.text_dim, generator=gen, dtype=F64),
            clip=torch.randn(257, clip_dim, generator=gen, dtype=F64),
            actions=2 * torch.rand(n_act, dims.action_dim, generator=gen, dtype=F64) - 1,
            action_noise=torch.randn(n_act, dims.action_dim, generator=gen, dtype=F64), action_mask=mask,
            state=torch.randn(2 * dims.states_per_block, dims.state_dim, generator=gen, dtype=F64),
            has_real_action=1.0))
    return samples


class DreamZeroReference(unittest.TestCase):
    config = presets.TINY_DREAMZERO

    def setUp(self):
        self.dims = dz.dims_from_config(self.config)
        self.params = random_params(dz.param_shapes(self.config, clip_dim=TINY_CLIP_DIM), seed=11)

    def test_gradients_match_finite_differences(self):
        samples = dreamzero_samples(self.dims, seed=12, count=1)
        loss, grads = dz.dreamzero_loss_and_grads(self.params, self.config, samples)
        checked = [dz._Sample(s, self.dims, 512) for s in samples]
        tables = dz.schedule_tables()
        worst = check_directional_fd(self, lambda p: float(dz.dreamzero_loss(p, self.dims, checked, tables, "float64")),
                                     self.params, grads, seed=13)
        print(f"\n  dreamzero: loss {loss:.6f}, worst FD relative error {worst[0]:.2e} ({worst[1]})")

    def test_every_parameter_gets_a_gradient(self):
        _, grads = dz.dreamzero_loss_and_grads(self.params, self.config, dreamzero_samples(self.dims, seed=14))
        self.assertEqual(set(grads), set(dz.param_shapes(self.config, clip_dim=TINY_CLIP_DIM)))
        for name, g in grads.items():
            self.assertTrue(bool((g != 0).any()), f"{name} has an all-zero gradient")

    def test_sample_order_and_splitting(self):
        samples = dreamzero_samples(self.dims, seed=15, count=3)
        loss, grads = dz.dreamzero_loss_and_grads(self.params, self.config, samples)
        loss_rev, grads_rev = dz.dreamzero_loss_and_grads(self.params, self.config, samples[::-1])
        part_a = dz.dreamzero_loss_and_grads(self.params, self.config, samples[:1])
        part_b = dz.dreamzero_loss_and_grads(self.params, self.config, samples[1:])
        self.assertAlmostEqual(loss, loss_rev, places=11)
        self.assertAlmostEqual(loss, (part_a[0] + 2 * part_b[0]) / 3, places=11)
        for name in grads:
            torch.testing.assert_close(grads[name], grads_rev[name], rtol=1e-10, atol=1e-12)
            torch.testing.assert_close(grads[name], (part_a[1][name] + 2 * part_b[1][name]) / 3, rtol=1e-10, atol=1e-12)

    def test_block_rule_text_padding_and_action_masks(self):
        sample = dreamzero_samples(self.dims, seed=16, count=1)[0]
        base, _ = dz.dreamzero_loss_and_grads(self.params, self.config, [sample])
        ids = torch.as_tensor(sample["timestep_id"]).clone()
        ids[2], ids[4] = 3, 7  # second frames of the two blocks: overwritten by the first frames' ids
        same, _ = dz.dreamzero_loss_and_grads(self.params, self.config, [dict(sample, timestep_id=ids)])
        self.assertEqual(base, same)
        padded = torch.cat([sample["text"], torch.zeros(4, self.dims.text_dim, dtype=F64)])
        self.assertEqual(base, dz.dreamzero_loss_and_grads(self.params, self.config, [dict(sample, text=padded)])[0])
        shorter, _ = dz.dreamzero_loss_and_grads(self.params, self.config, [sample], text_pad=64)
        self.assertNotAlmostEqual(base, shorter, places=8)  # padded rows are attended (no key mask)
        no_action = dz.dreamzero_loss_and_grads(self.params, self.config, [dict(sample, has_real_action=0)])[0]
        unmasked = dict(sample, action_mask=0 * sample["action_mask"])
        masked = dz.dreamzero_loss_and_grads(self.params, self.config, [unmasked])[0]
        self.assertAlmostEqual(no_action, masked, places=12)
        self.assertLess(no_action, base)

    def test_y_channels_are_never_noised(self):
        sample = dz._Sample(dreamzero_samples(self.dims, seed=17, count=1)[0], self.dims, 512)
        sigma = dz.schedule_tables()[0]
        clean_in, noisy_in = dz.stream_inputs(sample, sigma)
        c = self.dims.out_dim
        self.assertTrue(torch.equal(clean_in[c:], sample.y) and torch.equal(noisy_in[c:], sample.y))
        self.assertTrue(torch.equal(clean_in[:c], sample.latents))
        s = sigma[sample.frame_ids][None, :, None, None]
        torch.testing.assert_close(noisy_in[:c], (1 - s) * sample.latents + s * sample.noise, rtol=0, atol=0)


class DreamZeroHandValues(unittest.TestCase):
    def test_schedule_table_ends_and_weights(self):
        sigma, t, weight = dz.schedule_tables("float64")
        self.assertEqual(float(sigma[0]), 1.0)
        self.assertEqual(float(t[0]), 1000.0)
        self.assertAlmostEqual(float(sigma[999]), 0.005 / 1.004, places=15)
        self.assertAlmostEqual(float(sigma[500]), 2.5 / 3.0, places=15)      # s = 0.5 -> 5*0.5/(1+2)
        self.assertEqual(float(weight.min()), 0.0)
        self.assertEqual(int(weight.argmin()), 0)                            # t = 1000 is farthest from 500
        self.assertAlmostEqual(float(weight.mean()), 1.0, places=12)
        s32, t32, w32 = dz.schedule_tables("float32")
        self.assertLess(float((s32 - sigma).abs().max()), 2e-7)
        self.assertLess(float((t32 - t).abs().max()), 2e-4)
        self.assertLess(float((w32 - weight).abs().max()), 1e-5)

    def test_time_sinusoid_is_cos_first_float64(self):
        emb = dz.time_sinusoid(torch.tensor([0.0, 2.0]), 256)
        self.assertTrue(bool((emb[0, :128] == 1).all() and (emb[0, 128:] == 0).all()))
        self.assertAlmostEqual(float(emb[1, 0]), math.cos(2.0), places=15)
        self.assertAlmostEqual(float(emb[1, 128 + 64]), math.sin(2.0 * 10000 ** (-0.5)), places=15)

    def test_block_timestep_ids(self):
        ids = dz.block_timestep_ids([5, 10, 11, 20, 21, 30, 31], fpb=2)
        self.assertEqual(ids.tolist(), [5, 10, 10, 20, 20, 30, 30])
        self.assertEqual(dz.block_timestep_ids([1, 2, 3, 4], fpb=1).tolist(), [1, 2, 3, 4])

    def test_rope_split_and_register_positions(self):
        dims = dz.dims_from_config(presets.DREAMZERO_14B_DROID)
        angles = dz.rope_angles(dims, 9, 2, 3, True)           # head_dim 128: pairs 22 (f), 21 (h), 21 (w)
        self.assertEqual(tuple(angles.shape), (9 * 6 + 4 * 24 + 4, 64))
        token = 5 * 6 + 1 * 3 + 2                              # frame 5, h 1, w 2
        self.assertAlmostEqual(float(angles[token, 0]), 5.0)
        self.assertAlmostEqual(float(angles[token, 1]), 5.0 * 10000 ** (-2 / 44))
        self.assertAlmostEqual(float(angles[token, 22]), 1.0)
        self.assertAlmostEqual(float(angles[token, 43]), 2.0)
        action = 9 * 6 + 24 + 3                                 # block 1, action 3 -> position 27
        self.assertAlmostEqual(float(angles[action, 1]), 27 * 10000 ** (-2 / 128))
        state = 9 * 6 + 96 + 2                                  # state of block 2 -> position 2
        self.assertAlmostEqual(float(angles[state, 63]), 2 * 10000 ** (-126 / 128))


# Hand-written masks, F = 5 latent frames (1 + 2 blocks x 2), one token per frame, 2 actions and
# 1 state per block: tokens c0..c4 clean, n0..n4 noisy, a0 a1 (block 0) a2 a3 (block 1), s0 s1.
#                      c0 c1 c2 c3 c4 n0 n1 n2 n3 n4 a0 a1 a2 a3 s0 s1
MASK_WINDOW_3_FRAMES = """
c0                     1  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
c1                     1  1  1  .  .  .  .  .  .  .  .  .  .  .  .  .
c2                     1  1  1  .  .  .  .  .  .  .  .  .  .  .  .  .
c3                     1  .  1  1  1  .  .  .  .  .  .  .  .  .  .  .
c4                     1  .  1  1  1  .  .  .  .  .  .  .  .  .  .  .
n0                     .  .  .  .  .  1  .  .  .  .  .  .  .  .  .  .
n1                     1  .  .  .  .  .  1  1  .  .  1  1  .  .  1  .
n2                     1  .  .  .  .  .  1  1  .  .  1  1  .  .  1  .
n3                     1  1  1  .  .  .  .  .  1  1  .  .  1  1  .  1
n4                     1  1  1  .  .  .  .  .  1  1  .  .  1  1  .  1
a0                     1  .  .  .  .  .  1  1  .  .  1  1  .  .  1  .
a1                     1  .  .  .  .  .  1  1  .  .  1  1  .  .  1  .
a2                     1  1  1  .  .  .  .  .  1  1  .  .  1  1  .  1
a3                     1  1  1  .  .  .  .  .  1  1  .  .  1  1  .  1
s0                     .  .  .  .  .  .  .  .  .  .  .  .  .  .  1  .
s1                     .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  1
"""
CLEAN_ROWS_TOKEN_CAUSAL = """
c0                     1  .  .  .  .
c1                     1  1  .  .  .
c2                     1  1  1  .  .
c3                     1  1  1  1  .
c4                     1  1  1  1  1
"""


def parse_mask(text):
    rows = [line.split()[1:] for line in text.strip().splitlines()]
    return torch.tensor([[c == "1" for c in row] for row in rows])


class DreamZeroMask(unittest.TestCase):
    def test_window_of_max_chunk_1(self):
        mask = dz.teacher_forcing_mask(5, 1, 2, 2, 1, max_chunk_size=1)
        self.assertTrue(torch.equal(mask, parse_mask(MASK_WINDOW_3_FRAMES)), f"\n{mask.int()}")

    def test_token_causal_without_window(self):
        mask = dz.teacher_forcing_mask(5, 1, 2, 2, 1, max_chunk_size=-1)
        expected = parse_mask(MASK_WINDOW_3_FRAMES)
        expected[:5, :5] = parse_mask(CLEAN_ROWS_TOKEN_CAUSAL)
        self.assertTrue(torch.equal(mask, expected), f"\n{mask.int()}")

    def test_wide_window_is_block_causal(self):
        mask = dz.teacher_forcing_mask(5, 1, 2, 2, 1, max_chunk_size=4)
        expected = parse_mask(MASK_WINDOW_3_FRAMES)
        expected[3:5, 1] = True  # the 9-frame window reaches back to frame 1
        self.assertTrue(torch.equal(mask, expected))

    def test_tokens_per_frame_expand_frames(self):
        per_frame = dz.teacher_forcing_mask(5, 1, 2, 2, 1, max_chunk_size=1)
        three = dz.teacher_forcing_mask(5, 3, 2, 2, 1, max_chunk_size=1)
        video = per_frame[:10, :10].repeat_interleave(3, 0).repeat_interleave(3, 1)
        self.assertTrue(torch.equal(three[:30, :30], video))


# ---- checkpoints and presets --------------------------------------------------------------------
class TinyCheckpoints(unittest.TestCase):
    def test_write_read_and_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            make_tiny_checkpoint.main([tmp, "--seed", "3"])
            g_dir, z_dir = os.path.join(tmp, "gr00t_n15_tiny"), os.path.join(tmp, "dreamzero_tiny")
            self.assertEqual(sorted(os.listdir(g_dir)), ["config.json", "eagle_config.json", "model.safetensors"])
            self.assertEqual(sorted(os.listdir(z_dir)), ["config.json", "model-00001-of-00002.safetensors",
                                                         "model-00002-of-00002.safetensors",
                                                         "model.safetensors.index.json"])
            header, start = safetensors_io.read_header(os.path.join(g_dir, "model.safetensors"))
            self.assertEqual(start % 8, 0)
            g_state = safetensors_io.read_checkpoint(g_dir)
            for name, t in g_state.items():
                expected = torch.bfloat16 if name.startswith("backbone.") else torch.float32
                self.assertEqual(t.dtype, expected, name)
            self.assertEqual({n for n in g_state if n.startswith("action_head.")},
                             set(gr.param_shapes(presets.TINY_GR00T)))
            self.assertIn("backbone.eagle_model.mlp1.0.weight", g_state)
            self.assertIn("backbone.eagle_model.vision_model.vision_model.head.probe", g_state)
            self.assertFalse(any("lm_head" in n or "layers.2." in n for n in g_state))
            z_state = safetensors_io.read_checkpoint(z_dir)
            self.assertEqual({n for n in z_state if n.startswith(dz.PREFIX)},
                             set(dz.param_shapes(presets.TINY_DREAMZERO)))
            self.assertEqual(tuple(z_state[dz.PREFIX + "img_emb.proj.1.weight"].shape), (1280, 1280))

            g_cfg = presets.TINY_GR00T
            g_dims = gr.dims_from_config(g_cfg)
            loss, grads = gr.gr00t_loss_and_grads(g_state, g_cfg, gr00t_samples(g_dims, seed=21))
            self.assertTrue(math.isfinite(loss))
            self.assertEqual(set(grads), set(gr.param_shapes(g_cfg)))
            z_cfg = presets.TINY_DREAMZERO
            z_samples = dreamzero_samples(dz.dims_from_config(z_cfg), seed=22, count=1, clip_dim=1280)
            loss, grads = dz.dreamzero_loss_and_grads(z_state, z_cfg, z_samples)
            self.assertTrue(math.isfinite(loss))
            self.assertEqual(set(grads), set(dz.param_shapes(z_cfg)))


class ReleasedPresets(unittest.TestCase):
    def test_gr00t_n15_3b_matches_upstream_md(self):
        shapes = gr.param_shapes(presets.GR00T_N15_3B)
        self.assertEqual(len(shapes), 314)
        self.assertEqual(sum(math.prod(s) for s in shapes.values()), 1_068_806_144)
        dims = gr.dims_from_config(presets.GR00T_N15_3B)
        self.assertEqual((dims.d, dims.heads, dims.layers, dims.d_vl, dims.vl_layers, dims.max_seq_len),
                         (1536, 32, 16, 2048, 4, 1024))
        self.assertEqual(shapes["action_head.model.transformer_blocks.0.attn1.to_k.weight"], (1536, 2048))
        self.assertEqual(shapes["action_head.model.transformer_blocks.1.attn1.to_k.weight"], (1536, 1536))

    def test_dreamzero_presets(self):
        big = dz.dims_from_config(presets.DREAMZERO_14B_DROID)
        self.assertEqual((big.dim, big.heads, big.layers, big.in_dim, big.out_dim, big.frame_seqlen, big.fpb,
                          big.actions_per_block, big.max_chunk_size, big.hidden),
                         (5120, 40, 40, 36, 16, 880, 2, 24, 4, 1024))
        small = dz.dims_from_config(presets.DREAMZERO_5B_DROID)
        self.assertEqual((small.dim, small.heads, small.layers, small.in_dim, small.out_dim, small.concat_y,
                          small.frame_seqlen), (3072, 24, 30, 48, 48, False, 50))
        shapes = dz.param_shapes(presets.DREAMZERO_14B_DROID)
        self.assertEqual(shapes[dz.PREFIX + "patch_embedding.weight"], (5120, 36, 1, 2, 2))
        self.assertEqual(shapes[dz.PREFIX + "head.head.weight"], (64, 5120))
        self.assertEqual(shapes[dz.PREFIX + "action_encoder.W2.W"], (1, 10240, 5120))


if __name__ == "__main__":
    unittest.main(verbosity=1)
