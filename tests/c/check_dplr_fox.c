/* check_dplr_fox.c: the dplr family (RWKV-7's transition) and fox (the Forgetting Transformer), docs/gated.md.
 * The references here are written from docs/gated.md, not from src/dplr.c or src/fox.c: float64 recurrences
 * and closed forms, the two references checked against each other first (M = the recurrence run on V = I), then
 * every form of the library against them on sizes that are not multiples of the chunks or tiles; the
 * reductions (a = b = 0 → gla, g = 0 → plain causal linear attention, gdn and kda written as dplr, fox at
 * g = 0 and g = ln γ → softmax), a reset, RWKV-7's vectors.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

// ----------------------------------------------------------------------------------------------------
// the inputs of one case, and float64 references from docs/gated.md

typedef struct gcase {
    int n, d, dv;
    const float *Q, *K, *V;
    const float *g; /* NULL: g0 for every token and channel */
    int gc;         /* 1 (per token) or d */
    double g0;
    const float *a, *b; /* NULL: zero */
    double scale;
    int l2; /* qk_l2norm */
} gcase;

static double gate_at(const gcase *x, int t, int c) {
    return x->g ? x->g[(size_t)t * x->gc + (x->gc > 1 ? c : 0)] : x->g0;
}

/* seg(i, j) of channel c = Σ_{l=j+1..i} g_lc, summed forward (0 for j ≥ i). */
static double seg(const gcase *x, int i, int j, int c) {
    double s = 0;
    for (int l = j + 1; l <= i; l++) s += gate_at(x, l, c);
    return s;
}

/* q̃ = scale·l2norm?(q), k̃ = l2norm?(k), l2norm(x) = x/√(Σx² + 1e-6), in float64. */
static void tilde(double *Qt, double *Kt, const gcase *x) {
    for (int i = 0; i < x->n; i++) {
        double sq = 0, sk = 0;
        for (int c = 0; c < x->d; c++) {
            sq += (double)x->Q[i * x->d + c] * x->Q[i * x->d + c];
            sk += (double)x->K[i * x->d + c] * x->K[i * x->d + c];
        }
        double fq = x->scale * (x->l2 ? 1 / sqrt(sq + 1e-6) : 1), fk = x->l2 ? 1 / sqrt(sk + 1e-6) : 1;
        for (int c = 0; c < x->d; c++) {
            Qt[i * x->d + c] = x->Q[i * x->d + c] * fq;
            Kt[i * x->d + c] = x->K[i * x->d + c] * fk;
        }
    }
}

static double ab_at(const float *v, int t, int c, int d) { return v ? v[t * d + c] : 0.0; }

/* dplr's recurrence, O = (n×dv) from V (n×dv, float64): x_t = S_{t−1}ᵀa_t, S_t = Diag(α_t)S_{t−1} + b_t x_tᵀ +
 * k_t v_tᵀ, o_t = S_tᵀq̃_t. */
static void ref_dplr_rec(double *O, const gcase *x, const double *V, int dv) {
    int n = x->n, d = x->d;
    double *Qt = malloc(sizeof(double) * n * d), *Kt = malloc(sizeof(double) * n * d);
    double *S = calloc((size_t)d * dv, sizeof(double)), *xr = malloc(sizeof(double) * dv);
    tilde(Qt, Kt, x);
    for (int t = 0; t < n; t++) {
        for (int e = 0; e < dv; e++) {
            xr[e] = 0;
            for (int c = 0; c < d; c++) xr[e] += S[c * dv + e] * ab_at(x->a, t, c, d);
        }
        for (int c = 0; c < d; c++)
            for (int e = 0; e < dv; e++)
                S[c * dv + e] = exp(gate_at(x, t, c)) * S[c * dv + e] + ab_at(x->b, t, c, d) * xr[e] +
                                Kt[t * d + c] * V[t * dv + e];
        for (int e = 0; e < dv; e++) {
            double o = 0;
            for (int c = 0; c < d; c++) o += S[c * dv + e] * Qt[t * d + c];
            O[t * dv + e] = o;
        }
    }
    free(Qt), free(Kt), free(S), free(xr);
}

/* dplr's closed form M = A_qk + A_qb (I − A_ab)⁻¹ A_ak, the A's entry by entry with Γ_ij = exp(seg(i, j)) and
 * Γ'_ij = exp(seg(i − 1, j)); X = (I − A_ab)⁻¹A_ak by forward substitution over its rows. */
static void ref_dplr_closed(double *M, const gcase *x) {
    int n = x->n, d = x->d;
    size_t nn = (size_t)n * n;
    double *Qt = malloc(sizeof(double) * n * d), *Kt = malloc(sizeof(double) * n * d);
    double *Aqk = calloc(nn, 8), *Aqb = calloc(nn, 8), *Aak = calloc(nn, 8), *Aab = calloc(nn, 8), *X = calloc(nn, 8);
    tilde(Qt, Kt, x);
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            for (int c = 0; c < d; c++) {
                double G = exp(seg(x, i, j, c)), q = Qt[i * d + c], k = Kt[j * d + c], b = ab_at(x->b, j, c, d);
                Aqk[i * n + j] += q * k * G;
                Aqb[i * n + j] += q * b * G;
                if (j < i) {
                    double Gp = exp(seg(x, i - 1, j, c)), a = ab_at(x->a, i, c, d);
                    Aak[i * n + j] += a * k * Gp;
                    Aab[i * n + j] += a * b * Gp;
                }
            }
    for (int t = 0; t < n; t++)
        for (int j = 0; j < n; j++) {
            double s = Aak[t * n + j];
            for (int r = 0; r < t; r++) s += Aab[t * n + r] * X[r * n + j];
            X[t * n + j] = s;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = Aqk[i * n + j];
            for (int t = 0; t < n; t++) s += Aqb[i * n + t] * X[t * n + j];
            M[i * n + j] = s;
        }
    free(Qt), free(Kt), free(Aqk), free(Aqb), free(Aak), free(Aab), free(X);
}

