/* dplr.c: the diagonal-plus-low-rank family, RWKV-7's transition (docs/gated.md "dplr"), by three forms:
 *
 *   matrix     M = A_qk + A_qb (I − A_ab)⁻¹ A_ak, row by row: yᵀ = A_qb[i](I − A_ab)⁻¹ by back substitution
 *              (as the delta rule's matrix), then m_i = A_qk[i] + yᵀA_ak.
 *   recurrent  x_t = S_{t−1}ᵀa_t (the undecayed previous state), S_t = Diag(α_t)S_{t−1} + b_t x_tᵀ + k_t v_tᵀ,
 *              o_t = S_tᵀq̃_t, float64 state.
 *   chunkwise  chunks of C tokens and a carried state S: the chunk's four A's, X = (I − A_ab)⁻¹(Â·S + A_ak·V)
 *              by forward substitution (Â: a decayed from the chunk's start), O = Q̂·S + A_qk·V + A_qb·X,
 *              S ← Diag(α_first…α_last)·S + Σ_s Diag(α_{s+1}…α_last)(k_s v_sᵀ + b_s x_sᵀ) (fla's dplr_chunkwise).
 *
 * and av_rwkv7_vectors, RWKV-7's a and b from its keys. a, b NULL are zero: the family is then gla.
 *
 * Γ_ijc = exp(Σ_{l=j+1..i} g_lc) is always the exp of a segment sum in float64, never exp(G_i)·exp(−G_j) of
 * global sums (e^{−G} overflows once resets add up). A tile of rows [i0, i1) factors Γ_ij for the columns
 * j < i0 through the row i0 − 1 (both factors ≤ 1); inside the tile the sums run from the diagonal back.
 * The A's are float64; the matrix keeps the n×n A_ab and A_ak in float32 (the delta rule's L likewise).
 */
#include <math.h>
#include <string.h>

#include "gated.h"
#include "simd.h"

/* the matrix's row blocks, the chunk's tiles, the back substitution's groups of rows i (at most 4) and blocks of
 * rows t */
enum { MATRIX_ROWS = 32, TILE_ROWS = 16, BSUB_ROWS = 4, BSUB_BLOCK = 32 };

// ----------------------------------------------------------------------------------------------------
// small float64 helpers

static double dot_dd(const double *a, const double *b, int len) { return avs_dot_f64(a, b, len); }

static double dot_ff(const float *a, const float *b, int len) {
    avs_f64x2 s0 = {0, 0}, s1 = {0, 0};
    int c = 0;
    for (; c + 4 <= len; c += 4) {
        s0 += avs_load_f32x2(a + c) * avs_load_f32x2(b + c);
        s1 += avs_load_f32x2(a + c + 2) * avs_load_f32x2(b + c + 2);
    }
    s0 += s1;
    double s = s0[0] + s0[1];
    for (; c < len; c++) s += (double)a[c] * b[c];
    return s;
}

