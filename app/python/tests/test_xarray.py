"""cubesolve.xarray: polyfit as xarray's (and per pixel as numpy's lstsq),
fit with named terms, weights, laziness over dask and a LocalCluster."""

import numpy as np
import pytest

xr = pytest.importorskip("xarray", reason="xarray is not installed (pip install cubesolve[xarray])")
pd = pytest.importorskip("pandas", reason="pandas (xarray's dependency) is not installed")
import cubesolve  # noqa: E402
import cubesolve.xarray  # noqa: E402,F401  (registers .cubesolve)


def stack(n=40, h=12, w=9, missing=0.3, seed=0, dtype=np.float64, dates=True):
    """A (time, y, x) cube with irregular dates, gaps, non-index coordinates and attributes."""
    rng = np.random.default_rng(seed)
    if dates:
        days = np.sort(rng.choice(np.arange(5 * 365), size=n, replace=False))
        t = np.datetime64("2019-01-01", "ns") + days.astype("timedelta64[D]")
    else:
        t = np.sort(rng.uniform(0, 5, size=n))
    years = cubesolve.decimal_years(t)
    truth = 2 + 0.5 * (years - years[0])[:, None, None] + np.cos(2 * np.pi * years)[:, None, None]
    Y = (truth + rng.normal(scale=0.1, size=(n, h, w))).astype(dtype)
    Y[rng.random(Y.shape) < missing] = np.nan
    return xr.DataArray(Y, dims=("time", "y", "x"), name="disp",
                        coords={"time": t, "y": np.arange(h) * 30.0, "x": np.arange(w) * 30.0,
                                "lat": (("y", "x"), rng.random((h, w))), "sensor": "S1"},
                        attrs={"units": "mm", "title": "a test stack"})


# --- polyfit, the drop-in ------------------------------------------------------------------------

@pytest.mark.parametrize("dates", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_polyfit_equals_xarray_without_gaps(dates, full):
    da = stack(missing=0.0, dates=dates)
    ref = da.polyfit("time", 2, skipna=True, full=full)
    got = da.cubesolve.polyfit("time", 2, full=full)
    assert list(got.data_vars) == list(ref.data_vars)
    assert got.polyfit_coefficients.dims == ref.polyfit_coefficients.dims == ("degree", "y", "x")
    xr.testing.assert_allclose(got, ref, rtol=1e-10)
    xr.testing.assert_identical(got.coords.to_dataset(), ref.coords.to_dataset())


def test_polyfit_per_pixel_on_gaps_as_lstsq():
    da = stack(missing=0.35, seed=3)
    da[:, 0, 0] = np.nan       # no data
    da[2:, 0, 1] = np.nan      # two values: under-determined for degree 2, minimum norm
    got = da.cubesolve.polyfit("time", 2, full=True)
    x = (da.time.values - np.datetime64("1970-01-01", "ns")) / np.timedelta64(1, "ns")
    lhs = np.vander(x, 3)
    scale = np.sqrt((lhs ** 2).sum(axis=0))
    Y = da.values.reshape(da.shape[0], -1)
    C = got.polyfit_coefficients.values.reshape(3, -1)
    R = got.polyfit_residuals.values.ravel()
    for p in range(Y.shape[1]):
        v = np.isfinite(Y[:, p])
        if not v.any():
            assert np.isnan(C[:, p]).all() and np.isnan(R[p])
            continue
        c, res, rank, _ = np.linalg.lstsq(lhs[v] / scale, Y[v, p], rcond=None)
        np.testing.assert_allclose(C[:, p], c / scale, rtol=1e-9, atol=1e-12 * np.abs(c / scale).max())
        if res.size:
            np.testing.assert_allclose(R[p], res[0], rtol=1e-8)
        else:  # as numpy: no residual of a rank-deficient or exactly determined fit
            assert np.isnan(R[p])
    # and xarray's own loop over the gap pixels gives the same
    xr.testing.assert_allclose(got, da.polyfit("time", 2, skipna=True, full=True), rtol=1e-9)


def test_polyfit_dataset_weights_and_float32():
    da = stack(missing=0.2, seed=5, dtype=np.float32)
    ds = xr.Dataset({"a": da, "b": 2 * da, "flat": da.isel(time=0)}, attrs={"history": "made here"})
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=da.sizes["time"])
    ref = ds.polyfit("time", 1, w=w, skipna=True)
    got = ds.cubesolve.polyfit("time", 1, w=w)
    assert set(got.data_vars) == {"a_polyfit_coefficients", "b_polyfit_coefficients"}
    assert got.attrs == ds.attrs
    xr.testing.assert_allclose(got, ref, rtol=1e-9)


