"""The discrete-event process of one training campaign.

Model (every choice here is mirrored by montecarlo.py):

* Fail-stop interruptions arrive as a Poisson process with total rate L = sum over fail-stop
  categories of rate x GPUs (or x nodes), while an attempt is *at risk*: from its start through
  startup, iterations and periodic saves, until training reaches the target. Hang, the repair gap
  and the final tail (final save + shutdown) are not at risk. The category of an interruption is
  drawn in proportion to the rates.
* Iteration k takes t* * exp(sigma * Z) (zero-median jitter: the median step is t*), divided by
  rho when it starts inside a fail-slow episode. Fail-slow episodes arrive in wall time at rate
  mu = sum of fail-slow rates x scale and last S (their slow_duration).
* A periodic checkpoint is saved after every ``save_interval = max(1, round(tau / t*))``
  iterations (Megatron's --save-interval); the save blocks for delta. A fault during a save loses
  that save. The next attempt loads the latest completed checkpoint.
* After the last iteration the final attempt saves once more and exits: that is the tail.
* A fault at time F ends the attempt at F + hang (detection, watchdog, teardown); the next
  attempt starts a repair gap later and needs its startup (init + load) before iterating.
"""

from __future__ import annotations

import numpy as np

from pipeline.model.rates import Category, Rates, default_startup, default_tail, save_interval
from pipeline.simulate import presentation
from pipeline.simulate.params import Settings, draw, streams
from pipeline.simulate.records import Attempt, Fault, NullSink, Sink, SlowEpisode, Totals

MAX_ATTEMPTS = 1_000_000


class _Episodes:
    """Fail-slow episodes, generated lazily along wall time."""

    def __init__(self, cats: tuple[Category, ...], rates: Rates,
                 rng: np.random.Generator) -> None:
        self.cats = cats
        self.rng = rng
        lam = np.array([c.rate_per_second(rates.scale.gpus, rates.scale.nodes) for c in cats])
        self.total = float(lam.sum())
        self.p = lam / self.total if self.total > 0 else lam
        self.next_t = 0.0
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.rhos: list[float] = []
        self.list: list[SlowEpisode] = []
        self._arr: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        if self.total > 0:
            self.next_t = float(rng.exponential(1.0 / self.total))
        else:
            self.next_t = float("inf")

    def cover(self, until: float) -> None:
        while self.next_t <= until:
            k = int(self.rng.choice(len(self.cats), p=self.p))
            c = self.cats[k]
            assert c.slow_duration is not None and c.rho is not None
            s = max(draw(c.slow_duration, self.rng), 1e-3)
            ep = SlowEpisode(self.next_t, self.next_t + s, float(c.rho), c.category, None)
            self.list.append(ep)
            self.starts.append(ep.start)
            self.ends.append(ep.end)
            self.rhos.append(ep.rho)
            self._arr = None
            self.next_t += float(self.rng.exponential(1.0 / self.total))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._arr is None:
            self._arr = (np.array(self.starts), np.array(self.ends), np.array(self.rhos))
        return self._arr


