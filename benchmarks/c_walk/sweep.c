/* One-thread transcription of polars_cumdev.kernel.events._walk_share
 * (_fill + _enqueue + _flush, with prefix.moments_between / bin_totals /
 * _bin_sum / moments_of and walks.merged_tie / _accumulate), operation for
 * operation, same data layout (queue rows of 8 doubles, snapshot rows of 15
 * doubles), same batching.  Written for a measurement, not for the package:
 * benchmarks/c_walk.py compiles it with gcc and times it beside Numba.
 *
 * Types as in the benchmark: gid int32, s float64, r int8, w float64,
 * heads/link int32, starts int64, owner int8.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EPS (0x1p-52)

#ifdef SPLIT_TIMING
#include <time.h>
double split_times[2]; /* seconds in fill, in flush (accumulated) */
static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }
#endif

/* prefix.py table columns */
#define HI 0
#define LO 4
#define LOMAX 8
#define ROWS 12
#define ZEROS 13
#define ONES 14
#define TC 15

/* walks.py group columns */
enum { N_ROWS, N_SCORES, WEIGHT, C_LAST, C_MAX, C_MIN, SIGMA_B, SIGMA_E,
       ERR_C, ERR_B, ERR_E, OVERFLOWS, GC };

/* events.py queue columns */
enum { Q_W, Q_WR, Q_WW, Q_FIRST, Q_ROWS, Q_MIXED, Q_GROUP, Q_SNAP, QC };
#define SUMS 14

/* Python's max(a, b) / min(a, b): keep a unless b is strictly beyond it */
static inline double pmax(double a, double b) { return b > a ? b : a; }
static inline double pmin(double a, double b) { return b < a ? b : a; }

static inline void two_sum(double a, double b, double *s_out, double *e_out)
{
    double s = a + b;
    double back = s - a;
    *s_out = s;
    *e_out = (a - (s - back)) + (b - back);
}

static inline void bin_sum(double h, double e, double lowest, double low_h,
                           double low_e, int inside, double rows,
                           double *total, double *bound)
{
    h = inside ? h - low_h : h;
    e = inside ? e - low_e : e;
    *total = h + e;
    *bound = EPS * (rows * lowest + (fabs(h) + fabs(e)));
}

/* bin_totals(top, upper, bottom, below) then moments_of(...) */
static inline void moments_between(const double *top_row, const double *bottom_row,
                                   int inside, double centre,
                                   double *o_ref, double *o_var, double *o_eref,
                                   double *o_ebern, double *o_evar, int *o_overflow)
{
    const double *t = top_row, *b = bottom_row;
    double rows = t[ROWS], low_rows = b[ROWS];
    double zeros = t[ZEROS], low_zeros = b[ZEROS];
    double ones = t[ONES], low_ones = b[ONES];
    rows = inside ? rows - low_rows : rows;
    zeros = inside ? zeros - low_zeros : zeros;
    ones = inside ? ones - low_ones : ones;
    double bw, e_w, bww, e_ww, bwr, e_wr, bwrr, e_wrr;
    bin_sum(t[HI], t[LO], t[LOMAX], b[HI], b[LO], inside, rows, &bw, &e_w);
    bin_sum(t[HI + 1], t[LO + 1], t[LOMAX + 1], b[HI + 1], b[LO + 1], inside, rows, &bww, &e_ww);
    bin_sum(t[HI + 2], t[LO + 2], t[LOMAX + 2], b[HI + 2], b[LO + 2], inside, rows, &bwr, &e_wr);
    bin_sum(t[HI + 3], t[LO + 3], t[LOMAX + 3], b[HI + 3], b[LO + 3], inside, rows, &bwrr, &e_wrr);

    /* moments_of */
    int all_ones = ones == rows;
    int all_zeros = zeros == rows;
    int pure = all_ones | all_zeros;
    double mean_c = bwr / bw;
    double second = bwrr / bw;
    double spread = second - mean_c * mean_c;
    double square = bw * bw;
    double denominator = square - bww;
    double unbias = rows > 1 ? square / denominator : 0.0;
    double reference = all_ones ? 1.0 : (all_zeros ? 0.0 : centre + mean_c);
    double variance = pure ? 0.0 : unbias * spread;
    int finite = isfinite(bw) & isfinite(bww) & isfinite(bwr) & isfinite(bwrr);
    int overflow = !finite;
    double e_mean = (e_wr + fabs(mean_c) * e_w) / bw + EPS * fabs(mean_c);
    int lost = e_w >= bw;
    double e_reference = pure ? 0.0 : (lost ? INFINITY : e_mean + EPS * fabs(reference));
    double product = reference * (1.0 - reference);
    double bernoulli = e_reference * (1.0 + e_reference) + EPS * (fabs(reference) + fabs(product));
    double e_bernoulli = pure ? 0.0 : bernoulli;
    double e_spread = (e_wrr + fabs(second) * e_w) / bw
                      + 2.0 * fabs(mean_c) * e_mean
                      + e_mean * e_mean
                      + 2.0 * EPS * (fabs(second) + mean_c * mean_c);
    double e_denominator = 2.0 * EPS * (square + bww) + 2.0 * bw * e_w + e_w * e_w + e_ww;
    double e_unbias = e_denominator / (denominator - e_denominator) + 2.0 * e_w / bw + 2.0 * EPS;
    double propagated = unbias * e_spread + fabs(variance) * e_unbias + EPS * fabs(variance);
    int unresolved = lost | (denominator <= e_denominator);
    double e_variance = (pure | (rows <= 1)) ? 0.0 : (unresolved ? INFINITY : propagated);
    *o_ref = reference;
    *o_var = variance;
    *o_eref = e_reference;
    *o_ebern = e_bernoulli;
    *o_evar = e_variance;
    *o_overflow = overflow;
}

