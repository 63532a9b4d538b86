/* check_gated.c: simple_gla, gla, gdn and kda (docs/gated.md) against plain float64 references written from
 * the conventions, not from the kernels: each family's recurrence and its closed form, the three forms of the
 * library against them and against each other (chunk sizes, odd n), av_gated_step token by token, the
 * reductions (channels equal, constant gates = retention bit for bit, gdn ≈ deltanet, g = 0), the refusals, a
 * reset, and the registry's ceilings and costs. dplr and fox: check_dplr_fox.c.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz.h"
#include "testutil.h"

// ----------------------------------------------------------------------------------------------------
// the references (float64), from docs/gated.md

/* One call's inputs: Q, K (n×d), the gates g (n×gc; NULL: g0 for every token and channel), β (n; NULL: beta0). */
typedef struct gcase {
    int variant, n, d;
    const float *Q, *K, *g, *beta;
    int gc;
    double g0, beta0, scale; /* scale: the absolute factor (d^-1/2 by default) */
    int l2;                  /* qk_l2norm on */
} gcase;

static double gate_of(const gcase *c, int t, int ch) { return c->g ? c->g[(size_t)t * c->gc + (c->gc > 1 ? ch : 0)] : c->g0; }
static double beta_of(const gcase *c, int t) { return c->beta ? c->beta[t] : c->beta0; }
static int is_delta(int v) { return v == AV_GDN || v == AV_KDA; }

/* q̃ = scale·l2norm?(q), k̃ = l2norm?(k), l2norm(x) = x/√(Σx² + 1e-6). */
static void ref_qk(double *Qt, double *Kt, const gcase *c) {
    for (int i = 0; i < c->n; i++) {
        double sq = 0, sk = 0;
        for (int e = 0; e < c->d; e++) {
            sq += (double)c->Q[i * c->d + e] * c->Q[i * c->d + e];
            sk += (double)c->K[i * c->d + e] * c->K[i * c->d + e];
        }
        double fq = c->l2 ? 1 / sqrt(sq + 1e-6) : 1, fk = c->l2 ? 1 / sqrt(sk + 1e-6) : 1;
        for (int e = 0; e < c->d; e++) {
            Qt[i * c->d + e] = c->scale * c->Q[i * c->d + e] * fq;
            Kt[i * c->d + e] = c->K[i * c->d + e] * fk;
        }
    }
}

/* The recurrence: S_t = Diag(α_t) S_{t−1} + k̃ vᵀ (simple_gla, gla), or S' = Diag(α_t)S_{t−1},
 * S_t = S' + β_t k̃ (v − S'ᵀk̃)ᵀ (gdn, kda); o_t = S_tᵀq̃_t. V is n×dv (double). */
static void ref_recurrence(double *O, const gcase *c, const double *V, int dv) {
    int n = c->n, d = c->d;
    double *Qt = malloc(sizeof(double) * n * d), *Kt = malloc(sizeof(double) * n * d);
    double *S = calloc((size_t)d * dv, sizeof(double)), *u = malloc(sizeof(double) * dv);
    ref_qk(Qt, Kt, c);
    for (int t = 0; t < n; t++) {
        for (int a = 0; a < d; a++)
            for (int e = 0; e < dv; e++) S[a * dv + e] *= exp(gate_of(c, t, a));
        for (int e = 0; e < dv; e++) {
            u[e] = V[t * dv + e];
            if (is_delta(c->variant)) {
                double sk = 0;
                for (int a = 0; a < d; a++) sk += S[a * dv + e] * Kt[t * d + a];
                u[e] = beta_of(c, t) * (u[e] - sk);
            }
        }
        for (int a = 0; a < d; a++)
            for (int e = 0; e < dv; e++) S[a * dv + e] += Kt[t * d + a] * u[e];
        for (int e = 0; e < dv; e++) {
            double o = 0;
            for (int a = 0; a < d; a++) o += S[a * dv + e] * Qt[t * d + a];
            O[t * dv + e] = o;
        }
    }
    free(Qt); free(Kt); free(S); free(u);
}

/* Γ_ijc = exp(Σ_{l=j+1..i} g_lc), summed forward from j + 1. */
static double ref_gamma(const gcase *c, int i, int j, int ch) {
    double s = 0;
    for (int l = j + 1; l <= i; l++) s += gate_of(c, l, ch);
    return exp(s);
}

/* The closed form: M_ij = Σ_c q̃_ic k̃_jc Γ_ijc (simple_gla, gla), or M = A_qk (I + diag(β) A_kk)⁻¹ diag(β)
 * (gdn, kda), the inverse N by columns: (I + diag(β) A_kk) N = I, forward substitution. */
static void ref_closed(double *M, const gcase *c) {
    int n = c->n, d = c->d;
    double *Qt = malloc(sizeof(double) * n * d), *Kt = malloc(sizeof(double) * n * d);
    double *Aqk = calloc((size_t)n * n, sizeof(double)), *Akk = calloc((size_t)n * n, sizeof(double));
    ref_qk(Qt, Kt, c);
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            for (int a = 0; a < d; a++) {
                double G = ref_gamma(c, i, j, a);
                Aqk[i * n + j] += Qt[i * d + a] * Kt[j * d + a] * G;
                if (j < i) Akk[i * n + j] += Kt[i * d + a] * Kt[j * d + a] * G;
            }
    if (!is_delta(c->variant)) {
        memcpy(M, Aqk, sizeof(double) * n * n);
    } else {
        double *N = calloc((size_t)n * n, sizeof(double));
        for (int col = 0; col < n; col++)
            for (int i = 0; i < n; i++) {
                double s = i == col;
                for (int j = 0; j < i; j++) s -= beta_of(c, i) * Akk[i * n + j] * N[j * n + col];
                N[i * n + col] = s;
            }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int l = 0; l < n; l++) s += Aqk[i * n + l] * N[l * n + j];
                M[i * n + j] = s * beta_of(c, j);
            }
        free(N);
    }
    free(Qt); free(Kt); free(Aqk); free(Akk);
}

