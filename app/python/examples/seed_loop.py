"""A per-pixel PyTorch loop next to cubesolve.solve on the same tensor.

The loop is the one people write (and the one this project started from):
for every pixel, keep its valid rows, then torch.linalg.solve(A_vᵀA_v, A_vᵀy_v).
cubesolve.solve gives every pixel the minimum-norm least-squares solution on
its valid rows instead (what gelsd / torch.linalg.lstsq(driver="gelsd")
return), in one call. Both are timed on the same tensor, and both are compared
with torch.linalg.lstsq pixel by pixel on a sample.

    python seed_loop.py [--size 500] [--n 50] [--m 100] [--missing 0.2] [--loop-pixels K]

With --loop-pixels K the loop runs on K pixels and its time is scaled to the
cube (the full loop takes about a minute at the default size). Without
PyTorch, the same loop runs in NumPy.
"""

import argparse
import time

import numpy as np

import cubesolve

try:
    import torch
except ImportError:  # the loop in NumPy, the reference from numpy.linalg.lstsq
    torch = None


def seed_loop(Y, A, pixels):
    """x_p = solve(A_vᵀA_v, A_vᵀy_v) for each pixel p, as the per-pixel loop does it."""
    N, P = Y.shape
    X = np.full((A.shape[1], len(pixels)), np.nan)
    if torch is not None:
        Yt, At = torch.from_numpy(Y), torch.from_numpy(A)
        for k, p in enumerate(pixels):
            y = Yt[:, p]
            v = ~torch.isnan(y)
            Av = At[v]
            X[:, k] = torch.linalg.solve(Av.T @ Av, Av.T @ y[v]).numpy()
    else:
        for k, p in enumerate(pixels):
            y = Y[:, p]
            v = ~np.isnan(y)
            Av = A[v]
            X[:, k] = np.linalg.solve(Av.T @ Av, Av.T @ y[v])
    return X


def lstsq(Y, A, pixels):
    """The minimum-norm least-squares solution per pixel (gelsd)."""
    X = np.full((A.shape[1], len(pixels)), np.nan)
    for k, p in enumerate(pixels):
        y = Y[:, p]
        v = ~np.isnan(y)
        if torch is not None:
            X[:, k] = torch.linalg.lstsq(torch.from_numpy(A[v]), torch.from_numpy(y[v]).unsqueeze(1),
                                         driver="gelsd").solution.squeeze(1).numpy()
        else:
            X[:, k] = np.linalg.lstsq(A[v], y[v], rcond=None)[0]
    return X


def worst(X, R):
    return float(np.max(np.linalg.norm(X - R, axis=0) / np.linalg.norm(R, axis=0)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=500)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--m", type=int, default=100)
    ap.add_argument("--missing", type=float, default=0.2)
    ap.add_argument("--loop-pixels", type=int, default=0, help="time the loop on this many pixels (0: all)")
    ap.add_argument("--sample", type=int, default=200, help="pixels compared with lstsq")
    args = ap.parse_args()

    rng = np.random.default_rng(42)
    Y = rng.normal(size=(args.n, args.size, args.size))
    Y[rng.random(Y.shape) < args.missing] = np.nan
    A = rng.normal(size=(args.n, args.m))
    P = args.size * args.size
    flat = Y.reshape(args.n, P)
    cube = torch.from_numpy(Y) if torch is not None else Y  # the same tensor for both
    print(f"Y ({args.n}, {args.size}, {args.size}) float64 with {args.missing:.0%} NaN, A ({args.n}, {args.m}); "
          f"the loop in {'PyTorch ' + torch.__version__ if torch is not None else 'NumPy'}")

    t0 = time.perf_counter()
    r = cubesolve.solve(cube, A)
    t_cube = time.perf_counter() - t0

    loop_pixels = np.arange(P) if args.loop_pixels <= 0 else np.linspace(0, P - 1, args.loop_pixels).astype(int)
    t0 = time.perf_counter()
    X_loop = seed_loop(flat, A, loop_pixels)
    t_loop = (time.perf_counter() - t0) * P / len(loop_pixels)

    print(f"per-pixel loop   {t_loop:9.2f} s" + ("" if args.loop_pixels <= 0 else f"  ({len(loop_pixels)} pixels timed, scaled)"))
    print(f"cubesolve.solve  {t_cube:9.3f} s  ({t_loop / t_cube:.0f}x faster; paths {r.paths})")

    sample = np.linspace(0, P - 1, min(args.sample, P)).astype(int)
    ref = lstsq(flat, A, sample)
    x = r.x.reshape(args.m, P)[:, sample]
    loop_sample = seed_loop(flat, A, sample)
    print(f"largest relative difference from lstsq on {len(sample)} pixels: cubesolve {worst(x, ref):.2e}, "
          f"per-pixel loop {worst(loop_sample, ref):.2e}")
    if args.m > args.n:
        print("(with N < M every pixel is underdetermined: A_vᵀA_v is singular, and the loop's numbers are not the "
              "minimum-norm solution)")


if __name__ == "__main__":
    main()