static inline void accumulate(double *o, double weight, double response, double factor,
                              int64_t rows, double reference, double variance,
                              double e_ref, double e_bern, double e_var, int overflow)
{
    o[N_ROWS] += (double)rows;
    o[N_SCORES] += 1;
    o[WEIGHT] += weight;
    double c = o[C_LAST] + weight * (response - reference);
    o[C_LAST] = c;
    o[C_MAX] = pmax(o[C_MAX], c);
    o[C_MIN] = pmin(o[C_MIN], c);
    double w2f = weight * weight * factor;
    double bern = w2f * reference * (1.0 - reference);
    double emp = w2f * variance;
    o[SIGMA_B] += bern;
    o[SIGMA_E] += emp;
    o[ERR_C] += weight * e_ref;
    o[ERR_B] += w2f * e_bern + 8.0 * EPS * fabs(bern);
    o[ERR_E] += w2f * e_var + 8.0 * EPS * fabs(emp);
    o[OVERFLOWS] += (double)overflow;
}

static void flush(double *out, const double *queue, int64_t queued, const double *snaps,
                  double *lows, double centre, const int64_t *starts, double *curves,
                  int record, const int8_t *owner, int who)
{
    for (int64_t q = 0; q < queued; q++) {
        const double *qr = queue + q * QC;
        int64_t g = (int64_t)qr[Q_GROUP];
        if (owner[g] != who)
            continue;
        int64_t k = (int64_t)qr[Q_SNAP];
        int64_t rows = (int64_t)qr[Q_ROWS];
        /* merged_tie */
        double tw = qr[Q_W];
        double response = (qr[Q_MIXED] == 1.0) ? qr[Q_WR] / tw : qr[Q_FIRST];
        double factor = rows == 1 ? 1.0 : qr[Q_WW] / (tw * tw);
        double ref, var, e_ref, e_bern, e_var;
        int overflow;
        const int64_t below = g; /* bin_totals' "below" is the group's row of lows */
        moments_between(snaps + k * TC, lows + g * TC, below >= 0, centre,
                        &ref, &var, &e_ref, &e_bern, &e_var, &overflow);
        for (int j = 0; j < TC; j++)
            lows[g * TC + j] = snaps[k * TC + j];
        double *o = out + g * GC;
        accumulate(o, tw, response, factor, rows, ref, var, e_ref, e_bern, e_var, overflow);
        if (record) {
            int64_t at = starts[g] + (int64_t)o[N_SCORES] - 1;
            curves[at * 2] = o[WEIGHT];
            curves[at * 2 + 1] = o[C_LAST];
        }
    }
}

static inline void enqueue(double *queue, int64_t queued, int64_t g, const double *tie,
                           const int64_t *ints, int64_t snap)
{
    double *qr = queue + queued * QC;
    qr[Q_W] = tie[g * 5 + 1];
    qr[Q_WR] = tie[g * 5 + 2];
    qr[Q_WW] = tie[g * 5 + 3];
    qr[Q_FIRST] = tie[g * 5 + 4];
    qr[Q_ROWS] = (double)ints[g * 2];
    qr[Q_MIXED] = (double)ints[g * 2 + 1];
    qr[Q_GROUP] = (double)g;
    qr[Q_SNAP] = (double)snap;
}

