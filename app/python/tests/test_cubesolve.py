"""cubesolve against numpy.linalg.lstsq pixel by pixel, against the CLI, and
on bad input, cancelling and memory."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import cubesolve

CLI = os.environ.get("CUBESOLVE_CLI")


def lstsq_reference(A, Y, W=None, ridge=0.0, rcond=None):
    """Per pixel: numpy.linalg.lstsq on the (weighted) valid rows, or the ridge
    normal equations; NaN where a pixel has no valid row."""
    N, M = A.shape
    P = Y.shape[1]
    X = np.full((M, P), np.nan)
    for p in range(P):
        y = Y[:, p].astype(np.float64)
        ok = np.isfinite(y)
        if W is not None:
            ok &= np.isfinite(W[:, p]) & (W[:, p] > 0)
        if not ok.any():
            continue
        sw = np.sqrt(W[ok, p]) if W is not None else np.ones(ok.sum())
        Av, yv = A[ok] * sw[:, None], y[ok] * sw
        if ridge > 0:
            X[:, p] = np.linalg.solve(Av.T @ Av + ridge * np.eye(M), Av.T @ yv)
        else:
            X[:, p] = np.linalg.lstsq(Av, yv, rcond=rcond)[0]
    return X


def rel_errors(X, R):
    both = np.isfinite(R).all(axis=0)
    assert (np.isnan(X[:, ~both])).all(), "pixels without a solution must be NaN"
    d = np.linalg.norm(X[:, both] - R[:, both], axis=0)
    return d / np.maximum(np.linalg.norm(R[:, both], axis=0), 1e-300)


def case(n, m, p, missing, seed, inf=0.0, rank_deficient=False, weights=False):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, m))
    if rank_deficient:
        A[:, -1] = A[:, -2]
    Y = rng.normal(size=(n, p))
    u = rng.random(Y.shape)
    Y[u < missing] = np.nan
    Y[(u >= missing) & (u < missing + inf)] = np.inf
    Y[:, 3] = np.nan  # a pixel without data
    W = None
    if weights:
        W = 0.2 + rng.random(Y.shape)
        W[rng.random(Y.shape) < 0.05] = 0
    return A, Y, W


@pytest.mark.parametrize(
    "name,n,m,missing,kw",
    [
        ("overdetermined, deletion", 40, 10, 0.15, {}),
        ("underdetermined, minimum norm", 20, 40, 0.1, {}),
        ("mostly missing, gathered", 20, 40, 0.6, {}),
        ("rank-deficient design", 20, 6, 0.2, {"rank_deficient": True}),
        ("infinite values are missing", 30, 8, 0.1, {"inf": 0.05}),
        ("weights", 30, 6, 0.1, {"weights": True}),
        ("ridge", 12, 8, 0.3, {"ridge": 0.25}),
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_lstsq(name, n, m, missing, kw, dtype):
    ridge = kw.pop("ridge", 0.0)
    A, Y, W = case(n, m, 300, missing, 7, **kw)
    Y = Y.astype(dtype)
    r = cubesolve.solve(Y, A, W, ridge=ridge, dtype=np.float64)
    R = lstsq_reference(A, Y, W, ridge=ridge)
    assert rel_errors(r.x, R).max() <= 1e-9
    valid = np.isfinite(Y) if W is None else np.isfinite(Y) & (W > 0)
    assert (r.n_valid == valid.sum(axis=0)).all()
    assert r.status[3] == 2 and np.isnan(r.x[:, 3]).all()
    if ridge == 0:
        solved = r.n_valid > 0
        full_rank = r.rank == m
        assert (r.status[solved & full_rank] == 0).all() and (r.status[solved & ~full_rank] == 1).all()


def test_shapes_and_design_reuse():
    A, Y, _ = case(30, 5, 48, 0.2, 3)
    cube = Y.reshape(30, 6, 8)
    d = cubesolve.Design(A)
    assert d.shape == (30, 5) and d.rank == 5
    r3 = cubesolve.solve(cube, d, dtype="float64")
    r2 = cubesolve.solve(Y, d, dtype="float64")
    r1 = cubesolve.solve(Y[:, 10], d, dtype="float64")
    assert r3.x.shape == (5, 6, 8) and r3.status.shape == (6, 8)
    assert r2.x.shape == (5, 48) and r2.rss.shape == (48,)
    assert r1.x.shape == (5,) and r1.status.shape == ()
    assert np.array_equal(r3.x.reshape(5, 48), r2.x, equal_nan=True)
    # One pixel alone goes through BLAS's one-column kernels, whose sums run
    # in another order: the same solution to rounding.
    assert np.abs(r2.x[:, 10] - r1.x).max() <= 1e-14 * np.abs(r1.x).max()
    assert sum(r3.paths.values()) == 48 and r3.engine_seconds > 0


def test_layouts_give_the_same_answers():
    A, Y, _ = case(20, 4, 60, 0.2, 5)
    cube = Y.reshape(20, 6, 10)
    ref = cubesolve.solve(cube, A).x
    fortran = np.asfortranarray(cube)
    strided = np.zeros((20, 6, 20))
    strided[:, :, ::2] = cube
    for other in (fortran, strided[:, :, ::2], list(cube)):  # and a list of planes (array-like)
        assert np.array_equal(cubesolve.solve(other, A).x, ref, equal_nan=True)


@pytest.mark.skipif(not CLI, reason="CUBESOLVE_CLI names the command-line tool")
def test_matches_the_cli(tmp_path):
    A, Y, W = case(25, 6, 120, 0.2, 11, weights=True)
    cube = Y.reshape(25, 10, 12).astype(np.float32)
    np.save(tmp_path / "Y.npy", cube)
    np.save(tmp_path / "A.npy", A)
    np.save(tmp_path / "W.npy", W.reshape(25, 10, 12))
    subprocess.run([CLI, "solve", str(tmp_path / "Y.npy"), str(tmp_path / "A.npy"), "-o", str(tmp_path / "X.npy"),
                    "--weights", str(tmp_path / "W.npy"), "--diag", str(tmp_path / "d")], check=True,
                   capture_output=True)
    r = cubesolve.solve(cube, A, W.reshape(25, 10, 12))
    assert np.array_equal(np.load(tmp_path / "X.npy"), r.x, equal_nan=True)
    for part in ("status", "rank", "nvalid"):
        assert np.array_equal(np.load(tmp_path / f"d_{part}.npy"), getattr(r, "n_valid" if part == "nvalid" else part))


class OnGpu:
    """Stands in for a CUDA tensor: DLPack says it lives on device type 2."""

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        raise AssertionError("must not be read")


def test_bad_input_raises_clear_errors():
    A, Y, _ = case(10, 3, 12, 0.1, 1)
    with pytest.raises(ValueError, match=r"expected 3 dimensions \(N, H, W\), 2 \(N, P\) or 1"):
        cubesolve.solve(Y.reshape(10, 2, 2, 3), A)
    with pytest.raises(ValueError, match="expected 9 rows"):
        cubesolve.solve(Y[:9], A)
    bad = A.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="expected finite values in the design matrix"):
        cubesolve.solve(Y, bad)
    with pytest.raises(ValueError, match="expected float32 or float64 values, found int8"):
        cubesolve.solve(np.nan_to_num(Y).astype(np.int8), A)
    with pytest.raises(ValueError, match="on a GPU device"):
        cubesolve.solve(OnGpu(), A)
    with pytest.raises(ValueError, match="expected finite weights >= 0"):
        cubesolve.solve(Y, A, -np.ones_like(Y))
    with pytest.raises(ValueError, match="min_valid"):
        cubesolve.solve(Y, A, min_valid=0)
    with pytest.raises(OSError, match="cannot open"):
        cubesolve.read("/nonexistent/cube.npy")


def slow_case():
    """The exact path on 40,000 underdetermined pixels (an rcond that cuts singular values, 2·rcond·cond(A) > 1): seconds."""
    rng = np.random.default_rng(2)
    Y = rng.normal(size=(50, 200, 200)).astype(np.float32)
    Y[rng.random(Y.shape) < 0.2] = np.nan
    return Y, rng.normal(size=(50, 100))


def test_progress_and_cancel_from_another_thread():
    A, Y, _ = case(20, 4, 500, 0.2, 9)
    seen = []
    cubesolve.solve(Y, A, progress=lambda f: seen.append(f))
    assert seen and seen[-1] == 1.0 and all(0 <= f <= 1 for f in seen)
    Y, A = slow_case()
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    t0 = time.monotonic()
    with pytest.raises(cubesolve.Cancelled):
        cubesolve.solve(Y, A, rcond=0.5, progress=lambda f: not stop.is_set())
    print(f"cancelled {time.monotonic() - t0 - 0.3:.3f} s after the request")


def test_keyboard_interrupt_cancels():
    script = textwrap.dedent(f"""
        import os, signal, sys, threading, time
        sys.path[:0] = {sys.path!r}
        import numpy as np, cubesolve
        rng = np.random.default_rng(2)
        Y = rng.normal(size=(50, 200, 200)).astype(np.float32)
        Y[rng.random(Y.shape) < 0.2] = np.nan
        A = rng.normal(size=(50, 100))
        sent = []
        def interrupt():
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)
        threading.Timer(0.5, interrupt).start()
        try:
            cubesolve.solve(Y, A, rcond=0.5)  # cuts singular values: every pixel exact, seconds
            print("finished")
        except KeyboardInterrupt:
            print("interrupted after", round(time.monotonic() - sent[0], 3), "s")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert "interrupted after" in out.stdout, out.stdout + out.stderr
    print(out.stdout.strip())