/* fox: M_ij = softmax_{j ≤ i}(q̃_i·k̃_j + seg(i, j)), per-token gates. */
static void ref_fox(double *M, const gcase *x) {
    int n = x->n, d = x->d;
    double *Qt = malloc(sizeof(double) * n * d), *Kt = malloc(sizeof(double) * n * d);
    tilde(Qt, Kt, x);
    for (int i = 0; i < n; i++) {
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int c = 0; c < d; c++) s += Qt[i * d + c] * Kt[j * d + c];
            M[i * n + j] = j <= i ? s + seg(x, i, j, 0) : -INFINITY;
            mx = fmax(mx, M[i * n + j]);
        }
        for (int j = 0; j < n; j++) sum += M[i * n + j] = exp(M[i * n + j] - mx);
        for (int j = 0; j < n; j++) M[i * n + j] /= sum;
    }
    free(Qt), free(Kt);
}

static void matmul(double *O, const double *M, const float *V, int n, int dv) {
    for (int i = 0; i < n; i++)
        for (int e = 0; e < dv; e++) {
            double s = 0;
            for (int j = 0; j < n; j++) s += M[i * n + j] * V[j * dv + e];
            O[i * dv + e] = s;
        }
}

static double rel_d(const double *a, const double *b, size_t count) {
    double e = 0, m = 0;
    for (size_t i = 0; i < count; i++) {
        double t = fabs(a[i] - b[i]);
        e = t > e || isnan(t) ? t : e;
        m = fmax(m, fabs(b[i]));
    }
    return e / (m > 0 ? m : 1);
}

static double rel_f(const float *a, const double *b, size_t count) {
    double m = tu_max_abs_d(b, count);
    return tu_max_abs_diff_d(a, b, count) / (m > 0 ? m : 1);
}

// ----------------------------------------------------------------------------------------------------
// the library's forms, by the public API

enum { F_MATRIX, F_QUADRATIC, F_LINEAR, F_RECURRENT, F_CHUNKWISE };

static void params_of(av_params *p, int variant, const gcase *x, int chunk) {
    ck_assert_int_eq(av_params_default(p, variant), AV_OK);
    p->scale = x->scale;
    p->decay = x->g ? 1 : exp(x->g0);
    p->chunk = chunk;
    ck_assert_int_eq(av_params_set(p, AV_KNOB_QK_L2NORM, x->l2 ? 1 : -1), AV_OK);
    ck_assert_int_eq(av_params_set_gates(p, x->g, x->n, x->gc, NULL), AV_OK);
    ck_assert_int_eq(av_params_set_dplr(p, x->a, x->b, x->n), AV_OK);
}

/* F_MATRIX: out = M (n×n); else out = O (n×dv) by that path. */
static int run_params(float *out, const gcase *x, const av_params *p, int form) {
    int n = x->n, d = x->d, dv = x->dv, st;
    size_t wb = form == F_MATRIX      ? av_matrix_work(p, n, d)
                : form == F_QUADRATIC ? av_attend_work(p, n, d, dv)
                : form == F_LINEAR    ? av_linear_work(p, n, d, dv)
                : form == F_RECURRENT ? av_recurrent_work(p, n, d, dv)
                                      : av_chunkwise_work(p, n, d, dv);
    void *w = malloc(wb ? wb : 1);
    switch (form) {
    case F_MATRIX: st = av_matrix(out, x->Q, x->K, n, d, p, w, wb); break;
    case F_QUADRATIC: st = av_attend(out, NULL, x->Q, x->K, x->V, n, d, dv, p, w, wb); break;
    case F_LINEAR: st = av_linear(out, x->Q, x->K, x->V, n, d, dv, p, w, wb); break;
    case F_RECURRENT: st = av_recurrent(out, x->Q, x->K, x->V, n, d, dv, p, w, wb); break;
    default: st = av_chunkwise(out, x->Q, x->K, x->V, n, d, dv, p, w, wb); break;
    }
    free(w);
    return st;
}

static int run_form(float *out, const gcase *x, int variant, int form, int chunk) {
    av_params p;
    params_of(&p, variant, x, chunk);
    return run_params(out, x, &p, form);
}

/* Every form of a case against the references: the closed form against the recurrence on V = I (the two
 * references agree first), the library's matrix against the closed form, the recurrent and chunkwise outputs
 * (chunks 1, 3, 16, 64, n) against M·V. */
