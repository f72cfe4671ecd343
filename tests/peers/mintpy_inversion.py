#!/usr/bin/env python3
"""CubeSolve against MintPy's network inversion (ifgram_inversion.py).

Makes a synthetic ifgramStack.h5 in MintPy's layout (dates, a small-baseline
network, unwrapped phase with a non-zero reference phase, gaps as NaN and as
exact zeros, coherence, connected components, perpendicular baselines), runs
MintPy's `ifgram_inversion.py` and `cubesolve-cli solve` with the same
settings, and prints both wall times, peak memory, and the differences of the
time series, temporal coherence and number of interferograms used. Then it
runs MintPy's info.py, tsview.py and timeseries2velocity.py on CubeSolve's
timeseries.h5.

  python3 tests/peers/mintpy_inversion.py --cli build/release/app/cubesolve-cli
  python3 tests/peers/mintpy_inversion.py --dates 60 --size 200 --weight var

MintPy is installed into a virtual environment (--venv, default
build/peers/mintpy-venv) on the first run. Not part of CI: it needs the
package index and takes minutes.
"""
import argparse
import json
import os
import subprocess
import sys
import time

MINTPY = "mintpy==1.6.4"


def venv_python(venv):
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    probe = subprocess.run([py, "-c", "import mintpy, h5py, numpy"], capture_output=True)
    if probe.returncode != 0:
        print(f"installing {MINTPY} into {venv} ...", flush=True)
        subprocess.run([py, "-m", "pip", "install", "-q", MINTPY, "h5py", "numpy"], check=True)
    return py


MAKE_STACK = r'''
import sys, datetime as dt
import numpy as np, h5py
path, D, H, W, seed, split = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == "1"
rng = np.random.default_rng(seed)
t0 = dt.date(2020, 1, 1)
dates = [t0 + dt.timedelta(days=12 * i + int(rng.integers(0, 3))) for i in range(D)]
names = [d.strftime("%Y%m%d") for d in dates]
pairs = [(i, j) for i in range(D) for j in range(i + 1, min(D, i + 5))]
if split:  # two blocks of dates with no interferogram between them
    pairs = [(i, j) for i, j in pairs if (i < D // 2) == (j < D // 2)]
N = len(pairs)
years = np.array([(d - dates[0]).days / 365.25 for d in dates])
yy, xx = np.mgrid[0:H, 0:W] / max(H, W)
velocity = 0.03 * np.exp(-((yy - 0.5) ** 2 + (xx - 0.4) ** 2) / 0.05)  # m/yr
wavelength = 0.05546576
phase_ts = -4 * np.pi / wavelength * velocity[None] * years[:, None, None]
ref_y, ref_x = H // 10, W // 10
unw = np.empty((N, H, W), np.float32)
coh = np.empty((N, H, W), np.float32)
for k, (i, j) in enumerate(pairs):
    c = np.clip(0.9 - 0.01 * (j - i) * 12 / 12 + 0.15 * rng.standard_normal((H, W)), 0.05, 0.99)
    coh[k] = c
    noise = rng.standard_normal((H, W)) * np.sqrt((1 - c ** 2) / (2 * c ** 2)) * 0.3
    unw[k] = phase_ts[j] - phase_ts[i] + noise + rng.uniform(-20, 20)  # an arbitrary constant per interferogram
gap = rng.uniform(size=unw.shape)
unw[gap < 0.06] = np.nan
unw[(gap >= 0.06) & (gap < 0.13)] = 0.0  # not unwrapped
unw[:, ref_y, ref_x] = np.where(np.isfinite(unw[:, ref_y, ref_x]) & (unw[:, ref_y, ref_x] != 0), unw[:, ref_y, ref_x], 1.0)
cc = (rng.uniform(size=unw.shape) > 0.02).astype(np.int16)
with h5py.File(path, "w") as f:
    f["unwrapPhase"] = unw
    f["coherence"] = coh
    f["connectComponent"] = cc
    f["date"] = np.array([[names[i].encode(), names[j].encode()] for i, j in pairs])
    f["bperp"] = rng.normal(0, 60, N).astype(np.float32)
    f["dropIfgram"] = np.ones(N, bool)
    for key, value in {"FILE_TYPE": "ifgramStack", "LENGTH": H, "WIDTH": W, "REF_Y": ref_y, "REF_X": ref_x,
                       "WAVELENGTH": wavelength, "ALOOKS": 3, "RLOOKS": 9, "PROCESSOR": "isce",
                       "PLATFORM": "Sen", "UNIT": "radian"}.items():
        f.attrs[key] = str(value)
print(N)
'''

MEASURE = r'''
import resource, subprocess, sys, time, json
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({"code": r.returncode, "seconds": time.perf_counter() - t,
                  "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "err": r.stderr[-2000:], "out": r.stdout[-2000:]}))
'''

