// Robust losses (L1, Huber) on each pixel's own valid rows, from its
// least-squares solution.
//
// Each pixel's problem is taken to coordinates where it has full column
// rank: B = W_V^1/2 A_V Q (Q: the right singular vectors of its rank r, or
// I for full rank) and c = W_V^1/2 y_V, minimising Σρ(B z - c); x = Q z.
// - Huber: iteratively reweighted least squares (weights min(1, δ/|f|)),
//   a majorise-minimise scheme whose every step lowers the objective; when
//   its steps stop, Newton's steps on the rows within δ, and a duality gap
//   (u = ψ(f) projected onto the null space of B^T) must prove the
//   objective within the tolerance, or the reweightings go on.
// - L1: ADMM iterations on one factor of B^T B bring z near the optimum; the r
//   rows of smallest |f| (independent) define a vertex B_S z = c_S; the
//   simplex steps of Barrodale and Roberts follow: u_S = -B_S^-T g, g the
//   sum of sign(f_i) b_i outside S; |u_S| <= 1 proves the vertex optimal
//   (u is then a dual feasible point of equal objective), else a row k with
//   |u_k| > 1 (Bland's rule) leaves S along the direction that frees its
//   residual, to the weighted median of the breakpoints where another row
//   enters; B_S^-1 is kept and updated row by row (dense_steps). Where no
//   certified vertex comes within 8r + 40 steps, reweighting goes on until
//   a duality gap is within the tolerance.
// - A network design (SBAS, either formulation) works in the dates' phases,
//   where each row is a weighted difference of two dates: the reweightings
//   (L1's first ones, all of Huber's) run four pixels at a time in the
//   vector lanes (their band systems side by side, as the least-squares
//   solve forms them), an L1 vertex is a spanning tree of the pixel's
//   links, and each simplex step costs O(M) plus the rows across the cut it
//   moves (network_steps). A split network (rank below M) is solved the
//   same way on a forest rooted at date 0 and at each free component's
//   first date, then taken to minimum norm, without the SVD.
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>

#include "engine/band.hpp"
#include "engine/exact.hpp"
#include "engine/robust.hpp"
#include "engine/lapack.hpp"
#include "engine/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>

namespace cubesolve {

const char* loss_name(Loss loss) {
  switch (loss) {
    case Loss::L2: return "l2";
    case Loss::L1: return "l1";
    case Loss::Huber: return "huber";
  }
  return "?";
}

Loss parse_loss(const std::string& text, double& huber_delta, const std::string& what) {
  huber_delta = 0;
  if (text == "l2") return Loss::L2;
  if (text == "l1") return Loss::L1;
  if (text == "huber") return Loss::Huber;
  if (text.rfind("huber:", 0) == 0) {
    const std::string d = text.substr(6);
    char* end = nullptr;
    const double v = std::strtod(d.c_str(), &end);
    if (!d.empty() && end == d.c_str() + d.size() && v > 0 && std::isfinite(v)) {
      huber_delta = v;
      return Loss::Huber;
    }
  }
  throw InputError(what + ": expected l2, l1, huber or huber:DELTA (DELTA > 0), found '" + text + "'");
}

namespace detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kNetworkReweightings = 12;  // L1's reweightings before the vertex on a network
constexpr int kAdmmIterations = 30;       // L1's ADMM iterations before the vertex on a dense design
constexpr int kSettleSteps = 10;          // Huber's Newton steps after the reweightings
constexpr int kNewtonSteps = 40;          // ... and from the least-squares solution (not a network)

/// Huber's δ by default: 1.345 × 1.4826 × the MAD of the residuals f (or,
/// where that is 0, 1.345 × 1.2533 × their mean size).
double huber_delta(std::vector<double> f) {
  auto median = [](std::vector<double>& v) {
    const std::size_t h = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h), v.end());
    double m = v[h];
    if (v.size() % 2 == 0) m = 0.5 * (m + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h)));
    return m;
  };
  double mean = 0;
  for (double v : f) mean += std::fabs(v) / static_cast<double>(f.size());
  const double med = median(f);
  for (double& v : f) v = std::fabs(v - med);
  const double mad = median(f);
  return mad > 0 ? 1.345 * 1.4826 * mad : 1.345 * 1.2533 * mean;
}

/// One pixel's robust problem in full-rank coordinates, and its solver.
class RobustPixel {
public:
  RobustPixel(const SolveOptions& o) : o_(o) {}

  /// Sets up B (n, r) and c from the pixel's weighted rows; r its rank.
  /// Returns false where the SVD fails. A split network (rank below M) is
  /// solved on its dates' forest unless `forest` is false.
  bool setup(const Design& design, const int* rows, const double* sw, const double* y, std::size_t n, int rank,
             bool forest = true) {
    const std::size_t M = design.cols();
    n_ = n;
    m_ = M;
    plain_ = Plain::Unknown;
    c_.resize(n);
    for (std::size_t i = 0; i < n; ++i) c_[i] = y[i] * sw[i];
    r_ = static_cast<std::size_t>(std::max(rank, 0));
    // A banded design (an SBAS network): each reweighted system in band
    // form; a network's vertices as spanning trees, B never formed densely.
    const DesignFactors& f = design.factors();
    const bool banded = f.banded_gram && !f.row_start.empty();
    band_f_ = r_ == M && banded ? &f : nullptr;
    tree_ = band_f_ && f.network();
    roots_.assign(1, 0);
    if (!tree_ && forest && banded && f.network() && r_ > 0) tree_ = find_forest(f, rows, n);
    if (tree_) band_f_ = &f;
    if (band_f_) {
      rows_.assign(rows, rows + n);
      sw_.assign(sw, sw + n);
    }
    q_.clear();
    if (tree_) {  // each row as k_i (φ_to - φ_from) in the dates' phases (see factor_tree)
      link_.resize(n);
      link_band_ = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const auto row = static_cast<std::size_t>(rows[i]);
        const int to = f.link_to[row], from = f.link_from[row];
        link_[i] = to < 0 ? Link{0, 0, 0.0} : Link{from, to, sw[i] * f.nz_val[f.row_start[row + 1] - 1] * f.null_to[to - 1]};
        if (to >= 0 && from > 0) link_band_ = std::max(link_band_, static_cast<std::size_t>(to - from));
      }
      return true;
    }
    a_.resize(n * M);  // column-major (n, M)
    for (std::size_t j = 0; j < M; ++j)
      for (std::size_t i = 0; i < n; ++i) a_[i + j * n] = design(static_cast<std::size_t>(rows[i]), j) * sw[i];
    if (r_ == M) {
      b_ = a_;
      return true;
    }
    // Q: the first r right singular vectors of the pixel's weighted rows.
    std::vector<double> work = a_, s(std::min(n, M)), u(n * std::min(n, M)), vt(std::min(n, M) * M);
    if (lapack::svd(static_cast<int>(n), static_cast<int>(M), work.data(), s.data(), u.data(), vt.data()) != 0) return false;
    const std::size_t k = std::min(n, M);
    q_.assign(M * r_, 0.0);  // column-major (M, r)
    for (std::size_t c = 0; c < r_; ++c)
      for (std::size_t j = 0; j < M; ++j) q_[j + c * M] = vt[c + j * k];
    b_.assign(n * r_, 0.0);
    lapack::gemm('N', 'N', static_cast<int>(n), static_cast<int>(r_), static_cast<int>(M), 1.0, a_.data(), static_cast<int>(n),
                 q_.data(), static_cast<int>(M), 0.0, b_.data(), static_cast<int>(n));
    return true;
  }

  /// Whether a split network's free components (see free_components) number
  /// M - r; their first dates then root its forest beside date 0, their
  /// phases held at 0, and the solution is taken to minimum norm.
  bool find_forest(const DesignFactors& f, const int* rows, std::size_t n) {
    std::vector<double> wt(f.n * kLanes, 0.0);
    for (std::size_t i = 0; i < n; ++i) wt[static_cast<std::size_t>(rows[i]) * kLanes] = 1;
    comp_.resize(f.m + 1);
    if (free_components(f, wt.data(), 0, comp_.data()) != f.m - r_) return false;
    for (std::size_t d = 1; d <= f.m; ++d)
      if (comp_[d] == static_cast<int>(d)) roots_.push_back(d);
    return true;
  }

  /// Whether the pixel is a split network solved on its forest.
  bool split() const { return roots_.size() > 1; }

  /// Starts from x0 (M, the least-squares solution): z = Q^T x0; or, where
  /// warmed >= 0, from L1's first reweightings, that many done.
  void start(const double* x0, int warmed = -1) {
    warmed_ = warmed;
    z_.assign(q_.empty() ? m_ : r_, 0.0);
    if (q_.empty()) std::copy(x0, x0 + m_, z_.begin());
    else
      for (std::size_t c = 0; c < r_; ++c)
        for (std::size_t j = 0; j < m_; ++j) z_[c] += q_[j + c * m_] * x0[j];
  }

  /// Minimises the loss from the start; the iterations taken, -1 where the
  /// cap was reached or a system was singular. (Huber warmed >= 0: the
  /// lanes' reweightings have stopped; settled there, or reweighted on.)
  int run(double delta) {
    delta_ = delta;
    if (n_ <= r_) return 0;  // the rows are fitted exactly
    if (o_.loss == Loss::Huber) {
      int it = std::max(warmed_, 0);
      const int steps = warmed_ >= 0 ? kSettleSteps : kNewtonSteps;
      return (warmed_ >= 0 || !tree_) && huber_settled(it, steps) ? it : huber(it);
    }
    return l1();
  }

  /// x = Q z (M).
  void result(double* x) const {
    if (q_.empty()) std::copy(z_.begin(), z_.end(), x);
    else
      for (std::size_t j = 0; j < m_; ++j) {
        x[j] = 0;
        for (std::size_t c = 0; c < r_; ++c) x[j] += q_[j + c * m_] * z_[c];
      }
  }

  /// The objective and Σ f² at z.
  std::pair<double, double> objective() {
    residuals();
    double obj = 0, ss = 0;
    for (double v : f_) {
      const double a = std::fabs(v);
      obj += o_.loss == Loss::L1 ? a : a <= delta_ ? 0.5 * v * v : delta_ * a - 0.5 * delta_ * delta_;
      ss += v * v;
    }
    return {obj, ss};
  }

  /// The weighted least-squares residuals' robust scale: δ by default.
  double default_delta() {
    residuals();
    return huber_delta(f_);
  }