static avs_f64x2 load2(const double *p) {
    avs_f64x2 v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The four products of a row pair and a column pair, out = {q·k, q·b, a·k, a·b} (float64, two lanes: the same
 * bits in WASM and natively). */
static void dot4(double *out, const double *q, const double *a, const double *k, const double *b, int len) {
    avs_f64x2 qk = {0, 0}, qb = {0, 0}, ak = {0, 0}, ab = {0, 0};
    int c = 0;
    for (; c + 2 <= len; c += 2) {
        avs_f64x2 vq = load2(q + c), va = load2(a + c), vk = load2(k + c), vb = load2(b + c);
        qk += vq * vk, qb += vq * vb, ak += va * vk, ab += va * vb;
    }
    out[0] = qk[0] + qk[1], out[1] = qb[0] + qb[1], out[2] = ak[0] + ak[1], out[3] = ab[0] + ab[1];
    for (; c < len; c++) out[0] += q[c] * k[c], out[1] += q[c] * b[c], out[2] += a[c] * k[c], out[3] += a[c] * b[c];
}

/* The back substitution below a block of rows t ∈ [T0, T0 + tb) of A_ab and A_ak, for a group of G ≤ 4 rows:
 * y_r[k] += Σ_t c_rt·A_ab[t][k], m_r[k] += Σ_t c_rt·A_ak[t][k] for k < T0, with c_rt the final y_r[t] (in both lanes
 * of C[4t + r]; 0 for rows r ≥ G).
 * The sums over t stay in registers (one load and store of y_r[k], m_r[k] per block, where a step at a time
 * loaded and stored them for every t: the n³/3 solve was bound by those stores). */
static void bsub_block(double *const *y, double *const *m, const avs_f64x2 *C, int G, const float *Lab,
                       const float *Lak, size_t ld, int tb, int T0) {
    int k = 0;
    for (; k + 2 <= T0; k += 2) {
        avs_f64x2 y0 = {0, 0}, y1 = {0, 0}, y2 = {0, 0}, y3 = {0, 0}, m0 = {0, 0}, m1 = {0, 0}, m2 = {0, 0}, m3 = {0, 0};
        for (int t = 0; t < tb; t++) { /* four rows spelled out: an array of accumulators went to the stack */
            const avs_f64x2 vab = avs_load_f32x2(Lab + (size_t)t * ld + k), vak = avs_load_f32x2(Lak + (size_t)t * ld + k);
            const avs_f64x2 *c = C + 4 * t, c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
            y0 += c0 * vab, m0 += c0 * vak, y1 += c1 * vab, m1 += c1 * vak;
            y2 += c2 * vab, m2 += c2 * vak, y3 += c3 * vab, m3 += c3 * vak;
        }
        const avs_f64x2 ay[4] = {y0, y1, y2, y3}, am[4] = {m0, m1, m2, m3};
        for (int r = 0; r < G; r++) {
            avs_f64x2 vy = load2(y[r] + k) + ay[r], vm = load2(m[r] + k) + am[r];
            memcpy(y[r] + k, &vy, sizeof vy);
            memcpy(m[r] + k, &vm, sizeof vm);
        }
    }
    for (; k < T0; k++)
        for (int r = 0; r < G; r++) {
            double sy = 0, sm = 0;
            for (int t = 0; t < tb; t++) {
                sy += C[4 * t + r][0] * Lab[(size_t)t * ld + k];
                sm += C[4 * t + r][0] * Lak[(size_t)t * ld + k];
            }
            y[r][k] += sy, m[r][k] += sm;
        }
}

/* y[0..len) += a·x[0..len), x float32, y float64. */
static void axpy_fd(double *restrict y, double a, const float *restrict x, int len) {
    avs_f64x2 va = {a, a};
    int k = 0;
    for (; k + 2 <= len; k += 2) {
        avs_f64x2 yv;
        memcpy(&yv, y + k, sizeof yv);
        yv += va * avs_load_f32x2(x + k);
        memcpy(y + k, &yv, sizeof yv);
    }
    for (; k < len; k++) y[k] += a * x[k];
}

/* y[0..len) += a·x[0..len), both float64. */
static void axpy_dd(double *restrict y, double a, const double *restrict x, int len) {
    avs_vd va = avs_vsplat(a);
    int k = 0;
    for (; k + AVS_VW <= len; k += AVS_VW) avs_vstore(y + k, avs_vload(y + k) + va * avs_vload(x + k));
    for (; k < len; k++) y[k] += a * x[k];
}

/* The log-gates of token t over the d channels (a per-token gate broadcast, the constant case g0). */
static void gate_row(double *g, const avi_gates *G, int t, int d) {
    if (!G->g)
        for (int c = 0; c < d; c++) g[c] = G->g0;
    else if (G->gc == 1)
        for (int c = 0; c < d; c++) g[c] = G->g[t];
    else
        for (int c = 0; c < d; c++) g[c] = G->g[(size_t)t * d + c];
}

// ----------------------------------------------------------------------------------------------------
// the four A's of a tile of rows

typedef struct dctx {
    const float *Qt, *Kt, *a, *b; /* q̃, k̃ (n×d), a, b (n×d, or NULL: zero) */
    avi_gates G;
    int d;
    double *qh, *ah;              /* the tile's rows, decayed from the reference row: TILE or MATRIX rows × d */
    double *kh, *bh;              /* the columns before the tile, decayed to it: (rows before) × d */
    double *g, *sum, *e, *u;      /* one channel vector each (d) */
} dctx;

/* Rows of the A's: row i at +ld·(i − row0), column j at +(j − j_lo). */
typedef struct arows { double *qk, *qb, *ak, *ab; int ld, row0; } arows;

/* A_qk, A_qb (j ≤ i) and A_ak, A_ab (j < i) of rows [i0, i1) over columns [j_lo, i] into o (docs/gated.md):
 *   A_qk_ij = Σ_c q̃_ic k_jc Γ_ijc, A_qb_ij = Σ_c q̃_ic b_jc Γ_ijc, A_ak_ij = Σ_c a_ic k_jc Γ'_ijc,
 *   A_ab_ij = Σ_c a_ic b_jc Γ'_ijc, Γ' without α_i (a reads the state before step i's decay).
 * Without a and b only A_qk. Entries right of the diagonal are not written. */
static void tile(const dctx *x, const arows *o, int i0, int i1, int j_lo) {
    const int d = x->d, lr = x->a != NULL;
    double *g = x->g, *sum = x->sum, *e = x->e, *u = x->u;
    if (i0 > j_lo) { /* j < i0 ≤ i: Γ_ij = exp(Σ_{j<l<i0} g_l)·exp(Σ_{i0≤l≤i} g_l), Γ'_ij the second up to i − 1 */
        memset(sum, 0, sizeof(double) * (size_t)d);
        for (int i = i0; i < i1; i++) {
            const size_t id = (size_t)i * d;
            double *qh = x->qh + (size_t)(i - i0) * d, *ah = lr ? x->ah + (size_t)(i - i0) * d : NULL;
            gate_row(g, &x->G, i, d);
            for (int c = 0; c < d; c++) {
                if (lr) ah[c] = x->a[id + c] * exp(sum[c]);
                sum[c] += g[c];
                qh[c] = x->Qt[id + c] * exp(sum[c]);
            }
        }
        memset(sum, 0, sizeof(double) * (size_t)d);
        for (int j = i0 - 1; j >= j_lo; j--) {
            const size_t jd = (size_t)j * d;
            double *kh = x->kh + (size_t)(j - j_lo) * d, *bh = lr ? x->bh + (size_t)(j - j_lo) * d : NULL;
            gate_row(g, &x->G, j, d);
            for (int c = 0; c < d; c++) {
                double f = exp(sum[c]);
                kh[c] = x->Kt[jd + c] * f;
                if (lr) bh[c] = x->b[jd + c] * f;
                sum[c] += g[c];
            }
        }
        for (int i = i0; i < i1; i++) {
            const size_t r = (size_t)o->ld * (i - o->row0);
            const double *qh = x->qh + (size_t)(i - i0) * d, *ah = lr ? x->ah + (size_t)(i - i0) * d : NULL;
            for (int j = j_lo; j < i0; j++) {
                const double *kh = x->kh + (size_t)(j - j_lo) * d, *bh = lr ? x->bh + (size_t)(j - j_lo) * d : NULL;
                if (!lr) {
                    o->qk[r + j - j_lo] = dot_dd(qh, kh, d);
                    continue;
                }
                double v[4];
                dot4(v, qh, ah, kh, bh, d);
                o->qk[r + j - j_lo] = v[0], o->qb[r + j - j_lo] = v[1], o->ak[r + j - j_lo] = v[2], o->ab[r + j - j_lo] = v[3];
            }
        }
    }
    for (int i = i0; i < i1; i++) { /* i0 ≤ j ≤ i: Γ'_ij = exp(R), R = Σ_{j<l<i} g_l summed from the diagonal, Γ_ij = α_i Γ'_ij */
        const size_t r = (size_t)o->ld * (i - o->row0), id = (size_t)i * d;
        const float *q = x->Qt + id;
        gate_row(g, &x->G, i, d);
        for (int c = 0; c < d; c++) {
            u[c] = q[c] * exp(g[c]); /* q̃_i ⊙ α_i */
            sum[c] = 0;
        }
        o->qk[r + i - j_lo] = dot_ff(q, x->Kt + id, d);
        if (lr) o->qb[r + i - j_lo] = dot_ff(q, x->b + id, d);
        for (int j = i - 1; j >= i0; j--) {
            const size_t jd = (size_t)j * d;
            const float *k = x->Kt + jd;
            double sqk = 0;
            for (int c = 0; c < d; c++) {
                e[c] = exp(sum[c]);
                sqk += u[c] * k[c] * e[c];
            }
            o->qk[r + j - j_lo] = sqk;
            if (lr) {
                const float *a = x->a + id, *b = x->b + jd;
                double sqb = 0, sak = 0, sab = 0;
                for (int c = 0; c < d; c++) {
                    double be = b[c] * e[c];
                    sqb += u[c] * be;
                    sab += a[c] * be;
                    sak += a[c] * e[c] * k[c];
                }
                o->qb[r + j - j_lo] = sqb, o->ak[r + j - j_lo] = sak, o->ab[r + j - j_lo] = sab;
            }
            gate_row(g, &x->G, j, d);
            for (int c = 0; c < d; c++) sum[c] += g[c];
        }
    }
}

// ----------------------------------------------------------------------------------------------------
// workspace: one layout per path (counted and carved by the same code)

typedef struct dbufs {
    float *Qt, *Kt;
    float *Lak, *Lab;             /* matrix: A_ak, A_ab (n×n, float32) */
    double *qk, *qb, *ak, *ab;    /* matrix: MATRIX_ROWS×n; chunkwise: C×C */
    double *S, *X, *Ob;           /* state d×dv; chunk: X, O (C×dv) */
    double *Qh, *Ah;              /* chunk: q̃, a decayed from the chunk's start (C×d) */
    dctx x;
} dbufs;


static void dlayout(dbufs *b, avi_arena *a, const av_params *p, int n, int d, int dv, int path) {
    memset(b, 0, sizeof *b);
    const int lr = p->dplr_a != NULL, rows = path == AVI_GATED_MATRIX ? MATRIX_ROWS : TILE_ROWS;
    const int C = avi_chunk_of(p, n), J = path == AVI_GATED_MATRIX ? n : C; /* rows of the A's, columns before a tile */
    const uint64_t R = (uint64_t)(path == AVI_GATED_MATRIX ? MATRIX_ROWS : C), W = (uint64_t)J;
    b->Qt = avi_take(a, 4u * (uint64_t)n * d);
    b->Kt = avi_take(a, 4u * (uint64_t)n * d);
    if (path == AVI_GATED_RECURRENT) {
        b->S = avi_take(a, 8u * (uint64_t)d * dv);
        b->X = avi_take(a, 8u * (uint64_t)dv);
        b->Ob = avi_take(a, 8u * (uint64_t)dv);
        return;
    }
    b->qk = avi_take(a, 8u * R * W);
    if (lr) {
        b->qb = avi_take(a, 8u * R * W);
        b->ak = avi_take(a, 8u * R * W);
        b->ab = avi_take(a, 8u * R * W);
    }
    b->x.qh = avi_take(a, 8u * (uint64_t)rows * d);
    b->x.kh = avi_take(a, 8u * W * d);
    if (lr) {
        b->x.ah = avi_take(a, 8u * (uint64_t)rows * d);
        b->x.bh = avi_take(a, 8u * W * d);
    }
    b->x.g = avi_take(a, 8u * (uint64_t)d);
    b->x.sum = avi_take(a, 8u * (uint64_t)d);
    b->x.e = avi_take(a, 8u * (uint64_t)d);
    b->x.u = avi_take(a, 8u * (uint64_t)d);
    if (path == AVI_GATED_MATRIX) {
        if (lr) {
            b->Lak = avi_take(a, 4u * (uint64_t)n * n);
            b->Lab = avi_take(a, 4u * (uint64_t)n * n);
        }
        return;
    }
    b->S = avi_take(a, 8u * (uint64_t)d * dv);
    b->Ob = avi_take(a, 8u * (uint64_t)C * dv);
    b->Qh = avi_take(a, 8u * (uint64_t)C * d);
    if (lr) {
        b->X = avi_take(a, 8u * (uint64_t)C * dv);
        b->Ah = avi_take(a, 8u * (uint64_t)C * d);
    }
}

uint64_t avi_dplr_need(const av_params *p, int n, int d, int dv, int path) {
    avi_arena a = avi_arena_count();
    dbufs b;
    dlayout(&b, &a, p, n, d, path == AVI_GATED_MATRIX ? 1 : dv, path);
    return a.used;
}

/* q̃, k̃ and the tile context of a call. */
static void setup(dbufs *b, const float *Q, const float *K, int n, int d, const av_params *p) {
    avi_gated_qk(b->Qt, b->Kt, Q, K, n, d, p);
    b->x.Qt = b->Qt;
    b->x.Kt = b->Kt;
    b->x.G = avi_gates_of(p);
    b->x.a = b->x.G.a;
    b->x.b = b->x.G.b;
    b->x.d = d;
}

// ----------------------------------------------------------------------------------------------------
// matrix

int avi_dplr_matrix(float *M, const float *Q, const float *K, int n, int d, const av_params *p, void *work) {
    avi_arena a = avi_arena_over(work);
    dbufs b;
    dlayout(&b, &a, p, n, d, 1, AVI_GATED_MATRIX);
    setup(&b, Q, K, n, d, p);
    const int lr = b.x.a != NULL;
    for (int i0 = 0; i0 < n; i0 += MATRIX_ROWS) {
        const int i1 = n - i0 < MATRIX_ROWS ? n : i0 + MATRIX_ROWS;
        const arows o = {b.qk, b.qb, b.ak, b.ab, n, i0};
        tile(&b.x, &o, i0, i1, 0);
        for (int i = i0; lr && i < i1; i++) /* rows i0..i1−1 of A_ak, A_ab, read by this block's rows already */
            for (int j = 0; j < i; j++) {
                b.Lak[(size_t)i * n + j] = (float)b.ak[(size_t)(i - i0) * n + j];
                b.Lab[(size_t)i * n + j] = (float)b.ab[(size_t)(i - i0) * n + j];
            }
        for (int i = i0; i < i1; i += BSUB_ROWS) {
            /* yᵀ(I − A_ab) = A_qb[i]: y_t is final once every row above t has added y_s·A_ab[s][t]; then
             * y_t·A_ab[t][0..t) goes to y and y_t·A_ak[t][0..t) to m. BSUB_ROWS rows i at a time, so that each
             * row of A_ab and A_ak is read once per group. */
            const int G = i1 - i < BSUB_ROWS ? i1 - i : BSUB_ROWS;
            double *y[BSUB_ROWS], *m[BSUB_ROWS];
            for (int r = 0; r < G; r++) {
                m[r] = b.qk + (size_t)(i + r - i0) * n;
                y[r] = lr ? b.qb + (size_t)(i + r - i0) * n : NULL;
            }
            /* blocks of BSUB_BLOCK rows t, from the top: inside a block t by t (y_r[t] is final when reached),
             * then all of the block's rows at once below it (bsub_block) */
            for (int T1 = i + G; lr && T1 > 1; T1 -= BSUB_BLOCK) {
                const int T0 = T1 - BSUB_BLOCK > 1 ? T1 - BSUB_BLOCK : 1;
                avs_f64x2 C[4 * BSUB_BLOCK] = {{0, 0}};
                for (int t = T1 - 1; t >= T0; t--) {
                    const float *ab = b.Lab + (size_t)t * n, *ak = b.Lak + (size_t)t * n;
                    for (int r = 0; r < G; r++) {
                        const double c = t <= i + r ? y[r][t] : 0; /* rows below t: none */
                        C[4 * (t - T0) + r] = (avs_f64x2){c, c};
                        if (c != 0)
                            for (int k = T0; k < t; k++) y[r][k] += c * ab[k], m[r][k] += c * ak[k];
                    }
                }
                bsub_block(y, m, C, G, b.Lab + (size_t)T0 * n, b.Lak + (size_t)T0 * n, (size_t)n, T1 - T0, T0);
            }
            for (int r = 0; r < G; r++) {
                float *row = M + (size_t)(i + r) * n;
                for (int j = 0; j <= i + r; j++) row[j] = (float)m[r][j];
                if (i + r + 1 < n) memset(row + i + r + 1, 0, sizeof(float) * (size_t)(n - i - r - 1));
            }
        }
    }
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// recurrent: token by token, float64 state

static void scan(float *O, const float *V, int n, int d, int dv, const dbufs *b) {
    const dctx *x = &b->x;
    double *S = b->S, *t_x = b->X, *ob = b->Ob;
    memset(S, 0, sizeof(double) * (size_t)d * dv);
    for (int t = 0; t < n; t++) {
        const size_t td = (size_t)t * d;
        const float *v = V + (size_t)t * dv;
        if (x->a) { /* x = S_{t−1}ᵀa_t, before the decay */
            memset(t_x, 0, sizeof(double) * (size_t)dv);
            for (int c = 0; c < d; c++)
                if (x->a[td + c] != 0) axpy_dd(t_x, x->a[td + c], S + (size_t)c * dv, dv);
        }
        for (int c = 0; c < d; c++) { /* S ← Diag(α_t)S + b_t xᵀ + k_t v_tᵀ */
            double *s = S + (size_t)c * dv, f = exp(avi_gate(&x->G, t, c));
            if (f != 1)
                for (int e = 0; e < dv; e++) s[e] *= f;
            if (x->a && x->b[td + c] != 0) axpy_dd(s, x->b[td + c], t_x, dv);
            if (x->Kt[td + c] != 0) axpy_fd(s, x->Kt[td + c], v, dv);
        }
        memset(ob, 0, sizeof(double) * (size_t)dv); /* o_t = S_tᵀq̃_t */
        for (int c = 0; c < d; c++)
            if (x->Qt[td + c] != 0) axpy_dd(ob, x->Qt[td + c], S + (size_t)c * dv, dv);
        for (int e = 0; e < dv; e++) O[(size_t)t * dv + e] = (float)ob[e];
    }
}

// ----------------------------------------------------------------------------------------------------
// chunkwise

/* One chunk, tokens c0..c0+R−1, the state S entering it (updated to the state leaving it). */
static void chunk(float *O, const float *V, int c0, int R, int dv, const dbufs *b) {
    const dctx *x = &b->x;
    const int d = x->d, lr = x->a != NULL;
    double *S = b->S, *sum = x->sum, *g = x->g;
    const arows o = {b->qk, b->qb, b->ak, b->ab, R, c0};
    for (int i0 = c0; i0 < c0 + R; i0 += TILE_ROWS) tile(x, &o, i0, i0 + TILE_ROWS < c0 + R ? i0 + TILE_ROWS : c0 + R, c0);
    memset(sum, 0, sizeof(double) * (size_t)d); /* Q̂ = q̃ ⊙ exp(Σ_{c0≤l≤i} g), Â = a ⊙ exp(Σ_{c0≤l<i} g) */
    for (int s = 0; s < R; s++) {
        const size_t id = (size_t)(c0 + s) * d;
        gate_row(g, &x->G, c0 + s, d);
        for (int c = 0; c < d; c++) {
            if (lr) b->Ah[(size_t)s * d + c] = x->a[id + c] * exp(sum[c]);
            sum[c] += g[c];
            b->Qh[(size_t)s * d + c] = x->Qt[id + c] * exp(sum[c]);
        }
    }
    for (int s = 0; lr && s < R; s++) { /* x_s = Sᵀ Â_s + Σ_{r<s} A_ak[s][r] v_r + A_ab[s][r] x_r */
        double *xs = b->X + (size_t)s * dv;
        const double *ak = b->ak + (size_t)s * R, *ab = b->ab + (size_t)s * R, *ah = b->Ah + (size_t)s * d;
        memset(xs, 0, sizeof(double) * (size_t)dv);
        for (int c = 0; c < d; c++)
            if (ah[c] != 0) axpy_dd(xs, ah[c], S + (size_t)c * dv, dv);
        for (int r = 0; r < s; r++) {
            if (ak[r] != 0) axpy_fd(xs, ak[r], V + (size_t)(c0 + r) * dv, dv);
            if (ab[r] != 0) axpy_dd(xs, ab[r], b->X + (size_t)r * dv, dv);
        }
    }
    for (int s = 0; s < R; s++) { /* o_s = Sᵀ Q̂_s + Σ_{r≤s} A_qk[s][r] v_r + A_qb[s][r] x_r */
        double *os = b->Ob + (size_t)s * dv;
        const double *qk = b->qk + (size_t)s * R, *qh = b->Qh + (size_t)s * d;
        memset(os, 0, sizeof(double) * (size_t)dv);
        for (int c = 0; c < d; c++)
            if (qh[c] != 0) axpy_dd(os, qh[c], S + (size_t)c * dv, dv);
        for (int r = 0; r <= s; r++) {
            if (qk[r] != 0) axpy_fd(os, qk[r], V + (size_t)(c0 + r) * dv, dv);
            if (lr && b->qb[(size_t)s * R + r] != 0) axpy_dd(os, b->qb[(size_t)s * R + r], b->X + (size_t)r * dv, dv);
        }
        float *out = O + (size_t)(c0 + s) * dv;
        for (int e = 0; e < dv; e++) out[e] = (float)os[e];
    }
    /* S ← Diag(exp Σ_{chunk} g)·S + Σ_s Diag(exp Σ_{s<l≤last} g)(k_s v_sᵀ + b_s x_sᵀ); sum holds the chunk's total */
    for (int c = 0; c < d; c++) {
        double f = exp(sum[c]), *s = S + (size_t)c * dv;
        if (f != 1)
            for (int e = 0; e < dv; e++) s[e] *= f;
    }
    memset(sum, 0, sizeof(double) * (size_t)d);
    for (int s = R - 1; s >= 0; s--) {
        const size_t sd = (size_t)(c0 + s) * d;
        for (int c = 0; c < d; c++) {
            double f = exp(sum[c]), kf = x->Kt[sd + c] * f, *st = S + (size_t)c * dv;
            if (kf != 0) axpy_fd(st, kf, V + (size_t)(c0 + s) * dv, dv);
            if (lr && x->b[sd + c] != 0) axpy_dd(st, x->b[sd + c] * f, b->X + (size_t)s * dv, dv);
        }
        gate_row(g, &x->G, c0 + s, d);
        for (int c = 0; c < d; c++) sum[c] += g[c];
    }
}

int avi_dplr_run(float *O, const float *Q, const float *K, const float *V, int n, int d, int dv, const av_params *p,
                 void *work, int path) {
    avi_arena a = avi_arena_over(work);
    dbufs b;
    dlayout(&b, &a, p, n, d, dv, path);
    setup(&b, Q, K, n, d, p);
    if (path == AVI_GATED_RECURRENT) {
        scan(O, V, n, d, dv, &b);
        return AV_OK;
    }
    const int C = avi_chunk_of(p, n);
    memset(b.S, 0, sizeof(double) * (size_t)d * dv);
    for (int c0 = 0; c0 < n; c0 += C) chunk(O, V, c0, n - c0 < C ? n - c0 : C, dv, &b);
    return AV_OK;
}

// ----------------------------------------------------------------------------------------------------
// RWKV-7's construction

int av_rwkv7_vectors(float *a, float *b, const float *K, int n, int d, const float *a_icl, double a_icl_const) {
    if (!a || !b || !K) return AV_ERR_NULL;
    if (n < 1 || n > AV_MAX_N || d < 1 || d > AV_MAX_D) return AV_ERR_SIZE;
    const size_t count = (size_t)n * d;
    if (!avi_all_finite(K, count) || (a_icl ? !avi_all_finite(a_icl, count) : !isfinite(a_icl_const)))
        return AV_ERR_NONFINITE;
    if (!a_icl && !(a_icl_const >= 0 && a_icl_const <= 1)) return AV_ERR_GATES;
    for (size_t e = 0; a_icl && e < count; e++)
        if (!(a_icl[e] >= 0 && a_icl[e] <= 1)) return AV_ERR_GATES;
    for (int t = 0; t < n; t++) {
        const float *k = K + (size_t)t * d;
        double ss = 0;
        for (int c = 0; c < d; c++) ss += (double)k[c] * k[c];
        const double nrm = sqrt(ss), f = 1 / (nrm > 1e-12 ? nrm : 1e-12); /* F.normalize: x / max(‖x‖, eps) */
        for (int c = 0; c < d; c++) {
            const size_t e = (size_t)t * d + c;
            const double kap = k[c] * f, eta = a_icl ? a_icl[e] : a_icl_const;
            a[e] = (float)-kap;
            b[e] = (float)(kap * eta);
        }
    }
    return AV_OK;
}