def test_no_copy_of_c_ordered_input():
    # The process's peak memory: solving a C-ordered cube must not add a copy
    # of it (a Fortran-ordered one is copied once, which the same measure sees).
    script = textwrap.dedent(f"""
        import resource, sys
        sys.path[:0] = {sys.path!r}
        import numpy as np, cubesolve
        order = sys.argv[1]
        Y = np.ones((100, 600, 600), dtype=np.float32, order=order)
        Y[::3, ::2, ::5] = np.nan
        A = np.random.default_rng(0).normal(size=(100, 2))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        cubesolve.solve(Y, A)
        grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(grew * 1024 / Y.nbytes)
    """)
    share = {}
    for order in ("C", "F"):
        out = subprocess.run([sys.executable, "-c", script, order], capture_output=True, text=True, timeout=300, check=True)
        share[order] = float(out.stdout)
    print("peak memory added, as a share of Y:", share)
    assert share["C"] < 0.5
    assert share["F"] > 0.9


def test_plan_and_read(tmp_path):
    A, Y, _ = case(30, 6, 64, 0.2, 4)
    cube = Y.reshape(30, 8, 8)
    p = cubesolve.plan(cube, A)
    assert sum(p["paths"].values()) == 64 and p["no_data_pixels"] == 1
    assert p["valid_count_histogram"][30] == (np.isfinite(cube).sum(axis=0) == 30).sum()
    np.save(tmp_path / "c.npy", np.asfortranarray(cube.astype(">f8")))
    back = cubesolve.read(tmp_path / "c.npy")["cube"]
    assert back.shape == (30, 8, 8) and np.array_equal(back, cube, equal_nan=True)
    (tmp_path / "t.txt").write_text("\n".join(str(2020 + k / 10) for k in range(30)))
    assert cubesolve.design("poly:2", 30, times=str(tmp_path / "t.txt")).shape == (30, 3)