static void check_case(const gcase *x, int variant, const char *what) {
    int n = x->n, dv = x->dv;
    size_t nn = (size_t)n * n;
    double *Mr = malloc(8 * nn), *Or = malloc(8 * (size_t)n * dv);
    float *M = malloc(4 * nn), *O = malloc(4 * (size_t)n * dv);
    if (variant == AV_FOX) ref_fox(Mr, x);
    else {
        double *I = calloc(nn, 8), *Mrec = malloc(8 * nn);
        for (int i = 0; i < n; i++) I[(size_t)i * n + i] = 1;
        ref_dplr_closed(Mr, x);
        ref_dplr_rec(Mrec, x, I, n);
        double e = rel_d(Mrec, Mr, nn);
        ck_assert_msg(e <= 1e-12, "%s: the references disagree: %g", what, e);
        free(I), free(Mrec);
    }
    matmul(Or, Mr, x->V, n, dv);
    ck_assert_int_eq(run_form(M, x, variant, F_MATRIX, 64), AV_OK);
    double e = rel_f(M, Mr, nn);
    ck_assert_msg(e <= 1e-5, "%s: matrix %g", what, e);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) ck_assert_msg(M[(size_t)i * n + j] == 0, "%s: M[%d][%d] above the diagonal", what, i, j);
    for (int form = F_QUADRATIC; form <= F_RECURRENT; form++) {
        if (form == F_LINEAR && variant == AV_FOX) {
            ck_assert_int_eq(run_form(O, x, variant, form, 64), AV_ERR_NO_LINEAR); /* a cache, no state */
            continue;
        }
        ck_assert_int_eq(run_form(O, x, variant, form, 16), AV_OK);
        e = rel_f(O, Or, (size_t)n * dv);
        ck_assert_msg(e <= 1e-5, "%s: form %d: %g", what, form, e);
    }
    const int chunks[] = {1, 3, 16, 64, n};
    for (int k = 0; k < 5; k++) {
        ck_assert_int_eq(run_form(O, x, variant, F_CHUNKWISE, chunks[k]), AV_OK);
        e = rel_f(O, Or, (size_t)n * dv);
        ck_assert_msg(e <= 1e-5, "%s: chunkwise C = %d: %g", what, chunks[k], e);
    }
    free(Mr), free(Or), free(M), free(O);
}

/* RWKV-7's a = −κ̂, b = κ̂ ⊙ η from keys Kr (n×d) and rates η. */
static void rwkv_ab(float *a, float *b, const float *Kr, const float *eta, int n, int d) {
    for (int t = 0; t < n; t++) {
        double ss = 0;
        for (int c = 0; c < d; c++) ss += (double)Kr[t * d + c] * Kr[t * d + c];
        for (int c = 0; c < d; c++) {
            double kap = Kr[t * d + c] / sqrt(ss);
            a[t * d + c] = (float)-kap;
            b[t * d + c] = (float)(kap * eta[t * d + c]);
        }
    }
}

// ----------------------------------------------------------------------------------------------------
// dplr

/* The three forms against the references: per-channel, per-token and constant gates with a reset, RWKV-7's
 * a and b and generic ones, qk_l2norm on and off, a = b = 0; n = 77 crosses the matrix's row blocks (32), the
 * chunk's tiles (16) and a partial chunk of 64, d = 6 and 9 the dot products' tails. */
START_TEST(test_dplr_forms) {
    enum { N = 77, D = 9, DV = 5 };
    static float Q[N * D], K[N * D], V[N * DV], g[N * D], gt[N], a[N * D], b[N * D], Kr[N * D], eta[N * D];
    for (int dd = 6; dd <= D; dd += 3)
        for (int kind = 0; kind < 6; kind++) {
            int n = kind == 5 ? 37 : N;
            tu_fill_normal(Q, (size_t)n * dd, 0, 1, 101 + kind);
            tu_fill_normal(K, (size_t)n * dd, 0, 1, 201 + kind);
            tu_fill_normal(V, (size_t)n * DV, 0, 1, 301 + kind);
            tu_fill_uniform(g, (size_t)n * dd, -0.6, 0, 401 + kind);
            tu_fill_uniform(gt, (size_t)n, -0.3, 0, 501 + kind);
            for (int c = 0; c < dd; c++) g[40 * dd + c] = -30; /* a reset at token 40 */
            gt[29] = -30;
            tu_fill_normal(Kr, (size_t)n * dd, 0, 1, 601 + kind);
            tu_fill_uniform(eta, (size_t)n * dd, 0, 1, 701 + kind);
            rwkv_ab(a, b, Kr, eta, n, dd);
            gcase x = {n, dd, DV, Q, K, V, g, dd, 0, a, b, 1 / sqrt((double)dd), 0};
            char what[64];
            snprintf(what, sizeof what, "kind %d d %d", kind, dd);
            switch (kind) {
            case 0: break;                          /* per channel, RWKV-7's a, b */
            case 1: x.g = gt, x.gc = 1, x.l2 = 1; break; /* per token, qk_l2norm */
            case 2: x.g = NULL, x.g0 = log(0.9); break;  /* constant */
            case 3: x.a = x.b = NULL; break;        /* gla */
            case 4:                                 /* generic a, b (N(0, 0.25/d)), scale 1 */
                tu_fill_normal(a, (size_t)n * dd, 0, 0.5 / sqrt((double)dd), 801);
                tu_fill_normal(b, (size_t)n * dd, 0, 0.5 / sqrt((double)dd), 802);
                x.scale = 1;
                break;
            case 5: x.g = NULL, x.g0 = 0; break; /* no decay: IPLR */
            }
            check_case(&x, AV_DPLR, what);
        }
}
END_TEST