def test_polyfit_covariance_is_each_pixels_own():
    pytest.importorskip("statsmodels", reason="statsmodels gives the reference covariance")
    import statsmodels.api as sm

    da = stack(missing=0.4, seed=7, dates=False)
    da[:, 1, 1] = da[:, 1, 2]  # and one pixel without a gap
    da[:, 1, 1] = da[:, 1, 1].fillna(0.0)
    got = da.cubesolve.polyfit("time", 1, cov=True)
    ref = da.polyfit("time", 1, skipna=True, cov=True)
    assert got.polyfit_covariance.dims == ref.polyfit_covariance.dims == ("cov_i", "cov_j", "y", "x")
    # without a gap xarray's is the pixel's own too
    np.testing.assert_allclose(got.polyfit_covariance[:, :, 1, 1], ref.polyfit_covariance[:, :, 1, 1], rtol=1e-9)
    t = da.time.values
    for iy, ix in [(0, 0), (3, 4), (5, 2)]:
        y = da.values[:, iy, ix]
        v = np.isfinite(y)
        fit = sm.OLS(y[v], np.vander(t[v], 2)).fit()
        np.testing.assert_allclose(got.polyfit_covariance[:, :, iy, ix], fit.cov_params(), rtol=1e-9)
        unscaled = da.cubesolve.polyfit("time", 1, cov="unscaled").polyfit_covariance[:, :, iy, ix]
        np.testing.assert_allclose(unscaled, np.linalg.inv(np.vander(t[v], 2).T @ np.vander(t[v], 2)), rtol=1e-9)
        # xarray's, from the full design and N, is not
        assert not np.allclose(ref.polyfit_covariance[:, :, iy, ix], fit.cov_params(), rtol=1e-3)


# --- fit: named terms, designs, weights, statuses --------------------------------------------------