def test_mintpy_stack(tmp_path):
    h5py = pytest.importorskip("h5py")
    dates = ["20200101", "20200113", "20200125", "20200206"]
    pairs = [(dates[i], dates[j]) for i in range(4) for j in range(i + 1, 4)]
    rng = np.random.default_rng(8)
    with h5py.File(tmp_path / "ifgramStack.h5", "w") as f:
        f["unwrapPhase"] = rng.normal(size=(len(pairs), 5, 6)).astype(np.float32)
        f["date"] = np.array([[a.encode(), b.encode()] for a, b in pairs])
        f["dropIfgram"] = np.array([True] * (len(pairs) - 1) + [False])
        f.attrs["REF_Y"], f.attrs["REF_X"] = "1", "2"  # MintPy's reference pixel: each interferogram referenced there
    s = cubesolve.read(tmp_path / "ifgramStack.h5")
    assert s["cube"].shape == (len(pairs) - 1, 5, 6) and s["design"].shape == (len(pairs) - 1, 3)
    assert s["dates"] == dates and s["pairs"][0] == (dates[0], dates[1])
    assert (s["cube"][:, 1, 2] == 0).all() or np.isnan(s["cube"][:, 1, 2]).all()
    r = cubesolve.solve(s["cube"], s["design"])
    assert r.x.shape == (3, 5, 6) and (r.status[np.arange(5) != 1] == 0).all()


def test_mintpy_stack_options(tmp_path):
    """The stack options of the CLI, on read: reference, zeros, masks, weights."""
    h5py = pytest.importorskip("h5py")
    dates = ["20200101", "20200113", "20200125"]
    pairs = [(dates[0], dates[1]), (dates[0], dates[2]), (dates[1], dates[2])]
    rng = np.random.default_rng(9)
    phase = rng.normal(size=(3, 4, 5)).astype(np.float32)
    phase[1, 3, 4] = 0  # not unwrapped there
    coherence = rng.uniform(0.1, 1.0, size=(3, 4, 5)).astype(np.float32)
    component = np.ones((3, 4, 5), dtype=np.int16)
    component[2, 0, 1] = 0
    path = tmp_path / "ifgramStack.h5"
    with h5py.File(path, "w") as f:
        f["unwrapPhase"], f["coherence"], f["connectComponent"] = phase, coherence, component
        f["date"] = np.array([[a.encode(), b.encode()] for a, b in pairs])
        f.attrs["REF_Y"], f.attrs["REF_X"], f.attrs["NCORRLOOKS"] = "1", "2", "4"
    plain = cubesolve.read(path, reference=False, keep_zero=True)["cube"]
    assert np.array_equal(plain, phase)
    moved = cubesolve.read(path, ref_yx=(2, 3), keep_zero=True)["cube"]
    assert np.allclose(moved, np.where(phase != 0, phase - phase[:, 2:3, 3:4], 0), atol=1e-6)
    assert np.isnan(cubesolve.read(path, reference=False)["cube"][1, 3, 4])  # zero is missing by default
    masked = cubesolve.read(path, reference=False, mask_dataset="connectComponent")["cube"]
    assert np.isnan(masked[2, 0, 1]) and np.isfinite(masked[2, 0, 2])
    low = cubesolve.read(path, reference=False, keep_zero=True, mask_dataset="coherence", mask_threshold=0.5)["cube"]
    assert np.array_equal(np.isnan(low), coherence < 0.5)
    s = cubesolve.read(path, weight_func="coh")
    assert "weights" not in cubesolve.read(path) and np.allclose(s["weights"], coherence)
    with pytest.raises(ValueError, match="weight_func"):
        cubesolve.read(path, weight_func="inverse")
    with pytest.raises(ValueError, match="reference=False"):
        cubesolve.read(path, ref_yx=(0, 0), reference=False)
    with pytest.raises(ValueError, match="mask dataset"):
        cubesolve.read(path, mask_dataset="water")
    np.save(tmp_path / "c.npy", phase)
    for option in ({"keep_zero": True}, {"mask_threshold": 0.4}, {"looks": 9}):
        with pytest.raises(ValueError, match="expected a MintPy stack"):
            cubesolve.read(tmp_path / "c.npy", **option)
    assert cubesolve.read(tmp_path / "c.npy")["cube"].shape == phase.shape


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    A, Y, _ = case(30, 5, 40, 0.2, 6)
    t = torch.from_numpy(Y.reshape(30, 5, 8).astype(np.float32))
    r = cubesolve.solve(t, torch.from_numpy(A))
    assert np.array_equal(r.x, cubesolve.solve(t.numpy(), A).x, equal_nan=True)
    strided = t.transpose(1, 2).contiguous().transpose(1, 2)  # the same values, not C-ordered
    assert not strided.is_contiguous()
    assert np.array_equal(cubesolve.solve(strided, A).x, r.x, equal_nan=True)