/* a = b = 0 is gla: M_ij = Σ_c q̃_ic k_jc Γ_ijc; with g = 0 too, plain causal linear attention q̃_i·k_j. */
START_TEST(test_dplr_reductions_gla) {
    enum { N = 45, D = 7 };
    static float Q[N * D], K[N * D], g[N * D], M[N * N];
    tu_fill_normal(Q, N * D, 0, 1, 11);
    tu_fill_normal(K, N * D, 0, 1, 12);
    tu_fill_uniform(g, N * D, -0.5, 0, 13);
    for (int nodecay = 0; nodecay <= 1; nodecay++) {
        gcase x = {N, D, 1, Q, K, NULL, nodecay ? NULL : g, D, 0, NULL, NULL, 1 / sqrt((double)D), 0};
        ck_assert_int_eq(run_form(M, &x, AV_DPLR, F_MATRIX, 64), AV_OK);
        double worst = 0, top = 0;
        for (int i = 0; i < N; i++)
            for (int j = 0; j <= i; j++) {
                double s = 0;
                for (int c = 0; c < D; c++)
                    s += x.scale * Q[i * D + c] * K[j * D + c] * (nodecay ? 1 : exp(seg(&x, i, j, c)));
                worst = fmax(worst, fabs(M[i * N + j] - s));
                top = fmax(top, fabs(s));
            }
        ck_assert_msg(worst <= 1e-6 * top, "g %s: %g of %g", nodecay ? "0" : "random", worst, top);
        /* and the library's gla with the same gates (simple_gla at g = 0): float precision */
        static float Mg[N * N];
        static double Md[N * N];
        ck_assert_int_eq(run_form(Mg, &x, nodecay ? AV_SIMPLE_GLA : AV_GLA, F_MATRIX, 64), AV_OK);
        for (size_t e = 0; e < (size_t)N * N; e++) Md[e] = Mg[e];
        double e = rel_f(M, Md, (size_t)N * N);
        ck_assert_msg(e <= 1e-6, "dplr, a = b = 0, against %s: %g", nodecay ? "simple_gla" : "gla", e);
    }
}
END_TEST

/* Gated DeltaNet and KDA written as dplr (docs/gated.md "Maps"): b = k̃, a = −β_t(α_t ⊙ k̃_t), k ← β_t k̃_t, the
 * same gates, q̃ unchanged, against their own recurrence (S' = Diag(α_t)S, u = β_t(v_t − S'ᵀk̃_t),
 * S = S' + k̃_t u_tᵀ, o_t = Sᵀq̃_t) written here. */
START_TEST(test_dplr_is_gdn_and_kda) {
    enum { N = 41, D = 6, DV = 4 };
    static float Q[N * D], K[N * D], V[N * DV], g[N * D], beta[N], Qn[N * D], Kb[N * D], a[N * D], b[N * D], O[N * DV];
    static double Qt[N * D], Kt[N * D], Or[N * DV];
    tu_fill_normal(Q, N * D, 0, 1, 21);
    tu_fill_normal(K, N * D, 0, 1, 22);
    tu_fill_normal(V, N * DV, 0, 1, 23);
    tu_fill_uniform(beta, N, 0.1, 1.9, 24);
    for (int kda = 0; kda <= 1; kda++) {
        tu_fill_uniform(g, N * D, -0.4, 0, 25 + kda);
        if (!kda) /* gdn: one gate per token, broadcast to the channels */
            for (int t = 0; t < N; t++)
                for (int c = 1; c < D; c++) g[t * D + c] = g[t * D];
        gcase raw = {N, D, DV, Q, K, V, NULL, 1, 0, NULL, NULL, 1 / sqrt((double)D), 1};
        tilde(Qt, Kt, &raw);
        double S[D * DV] = {0};
        for (int t = 0; t < N; t++) {
            double u[DV];
            for (int c = 0; c < D; c++)
                for (int e = 0; e < DV; e++) S[c * DV + e] *= exp(g[t * D + c]);
            for (int e = 0; e < DV; e++) {
                u[e] = V[t * DV + e];
                for (int c = 0; c < D; c++) u[e] -= S[c * DV + e] * Kt[t * D + c];
                u[e] *= beta[t];
            }
            for (int c = 0; c < D; c++)
                for (int e = 0; e < DV; e++) S[c * DV + e] += Kt[t * D + c] * u[e];
            for (int e = 0; e < DV; e++) {
                Or[t * DV + e] = 0;
                for (int c = 0; c < D; c++) Or[t * DV + e] += S[c * DV + e] * Qt[t * D + c];
            }
        }
        for (int t = 0; t < N; t++)
            for (int c = 0; c < D; c++) {
                int e = t * D + c;
                Qn[e] = (float)(Qt[e] * sqrt((double)D)); /* q̃ = scale·Qn */
                Kb[e] = (float)(beta[t] * Kt[e]);
                a[e] = (float)(-beta[t] * exp(g[e]) * Kt[e]);
                b[e] = (float)Kt[e];
            }
        gcase x = {N, D, DV, Qn, Kb, V, g, D, 0, a, b, 1 / sqrt((double)D), 0};
        for (int path = F_QUADRATIC; path <= F_CHUNKWISE; path++) {
            ck_assert_int_eq(run_form(O, &x, AV_DPLR, path, 16), AV_OK);
            double e = rel_f(O, Or, N * DV);
            ck_assert_msg(e <= 1e-5, "%s as dplr, path %d: %g", kda ? "kda" : "gdn", path, e);
        }
        /* and the library's own gdn, kda on the raw inputs: the same M */
        static float Md[N * N], Mg[N * N];
        static double Mgd[N * N];
        ck_assert_int_eq(run_form(Md, &x, AV_DPLR, F_MATRIX, 64), AV_OK);
        av_params p;
        ck_assert_int_eq(av_params_default(&p, kda ? AV_KDA : AV_GDN), AV_OK);
        ck_assert_int_eq(av_params_set_gates(&p, g, N, kda ? D : 1, beta), AV_OK);
        static float gtok[N];
        for (int t = 0; t < N; t++) gtok[t] = g[t * D];
        if (!kda) ck_assert_int_eq(av_params_set_gates(&p, gtok, N, 1, beta), AV_OK);
        size_t wb = av_matrix_work(&p, N, D);
        void *w = malloc(wb);
        ck_assert_int_eq(av_matrix(Mg, Q, K, N, D, &p, w, wb), AV_OK);
        free(w);
        for (size_t e = 0; e < (size_t)N * N; e++) Mgd[e] = Mg[e];
        double e = rel_f(Md, Mgd, (size_t)N * N);
        ck_assert_msg(e <= 1e-5, "dplr against the library's %s: %g", kda ? "kda" : "gdn", e);
    }
}
END_TEST