private:
  void residuals() {
    f_.assign(n_, 0.0);
    if (band_f_) {  // over the rows' nonzeros
      for (std::size_t i = 0; i < n_; ++i) f_[i] = row_dot(i, z_) - c_[i];
      return;
    }
    for (std::size_t i = 0; i < n_; ++i) f_[i] = -c_[i];
    for (std::size_t c = 0; c < r_; ++c)
      for (std::size_t i = 0; i < n_; ++i) f_[i] += b_[i + c * n_] * z_[c];
  }

  /// z <- argmin Σ g_i (b_i z - c_i)²; false where the system is singular.
  bool reweighted(const std::vector<double>& g) {
    if (band_f_) {  // B = W^1/2 A_V: row i's nonzeros are A's times sw_i
      const DesignFactors& f = *band_f_;
      weight_.resize(n_);
      rhs_.assign(r_, 0.0);
      for (std::size_t i = 0; i < n_; ++i) {
        weight_[i] = g[i] * sw_[i] * sw_[i];
        const auto row = static_cast<std::size_t>(rows_[i]);
        for (std::size_t p = f.row_start[row]; p < f.row_start[row + 1]; ++p) rhs_[f.nz_col[p]] += g[i] * sw_[i] * f.nz_val[p] * c_[i];
      }
      band_.assemble(f, rows_.data(), weight_.data(), n_);
      if (!band_.factor()) return false;
      band_.solve(rhs_.data());
      z_ = rhs_;
      return true;
    }
    const int r = static_cast<int>(r_), n = static_cast<int>(n_);
    gc_.resize(n_);
    rhs_.resize(r_);
    std::size_t low = 0;  // rows weighted below 1
    bool capped = true;
    for (std::size_t i = 0; i < n_; ++i) {
      gc_[i] = g[i] * c_[i];
      low += g[i] < 1;
      capped = capped && g[i] <= 1;
    }
    lapack::gemv(n, r, b_.data(), n, gc_.data(), rhs_.data(), 'T');  // B^T G c
    if (!(capped && 2 * low <= n_ && plain() && downdated(g, low)) && !direct(g)) return false;
    lapack::cholesky_upper_solve(r, gram_.data(), r, rhs_.data());
    z_ = rhs_;
    return true;
  }

  /// gram_ <- the factor of B^T G B from its rows (r² n multiply-adds).
  bool direct(const std::vector<double>& g) {
    const int r = static_cast<int>(r_), n = static_cast<int>(n_);
    scaled_.resize(n_ * r_);
    weight_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) weight_[i] = std::sqrt(g[i]);
    for (std::size_t c = 0; c < r_; ++c)
      for (std::size_t i = 0; i < n_; ++i) scaled_[i + c * n_] = b_[i + c * n_] * weight_[i];
    gram_.assign(r_ * r_, 0.0);
    const double one = 1.0, zero = 0.0;
    dsyrk_("U", "T", &r, &n, &one, scaled_.data(), &n, &zero, gram_.data(), &r, 1, 1);  // (G^1/2 B)^T (G^1/2 B)
    return lapack::cholesky_upper(r, gram_.data(), r) == 0;
  }

  /// gram_ <- the factor of B^T G B as B^T B less Σ (1 - g_i) b_i b_i^T over
  /// the `low` rows with g_i < 1 (r² low multiply-adds; Newton's steps and
  /// most reweightings leave most rows at 1). False where that does not
  /// factor (B^T B's rounding, which this form keeps, can outweigh what
  /// the rows at 1 leave): the direct form then decides.
  bool downdated(const std::vector<double>& g, std::size_t low) {
    const int r = static_cast<int>(r_), k = static_cast<int>(low);
    gram_ = plain_g_;
    if (k > 0) {
      scaled_.resize(low * r_);
      for (std::size_t i = 0, a = 0; i < n_; ++i) {
        if (!(g[i] < 1)) continue;
        const double w = std::sqrt(1 - g[i]);
        for (std::size_t c = 0; c < r_; ++c) scaled_[a + c * low] = b_[i + c * n_] * w;
        ++a;
      }
      const double minus = -1.0, one = 1.0;
      dsyrk_("U", "T", &r, &k, &minus, scaled_.data(), &k, &one, gram_.data(), &r, 1, 1);
    }
    return lapack::cholesky_upper(r, gram_.data(), r) == 0;
  }

  /// reweighted on a network, in the dates' phases: Σ g_i k_i² (e_to -
  /// e_from)(e_to - e_from)^T φ = Σ g_i k_i c_i (e_to - e_from) over dates
  /// 1..M (φ_0 = 0) in band form from the rows' links, then z = K φ and the
  /// residuals k_i (φ_to - φ_from) - c_i.
  bool network_reweighted(const std::vector<double>& g) {
    const DesignFactors& f = *band_f_;
    const std::size_t M = f.m;
    band_.m = M;
    band_.w = link_band_;
    band_.b.assign((link_band_ + 1) * M, 0.0);
    rhs_.assign(M + 1, 0.0);
    for (std::size_t i = 0; i < n_; ++i) {
      const Link& l = link_[i];
      if (l.k == 0) continue;
      const double w = g[i] * l.k * l.k, v = g[i] * l.k * c_[i];
      const auto to = static_cast<std::size_t>(l.to - 1);
      band_.at(to, to) += w;
      rhs_[l.to] += v;
      if (l.from == 0) continue;
      const auto from = static_cast<std::size_t>(l.from - 1);
      band_.at(from, from) += w;
      band_.at(from, to) -= w;
      rhs_[l.from] -= v;
    }
    for (std::size_t q = 1; q < roots_.size(); ++q) {  // a free component's first date held at 0
      const std::size_t d = roots_[q] - 1;
      for (std::size_t e = 1; e <= link_band_; ++e) {
        if (e <= d) band_.at(d - e, d) = 0;
        if (d + e < M) band_.at(d, d + e) = 0;
      }
      band_.at(d, d) = 1;
      rhs_[d + 1] = 0;
    }
    if (!band_.factor()) return false;
    band_.solve(rhs_.data() + 1);
    phi_.swap(rhs_);
    phi_[0] = 0;
    z_from_phases();
    f_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) f_[i] = link_[i].k * (phi_[link_[i].to] - phi_[link_[i].from]) - c_[i];
    return true;
  }

  /// The reweightings from z (`from` done before) until their steps stop
  /// lowering the objective and z is settled (huber_settled).
  int huber(int from = 0) {
    double obj = objective().first;
    std::vector<double> g(n_);
    for (int it = from + 1; it <= o_.max_iterations; ++it) {
      for (std::size_t i = 0; i < n_; ++i) g[i] = std::fabs(f_[i]) <= delta_ ? 1.0 : delta_ / std::fabs(f_[i]);
      const std::vector<double> before = z_;
      if (!(tree_ ? network_reweighted(g) : reweighted(g))) return -1;
      double next = objective().first;
      const bool worse = next > obj;  // rounding: keep the better
      if (worse) z_ = before, next = objective().first;
      if (worse || obj - next <= 1e-3 * o_.tolerance * next) {
        if (!huber_settled(it)) {
          obj = objective().first;
          continue;
        }
        if (split() && !minimum_norm(*band_f_, comp_.data(), roots_.size() - 1, z_.data())) return -1;
        objective();
        return it;
      }
      obj = next;
    }
    return -1;
  }

  /// Newton's steps from z (`it` counts them), then whether z is within
  /// the tolerance of the minimum by a duality gap (huber_bound). Without a
  /// gap at hand (a split network, B^T B not factored) the reweightings'
  /// rule alone decides.
  bool huber_settled(int& it, int steps = kSettleSteps) {
    it = newton(it, steps);
    double lower = 0, slack = 0;
    const double obj = objective().first;
    return split() || !huber_bound(lower, slack) || obj - lower <= o_.tolerance * obj + slack;
  }

  /// A lower bound on the Huber optimum (weak duality): u = ψ(f) = f
  /// clipped to [-δ, δ], less its part in B's range and scaled by the best
  /// s in [0, δ/|u|_∞], gives -Σ u²/2 - c^T u. False where B^T B does not
  /// factor. slack: the rounding of the bound and of the objective (64 eps
  /// times their terms' magnitudes), under which a gap means nothing.
  bool huber_bound(double& lower, double& slack) {
    std::vector<double> u(n_);
    for (std::size_t i = 0; i < n_; ++i) u[i] = std::max(-delta_, std::min(delta_, f_[i]));
    if (!null_part(u)) return false;
    double top = delta_, a = 0, b = 0;  // D(s u) = -a s² - b s, s in [0, δ/top]
    for (std::size_t i = 0; i < n_; ++i) {
      top = std::max(top, std::fabs(u[i]));
      a += 0.5 * u[i] * u[i];
      b += c_[i] * u[i];
    }
    const double s = a > 0 ? std::max(0.0, std::min(delta_ / top, -b / (2 * a))) : 0.0;
    lower = -(a * s + b) * s;
    slack = 0;
    for (std::size_t i = 0; i < n_; ++i) slack += std::fabs(c_[i] * u[i] * s) + std::fabs(f_[i]) * (std::fabs(c_[i]) + delta_);
    slack *= 64 * std::numeric_limits<double>::epsilon();
    return true;
  }

  /// u <- its part in the null space of B^T, u - B (B^T B)^-1 B^T u: the
  /// duality gaps' dual points. False where B^T B does not factor.
  bool null_part(std::vector<double>& u) {
    if (!plain()) return false;
    std::vector<double> bu(r_, 0.0);
    for (std::size_t i = 0; i < n_; ++i) row_axpy(i, u[i], bu);
    if (band_f_) plain_band_.solve(bu.data());
    else lapack::cholesky_upper_solve(static_cast<int>(r_), plain_gram_.data(), static_cast<int>(r_), bu.data());
    for (std::size_t i = 0; i < n_; ++i) u[i] -= row_dot(i, bu);
    return true;
  }

  /// B^T B and its factor (plain_gram_, or plain_band_ for a banded
  /// design), formed once per pixel (z and f are left as they were).
  /// False where it does not factor.
  bool plain() {
    if (plain_ != Plain::Unknown) return plain_ == Plain::Factored;
    plain_ = Plain::Singular;
    if (band_f_) {
      const std::vector<double> z = z_, ones(n_, 1.0);
      if (reweighted(ones)) plain_ = Plain::Factored;  // the factor, left in band_
      plain_band_ = band_;
      z_ = z;
      return plain_ == Plain::Factored;
    }
    const int r = static_cast<int>(r_), n = static_cast<int>(n_);
    const double one = 1.0, zero = 0.0;
    plain_g_.assign(r_ * r_, 0.0);
    dsyrk_("U", "T", &r, &n, &one, b_.data(), &n, &zero, plain_g_.data(), &r, 1, 1);
    plain_gram_ = plain_g_;
    if (lapack::cholesky_upper(r, plain_gram_.data(), r) == 0) plain_ = Plain::Factored;
    return plain_ == Plain::Factored;
  }

  /// Newton's steps from z (Huber), after the reweightings: the objective
  /// is quadratic on the rows within δ (E) and linear beyond, so once E is
  /// right one step lands on the minimiser, which the reweightings only
  /// approach (by 1e-5 of the objective on some pixels when their steps
  /// stop). A step solves B_E^T B_E z = B_E^T c_E - δ Σ_i∉E sign(f_i) b_i,
  /// by the reweighted solve with the rows beyond δ weighted kFar and their
  /// values those of the linear term, and goes as far along it as lowers
  /// the objective most (line_min). Where E lacks the rank, the step's part
  /// beyond E's row space is 1/kFar too long, which the line search cuts.
  /// It stops where a full step keeps E (the minimiser of that piece) or
  /// lowers nothing; the duality gap then decides. Returns `it` plus the
  /// steps.
  int newton(int it, int steps) {
    constexpr double kFar = 1e-10;
    double obj = objective().first;
    std::vector<double> g(n_), f0;
    const std::vector<double> c = c_;
    for (int k = 0; k < steps && it < o_.max_iterations; ++k) {
      for (std::size_t i = 0; i < n_; ++i) {
        const bool in = std::fabs(f_[i]) <= delta_;
        g[i] = in ? 1.0 : kFar;
        if (!in) c_[i] = -delta_ * (f_[i] > 0 ? 1.0 : -1.0) / kFar;
      }
      const std::vector<double> before = z_;
      f0 = f_;
      const bool solved = tree_ ? network_reweighted(g) : reweighted(g);
      c_ = c;
      if (!solved) z_ = before;
      residuals();
      for (std::size_t i = 0; i < n_; ++i) f_[i] -= f0[i];  // the step's change of each residual
      const double t = line_min(f0, f_);
      bool kept = t == 1;
      for (std::size_t j = 0; j < z_.size(); ++j) z_[j] = before[j] + t * (z_[j] - before[j]);
      const double next = objective().first;
      if (!(next < obj)) {  // no lower: the minimiser, to rounding
        z_ = before;
        objective();
        break;
      }
      ++it;
      for (std::size_t i = 0; i < n_ && kept; ++i)  // E and the signs beyond it as the step took them
        kept = g[i] == 1.0 ? std::fabs(f_[i]) <= delta_ : std::fabs(f_[i]) > delta_ && (f_[i] > 0) == (f0[i] > 0);
      const bool settled = kept || obj - next <= 1e-15 * next;
      obj = next;
      if (settled) break;
    }
    return it;
  }

  /// The t in [0, 1] that minimises Σρ(f_i + t s_i) (Huber): where its
  /// derivative Σψ(f_i + t s_i) s_i, piecewise linear and rising, reaches
  /// 0, found over the rows' crossings of ±δ in order.
  double line_min(const std::vector<double>& f, const std::vector<double>& s) const {
    double a = 0, h = 0;  // the derivative at t: a + t h
    struct Cross {
      double t, side;  // where row i's value reaches side (±δ)
      std::size_t i;
      bool operator<(const Cross& o) const { return t < o.t; }
    };
    std::vector<Cross> cross;
    for (std::size_t i = 0; i < n_; ++i) {
      if (std::fabs(f[i]) <= delta_) a += f[i] * s[i], h += s[i] * s[i];
      else a += (f[i] > 0 ? delta_ : -delta_) * s[i];
      if (s[i] == 0) continue;
      for (const double side : {-delta_, delta_}) {
        const double t = (side - f[i]) / s[i];
        if (t > 0 && t < 1) cross.push_back({t, side, i});
      }
    }
    std::sort(cross.begin(), cross.end());
    for (const Cross& x : cross) {
      if (a + x.t * h >= 0) return h > 0 ? std::max(0.0, -a / h) : 0.0;
      const double fs = f[x.i] * s[x.i], ss = s[x.i] * s[x.i], outside = x.side * s[x.i];
      if ((x.side > 0) == (s[x.i] < 0)) a += fs - outside, h += ss;  // row i enters E (towards 0)
      else a -= fs - outside, h -= ss;                                // or leaves it
    }
    if (a + h <= 0) return 1.0;
    return h > 0 ? std::max(0.0, std::min(1.0, -a / h)) : 0.0;
  }

  int l1() {
    residuals();
    double scale = 0;
    for (double v : c_) scale = std::max(scale, std::fabs(v));
    const double eps = 1e-9 * std::max(scale, 1e-300);
    zero_ = 1e-12 * std::max(scale, 1e-300);
    std::vector<double> g(n_);
    // Near the optimum: on a network reweightings (unless done in lanes),
    // on a dense design ADMM iterations, which reuse one factorization.
    int it = std::max(warmed_, 0);
    if (warmed_ < 0 && !tree_) it = admm(std::min(o_.max_iterations, kAdmmIterations));
    for (; warmed_ < 0 && tree_ && it < std::min(o_.max_iterations, kNetworkReweightings); ++it) {
      for (std::size_t i = 0; i < n_; ++i) g[i] = 1.0 / std::max(std::fabs(f_[i]), eps);
      if (!network_reweighted(g)) break;
    }
    if (!vertex()) return -1;
    // Values fitted exactly make vertices degenerate (more rows at 0 than
    // unknowns), where the steps could cycle: they run on the values moved
    // by a few 1e-10 of each row's own size (|c_i| + |b_i z|: the classic
    // perturbation; of the largest value, it would swamp the rows that
    // weights make small), whose optimal vertex is optimal for the values
    // themselves, then z is taken on that vertex from the values as they are.
    const std::vector<double> c = c_;
    for (std::size_t i = 0; i < n_; ++i) {
      std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 31;
      const double own = std::max(std::fabs(c_[i]) + std::fabs(row_dot(i, z_)), 1e-300 * std::max(scale, 1e-300));
      c_[i] += 1e-10 * own * (static_cast<double>(h % 2001) / 1000.0 - 1.0);
    }
    zero_ = 0;  // (no value sits on 0 now but by the steps')
    const std::vector<double> z_start = z_;
    const int budget = std::min(o_.max_iterations, it + 8 * static_cast<int>(r_) + 40);
    const int step = tree_ ? network_steps(it, budget) : dense_steps(it, budget);
    c_ = c;
    zero_ = 1e-12 * std::max(scale, 1e-300);
    if (step != 0) {  // no certified vertex within the steps: reweighting to a duality gap
      z_ = z_start;
      return l1_gap(it, eps);
    }
    if (tree_) return tree_solution() ? it + 1 : -1;
    std::vector<double> zs(r_);
    for (std::size_t a = 0; a < r_; ++a) zs[a] = c_[s_[a]];
    if (!factor_s()) return -1;
    solve_s(zs);
    z_ = zs;
    return it + 1;
  }

  /// Reweighted least squares until the duality gap is within the
  /// tolerance: u = sign(f) projected onto the null space of B^T and scaled
  /// into [-1, 1] is dual feasible, so -u^T c bounds the optimum from below.
  int l1_gap(int it, double eps) {
    std::vector<double> g(n_), u(n_);
    for (; it < o_.max_iterations; ++it) {
      residuals();
      double obj = 0;
      for (std::size_t i = 0; i < n_; ++i) {
        obj += std::fabs(f_[i]);
        u[i] = f_[i] / std::max(std::fabs(f_[i]), eps);
      }
      if (!null_part(u)) return -1;
      double top = 1, lower = 0;
      for (std::size_t i = 0; i < n_; ++i) top = std::max(top, std::fabs(u[i]));
      for (std::size_t i = 0; i < n_; ++i) lower -= u[i] / top * c_[i];
      if (obj - lower <= o_.tolerance * obj || obj <= zero_) return it + 1;
      for (std::size_t i = 0; i < n_; ++i) g[i] = 1.0 / std::max(std::fabs(f_[i]), eps);
      if (!reweighted(g)) return -1;
    }
    return -1;
  }

  /// S: r independent rows of smallest |f| (Gram-Schmidt on the rows).
  bool vertex() {
    std::vector<std::size_t> order;
    by_residual(order);
    s_.clear();
    if (tree_) return spanning_vertex(order);
    std::vector<double> basis;  // orthonormal, r-vectors
    double largest = 0;
    for (std::size_t i = 0; i < n_; ++i)
      for (std::size_t c = 0; c < r_; ++c) largest = std::max(largest, std::fabs(b_[i + c * n_]));
    std::vector<double> v(r_), d(r_), back(r_);
    for (std::size_t k = 0; k < n_ && s_.size() < r_; ++k) {
      const std::size_t i = order[k];
      double norm0 = 0;
      for (std::size_t c = 0; c < r_; ++c) norm0 += (v[c] = b_[i + c * n_]) * v[c];
      const int r = static_cast<int>(r_), q = static_cast<int>(s_.size());
      for (int pass = 0; pass < 2 && q > 0; ++pass) {  // classical Gram-Schmidt, twice (as stable as modified)
        lapack::gemv(r, q, basis.data(), r, v.data(), d.data(), 'T');
        lapack::gemv(r, q, basis.data(), r, d.data(), back.data());
        for (std::size_t c = 0; c < r_; ++c) v[c] -= back[c];
      }
      double norm = 0;
      for (double e : v) norm += e * e;
      if (!(norm > 1e-20 * std::max(norm0, 1e-300)) || std::sqrt(norm) <= 1e-12 * largest) continue;
      for (double& e : v) e /= std::sqrt(norm);
      basis.insert(basis.end(), v.begin(), v.end());
      s_.push_back(i);
    }
    return s_.size() == r_;
  }

  /// ADMM on min Σ|e| subject to e = B z - c: z <- (B^T B)^-1 B^T (c + e -
  /// v) with B^T B's Cholesky factored once, e <- soft(B z - c + v, 1/ρ),
  /// v <- v + B z - c - e; 1/ρ the least-squares residuals' mean size.
  /// Returns the iterations done (none where the residuals are 0).
  int admm(int iterations) {
    std::vector<double> ones(n_, 1.0), e = f_, v(n_, 0.0), t(n_), rhs(r_);
    double kappa = 0;  // 1/ρ
    for (double x : f_) kappa += std::fabs(x) / static_cast<double>(n_);
    const std::vector<double> z0 = z_;
    if (iterations <= 0 || !(kappa > 0) || !reweighted(ones)) {
      z_ = z0;
      residuals();
      return 0;
    }
    const BandGram band = band_;  // a banded design's factor (see reweighted), else gram_'s
    const std::vector<double> factor = gram_;
    for (int k = 0; k < iterations; ++k) {
      for (std::size_t i = 0; i < n_; ++i) t[i] = c_[i] + e[i] - v[i];
      bmul(t.data(), rhs.data(), true);
      if (band_f_) band.solve(rhs.data());
      else lapack::cholesky_upper_solve(static_cast<int>(r_), factor.data(), static_cast<int>(r_), rhs.data());
      z_ = rhs;
      residuals();
      for (std::size_t i = 0; i < n_; ++i) {
        t[i] = f_[i] + v[i];
        e[i] = t[i] > kappa ? t[i] - kappa : t[i] < -kappa ? t[i] + kappa : 0.0;
        v[i] = t[i] - e[i];
      }
    }
    return iterations;
  }

  /// The rows in order of |f| to a relative 2^-20 (the order only chooses
  /// the first vertex), ties by row: a radix sort of |f|'s upper 32 bits.
  void by_residual(std::vector<std::size_t>& order) const {
    std::vector<std::uint32_t> key(n_), next_key(n_);
    std::vector<std::size_t> next(n_);
    order.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) {
      std::uint64_t bits;
      const double a = std::fabs(f_[i]);
      std::memcpy(&bits, &a, sizeof bits);
      key[i] = static_cast<std::uint32_t>(bits >> 32);
      order[i] = i;
    }
    for (int shift = 0; shift < 32; shift += 8) {
      std::size_t count[257] = {};
      for (std::uint32_t k : key) ++count[((k >> shift) & 255) + 1];
      if (count[((key[0] >> shift) & 255) + 1] == n_) continue;  // one digit throughout
      for (std::size_t d = 0; d < 256; ++d) count[d + 1] += count[d];
      for (std::size_t x = 0; x < n_; ++x) {
        const std::size_t to = count[(key[x] >> shift) & 255]++;
        next[to] = order[x];
        next_key[to] = key[x];
      }
      order.swap(next);
      key.swap(next_key);
    }
  }

  /// A network's rows are independent where their date pairs make no cycle
  /// (with date 0, whose column is the reference): the greedy choice above
  /// is Kruskal's spanning tree over the pixel's rows by |f|, kept by
  /// union-find.
  bool spanning_vertex(const std::vector<std::size_t>& order) {
    const DesignFactors& f = *band_f_;
    root_.resize(f.m + 1);
    std::iota(root_.begin(), root_.end(), std::size_t{0});
    auto find = [&](std::size_t a) {
      while (root_[a] != a) a = root_[a] = root_[root_[a]];
      return a;
    };
    for (std::size_t k = 0; k < n_ && s_.size() < r_; ++k) {
      const std::size_t i = order[k];
      if (link_[i].k == 0) continue;  // a row of zeros
      const std::size_t a = find(static_cast<std::size_t>(link_[i].from)), b = find(static_cast<std::size_t>(link_[i].to));
      if (a == b) continue;
      root_[a] = b;
      s_.push_back(i);
    }
    return s_.size() == r_;
  }

  /// b_i v and v += alpha b_i, over the row's nonzeros on a banded design.
  double row_dot(std::size_t i, const std::vector<double>& v) const {
    double sum = 0;
    if (band_f_) {
      const auto row = static_cast<std::size_t>(rows_[i]);
      for (std::size_t p = band_f_->row_start[row]; p < band_f_->row_start[row + 1]; ++p) sum += band_f_->nz_val[p] * v[band_f_->nz_col[p]];
      return sum * sw_[i];
    }
    for (std::size_t c = 0; c < r_; ++c) sum += b_[i + c * n_] * v[c];
    return sum;
  }
  void row_axpy(std::size_t i, double alpha, std::vector<double>& v) const {
    if (band_f_) {
      const auto row = static_cast<std::size_t>(rows_[i]);
      for (std::size_t p = band_f_->row_start[row]; p < band_f_->row_start[row + 1]; ++p)
        v[band_f_->nz_col[p]] += alpha * sw_[i] * band_f_->nz_val[p];
      return;
    }
    for (std::size_t c = 0; c < r_; ++c) v[c] += alpha * b_[i + c * n_];
  }

  /// Factors B_S (LU); false where it is singular. (A network's S is a
  /// tree: see factor_tree.)
  bool factor_s() {
    lu_.assign(r_ * r_, 0.0);
    for (std::size_t a = 0; a < r_; ++a)
      for (std::size_t c = 0; c < r_; ++c) lu_[a + c * r_] = b_[s_[a] + c * n_];
    piv_.resize(r_);
    int info = 0;
    const int n = static_cast<int>(r_);
    dgetrf_(&n, &n, lu_.data(), &n, piv_.data(), &info);
    return info == 0;
  }
  /// In the dates' phases φ (φ_0 = 0; z_j = null_to_j φ_j+1 - null_from_j φ_j),
  /// row i of a network is k_i (φ_to - φ_from), k_i its weight times its
  /// nonzero at to - 1 times null_to there: B_S = E K^-1 with E the tree's
  /// scaled incidence. S's edges, in breadth-first order from the roots
  /// (date 0; a split network's free components' first dates, whose phases
  /// are held at 0), for solves in O(M); false where S is not a spanning
  /// forest of them.
  bool factor_tree() {
    const DesignFactors& f = *band_f_;
    const std::size_t nodes = f.m + 1;
    edge_.resize(r_);
    for (std::size_t a = 0; a < r_; ++a) {
      const Link& l = link_[s_[a]];
      if (l.k == 0) return false;
      edge_[a] = {static_cast<std::size_t>(l.from), static_cast<std::size_t>(l.to), l.k};
    }
    // Breadth-first from the roots over the edges (adjacency by counting sort).
    start_.assign(nodes + 1, 0);
    for (const Edge& e : edge_) ++start_[e.from + 1], ++start_[e.to + 1];
    for (std::size_t k = 0; k < nodes; ++k) start_[k + 1] += start_[k];
    adjacent_.resize(2 * r_);
    fill_.assign(start_.begin(), start_.end() - 1);
    for (std::size_t a = 0; a < r_; ++a) adjacent_[fill_[edge_[a].from]++] = adjacent_[fill_[edge_[a].to]++] = a;
    order_ = roots_;
    parent_.assign(nodes, r_);  // the edge to each date's parent; r_: none yet, r_ + 1: a root
    for (const std::size_t d : roots_) parent_[d] = r_ + 1;
    for (std::size_t q = 0; q < order_.size(); ++q) {
      const std::size_t k = order_[q];
      for (std::size_t x = start_[k]; x < start_[k + 1]; ++x) {
        const std::size_t a = adjacent_[x], other = edge_[a].from == k ? edge_[a].to : edge_[a].from;
        if (parent_[other] != r_ || !(edge_[a].coef != 0)) continue;
        parent_[other] = a;
        order_.push_back(other);
      }
    }
    return order_.size() == nodes;
  }

  /// phi_: the dates' phases where S's rows take the values rhs (by edge),
  /// E φ = rhs from date 0 out.
  void tree_phases(const std::vector<double>& rhs) {
    const std::size_t M = band_f_->m;
    phi_.assign(M + 1, 0.0);
    for (std::size_t q = roots_.size(); q <= M; ++q) {
      const std::size_t k = order_[q], a = parent_[k];
      const Edge& e = edge_[a];
      phi_[k] = k == e.to ? phi_[e.from] + rhs[a] / e.coef : phi_[e.to] - rhs[a] / e.coef;
    }
  }
  /// z = K φ (M), from phi_.
  void z_from_phases() {
    const DesignFactors& f = *band_f_;
    z_.resize(f.m);
    for (std::size_t j = 0; j < f.m; ++j) z_[j] = f.null_to[j] * phi_[j + 1] - f.null_from[j] * phi_[j];
  }
  /// z at the vertex S from c; a split network's of minimum norm (false
  /// where that projection does not settle).
  bool tree_solution() {
    std::vector<double> u(r_);
    if (!tree_vertex(u)) return false;
    z_from_phases();
    return roots_.size() == 1 || minimum_norm(*band_f_, comp_.data(), roots_.size() - 1, z_.data());
  }
  /// E^T u = b, b the dates' balances (1..M; consumed), from the leaves in:
  /// each date's balance gives its parent edge.
  void tree_sweep(std::vector<double>& b, std::vector<double>& u) const {
    for (std::size_t q = band_f_->m; q >= roots_.size(); --q) {
      const std::size_t k = order_[q], a = parent_[k];
      const Edge& e = edge_[a];
      u[a] = b[k] / (k == e.to ? e.coef : -e.coef);
      const std::size_t p = k == e.to ? e.from : e.to;
      b[p] -= (p == e.to ? e.coef : -e.coef) * u[a];
    }
  }

  /// Solves B_S z = rhs in place, B_S factored.
  void solve_s(std::vector<double>& rhs) {
    int info = 0;
    const int n = static_cast<int>(r_), one = 1;
    dgetrs_("N", &n, &one, lu_.data(), &n, piv_.data(), rhs.data(), &n, &info, 1);
  }

  /// The simplex steps on a dense B, with B_S^-1 kept (binv_, column-major)
  /// and updated for each row that enters (Sherman and Morrison: r² where a
  /// factorization costs r³), formed afresh every kRefresh steps and before
  /// a vertex is taken as optimal. Counts the steps in it up to budget;
  /// returns 0 at an optimal vertex, -1 where B_S is singular, 1 when the
  /// budget ran out.
  int dense_steps(int& it, int budget) {
    constexpr int kRefresh = 32;
    std::vector<double> zs(r_), u(r_), d(r_), w(r_), cd(n_);
    if (!invert_s()) return -1;
    int fresh = 0, step = -1;
    while (it < budget) {
      for (std::size_t a = 0; a < r_; ++a) zs[a] = c_[s_[a]];
      multiply(binv_.data(), zs.data(), z_.data(), false);
      residuals();
      in_s_.assign(n_, 0);
      for (std::size_t a = 0; a < r_; ++a) in_s_[s_[a]] = 1;
      for (std::size_t i = 0; i < n_; ++i) cd[i] = in_s_[i] ? 0.0 : (f_[i] > 0) - (f_[i] < 0);
      bmul(cd.data(), w.data(), true);  // g = Σ sign(f_i) b_i outside S
      multiply(binv_.data(), w.data(), u.data(), true);
      for (double& v : u) v = -v;
      const std::size_t k = leaving(u);
      if (k == r_ && fresh == 0) return 0;  // the dual certificate, from a fresh inverse: optimal
      if (k == r_ || fresh == kRefresh) {
        if (!invert_s()) return -1;
        fresh = 0;
        continue;
      }
      const double sign = u[k] > 0 ? 1.0 : -1.0;  // d frees row s_k's residual, keeps S's others at 0
      for (std::size_t c = 0; c < r_; ++c) d[c] = sign * binv_[c + k * r_];
      bmul(d.data(), cd.data(), false);
      breaks_.clear();
      double slope = 1;
      for (std::size_t i = 0; i < n_; ++i)
        if (!in_s_[i]) add_break(i, cd[i], u[k], slope);
      const std::size_t row = entering(slope);
      if (row == n_) return -1;  // unbounded: cannot happen for a norm
      s_[k] = row;
      ++it, ++fresh, step = 1;
      if (enter(row, k)) continue;
      if (!invert_s()) return -1;
      fresh = 0;
    }
    return step;
  }

  /// y = B_S^-1 x, or B_S^-T x (transposed).
  void multiply(const double* inv, const double* x, double* y, bool transposed) const {
    lapack::gemv(static_cast<int>(r_), static_cast<int>(r_), inv, static_cast<int>(r_), x, y, transposed ? 'T' : 'N');
  }
  /// y = B x (r to n), or B^T x (transposed: n to r), B dense.
  void bmul(const double* x, double* y, bool transposed) const {
    const int n = static_cast<int>(n_), r = static_cast<int>(r_);
    lapack::gemv(n, r, b_.data(), n, x, y, transposed ? 'T' : 'N');
  }
  /// B_S^-1 afresh (LU); false where B_S is singular.
  bool invert_s() {
    if (!factor_s()) return false;
    binv_.assign(r_ * r_, 0.0);
    for (std::size_t a = 0; a < r_; ++a) binv_[a + a * r_] = 1;
    int info = 0;
    const int n = static_cast<int>(r_);
    dgetrs_("N", &n, &n, lu_.data(), &n, piv_.data(), binv_.data(), &n, &info, 1);
    return info == 0;
  }
  /// B_S^-1 after row `row` took S's place k: with w = b_row^T B_S^-1,
  /// column j less column k times w_j / w_k, column k over w_k. False where
  /// w_k is too small for the update to be trusted.
  bool enter(std::size_t row, std::size_t k) {
    std::vector<double> b(r_), w(r_, 0.0);
    for (std::size_t c = 0; c < r_; ++c) b[c] = b_[row + c * n_];
    multiply(binv_.data(), b.data(), w.data(), true);
    double largest = 0;
    for (double v : w) largest = std::max(largest, std::fabs(v));
    if (!(std::fabs(w[k]) > 1e-8 * largest)) return false;
    const double* ck = binv_.data() + k * r_;
    for (std::size_t j = 0; j < r_; ++j) {
      if (j == k) continue;
      const double t = w[j] / w[k];
      for (std::size_t c = 0; c < r_; ++c) binv_[c + j * r_] -= ck[c] * t;
    }
    for (std::size_t c = 0; c < r_; ++c) binv_[c + k * r_] /= w[k];
    return true;
  }

  /// Bland's rule against cycling on degenerate vertices: the row of S of
  /// least index whose multiplier exceeds 1 leaves; r_ where none does.
  std::size_t leaving(const std::vector<double>& u) const {
    std::size_t k = r_;
    for (std::size_t a = 0; a < r_; ++a)
      if (std::fabs(u[a]) > 1 + 1e-10 && (k == r_ || s_[a] < s_[k])) k = a;
    return k;
  }

  /// Along the direction d that frees the leaving row's residual, φ(t) = t +
  /// Σ_{i not in S} |f_i + t c_i| (c_i = b_i d) is convex piecewise linear:
  /// row i's part of its slope at 0 (a row at 0 counted as turning there)
  /// and its breakpoint; uk the leaving row's multiplier.
  void add_break(std::size_t i, double ci, double uk, double& slope) {
    if (std::fabs(ci) <= 1e-14 * (1 + std::fabs(uk))) return;
    if (f_[i] == 0) {
      slope -= std::fabs(ci);
      breaks_.push_back({0.0, 2 * std::fabs(ci), i});
      return;
    }
    slope += (f_[i] > 0 ? 1.0 : -1.0) * ci;
    if (const double t = -f_[i] / ci; t > 0) breaks_.push_back({t, 2 * std::fabs(ci), i});
  }

  /// The row whose breakpoint turns the slope (it enters S; at t = 0 a
  /// degenerate step; ties by least row index); n_ where none does.
  std::size_t entering(double slope) {
    std::sort(breaks_.begin(), breaks_.end(),
              [](const Break& a, const Break& b) { return a.t < b.t || (a.t == b.t && a.row < b.row); });
    for (const Break& br : breaks_) {
      slope += br.weight;
      if (slope >= 0) return br.row;
    }
    return n_;
  }

  /// The steps of dense_steps on a network, each in O(M) and the rows at
  /// the dates it moves: at a spanning tree S the dates' phases follow from
  /// c_S along the tree, row i's residual is k_i (φ_to - φ_from) - c_i, and
  /// B_S^T u = -g is E^T u = the dates' balances of -sign(f_i) k_i over the
  /// rows outside S. The direction that frees edge k's residual moves the
  /// dates beyond it (away from date 0) by one constant: only the rows
  /// across that cut turn, and only theirs change at the next vertex, found
  /// from the smaller side's rows. Counts the steps in it up to budget;
  /// returns as dense_steps.
  int network_steps(int& it, int budget) {
    const std::size_t nodes = band_f_->m + 1;
    std::vector<double> u(r_), balance(nodes, 0.0), b(nodes);
    std::vector<char> beyond(nodes);
    rows_by_date();
    in_s_.assign(n_, 0);
    for (std::size_t a = 0; a < r_; ++a) in_s_[s_[a]] = 1;
    if (!tree_vertex(u)) return -1;
    cross_.resize(n_);
    std::iota(cross_.begin(), cross_.end(), std::size_t{0});
    f_.resize(n_);
    update_rows(balance);
    int step = -1;
    for (; it < budget; ++it, step = 1) {
      b = balance;
      tree_sweep(b, u);
      const std::size_t k = leaving(u);
      if (k == r_) return 0;
      const Edge& e = edge_[k];
      const std::size_t child = parent_[e.to] == k ? e.to : e.from;
      std::fill(beyond.begin(), beyond.end(), 0);
      beyond[child] = 1;
      std::size_t count = 0;
      for (std::size_t q = roots_.size(); q < nodes; ++q) {  // breadth-first: each date after its parent
        const Edge& up = edge_[parent_[order_[q]]];
        count += beyond[order_[q]] |= beyond[up.from == order_[q] ? up.to : up.from];
      }
      crossing(beyond, 2 * count <= nodes);
      const double sign = u[k] > 0 ? 1.0 : -1.0, delta = (child == e.to ? sign : -sign) / e.coef;
      breaks_.clear();
      double slope = 1;
      for (const std::size_t i : cross_)
        if (!in_s_[i]) add_break(i, link_[i].k * delta * (beyond[link_[i].to] - beyond[link_[i].from]), u[k], slope);
      const std::size_t row = entering(slope);
      if (row == n_) return -1;
      for (const std::size_t i : cross_) flow(i, -1.0, balance);
      in_s_[s_[k]] = 0;
      in_s_[row] = 1;
      s_[k] = row;
      if (!tree_vertex(u)) return -1;
      update_rows(balance);
    }
    return step;
  }

  /// The tree of S and its phases (u: scratch).
  bool tree_vertex(std::vector<double>& u) {
    if (!factor_tree()) return false;
    for (std::size_t a = 0; a < r_; ++a) u[a] = c_[s_[a]];
    tree_phases(u);
    return true;
  }
  /// The residuals of the rows cross_ at phi_ (0 in S), their flows added.
  void update_rows(std::vector<double>& balance) {
    for (const std::size_t i : cross_) {
      const Link& l = link_[i];
      f_[i] = in_s_[i] ? 0.0 : l.k * (phi_[l.to] - phi_[l.from]) - c_[i];
      flow(i, 1.0, balance);
    }
  }
  /// Adds row i's -sign(f_i) k_i (e_to - e_from) to the balances, times s.
  void flow(std::size_t i, double s, std::vector<double>& balance) const {
    const Link& l = link_[i];
    const double v = f_[i] > 0 ? -s * l.k : f_[i] < 0 ? s * l.k : 0.0;
    balance[l.to] += v;
    balance[l.from] -= v;
  }
  /// The rows of each date (CSR), for crossing.
  void rows_by_date() {
    const std::size_t nodes = band_f_->m + 1;
    date_start_.assign(nodes + 1, 0);
    for (const Link& l : link_)
      if (l.k != 0) ++date_start_[static_cast<std::size_t>(l.from) + 1], ++date_start_[static_cast<std::size_t>(l.to) + 1];
    for (std::size_t d = 0; d < nodes; ++d) date_start_[d + 1] += date_start_[d];
    date_rows_.resize(date_start_[nodes]);
    fill_.assign(date_start_.begin(), date_start_.end() - 1);
    for (std::size_t i = 0; i < n_; ++i)
      if (link_[i].k != 0) date_rows_[fill_[link_[i].from]++] = date_rows_[fill_[link_[i].to]++] = i;
  }
  /// cross_: the rows with one date beyond the cut, from the dates beyond it
  /// (from_beyond) or the others.
  void crossing(const std::vector<char>& beyond, bool from_beyond) {
    cross_.clear();
    for (std::size_t d = 0; d < beyond.size(); ++d) {
      if ((beyond[d] != 0) != from_beyond) continue;
      for (std::size_t x = date_start_[d]; x < date_start_[d + 1]; ++x) {
        const Link& l = link_[date_rows_[x]];
        if (beyond[l.to] != beyond[l.from]) cross_.push_back(date_rows_[x]);
      }
    }
  }

  const SolveOptions& o_;
  std::size_t n_ = 0, m_ = 0, r_ = 0;
  double delta_ = 0, zero_ = 0;
  int warmed_ = -1;
  std::vector<double> a_, b_, c_, q_, z_, f_, gram_, rhs_, gc_, lu_, binv_, scaled_;
  std::vector<int> piv_;
  const DesignFactors* band_f_ = nullptr;  // a banded design's, where the pixel has full rank
  bool tree_ = false;                      // ... and a network's: vertices are spanning trees
  std::vector<int> rows_;
  std::vector<std::size_t> root_;
  struct Edge {
    std::size_t from, to;
    double coef;
  };
  std::vector<Edge> edge_;                                   // S's rows as tree edges
  struct Link {
    int from, to;
    double k;
  };
  std::vector<Link> link_;     // every row of a network in the dates' phases
  std::size_t link_band_ = 0;  // the largest to - from of a link between two unknown dates
  struct Break {
    double t, weight;
    std::size_t row;
  };
  std::vector<Break> breaks_;
  std::vector<std::size_t> start_, fill_, adjacent_, order_, parent_;  // the tree by dates, breadth-first
  std::vector<double> phi_;
  std::vector<double> sw_, weight_;
  std::vector<std::size_t> roots_;  // the forest's: date 0, and each free component's first date
  std::vector<int> comp_;           // a split network's components (see free_components)
  BandGram band_;
  std::vector<std::size_t> s_;
  std::vector<char> in_s_;
  std::vector<std::size_t> date_start_, date_rows_, cross_;  // a network's rows by date; the rows across a cut
  enum class Plain { Unknown, Factored, Singular } plain_ = Plain::Unknown;  // B^T B's factor (null_part)
  BandGram plain_band_;
  std::vector<double> plain_g_, plain_gram_;  // a dense B^T B and its factor
};