// ----------------------------------------------------------------------------------------------------
// helpers

static void *work_of(size_t bytes) { return malloc(bytes ? bytes : 1); }

/* max |a − b| / max(max |b|, floor) */
static double rel_err_fd(const float *a, const double *b, size_t count) {
    double m = 0, e = 0;
    for (size_t i = 0; i < count; i++) {
        m = fmax(m, fabs(b[i]));
        e = fmax(e, fabs(a[i] - b[i]));
    }
    return e / fmax(m, 1e-30);
}
static double rel_err_ff(const float *a, const float *b, size_t count) {
    double m = 0, e = 0;
    for (size_t i = 0; i < count; i++) {
        m = fmax(m, fabs((double)b[i]));
        e = fmax(e, fabs((double)a[i] - b[i]));
    }
    return e / fmax(m, 1e-30);
}

/* The library's params for a case. */
static av_params params_of(const gcase *c) {
    av_params p;
    av_params_default(&p, c->variant);
    p.scale = c->scale;
    p.qk_l2norm = c->l2 ? 1 : -1;
    if (!c->g) p.decay = exp(c->g0);
    if (!c->beta && is_delta(c->variant)) p.beta = c->beta0;
    ck_assert_int_eq(av_params_set_gates(&p, c->g, c->n, c->gc, c->beta), AV_OK);
    return p;
}

/* Gates for n tokens and gc channels: uniform log-gates in [lo, 0], a reset (−30) at `reset` when ≥ 0. */
static float *make_gates(int n, int gc, double lo, int reset, uint64_t seed) {
    float *g = malloc(sizeof(float) * n * gc);
    tu_fill_uniform(g, (size_t)n * gc, lo, 0, seed);
    if (reset >= 0 && reset < n)
        for (int c = 0; c < gc; c++) g[reset * gc + c] = -30.0f;
    return g;
}
static float *make_betas(int n, uint64_t seed) {
    float *b = malloc(sizeof(float) * n);
    tu_fill_uniform(b, (size_t)n, 0.05, 1.95, seed);
    return b;
}

/* Every form of the library against the references for one case: av_matrix against the closed form, and
 * av_attend, av_recurrent, av_chunkwise (several chunk sizes), av_linear and av_gated_step against the
 * recurrence. tol: relative to the largest entry. */
static void check_case(const gcase *c, int dv, double tol, const char *what) {
    int n = c->n, d = c->d;
    float *V = malloc(sizeof(float) * n * dv), *M = malloc(sizeof(float) * n * n), *O = malloc(sizeof(float) * n * dv);
    double *Vd = malloc(sizeof(double) * n * dv), *Md = malloc(sizeof(double) * n * n), *Od = malloc(sizeof(double) * n * dv);
    double *Mr = malloc(sizeof(double) * n * n), *I = calloc((size_t)n * n, sizeof(double));
    tu_fill_normal(V, (size_t)n * dv, 0, 1, 77u + n);
    for (int e = 0; e < n * dv; e++) Vd[e] = V[e];
    for (int i = 0; i < n; i++) I[i * n + i] = 1;
    ref_closed(Md, c);
    ref_recurrence(Od, c, Vd, dv);
    /* the references agree with each other: M is the recurrence run on V = I */
    ref_recurrence(Mr, c, I, n);
    double mx = 0, e = 0;
    for (int i = 0; i < n * n; i++) mx = fmax(mx, fabs(Md[i])), e = fmax(e, fabs(Mr[i] - Md[i]));
    ck_assert_msg(e <= 1e-12 * fmax(mx, 1e-300), "%s: the references disagree (%g)", what, e / mx);

    av_params p = params_of(c);
    size_t wm = av_attend_work(&p, n, d, dv);
    ck_assert_msg(wm > 0, "%s: no workspace", what);
    void *w = work_of(wm);
    ck_assert_int_eq(av_matrix(M, c->Q, c->K, n, d, &p, w, wm), AV_OK);
    double err = rel_err_fd(M, Md, (size_t)n * n);
    ck_assert_msg(err <= tol, "%s: matrix vs closed form %g", what, err);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) ck_assert_msg(M[i * n + j] == 0, "%s: M[%d][%d] above the diagonal", what, i, j);
    ck_assert_int_eq(av_attend(O, NULL, c->Q, c->K, V, n, d, dv, &p, w, wm), AV_OK);
    err = rel_err_fd(O, Od, (size_t)n * dv);
    ck_assert_msg(err <= tol, "%s: M·V vs recurrence %g", what, err);
    free(w);

    size_t wr = av_recurrent_work(&p, n, d, dv);
    w = work_of(wr);
    ck_assert_int_eq(av_recurrent(O, c->Q, c->K, V, n, d, dv, &p, w, wr), AV_OK);
    err = rel_err_fd(O, Od, (size_t)n * dv);
    ck_assert_msg(err <= tol, "%s: recurrent vs reference %g", what, err);
    free(w);

    const int chunks[] = {1, 3, 16, 64, n, 0};
    for (int k = 0; k < 6; k++) {
        p.chunk = chunks[k];
        size_t wc = av_chunkwise_work(&p, n, d, dv);
        w = work_of(wc);
        ck_assert_int_eq(av_chunkwise(O, c->Q, c->K, V, n, d, dv, &p, w, wc), AV_OK);
        err = rel_err_fd(O, Od, (size_t)n * dv);
        ck_assert_msg(err <= tol, "%s: chunkwise C = %d vs reference %g", what, chunks[k], err);
        free(w);
    }
    p.chunk = 5;
    size_t wl = av_linear_work(&p, n, d, dv);
    w = work_of(wl);
    ck_assert_int_eq(av_linear(O, c->Q, c->K, V, n, d, dv, &p, w, wl), AV_OK);
    err = rel_err_fd(O, Od, (size_t)n * dv);
    ck_assert_msg(err <= tol, "%s: linear vs reference %g", what, err);
    free(w);

    /* av_gated_step token by token: its own gate row and β, prm's arrays not read */
    double *S = calloc((size_t)d * dv, sizeof(double));
    av_params ps = p;
    for (int t = 0; t < n; t++) {
        const float *g = c->g ? c->g + (size_t)t * c->gc : NULL;
        int st = av_gated_step(O + t * dv, S, c->Q + t * d, c->K + t * d, V + t * dv, g, beta_of(c, t), NULL, NULL, d,
                               dv, &ps);
        ck_assert_msg(st == AV_OK, "%s: step %d: %d", what, t, st);
    }
    err = rel_err_fd(O, Od, (size_t)n * dv);
    ck_assert_msg(err <= tol, "%s: av_gated_step vs reference %g", what, err);
    free(S);
    free(V); free(M); free(O); free(Vd); free(Md); free(Od); free(Mr); free(I);
}