/* The semiseparable rank of M across h = n/2 (av_semiseparable_rank at M's own tolerance). */
static double rank_across(const float *M, int n) {
    double *sv = malloc(sizeof(double) * n), floor_, rank = -1;
    size_t ws = av_svd_work(n, AV_SVD_ACCURATE), wr = av_semiseparable_work(n, AV_SVD_ACCURATE);
    void *w = malloc(ws > wr ? ws : wr);
    ck_assert_int_eq(av_singular_values(sv, &floor_, M, n, AV_SVD_ACCURATE, w, ws), AV_OK);
    ck_assert_int_eq(av_semiseparable_rank(&rank, NULL, M, n, sv[0], floor_, AV_SVD_ACCURATE, w, wr), AV_OK);
    free(sv), free(w);
    return rank;
}

/* A reset (g = −30 on every channel at token h = n/2) clears the decayed state, but not what a_h reads from it
 * before the decay: across the reset dplr keeps the rank-one write b_h x_hᵀ (semiseparable rank 1 where it
 * is d without the reset), and nothing when a_h = b_h = 0 (rank 0), like gla. fox: rank 0 across its reset. */
START_TEST(test_reset) {
    enum { N = 30, D = 5, H = 15 };
    static float Q[N * D], K[N * D], g[N * D], a[N * D], b[N * D], Kr[N * D], eta[N * D], M[N * N];
    tu_fill_normal(Q, N * D, 0, 1, 31);
    tu_fill_normal(K, N * D, 0, 1, 32);
    tu_fill_normal(Kr, N * D, 0, 1, 33);
    tu_fill_uniform(eta, N * D, 0.2, 1, 34);
    tu_fill_uniform(g, N * D, -0.2, 0, 35);
    rwkv_ab(a, b, Kr, eta, N, D);
    gcase x = {N, D, 1, Q, K, NULL, g, D, 0, a, b, 1, 0};
    ck_assert_int_eq(run_form(M, &x, AV_DPLR, F_MATRIX, 64), AV_OK);
    ck_assert_msg(rank_across(M, N) == D, "no reset: %g", rank_across(M, N));
    for (int c = 0; c < D; c++) g[H * D + c] = -30;
    ck_assert_int_eq(run_form(M, &x, AV_DPLR, F_MATRIX, 64), AV_OK);
    ck_assert_msg(rank_across(M, N) == 1, "reset, a_h b_h kept: %g", rank_across(M, N));
    for (int c = 0; c < D; c++) a[H * D + c] = b[H * D + c] = 0;
    ck_assert_int_eq(run_form(M, &x, AV_DPLR, F_MATRIX, 64), AV_OK);
    ck_assert_msg(rank_across(M, N) == 0, "reset, a_h = b_h = 0: %g", rank_across(M, N));
    for (int t = 0; t < N; t++) g[t] = t == H ? -30 : -0.1f;
    gcase f = {N, D, 1, Q, K, NULL, g, 1, 0, NULL, NULL, 1 / sqrt((double)D), 0};
    ck_assert_int_eq(run_form(M, &f, AV_FOX, F_MATRIX, 64), AV_OK);
    ck_assert_msg(rank_across(M, N) == 0, "fox reset: %g", rank_across(M, N));
}
END_TEST