/// Reweightings on a network, kLanes pixels side by side (their band
/// systems in the vector lanes, as the least-squares solve forms them): z
/// <- argmin Σ g_i w_i (a_i z - y_i)², g from the residuals f = w^1/2 (A z -
/// y) at the previous z. L1: g_i = 1 / max(|f_i|, p), `count` times (the
/// first of L1's iterations). Huber: g_i = min(1, p / |f_i|), until a step
/// lowers Σρ(f) by no more than tol × 1e-3 of it (a step that raises it
/// is undone), as RobustPixel::huber. Y, W and SW = W^1/2: (N, lanes), 0 on
/// a missing row; p: (lanes) ε or δ; Z: (M, lanes), the least-squares
/// solutions in, the last z out; done[l]: the reweightings lane l took (an
/// L1 lane stops at a singular system; a Huber lane that did not converge
/// within count, or met a singular system: -1).
CUBESOLVE_SIMD_CLONES void network_reweightings(const DesignFactors& f, const double* Y, const double* W, const double* SW,
                                                const double* p, Loss loss, int count, double tol, double* Z, int* done) {
  constexpr std::size_t L = kLanes;
  const std::size_t N = f.n, M = f.m;
  const bool huber = loss == Loss::Huber;
  std::vector<double> wt(N * L), S(M * (f.band + 1) * L), X(M * L), before(M * L);
  const Vec4 param = load4(p), one = Vec4{} + 1;
  double last[L];
  bool live[L];
  for (std::size_t l = 0; l < L; ++l) live[l] = true, done[l] = 0, last[l] = std::numeric_limits<double>::infinity();
  for (int it = 0; it <= count; ++it) {
    Vec4 obj = {};
    for (std::size_t i = 0; i < N; ++i) {
      Vec4 r = -load4(Y + i * L);
      for (std::size_t e = f.row_start[i]; e < f.row_start[i + 1]; ++e) r += f.nz_val[e] * load4(Z + f.nz_col[e] * L);
      Vec4 a = load4(SW + i * L) * r;
      a = a < 0 ? -a : a;
      obj += a <= param ? 0.5 * a * a : param * a - 0.5 * param * param;
      const Vec4 g = huber ? (a <= param ? one : param / a) : 1 / (a > param ? a : param);
      store4(wt.data() + i * L, load4(W + i * L) * g);
    }
    for (std::size_t l = 0; l < L && huber; ++l) {  // the step to Z, judged
      if (!live[l] || it == 0) continue;
      const bool worse = obj[l] > last[l];
      if (worse)
        for (std::size_t j = 0; j < M; ++j) Z[j * L + l] = before[j * L + l];
      if (worse || last[l] - obj[l] <= 1e-3 * tol * obj[l]) live[l] = false;
      last[l] = obj[l];
    }
    for (std::size_t l = 0; l < L && huber && it == 0; ++l) last[l] = obj[l];
    if (it == count || std::none_of(live, live + L, [](bool v) { return v; })) break;
    band_normal_equations(f, wt.data(), Y, S.data(), X.data());
    bool ok[L];
    batched_cholesky_band(S.data(), M, f.band, 0.0, ok);
    batched_cholesky_band_solve(S.data(), M, f.band, X.data());
    before.assign(Z, Z + M * L);
    for (std::size_t l = 0; l < L; ++l) {
      if (live[l] && !ok[l] && huber) done[l] = -1;
      live[l] = live[l] && ok[l];
      if (!live[l]) continue;
      for (std::size_t j = 0; j < M; ++j) Z[j * L + l] = X[j * L + l];
      ++done[l];
    }
  }
  for (std::size_t l = 0; l < L && huber; ++l)
    if (live[l]) done[l] = -1;  // still going at the cap
}

