#!/usr/bin/env python3
"""CubeSolve's L1 network inversion against dolphin's (OPERA's InSAR workflow).

Makes a small-baseline stack: DATES dates, each linked to its 3 following
dates, phases of a per-pixel rate plus noise (--noise, 0.02 rad), unwrapping errors of
±2π or ±4π in 3 % of the interferogram values, and (second case) 10 % of the
values missing (NaN). On the same stack, in this process, it runs dolphin's
least-squares inversion (`invert_stack`, and with gaps its masked form), its
L1 inversion (`invert_stack_l1`: ADMM, 20 iterations, one design for every
pixel) and cubesolve.solve with loss "l2" and "l1" (each pixel on its own
valid rows; L1 to a vertex whose dual certificate proves it optimal). It
prints each one's time, how many pixels it answers, how many of its time
series are within 0.1 rad on every date of the least-squares fit of the
same values without the jumps (each pixel on its own rows), and dolphin's L1
objective over CubeSolve's (the optimum) on the pixels both answer.

  python3 tests/peers/dolphin_l1.py [--size 400] [--dates 40] [--threads 2]

dolphin needs GDAL's Python bindings built against the system's GDAL; on the
first run the script makes a virtual environment (--venv, default
build/peers/dolphin-venv) with them and dolphin, and runs itself there with
the cubesolve module of --module (default build/release/python) on its path.
Not part of CI: it needs the package index and takes minutes.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np


def in_venv(venv, module):
    """Re-runs this script in a virtual environment that has dolphin (made on the first run)."""
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    if subprocess.run([py, "-c", "import dolphin.timeseries"], capture_output=True).returncode != 0:
        gdal = subprocess.run(["gdal-config", "--version"], capture_output=True, text=True, check=True).stdout.strip()
        print(f"installing GDAL {gdal}'s bindings and dolphin into {venv} ...", flush=True)
        pip = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run(pip + ["numpy", "wheel", "setuptools"], check=True)
        subprocess.run(pip + ["--no-build-isolation", "--no-cache-dir", f"gdal=={gdal}"], check=True)
        subprocess.run(pip + ["dolphin"], check=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [module, os.environ.get("PYTHONPATH")])))
    os.execve(py, [py, os.path.abspath(__file__), "--in-venv"] + sys.argv[1:], env)


def stack(size, dates, gaps, noise, seed=0):
    """The SBAS design (pairs, dates - 1, dolphin's incidence matrix), the
    interferograms (pairs, size, size) and the same without the jumps."""
    from dolphin.timeseries import get_incidence_matrix

    rng = np.random.default_rng(seed)
    A = get_incidence_matrix([(d, e) for d in range(dates) for e in range(d + 1, min(dates, d + 4))])
    t = np.arange(1, dates) * 12 / 365.25
    rate = rng.uniform(-3, 3, size=(size, size))
    truth = t[:, None, None] * rate + rng.normal(scale=0.3, size=(dates - 1, size, size))
    clean = np.einsum("km,mij->kij", A, truth) + rng.normal(scale=noise, size=(A.shape[0], size, size))
    if gaps:
        clean[rng.random(clean.shape) < gaps] = np.nan
    dphi = clean.copy()
    jumps = rng.random(dphi.shape) < 0.03
    dphi[jumps] += 2 * np.pi * rng.choice([-2, -1, 1, 2], size=int(jumps.sum()))
    return A, dphi.astype(np.float32), clean.astype(np.float32)


def report(name, seconds, x, truth, base=None):
    answered = np.isfinite(x).all(axis=0)
    close = answered & (np.abs(x - truth) <= 0.1).all(axis=0)
    ratio = f"{seconds / base:7.2f}×" if base else "        "
    print(f"  {name:46s} {seconds:7.2f} s {ratio}  answers {answered.mean():6.1%}, within 0.1 rad {close.mean():6.1%}")
    return answered


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t0


def run(args):
    import jax
    import jax.numpy as jnp
    from dolphin import timeseries as dts

    import cubesolve

    jax.config.update("jax_enable_x64", True)
    for gaps in (0.0, 0.1):
        A, dphi, clean = stack(args.size, args.dates, gaps, args.noise)
        truth = cubesolve.solve(clean, A, threads=args.threads, dtype="float64").x  # what the jumps hide
        print(f"\n{args.dates} dates, {A.shape[0]} interferograms, {args.size}² pixels, noise {args.noise} rad, "
              f"3 % unwrapping errors, {gaps:.0%} missing:")
        Aj, dj = jnp.asarray(A), jnp.asarray(dphi.astype(np.float64))

        def dolphin_l2():
            if not gaps:
                return np.asarray(dts.invert_stack(Aj, dj)[0])
            valid = jnp.isfinite(dj)  # dolphin's masked least squares: weights and missing-data flags
            return np.asarray(dts.invert_stack(Aj, jnp.where(valid, dj, 0.0), valid.astype(float), valid)[0])

        def dolphin_l1():
            x, objective = dts.invert_stack_l1(Aj, dj)
            return np.asarray(x), np.asarray(objective)

        dolphin_l2()  # compiled once for these shapes: the times below are the runs'
        dolphin_l1()
        x2, t_l2 = timed(dolphin_l2)
        (x1, obj1), t_l1 = timed(dolphin_l1)
        r2, c_l2 = timed(lambda: cubesolve.solve(dphi, A, threads=args.threads, dtype="float64"))
        r1, c_l1 = timed(lambda: cubesolve.solve(dphi, A, threads=args.threads, dtype="float64", loss="l1"))
        report("dolphin invert_stack (least squares)" + (", masked" if gaps else ""), t_l2, x2, truth, t_l2)
        both = report("dolphin invert_stack_l1 (ADMM, 20 iterations)", t_l1, x1, truth, t_l2)
        report("cubesolve loss l2", c_l2, r2.x, truth, t_l2)
        report("cubesolve loss l1 (exact)", c_l1, r1.x, truth, t_l2)
        both &= np.isfinite(r1.objective) & (r1.objective > 0)
        if both.any():
            gap = obj1[both] / r1.objective[both]
            print(f"  dolphin's L1 objective over the optimum on {both.mean():.1%} of pixels: median {np.median(gap):.4f}, "
                  f"p99 {np.percentile(gap, 99):.4f}, max {gap.max():.4f}")
        print(f"  cubesolve L1 over dolphin L1: {c_l1 / t_l1:.2f}× the time; "
              f"its iterations p50 {np.percentile(r1.iterations, 50):.0f}, p99 {np.percentile(r1.iterations, 99):.0f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=400)
    p.add_argument("--dates", type=int, default=40)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--noise", type=float, default=0.02, help="of the interferograms, in radians")
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--venv", default=os.path.join(here, "..", "..", "build", "peers", "dolphin-venv"))
    p.add_argument("--module", default=os.path.join(here, "..", "..", "build", "release", "python"))
    p.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    try:
        import dolphin.timeseries  # noqa: F401
    except ImportError:
        if args.in_venv:
            raise
        in_venv(os.path.abspath(args.venv), os.path.abspath(args.module))
    run(args)


if __name__ == "__main__":
    main()
