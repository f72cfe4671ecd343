"""CubeSolve: per-pixel minimum-norm least squares on data cubes with gaps.

One design matrix ``A`` of shape ``(N, M)`` is fitted to every pixel of a cube
``Y`` of shape ``(N, H, W)`` (observation first), each pixel on its own valid
observations: a value is missing when it is NaN or ±Inf, or when its weight
is 0 or NaN. Every pixel gets exactly what ``numpy.linalg.lstsq(A_V, y_V,
rcond=None)`` returns on its valid rows ``V``; the work that depends on ``A``
alone is done once, so a cube solves orders of magnitude faster than a loop
over pixels.

>>> import numpy as np, cubesolve
>>> Y = np.random.default_rng(0).normal(size=(50, 100, 100)).astype(np.float32)
>>> Y[Y > 1.5] = np.nan
>>> r = cubesolve.solve(Y, np.random.default_rng(1).normal(size=(50, 10)))
>>> r.x.shape
(10, 100, 100)
"""

from __future__ import annotations

import dataclasses
import mmap
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._core import Cancelled

__all__ = ["Design", "Result", "Cancelled", "solve", "solve_file", "plan", "read", "design", "devices", "tuning", "decimal_years", "__version__",
           "STATUS_NAMES"]

__version__: str = _core.version()

#: The meaning of each value of :attr:`Result.status`.
STATUS_NAMES: Tuple[str, ...] = ("ok", "min-norm", "no-data", "too-few", "failed", "reference", "not-converged")

ArrayLike = Any


def _is_on_device(a: Any) -> bool:
    """Whether ``a`` lives in GPU memory (a CUDA tensor, a CuPy array)."""
    if hasattr(a, "__cuda_array_interface__"):
        return True
    dev = getattr(a, "__dlpack_device__", None)
    if dev is not None:
        try:
            return dev()[0] not in (1, 3)  # kDLCPU, kDLCUDAHost
        except Exception:
            return False
    return False


def _as_array(a: ArrayLike, what: str) -> np.ndarray:
    """``a`` as a NumPy array over the same memory where it can be."""
    if _is_on_device(a):
        raise ValueError(
            f"{what}: expected an array in host memory, found one on a GPU device; this build solves "
            f"device arrays after they are moved to the host (pass {what}.cpu())")
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "__dlpack__") and hasattr(a, "detach"):  # a PyTorch tensor: shared, not copied
        return np.from_dlpack(a.detach())
    return np.asarray(a)


def _as_values(a: ArrayLike, what: str) -> np.ndarray:
    """float32/float64 values, C-ordered; copied only when the layout needs it."""
    arr = _as_array(a, what)
    if arr.dtype not in (np.float32, np.float64):
        raise ValueError(f"{what}: expected float32 or float64 values, found {arr.dtype} "
                         f"(convert it with .astype(numpy.float32))")
    return np.ascontiguousarray(arr)


class Design:
    """A design matrix ``A`` of shape ``(N, M)`` (or ``(N,)``) and everything
    the engine derives from it once: its SVD, pseudo-inverse and hat matrix.
    Build it once and solve many cubes with it.

    Raises ``ValueError`` for an empty matrix, more than two dimensions or a
    value that is not finite.
    """

    def __init__(self, A: ArrayLike, name: str = "A") -> None:
        if isinstance(A, Design):
            self._d = A._d
            return
        a = _as_array(A, name)
        if np.iscomplexobj(a):  # converted, only the real part would remain
            raise ValueError(f"{name}: expected real values, found complex ones ({a.dtype}); "
                             f"take their real part, phase or amplitude first")
        self._d = _core.Design(np.ascontiguousarray(a, dtype=np.float64), name)

    @property
    def shape(self) -> Tuple[int, int]:
        """``(N, M)``."""
        return (self._d.rows, self._d.cols)

    @property
    def rank(self) -> int:
        """Numerical rank of ``A`` (rcond = eps·max(N, M))."""
        return self._d.rank

    @property
    def condition(self) -> float:
        """σ_max / σ_min over all min(N, M) singular values (inf when singular)."""
        return self._d.condition

    def values(self) -> np.ndarray:
        """``A`` as float64, ``(N, M)``."""
        return self._d.values()

    def __repr__(self) -> str:
        return f"Design(shape={self.shape}, rank={self.rank}, condition={self.condition:.3g})"