/// Robust losses on a network: the reweightings (L1's first ones, all of
/// Huber's) of the pixels [b, e) that have full rank and more valid rows
/// than unknowns, kLanes at a time. x (M, e - b): their z; warmed: the
/// reweightings done (-1 for the other pixels, and for a Huber pixel that
/// did not converge); delta: each one's δ (Huber).
void warm_network(const Array& cube, const DesignFactors& f, const Array* weights, const SolveOptions& o, const SolveResult& r,
                  std::size_t b, std::size_t e, std::vector<double>& x, std::vector<int>& warmed, std::vector<double>& delta) {
  constexpr std::size_t L = kLanes;
  const std::size_t N = f.n, M = f.m, P = cube.dim(1) * cube.dim(2);
  const int count = o.loss == Loss::L1 ? std::min(o.max_iterations, kNetworkReweightings) : o.max_iterations;
  x.assign(M * (e - b), 0.0);
  warmed.assign(e - b, -1);
  delta.assign(e - b, 0.0);
  std::vector<double> Y(N * L), W(N * L), SW(N * L), Z(M * L), param(L, 1.0), res;
  std::size_t lane[L], used = 0;
  auto run = [&] {
    int done[L];
    network_reweightings(f, Y.data(), W.data(), SW.data(), param.data(), o.loss, count, o.tolerance, Z.data(), done);
    for (std::size_t l = 0; l < used; ++l) {
      warmed[lane[l]] = done[l];
      delta[lane[l]] = param[l];
      for (std::size_t j = 0; j < M; ++j) x[j * (e - b) + lane[l]] = Z[j * L + l];
    }
    std::fill(W.begin(), W.end(), 0.0);
    std::fill(param.begin(), param.end(), 1.0);
    used = 0;
  };
  for (std::size_t p = b; p < e; ++p) {
    if (r.status.data<std::uint8_t>()[p] != static_cast<std::uint8_t>(PixelStatus::Ok) || r.rank.data<std::int32_t>()[p] != static_cast<int>(M))
      continue;
    const bool mad = o.loss == Loss::Huber && !(o.huber_delta > 0);  // δ from the least-squares residuals
    double scale = 0;
    std::size_t nv = 0;
    res.clear();
    for (std::size_t j = 0; j < M; ++j) Z[j * L + used] = r.x.value(j * P + p);
    for (std::size_t i = 0; i < N; ++i) {
      const double v = cube.value(i * P + p), w = weights ? weights->value(i * P + p) : 1.0;
      const bool ok = std::isfinite(v) && std::isfinite(w) && w > 0;
      Y[i * L + used] = ok ? v : 0.0;
      W[i * L + used] = ok ? w : 0.0;
      SW[i * L + used] = ok ? std::sqrt(w) : 0.0;
      if (!ok) continue;
      ++nv;
      scale = std::max(scale, std::fabs(v) * SW[i * L + used]);
      if (!mad) continue;
      double fit = -v;
      for (std::size_t q = f.row_start[i]; q < f.row_start[i + 1]; ++q) fit += f.nz_val[q] * Z[f.nz_col[q] * L + used];
      res.push_back(SW[i * L + used] * fit);
    }
    if (nv <= M) {
      for (std::size_t i = 0; i < N; ++i) W[i * L + used] = 0;
      continue;
    }
    param[used] = o.loss == Loss::L1 ? 1e-9 * std::max(scale, 1e-300) : mad ? huber_delta(res) : o.huber_delta;
    lane[used++] = p - b;
    if (used == L) run();
  }
  if (used > 0) run();
}