@pytest.mark.parametrize("nan", [True, False])
def test_progress_answers_are_taken_as_python_takes_truth(nan):
    A, Y, _ = case(20, 4, 500, 0.2 if nan else 0.0, 10)
    if not nan:
        Y[:, 3] = 1.0
    for answer in (1, 0.5, np.bool_(True), "yes", [1]):
        r = cubesolve.solve(Y, A, progress=lambda f, a=answer: a)
        assert r.x.shape == (4, 500)
    for answer in (0, 0.0, np.bool_(False), "", []):
        with pytest.raises(cubesolve.Cancelled):
            cubesolve.solve(Y, A, progress=lambda f, a=answer: a)

    class Undecided:
        def __bool__(self):
            raise ZeroDivisionError("no answer")

    with pytest.raises(ZeroDivisionError):
        cubesolve.solve(Y, A, progress=lambda f: Undecided())


def test_complex_values_are_refused():
    A, Y, _ = case(20, 4, 50, 0.2, 11)
    with pytest.raises(ValueError, match="A: expected real values, found complex ones"):
        cubesolve.solve(Y, A + 1j)
    with pytest.raises(ValueError, match="expected float32 or float64 values, found complex128"):
        cubesolve.solve(Y + 1j, A)


@pytest.mark.parametrize("memory", [0, 15, 10**15, -1, 2.5, True, "256"])
def test_memory_out_of_range_is_a_value_error(memory):
    A, Y, _ = case(20, 4, 50, 0.2, 12)
    with pytest.raises(ValueError, match=r"memory \(MB\): expected an integer from 16 to 1048576"):
        cubesolve.solve(Y, A, memory=memory)
    assert cubesolve.solve(Y, A, memory=16).x.shape == (4, 50)


def test_read_names_what_it_found(tmp_path):
    with pytest.raises(ValueError, match="expected a file, found a folder"):
        cubesolve.read(str(tmp_path))
    with pytest.raises(ValueError, match="found a NUL character"):
        cubesolve.read(str(tmp_path / "x\0y.npy"))


@pytest.mark.parametrize("looks", [0, -2, float("nan")])
def test_looks_below_one_are_refused(looks):
    with pytest.raises(ValueError, match="looks: expected the number of independent looks"):
        cubesolve.read("ifgramStack.h5", weight_func="var", looks=looks)


@pytest.mark.parametrize("weighted", [False, True])
def test_standard_errors_equal_statsmodels(weighted):
    """Result.stderr equals statsmodels' WLS(...).fit().bse on each pixel's own
    valid rows (1e-9 relative); NaN where no degree of freedom is left."""
    sm = pytest.importorskip("statsmodels.api", reason="statsmodels is not installed")
    rng = np.random.default_rng(4)
    N, M, P = 50, 4, 120
    t = np.sort(rng.uniform(0, 3, N))
    A = np.column_stack([np.ones(N), t, np.cos(2 * np.pi * t), np.sin(2 * np.pi * t)])
    Y = (A @ rng.standard_normal((M, P)) + 0.3 * rng.standard_normal((N, P)))
    Y[rng.random(Y.shape) < 0.3] = np.nan
    Y[4:, 0] = np.nan                    # 4 rows for 4 unknowns: no degree of freedom
    Y[:, 1] = np.nan                     # no data
    W = rng.uniform(0.2, 2.0, Y.shape) if weighted else None
    r = cubesolve.solve(Y, A, W, stderr=True, dtype="float64")
    assert r.stderr.shape == (M, P)
    for p in range(P):
        ok = np.isfinite(Y[:, p])
        if ok.sum() <= M:
            assert np.isnan(r.stderr[:, p]).all()
            continue
        fit = sm.WLS(Y[ok, p], A[ok], weights=W[ok, p] if weighted else 1.0).fit()
        np.testing.assert_allclose(r.stderr[:, p], fit.bse, rtol=1e-9)
    assert cubesolve.solve(Y, A).stderr is None