COMPARE = r'''
import sys, json
import numpy as np, h5py
mp, cs = sys.argv[1], sys.argv[2]
def read(folder, name, ds):
    with h5py.File(f"{folder}/{name}", "r") as f:
        return f[ds][:], dict(f.attrs)
ts_m, _ = read(mp, "timeseries.h5", "timeseries")
ts_c, attrs = read(cs, "timeseries.h5", "timeseries")
tc_m, _ = read(mp, "temporalCoherence.h5", "temporalCoherence")
tc_c, _ = read(cs, "temporalCoherence.h5", "temporalCoherence")
n_m, _ = read(mp, "numInvIfgram.h5", "mask")
n_c, _ = read(cs, "numInvIfgram.h5", "mask")
zeroed = np.all(ts_m == 0, axis=0) & np.any(np.isfinite(ts_c) & (ts_c != 0), axis=0)  # MintPy's redundancy rule (and all-NaN pixels)
both = np.all(np.isfinite(ts_c), axis=0) & ~zeroed
d = np.abs(ts_m - ts_c)[:, both]
scale = np.abs(ts_c[:, both]).max()
print(json.dumps({
  "pixels": int(ts_m[0].size), "compared": int(both.sum()), "zeroed_by_mintpy": int(zeroed.sum()),
  "unsolved_by_cubesolve": int((~np.all(np.isfinite(ts_c), axis=0)).sum()),
  "ts_max_abs_diff_m": float(d.max()), "ts_max_abs_m": float(scale), "ts_max_rel_diff": float(d.max() / scale),
  "ts_float32_eps_times_max": float(np.finfo(np.float32).eps * scale),
  "tcoh_max_abs_diff": float(np.nanmax(np.abs(tc_m - tc_c)[both])),
  "num_inv_equal": bool(np.array_equal(n_m[both], n_c[both])),
  "unit": attrs.get("UNIT"), "file_type": attrs.get("FILE_TYPE"), "ref_date": attrs.get("REF_DATE")}))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default="build/release/app/cubesolve-cli")
    ap.add_argument("--venv", default="build/peers/mintpy-venv")
    ap.add_argument("--work", default="build/peers/mintpy")
    ap.add_argument("--dates", type=int, default=60)
    ap.add_argument("--size", type=int, default=200)
    ap.add_argument("--weight", default="var", choices=["var", "fim", "coh", "no"])
    ap.add_argument("--min-norm-phase", action="store_true", help="MintPy's --min-norm-phase (default: min-norm velocity)")
    ap.add_argument("--split", action="store_true", help="a network in two blocks (MintPy refuses weighted inversion)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    cli = os.path.abspath(a.cli)
    py = venv_python(os.path.abspath(a.venv))
    bindir = os.path.dirname(py)
    work = os.path.abspath(a.work)
    mp_dir, cs_dir = os.path.join(work, "mintpy"), os.path.join(work, "cubesolve")
    for d in (mp_dir, cs_dir):
        os.makedirs(d, exist_ok=True)
    stack = os.path.join(work, "ifgramStack.h5")
    n = subprocess.run([py, "-c", MAKE_STACK, stack, str(a.dates), str(a.size), str(a.size), str(a.seed), "1" if a.split else "0"],
                       check=True, capture_output=True, text=True).stdout.strip()
    print(f"stack: {a.dates} dates, {n} interferograms, {a.size} x {a.size} pixels, weight {a.weight}, "
          f"{'min-norm phase' if a.min_norm_phase else 'min-norm velocity'}")

    def measure(cmd, cwd):
        r = subprocess.run([py, "-c", MEASURE] + cmd, capture_output=True, text=True, cwd=cwd)
        return json.loads(r.stdout)

    env_path = bindir + os.pathsep + os.environ.get("PATH", "")
    os.environ["PATH"] = env_path
    os.environ.setdefault("MPLBACKEND", "Agg")
    mp_cmd = [os.path.join(bindir, "ifgram_inversion.py"), stack, "-w", a.weight, "-o", "timeseries.h5",
              "temporalCoherence.h5", "numInvIfgram.h5"]
    if a.min_norm_phase:
        mp_cmd.append("--min-norm-phase")
    cs_cmd = [cli, "solve", stack, "sbas", "-o", os.path.join(cs_dir, "timeseries.h5"), "--weight-func", a.weight,
              "--formulation", "phase" if a.min_norm_phase else "velocity"]
    mp = measure(mp_cmd, mp_dir)
    cs = measure(cs_cmd, cs_dir)
    for name, r in (("MintPy", mp), ("CubeSolve", cs)):
        if r["code"] != 0:
            print(f"{name} failed:\n{r['err']}{r['out']}")
            return 1
    print(f"MintPy 1.6.4 ifgram_inversion.py: {mp['seconds']:.2f} s, peak {mp['peak_mb']:.0f} MB")
    print(f"CubeSolve solve:                  {cs['seconds']:.2f} s, peak {cs['peak_mb']:.0f} MB")
    print(f"speed-up: {mp['seconds'] / cs['seconds']:.1f}x")
    cmp = json.loads(subprocess.run([py, "-c", COMPARE, mp_dir, cs_dir], check=True, capture_output=True, text=True).stdout)
    for k, v in cmp.items():
        print(f"  {k}: {v}")
    # MintPy's own tools on CubeSolve's output.
    ts = os.path.join(cs_dir, "timeseries.h5")
    for tool in (["info.py", ts], ["timeseries2velocity.py", ts, "-o", os.path.join(cs_dir, "velocity.h5")],
                 ["tsview.py", ts, "--yx", str(a.size // 2), str(a.size // 2), "--nodisplay", "--save",
                  "--outfile", os.path.join(cs_dir, "tsview.png")]):
        r = subprocess.run([os.path.join(bindir, tool[0])] + tool[1:], capture_output=True, text=True, cwd=cs_dir)
        print(f"MintPy {tool[0]} on CubeSolve's timeseries.h5: {'ok' if r.returncode == 0 else 'FAILED'}")
        if r.returncode != 0:
            print((r.stderr or r.stdout)[-1500:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