@dataclasses.dataclass
class Result:
    """What :func:`solve` returns. Pixel-shaped arrays follow ``Y``: for ``Y``
    of shape ``(N, H, W)`` they are ``(H, W)`` and ``x`` is ``(M, H, W)``; for
    ``(N, P)``, ``(P,)`` and ``(M, P)``; for one pixel ``(N,)``, 0-d and ``(M,)``.
    """

    #: The solutions, NaN where a pixel was not solved, in ``dtype`` (default: Y's).
    x: np.ndarray
    #: Valid observations per pixel (int32).
    n_valid: np.ndarray
    #: Numerical rank of the pixel's weighted ``A_V`` (int32).
    rank: np.ndarray
    #: Weighted residual sum of squares (float64).
    rss: np.ndarray
    #: 0 ok (unique), 1 min-norm (underdetermined or rank-deficient), 2 no data,
    #: 3 too few valid rows, 4 failed, 5 a MintPy stack's reference pixel (uint8);
    #: see :data:`STATUS_NAMES`.
    status: np.ndarray
    #: σ_max / σ_rank of the weighted ``A_V`` where an SVD was taken (exact and
    #: group paths), NaN elsewhere (float64).
    cond: np.ndarray
    #: Pixels per path the engine took (full, group, deletion, dual, gram, exact, skipped).
    paths: Dict[str, int]
    #: Seconds the engine took.
    engine_seconds: float
    #: What the engine wants you to know (a device that fell back to the CPU, ...).
    warnings: List[str]
    #: Where the fast paths ran: "cpu" or "cuda".
    device: str = "cpu"
    #: Pixels solved on the GPU.
    device_pixels: int = 0
    #: With ``stderr=True``, each coefficient's standard error on the pixel's
    #: own valid rows V (shaped as ``x``): sqrt(diag(s²·(A_Vᵀ W_V A_V)⁺)) with
    #: s² = rss / (|V| − rank), the pseudo-inverse at the pixel's rank (the
    #: covariance of the minimum-norm solution); what ``statsmodels``'
    #: ``WLS(y_V, A_V, weights=w_V).fit().bse`` gives for a pixel of full rank.
    #: With a ridge λ, that of the ridge estimator: s²·(G + λI)⁻¹ G (G + λI)⁻¹,
    #: G = A_Vᵀ W_V A_V, s² over |V| − tr(G (G + λI)⁻¹). NaN where ``x`` is and
    #: where |V| <= rank (no degree of freedom left for s²). None without it.
    stderr: Optional[np.ndarray] = None
    #: With ``cov=True``, each pixel's whole covariance on its own valid rows,
    #: ``(M, M) + pixels`` (symmetric): the matrix whose diagonal ``stderr``'s
    #: squares are, s²·(A_Vᵀ W_V A_V)⁺ (with a ridge, the same sandwich). NaN
    #: where ``stderr`` is. None without it.
    cov: Optional[np.ndarray] = None
    #: With ``temporal_coherence=True`` (for a stack of phases in radians),
    #: MintPy's temporal coherence of each pixel's residuals y_V − A_V x,
    #: |Σ exp(i·e)| / |V| (float32, NaN where no value is valid). None without it.
    temporal_coherence: Optional[np.ndarray] = None
    #: With a robust ``loss``: the iterations each pixel took (int32) and its
    #: objective Σρ(f) at ``x`` over its weighted residuals f = W^½(A_V x − y_V)
    #: (float64, NaN where not solved). None with least squares.
    iterations: Optional[np.ndarray] = None
    objective: Optional[np.ndarray] = None


# The engine's working memory in MB, at least and at most (as the CLI's --memory).
_MEMORY_MB = (16, 1 << 20)