def test_temporal_coherence():
    """Result.temporal_coherence is MintPy's |Σ exp(i·e)| / n over each pixel's
    valid residuals, NaN without any."""
    rng = np.random.default_rng(6)
    N, M, P = 30, 3, 50
    A = rng.standard_normal((N, M))
    Y = (A @ rng.standard_normal((M, P)) + 0.4 * rng.standard_normal((N, P))).astype(np.float32)
    Y[rng.random(Y.shape) < 0.2] = np.nan
    Y[:, 7] = np.nan
    r = cubesolve.solve(Y, A, temporal_coherence=True)
    assert r.temporal_coherence.shape == (P,) and r.temporal_coherence.dtype == np.float32
    for p in range(P):
        ok = np.isfinite(Y[:, p])
        if not ok.any():
            assert np.isnan(r.temporal_coherence[p])
            continue
        e = (Y[ok, p] - (A[ok] @ r.x[:, p]).astype(np.float32)).astype(np.float32)
        assert abs(r.temporal_coherence[p] - abs(np.exp(1j * e.astype(np.float64)).mean())) < 1e-6
    assert cubesolve.solve(Y, A).temporal_coherence is None


def _robust_case(rng, N=40, P=60):
    t = np.linspace(0, 3, N)
    A = np.column_stack([np.ones(N), t, np.cos(2 * np.pi * t), np.sin(2 * np.pi * t)])
    Y = A @ rng.standard_normal((A.shape[1], P)) + 0.1 * rng.standard_normal((N, P))
    out = rng.random(Y.shape) < 0.1
    Y[out] += rng.choice([-5.0, 5.0], out.sum())
    Y[rng.random(Y.shape) < 0.15] = np.nan
    return A, Y, rng.uniform(0.5, 2.0, Y.shape)


@pytest.mark.parametrize("weighted", [False, True])
def test_l1_objective_is_the_linear_programs_optimum(weighted):
    """loss="l1": each pixel's Σ|W^½(A_V x − y_V)| equals the optimum of the
    linear program on its valid rows (SciPy's HiGHS) to 1e-6 relative."""
    linprog = pytest.importorskip("scipy.optimize", reason="SciPy is not installed").linprog
    rng = np.random.default_rng(11)
    A, Y, W = _robust_case(rng)
    M = A.shape[1]
    r = cubesolve.solve(Y, A, W if weighted else None, loss="l1", dtype="float64")
    assert (r.status == 0).all() and r.iterations.min() >= 1
    for p in range(Y.shape[1]):
        ok = np.isfinite(Y[:, p])
        sw = np.sqrt(W[ok, p]) if weighted else np.ones(ok.sum())
        B, c = A[ok] * sw[:, None], Y[ok, p] * sw
        n = len(c)
        lp = linprog(np.r_[np.zeros(M), np.ones(2 * n)], A_eq=np.c_[B, np.eye(n), -np.eye(n)], b_eq=c,
                     bounds=[(None, None)] * M + [(0, None)] * (2 * n), method="highs")
        assert abs(np.abs(B @ r.x[:, p] - c).sum() - lp.fun) <= 1e-9 * lp.fun
        assert abs(r.objective[p] - lp.fun) <= 1e-9 * lp.fun


def _network(D):
    """An SBAS design: D dates, each linked to its 3 following ones (date 0 the reference)."""
    pairs = [(i, j) for i in range(D) for j in range(i + 1, min(D, i + 4))]
    A = np.zeros((len(pairs), D - 1))
    for k, (i, j) in enumerate(pairs):
        if i > 0:
            A[k, i - 1] = -1
        A[k, j - 1] = 1
    return A


def _network_stack(weighted, velocity):
    """An SBAS network of 30 dates in either formulation, with unwrapping
    jumps and gaps that leave some pixels' networks split (rank-deficient);
    the first 10 pixels lose every link of date 15."""
    rng = np.random.default_rng(15)
    A = _network(30)
    if velocity:  # MintPy's B: each pair spans the intervals between its dates
        A = np.cumsum(A[:, ::-1], axis=1)[:, ::-1] * rng.uniform(0.02, 0.1, A.shape[1])
    P = 120
    Y = A @ np.cumsum(rng.standard_normal((29, P)), axis=0) + 0.05 * rng.standard_normal((A.shape[0], P))
    jump = rng.random(Y.shape) < 0.05
    Y[jump] += 2 * np.pi * rng.choice([-1, 1], jump.sum())
    Y[rng.random(Y.shape) < 0.15] = np.nan
    Y[:, :10][np.isin(np.arange(A.shape[0]), np.flatnonzero(A[:, 14] != 0))] = np.nan  # date 15 cut off
    return A, Y, rng.uniform(0.5, 2.0, Y.shape) if weighted else None


def _pixel_rows(A, Y, W, p):
    ok = np.isfinite(Y[:, p])
    sw = np.sqrt(W[ok, p]) if W is not None else np.ones(ok.sum())
    return A[ok] * sw[:, None], Y[ok, p] * sw