def test_fit_terms_from_datetimes_and_round_trip():
    da = stack(missing=0.3, seed=11)
    ds = da.cubesolve.fit("time", ["offset", "trend", "annual", "step:2021-06-01"], stderr=True, cov=True)
    assert list(ds.param.values) == ["offset", "trend", "annual_cos", "annual_sin", "step_2021-06-01"]
    assert ds.coefficients.dims == ("param", "y", "x") and ds.covariance.dims == ("param_i", "param_j", "y", "x")
    # coordinates and attributes of the input kept; the run recorded
    xr.testing.assert_identical(ds.lat, da.lat)
    assert ds.sensor.item() == "S1" and ds.attrs["units"] == "mm" and ds.attrs["title"] == "a test stack"
    assert ds.attrs["cubesolve_terms"] == "offset trend annual step:2021-06-01"
    assert ds.attrs["cubesolve_loss"] == "l2"
    # the design by hand, in decimal years from the first date
    years = cubesolve.decimal_years(da.time)
    t = years - years[0]
    A = np.stack([np.ones_like(t), t, np.cos(2 * np.pi * t), np.sin(2 * np.pi * t),
                  (da.time.values >= np.datetime64("2021-06-01")).astype(float)], axis=1)
    r = cubesolve.solve(da.values, A, stderr=True, dtype="float64")
    np.testing.assert_allclose(ds.coefficients.values, r.x, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ds.stderr.values, r.stderr, rtol=1e-9)
    np.testing.assert_allclose(np.sqrt(np.einsum("iiyx->iyx", ds.covariance.values)), r.stderr, rtol=1e-9)
    np.testing.assert_array_equal(ds.status.values, r.status)
    assert ds.status.attrs["flag_meanings"].split()[:4] == ["ok", "min_norm", "no_data", "too_few"]
    np.testing.assert_array_equal(ds.status.attrs["flag_values"], np.arange(len(cubesolve.STATUS_NAMES)))
    # the fit's model where the data are: predict
    model = cubesolve.xarray.predict(ds, da.time)
    np.testing.assert_allclose(model.transpose("time", "y", "x").values, np.einsum("nm,myx->nyx", A, r.x), rtol=1e-9)
    # a Dataset: each variable along the dimension, its names prefixed
    both = xr.Dataset({"a": da, "b": 2 * da, "flat": da.isel(time=0)}).cubesolve.fit("time", ["offset", "trend"])
    assert {"a_coefficients", "b_status"} <= set(both.data_vars) and not any(k.startswith("flat") for k in both.data_vars)
    np.testing.assert_allclose(both.b_coefficients, 2 * both.a_coefficients, rtol=1e-9)


def test_design_times_as_array_equals_file(tmp_path):
    t = np.array(["2020-01-05", "2020-03-17", "2020-11-30", "2021-02-28", "2022-07-01"], dtype="datetime64[D]")
    f = tmp_path / "dates.txt"
    f.write_text("\n".join(str(d).replace("-", "") for d in t) + "\n")
    np.testing.assert_allclose(cubesolve.design("harmonic:1", 5, times=t), cubesolve.design("harmonic:1", 5, times=str(f)),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cubesolve.decimal_years(t)[0], 2020 + 4 / 366)


def test_cftime_dates():
    cftime = pytest.importorskip("cftime", reason="cftime is not installed")
    t = [cftime.DatetimeNoLeap(2020, m, 1) for m in range(1, 13)]
    np.testing.assert_allclose(cubesolve.decimal_years(np.array(t)), 2020 + np.cumsum([0] + [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30]) / 365)


def test_fit_weights_along_dim_broadcast():
    da = stack(missing=0.25, seed=13)
    w = np.random.default_rng(2).uniform(0.2, 3.0, size=da.sizes["time"])
    w[4] = 0.0  # a date left out
    one = da.cubesolve.fit("time", ["offset", "trend"], weights=xr.DataArray(w, dims="time"), stderr=True)
    full = da.cubesolve.fit("time", ["offset", "trend"], weights=xr.ones_like(da) * xr.DataArray(w, dims="time"),
                            stderr=True)
    xr.testing.assert_allclose(one, full, rtol=1e-9)
    assert (one.n_valid.values == np.isfinite(np.delete(da.values, 4, axis=0)).sum(axis=0)).all()
    with pytest.raises(ValueError, match="one weight per value"):
        da.cubesolve.fit("time", ["offset"], weights=np.ones(3))