/// Pixel p's solution x into r, with its iterations `it`, its objective
/// and rss; NaN and NotConverged where it < 0 or the objective is not finite.
void store(RobustPixel& px, int it, const std::vector<double>& x, int max_iterations, std::size_t p, SolveResult& r) {
  const std::size_t M = x.size(), P = r.status.size();
  const auto [obj, ss] = it >= 0 ? px.objective() : std::pair{kNaN, kNaN};
  const bool failed = it < 0 || !std::isfinite(obj);
  if (failed) r.status.data<std::uint8_t>()[p] = static_cast<std::uint8_t>(PixelStatus::NotConverged);
  for (std::size_t j = 0; j < M; ++j) r.x.set(j * P + p, failed ? kNaN : x[j]);
  r.objective.set(p, failed ? kNaN : obj);
  r.iterations.set(p, failed ? max_iterations : it);
  if (!failed) r.rss.set(p, ss);
}

}  // namespace

void robust_pass(const Array& cube, const Design& design, const Array* weights, const SolveOptions& options, SolveResult& r,
                 const Progress& progress) {
  const std::size_t N = cube.dim(0), M = design.cols(), H = cube.dim(1), W = cube.dim(2), P = H * W;
  r.iterations = Array(DType::Int32, {H, W});
  r.objective = Array(DType::Float64, {H, W});
  auto* st = r.status.data<std::uint8_t>();
  const auto* rank = r.rank.data<std::int32_t>();
  lapack::SingleThreadedBlas single;  // small systems on every thread
  const DesignFactors& f = design.factors();
  const bool lanes = f.network() && f.banded_gram && !f.row_start.empty();
  parallel_for(
      P, 64, r.threads,
      [&](int, std::size_t b, std::size_t e) {
        RobustPixel px(options);
        std::vector<int> rows(N), warmed;
        std::vector<double> y(N), sw(N), x0(M), x(M), warm, deltas;
        if (lanes) warm_network(cube, f, weights, options, r, b, e, warm, warmed, deltas);
        for (std::size_t p = b; p < e; ++p) {
          const auto s = static_cast<PixelStatus>(st[p]);
          if (s != PixelStatus::Ok && s != PixelStatus::MinNorm) {
            r.objective.set(p, kNaN);
            continue;
          }
          std::size_t nv = 0;
          for (std::size_t i = 0; i < N; ++i) {
            const double v = cube.value(i * P + p), w = weights ? weights->value(i * P + p) : 1.0;
            if (!std::isfinite(v) || !std::isfinite(w) || !(w > 0)) continue;
            rows[nv] = static_cast<int>(i);
            y[nv] = v;
            sw[nv++] = std::sqrt(w);
          }
          const int done = lanes ? warmed[p - b] : -1;
          const bool in_lanes = lanes && (done >= 0 || deltas[p - b] > 0);  // (a Huber lane that did not converge: -1)
          for (std::size_t j = 0; j < M; ++j) x0[j] = done >= 0 ? warm[j * (e - b) + p - b] : r.x.value(j * P + p);
          int it = -1;
          for (const bool forest : {true, false}) {  // a split network's forest, else its SVD coordinates
            if (!px.setup(design, rows.data(), sw.data(), y.data(), nv, rank[p], forest)) break;
            px.start(x0.data(), done);
            const double delta = options.huber_delta > 0 ? options.huber_delta
                                 : options.loss != Loss::Huber ? 0.0
                                 : in_lanes ? deltas[p - b] : px.default_delta();
            it = in_lanes && done < 0 ? -1 : px.run(delta);
            px.result(x.data());
            if (it >= 0 || !px.split()) break;
          }
          store(px, it, x, options.max_iterations, p, r);
        }
      },
      progress);
}

}  // namespace detail
}  // namespace cubesolve