def _in_row_space(B, x):
    """No part of x in the null space of B's rows."""
    null = np.linalg.svd(B)[2][np.linalg.matrix_rank(B):]
    return np.abs(null @ x).max(initial=0) <= 1e-9 * np.abs(x).max()


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("velocity", [False, True])
def test_l1_on_a_network_is_the_linear_programs_optimum(weighted, velocity):
    """The same on an SBAS network in either formulation (its reweighted
    systems in band form, its vertices spanning trees of the pixel's links,
    solved along the tree), split networks included (solved on a forest
    rooted at each component's first date, then taken to minimum norm)."""
    linprog = pytest.importorskip("scipy.optimize", reason="SciPy is not installed").linprog
    A, Y, W = _network_stack(weighted, velocity)
    r = cubesolve.solve(Y, A, W, loss="l1", dtype="float64")
    assert (r.status[:10] == 1).all() and (r.status[10:] <= 1).all()
    for p in range(Y.shape[1]):
        B, c = _pixel_rows(A, Y, W, p)
        n, M = B.shape
        lp = linprog(np.r_[np.zeros(M), np.ones(2 * n)], A_eq=np.c_[B, np.eye(n), -np.eye(n)], b_eq=c,
                     bounds=[(None, None)] * M + [(0, None)] * (2 * n), method="highs")
        assert abs(r.objective[p] - lp.fun) <= 1e-9 * lp.fun, p
        assert r.status[p] == 0 or _in_row_space(B, r.x[:, p]), p


@pytest.mark.parametrize("velocity", [False, True])
def test_huber_on_a_network_equals_scipy_least_squares(velocity):
    """Huber's loss on the same networks (each reweighting in the dates'
    phases; split networks on their forest, then minimum norm): the
    objective equals SciPy's least_squares(loss="huber") to 1e-6. (One
    pixel here takes some 4500 reweightings: max_iter lets it finish.)"""
    least_squares = pytest.importorskip("scipy.optimize", reason="SciPy is not installed").least_squares
    A, Y, W = _network_stack(True, velocity)
    r = cubesolve.solve(Y, A, W, loss="huber:0.5", dtype="float64", max_iter=10000)
    assert (r.status[:10] == 1).all() and (r.status[10:] <= 1).all()
    for p in range(Y.shape[1]):
        B, c = _pixel_rows(A, Y, W, p)
        x0 = np.linalg.lstsq(B, c, rcond=None)[0]
        ls = least_squares(lambda x: B @ x - c, x0, loss="huber", f_scale=0.5, xtol=1e-15, ftol=1e-15, gtol=1e-15)
        assert abs(r.objective[p] - ls.cost) <= 1e-6 * ls.cost, p
        assert r.status[p] == 0 or _in_row_space(B, r.x[:, p]), p


@pytest.mark.parametrize("delta", [0.3, None])
def test_huber_objective_equals_scipy_least_squares(delta):
    """loss="huber[:δ]": the objective equals SciPy's least_squares(loss="huber",
    f_scale=δ) on the pixel's valid rows to 1e-6; by default δ is 1.345 ×
    1.4826 × the MAD of the pixel's least-squares residuals. On this dense
    design Newton's steps from the least-squares solution get there in a
    few (reweighting first took 6 for half the pixels)."""
    least_squares = pytest.importorskip("scipy.optimize", reason="SciPy is not installed").least_squares
    rng = np.random.default_rng(12)
    A, Y, W = _robust_case(rng)
    r = cubesolve.solve(Y, A, W, loss="huber" if delta is None else f"huber:{delta}", dtype="float64")
    assert (r.status == 0).all()
    for p in range(Y.shape[1]):
        ok = np.isfinite(Y[:, p])
        sw = np.sqrt(W[ok, p])
        B, c = A[ok] * sw[:, None], Y[ok, p] * sw
        x0 = np.linalg.lstsq(B, c, rcond=None)[0]
        f0 = B @ x0 - c
        d = delta if delta is not None else 1.345 * 1.4826 * np.median(np.abs(f0 - np.median(f0)))
        ls = least_squares(lambda x: B @ x - c, x0, loss="huber", f_scale=d, xtol=1e-15, ftol=1e-15, gtol=1e-15)
        assert abs(r.objective[p] - ls.cost) <= 1e-6 * ls.cost
    assert np.median(r.iterations) <= 4


def test_robust_losses_on_pixels_least_squares_fits_exactly():
    """Underdetermined pixels fit their rows exactly (the least-squares
    solution, objective 0); a pixel without data stays NaN; one that cannot
    converge within max_iter is NaN with status not-converged."""
    rng = np.random.default_rng(13)
    A = rng.standard_normal((12, 4))
    Y = rng.standard_normal((12, 3))
    Y[3:, 0] = np.nan                      # 3 rows for 4 unknowns
    Y[:, 1] = np.nan                       # no data
    for loss in ("l1", "huber"):
        r = cubesolve.solve(Y, A, loss=loss)
        l2 = cubesolve.solve(Y, A)
        assert r.status[0] == 1 and r.objective[0] <= 1e-12 and r.iterations[0] == 0
        np.testing.assert_allclose(r.x[:, 0], l2.x[:, 0], rtol=1e-12)
        assert r.status[1] == 2 and np.isnan(r.x[:, 1]).all() and np.isnan(r.objective[1])
        assert r.status[2] == 0 and r.objective[2] > 0
    stuck = cubesolve.solve(Y, A, loss="huber:1e-3", max_iter=1)
    assert stuck.status[2] == cubesolve.STATUS_NAMES.index("not-converged") and np.isnan(stuck.x[:, 2]).all()
    with pytest.raises(ValueError, match="l2, l1, huber"):
        cubesolve.solve(Y, A, loss="l3")
    with pytest.raises(ValueError, match="standard errors"):
        cubesolve.solve(Y, A, loss="l1", stderr=True)


