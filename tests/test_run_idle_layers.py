"""Layers the backward does not reach at every step (a GAN's generator during the critic's
steps, an MoE expert no token went to) keep the zeros clear_grad() left: no false spike when
they come back, no false vanishing layer while they rest; a real spike in such a layer is
still found at its step. Real Paddle training loops under trace(every=N, run_dir=...);
oracles: the loops' own reading of p.grad (which layers had an all-zero gradient)."""

from __future__ import annotations

import paddle

from paddleviz_widget import open_run, trace


class _GAN(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.G = paddle.nn.Sequential(
            paddle.nn.Linear(8, 32), paddle.nn.ReLU(), paddle.nn.Linear(32, 4)
        )
        self.D = paddle.nn.Sequential(
            paddle.nn.Linear(4, 32), paddle.nn.ReLU(), paddle.nn.Linear(32, 1)
        )


def _wgan(run_dir, rounds: int, boost_at: int | None = None) -> tuple[list[int], list[int]]:
    """n_critic = 5: five critic steps (the generator's gradients stay the zeros clear_grad
    left), then one generator step. Returns the generator's steps and the steps where the
    loop saw the generator's gradient all zero."""
    paddle.seed(0)
    gan = _GAN()
    opt_g = paddle.optimizer.Adam(1e-4, parameters=gan.G.parameters())
    opt_d = paddle.optimizer.Adam(1e-4, parameters=gan.D.parameters())
    g_steps, g_idle, step = [], [], 0

    def g_zero() -> bool:
        return all(p.grad is None or not p.grad.numpy().any() for p in gan.G.parameters())

    with trace(gan, every=1000, run_dir=run_dir):
        for _ in range(rounds):
            for _ in range(5):
                fake = gan.G(paddle.randn([16, 8])).detach()
                loss_d = gan.D(fake).mean() - gan.D(paddle.randn([16, 4])).mean()
                loss_d.backward()
                if g_zero():
                    g_idle.append(step)
                opt_d.step()
                opt_d.clear_grad()
                step += 1
            loss_g = -gan.D(gan.G(paddle.randn([16, 8]))).mean()
            if step == boost_at:
                loss_g = loss_g * 1e4  # the generator's gradients explode at this step only
            loss_g.backward()
            g_steps.append(step)
            opt_g.step()
            opt_g.clear_grad()
            opt_d.clear_grad()
            step += 1
    return g_steps, g_idle


def test_a_gan_with_five_critic_steps_reports_nothing(tmp_path):
    g_steps, g_idle = _wgan(tmp_path / "run", rounds=40)
    assert len(g_idle) == 200  # the oracle: every critic step left the generator at zero
    run = open_run(tmp_path / "run")
    assert run.problems() == []
    names = run.layers
    norms = run.layer_norm()
    generator = [names.index("G.0"), names.index("G.2")]
    assert (norms[g_idle[5:]][:, generator] == 0).all()  # idle (no gradient yet before step 5)
    assert (norms[g_steps][:, generator] > 0).all()


def test_a_real_spike_in_a_layer_idle_most_steps_is_found_at_its_step(tmp_path):
    g_steps, _ = _wgan(tmp_path / "run", rounds=40, boost_at=185)
    assert 185 in g_steps
    run = open_run(tmp_path / "run")
    spikes = [a for a in run.problems() if a.kind == "spike"]
    assert {a.step for a in spikes} == {185}, [str(a) for a in spikes]
    assert {a.layer for a in spikes} >= {"G.0", "G.2"}
    for a in spikes:
        if a.layer.startswith("G."):
            assert "x its median" in a.message and "its median 0 over" not in a.message


class _Experts(paddle.nn.Layer):
    """Three experts in a row; step k routes every token to expert k % 3 (the others idle)."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = paddle.nn.Linear(6, 6)
        self.experts = paddle.nn.LayerList([paddle.nn.Linear(6, 6) for _ in range(3)])
        self.out = paddle.nn.Linear(6, 1)

    def forward(self, x, k):
        return self.out(self.experts[k % 3](self.inp(x)))


def test_experts_resting_by_turns_are_not_vanishing_nor_spiking(tmp_path):
    paddle.seed(1)
    model = _Experts()
    opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
    with trace(model, every=1000, run_dir=tmp_path / "run"):
        for step in range(150):
            model(paddle.randn([8, 6]), step).square().mean().backward()
            opt.step()
            opt.clear_grad()
    run = open_run(tmp_path / "run")
    assert run.problems() == []
    norms = run.layer_norm()
    expert = [run.layers.index(f"experts.{k}") for k in range(3)]
    resting = norms[:, expert] == 0
    assert (resting.sum(axis=1)[3:] == 2).all()  # two of three idle at every later step
