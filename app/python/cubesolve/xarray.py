"""CubeSolve for xarray: an accessor ``.cubesolve`` on DataArray and Dataset.

Importing this module (it needs xarray; ``pip install cubesolve[xarray]``)
registers it::

    import xarray as xr
    import cubesolve.xarray

    fit = da.cubesolve.polyfit("time", 2)                  # as da.polyfit("time", 2, skipna=True)
    ds = da.cubesolve.fit("time", terms=["offset", "trend", "annual"], stderr=True)
    model = cubesolve.xarray.predict(ds, da.time)

Every pixel (each point of the dimensions other than ``dim``) is fitted on
its own valid values along ``dim`` (finite, with a positive weight), as
:func:`cubesolve.solve` does. Dimensions, coordinates and attributes are
kept. A dask-backed array stays lazy: each chunk is one task that solves its
pixels with the GIL released (chunks must hold all of ``dim``; they are
rechunked with a warning where they do not), with the engine's threads
limited so that the workers of a ``dask.distributed`` cluster, or the
threads of dask's local scheduler, do not oversubscribe the cores.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Hashable, List, Optional, Sequence, Tuple, Union

import numpy as np
import xarray as xr

from . import STATUS_NAMES, Design, __version__, decimal_years, solve

__all__ = ["CubeSolveAccessor", "predict", "design_from_terms", "decimal_years"]

#: CF ``flag_meanings`` of the ``status`` variable (``STATUS_NAMES`` as CF words).
FLAG_MEANINGS = " ".join(name.replace("-", "_") for name in STATUS_NAMES)


# --- time ---------------------------------------------------------------------------------------

def _term_columns(term: str, t: np.ndarray, years: np.ndarray) -> List[Tuple[str, np.ndarray]]:
    """One term's named columns at times t (decimal years from the origin; years: absolute)."""
    if term == "offset":
        return [("offset", np.ones_like(t))]
    if term == "trend":
        return [("trend", t)]
    if term.startswith("t^") and term[2:].isdigit() and int(term[2:]) >= 2:
        return [(term, t ** int(term[2:]))]
    periods = {"annual": 1.0, "semiannual": 0.5}
    if term in periods or term.startswith("period:"):
        try:
            period = periods[term] if term in periods else float(term[len("period:"):])
        except ValueError:
            period = float("nan")
        if not (np.isfinite(period) and period > 0):
            raise ValueError(f"terms: expected period:P with P > 0 (in years), found '{term}'")
        name = term if term in periods else f"period_{term[len('period:'):]}"
        w = 2 * np.pi * t / period
        return [(f"{name}_cos", np.cos(w)), (f"{name}_sin", np.sin(w))]
    if term.startswith("step:"):
        try:
            at = decimal_years(np.array([term[len("step:"):]], dtype="datetime64[ns]"))[0]
        except ValueError:
            raise ValueError(f"terms: expected step:YYYY-MM-DD, found '{term}'") from None
        return [(f"step_{term[len('step:'):]}", (years >= at).astype(np.float64))]
    raise ValueError(f"terms: expected offset, trend, t^K, annual, semiannual, period:P or step:YYYY-MM-DD, "
                     f"found '{term}'")


def design_from_terms(terms: Sequence[str], times: Any, origin: Any = None) -> Tuple[np.ndarray, List[str], float]:
    """The design (N, M) of ``terms`` at ``times``, its column names and the
    origin (decimal years) that time is measured from.

    Terms: ``offset``; ``trend`` (per year); ``t^K`` (K >= 2); ``annual`` and
    ``semiannual`` (a cos and a sin column each); ``period:P`` (P in years);
    ``step:YYYY-MM-DD`` (0 before the date, 1 from it on: a jump). Time runs
    from ``origin`` (a date or decimal year; default: the first time), so
    ``offset`` is the value there.
    """
    if isinstance(terms, str) or not len(terms):
        raise ValueError(f"terms: expected a list of terms, found {terms!r}")
    years = decimal_years(times)
    if years.ndim != 1 or not years.size:
        raise ValueError(f"times: expected one dimension, found shape {years.shape}")
    t0 = float(years[0]) if origin is None else float(decimal_years(np.atleast_1d(origin))[0])
    columns = [c for term in terms for c in _term_columns(str(term), years - t0, years)]
    names = [name for name, _ in columns]
    if len(set(names)) != len(names):
        raise ValueError(f"terms: expected each term once, found {list(terms)}")
    return np.stack([c for _, c in columns], axis=1), names, t0