def test_l1_recovers_the_series_through_unwrapping_errors():
    """An SBAS stack of 40 dates, each linked to its 3 nearest neighbours,
    with jumps of ±2π or ±4π in 3 % of the values and 10 % missing: L1's time
    series is within 0.1 rad of the clean one (least squares on the same
    values without the jumps) on at least 90 % of the full-rank pixels where
    least squares' is off by more than 0.1 rad. (The rest are L1's own: a
    date left with two or three links, one of them jumped, is fitted to the
    jump as well by the optimum, which test_l1_objective_... checks.)"""
    rng = np.random.default_rng(14)
    D, P = 40, 4000
    A = _network(D)
    truth = np.cumsum(0.3 * rng.standard_normal((D - 1, P)), axis=0)
    clean = A @ truth + 0.02 * rng.standard_normal((A.shape[0], P))
    clean[rng.random(clean.shape) < 0.10] = np.nan
    Y = clean.copy()
    jump = rng.random(Y.shape) < 0.03
    Y[jump] += 2 * np.pi * rng.choice([-2, -1, 1, 2], jump.sum())
    ref = cubesolve.solve(clean, A, dtype="float64").x
    l2 = cubesolve.solve(Y, A, dtype="float64")
    l1 = cubesolve.solve(Y, A, loss="l1", dtype="float64")
    full = (l2.status == 0) & (l1.status == 0)
    l2_off = full & (np.abs(l2.x - ref).max(axis=0) > 0.1)
    l1_ok = np.abs(l1.x - ref).max(axis=0) <= 0.1
    assert l2_off.sum() > 100
    assert (l1_ok & l2_off).sum() >= 0.90 * l2_off.sum(), f"{(l1_ok & l2_off).sum()} of {l2_off.sum()}"


def _wide_cube(seed=11):
    """A cube whose rows are wide enough that a 16 MB budget cuts it into blocks: odd
    height, 20 % missing, and a band of rows with no valid value (a block of them)."""
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(60, 101, 2000)).astype(np.float32)
    Y[rng.random(Y.shape) < 0.2] = np.nan
    Y[:, 40:70, :] = np.nan
    return Y, rng.normal(size=(60, 5))


def _same_result(a, b):
    """Every field equal to the bit, the rss to rounding (its summation order follows the engine's batches)."""
    for f in ("x", "n_valid", "rank", "status", "stderr"):
        assert np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True), f
    assert np.allclose(a.rss, b.rss, rtol=1e-12, atol=0, equal_nan=True)
    assert a.paths == b.paths


def test_cube_on_disk_is_solved_by_rows(tmp_path):
    # A memmap and an h5py dataset are read a block of rows at a time within
    # the memory budget, and give what the cube in memory gives.
    h5py = pytest.importorskip("h5py")
    Y, A = _wide_cube()
    whole = cubesolve.solve(Y, A, stderr=True)
    np.save(tmp_path / "c.npy", Y)
    with h5py.File(tmp_path / "c.h5", "w") as f:
        f["y"] = Y
    seen = []
    on_disk = np.load(tmp_path / "c.npy", mmap_mode="r")
    _same_result(whole, cubesolve.solve(on_disk, A, stderr=True, memory=16, progress=seen.append))
    assert len(seen) > 1 and seen == sorted(seen) and 0.9 < seen[-1] <= 1.0
    with h5py.File(tmp_path / "c.h5") as f:
        _same_result(whole, cubesolve.solve(f["y"], A, stderr=True, memory=16))
    with pytest.raises(cubesolve.Cancelled):
        cubesolve.solve(on_disk, A, memory=16, progress=lambda f: f < 0.5)
    with pytest.raises(ValueError, match="weights: expected Y's shape"):
        cubesolve.solve(on_disk, A, weights=np.load(tmp_path / "c.npy", mmap_mode="r")[:, :5])


