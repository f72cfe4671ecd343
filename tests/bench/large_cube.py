#!/usr/bin/env python3
"""A cube larger than memory budgets, solved by the CLI and by the desktop.

Writes a float32 cube (N, H, W) (default 100 x 4000 x 4000: 6.4 GB) with 10 %
of its values NaN in blobs of 16 x 16 pixels (each band its own), and the
3-column design [1, t, t^2], t = linspace(0, 1, N), as CSV; then solves it

  - with `cubesolve-cli solve CUBE DESIGN -o X.npy --json` (default --memory), and
  - with `cubesolve CUBE DESIGN --screenshot out.png` (the desktop, headless),

each with the file in the page cache (warm) and dropped from it (cold:
posix_fadvise(POSIX_FADV_DONTNEED) on the cube, which needs no privileges),
and prints for each run its wall time, its peak resident memory (the
process's maximum RSS, mapped file pages included, as `/usr/bin/time -v`
reports it), the CLI's read rate, the floor (reading the file once, warm
and cold) and the wall time over the bound: the larger of that floor and
the CLI's engine time.

    python3 tests/bench/large_cube.py [N H W] [--dir DIR] [--keep] [--no-gui] [--tif]
            [--cli build/release/app/cubesolve-cli] [--app build/release/app/cubesolve]

With --tif the runs read the same values as a tiled, band-interleaved GeoTIFF
(made with gdal_translate, from Debian's gdal-bin, over a VRT of the .npy).

Needs NumPy; the desktop run needs a display (xvfb-run is used when there is none).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np


def write_cube(path, n, h, w, seed=0):
    """The cube a band at a time: a quadratic in t per pixel plus noise, 10 % NaN in 16 x 16 blobs."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, n)
    cube = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, h, w))
    coef = [rng.normal(size=(h, w)).astype(np.float32) for _ in range(3)]
    bh, bw = -(-h // 16), -(-w // 16)
    for k in range(n):
        band = coef[0] + coef[1] * t[k] + coef[2] * t[k] ** 2 + 0.01 * rng.standard_normal((h, w), dtype=np.float32)
        blobs = np.repeat(np.repeat(rng.random((bh, bw)) < 0.1, 16, axis=0), 16, axis=1)[:h, :w]
        band[blobs] = np.nan
        cube[k] = band
    cube.flush()
    del cube
    with open(path, "rb+") as f:
        os.fsync(f.fileno())  # (pages still dirty would stay in the cache)
    np.savetxt(os.path.splitext(path)[0] + "_design.csv", np.stack([np.ones(n), t, t * t], axis=1), delimiter=",")


def to_geotiff(npy):
    """The .npy cube as a tiled, band-interleaved GeoTIFF beside it (gdal_translate over a VRT of its values)."""
    tif, vrt = os.path.splitext(npy)[0] + ".tif", os.path.splitext(npy)[0] + ".vrt"
    m = np.load(npy, mmap_mode="r")
    n, h, w = m.shape
    bands = "".join(
        f'<VRTRasterBand dataType="Float32" band="{b + 1}" subClass="VRTRawRasterBand">'
        f'<SourceFilename relativetoVRT="1">{os.path.basename(npy)}</SourceFilename><ImageOffset>{m.offset + b * h * w * 4}</ImageOffset>'
        f"<PixelOffset>4</PixelOffset><LineOffset>{w * 4}</LineOffset><ByteOrder>LSB</ByteOrder></VRTRasterBand>\n"
        for b in range(n))
    with open(vrt, "w") as f:
        f.write(f'<VRTDataset rasterXSize="{w}" rasterYSize="{h}">\n{bands}</VRTDataset>\n')
    subprocess.run(["gdal_translate", "-q", "-of", "GTiff", "-co", "TILED=YES", "-co", "INTERLEAVE=BAND", "-co", "BIGTIFF=IF_SAFER",
                    vrt, tif], check=True)
    os.remove(vrt)
    with open(tif, "rb+") as f:
        os.fsync(f.fileno())
    return tif


def drop_from_cache(path):
    """The file's pages out of the page cache (it was written and synced before)."""
    with open(path, "rb") as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


def read_once(path, cold):
    """Seconds to read the file once, 64 MB at a time."""
    if cold:
        drop_from_cache(path)
    start = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        buf = bytearray(64 << 20)
        while f.readinto(buf):
            pass
    return time.perf_counter() - start


def peak_rss_mb(command, cold, cube):
    """The run again under /usr/bin/time -v for its maximum resident set (MB), and its wall time."""
    if cold:
        drop_from_cache(cube)
    start = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v"] + command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({p.returncode}): {p.stderr[-2000:]}")
    rss = next(int(line.split(":")[1]) for line in p.stderr.splitlines() if "Maximum resident set size" in line)
    return wall, rss / 1024, p.stdout


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(here, "..", "..", "build", "release", "app")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shape", nargs="*", type=int, default=[100, 4000, 4000], help="N H W")
    ap.add_argument("--dir", default=None, help="where the cube is written (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the cube (and reuse one of the same shape)")
    ap.add_argument("--no-gui", action="store_true", help="the CLI only")
    ap.add_argument("--tif", action="store_true", help="read the cube as a tiled GeoTIFF (needs gdal_translate)")
    ap.add_argument("--cli", default=os.path.join(build, "cubesolve-cli"))
    ap.add_argument("--app", default=os.path.join(build, "cubesolve"))
    args = ap.parse_args()
    if len(args.shape) != 3:
        sys.exit("expected the shape as three numbers: N H W")
    n, h, w = args.shape
    folder = args.dir or tempfile.mkdtemp(prefix="cubesolve-large-")
    os.makedirs(folder, exist_ok=True)
    cube = os.path.join(folder, f"cube_{n}x{h}x{w}.npy")
    design = os.path.splitext(cube)[0] + "_design.csv"
    try:
        if not (os.path.exists(cube) and os.path.exists(design)):
            start = time.perf_counter()
            write_cube(cube, n, h, w)
            print(f"wrote {cube} ({os.path.getsize(cube) / 1e9:.2f} GB) in {time.perf_counter() - start:.1f} s")
        if args.tif:
            tif = os.path.splitext(cube)[0] + ".tif"
            if not os.path.exists(tif):
                to_geotiff(cube)
            cube = tif
        size = os.path.getsize(cube)
        read_once(cube, False)  # into the page cache
        warm, cold = read_once(cube, False), read_once(cube, True)
        print(f"floor: reading the file once takes {warm:.2f} s warm ({size / 1e6 / warm:.0f} MB/s), "
              f"{cold:.2f} s cold ({size / 1e6 / cold:.0f} MB/s)")
        x = os.path.join(folder, "x.npy")
        runs = [("CLI", [args.cli, "solve", cube, design, "-o", x, "--json"])]
        if not args.no_gui:
            gui = [args.app, cube, design, "--screenshot", os.path.join(folder, "out.png")]
            if not os.environ.get("DISPLAY") and shutil.which("xvfb-run"):
                gui = ["xvfb-run", "-a", "-s", "-screen 0 1400x900x24"] + gui
            runs.append(("desktop", gui))
        print(f"{'run':<10} {'cache':<6} {'wall s':>8} {'peak RSS MB':>12} {'read MB/s':>10} {'wall / bound':>13}")
        engine = 0.0  # the CLI's engine time: the bound is the larger of it and reading the file once
        for name, command in runs:
            for state in ("warm", "cold"):
                if state == "warm":
                    read_once(cube, False)
                wall, rss, out = peak_rss_mb(command, state == "cold", cube)
                rate = ""
                if name == "CLI":
                    j = json.loads(out.strip().splitlines()[-1])
                    rate = f"{j['read_rate_mb_s']:.0f}"
                    engine = max(engine, j["engine_seconds"])
                bound = max(warm if state == "warm" else cold, engine)
                print(f"{name:<10} {state:<6} {wall:>8.2f} {rss:>12.0f} {rate:>10} {wall / bound:>13.2f}", flush=True)
                if name == "CLI" and state == "warm":
                    print(f"{'':<10} (engine {j['engine_seconds']:.2f} s, {j['blocks']} blocks of {j['rows_per_block']} rows, "
                          f"waited {j['wait_seconds']:.2f} s for reads)")
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