// ----------------------------------------------------------------------------------------------------
// the families against the references

static const int FAMILIES[] = {AV_SIMPLE_GLA, AV_GLA, AV_GDN, AV_KDA};

START_TEST(test_against_references) {
    int variant = FAMILIES[_i];
    const int NS[] = {1, 7, 33, 70}, DS[] = {5, 16};
    int per_channel = variant == AV_GLA || variant == AV_KDA;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 2; b++)
            for (int mode = 0; mode < 3; mode++) { /* gates: constant, an array per token, per channel */
                if (mode == 2 && !per_channel) continue;
                int n = NS[a], d = DS[b], gc = mode == 2 ? d : 1;
                float *Q = malloc(sizeof(float) * n * d), *K = malloc(sizeof(float) * n * d);
                tu_fill_normal(Q, (size_t)n * d, 0, 1, 11u * n + d);
                tu_fill_normal(K, (size_t)n * d, 0, 1, 13u * n + d);
                float *g = mode ? make_gates(n, gc, -0.6, n / 2, 17u * n + d + mode) : NULL;
                float *beta = is_delta(variant) && mode ? make_betas(n, 19u * n + d) : NULL;
                gcase c = {variant, n, d, Q, K, g, beta, gc, log(0.93), 0.7, 1 / sqrt((double)d), is_delta(variant)};
                char what[96];
                snprintf(what, sizeof what, "%s n=%d d=%d gates=%s", av_variant_name(variant), n, d,
                         mode == 0 ? "constant" : mode == 1 ? "per token" : "per channel");
                check_case(&c, b ? 9 : 3, 2e-5, what);
                /* the other qk_l2norm and another scale; raw keys of the delta rule scaled to norms below 1,
                 * so that its transitions I − βkkᵀ stay contractive */
                c.l2 = !c.l2;
                c.scale = 0.45;
                if (!c.l2 && is_delta(variant))
                    for (int e = 0; e < n * d; e++) K[e] = (float)(K[e] / (1.5 * sqrt((double)d)));
                check_case(&c, 4, 2e-5, what);
                free(Q); free(K); free(g); free(beta);
            }
}
END_TEST