def test_solve_file_writes_what_solve_returns(tmp_path):
    # solve_file streams from file to files as the CLI does; the files hold
    # what solve returns, whatever the design's form; refused runs write nothing.
    Y, A = _wide_cube(12)
    np.save(tmp_path / "c.npy", Y)
    np.save(tmp_path / "A.npy", A)
    whole = cubesolve.solve(Y, A, stderr=True)
    out = str(tmp_path / "x.npy")
    s = cubesolve.solve_file(tmp_path / "c.npy", tmp_path / "A.npy", out, diag=str(tmp_path / "d"), stderr=True, memory=16)
    assert s["blocks"] > 1 and s["rows_per_block"] * s["blocks"] >= 101 and s["x_shape"] == [5, 101, 2000]
    assert s["status"]["no-data"] == (whole.status == 2).sum() and s["paths"] == whole.paths
    assert np.array_equal(np.load(out), whole.x, equal_nan=True)
    assert np.array_equal(np.load(tmp_path / "d_stderr.npy"), whole.stderr, equal_nan=True)
    assert np.array_equal(np.load(tmp_path / "d_status.npy"), whole.status)
    s = cubesolve.solve_file(tmp_path / "c.npy", cubesolve.Design(A), tmp_path / "x2.npy", memory=16)
    assert np.array_equal(np.load(tmp_path / "x2.npy"), whole.x, equal_nan=True)
    cubesolve.solve_file(tmp_path / "c.npy", "poly:1", tmp_path / "p.npy")
    assert np.array_equal(np.load(tmp_path / "p.npy"), cubesolve.solve(Y, cubesolve.design("poly:1", 60)).x, equal_nan=True)
    for args, kw, error, message in [
            (("nope.npy", "A.npy", "x3.npy"), {}, OSError, "nope.npy: cannot open"),
            (("c.npy", "A.npy", "c.npy"), {}, ValueError, "apart from the inputs"),
            (("c.npy", "A.npy", "x3.npy"), dict(stderr=True), ValueError, "stderr: expected diag"),
            (("c.npy", "poly:x", "x3.npy"), {}, ValueError, "poly"),
            (("c.npy", "A.npy", "x3.npy"), dict(progress=lambda f: False), cubesolve.Cancelled, None)]:
        with pytest.raises(error, match=message):
            cubesolve.solve_file(*(str(tmp_path / a) if a.endswith(".npy") else a for a in args), memory=16, **kw)
    assert not (tmp_path / "x3.npy").exists()


def test_cube_on_disk_larger_than_the_budget_stays_on_disk(tmp_path):
    # A 256 MB memmap solved within 16 MB: the process's peak resident memory
    # (mapped file pages included) stays far below the cube's size.
    path = tmp_path / "big.npy"
    cube = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(64, 1000, 1000))
    rng = np.random.default_rng(5)
    for r0 in range(0, 1000, 100):
        block = rng.normal(size=(64, 100, 1000)).astype(np.float32)
        block[rng.random(block.shape) < 0.1] = np.nan
        cube[:, r0:r0 + 100] = block
    cube.flush()
    del cube
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs Linux's /proc/self/status (VmHWM, this process's peak resident memory)")
    script = textwrap.dedent(f"""
        import numpy as np, cubesolve
        def peak():  # MB; (ru_maxrss would carry the parent's peak across exec)
            return int([l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]) // 1024
        Y = np.load({str(path)!r}, mmap_mode="r")
        before = peak()
        r = cubesolve.solve(Y, cubesolve.design("poly:2", 64), memory=16)
        print(before, peak(), int((r.status == 0).sum()))
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=os.environ, timeout=300)
    assert run.returncode == 0, run.stderr
    before, after, solved = (int(v) for v in run.stdout.split())
    assert solved == 1000 * 1000
    assert after - before < 128, f"peak resident memory grew by {after - before} MB for a 256 MB cube"


def test_tuning_says_what_solves_use(tmp_path):
    """The engine's parameters and their origin: the environment's for one
    run, the stored file's for this machine, the machine's own without."""
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = {sys.path!r}
        import cubesolve
        t = cubesolve.tuning()
        print(t["chunk_kib"], t["mixed_min"], int(t["wide"]), t["origin"], len(t["warnings"]))
    """)
    env = dict(os.environ, CUBESOLVE_TUNING_FILE=str(tmp_path / "tuning.txt"))
    env.pop("CUBESOLVE_TUNING", None)
    own = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
    assert "derived from this machine" in own and own.endswith(" 0\n"), own
    env["CUBESOLVE_TUNING"] = "chunk_kib=96,mixed_min=513"
    set_here = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
    assert set_here.startswith("96 513 ") and "set by CUBESOLVE_TUNING" in set_here, set_here
    env["CUBESOLVE_TUNING"] = "chunk_kib=lots"
    bad = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
    assert "derived from this machine" in bad and bad.endswith(" 1\n"), bad


@pytest.mark.parametrize("network", [False, True])
def test_huber_converges_where_the_model_fits_exactly(network):
    """loss="huber": values the model fits exactly (objective 0 to rounding)
    converge at once, status ok, not flagged not-converged; a pixel's own
    duality gap is then rounding."""
    rng = np.random.default_rng(21)
    A = _network(12) if network else rng.standard_normal((60, 8))
    Y = A @ rng.standard_normal((A.shape[1], 50))
    Y[rng.random(Y.shape) < 0.1] = np.nan
    r = cubesolve.solve(Y, A, loss="huber:0.5", dtype="float64")
    assert (r.status == 0).all() and r.iterations.max() < 20
    assert np.nanmax(r.objective) < 1e-20
