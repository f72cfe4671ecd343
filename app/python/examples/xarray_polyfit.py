"""xarray's polyfit next to cubesolve's on a cloudy time series cube.

The cube: SIZE × SIZE float32 pixels, 120 irregular dates over five years, a
quadratic trend with noise, and about a third of the values NaN under cloud
blobs that differ from date to date. Both fits are timed in this process:

1. xarray's ``DataArray.polyfit("time", 2, skipna=True)`` in memory;
2. ``da.cubesolve.polyfit("time", 2)`` in memory with 2 threads;
3. the same on the cube in dask chunks, on a ``dask.distributed``
   LocalCluster of two worker processes of one thread each (the chunks are
   made on the workers; the time is that of the fit once they are there).

The fitted values (the polynomial at every date) of 2 and 3 are compared with
1's, relative to the largest value: equal to 1e-10 is the claim.

    python xarray_polyfit.py [--size 1000] [--dates 120] [--chunks 4] [--no-cluster]
"""

import argparse
import time

import numpy as np
import xarray as xr

import cubesolve.xarray  # noqa: F401  (registers .cubesolve)


def dates(n, seed=0):
    """n irregular dates over five years from 2019-01-01 (datetime64[ns])."""
    days = np.sort(np.random.default_rng(seed).choice(np.arange(5 * 365), size=n, replace=False))
    return np.datetime64("2019-01-01", "ns") + days.astype("timedelta64[D]")


def clouds(n, seed=1, blobs=6):
    """Per date, blobs (centre y, x in [0, 1), radius) whose union covers about a third of the scene."""
    rng = np.random.default_rng(seed)
    return [(rng.random(blobs), rng.random(blobs), rng.uniform(0.08, 0.22, size=blobs)) for _ in range(n)]


def block(size, t, sky, y0, y1):
    """Rows y0..y1 of the cube (dates, rows, size): the same values whichever way the rows are split."""
    years = cubesolve.decimal_years(t) - 2019
    yy, xx = np.meshgrid((np.arange(y0, y1) + 0.5) / size, (np.arange(size) + 0.5) / size, indexing="ij")
    out = np.empty((len(t), y1 - y0, size), dtype=np.float32)
    trend = 3 * np.sin(4 * yy) + 2 * xx  # per pixel: a rate, an offset
    noise = np.stack([np.random.default_rng([7, row]).normal(scale=0.3, size=(len(t), size)) for row in range(y0, y1)],
                     axis=1)
    for i, (cy, cx, r) in enumerate(sky):
        out[i] = 10 * yy + trend * years[i] - 0.2 * years[i] ** 2 + noise[i]
        cloudy = np.zeros(yy.shape, dtype=bool)
        for a, b, rad in zip(cy, cx, r):
            cloudy |= (yy - a) ** 2 + (xx - b) ** 2 < rad ** 2
        out[i][cloudy] = np.nan
    return out


def cube(size, n, chunks=None):
    t = dates(n)
    sky = clouds(n)
    coords = {"time": t, "y": np.arange(size) * 30.0, "x": np.arange(size) * 30.0}
    if chunks is None:
        return xr.DataArray(block(size, t, sky, 0, size), dims=("time", "y", "x"), coords=coords, name="ndvi")
    import dask
    import dask.array as dsa

    edges = np.linspace(0, size, chunks + 1).astype(int)
    parts = [dsa.from_delayed(dask.delayed(block)(size, t, sky, a, b), shape=(n, b - a, size), dtype=np.float32)
             for a, b in zip(edges[:-1], edges[1:])]
    return xr.DataArray(dsa.concatenate(parts, axis=1), dims=("time", "y", "x"), coords=coords, name="ndvi")


def fitted(ds, t):
    return xr.polyval(t, ds.polyfit_coefficients).transpose("time", "y", "x").values


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=1000)
    p.add_argument("--dates", type=int, default=120)
    p.add_argument("--chunks", type=int, default=4, help="row chunks on the cluster")
    p.add_argument("--no-cluster", action="store_true", help="skip the LocalCluster run")
    a = p.parse_args()

    da = cube(a.size, a.dates)
    print(f"cube: {a.dates} dates × {a.size}² float32, {np.isnan(da.values).mean():.1%} of values NaN")

    t0 = time.perf_counter()
    ref = da.polyfit("time", 2, skipna=True)
    t_xr = time.perf_counter() - t0
    print(f"xarray polyfit(skipna=True):        {t_xr:8.2f} s")

    t0 = time.perf_counter()
    got = da.cubesolve.polyfit("time", 2, threads=2)
    t_cs = time.perf_counter() - t0
    values = fitted(ref, da.time)
    scale = np.nanmax(np.abs(values))
    diff = np.nanmax(np.abs(fitted(got, da.time) - values)) / scale
    print(f"cubesolve polyfit (2 threads):      {t_cs:8.2f} s   {t_xr / t_cs:6.1f}× xarray; "
          f"fitted values differ by {diff:.1e} of the largest")
    assert set(got.data_vars) == set(ref.data_vars) and got.polyfit_coefficients.dims == ref.polyfit_coefficients.dims

    if not a.no_cluster:
        from distributed import Client, LocalCluster, wait

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            lazy = cube(a.size, a.dates, chunks=a.chunks)
            lazy = lazy.copy(data=client.persist(lazy.data))
            wait(lazy.data)
            t0 = time.perf_counter()
            on_cluster = lazy.cubesolve.polyfit("time", 2).compute()
            t_cl = time.perf_counter() - t0
        mine = fitted(on_cluster, da.time)
        diff = np.nanmax(np.abs(mine - values)) / scale
        own = np.nanmax(np.abs(mine - fitted(got, da.time))) / scale
        print(f"cubesolve on a LocalCluster (2×1):  {t_cl:8.2f} s   {t_xr / t_cl:6.1f}× xarray; "
              f"fitted values differ by {diff:.1e} (from the in-memory solve's by {own:.1e})")


if __name__ == "__main__":
    main()