def test_robust_loss_passes_through():
    da = stack(missing=0.2, seed=29)
    da[5, 2, 3] += 50.0  # an outlier
    ds = da.cubesolve.fit("time", ["offset", "trend"], loss="l1")
    years = cubesolve.decimal_years(da.time)
    A = np.stack([np.ones(da.sizes["time"]), years - years[0]], axis=1)
    r = cubesolve.solve(da.values, A, loss="l1", dtype="float64")
    np.testing.assert_allclose(ds.coefficients.values, r.x, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(ds.iterations.values, r.iterations)
    np.testing.assert_allclose(ds.objective.values, r.objective, rtol=1e-12)
    assert ds.attrs["cubesolve_loss"] == "l1"


def test_empty_and_too_few_pixels_flagged():
    da = stack(missing=0.0, seed=17)
    da[:, 0, 0] = np.nan
    da[1:, 0, 1] = np.nan  # one value
    ds = da.cubesolve.fit("time", ["offset", "trend", "annual"], min_valid=3, stderr=True)
    names = cubesolve.STATUS_NAMES
    assert names[ds.status.values[0, 0]] == "no-data" and names[ds.status.values[0, 1]] == "too-few"
    assert np.isnan(ds.coefficients.values[:, 0, :2]).all() and np.isnan(ds.stderr.values[:, 0, :2]).all()
    assert (ds.status.values.ravel()[2:] == 0).all()


def test_bad_terms_and_dims():
    da = stack()
    with pytest.raises(ValueError, match="expected offset, trend"):
        da.cubesolve.fit("time", ["offset", "wobble"])
    with pytest.raises(ValueError, match="expected a dimension"):
        da.cubesolve.fit("band", ["offset"])
    with pytest.raises(ValueError, match="terms=.* or design"):
        da.cubesolve.fit("time")
    with pytest.raises(ValueError, match="expected real numbers, found complex128"):
        (da * 1j).cubesolve.fit("time", ["offset"])
    with pytest.raises(ValueError, match="weights: expected finite values >= 0"):
        da.cubesolve.fit("time", ["offset"], weights=-np.ones(da.sizes["time"]))
    with pytest.raises(ValueError, match="expected a time coordinate 'time'"):
        da.drop_vars("time").cubesolve.fit("time", ["offset"])
    bare = da.drop_vars("time").cubesolve.fit("time", design=np.ones((da.sizes["time"], 1)), param_names=["mean"])
    np.testing.assert_allclose(bare.coefficients.sel(param="mean"), da.mean("time"), rtol=1e-9)


# --- dask: lazy, one task per chunk, a LocalCluster ------------------------------------------------

def test_lazy_one_solve_per_chunk(monkeypatch):
    dask = pytest.importorskip("dask", reason="dask is not installed (pip install cubesolve[xarray])")
    da = stack(h=20, w=12, missing=0.3, seed=19)
    calls = []
    solve = cubesolve.xarray.solve
    monkeypatch.setattr(cubesolve.xarray, "solve", lambda *a, **k: calls.append(1) or solve(*a, **k))
    chunked = da.chunk({"y": 5, "x": 6})  # 4 × 2 chunks
    ds = chunked.cubesolve.fit("time", ["offset", "trend", "annual"], stderr=True)
    assert not calls and all(dask.is_dask_collection(v) for v in ds.data_vars.values())
    got = ds.compute(scheduler="sync")
    assert len(calls) == 8
    xr.testing.assert_allclose(got, da.cubesolve.fit("time", ["offset", "trend", "annual"], stderr=True), rtol=1e-12)
    with pytest.warns(UserWarning, match="rechunked to one chunk"):
        poly = da.chunk({"time": 10}).cubesolve.polyfit("time", 1)
    xr.testing.assert_allclose(poly.compute(), da.polyfit("time", 1, skipna=True), rtol=1e-9)


def test_local_cluster_equals_in_memory():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    da = stack(h=16, w=10, missing=0.3, seed=23)
    ref = da.cubesolve.fit("time", ["offset", "trend", "annual"], stderr=True)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        got = da.chunk({"y": 4}).cubesolve.fit("time", ["offset", "trend", "annual"], stderr=True).compute()
        # one engine thread a worker thread: the nanny's OMP_NUM_THREADS
        tasks = [client.submit(cubesolve.xarray._threads, 0, 8, pure=False, workers=[w]) for w in client.scheduler_info()["workers"]]
        assert client.gather(tasks) == [1, 1]
    xr.testing.assert_allclose(got, ref, rtol=1e-12)
    assert cubesolve.xarray._threads(0, 8) == 8 and cubesolve.xarray._threads(3, 8) == 3  # outside a worker