/* β above 1 (negative eigenvalue 1 − β along k̃), β = 2, and gates near 0 and very negative in one sequence. */
START_TEST(test_delta_extremes) {
    int n = 41, d = 6;
    float Q[41 * 6], K[41 * 6], beta[41];
    tu_fill_normal(Q, (size_t)n * d, 0, 1, 5);
    tu_fill_normal(K, (size_t)n * d, 0, 1, 6);
    for (int t = 0; t < n; t++) beta[t] = t % 3 == 0 ? 2.0f : t % 3 == 1 ? 1.5f : 1.0f;
    float *g = make_gates(n, d, -8, 20, 7);
    for (int t = 0; t < n; t += 4)
        for (int c = 0; c < d; c++) g[t * d + c] = 0;
    for (int v = AV_GDN; v <= AV_KDA; v++) {
        gcase c = {v, n, d, Q, K, g, beta, v == AV_KDA ? d : 1, 0, 0, 1 / sqrt((double)d), 1};
        check_case(&c, 5, 2e-5, av_variant_name(v));
    }
    free(g);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// reductions

/* av_matrix of a prepared params into a new buffer. */
static float *matrix_of(const av_params *p, const float *Q, const float *K, int n, int d) {
    size_t wm = av_matrix_work(p, n, d);
    void *w = work_of(wm);
    float *M = malloc(sizeof(float) * n * n);
    ck_assert_int_eq(av_matrix(M, Q, K, n, d, p, w, wm), AV_OK);
    free(w);
    return M;
}

/* All channels equal: gla = simple_gla, kda = gdn (to float precision: the per-channel code path). */
START_TEST(test_channels_equal) {
    int n = 37, d = 7;
    float Q[37 * 7], K[37 * 7], beta[37], g1[37], gd[37 * 7];
    tu_fill_normal(Q, (size_t)n * d, 0, 1, 21);
    tu_fill_normal(K, (size_t)n * d, 0, 1, 22);
    tu_fill_uniform(g1, (size_t)n, -0.8, 0, 23);
    tu_fill_uniform(beta, (size_t)n, 0.1, 1.9, 24);
    g1[12] = -30;
    for (int t = 0; t < n; t++)
        for (int c = 0; c < d; c++) gd[t * d + c] = g1[t];
    const int pairs[2][2] = {{AV_GLA, AV_SIMPLE_GLA}, {AV_KDA, AV_GDN}};
    for (int k = 0; k < 2; k++) {
        av_params pc, ps;
        av_params_default(&pc, pairs[k][0]);
        av_params_default(&ps, pairs[k][1]);
        ck_assert_int_eq(av_params_set_gates(&pc, gd, n, d, beta), AV_OK);
        ck_assert_int_eq(av_params_set_gates(&ps, g1, n, 1, beta), AV_OK);
        float *Mc = matrix_of(&pc, Q, K, n, d), *Ms = matrix_of(&ps, Q, K, n, d);
        double e = rel_err_ff(Mc, Ms, (size_t)n * n);
        ck_assert_msg(e <= 1e-6, "%s with equal channels vs %s: %g", av_variant_name(pairs[k][0]),
                      av_variant_name(pairs[k][1]), e);
        free(Mc); free(Ms);
    }
}
END_TEST

/* Outputs of every form of p and r (each by its own workspace) are the same bits. */
static void same_bits(const av_params *p, const av_params *r, const float *Q, const float *K, const float *V, int n,
                      int d, int dv) {
    float *A = malloc(sizeof(float) * n * n), *B = malloc(sizeof(float) * n * n);
    for (int form = 0; form < 4; form++) {
        const av_params *x[2] = {p, r};
        float *out[2] = {A, B};
        for (int s = 0; s < 2; s++) {
            size_t wb = form == 0 ? av_matrix_work(x[s], n, d) : form == 1 ? av_linear_work(x[s], n, d, dv)
                        : form == 2 ? av_recurrent_work(x[s], n, d, dv) : av_chunkwise_work(x[s], n, d, dv);
            void *w = work_of(wb);
            int st = form == 0 ? av_matrix(out[s], Q, K, n, d, x[s], w, wb)
                     : form == 1 ? av_linear(out[s], Q, K, V, n, d, dv, x[s], w, wb)
                     : form == 2 ? av_recurrent(out[s], Q, K, V, n, d, dv, x[s], w, wb)
                                 : av_chunkwise(out[s], Q, K, V, n, d, dv, x[s], w, wb);
            ck_assert_int_eq(st, AV_OK);
            free(w);
        }
        size_t count = form == 0 ? (size_t)n * n : (size_t)n * dv;
        ck_assert_msg(memcmp(A, B, sizeof(float) * count) == 0, "%s form %d: not the same bits as %s",
                      av_variant_name(p->variant), form, av_variant_name(r->variant));
    }
    free(A); free(B);
}

/* Constant gates, no array: simple_gla is retention bit for bit (the delegation), at γ = 1 and γ < 1; through a
 * gate array of ln γ it agrees to float precision. */
START_TEST(test_simple_gla_is_retention) {
    int n = 45, d = 8, dv = 6;
    float Q[45 * 8], K[45 * 8], V[45 * 6], g[45];
    tu_fill_normal(Q, (size_t)n * d, 0, 1, 31);
    tu_fill_normal(K, (size_t)n * d, 0, 1, 32);
    tu_fill_normal(V, (size_t)n * dv, 0, 1, 33);
    const double decays[] = {1, 0.95, 0.6};
    for (int k = 0; k < 3; k++) {
        av_params p, r;
        av_params_default(&p, AV_SIMPLE_GLA);
        av_params_default(&r, AV_RETENTION);
        p.decay = r.decay = decays[k];
        p.chunk = r.chunk = 7;
        same_bits(&p, &r, Q, K, V, n, d, dv);
        for (int t = 0; t < n; t++) g[t] = (float)log(decays[k]);
        av_params_set_gates(&p, g, n, 1, NULL);
        p.decay = 0;
        float *Mg = matrix_of(&p, Q, K, n, d), *Mr = matrix_of(&r, Q, K, n, d);
        double e = rel_err_ff(Mg, Mr, (size_t)n * n);
        ck_assert_msg(e <= 2e-6, "simple_gla by ln(%g) gates vs retention: %g", decays[k], e);
        free(Mg); free(Mr);
    }
    /* the default decay of simple_gla is 1 (g = 0), retention's 1 − 2⁻⁵ */
    av_params p, r;
    av_params_default(&p, AV_SIMPLE_GLA);
    ck_assert_int_eq(av_params_resolve(&r, &p, n, d), AV_OK);
    ck_assert(r.decay == 1 && r.qk_l2norm == 0);
}
END_TEST

/* gdn with constant α, β against deltanet (same decay and β): both are the delta rule, but gdn's keys are fla's
 * x/√(Σx² + 1e-6) where deltanet's are exact unit rows. On rows of norm ~√d the gap is ~1e-7 relative; on rows
 * of norm 1e-3 the ε is as large as Σx² and the two differ at the percent level. */
START_TEST(test_gdn_vs_deltanet) {
    int n = 40, d = 8;
    float Q[40 * 8], K[40 * 8];
    for (int pass = 0; pass < 2; pass++) {
        double std = pass == 0 ? 1.0 : 3e-4;
        tu_fill_normal(Q, (size_t)n * d, 0, std, 41);
        tu_fill_normal(K, (size_t)n * d, 0, std, 42);
        av_params pg, pd;
        av_params_default(&pg, AV_GDN);
        av_params_default(&pd, AV_DELTANET);
        pd.causal = 1;
        pg.decay = pd.decay = 0.9;
        pg.beta = pd.beta = 0.8;
        float *Mg = matrix_of(&pg, Q, K, n, d), *Md = matrix_of(&pd, Q, K, n, d);
        double e = rel_err_ff(Mg, Md, (size_t)n * n);
        if (pass == 0) ck_assert_msg(e <= 5e-6, "gdn vs deltanet, unit-scale rows: %g", e);
        else ck_assert_msg(e >= 1e-3, "gdn vs deltanet, rows of norm ~1e-3: only %g apart (the eps should show)", e);
        free(Mg); free(Md);
    }
}
END_TEST

/* g = 0: no decay. simple_gla and gla are plain causal linear attention M_ij = q̃_i·k̃_j (j ≤ i); gdn is the
 * delta rule without decay (deltanet at α = 1 up to the keys' ε). */
START_TEST(test_zero_gates) {
    int n = 30, d = 5;
    float Q[30 * 5], K[30 * 5], gz[30 * 5] = {0};
    tu_fill_normal(Q, (size_t)n * d, 0, 1, 51);
    tu_fill_normal(K, (size_t)n * d, 0, 1, 52);
    for (int v = AV_SIMPLE_GLA; v <= AV_GLA; v++) {
        av_params p;
        av_params_default(&p, v);
        av_params_set_gates(&p, gz, n, v == AV_GLA ? d : 1, NULL);
        float *M = matrix_of(&p, Q, K, n, d);
        double worst = 0, mx = 0, s = 1 / sqrt((double)d);
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++) {
                double ref = 0;
                for (int c = 0; c < d; c++) ref += s * Q[i * d + c] * K[j * d + c];
                worst = fmax(worst, fabs(M[i * n + j] - ref));
                mx = fmax(mx, fabs(ref));
            }
        ck_assert_msg(worst <= 1e-6 * mx, "%s, g = 0: %g", av_variant_name(v), worst / mx);
        free(M);
    }
    av_params pg, pd;
    av_params_default(&pg, AV_GDN);
    av_params_default(&pd, AV_DELTANET);
    pd.causal = 1;
    av_params_set_gates(&pg, gz, n, 1, NULL);
    float *Mg = matrix_of(&pg, Q, K, n, d), *Md = matrix_of(&pd, Q, K, n, d);
    ck_assert_msg(rel_err_ff(Mg, Md, (size_t)n * n) <= 5e-6, "gdn at g = 0 vs deltanet at α = 1");
    free(Mg); free(Md);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// a reset

/* A reset (g = −30) at token r: M's block of rows ≥ r and columns < r is ≈ 0 (each entry carries e^-30), and
 * the semiseparable rank across it (r = n/2) is 0, against a full ceiling without it. */
START_TEST(test_reset_blocks) {
    int n = 48, d = 6, r = 24;
    float Q[48 * 6], K[48 * 6], beta[48];
    tu_fill_normal(Q, (size_t)n * d, 0, 1, 61);
    tu_fill_normal(K, (size_t)n * d, 0, 1, 62);
    tu_fill_uniform(beta, (size_t)n, 0.2, 1.5, 63);
    for (int k = 0; k < 4; k++) {
        int v = FAMILIES[k], gc = v == AV_GLA || v == AV_KDA ? d : 1;
        for (int with_reset = 0; with_reset < 2; with_reset++) {
            float *g = make_gates(n, gc, -0.1, with_reset ? r : -1, 64);
            av_params p;
            av_params_default(&p, v);
            av_params_set_gates(&p, g, n, gc, is_delta(v) ? beta : NULL);
            float *M = matrix_of(&p, Q, K, n, d);
            double across = 0, mx = 0;
            for (int i = 0; i < n; i++)
                for (int j = 0; j <= i; j++) {
                    mx = fmax(mx, fabs(M[i * n + j]));
                    if (i >= r && j < r) across = fmax(across, fabs(M[i * n + j]));
                }
            size_t sw = av_svd_work(n, AV_SVD_ACCURATE);
            void *w = work_of(sw > av_semiseparable_work(n, AV_SVD_ACCURATE) ? sw : av_semiseparable_work(n, AV_SVD_ACCURATE));
            double sv[48], floor_, rank;
            ck_assert_int_eq(av_singular_values(sv, &floor_, M, n, AV_SVD_ACCURATE, w, sw), AV_OK);
            ck_assert_int_eq(av_semiseparable_rank(&rank, NULL, M, n, sv[0], floor_, AV_SVD_ACCURATE, w,
                                                   av_semiseparable_work(n, AV_SVD_ACCURATE)),
                             AV_OK);
            long ceiling;
            ck_assert_int_eq(av_semiseparable_ceiling(&ceiling, &p, n, d), AV_OK);
            ck_assert_int_eq(ceiling, d);
            if (with_reset) {
                ck_assert_msg(across <= 1e-11 * mx, "%s: the block across the reset is %g of max", av_variant_name(v),
                              across / mx);
                ck_assert_msg(rank == 0, "%s: semiseparable rank across a reset %g", av_variant_name(v), rank);
            } else {
                ck_assert_msg(rank >= 2 && rank <= ceiling, "%s: semiseparable rank %g without a reset (ceiling %ld)",
                              av_variant_name(v), rank, ceiling);
            }
            free(g); free(M); free(w);
        }
    }
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// refusals: one status, nothing written

/* Every entry point refuses p with `want`, leaving the outputs as they were. */
static void refused(const av_params *p, const float *Q, const float *K, const float *V, int n, int d, int dv, int want,
                    const char *what) {
    static unsigned char w[1 << 20];
    float *M = malloc(sizeof(float) * n * n), *O = malloc(sizeof(float) * n * dv);
    for (int i = 0; i < n * n; i++) M[i] = 1234.5f;
    for (int i = 0; i < n * dv; i++) O[i] = 1234.5f;
    ck_assert_msg(av_matrix(M, Q, K, n, d, p, w, sizeof w) == want, "%s: av_matrix", what);
    ck_assert_msg(av_attend(O, M, Q, K, V, n, d, dv, p, w, sizeof w) == want, "%s: av_attend", what);
    ck_assert_msg(av_linear(O, Q, K, V, n, d, dv, p, w, sizeof w) == want, "%s: av_linear", what);
    ck_assert_msg(av_recurrent(O, Q, K, V, n, d, dv, p, w, sizeof w) == want, "%s: av_recurrent", what);
    ck_assert_msg(av_chunkwise(O, Q, K, V, n, d, dv, p, w, sizeof w) == want, "%s: av_chunkwise", what);
    ck_assert_msg(av_matrix_work(p, n, d) == 0 && av_chunkwise_work(p, n, d, dv) == 0, "%s: a workspace size", what);
    for (int i = 0; i < n * n; i++) ck_assert_msg(M[i] == 1234.5f, "%s: M written", what);
    for (int i = 0; i < n * dv; i++) ck_assert_msg(O[i] == 1234.5f, "%s: O written", what);
    free(M); free(O);
}

START_TEST(test_refusals) {
    enum { n = 9, d = 4, dv = 3 };
    float Q[n * d], K[n * d], V[n * dv], g[n * d], beta[n];
    tu_fill_normal(Q, n * d, 0, 1, 71);
    tu_fill_normal(K, n * d, 0, 1, 72);
    tu_fill_normal(V, n * dv, 0, 1, 73);
    for (int k = 0; k < 4; k++) {
        int v = FAMILIES[k];
        const char *name = av_variant_name(v);
        av_params p;
        av_params_default(&p, v);
        p.causal = 0;
        refused(&p, Q, K, V, n, d, dv, AV_ERR_NEEDS_CAUSAL, name);
        tu_fill_uniform(g, n * d, -1, 0, 74);
        for (int e = 0; e < n; e++) beta[e] = 0.5f;
        av_params_default(&p, v);
        av_params_set_gates(&p, g, n, 1, beta);
        g[5] = 0.01f; /* a gate above 0 */
        refused(&p, Q, K, V, n, d, dv, AV_ERR_GATES, name);
        g[5] = NAN;
        refused(&p, Q, K, V, n, d, dv, AV_ERR_NONFINITE, name);
        g[5] = -0.5f;
        av_params_set_gates(&p, g, n + 1, 1, beta); /* set for another n */
        refused(&p, Q, K, V, n, d, dv, AV_ERR_GATES, name);
        av_params_set_gates(&p, g, n, d, NULL); /* per channel */
        if (v == AV_SIMPLE_GLA || v == AV_GDN) refused(&p, Q, K, V, n, d, dv, AV_ERR_GATES, name);
        av_params_set_gates(&p, g, n, 3, NULL); /* neither 1 nor d */
        refused(&p, Q, K, V, n, d, dv, AV_ERR_GATES, name);
        if (is_delta(v)) { /* β outside (0, 2] */
            const float bad[] = {0.0f, -0.5f, 2.01f};
            for (int b = 0; b < 3; b++) {
                beta[3] = bad[b];
                av_params_set_gates(&p, g, n, 1, beta);
                refused(&p, Q, K, V, n, d, dv, AV_ERR_GATES, name);
            }
            beta[3] = 2.0f; /* 2 itself is allowed */
            av_params_set_gates(&p, g, n, 1, beta);
            size_t wm = av_matrix_work(&p, n, d);
            void *w = work_of(wm);
            float M[n * n];
            ck_assert_int_eq(av_matrix(M, Q, K, n, d, &p, w, wm), AV_OK);
            free(w);
            beta[3] = 0.5f;
        }
        /* the step: a gate above 0, β out of range, per-channel gates of a scalar family */
        double S[d * dv] = {0};
        float o[dv], gpos[d];
        for (int c = 0; c < d; c++) gpos[c] = c == 0 ? 0.2f : -0.1f;
        av_params_default(&p, v);
        ck_assert_int_eq(av_gated_step(o, S, Q, K, V, gpos, 0.5, NULL, NULL, d, dv, &p), AV_ERR_GATES);
        if (is_delta(v)) ck_assert_int_eq(av_gated_step(o, S, Q, K, V, NULL, 2.5, NULL, NULL, d, dv, &p), AV_ERR_GATES);
        p.gate_channels = d;
        gpos[0] = -0.2f;
        ck_assert_int_eq(av_gated_step(o, S, Q, K, V, gpos, 0.5, NULL, NULL, d, dv, &p),
                         v == AV_GLA || v == AV_KDA ? AV_OK : AV_ERR_GATES);
    }
    /* the setters: sizes, and one n for every array */
    av_params p;
    av_params_default(&p, AV_DPLR);
    ck_assert_int_eq(av_params_set_gates(&p, g, 0, 1, NULL), AV_ERR_SIZE);
    ck_assert_int_eq(av_params_set_gates(&p, g, n, 0, NULL), AV_ERR_SIZE);
    ck_assert_int_eq(av_params_set_gates(NULL, g, n, 1, NULL), AV_ERR_NULL);
    ck_assert_int_eq(av_params_set_dplr(&p, Q, K, n), AV_OK);
    ck_assert_int_eq(av_params_set_gates(&p, g, n + 1, 1, NULL), AV_ERR_GATES);
    ck_assert_int_eq(av_params_set_gates(&p, g, n, 1, NULL), AV_OK);
    ck_assert_int_eq(av_params_set_dplr(&p, NULL, NULL, 0), AV_OK);
    ck_assert_int_eq(p.gates_n, n);
    ck_assert_int_eq(av_params_set_gates(&p, NULL, 0, 0, NULL), AV_OK);
    ck_assert(p.gates == NULL && p.gates_n == 0);
    /* av_recurrent_step is not the gated families' step */
    double S[16] = {0}, z[4] = {0};
    float o[3];
    av_params_default(&p, AV_GDN);
    ck_assert_int_eq(av_recurrent_step(o, S, z, Q, K, V, 4, 3, n, &p), AV_ERR_NO_LINEAR);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// recall

/* The reference memory: the N pairs (K, V: N×d) written by the family's recurrence (docs/gated.md), each key read
 * back as o_i = S_Nᵀq̃(k_i), q̃ = scale·l2norm?(k_i); err_i = ‖o_i − v_i‖/‖v_i‖. */
static void ref_recall(double *err, const gcase *c, const float *V) {
    int N = c->n, d = c->d;
    double *O = malloc(sizeof(double) * (N + N) * d);
    /* the pairs, then N reads: the reads are tokens N.. with α = 1, k = 0 (nothing written, nothing decayed) */
    float *Q2 = calloc((size_t)(2 * N) * d, sizeof(float)), *K2 = calloc((size_t)(2 * N) * d, sizeof(float));
    float *g2 = c->g ? calloc((size_t)(2 * N) * c->gc, sizeof(float)) : NULL;
    float *b2 = calloc((size_t)(2 * N), sizeof(float));
    double *V2 = calloc((size_t)(2 * N) * d, sizeof(double));
    memcpy(K2, c->K, sizeof(float) * N * d);
    memcpy(Q2 + (size_t)N * d, c->K, sizeof(float) * N * d);
    if (g2) memcpy(g2, c->g, sizeof(float) * N * c->gc);
    for (int t = 0; t < 2 * N; t++) b2[t] = t < N ? (float)beta_of(c, t) : 1.0f;
    for (int e = 0; e < N * d; e++) V2[e] = V[e];
    gcase r = *c;
    r.n = 2 * N, r.Q = Q2, r.K = K2, r.g = g2, r.beta = b2;
    if (!c->g) r.g = NULL; /* the constant gate: the reads must not decay, so give them an array */
    float *gc0 = NULL;
    if (!c->g) {
        gc0 = calloc((size_t)(2 * N), sizeof(float));
        for (int t = 0; t < N; t++) gc0[t] = (float)c->g0;
        r.g = gc0, r.gc = 1;
    }
    /* the reads' keys are 0, so the delta rule writes β(v − Sᵀ0)·0ᵀ = 0 and the l2norm of 0 is 0 */
    ref_recurrence(O, &r, V2, d);
    for (int i = 0; i < N; i++) {
        double num = 0, den = 0;
        for (int e = 0; e < d; e++) {
            double x = O[(size_t)(N + i) * d + e] - V[i * d + e];
            num += x * x, den += (double)V[i * d + e] * V[i * d + e];
        }
        err[i] = sqrt(num / den);
    }
    free(O); free(Q2); free(K2); free(g2); free(b2); free(V2); free(gc0);
}

/* av_recall_pairs of the four state families against the reference memory, with constant gates and with arrays
 * of N (a reset among them); simple_gla at a constant decay recalls as retention does (to float precision). */
START_TEST(test_recall) {
    enum { N = 24, d = 8 };
    float K[N * d], V[N * d], beta[N];
    ck_assert_int_eq(av_recall_draw(K, V, N, d, 5), AV_OK);
    tu_fill_uniform(beta, N, 0.3, 1.6, 81);
    static unsigned char w[1 << 20];
    double err[N], ref[N];
    for (int k = 0; k < 4; k++) {
        int v = FAMILIES[k], gc = v == AV_GLA || v == AV_KDA ? d : 1;
        for (int arrays = 0; arrays < 2; arrays++) {
            float *g = arrays ? make_gates(N, gc, -0.2, 10, 82) : NULL;
            gcase c = {v, N, d, K, K, g, arrays && is_delta(v) ? beta : NULL, gc, log(0.97), 0.9, 1.0, is_delta(v)};
            av_params p;
            av_params_default(&p, v);
            p.decay = 0.97;
            p.beta = 0.9;
            av_params_set_gates(&p, g, N, gc, c.beta);
            size_t wb = av_recall_work(&p, N, d);
            ck_assert_msg(wb > 0 && wb <= sizeof w, "%s: recall work %zu", av_variant_name(v), wb);
            ck_assert_int_eq(av_recall_pairs(err, K, V, N, d, &p, w, wb), AV_OK);
            ref_recall(ref, &c, V);
            for (int i = 0; i < N; i++)
                ck_assert_msg(fabs(err[i] - ref[i]) <= 1e-5 * fmax(1, ref[i]), "%s arrays %d: err[%d] %g, reference %g",
                              av_variant_name(v), arrays, i, err[i], ref[i]);
            if (arrays) /* the reset at token 10 forgets the pairs before it */
                for (int i = 0; i < 10; i++) ck_assert_msg(err[i] > 0.5, "%s: pair %d survived the reset", av_variant_name(v), i);
            free(g);
        }
    }
    av_params p, r;
    av_params_default(&p, AV_SIMPLE_GLA);
    av_params_default(&r, AV_RETENTION);
    p.decay = r.decay = 0.9;
    double e2[N];
    ck_assert_int_eq(av_recall_pairs(err, K, V, N, d, &p, w, av_recall_work(&p, N, d)), AV_OK);
    ck_assert_int_eq(av_recall_pairs(e2, K, V, N, d, &r, w, av_recall_work(&r, N, d)), AV_OK);
    for (int i = 0; i < N; i++) ck_assert(fabs(err[i] - e2[i]) <= 1e-6 * fmax(1, e2[i]));
    /* gates set for another N: refused */
    float g[N + 1];
    for (int t = 0; t <= N; t++) g[t] = -0.1f;
    av_params_set_gates(&p, g, N + 1, 1, NULL);
    ck_assert_int_eq(av_recall_pairs(err, K, V, N, d, &p, w, sizeof w), AV_ERR_GATES);
}
END_TEST

// ----------------------------------------------------------------------------------------------------
// the knob and the registry

START_TEST(test_qk_l2norm_knob) {
    av_params p, r;
    for (int v = AV_SIMPLE_GLA; v <= AV_FOX; v++) {
        av_params_default(&p, v);
        ck_assert_int_eq(av_params_resolve(&r, &p, 8, 4), AV_OK);
        ck_assert_int_eq(r.qk_l2norm, v == AV_GDN || v == AV_KDA);
        ck_assert_int_eq(av_params_set(&p, AV_KNOB_QK_L2NORM, -1), AV_OK);
        ck_assert(av_params_get(&p, AV_KNOB_QK_L2NORM) == -1);
        ck_assert_int_eq(av_params_resolve(&r, &p, 8, 4), AV_OK);
        ck_assert_int_eq(r.qk_l2norm, 0);
        ck_assert_int_eq(av_params_set(&p, AV_KNOB_QK_L2NORM, 1), AV_OK);
        ck_assert_int_eq(av_params_resolve(&r, &p, 8, 4), AV_OK);
        ck_assert_int_eq(r.qk_l2norm, 1);
        const av_variant_desc *vd = av_variant_info(v);
        ck_assert(vd->cls == AV_CLASS_GATED && (vd->flags & AV_VF_CAUSAL_ONLY));
        ck_assert_msg(strstr(av_registry_json(), "\"class\":\"gated\"") != NULL, "the registry's class name");
    }
    ck_assert(strstr(av_status_string(AV_ERR_GATES), "gate") != NULL);
}
END_TEST

/* Costs: every path of the four families is counted; the linear path is the chunkwise form; the constant
 * simple_gla costs what retention does (it runs as retention). */
START_TEST(test_costs) {
    int n = 256, d = 16, dv = 16;
    float g[256];
    for (int t = 0; t < n; t++) g[t] = -0.01f;
    for (int k = 0; k < 4; k++) {
        av_params p;
        av_params_default(&p, FAMILIES[k]);
        av_params_set_gates(&p, g, n, 1, NULL);
        double c[4][2];
        for (int path = 0; path < 4; path++) {
            ck_assert_int_eq(av_cost_path(c[path], path, &p, n, d, dv), AV_OK);
            ck_assert_msg(c[path][0] > 0 && c[path][1] > 0, "%s path %d", av_variant_name(FAMILIES[k]), path);
        }
        ck_assert(c[AV_PATH_LINEAR][0] == c[AV_PATH_CHUNKWISE][0]);
        ck_assert(c[AV_PATH_CHUNKWISE][0] < c[AV_PATH_QUADRATIC][0]);
    }
    av_params p, r;
    av_params_default(&p, AV_SIMPLE_GLA);
    av_params_default(&r, AV_RETENTION);
    p.decay = r.decay = 0.9;
    double a[2], b[2];
    for (int path = 0; path < 4; path++) {
        av_cost_path(a, path, &p, n, d, dv);
        av_cost_path(b, path, &r, n, d, dv);
        ck_assert(a[0] == b[0] && a[1] == b[1]);
    }
}
END_TEST

Suite *suite_gated(void) {
    Suite *s = suite_create("gated");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_against_references, 0, 4);
    tcase_add_test(tc, test_delta_extremes);
    tcase_add_test(tc, test_channels_equal);
    tcase_add_test(tc, test_simple_gla_is_retention);
    tcase_add_test(tc, test_gdn_vs_deltanet);
    tcase_add_test(tc, test_zero_gates);
    tcase_add_test(tc, test_reset_blocks);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_recall);
    tcase_add_test(tc, test_qk_l2norm_knob);
    tcase_add_test(tc, test_costs);
    suite_add_tcase(s, tc);
    return s;
}