# --- solving a block ----------------------------------------------------------------------------

def _threads(threads: int, local: int) -> int:
    """The engine's threads in a task: as given, else the task's share of the cores
    (a dask.distributed worker's: its processes' OMP_NUM_THREADS, which the nanny
    sets to 1; dask's local scheduler: the share computed from the chunk count)."""
    if threads:
        return threads
    try:
        from distributed import get_worker
        get_worker()
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "1") or 1))
    except (ImportError, ValueError):
        return local


def _solve_block(y: np.ndarray, *rest: np.ndarray, A: np.ndarray, row_scale: Optional[np.ndarray], options: Dict[str, Any],
                 outputs: Tuple[str, ...], threads: int, local_threads: int) -> Tuple[np.ndarray, ...]:
    """Solves the pixels of a block (..., N) (core dimension last, as apply_ufunc
    gives it); returns the outputs named, each (...,) + its core shape."""
    lead = y.shape[:-1]
    n = y.shape[-1]
    cube = np.moveaxis(y, -1, 0).reshape(n, -1)
    if cube.dtype not in (np.float32, np.float64):
        cube = cube.astype(np.float64)
    weights = None
    if rest:
        weights = np.ascontiguousarray(np.moveaxis(rest[0], -1, 0).reshape(n, -1), dtype=np.float64)
    design = A
    if row_scale is not None:  # weights along dim: rows scaled (fast unweighted paths, same solution)
        keep = np.isfinite(row_scale) & (row_scale != 0)
        s = np.where(keep, row_scale, 0.0)[:, None]
        design = A * s
        cube = np.where(keep[:, None], cube.astype(np.float64) * s, np.nan)
    r = solve(np.ascontiguousarray(cube), design, weights, dtype="float64",
              threads=_threads(threads, local_threads), **options)
    out = []
    for name in outputs:
        v = getattr(r, name)
        core = v.shape[:v.ndim - 1]  # (M,), (M, M) or ()
        v = v.reshape(core + lead)
        out.append(np.moveaxis(v, tuple(range(len(core))), tuple(range(-len(core), 0))) if core else v)
    return tuple(out)


_OUTPUT_TYPES = {"x": np.float64, "n_valid": np.int32, "rank": np.int32, "rss": np.float64, "status": np.uint8,
                 "cond": np.float64, "stderr": np.float64, "cov": np.float64, "iterations": np.int32,
                 "objective": np.float64, "temporal_coherence": np.float32}


