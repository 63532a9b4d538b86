/* readout_info.c: the readouts as data (av_readout_info): each one's JSON key, label, kind, format and
 * its places in the page's table and sweep picker. Calls nothing, so the registry (variants.c) and the
 * readouts (readouts.c) can both read it.
 */
#include "internal.h"

/* One row per enum av_readout, in its order (the JSON's order). display: the page table's order; sweep:
 * the page sweep picker's order (its first is the default). */
#define R(key_, label_, kind_, format_, display_, sweep_)                                                   \
    {.key = key_, .label = label_, .kind = AV_RK_##kind_, .format = AV_RF_##format_, .display = display_,  \
     .sweep = sweep_}
static const av_readout_desc READOUTS[AV_R_COUNT] = {
    [AV_R_SIGMA1] = R("sigma1", "largest singular value", SPECTRAL, REAL, 0, 0),
    [AV_R_RANK] = R("rank", "numerical rank", SPECTRAL, INTEGER, 1, 8),
    [AV_R_RANK_TOL] = R("rank_tol", "tolerance of the numerical rank", SPECTRAL, REAL, 0, 0),
    [AV_R_RANK_REL_1E3] = R("rank_rel_1e-3", "rank above 1e-3 sigma1", SPECTRAL, INTEGER, 3, 9),
    [AV_R_RANK_REL_1E2] = R("rank_rel_1e-2", "rank above 1e-2 sigma1", SPECTRAL, INTEGER, 0, 0),
    [AV_R_RANK_ENERGY_99] = R("rank_energy_99", "rank for 99% energy", SPECTRAL, INTEGER, 6, 10),
    [AV_R_EFFECTIVE_RANK] = R("effective_rank", "effective rank", SPECTRAL, REAL, 4, 11),
    [AV_R_STABLE_RANK] = R("stable_rank", "stable rank", SPECTRAL, REAL, 5, 12),
    [AV_R_SPARSITY_LT_001] = R("sparsity_lt_0.01", "weights below 0.01", ENTRY, FRACTION, 8, 0),
    [AV_R_SPARSITY_TAU] = R("sparsity_tau", "weights below tau/n", ENTRY, FRACTION, 7, 6),
    [AV_R_KEYS_FOR_90] = R("keys_for_90", "keys for 90% of a row", ENTRY, REAL, 9, 5),
    [AV_R_ROW_ENTROPY_MEAN] = R("row_entropy_mean", "row entropy", ENTRY, REAL, 10, 4),
    [AV_R_ROW_ENTROPY_UNIFORM] = R("row_entropy_uniform", "row entropy of uniform rows", ENTRY, REAL, 11, 0),
    [AV_R_ERROR_FRO_REL] = R("error_fro_rel", "error vs softmax", COMPARISON, REAL, 13, 1),
    [AV_R_ROW_KL_MEAN] = R("row_kl_mean", "KL(softmax || variant)", COMPARISON, REAL, 14, 3),
    [AV_R_OUTPUT_ERROR_REL] = R("output_error_rel", "output error", COMPARISON, REAL, 15, 2),
    [AV_R_NOISE_FLOOR] = R("noise_floor", "noise floor of the spectrum", SPECTRAL, REAL, 0, 0),
    [AV_R_ROW_SUM_DEV_MAX] = R("row_sum_dev_max", "largest |row sum - 1|", ENTRY, REAL, 12, 7),
    [AV_R_SEMISEPARABLE_RANK] = R("semiseparable_rank", "semiseparable rank", SPECTRAL, INTEGER, 2, 0),
};
#undef R

const av_readout_desc *av_readout_info(int readout) {
    return readout >= 0 && readout < AV_R_COUNT ? &READOUTS[readout] : NULL;
}

const char *av_readout_name(int readout) {
    return readout >= 0 && readout < AV_R_COUNT ? READOUTS[readout].key : NULL;
}