class Campaign:
    """Run with ``run()``; afterwards ``attempts``, ``totals`` and ``episodes`` hold the truth."""

    def __init__(self, rates: Rates, seed: int, settings: Settings | None = None,
                 sink: Sink | None = None, target_iterations: int | None = None) -> None:
        self.rates = rates
        self.seed = seed
        self.s = settings or Settings()
        self.sink: Sink = sink or NullSink()
        n = target_iterations or rates.target_iterations
        if not n:
            raise ValueError("no target iteration count: set target_iterations in the rates "
                             "file or pass --iterations")
        self.target = int(n)
        self.rng = streams(seed)
        self.stop = rates.fail_stop()
        lam = np.array([c.rate_per_second(rates.scale.gpus, rates.scale.nodes)
                        for c in self.stop])
        self.L = float(lam.sum())
        self.p_stop = lam / self.L if self.L > 0 else lam
        self.episodes = _Episodes(rates.fail_slow(), rates, self.rng["slow"])
        self.save_every = save_interval(rates)
        self.totals = Totals()
        self.attempts: list[Attempt] = []
        nodes = rates.scale.nodes
        spare = self.s.spare_nodes if self.s.spare_nodes is not None else max(4, nodes // 8)
        width = max(3, len(str(nodes + spare)))
        self.all_nodes = [f"node{i:0{width}d}" for i in range(1, nodes + spare + 1)]
        self.out_until: dict[str, float] = {}  #: faulty node -> back in the pool at
        self.next_job_id = self.s.first_job_id
        self.checkpoint = 0  #: iteration of the latest completed checkpoint

    # -- nodes ------------------------------------------------------------------------------
    def _allocate(self, t: float) -> list[str]:
        need = self.rates.scale.nodes
        ok = [n for n in self.all_nodes if self.out_until.get(n, -1.0) <= t]
        if len(ok) < need:  # not enough healthy nodes: take back the longest-out ones
            back = sorted((u, n) for n, u in self.out_until.items() if u > t)
            ok += [n for _, n in back[: need - len(ok)]]
            ok.sort(key=self.all_nodes.index)
        return ok[:need]

    # -- one attempt ------------------------------------------------------------------------
    def _steps(self, n: int, t0: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Durations of ``n`` iterations starting at ``t0``: (durations, fail-slow excess,
        jitter excess)."""
        tstar = self.rates.ideal_step_s
        sig = self.rates.step_jitter_sigma
        rng = self.rng["steps"]
        base = tstar * np.exp(sig * rng.standard_normal(n)) if sig > 0 else np.full(n, tstar)
        starts = t0 + np.concatenate(([0.0], np.cumsum(base)[:-1]))
        ep = self.episodes
        ep.cover(float(starts[-1]))
        durs = base
        if ep.list:
            es, ee, rho = ep.arrays()
            idx = np.searchsorted(es, starts, side="right") - 1
            inside = (idx >= 0) & (starts < ee[np.maximum(idx, 0)])
            if inside.any():
                durs = np.where(inside, base / rho[np.maximum(idx, 0)], base)
                extra = durs - base
                for j, x in zip(idx[inside], extra[inside], strict=True):
                    ep.list[int(j)].extra_s += float(x)
        return durs, durs - base, base - tstar

    def _attempt(self, a: Attempt, fault_at: float) -> Fault | None:
        """Run attempt ``a`` until it completes or the fault at ``fault_at`` hits; returns the
        fault that ended it (None: the run completed)."""
        sink = self.sink
        r = self.rates
        if fault_at < a.start + a.planned_startup_s:
            a.startup_s = fault_at - a.start
            return self._fault(a, fault_at, in_startup=True)
        a.startup_s = a.planned_startup_s
        t = a.start + a.startup_s
        a.train_begin = t
        sink.training_begin(a, t)
        i = a.start_iteration
        since = 0.0
        since_fs = 0.0
        since_jit = 0.0
        since_n = 0
        tot = self.totals
        while i < self.target:
            n = min(self.save_every - i % self.save_every, self.target - i)
            durs, fs, jit = self._steps(n, t)
            ends = t + np.cumsum(durs)
            done = n if fault_at >= ends[-1] else int(np.searchsorted(ends, fault_at, "right"))
            if done:
                iters = np.arange(i + 1, i + done + 1)
                sink.iterations(a, iters, ends[:done], durs[:done])
                s = float(durs[:done].sum())
                a.iter_s += s
                since += s
                since_fs += float(fs[:done].sum())
                since_jit += float(jit[:done].sum())
                since_n += done
                a.last_iteration = i + done
                a.last_iteration_end = a.last_progress = float(ends[done - 1])
            if done < n:  # fault inside this run of iterations
                a.lost_s, a.lost_iterations = since, since_n
                return self._fault(a, fault_at)
            t = float(ends[-1])
            i += n
            if i >= self.target:
                break
            delta = draw(r.checkpoint.delta, self.rng["steps"])
            if fault_at < t + delta:  # fault during the save: it never completes
                sink.save(a, i, t, None, False)
                a.lost_s, a.lost_iterations = since, since_n
                return self._fault(a, fault_at)
            sink.save(a, i, t, t + delta, False)
            a.ckpt_save_s += delta
            a.saves += 1
            a.last_progress = t + delta
            t += delta
            self.checkpoint = i
            tot.survived_s += since
            tot.survived_slow_fs += since_fs
            tot.survived_jitter += since_jit
            since = since_fs = since_jit = 0.0
            since_n = 0
        # completed: everything since the last checkpoint survives
        tot.survived_s += since
        tot.survived_slow_fs += since_fs
        tot.survived_jitter += since_jit
        tail = draw(default_tail(r), self.rng["steps"])
        sink.save(a, self.target, t, t + min(r.checkpoint.delta.mean_s, 0.8 * tail), True)
        a.end = t + tail
        a.tail_s = a.end - a.start - a.startup_s - a.iter_s - a.ckpt_save_s
        a.state, a.exit_code, a.final = "COMPLETED", "0:0", True
        self._exposure(a, t)
        return None

    def _fault(self, a: Attempt, when: float, in_startup: bool = False) -> Fault:
        k = int(self.rng["failures"].choice(len(self.stop), p=self.p_stop))
        c = self.stop[k]
        assert c.hang is not None
        detect = draw(c.hang, self.rng["failures"])
        pr = presentation.PRESENTATION[c.category]
        state, exit_code, requeue = presentation.choose(c.category, self.rng["present"])
        node = gpu = rank = None
        if pr.faulty_node:
            ni = int(self.rng["present"].integers(len(a.nodes)))
            node = a.nodes[ni]
            gpn = self.rates.scale.gpus_per_node
            gpu = int(self.rng["present"].integers(gpn)) if pr.faulty_gpu else None
            rank = ni * gpn + (gpu or 0)
        f = Fault(when, c.category, node, gpu, rank, state, exit_code, requeue, detect,
                  in_startup)
        a.fault = f
        a.end = when + detect
        a.state, a.exit_code = state, exit_code
        a.hang_s = a.end - a.start - a.startup_s - a.iter_s - a.ckpt_save_s
        self.totals.lost_s += a.lost_s
        self._exposure(a, when)
        if node is not None:
            self.out_until[node] = a.end + self.s.node_return_s
        return f

    def _exposure(self, a: Attempt, until: float) -> None:
        dt = until - a.start
        self.totals.exposure_gpu_s += dt * self.rates.scale.gpus
        self.totals.exposure_node_s += dt * self.rates.scale.nodes

    # -- the campaign -----------------------------------------------------------------------
    def run(self) -> Campaign:
        r = self.rates
        fr = self.rng["failures"]
        t = self.s.first_queue_wait_s
        submit = 0.0
        job_id = self.next_job_id
        restart = 0
        startup_dist = r.first_startup or default_startup(r)
        self.checkpoint = 0
        for idx in range(MAX_ATTEMPTS):
            start_it = self.checkpoint
            a = Attempt(idx, str(job_id), restart, submit, t, self._allocate(t), start_it,
                        start_it > 0, draw(startup_dist, fr))
            self.attempts.append(a)
            self.sink.attempt_start(a)
            x = float(fr.exponential(1.0 / self.L)) if self.L > 0 else float("inf")
            f = self._attempt(a, a.start + x)
            self.totals.ckpt_save_s += a.ckpt_save_s
            self.sink.attempt_end(a)
            if f is None:
                break
            c = next(c for c in self.stop if c.category == f.category)
            assert c.repair is not None
            gap = draw(c.repair, fr)
            startup_dist = c.startup or default_startup(r)
            if f.requeue:
                restart += 1
                submit = a.end
            else:
                job_id = max(job_id, self.next_job_id) + 1 + int(self.rng["present"].integers(4))
                self.next_job_id = job_id
                restart = 0
                submit = a.end + min(30.0, gap / 2)
            t = a.end + gap
        else:  # pragma: no cover - only with absurd rates
            raise RuntimeError("campaign did not finish within the attempt limit; the failure "
                               "rate is too high for the checkpoint interval")
        self.totals.episodes = [e for e in self.episodes.list if e.start < self.attempts[-1].end]
        return self