def _integer(value: Any, what: str, lo: int, hi: int) -> int:
    """``value`` as an int in [lo, hi], or ValueError naming ``what``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise ValueError(f"{what}: expected an integer from {lo} to {hi}, found {value!r}")
    return int(value)


def _options(rcond, min_valid, ridge, device, threads, dtype, memory):
    if dtype is not None:
        dtype = np.dtype(dtype).name
    return dict(rcond=-1.0 if rcond is None else float(rcond), min_valid=int(min_valid), ridge=float(ridge),
                device=str(device), threads=int(threads), dtype=dtype,
                memory_mb=None if memory is None else _integer(memory, "memory (MB)", *_MEMORY_MB))


def _as_cube(Y: ArrayLike, what: str = "Y") -> Tuple[np.ndarray, Tuple[int, ...]]:
    """Y as an (N, H, W) view (copied only when its layout needs it), and its pixel shape."""
    y = _as_values(Y, what)
    if y.ndim == 3:
        return y, y.shape[1:]
    if y.ndim == 2:
        return y.reshape(y.shape[0], 1, y.shape[1]), (y.shape[1],)
    if y.ndim == 1:
        return y.reshape(y.shape[0], 1, 1), ()
    raise ValueError(f"{what}: expected 3 dimensions (N, H, W), 2 (N, P) or 1 (N,), found shape {y.shape}")


def solve(Y: ArrayLike, A: Union[ArrayLike, Design], weights: Optional[ArrayLike] = None, *,
          rcond: Optional[float] = None, min_valid: int = 1, ridge: float = 0.0, device: str = "auto",
          device_float64: bool = False, threads: int = 0, dtype: Any = None, memory: Optional[int] = None,
          stderr: bool = False, cov: bool = False, temporal_coherence: bool = False, loss: str = "l2", tol: float = 1e-6,
          max_iter: int = 500, progress: Optional[Callable[[float], Optional[bool]]] = None) -> Result:
    """Solves every pixel of ``Y`` for the design ``A``.

    Parameters
    ----------
    Y : array_like, shape (N, H, W), (N, P) or (N,)
        float32 or float64 observations, observation first (NumPy arrays,
        PyTorch CPU tensors, anything with ``__array__`` or ``__dlpack__``).
        NaN and ±Inf are missing. C-ordered input is used where it lies, not
        copied; other layouts are copied once. A cube on disk (a
        ``numpy.memmap``, an h5py dataset) of shape (N, H, W) is read and
        solved a block of rows at a time within ``memory``, so that it may be
        larger than memory; only the result is held (see :func:`solve_file`
        to write that to disk too).
    A : array_like, shape (N, M), or Design
        The design matrix; a :class:`Design` reuses its factorization.
    weights : array_like, optional
        Of Y's shape, finite and >= 0; a weight of 0 (or NaN) marks the value missing.
    rcond : float, optional
        Singular values <= rcond·σ_max count as zero. Default: eps·max(|V|, M)
        per pixel, as ``numpy.linalg.lstsq(rcond=None)``.
    min_valid : int
        Pixels with fewer valid observations are not solved (status 3).
    ridge : float
        Tikhonov λ >= 0: minimises ||W^½(A_V x − y_V)||² + λ||x||².
    device : {"auto", "cpu", "cuda"}
        Where the fast paths run; "cuda" without a usable GPU raises RuntimeError.
    device_float64 : bool
        On a GPU, float64 throughout (default: float32 systems refined once).
    threads : int
        CPU threads; 0 = all.
    dtype : {None, "float32", "float64"}
        Type of ``x``; default Y's.
    memory : int, optional
        Working memory for the engine's chunks, in MB (default 256; 16 to
        1048576).
    stderr : bool
        Also each coefficient's standard error on the pixel's own valid rows
        (:attr:`Result.stderr`).
    cov : bool
        Also each pixel's whole covariance on its own valid rows
        (:attr:`Result.cov`).
    loss : {"l2", "l1", "huber", "huber:DELTA"}
        The loss on each pixel's weighted residuals f = W^½(A_V x − y_V):
        least squares; least absolute deviations, Σ|f| (exact: a vertex whose
        dual certificate proves it optimal); Huber's, f²/2 within δ and
        δ|f| − δ²/2 beyond, with δ given or each pixel's own 1.345 × 1.4826 ×
        the median absolute deviation of its least-squares residuals. Each
        pixel on its own valid rows, from its least-squares solution; a pixel
        that does not converge gets NaN and status 6 (not-converged).
    tol, max_iter : float, int
        Robust losses: Huber stops where a duality gap proves the objective
        within tol of its minimum; both stop at max_iter steps (not
        converged).
    temporal_coherence : bool
        Also MintPy's temporal coherence of the residuals, for phases in
        radians (:attr:`Result.temporal_coherence`).
    progress : callable, optional
        Called with the fraction done a few times a second (on the calling
        thread); a false return value (as Python tests truth: False, 0, an
        empty value; None goes on) cancels (:class:`Cancelled` is raised),
        and so does an exception it raises (raised again here).

    Returns
    -------
    Result
        For each pixel with valid rows V: the least-squares solution of
        ``A_V x = y_V`` of least norm. Overdetermined pixels of full rank get
        the unique solution (status 0); underdetermined or rank-deficient
        ones the minimum-norm solution (status 1); pixels without valid
        observations, or with fewer than ``min_valid``, get NaN (status 2, 3).

    Raises
    ------
    ValueError
        Bad input: shapes that do not fit, a design with NaN, a dtype other
        than float32/float64, negative or infinite weights, an array on a GPU.
    RuntimeError
        A numerical or device failure.
    Cancelled
        ``progress`` returned False.
    KeyboardInterrupt
        Ctrl-C during the solve (the GIL is released while it runs; it stops
        within a fraction of a second).
    """
    design = A if isinstance(A, Design) else Design(A)
    kw = dict(device_float64=bool(device_float64), stderr=bool(stderr), covariance=bool(cov),
              temporal_coherence=bool(temporal_coherence), loss=str(loss), tolerance=float(tol),
              max_iterations=_integer(max_iter, "max_iter", 1, 1 << 30),
              **_options(rcond, min_valid, ridge, device, threads, dtype, memory))
    if _on_disk(Y) or _on_disk(weights):
        return _solve_by_rows(Y, design, weights, progress, kw)
    cube, pixels = _as_cube(Y)
    w = None
    if weights is not None:
        w, _ = _as_cube(weights, "weights")
    return _result(_core.solve(cube, design._d, w, progress=progress, **kw), design.shape[1], pixels)


def _on_disk(a: Any) -> bool:
    """Whether ``a`` stays on disk and is read a block of rows at a time: a
    NumPy memmap or an h5py dataset."""
    return isinstance(a, np.memmap) or type(a).__module__.startswith("h5py")


def _let_go(a: Any) -> None:
    """Drops the pages of a memmap that a block read from this process's
    memory (the file and the page cache keep them); a copy-on-write
    memmap keeps its own."""
    m = getattr(a, "_mmap", None)
    if m is not None and getattr(a, "mode", "c") != "c" and hasattr(mmap, "MADV_DONTNEED"):
        try:
            m.madvise(mmap.MADV_DONTNEED)
        except (OSError, ValueError):
            pass


def _solve_by_rows(Y: Any, design: "Design", weights: Any, progress: Any, kw: Dict[str, Any]) -> Result:
    """``Y`` (N, H, W) on disk solved a block of rows at a time: each block,
    three quarters of the memory budget, read, solved and let go, so that a
    cube larger than memory is solved within it. Each pixel's answer is the
    engine's on its own valid rows, as for a cube in memory."""
    if len(Y.shape) != 3:
        raise ValueError(f"Y: expected 3 dimensions (N, H, W) for a cube on disk, found shape {tuple(Y.shape)}")
    N, H, W = (int(v) for v in Y.shape)
    if weights is not None and tuple(weights.shape) != (N, H, W):
        raise ValueError(f"weights: expected Y's shape {(N, H, W)}, found {tuple(weights.shape)}")
    row_bytes = N * W * np.dtype(Y.dtype).itemsize * (1 if weights is None else 2)
    rows = max(1, min(H, ((kw["memory_mb"] or 256) << 20) * 3 // 4 // max(1, row_bytes)))
    parts: Dict[str, np.ndarray] = {}
    totals: Dict[str, Any] = dict(paths={}, engine_seconds=0.0, warnings=[], device="cpu", device_pixels=0)
    for r0 in range(0, H, rows):
        r1 = min(H, r0 + rows)
        block = _as_values(Y[:, r0:r1, :], "Y")
        w = None if weights is None else _as_values(weights[:, r0:r1, :], "weights")
        report = None if progress is None else (lambda f, r0=r0, r1=r1: progress((r0 + f * (r1 - r0)) / H))
        r = _result(_core.solve(block, design._d, w, progress=report, **kw), design.shape[1], (r1 - r0, W))
        for f in dataclasses.fields(Result):
            v = getattr(r, f.name)
            if isinstance(v, np.ndarray):  # pixel-shaped: its last two axes are the rows and columns
                if f.name not in parts:
                    parts[f.name] = np.empty(v.shape[:-2] + (H, W), v.dtype)
                parts[f.name][..., r0:r1, :] = v
        for k, n in r.paths.items():
            totals["paths"][k] = totals["paths"].get(k, 0) + n
        totals["engine_seconds"] += r.engine_seconds
        totals["warnings"] += [m for m in r.warnings if m not in totals["warnings"]]
        totals["device"] = "cuda" if r.device == "cuda" else totals["device"]
        totals["device_pixels"] += r.device_pixels
        del block, w
        _let_go(Y)
        _let_go(weights)
    return Result(**parts, **totals)


def _result(r: Dict[str, Any], m: int, pixels: Tuple[int, ...]) -> Result:
    """The engine's answer for a cube of ``pixels`` and ``m`` unknowns, shaped as :class:`Result` says."""
    return Result(x=r["x"].reshape((m,) + pixels), n_valid=r["n_valid"].reshape(pixels),
                  rank=r["rank"].reshape(pixels), rss=r["rss"].reshape(pixels), status=r["status"].reshape(pixels),
                  cond=r["cond"].reshape(pixels), paths=dict(r["paths"]), engine_seconds=r["engine_seconds"],
                  warnings=list(r["warnings"]), device=r["device"], device_pixels=r["device_pixels"],
                  stderr=None if r["stderr"] is None else r["stderr"].reshape((m,) + pixels),
                  cov=None if r["covariance"] is None else _unpack(r["covariance"], m, pixels),
                  temporal_coherence=None if r["temporal_coherence"] is None else r["temporal_coherence"].reshape(pixels),
                  iterations=None if r["iterations"] is None else r["iterations"].reshape(pixels),
                  objective=None if r["objective"] is None else r["objective"].reshape(pixels))


def solve_file(Y: Union[str, "os.PathLike[str]"], A: Union[str, "os.PathLike[str]", ArrayLike, Design],
               out: Union[str, "os.PathLike[str]"], *, weights: Optional[Union[str, "os.PathLike[str]"]] = None,
               diag: Optional[str] = None, model: Optional[str] = None, residual: Optional[str] = None,
               pairs: Optional[str] = None, times: Optional[str] = None, rcond: Optional[float] = None,
               min_valid: int = 1, ridge: float = 0.0, device: str = "auto", device_float64: bool = False,
               threads: int = 0, dtype: Any = None, memory: Optional[int] = None, stderr: bool = False,
               cov: bool = False, loss: str = "l2", tol: float = 1e-6, max_iter: int = 500,
               progress: Optional[Callable[[float], Optional[bool]]] = None) -> Dict[str, Any]:
    """Solves the cube file ``Y`` into files without holding either in
    memory, as ``cubesolve-cli solve Y A -o out`` does: a block of rows at a
    time, its data within three quarters of ``memory`` (MB, default 256).

    ``Y`` is a ``.npy`` cube (N, H, W), a raster GDAL reads, or a MintPy
    ``ifgramStack.h5`` (with ``A="sbas"``: its network, read by MintPy's
    rules). ``A`` is a design file (``.npy``, ``.csv``), a built design
    (``"sbas"``, ``"poly:D"``, ``"harmonic:K[:P]"``, with ``pairs`` and
    ``times`` files as the CLI's), or a matrix or :class:`Design`. ``out``
    names the solution: ``.npy``, ``.tif`` (GeoTIFF, the cube's
    georeference) or, for a stack, ``timeseries.h5`` in MintPy's layout.
    ``diag`` is the prefix of the diagnostics (``PREFIX_status.npy``, ...;
    ``stderr`` and ``cov`` need it), ``model`` and ``residual`` files of the
    cube's shape. The other parameters are :func:`solve`'s. The files
    appear when all is written, or none does.

    Returns a dict: ``outputs`` (the files written), ``x_shape``,
    ``blocks`` and ``rows_per_block``, ``paths`` and ``status`` (pixels per
    path and per status name), ``engine_seconds`` and ``warnings``. Raises
    as :func:`solve`, and OSError for a file that cannot be read or written.
    """
    spec, design = (os.fspath(A), None) if isinstance(A, (str, os.PathLike)) else (None, A if isinstance(A, Design) else Design(A))
    return dict(_core.solve_file(
        os.fspath(Y), spec, None if design is None else design._d, pairs=os.fspath(pairs or ""),
        times=os.fspath(times or ""), weights=os.fspath(weights or ""), x=os.fspath(out), diag=os.fspath(diag or ""),
        model=os.fspath(model or ""), residual=os.fspath(residual or ""), device_float64=bool(device_float64),
        stderr=bool(stderr), covariance=bool(cov), loss=str(loss), tolerance=float(tol),
        max_iterations=_integer(max_iter, "max_iter", 1, 1 << 30), progress=progress,
        **_options(rcond, min_valid, ridge, device, threads, dtype, memory)))


def _unpack(packed: np.ndarray, m: int, pixels: Tuple[int, ...]) -> np.ndarray:
    """The engine's packed upper triangles (M(M+1)/2, ...) as symmetric (M, M) + pixels."""
    out = np.empty((m, m) + packed.shape[1:], dtype=packed.dtype)
    i, j = np.triu_indices(m)
    out[i, j] = packed
    out[j, i] = packed
    return out.reshape((m, m) + pixels)


def plan(Y: ArrayLike, A: Union[ArrayLike, Design], weights: Optional[ArrayLike] = None, *,
         min_valid: int = 1) -> Dict[str, Any]:
    """What ``cubesolve-cli info`` prints: missing values, the valid-count and
    mask-group histograms, and the pixels per path the engine plans for ``A``.

    Returns a dict with ``paths``, ``missing_fraction``, ``nan``, ``inf``,
    ``zero_weight``, ``no_data_pixels``, ``distinct_masks``,
    ``valid_count_histogram``, ``group_size_histogram`` and ``underdetermined``.
    """
    cube, _ = _as_cube(Y)
    design = A if isinstance(A, Design) else Design(A)
    w = None if weights is None else _as_cube(weights, "weights")[0]
    return dict(_core.plan(cube, design._d, w, int(min_valid)))


def read(
    path: str,
    *,
    ref_yx: Optional[Tuple[int, int]] = None,
    reference: bool = True,
    keep_zero: bool = False,
    mask_dataset: Optional[str] = None,
    mask_threshold: Optional[float] = None,
    weight_func: str = "no",
    looks: Optional[float] = None,
) -> Dict[str, Any]:
    """Reads a cube as the CLI does: ``.npy`` (any version, byte order,
    memory order), any raster GDAL opens (bands are observations, nodata is
    missing), or a MintPy ``ifgramStack.h5`` (its kept interferograms, read
    as MintPy's inversion reads them: referenced at the file's REF_Y/REF_X
    (or by its refPhase) where not 0, and 0 as missing).

    For a MintPy stack, as the CLI's options of the same names:
    ``ref_yx=(row, col)`` references at another pixel, ``reference=False``
    reads it unreferenced, ``keep_zero=True`` keeps exact zeros as data,
    ``mask_dataset`` ("connectComponent" or "coherence", with
    ``mask_threshold``, 0.4 if not given) masks values per pixel, and
    ``weight_func`` ("var", "fim" or "coh", with ``looks``; the file's if not
    given) returns MintPy's weights from the coherence as ``weights``.

    Returns a dict with ``cube`` (N, H, W); for rasters ``transform`` and
    ``projection``; for MintPy stacks ``design`` (the SBAS design), ``dates``
    (the first is the reference), ``pairs`` and, with a ``weight_func``,
    ``weights`` (N, H, W). Raises ``ValueError`` for a file that is not such
    a cube or for stack options on another cube, ``OSError`` when it cannot
    be read.
    """
    path = str(path)
    if "\0" in path:
        raise ValueError(f"{path!r}: expected a path, found a NUL character in it")
    if weight_func not in ("no", "var", "fim", "coh"):
        raise ValueError(f"weight_func: expected var, fim, coh or no, found '{weight_func}'")
    if looks is not None and not float(looks) >= 1:
        raise ValueError(f"looks: expected the number of independent looks (>= 1), found {looks!r}")
    if ref_yx is not None and not reference:
        raise ValueError("ref_yx: expected a reference pixel or reference=False, found both")
    ref_y, ref_x = (-1, -1) if ref_yx is None else (int(ref_yx[0]), int(ref_yx[1]))
    if ref_yx is not None and (ref_y < 0 or ref_x < 0):
        raise ValueError(f"ref_yx: expected a pixel as (row, column) >= 0, found {tuple(ref_yx)}")
    return dict(
        _core.read(
            path, ref_y, ref_x, bool(reference), bool(keep_zero), mask_dataset or "",
            None if mask_threshold is None else float(mask_threshold), weight_func,
            None if looks is None else float(looks),
        )
    )


def decimal_years(times: Any) -> np.ndarray:
    """Times as decimal years (float64): datetime64 (any unit; NaT is refused),
    cftime dates (any calendar: the fraction of their own year), or numbers,
    which are taken as given (in years for the yearly terms)."""
    t = np.asarray(getattr(times, "values", times))
    if t.dtype.kind == "M":
        if np.isnat(t).any():
            raise ValueError("times: expected dates, found NaT")
        year = t.astype("datetime64[Y]")
        start = year.astype(t.dtype)
        length = (year + 1).astype(t.dtype) - start
        return year.astype(np.int64) + 1970 + (t - start) / length
    if t.dtype.kind == "O" and t.size and hasattr(t.flat[0], "calendar"):  # cftime
        out = np.empty(t.shape)
        for k, d in enumerate(t.flat):
            first = type(d)(d.year, 1, 1, calendar=d.calendar)
            out.flat[k] = d.year + (d - first) / (type(d)(d.year + 1, 1, 1, calendar=d.calendar) - first)
        return out
    if t.dtype.kind not in "iuf":
        raise ValueError(f"times: expected datetime64, cftime dates or numbers, found {t.dtype}")
    t = t.astype(np.float64)
    if not np.isfinite(t).all():
        raise ValueError("times: expected finite values, found NaN or Inf")
    return t


def design(spec: str, n: int, *, pairs: Optional[str] = None, times: Any = None) -> np.ndarray:
    """A design matrix for ``n`` bands from a description, as the CLI builds
    it: ``"sbas"`` (from a pairs file of YYYYMMDD_YYYYMMDD lines), ``"poly:D"``
    or ``"harmonic:K[:P]"`` (times from a file of numbers or YYYYMMDD dates,
    or an array of n datetime64, cftime dates or numbers: see
    :func:`decimal_years`; band index without them), or a file (.npy, .csv)."""
    if times is None or isinstance(times, (str, os.PathLike)):
        return _core.make_design(spec, int(n), pairs or "", os.fspath(times) if times is not None else "")
    return _core.build_design(spec, int(n), [float(v) for v in decimal_years(times)])


def devices() -> List[str]:
    """One line per compute device ("cpu: 16 threads", "cuda: ...")."""
    return list(_core.devices())


def tuning() -> Dict[str, Any]:
    """The engine's machine-dependent parameters every solve uses, and where
    they came from: ``chunk_kib``, ``mixed_min``, ``wide``, ``origin``
    ("stored by bench --tune in ...", "derived from this machine (...)") and
    ``warnings`` (a stored file that could not be read). ``cubesolve-cli bench
    --tune`` searches and stores them; they change speed only, never results
    beyond the precision contract."""
    return dict(_core.tuning())