/* _fill: returns end, sets *queued_out */
static int64_t fill(const int32_t *gid, int64_t offset, const double *s, const int8_t *r,
                    const double *w, int weighted, double scale, double centre,
                    const int32_t *heads, int64_t lists, const int32_t *link, int64_t m,
                    double *sums, double *tie, int64_t *ints, int64_t groups,
                    double *queue, double *snaps, int64_t snap_rows, int64_t begin,
                    int64_t *queued_out)
{
    int64_t room = snap_rows - 1;
    double h0 = sums[0], h1 = sums[1], h2 = sums[2], h3 = sums[3];
    double l0 = sums[4], l1 = sums[5], l2 = sums[6], l3 = sums[7];
    double m0 = sums[8], m1 = sums[9], m2 = sums[10], m3 = sums[11];
    int64_t zeros = (int64_t)sums[12], ones = (int64_t)sums[13];
    int64_t queued = 0, snapped = 0, end = m;
    const int32_t *head_last = heads + (lists - 1) * m;
    for (int64_t i = begin; i < m; i++) {
        int64_t g = (int64_t)gid[i] - offset;
        double si = s[i];
        double wi = weighted ? w[i] * scale : scale;
        double ri = (double)r[i];
        double rc = ri - centre;
        double wr = wi * rc;
        double e;
        two_sum(h0, wi, &h0, &e);
        l0 += e;
        two_sum(h1, wi * wi, &h1, &e);
        l1 += e;
        two_sum(h2, wr, &h2, &e);
        l2 += e;
        two_sum(h3, wr * rc, &h3, &e);
        l3 += e;
        m0 = pmax(m0, fabs(l0));
        m1 = pmax(m1, fabs(l1));
        m2 = pmax(m2, fabs(l2));
        m3 = pmax(m3, fabs(l3));
        zeros += ri == 0.0;
        ones += ri == 1.0;
        double *t = tie + g * 5;
        int64_t *n = ints + g * 2;
        if (t[0] == si) {
            t[1] += wi;
            t[2] += wi * ri;
            t[3] += wi * wi;
            if (ri != t[4])
                n[1] = 1;
            n[0] += 1;
        } else {
            t[0] = si;
            t[1] = wi;
            t[2] = wi * ri;
            t[3] = wi * wi;
            t[4] = ri;
            n[0] = 1;
            n[1] = 0;
        }
        if (heads[i] < 0 && head_last[i] < 0 && i < m - 1)
            continue;
        double *row = snaps + snapped * TC;
        row[HI] = h0; row[HI + 1] = h1; row[HI + 2] = h2; row[HI + 3] = h3;
        row[LO] = l0; row[LO + 1] = l1; row[LO + 2] = l2; row[LO + 3] = l3;
        row[LOMAX] = m0; row[LOMAX + 1] = m1; row[LOMAX + 2] = m2; row[LOMAX + 3] = m3;
        row[ROWS] = (double)(i + 1);
        row[ZEROS] = (double)zeros;
        row[ONES] = (double)ones;
        for (int64_t list = 0; list < lists; list++) {
            int64_t j = heads[list * m + i];
            while (j >= 0) {
                enqueue(queue, queued, (int64_t)gid[j] - offset, tie, ints, snapped);
                queued += 1;
                j = link[j];
            }
        }
        snapped += 1;
        if (i == m - 1) {
            for (int64_t gg = 0; gg < groups; gg++) {
                if (!isnan(tie[gg * 5])) {
                    enqueue(queue, queued, gg, tie, ints, snapped - 1);
                    queued += 1;
                }
            }
        }
        if (queued >= room || snapped >= room) {
            end = i + 1;
            break;
        }
    }
    sums[0] = h0; sums[1] = h1; sums[2] = h2; sums[3] = h3;
    sums[4] = l0; sums[5] = l1; sums[6] = l2; sums[7] = l3;
    sums[8] = m0; sums[9] = m1; sums[10] = m2; sums[11] = m3;
    sums[12] = (double)zeros; sums[13] = (double)ones;
    *queued_out = queued;
    return end;
}

/* _walk_share for one thread (heads has `lists` rows of length m). Returns 0 on success. */
int walk_share(const int32_t *gid, int64_t offset, const double *s, const int8_t *r,
               const double *w, int weighted, double scale, int64_t groups, double centre,
               const int32_t *heads, int64_t lists, const int32_t *link, int64_t m,
               double *out, double *lows, const int64_t *starts, double *curves, int record,
               const int8_t *owner, int who, int64_t batch)
{
    double *tie = malloc(sizeof(double) * groups * 5);
    int64_t *ints = calloc(groups * 2, sizeof(int64_t));
    double sums[SUMS] = {0};
    double *queue = malloc(sizeof(double) * (batch + 2 * groups) * QC);
    int64_t snap_rows = batch + 1;
    double *snaps = malloc(sizeof(double) * snap_rows * TC);
    if (!tie || !ints || !queue || !snaps)
        return 1;
    for (int64_t g = 0; g < groups; g++) {
        tie[g * 5] = NAN;
        for (int j = 1; j < 5; j++)
            tie[g * 5 + j] = 0.0;
    }
    int64_t begin = 0;
    while (begin < m) {
        int64_t queued;
#ifdef SPLIT_TIMING
        double t0 = now();
#endif
        begin = fill(gid, offset, s, r, w, weighted, scale, centre, heads, lists, link, m,
                     sums, tie, ints, groups, queue, snaps, snap_rows, begin, &queued);
#ifdef SPLIT_TIMING
        double t1 = now();
#endif
        flush(out, queue, queued, snaps, lows, centre, starts, curves, record, owner, who);
#ifdef SPLIT_TIMING
        split_times[0] += t1 - t0;
        split_times[1] += now() - t1;
#endif
    }
    free(tie);
    free(ints);
    free(queue);
    free(snaps);
    return 0;
}