def _apply(da: xr.DataArray, dim: Hashable, A: np.ndarray, outputs: Tuple[str, ...], *, row_scale=None,
           weights: Optional[xr.DataArray] = None, param: str = "param", options: Dict[str, Any],
           threads: int = 0) -> Dict[str, xr.DataArray]:
    """apply_ufunc over da along its dimension ``dim``: one engine call for an
    in-memory array, one per chunk (lazily) for a dask-backed one."""
    M = A.shape[1]
    if da.dtype.kind not in "iufb":
        raise ValueError(f"{da.name or 'values'}: expected real numbers, found {da.dtype}"
                         + ("; take their real part, phase or amplitude first" if da.dtype.kind == "c" else ""))
    args = [da]
    if weights is not None:
        args.append(weights)
    chunked = da.chunks is not None
    local_threads = 0
    if chunked:
        axis = da.get_axis_num(dim)
        if len(da.chunks[axis]) > 1:
            warnings.warn(f"cubesolve: the chunks of '{da.name}' split the dimension '{dim}' "
                          f"({len(da.chunks[axis])} chunks); rechunked to one chunk along it", stacklevel=4)
            args = [a.chunk({dim: -1}) if a.chunks is not None else a for a in args]
        blocks = int(np.prod([len(c) for i, c in enumerate(da.chunks) if i != axis]))
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        local_threads = max(1, cores // max(1, min(blocks, cores)))
    core_dims = {"x": [param], "stderr": [param], "cov": [f"{param}_i", f"{param}_j"]}
    output_core_dims = [core_dims.get(o, []) for o in outputs]
    result = xr.apply_ufunc(
        _solve_block, *args,
        input_core_dims=[[dim]] * len(args),
        output_core_dims=output_core_dims,
        dask="parallelized",
        output_dtypes=[_OUTPUT_TYPES[o] for o in outputs],
        dask_gufunc_kwargs={"output_sizes": {d: M for dims in output_core_dims for d in dims}},
        kwargs=dict(A=A, row_scale=row_scale, options=options, outputs=outputs, threads=threads,
                    local_threads=local_threads),
        keep_attrs=False,
    )
    if len(outputs) == 1:
        result = (result,)
    return {o: r for o, r in zip(outputs, result)}


def _true_dim(obj: Union[xr.DataArray, xr.Dataset], dim: Hashable) -> Hashable:
    """The dimension a coordinate ``dim`` runs along (``dim`` itself for a dimension)."""
    if dim in obj.dims:
        return dim
    if dim in obj.coords and obj.coords[dim].ndim == 1:
        return obj.coords[dim].dims[0]
    raise ValueError(f"dim: expected a dimension or 1-D coordinate of {list(obj.dims)}, found '{dim}'")


def _row_scale(w: Any, n: int, what: str) -> np.ndarray:
    """A 1-D weight per value along the fitted dimension, as float64."""
    w = np.asarray(getattr(w, "values", w), dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(f"{what}: expected one weight per value along the dimension ({n}), found shape {w.shape}")
    return w


def _status(status: xr.DataArray) -> xr.DataArray:
    return status.assign_attrs(flag_values=np.arange(len(STATUS_NAMES), dtype=np.uint8), flag_meanings=FLAG_MEANINGS,
                               long_name="what each pixel's fit is")


# --- polyfit, as xarray's -----------------------------------------------------------------------

def _numeric_coordinate(obj: Union[xr.DataArray, xr.Dataset], dim: Hashable) -> np.ndarray:
    """The coordinate as xarray's polyfit takes it (datetimes as float ns since 1970)."""
    try:
        from xarray.computation.computation import _ensure_numeric
    except ImportError:  # xarray before 2025
        from xarray.core.computation import _ensure_numeric
    return np.asarray(_ensure_numeric(obj.coords[dim]).astype(np.float64))


def _polyfit(obj: Union[xr.DataArray, xr.Dataset], dim: Hashable, deg: int, rcond: Optional[float], w: Any,
             full: bool, cov: Union[bool, str], threads: int) -> xr.Dataset:
    if cov not in (False, True, "unscaled"):
        raise ValueError(f"cov: expected True, False or 'unscaled', found {cov!r}")
    x = _numeric_coordinate(obj, dim)
    true_dim = _true_dim(obj, dim)
    order = int(deg) + 1
    vander = np.vander(x, order)
    if w is not None:
        w = _row_scale(obj.coords[w] if isinstance(w, str) else w, vander.shape[0], "w")
    lhs = vander if w is None else vander * w[:, None]
    scale = np.sqrt((lhs * lhs).sum(axis=0))  # as xarray: weighted columns of unit norm
    base = vander / scale                       # the engine scales its rows by w
    lhs = lhs / scale
    degree_dim = "degree"
    while degree_dim in obj.dims:
        degree_dim = "_" + degree_dim
    variables: Dict[Hashable, xr.DataArray] = {}
    rank = np.linalg.matrix_rank(lhs)
    if full:
        variables[f"{obj[dim].name}_matrix_rank"] = xr.DataArray(rank)
        sing = np.linalg.svd(lhs, compute_uv=False)
        variables[f"{obj[dim].name}_singular_values"] = xr.DataArray(
            np.concatenate([np.full((order - rank,), np.nan), sing]), dims=(degree_dim,))
    arrays = {None: obj} if isinstance(obj, xr.DataArray) else dict(obj.data_vars)
    for name, var in arrays.items():
        if true_dim not in var.dims:
            continue
        outputs = ("x", "rss", "rank", "n_valid") + (("cov",) if cov else ())
        r = _apply(var, true_dim, base, outputs, row_scale=w, param=degree_dim, threads=threads,
                   options=dict(rcond=rcond, cov=bool(cov)))
        prefix = f"{name}_" if isinstance(name, str) else ""
        other = [d for d in var.dims if d != true_dim]
        coeffs = r["x"] / xr.DataArray(scale, dims=(degree_dim,))
        variables[prefix + "polyfit_coefficients"] = coeffs.transpose(degree_dim, *other)
        # numpy.linalg.lstsq's residuals: only of a full-rank, overdetermined fit
        residuals = r["rss"].where((r["rank"] == order) & (r["n_valid"] > order))
        if full or cov is True:
            variables[prefix + "polyfit_residuals"] = residuals.transpose(*other)
        if cov:
            c = r["cov"].rename({f"{degree_dim}_i": "cov_i", f"{degree_dim}_j": "cov_j"})
            c = c / xr.DataArray(np.outer(scale, scale), dims=("cov_i", "cov_j"))
            if cov == "unscaled":  # without each pixel's s² = rss / (|V| - rank)
                s2 = r["rss"] / (r["n_valid"] - r["rank"])
                c = c / s2.where(s2 > 0)
            variables[prefix + "polyfit_covariance"] = c.transpose("cov_i", "cov_j", *other)
    present = {d for v in variables.values() for d in v.dims} - {degree_dim, "cov_i", "cov_j"}
    coords = {degree_dim: np.arange(order)[::-1]}
    coords.update({d: obj.coords[d].variable for d in obj.dims if d in present and d in obj.indexes})
    variables = {k: v.drop_vars([c for c in v.coords if c not in coords]) for k, v in variables.items()}
    return xr.Dataset(variables, coords=coords, attrs=obj.attrs.copy() if isinstance(obj, xr.Dataset) else {})


# --- fit: any design, with the engine's diagnostics ----------------------------------------------

def _fit(obj: Union[xr.DataArray, xr.Dataset], dim: Hashable, terms: Optional[Sequence[str]], design: Any,
         weights: Any, origin: Any, param_names: Optional[Sequence[str]], stderr: bool, cov: bool,
         temporal_coherence: bool, threads: int, options: Dict[str, Any]) -> xr.Dataset:
    true_dim = _true_dim(obj, dim)
    n = obj.sizes[true_dim]
    attrs: Dict[str, Any] = dict(obj.attrs, cubesolve_version=__version__, cubesolve_dim=str(dim))
    if (terms is None) == (design is None):
        raise ValueError("fit: expected terms=[...] or design=A, found " + ("both" if terms is not None else "neither"))
    if terms is not None:
        if dim not in obj.coords:
            raise ValueError(f"terms: expected a time coordinate '{dim}' to build them from, found none "
                             f"(assign one, or pass design=A)")
        A, names, t0 = design_from_terms(terms, obj.coords[dim], origin)
        attrs.update(cubesolve_terms=" ".join(map(str, terms)), cubesolve_time_origin=t0, cubesolve_time_unit="year")
    else:
        A = np.asarray(Design(design).values())
        if A.shape[0] != n:
            raise ValueError(f"design: expected {n} rows (one per value along '{dim}'), found shape {A.shape}")
        names = list(param_names) if param_names is not None else list(getattr(design, "columns", [])) or \
            [f"x{j}" for j in range(A.shape[1])]
    if len(names) != A.shape[1]:
        raise ValueError(f"param_names: expected {A.shape[1]} names, found {len(names)}")
    loss = str(options.get("loss", "l2"))
    attrs.update({f"cubesolve_{k}": v for k, v in options.items() if v is not None})
    row_scale, full_weights = None, None
    if weights is not None:
        wv = weights if isinstance(weights, xr.DataArray) else None
        if (wv is not None and set(wv.dims) == {true_dim}) or (wv is None and np.ndim(weights) == 1):
            w = _row_scale(weights, n, "weights")
            if (w < 0).any() or np.isinf(w).any():
                raise ValueError(f"weights: expected finite values >= 0 (0 or NaN: missing), found {w[(w < 0) | np.isinf(w)][0]}")
            row_scale = np.sqrt(w)
        elif wv is not None and true_dim in wv.dims:
            full_weights = wv
        else:
            raise ValueError(f"weights: expected a 1-D array along '{dim}' or a DataArray with the dimension "
                             f"'{true_dim}', found {type(weights).__name__} of shape {np.shape(weights)}")
    outputs = ("x", "n_valid", "rank", "rss", "status", "cond") + (("stderr",) if stderr else ()) + \
        (("cov",) if cov else ()) + (("iterations", "objective") if loss != "l2" else ()) + \
        (("temporal_coherence",) if temporal_coherence else ())
    engine = dict(options, stderr=stderr, cov=cov, temporal_coherence=temporal_coherence)
    arrays = {None: obj} if isinstance(obj, xr.DataArray) else {k: v for k, v in obj.data_vars.items() if true_dim in v.dims}
    out: Dict[Hashable, xr.DataArray] = {}
    for name, var in arrays.items():
        r = _apply(var, true_dim, A, outputs, row_scale=row_scale, weights=full_weights, threads=threads,
                   options=engine)
        prefix = f"{name}_" if isinstance(name, str) else ""
        renamed = {"x": "coefficients", "cov": "covariance"}
        for o, v in r.items():
            if o == "status":
                v = _status(v)
            out[prefix + renamed.get(o, o)] = v.transpose(*[d for d in ("param", "param_i", "param_j") if d in v.dims],
                                                          ...)
    ds = xr.Dataset(out, attrs=attrs)
    return ds.assign_coords(param=names, **({"param_i": names, "param_j": names} if cov else {}))


def predict(ds: xr.Dataset, coords: Any, *, name: Optional[str] = None) -> xr.DataArray:
    """The model of a fit at ``coords`` (a 1-D coordinate, DataArray or array
    of times): for :meth:`CubeSolveAccessor.fit`'s result, its terms evaluated
    there (same origin) times its coefficients; for ``polyfit``'s, as
    ``xarray.polyval``. ``name`` picks a Dataset's variable (prefix)."""
    prefix = f"{name}_" if name else ""
    if prefix + "polyfit_coefficients" in ds:
        if not isinstance(coords, xr.DataArray):
            coords = xr.DataArray(np.asarray(coords), dims=("time",))
        return xr.polyval(coords, ds[prefix + "polyfit_coefficients"])
    if "cubesolve_terms" not in ds.attrs or prefix + "coefficients" not in ds:
        raise ValueError("predict: expected the result of .cubesolve.fit(terms=...) or .cubesolve.polyfit, "
                         f"found variables {list(ds.data_vars)}")
    if not isinstance(coords, xr.DataArray):
        coords = xr.DataArray(np.asarray(coords), dims=(ds.attrs["cubesolve_dim"],))
    if coords.ndim != 1:
        raise ValueError(f"coords: expected one dimension, found {coords.dims}")
    A, names, _ = design_from_terms(ds.attrs["cubesolve_terms"].split(), coords.values, ds.attrs["cubesolve_time_origin"])
    if names != [str(p) for p in ds["param"].values]:
        raise ValueError(f"predict: expected the fit's terms {list(ds['param'].values)}, built {names}")
    basis = xr.DataArray(A, dims=(coords.dims[0], "param"), coords={coords.dims[0]: coords})
    return xr.dot(basis, ds[prefix + "coefficients"], dim="param")


# --- the accessor -------------------------------------------------------------------------------

class CubeSolveAccessor:
    """``obj.cubesolve``: fits along a dimension with CubeSolve's engine."""

    def __init__(self, obj: Union[xr.DataArray, xr.Dataset]) -> None:
        self._obj = obj

    def polyfit(self, dim: Hashable, deg: int, skipna: Optional[bool] = True, rcond: Optional[float] = None,
                w: Any = None, full: bool = False, cov: Union[bool, str] = False, *, threads: int = 0) -> xr.Dataset:
        """What ``DataArray.polyfit`` / ``Dataset.polyfit`` return (the same
        variables, the ``degree`` coordinate, datetimes as nanoseconds since
        1970), each pixel fitted on its own valid values along ``dim``.

        Differences from xarray's: every pixel skips its own missing values
        (``skipna`` is accepted for compatibility; the result is that of
        ``skipna=True``); ``rcond`` applies to every pixel (xarray's ignores
        it on pixels with gaps); and with ``cov`` the covariance is each
        pixel's own, s²·(A_Vᵀ A_V)⁻¹ with s² = rss / (|V| − rank) on its valid
        rows V, dimensioned ``(cov_i, cov_j, ...)`` per pixel — xarray's comes
        from the full design and N, and is wrong for every pixel with a gap
        (``cov="unscaled"`` leaves out s², and is NaN where s² is 0).
        ``threads`` limits the engine's threads (0: all, or the task's share).
        """
        del skipna  # always per pixel
        return _polyfit(self._obj, dim, deg, rcond, w, full, cov, threads)

    def fit(self, dim: Hashable, terms: Optional[Sequence[str]] = None, *, design: Any = None,
            weights: Any = None, origin: Any = None, param_names: Optional[Sequence[str]] = None,
            rcond: Optional[float] = None, ridge: float = 0.0, min_valid: int = 1, loss: str = "l2",
            stderr: bool = False, cov: bool = False, temporal_coherence: bool = False, threads: int = 0,
            memory: Optional[int] = None) -> xr.Dataset:
        """Fits ``terms`` (see :func:`design_from_terms`; time from the
        coordinate ``dim``, datetime64 or cftime in decimal years) or a
        ``design`` (N, M) along ``dim``, each pixel on its own valid values.

        ``weights``: 1-D along ``dim`` (broadcast to every pixel without a
        copy of full size), or a DataArray with ``dim`` and any of the other
        dimensions; a weight of 0 or NaN marks a value missing. The other
        options are :func:`cubesolve.solve`'s.

        Returns a Dataset (for a Dataset, each variable's names prefixed with
        it): ``coefficients`` (``param``, ...) with ``param`` named by term
        (``offset``, ``trend``, ``annual_cos``, ...; a design's ``param_names``
        or ``x0``, ``x1``, ...), ``n_valid``, ``rank``, ``rss``, ``status`` (a
        CF flag variable), ``cond``; with ``stderr`` the standard errors, with
        ``cov`` the ``covariance`` (``param_i``, ``param_j``, ...), with a
        robust loss ``iterations`` and ``objective``, with
        ``temporal_coherence`` that; attributes recording the run.
        """
        options = dict(rcond=rcond, ridge=float(ridge), min_valid=int(min_valid), loss=str(loss))
        if memory is not None:
            options["memory"] = memory
        return _fit(self._obj, dim, terms, design, weights, origin, param_names, stderr, cov, temporal_coherence,
                    threads, options)


xr.register_dataarray_accessor("cubesolve")(CubeSolveAccessor)
xr.register_dataset_accessor("cubesolve")(CubeSolveAccessor)