/* av_rwkv7_vectors: a = −κ̂ (unit rows), b = κ̂ ⊙ η, a zero row stays zero; the constant rate; refusals. */
START_TEST(test_rwkv7_vectors) {
    enum { N = 9, D = 6 };
    static float K[N * D], eta[N * D], a[N * D], b[N * D], a2[N * D], b2[N * D];
    tu_fill_normal(K, N * D, 0, 2, 41);
    tu_fill_uniform(eta, N * D, 0, 1, 42);
    for (int c = 0; c < D; c++) K[3 * D + c] = 0;
    ck_assert_int_eq(av_rwkv7_vectors(a, b, K, N, D, eta, 0), AV_OK);
    for (int t = 0; t < N; t++) {
        double ss = 0, aa = 0;
        for (int c = 0; c < D; c++) ss += (double)K[t * D + c] * K[t * D + c];
        for (int c = 0; c < D; c++) {
            double kap = ss > 0 ? K[t * D + c] / sqrt(ss) : 0;
            ck_assert(fabs(a[t * D + c] + kap) <= 1e-7);
            ck_assert(fabs(b[t * D + c] - kap * eta[t * D + c]) <= 1e-7);
            aa += (double)a[t * D + c] * a[t * D + c];
        }
        ck_assert_msg(t == 3 ? aa == 0 : fabs(aa - 1) <= 1e-6, "row %d: |a|^2 = %g", t, aa);
    }
    for (size_t e = 0; e < N * D; e++) eta[e] = 0.25f;
    ck_assert_int_eq(av_rwkv7_vectors(a, b, K, N, D, eta, 0), AV_OK);
    ck_assert_int_eq(av_rwkv7_vectors(a2, b2, K, N, D, NULL, 0.25), AV_OK);
    ck_assert(memcmp(a, a2, sizeof a) == 0 && memcmp(b, b2, sizeof b) == 0);
    memcpy(a2, a, sizeof a);
    ck_assert_int_eq(av_rwkv7_vectors(a, b, K, N, D, NULL, 1.5), AV_ERR_GATES);
    eta[5] = -0.1f;
    ck_assert_int_eq(av_rwkv7_vectors(a, b, K, N, D, eta, 0), AV_ERR_GATES);
    eta[5] = NAN;
    ck_assert_int_eq(av_rwkv7_vectors(a, b, K, N, D, eta, 0), AV_ERR_NONFINITE);
    ck_assert_int_eq(av_rwkv7_vectors(a, b, K, 0, D, NULL, 0.5), AV_ERR_SIZE);
    ck_assert_int_eq(av_rwkv7_vectors(a, NULL, K, N, D, NULL, 0.5), AV_ERR_NULL);
    ck_assert(memcmp(a, a2, sizeof a) == 0); /* nothing written by a refusal */
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// fox

/* The forms against the reference: random per-token gates with a reset, a constant gate (run as softmax with
 * its decay), qk_l2norm with gates and with a constant gate (fox's own code); rows sum to 1. */
START_TEST(test_fox_forms) {
    enum { N = 77, D = 7, DV = 5 };
    static float Q[N * D], K[N * D], V[N * DV], g[N], M[N * N];
    for (int kind = 0; kind < 4; kind++) {
        tu_fill_normal(Q, N * D, 0, 1.5, 51 + kind);
        tu_fill_normal(K, N * D, 0, 1.5, 52 + kind);
        tu_fill_normal(V, N * DV, 0, 1, 53 + kind);
        tu_fill_uniform(g, N, -0.4, 0, 54 + kind);
        g[40] = -30;
        gcase x = {N, D, DV, Q, K, V, g, 1, 0, NULL, NULL, 1 / sqrt((double)D), 0};
        if (kind == 1) x.g = NULL, x.g0 = log(0.8);
        if (kind == 2) x.l2 = 1, x.scale = 4;
        if (kind == 3) x.g = NULL, x.g0 = log(0.7), x.l2 = 1, x.scale = 3; /* constant, not handed to softmax */
        char what[32];
        snprintf(what, sizeof what, "fox kind %d", kind);
        check_case(&x, AV_FOX, what);
        ck_assert_int_eq(run_form(M, &x, AV_FOX, F_MATRIX, 64), AV_OK);
        for (int i = 0; i < N; i++) {
            double s = 0;
            for (int j = 0; j < N; j++) s += M[i * N + j];
            ck_assert_msg(fabs(s - 1) <= 1e-6, "%s: row %d sums to %.9f", what, i, s);
        }
        if (kind == 0) /* the reset at 40: rows i ≥ 40 put ≈ 0 weight before 40 */
            for (int i = 40; i < N; i++) {
                double s = 0;
                for (int j = 0; j < 40; j++) s += M[i * N + j];
                ck_assert_msg(s <= 1e-10, "row %d keeps %g before the reset", i, s);
            }
    }
}
END_TEST

/* Against the library's softmax: g = 0 is the causal softmax, g = ln γ the forgetting softmax with decay γ
 * (the array path, to float precision). */
START_TEST(test_fox_is_softmax) {
    enum { N = 53, D = 8 };
    static float Q[N * D], K[N * D], g[N], M[N * N], S[N * N];
    tu_fill_normal(Q, N * D, 0, 1, 61);
    tu_fill_normal(K, N * D, 0, 1, 62);
    for (int k = 0; k < 2; k++) {
        double gamma = k ? 0.85 : 1;
        for (int t = 0; t < N; t++) g[t] = (float)log(gamma);
        gcase x = {N, D, 1, Q, K, NULL, g, 1, 0, NULL, NULL, 1 / sqrt((double)D), 0};
        ck_assert_int_eq(run_form(M, &x, AV_FOX, F_MATRIX, 64), AV_OK);
        av_params p;
        av_params_default(&p, AV_SOFTMAX);
        p.causal = 1;
        p.decay = gamma;
        size_t wb = av_matrix_work(&p, N, D);
        void *w = malloc(wb);
        ck_assert_int_eq(av_matrix(S, Q, K, N, D, &p, w, wb), AV_OK);
        free(w);
        double e = tu_max_abs_diff(M, S, (size_t)N * N);
        ck_assert_msg(e <= 2e-6, "gamma %g: %g", gamma, e);
    }
}
END_TEST

/* fox without a gate array (and without qk_l2norm) is the forgetting softmax of the same decay, bit for bit by
 * every path (attention.c and linear.c hand it to softmax); decay 1 is plain causal softmax. */
START_TEST(test_fox_delegates) {
    enum { N = 39, D = 6, DV = 3 };
    static float Q[N * D], K[N * D], V[N * DV], A[N * N], B[N * N], Oa[N * DV], Ob[N * DV];
    tu_fill_normal(Q, N * D, 0, 1, 71);
    tu_fill_normal(K, N * D, 0, 1, 72);
    tu_fill_normal(V, N * DV, 0, 1, 73);
    for (int k = 0; k < 2; k++) {
        gcase x = {N, D, DV, Q, K, V, NULL, 1, k ? log(0.9) : 0, NULL, NULL, 0.5, 0};
        av_params pf, ps;
        params_of(&pf, AV_FOX, &x, 8);
        ck_assert_int_eq(av_params_default(&ps, AV_SOFTMAX), AV_OK);
        ps.causal = 1, ps.scale = 0.5, ps.decay = pf.decay, ps.chunk = 8;
        for (int form = F_MATRIX; form <= F_CHUNKWISE; form++) {
            if (form == F_LINEAR) continue;
            float *a = form == F_MATRIX ? A : Oa, *b = form == F_MATRIX ? B : Ob;
            size_t bytes = form == F_MATRIX ? sizeof A : sizeof Oa;
            ck_assert_int_eq(run_params(a, &x, &pf, form), AV_OK);
            ck_assert_int_eq(run_params(b, &x, &ps, form), AV_OK);
            ck_assert_msg(memcmp(a, b, bytes) == 0, "decay %g, form %d", pf.decay, form);
        }
    }
}
END_TEST

/* Refused with one status and nothing computed: non-causal, a gate > 0, a without b, arrays for another n,
 * per-channel gates for fox, a non-finite a. */
START_TEST(test_refusals) {
    enum { N = 12, D = 4, DV = 2 };
    static float Q[N * D], K[N * D], V[N * DV], g[N * D], a[N * D], b[N * D], M[N * N], O[N * DV];
    tu_fill_normal(Q, N * D, 0, 1, 81);
    tu_fill_normal(K, N * D, 0, 1, 82);
    tu_fill_normal(V, N * DV, 0, 1, 83);
    tu_fill_uniform(g, N * D, -1, 0, 84);
    tu_fill_normal(a, N * D, 0, 0.3, 85);
    tu_fill_normal(b, N * D, 0, 0.3, 86);
    for (int v = AV_DPLR; v <= AV_FOX; v++)
        for (int why = 0; why < 6; why++) {
            gcase x = {N, D, DV, Q, K, V, g, v == AV_FOX ? 1 : D, 0, v == AV_DPLR ? a : NULL, v == AV_DPLR ? b : NULL, 0.5, 0};
            av_params p;
            params_of(&p, v, &x, 4);
            int want = AV_ERR_GATES;
            float keep = 0;
            switch (why) {
            case 0: p.causal = 0, want = AV_ERR_NEEDS_CAUSAL; break;
            case 1: keep = g[7], g[7] = 0.01f; break;
            case 2:
                if (v == AV_FOX) continue;
                ck_assert_int_eq(av_params_set_dplr(&p, a, NULL, N), AV_OK);
                break;
            case 3: /* arrays for another n: the setter refuses a second n, the call the first */
                if (v == AV_DPLR) {
                    ck_assert_int_eq(av_params_set_gates(&p, g, N - 1, x.gc, NULL), AV_ERR_GATES);
                    ck_assert_int_eq(av_params_set_dplr(&p, NULL, NULL, 0), AV_OK);
                }
                ck_assert_int_eq(av_params_set_gates(&p, g, N - 1, x.gc, NULL), AV_OK);
                break;
            case 4:
                if (v == AV_DPLR) continue;
                ck_assert_int_eq(av_params_set_gates(&p, g, N, D, NULL), AV_OK);
                break;
            case 5:
                if (v == AV_FOX) continue;
                keep = a[5], a[5] = NAN, want = AV_ERR_NONFINITE;
                break;
            }
            for (int form = F_MATRIX; form <= F_CHUNKWISE; form++) {
                if (form == F_LINEAR && v == AV_FOX) continue;
                float *out = form == F_MATRIX ? M : O;
                size_t count = form == F_MATRIX ? N * N : N * DV;
                for (size_t e = 0; e < count; e++) out[e] = 7;
                int st = run_params(out, &x, &p, form);
                ck_assert_msg(st == want, "%s, case %d, form %d: %d", av_variant_name(v), why, form, st);
                for (size_t e = 0; e < count; e++) ck_assert(out[e] == 7);
            }
            if (why == 1) g[7] = keep;
            if (why == 5) a[5] = keep;
        }
}
END_TEST

/* The semiseparable ceilings: d for dplr (its state S is d×dv), h = ⌊n/2⌋ for fox (a softmax). */
START_TEST(test_ceilings) {
    av_params p;
    long c = -1;
    ck_assert_int_eq(av_params_default(&p, AV_DPLR), AV_OK);
    ck_assert_int_eq(av_semiseparable_ceiling(&c, &p, 41, 6), AV_OK);
    ck_assert_int_eq(c, 6);
    ck_assert_int_eq(av_semiseparable_ceiling(&c, &p, 9, 6), AV_OK);
    ck_assert_int_eq(c, 4);
    ck_assert_int_eq(av_params_default(&p, AV_FOX), AV_OK);
    ck_assert_int_eq(av_semiseparable_ceiling(&c, &p, 41, 6), AV_OK);
    ck_assert_int_eq(c, 20);
}
END_TEST

/* av_gated_step's dplr (gated.c) token by token against av_recurrent's (dplr.c): two codes, one recurrence. */
START_TEST(test_dplr_step) {
    enum { N = 23, D = 5, DV = 3 };
    static float Q[N * D], K[N * D], V[N * DV], g[N * D], a[N * D], b[N * D], Kr[N * D], eta[N * D], O[N * DV], o[DV];
    tu_fill_normal(Q, N * D, 0, 1, 91);
    tu_fill_normal(K, N * D, 0, 1, 92);
    tu_fill_normal(V, N * DV, 0, 1, 93);
    tu_fill_uniform(g, N * D, -0.5, 0, 94);
    tu_fill_normal(Kr, N * D, 0, 1, 95);
    tu_fill_uniform(eta, N * D, 0, 1, 96);
    ck_assert_int_eq(av_rwkv7_vectors(a, b, Kr, N, D, eta, 0), AV_OK);
    gcase x = {N, D, DV, Q, K, V, g, D, 0, a, b, 1, 0};
    av_params p;
    params_of(&p, AV_DPLR, &x, 8);
    ck_assert_int_eq(run_params(O, &x, &p, F_RECURRENT), AV_OK);
    double S[D * DV] = {0}, worst = 0, top = 0;
    for (int t = 0; t < N; t++) {
        ck_assert_int_eq(av_gated_step(o, S, Q + t * D, K + t * D, V + t * DV, g + t * D, 1, a + t * D, b + t * D, D,
                                       DV, &p),
                         AV_OK);
        for (int e = 0; e < DV; e++) {
            worst = fmax(worst, fabs(o[e] - O[t * DV + e]));
            top = fmax(top, fabs(O[t * DV + e]));
        }
    }
    ck_assert_msg(worst <= 1e-6 * top, "step against the recurrence: %g of %g", worst, top);
}
END_TEST

/* av_row_kl for fox where M underflowed: a reset of g = −120 leaves weights e^{−120} ≈ 8e-53 before it, 0 in
 * float32 while the softmax reference is positive there; the KL comes from fox's log domain, and equals the
 * float64 reference's. */
START_TEST(test_fox_row_kl) {
    enum { N = 24, D = 4 };
    static float Q[N * D], K[N * D], g[N], M[N * N], A[N * N];
    static double Mr[N * N];
    tu_fill_normal(Q, N * D, 0, 1, 111);
    tu_fill_normal(K, N * D, 0, 1, 112);
    for (int l2 = 0; l2 <= 1; l2++) {
        for (int t = 0; t < N; t++) g[t] = t == 12 ? -120 : -0.1f;
        gcase x = {N, D, 1, Q, K, NULL, g, 1, 0, NULL, NULL, 0.5, l2};
        av_params p, ps;
        params_of(&p, AV_FOX, &x, 64);
        ck_assert_int_eq(run_params(M, &x, &p, F_MATRIX), AV_OK);
        ck_assert(M[20 * N + 3] == 0);
        ck_assert_int_eq(av_params_default(&ps, AV_SOFTMAX), AV_OK);
        ps.causal = 1, ps.scale = 0.5;
        ck_assert_int_eq(run_params(A, &x, &ps, F_MATRIX), AV_OK);
        ref_fox(Mr, &x);
        double want = 0;
        for (int i = 0; i < N; i++)
            for (int j = 0; j <= i; j++)
                if (A[i * N + j] > 0) want += A[i * N + j] * (log((double)A[i * N + j]) - log(Mr[i * N + j]));
        want /= N;
        size_t wb = av_row_kl_work(&p, N, D);
        void *w = malloc(wb);
        double kl = NAN;
        int reason = -1;
        ck_assert_int_eq(av_row_kl(&kl, &reason, M, A, Q, K, N, D, &p, w, wb), AV_OK);
        free(w);
        ck_assert_int_eq(reason, AV_REASON_NONE);
        ck_assert_msg(fabs(kl - want) <= 1e-5 * want, "l2 %d: KL %.9g, float64 %.9g", l2, kl, want);
    }
}
END_TEST

Suite *suite_dplr_fox(void) {
    Suite *s = suite_create("dplr_fox");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_dplr_forms);
    tcase_add_test(tc, test_dplr_reductions_gla);
    tcase_add_test(tc, test_dplr_is_gdn_and_kda);
    tcase_add_test(tc, test_reset);
    tcase_add_test(tc, test_rwkv7_vectors);
    tcase_add_test(tc, test_fox_forms);
    tcase_add_test(tc, test_fox_is_softmax);
    tcase_add_test(tc, test_fox_delegates);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_ceilings);
    tcase_add_test(tc, test_dplr_step);
    tcase_add_test(tc, test_fox_row_kl);
    suite_add_tcase(s, tc);
    return s;
}
